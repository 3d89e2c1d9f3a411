"""The JSONL envelope: one event per line, ``{"schema": 1, "event": {...}}``.

The same format is the audit export (with ``position`` and ``hash``, so an outside verifier can
recheck the chain), the backup written while SQLite is unreachable (neither: the log has not
assigned them) and the import format. ``export.schema.json`` (shipped with the package, printed
by ``ledger export --schema``) is the JSON Schema of an export line.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import msgspec

from fact_ledger.ledger.log.chain import NewEvent, StoredEvent, row_hash, seal_holds
from fact_ledger.ledger.log.events import decode_payload

SCHEMA = 1
_LOG_ONLY = ("position", "prev_hash", "hash")


def export_schema() -> bytes:
    """The JSON Schema (draft 2020-12) of one export line, as shipped with the package."""
    return resources.files(__name__.rpartition(".")[0]).joinpath("export.schema.json").read_bytes()


def to_envelope(event: StoredEvent) -> bytes:
    return msgspec.json.encode({"schema": SCHEMA, "event": msgspec.structs.asdict(event)})


def backup_envelope(new: NewEvent, recorded_at: str) -> bytes:
    """An envelope for an event the log never saw (no position, no hash)."""
    from fact_ledger.ledger.log.events import encode_payload, type_name

    event = {
        "event_id": new.event_id,
        "stream_id": new.stream_id,
        "stream_version": new.stream_version,
        "type": type_name(new.data),
        "v": type(new.data).V,
        "payload": encode_payload(new.data).decode(),
        "event_time": new.event_time,
        "recorded_at": new.recorded_at or recorded_at,
        "actor": new.actor,
        "workspace": new.workspace,
        "idempotency_key": new.idempotency_key,
    }
    return msgspec.json.encode({"schema": SCHEMA, "event": event})


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


class EnvelopeError(ValueError):
    """A line that is not a valid envelope (reported and skipped by import and replay)."""


def from_envelope(line: bytes | str) -> NewEvent:
    """Parse one line into an event ready to append (idempotent by its ``event_id``)."""
    try:
        doc = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        raise EnvelopeError(f"not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("event"), dict):
        raise EnvelopeError("not a schema-1 envelope")
    ev: dict[str, Any] = doc["event"]
    salt = ev.get("salt")
    if salt is not None and not (isinstance(salt, str) and len(salt) == 32 and _is_hex(salt)):
        raise EnvelopeError("bad event: salt is not 32 hex digits")
    if "hash" in ev:
        _check_hash(ev)
    try:
        data = decode_payload(ev["type"], int(ev["v"]), ev["payload"])
        return NewEvent(
            data=data,
            stream_id=str(ev["stream_id"]),
            event_time=str(ev["event_time"]),
            actor=str(ev.get("actor", "")),
            workspace=str(ev.get("workspace", "")),
            event_id=str(ev["event_id"]),
            recorded_at=ev.get("recorded_at"),
            idempotency_key=ev.get("idempotency_key"),
            seal=str(ev.get("seal") or ""),
            salt=salt,
            payload=str(ev["payload"]) if ev.get("seal") and salt is None else None,
        )
    except KeyError as exc:
        raise EnvelopeError(f"bad event: missing field {exc}") from None
    except (TypeError, ValueError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise EnvelopeError(f"bad event: {exc}") from None


def _check_hash(ev: dict[str, Any]) -> None:
    """A log export's line carries its row's hash: a line edited after the export no longer
    matches it, and is refused rather than stored as if the log had said it."""
    try:
        row = msgspec.convert(ev, StoredEvent)
    except msgspec.ValidationError as exc:
        raise EnvelopeError(f"bad event: {exc}") from None
    if row_hash(row.prev_hash, row) != row.hash or (row.seal and row.salt is not None and not seal_holds(row)):
        raise EnvelopeError(
            f"event {row.position}: its hash does not match its content (the line was changed after export)"
        )
