"""Export and import of the log as JSONL envelopes (see ``ledger.log.envelope``), and CSV export.

An export carries every column of each event, ``prev_hash`` and ``hash`` included, so anyone can
recheck the chain from the file alone, with nothing but a JSON library and SHA-256::

    body = json.dumps([position, event_id, stream_id, stream_version, type, v, payload,
                       event_time, recorded_at, actor, workspace, idempotency_key],
                      separators=(",", ":"), ensure_ascii=False).encode()
    hash == sha256(prev_hash.encode("ascii") + body).hexdigest()

where a sealed row (``seal`` not empty) puts its payload without the erasable fields
(``ledger.erasure.ERASABLE``; keys sorted) in ``payload``'s place and appends ``seal`` to the list,
and, while it still holds them (``salt`` not null), ``seal == sha256(bytes.fromhex(salt) +
canonical JSON of the erasable fields)`` (docs/design.md, "Erasure"),
and each line's ``prev_hash`` is the previous line's ``hash`` (``"0" * 64`` before position 1;
a ``--since`` export starts from the first exported event's ``prev_hash``).

Import appends through the normal path in bounded batches: idempotent by ``event_id``, so
importing the same file twice, or a file that overlaps the log, adds nothing twice.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from fact_ledger.ledger.errors import InvalidInput, Unavailable
from fact_ledger.ledger.log.chain import NewEvent, StoredEvent
from fact_ledger.ledger.log.envelope import EnvelopeError, from_envelope, to_envelope
from fact_ledger.ledger.log.events import named_streams
from fact_ledger.server.app.backup import append_batch
from fact_ledger.server.app.erasure import clear_named, forget_everywhere, memory_ids_of
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.storage_errors import STORAGE_ERRORS, reason_of

CONTENT_EVENTS = frozenset({"MemoryRecorded", "MemoryUpdated"})  # what a memory's claims come from

Progress = Callable[[int, int], None]
IMPORT_BATCH = 500
CSV_COLUMNS = (
    "position",
    "event_id",
    "stream_id",
    "stream_version",
    "type",
    "v",
    "event_time",
    "recorded_at",
    "actor",
    "workspace",
    "idempotency_key",
    "payload",
    "prev_hash",
    "hash",
)


def _selected(app: LedgerApp, since: str | None, until: str | None, progress: Progress | None) -> Iterator[StoredEvent]:
    """Events recorded within [since, until], in log order, read in one snapshot of the read
    models' copy of the log, pulled up to the log's head first."""
    app.storage.require_log()
    app.storage.pull()
    total = app.store.last_position()
    with app.storage.snapshot():
        for event in app.store.read():
            if progress and event.position % 1000 == 0:
                progress(event.position, total)
            if (since and event.recorded_at < since) or (until and event.recorded_at > until):
                continue
            yield event
    if progress:
        progress(total, total)


def export_jsonl(
    app: LedgerApp,
    out: IO[bytes],
    *,
    since: str | None = None,
    until: str | None = None,
    progress: Progress | None = None,
) -> int:
    """Write every event (optionally recorded within [since, until]) as one envelope per line."""
    count = 0
    for event in _selected(app, since, until, progress):
        out.write(to_envelope(event) + b"\n")
        count += 1
    return count


def export_csv(
    app: LedgerApp,
    out: IO[bytes],
    *,
    since: str | None = None,
    until: str | None = None,
    progress: Progress | None = None,
) -> int:
    """The same events as CSV (one row each, payload as JSON text) for spreadsheets."""
    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    writer = csv.writer(text)
    writer.writerow(CSV_COLUMNS)
    count = 0
    for event in _selected(app, since, until, progress):
        writer.writerow([getattr(event, c) for c in CSV_COLUMNS])
        count += 1
    text.detach()
    return count


BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark, which some editors put before line 1


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            if number == 1:  # a byte-order mark an editor saved the file with is no part of the JSON
                line = line.removeprefix(BOM)
            if line.strip():
                yield number, line


def _refuse_csv(path: Path) -> None:
    """A CSV export cannot come back in (its rows lack the envelope): say so instead of N bad lines."""
    with path.open("rb") as fh:  # a spreadsheet saves it with a byte-order mark: still the CSV export
        first = fh.readline().removeprefix(BOM).strip().decode("utf-8", "replace")
    if first == ",".join(CSV_COLUMNS):
        raise InvalidInput(
            f"{path} is a CSV export; CSV is an export-only format: import takes the JSONL "
            "export (ledger export --format jsonl)",
            field="file",
        )


def _stream_of(line: bytes) -> set[str]:
    """The stream a refused line was about, when its JSON can still say so."""
    try:
        stream = json.loads(line)["event"]["stream_id"]
    except (ValueError, KeyError, TypeError):
        return set()
    return {stream} if isinstance(stream, str) else set()


ERASED_WITHOUT_ERASURE = (
    "an erased row without the Erased event that accounts for it (the export ends before the "
    "erasure: export again without --until)"
)


def _survey(path: Path) -> tuple[int, set[str]]:
    """The file's line count, and the event ids its ``Erased`` events account for."""
    count, covered = 0, set()
    for _number, line in _lines(path):
        count += 1
        if b'"Erased"' in line:
            try:
                event = json.loads(line)["event"]
                if event.get("type") == "Erased":
                    covered.update(row["event_id"] for row in json.loads(event["payload"]).get("rows", ()))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # the line itself is refused where it is read
    return count, covered


