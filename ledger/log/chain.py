"""The log's rows and their hash chain, as every log backend writes and checks them.

A new event becomes a row (:func:`stamp`) at the next position with the chained hash
``sha256(prev_hash || canonical bytes)``; :func:`chain_batch` appends a batch inside a backend's
write transaction, :func:`verify_events` recomputes the chain."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import msgspec

from fact_ledger.ledger import clock, erasure
from fact_ledger.ledger.errors import ChainBroken, StreamVersionConflict
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.events import Erased, Event, canonical_json, decode_payload, encode_payload, type_name

GENESIS_HASH = "0" * 64


class NewEvent(msgspec.Struct, kw_only=True):
    """An event about to be appended. ``stream_version=None`` takes the stream's next version."""

    data: Event
    stream_id: str
    event_time: str
    actor: str = ""
    workspace: str = ""
    event_id: str = msgspec.field(default_factory=uuid7)
    stream_version: int | None = None
    recorded_at: str | None = None
    idempotency_key: str | None = None
    # An imported sealed row keeps its seal and salt (an erased one: its seal, no salt), so an
    # import into an empty ledger reproduces the exported hashes and erasures.
    seal: str = ""
    salt: str | None = None
    payload: str | None = None  # an imported erased row's payload, kept as it was exported


class StoredEvent(msgspec.Struct, kw_only=True):
    """One row of the log, exactly as stored."""

    position: int
    event_id: str
    stream_id: str
    stream_version: int
    type: str
    v: int
    payload: str
    event_time: str
    recorded_at: str
    actor: str
    workspace: str
    idempotency_key: str | None
    prev_hash: str
    hash: str
    # Sealed rows (ledger.erasure): the salted digest of the erasable fields, which the hash
    # covers instead of their bytes, and the salt (None once the row is erased). Empty seal: a
    # row whose whole payload is hashed (no erasable field, or written before sealing).
    seal: str = ""
    salt: str | None = None

    @property
    def data(self) -> Event:
        """The payload decoded and upcast to the current schema version."""
        return decode_payload(self.type, self.v, self.payload)


# The log table's columns, in StoredEvent's field order: every backend selects and inserts them so.
COLUMNS = ", ".join(StoredEvent.__struct_fields__)


def event_row(ev: StoredEvent) -> tuple[Any, ...]:
    """The values of :data:`COLUMNS` for an INSERT."""
    return msgspec.structs.astuple(ev)


def event_from_row(row: Sequence[Any]) -> StoredEvent:
    """A row selected as :data:`COLUMNS` (spelled out: this runs for every event a rebuild reads)."""
    return StoredEvent(
        position=row[0],
        event_id=row[1],
        stream_id=row[2],
        stream_version=row[3],
        type=row[4],
        v=row[5],
        payload=row[6],
        event_time=row[7],
        recorded_at=row[8],
        actor=row[9],
        workspace=row[10],
        idempotency_key=row[11],
        prev_hash=row[12],
        hash=row[13],
        seal=row[14],
        salt=row[15],
    )


def version_taken(ev: StoredEvent) -> StreamVersionConflict:
    """What a backend raises when its (stream_id, stream_version) constraint refuses ``ev``."""
    return StreamVersionConflict(
        f"stream {ev.stream_id} already has version {ev.stream_version}",
        expected_version=ev.stream_version - 1,
    )


def row_hash(prev_hash: str, ev: StoredEvent, public: str | None = None) -> str:
    """``sha256(prev_hash || canonical bytes)`` over every column but the hashes themselves; a
    sealed row contributes its payload without the erasable fields (``public``, when the caller
    split it already), and its seal."""
    fields: list[Any] = [
        ev.position,
        ev.event_id,
        ev.stream_id,
        ev.stream_version,
        ev.type,
        ev.v,
        ev.payload,
        ev.event_time,
        ev.recorded_at,
        ev.actor,
        ev.workspace,
        ev.idempotency_key,
    ]
    if ev.seal:
        fields[6] = public if public is not None else erasure.split(ev.type, ev.payload)[0]
        fields.append(ev.seal)
    return hashlib.sha256(prev_hash.encode("ascii") + canonical_json(fields)).hexdigest()


