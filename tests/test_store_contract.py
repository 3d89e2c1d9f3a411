"""The event store's written contract (ledger/log/store.py docstring), one test per requirement.

In the style of pyeventsourcing's recorder tests: duplicate ids, atomic batches, exact
positions, stale stream versions, refusal triggers, the hash chain and upcasting. Every test
that takes ``store`` runs against both log backends: the SQLite file and a real PostgreSQL
server (ledger/log/pg_store.py); the tests at the end are about the SQLite file alone.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path

import apsw
import msgspec
import psycopg
import pytest

from fact_ledger.ledger.errors import ChainBroken, StreamVersionConflict
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import GENESIS_HASH, NewEvent, StoredEvent, row_hash
from fact_ledger.ledger.log.checkpoint import CHECKPOINT_IDLE_S, Checkpointer
from fact_ledger.ledger.log.events import EVENT_TYPES, MemoryRecorded, MemoryRetired, decode_payload
from fact_ledger.ledger.log.pg_store import PostgresEventStore
from fact_ledger.ledger.log.store import CHECKPOINT_FRAMES, EventStore

T0 = "2026-07-01T00:00:00.000000Z"


def remembered(stream: str | None = None, content: str = "x", **kw: object) -> NewEvent:
    stream = stream or uuid7()
    return NewEvent(data=MemoryRecorded(memory=stream, content=content), stream_id=stream, event_time=T0, **kw)  # type: ignore[arg-type]


# What each backend raises when a statement breaks the append-only rule.
REFUSED = (apsw.ConstraintError, psycopg.errors.RaiseException)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> EventStore | PostgresEventStore:
    if request.param == "sqlite":
        s: EventStore | PostgresEventStore = EventStore(tmp_path / "events.db")
    else:
        s = PostgresEventStore(request.getfixturevalue("pg_cluster").database())
    yield s
    s.close()


def drop_update_trigger(store: EventStore | PostgresEventStore) -> None:
    """What a tamperer with write access to the file or database does first."""
    table = " ON events" if isinstance(store, PostgresEventStore) else ""
    store.conn.execute(f"DROP TRIGGER events_no_update{table}")


def test_positions_are_exactly_max_plus_one_to_max_plus_n(store: EventStore) -> None:
    first = store.append([remembered() for _ in range(3)])
    assert [e.position for e in first] == [1, 2, 3]
    second = store.append([remembered() for _ in range(4)])
    assert [e.position for e in second] == [4, 5, 6, 7]
    assert store.last_position() == 7


def test_duplicate_event_id_is_a_no_op_returning_the_stored_row(store: EventStore) -> None:
    event = remembered()
    [stored] = store.append([event])
    [again] = store.append([event])
    assert again.position == stored.position and again.hash == stored.hash
    assert store.last_position() == 1


def test_the_same_event_twice_in_one_batch_is_stored_once(store: EventStore) -> None:
    event, other = remembered(), remembered()
    stored = store.append([event, other, event])
    assert [e.position for e in stored] == [1, 2, 1]
    assert stored[2] == stored[0] and store.last_position() == 2


def test_a_batch_of_many_events_takes_every_one_in_order(store: EventStore) -> None:
    """A backend may write a batch in few statements (SQLite: as many rows as its parameter limit
    allows per statement, here two): every row still lands, chained in order."""
    stored = store.append([remembered(content=f"fact {n}") for n in range(2100)])
    assert [e.position for e in stored] == list(range(1, 2101))
    assert [e.data.content for e in store.read()] == [f"fact {n}" for n in range(2100)]  # type: ignore[attr-defined]
    assert store.verify_chain() == 2100


def test_batch_with_one_bad_event_is_atomic(store: EventStore) -> None:
    stream = uuid7()
    store.append([remembered(stream)])
    batch = [remembered(), remembered(stream, stream_version=1)]  # second reuses version 1
    with pytest.raises(StreamVersionConflict):
        store.append(batch)
    assert store.last_position() == 1
    assert [e.position for e in store.append([remembered()])] == [2]  # no gap left behind


def test_stale_stream_version_is_a_typed_error(store: EventStore) -> None:
    stream = uuid7()
    store.append([remembered(stream)])
    retire = NewEvent(data=MemoryRetired(memory=stream), stream_id=stream, event_time=T0, stream_version=1)
    with pytest.raises(StreamVersionConflict) as info:
        store.append([retire])
    assert info.value.code == "version_conflict"


def test_stream_versions_count_up_per_stream(store: EventStore) -> None:
    a, b = uuid7(), uuid7()
    out = store.append(
        [remembered(a), remembered(b), NewEvent(data=MemoryRetired(memory=a), stream_id=a, event_time=T0)]
    )
    assert [(e.stream_id, e.stream_version) for e in out] == [(a, 1), (b, 1), (a, 2)]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET payload='{}' WHERE position=1",
        "DELETE FROM events WHERE position=1",
    ],
)
def test_triggers_refuse_update_and_delete(store: EventStore, statement: str) -> None:
    store.append([remembered()])
    with pytest.raises(REFUSED, match="append-only"):
        store.conn.execute(statement)
    assert store.last_position() == 1


_OUTSIDE_ERASABLE = {
    "MemoryRecorded": ("content", "subject", "tags", "source_ref", "claims", "metadata", "content_hash"),
}


def outside_hash(prev_hash: str, ev: StoredEvent) -> str:
    """docs/design.md's ``sha256(prev_hash || canonical bytes)`` with json + hashlib, no project code
    (a sealed row: its payload without the erasable fields, keys sorted, then its seal)."""
    payload = ev.payload
    if ev.seal:
        doc = json.loads(payload)
        erasable = {k: doc.pop(k) for k in _OUTSIDE_ERASABLE[ev.type] if k in doc}
        payload = json.dumps(doc, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
        packed = json.dumps(erasable, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode()
        assert ev.salt is not None and hashlib.sha256(bytes.fromhex(ev.salt) + packed).hexdigest() == ev.seal
    columns = [
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
    columns[6] = payload
    if ev.seal:
        columns.append(ev.seal)
    body = json.dumps(columns, separators=(",", ":"), ensure_ascii=False).encode()
    return hashlib.sha256(prev_hash.encode("ascii") + body).hexdigest()


def test_hash_chain_links_every_event(store: EventStore) -> None:
    events = store.append([remembered(content=f"x {n} 接口 🙂 \u2028") for n in range(4)])
    events += store.append([remembered(idempotency_key="k-1")])
    prev = GENESIS_HASH
    for ev in events:
        assert ev.prev_hash == prev
        assert ev.hash == outside_hash(prev, ev) == row_hash(prev, ev)
        prev = ev.hash
    assert store.verify_chain() == 5


def test_hashes_are_pinned(store: EventStore) -> None:
    """The same rows hash to the same values in every version and process (an export verified
    elsewhere, a chain checked years later): the values below were computed once and written down."""
    pinned = [
        "ed2df0c67adf20ee60d7b5e0312c9719ea9feeeaf1f7b389a063f6f0da455d1b",
        "ccf7cd11e26f769bd594d2f56bf3f1f2d951f2309d6f9bad01579f6339e3a09e",
    ]
    events = store.append(
        [
            NewEvent(
                data=MemoryRetired(memory="s-1", reason=reason),
                stream_id="s-1",
                event_time="2026-07-01T00:00:00.000000Z",
                event_id=f"00000000-0000-7000-8000-00000000000{n}",
                recorded_at="2026-07-01T00:00:01.000000Z",
                actor="test:pinned",
                workspace="w",
            )
            for n, reason in enumerate(["done", "接口 🙂 \u2028"])
        ]
    )
    assert [e.hash for e in events] == pinned
    assert events[1].prev_hash == pinned[0] and events[0].prev_hash == GENESIS_HASH


def test_verify_chain_names_the_first_bad_position(store: EventStore) -> None:
    store.append([remembered() for _ in range(4)])
    drop_update_trigger(store)
    store.conn.execute("UPDATE events SET payload=replace(payload, '\"x\"', '\"y\"') WHERE position=3")
    with pytest.raises(ChainBroken) as info:
        store.verify_chain()
    assert info.value.details["position"] == 3


def test_payloads_are_canonical_bytes(store: EventStore) -> None:
    """Re-encoding a decoded payload gives the stored bytes back: hashes are reproducible."""
    [ev] = store.append(
        [
            remembered(
                content="b",
            )
        ]
    )
    from fact_ledger.ledger.log.events import encode_payload

    assert encode_payload(ev.data).decode() == ev.payload
    assert msgspec.json.decode(ev.payload) == {"memory": ev.stream_id, "content": "b"}


def test_old_payload_versions_are_upcast_on_read(store: EventStore) -> None:
    """A v1 memory (stored under the old name MemoryRemembered) kept tags as one string."""
    stream = uuid7()
    v1_payload = f'{{"content":"old","memory":"{stream}","tags":"infra, db ,"}}'
    data = decode_payload("MemoryRemembered", 1, v1_payload)
    assert isinstance(data, MemoryRecorded)
    assert data.tags == ("infra", "db")
    assert decode_payload("MemoryRecorded", 2, v1_payload.replace('"infra, db ,"', '["a"]')).tags == ("a",)


def test_every_event_type_round_trips() -> None:
    assert len(EVENT_TYPES) >= 10
    for name, cls in EVENT_TYPES.items():
        fields = {
            f: "s"
            for f in cls.__struct_fields__
            if f
            in (
                "memory",
                "loser",
                "winner",
                "conflict",
                "left",
                "right",
                "subject",
                "attribute",
                "left_value",
                "right_value",
                "judgment",
                "member",
                "alias",
                "canonical",
                "content",
                "command",
                "head",
                "change",
                "kind",
                "session",
                "signal",
                "long_term",
            )
        }
        event = cls(**fields)
        from fact_ledger.ledger.log.events import encode_payload

        assert decode_payload(name, cls.V, encode_payload(event)) == event


def test_uuid7_ids_are_time_ordered() -> None:
    ids = [uuid7() for _ in range(2000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(i[14] == "7" for i in ids)


def test_busy_timeout_is_an_argument(tmp_path: Path) -> None:
    """The settings resolve LEDGER_BUSY_TIMEOUT_MS (tests/test_config.py); the store takes it."""
    s = EventStore(tmp_path / "b.db", busy_timeout_ms=1234)
    assert s.busy_timeout_ms == 1234
    assert EventStore(tmp_path / "c.db").busy_timeout_ms == 5000


def test_wal_and_full_sync(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "events.db")
    assert store.conn.execute("PRAGMA journal_mode").get == "wal"
    assert store.conn.execute("PRAGMA synchronous").get == 2  # FULL
    store.close()


def test_the_background_checkpointer_copies_frames_into_the_database(tmp_path: Path) -> None:
    s = EventStore(tmp_path / "b.db")
    big = "y" * 20000
    for _ in range(250):  # ~6 frames an event: past CHECKPOINT_FRAMES, far below the inline fallback
        s.append([remembered(content=big)])
    checkpointer = s._checkpointer
    assert checkpointer is not None
    deadline = time.monotonic() + 5
    while checkpointer.backfilled == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert checkpointer.backfilled >= CHECKPOINT_FRAMES  # a fresh connection's checkpoint is a no-op
    s.close()


class _CountedEvent(threading.Event):
    """An event that counts how often a waiter returned from it (the thread woke)."""

    def __init__(self) -> None:
        super().__init__()
        self.returns = 0

    def wait(self, timeout: float | None = None) -> bool:
        try:
            return super().wait(timeout)
        finally:
            self.returns += 1


def test_a_burst_of_commits_does_not_wake_the_checkpointer_at_each_one(tmp_path: Path) -> None:
    """Past CHECKPOINT_FRAMES every commit requests a checkpoint; while the writer is busy the
    thread waits for its pause, and each wake-up would take the GIL from the writer."""
    s = EventStore(tmp_path / "b.db")
    s.append([remembered()])
    checkpointer = Checkpointer(str(tmp_path / "b.db"))
    events = [name for name in ("_wake", "_stopped") if hasattr(checkpointer, name)]
    for name in events:
        setattr(checkpointer, name, _CountedEvent())
    started = time.monotonic()
    requests = 0
    while time.monotonic() - started < 0.4:  # a writer committing every 2 ms for 0.4 s
        checkpointer.last_write = time.monotonic()
        checkpointer.request()
        requests += 1
        time.sleep(0.002)
    deadline = time.monotonic() + 5
    while checkpointer.backfilled == 0 and time.monotonic() < deadline:
        checkpointer.request()  # the writer paused: the pass runs
        time.sleep(0.01)
    wakes = sum(getattr(checkpointer, name).returns for name in events)
    backfilled = checkpointer.backfilled
    checkpointer.close()
    s.close()
    assert requests > 100 and backfilled > 0  # the pass ran once the writer paused
    # the pause is waited for in CHECKPOINT_IDLE_S steps (0.4 s: ~8), not one wake per request
    assert wakes <= 0.4 / CHECKPOINT_IDLE_S + 6, (wakes, requests)


def test_checkpoints_run_off_the_commit_and_keep_the_wal_bounded(tmp_path: Path) -> None:
    s = EventStore(tmp_path / "w.db")
    other = EventStore(tmp_path / "w.db")  # keeps the file open: closing ``s`` is not the last close
    big = "y" * 20000  # several pages an event: the WAL passes the checkpoint threshold quickly
    for _ in range(300):
        s.append([remembered(content=big)])
    s.close()
    wal = tmp_path / "w.db-wal"
    frames = other.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
    assert frames[0] < 16000 and wal.stat().st_size < 16000 * 4200  # log frames, backfilled
    assert other.last_position() == 300 and other.verify_chain() == 300
    other.close()
    assert not wal.exists()  # the last close checkpoints the WAL whole and removes it