def _held(app: LedgerApp, event_id: str) -> bool:
    """Whether this ledger already holds the event (an erased row it holds is accounted for here)."""
    return app.storage.store.conn.execute("SELECT 1 FROM events WHERE event_id=?", (event_id,)).fetchone() is not None


def _chain_of(line: bytes) -> tuple[str | None, str | None]:
    """A line's ``(prev_hash, hash)``, when its JSON says: consecutive lines of an export chain."""
    try:
        event = json.loads(line)["event"]
        return event.get("prev_hash"), event.get("hash")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, None


def import_jsonl(app: LedgerApp, path: Path, *, progress: Progress | None = None) -> dict[str, Any]:
    """Append every envelope through the normal path in bounded batches; idempotent by event_id."""
    _refuse_csv(path)
    app.storage.require_log()
    total_lines, covered = _survey(path)
    appended = already = done = 0
    bad: list[dict[str, Any]] = []
    batch: list[NewEvent] = []

    erased: set[str] = set()
    contents: dict[str, None] = {}  # the file's memories (their content): they meet this ledger's claims

    def also(stored: list[StoredEvent]) -> None:
        erased.update(clear_named(app.storage, stored))

    def flush() -> None:
        nonlocal appended, already
        if batch:
            try:
                fresh = append_batch(app.storage, batch, also=also)
            except STORAGE_ERRORS as exc:
                reason = reason_of(exc)
                raise Unavailable(
                    f"the database refused the import ({reason}); {appended} events were appended before, "
                    "the rest were not (importing the file again skips those already in)",
                    reason=reason,
                ) from None
            appended, already = appended + fresh, already + len(batch) - fresh
            batch.clear()
        if progress:
            progress(done, total_lines)

    refused: set[str] = set()  # streams of refused lines: what names them would dangle here
    gaps: list[dict[str, Any]] = []  # lines whose prev_hash is not the hash of the line before
    before: tuple[int, str | None] | None = None  # (line, hash) of the line before
    for number, line in _lines(path):
        done += 1
        prev_hash, row_hash = _chain_of(line)
        if before is not None and prev_hash is not None and before[1] is not None and prev_hash != before[1]:
            gaps.append({"line": number, "after_line": before[0]})
        before = (number, row_hash)
        try:
            new = from_envelope(line)
        except EnvelopeError as exc:
            bad.append({"line": number, "error": str(exc)})
            refused.update(_stream_of(line))
        else:
            dangling = refused & ({new.stream_id} | named_streams(new.data)) if refused else set()
            if new.seal and new.salt is None and new.event_id not in covered and not _held(app, new.event_id):
                # a row erased after the export's end (``--until``): without its Erased event
                # nothing here accounts for its cleared text, and the chain would not verify
                bad.append({"line": number, "error": ERASED_WITHOUT_ERASURE})
                refused.add(new.stream_id)
            elif dangling:
                bad.append({"line": number, "error": f"names {min(dangling)}, whose line was refused above"})
                refused.add(new.stream_id)
            else:
                batch.append(new)
                if type(new.data).__name__ in CONTENT_EVENTS:  # in already or not: deciding again is a no-op
                    contents[new.stream_id] = None
        if len(batch) >= IMPORT_BATCH:
            flush()
    flush()
    out: dict[str, Any] = {
        "ok": True,
        "appended": appended,
        "already_present": already,
        "bad_lines": bad[:20],
        "bad_total": len(bad),
    }
    if not total_lines:  # zeros alone read as "imported, all present": say the file held no event
        out["empty"] = True
        out["notices"] = [f"{path} holds no events (it is empty or has only blank lines): nothing to import"]
    if gaps:  # a line cut out of the middle of the export (or lines moved): its events are lost here
        out["gaps"] = gaps[:20]
        out["gap_total"] = len(gaps)
    if erased:  # another ledger's erasure came in: its rows here were cleared with it
        ids = memory_ids_of(app.storage.store, erased)
        wiped = forget_everywhere(app.storage, ids, erased)
        out["erased"] = ids
        out["notices"] = [f"erased here too, as the file's Erased events name them: {', '.join(f'#{i}' for i in ids)}"]
        if wiped:
            out["notices"].append(wiped)
    try:
        disputed = app.collisions.dispute_imported(list(contents)) if contents else []
    except STORAGE_ERRORS as exc:
        reason = reason_of(exc)
        raise Unavailable(
            f"the file's {appended} new events are in; deciding where its memories disagree with this ledger's "
            f"failed ({reason}): import the file again to decide them",
            reason=reason,
        ) from None
    if disputed:  # the file's memories met this ledger's claims (ledger.imported)
        out["conflicts"] = disputed
        out.setdefault("notices", []).append(
            f"imported memories disagree with ones held here: claim set(s) {', '.join(f'#{c}' for c in disputed)} "
            "opened or joined (ledger conflict N shows one)"
        )
    return out