def stamp(new: NewEvent, *, position: int, stream_version: int, prev_hash: str) -> StoredEvent:
    """The row a new event becomes at ``position``: canonical payload, timestamps, chained hash."""
    stored = StoredEvent(
        position=position,
        event_id=new.event_id,
        stream_id=new.stream_id,
        stream_version=stream_version,
        type=type_name(new.data),
        v=type(new.data).V,
        payload=new.payload if new.payload is not None else encode_payload(new.data).decode(),
        event_time=new.event_time,
        recorded_at=new.recorded_at or clock.now(),
        actor=new.actor,
        workspace=new.workspace,
        idempotency_key=new.idempotency_key,
        prev_hash=prev_hash,
        hash="",
    )
    stored.hash = row_hash(prev_hash, stored, _kept_seal(stored, new) or _seal(stored))
    return stored


def _kept_seal(row: StoredEvent, new: NewEvent) -> str | None:
    """The seal and salt an imported row brings, when they hold for its payload (an erased row:
    its seal alone, verified later against its Erased event); else None (sealed afresh)."""
    if not new.seal:
        return None
    public, erasable = erasure.split(row.type, row.payload)
    if erasable is None:
        return None
    if new.salt is not None and erasure.seal_of(new.salt, erasable) != new.seal:
        return None
    row.seal, row.salt = new.seal, new.salt
    return public


def _seal(row: StoredEvent) -> str | None:
    """Give a row with erasable fields its salt and seal (ledger.erasure); returns the payload
    without them, which the hash covers (None: the row is not sealed)."""
    public, erasable = erasure.split(row.type, row.payload)
    if erasable is None:
        return None
    row.salt = erasure.new_salt()
    row.seal = erasure.seal_of(row.salt, erasable)
    return public


def resealed(rows: Iterable[StoredEvent]) -> Iterator[StoredEvent]:
    """The same events chained again with seals (``ledger migrate --seal``): positions, ids,
    times and payloads kept, hashes new. The caller verifies the old chain first."""
    prev_hash = GENESIS_HASH
    for row in rows:
        new = msgspec.structs.replace(row, prev_hash=prev_hash, hash="", seal="", salt=None)
        new.hash = row_hash(prev_hash, new, _seal(new))
        prev_hash = new.hash
        yield new


def needs_seal(row: StoredEvent) -> bool:
    """A row written before sealing that holds erasable fields: it cannot be erased as it is."""
    return not row.seal and erasure.split(row.type, row.payload)[1] is not None


def chain_batch(
    events: Sequence[NewEvent],
    tail: Sequence[Any] | None,
    stored_by_ids: Callable[[Sequence[str]], dict[str, StoredEvent]],
    next_version: Callable[[str], int],
    insert: Callable[[Sequence[StoredEvent]], None],
    *,
    new_ids: bool = False,
) -> list[StoredEvent]:
    """Append a batch after ``tail`` (the last row's position and hash) inside a backend's write
    transaction: already stored ids come back as stored, new rows get the next positions, stream
    versions and chained hashes. Every backend appends through this one function; it asks the
    backend once which ids it holds and hands it the new rows once, so a backend may write them
    in one statement. ``new_ids``: the ids were made for this batch (a decision's fresh uuid7s,
    never a replay's), so no log can hold them and the question is skipped."""
    position, prev_hash = tail if tail else (0, GENESIS_HASH)
    held = {} if new_ids else dict(stored_by_ids([new.event_id for new in events]))
    next_versions: dict[str, int] = {}
    out: list[StoredEvent] = []
    fresh: list[StoredEvent] = []
    for new in events:
        existing = held.get(new.event_id)
        if existing is not None:
            out.append(existing)
            continue
        version = new.stream_version
        if version is None:
            version = next_versions.get(new.stream_id) or next_version(new.stream_id)
        next_versions[new.stream_id] = version + 1
        position += 1
        stored = stamp(new, position=position, stream_version=version, prev_hash=prev_hash)
        fresh.append(stored)
        held[new.event_id] = stored  # the same event twice in one batch is stored once
        prev_hash = stored.hash
        out.append(stored)
    if fresh:
        insert(fresh)
    return out


def check_continues(tail: Sequence[Any] | None, rows: Sequence[StoredEvent]) -> None:
    """Refuse rows that do not extend the log exactly: the next positions, linked and hashed right.

    This is what copying a log row for row (``ledger migrate``) rests on: positions, times and
    hashes are kept, never re-stamped, so both ends verify to the same head.
    """
    position, prev_hash = tail if tail else (0, GENESIS_HASH)
    for row in rows:
        if row.position != position + 1 or row.prev_hash != prev_hash or row_hash(prev_hash, row) != row.hash:
            raise ChainBroken(
                f"event at position {row.position} does not extend the log at {position}", position=row.position
            )
        if row.seal and row.salt is not None:
            _check_seal(row, [])
        position, prev_hash = row.position, row.hash


def verify_events(events: Iterable[StoredEvent], progress: Callable[[int], None] | None = None) -> int:
    """Check positions, links, hashes and decoding of a whole log read in order (any backend),
    each sealed row's seal against its salt, and that every erased row is named, with its seal,
    by an ``Erased`` event after it (and that every row an ``Erased`` event names is erased)."""
    prev_hash, expected_position, count = GENESIS_HASH, 1, 0
    cleared: list[erasure.Cleared] = []
    named_live: list[tuple[int, str]] = []  # sealed rows still holding their fields
    covered: dict[str, str] = {}  # event id -> seal, named by an Erased event
    for ev in events:
        if ev.position != expected_position:
            raise ChainBroken(f"position {expected_position} is missing", position=expected_position)
        if ev.prev_hash != prev_hash or row_hash(prev_hash, ev) != ev.hash:
            raise ChainBroken(f"event at position {ev.position} does not match its hash", position=ev.position)
        try:
            data = ev.data
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError):
            raise ChainBroken(f"event at position {ev.position} does not decode", position=ev.position) from None
        if ev.seal:
            _check_seal(ev, cleared)
            if ev.salt is not None:
                named_live.append((ev.position, ev.event_id))
        if isinstance(data, Erased):
            for row in data.rows:
                covered[row.event_id] = row.seal
        prev_hash, expected_position, count = ev.hash, expected_position + 1, count + 1
        if progress and count % 1000 == 0:
            progress(count)
    problem = erasure.unaccounted(cleared, covered)
    if problem is not None:
        raise ChainBroken(problem[1], position=problem[0])
    live = sorted(p for p, event_id in named_live if event_id in covered)
    if live:
        raise ChainBroken(
            f"event at position {live[0]} is named by an Erased event but still holds its fields", position=live[0]
        )
    return count


def seal_holds(ev: StoredEvent) -> bool:
    """A sealed row that still holds its salt: its erasable fields hash to its seal (the row
    hash covers them only through the seal, so this is how an edit of them shows)."""
    erasable = erasure.split(ev.type, ev.payload)[1]
    return ev.salt is not None and erasable is not None and erasure.seal_of(ev.salt, erasable) == ev.seal


def _check_seal(ev: StoredEvent, cleared: list[erasure.Cleared]) -> None:
    if ev.salt is None:
        if not erasure.is_redacted(ev.type, ev.payload):
            raise ChainBroken(f"event at position {ev.position} lost its salt but not its fields", position=ev.position)
        cleared.append(erasure.Cleared(ev.position, ev.event_id, ev.seal))
    elif not seal_holds(ev):
        raise ChainBroken(f"event at position {ev.position} does not match its seal", position=ev.position)
