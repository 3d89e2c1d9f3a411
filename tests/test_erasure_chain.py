"""Sealed rows, the one UPDATE an erasure may make, and ``verify`` after it (issue 27, point 2).

Real SQLite files (and a throwaway PostgreSQL cluster for the narrow path there): a memory's row
is sealed when appended, an ``Erased`` event names it, its fields and salt are cleared; the chain
still verifies, the bytes are gone from the file, and each kind of tampering is named by position.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import apsw
import msgspec
import pytest

from fact_ledger.ledger import erasure
from fact_ledger.ledger.errors import ChainBroken
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import GENESIS_HASH, NewEvent, StoredEvent, canonical_json, resealed
from fact_ledger.ledger.log.events import ClaimCollided, Erased, ErasedRow, MemoryRecorded, MemoryRetired, SetMember
from fact_ledger.ledger.log.store import EventStore

MARKER = "zq-marker-7731-erase-me"
T0 = "2026-07-01T00:00:00.000000Z"


def _memory(content: str, stream: str | None = None) -> NewEvent:
    stream = stream or uuid7()
    return NewEvent(
        data=MemoryRecorded(memory=stream, content=content, subject=f"subj {content}", tags=("t",)),
        stream_id=stream,
        event_time=T0,
        workspace="w",
    )


def _erase(store: EventStore, rows: list[StoredEvent]) -> StoredEvent:
    """What the facade does, on the store alone: the Erased event, then the cleared rows."""

    def work() -> StoredEvent:
        (event,) = store.append_in_transaction(
            [
                NewEvent(
                    data=Erased(
                        memory=rows[0].stream_id, rows=tuple(ErasedRow(r.position, r.event_id, r.seal) for r in rows)
                    ),
                    stream_id=rows[0].stream_id,
                    event_time=T0,
                )
            ]
        )
        store.erase_rows([(r.position, erasure.redact(r.type, r.payload)) for r in rows])
        return event

    return store.write(work)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    s = EventStore(tmp_path / "log.db")
    yield s
    s.close()


def _raw(store: EventStore) -> apsw.Connection:
    """A second connection with the triggers dropped: what someone editing the file can do."""
    conn = apsw.Connection(store.path)
    conn.execute("DROP TRIGGER IF EXISTS events_no_update")
    return conn


def test_a_memory_row_is_sealed_and_its_seal_is_its_salted_fields(store: EventStore) -> None:
    (row,) = store.append([_memory(MARKER)])
    public, fields = erasure.split(row.type, row.payload)
    assert MARKER not in public and fields is not None and MARKER.encode() in fields
    assert row.salt and row.seal == hashlib.sha256(bytes.fromhex(row.salt) + fields).hexdigest()
    (retired,) = store.append(
        [NewEvent(data=MemoryRetired(memory=row.stream_id), stream_id=row.stream_id, event_time=T0)]
    )
    assert retired.seal == "" and retired.salt is None  # nothing erasable: hashed whole, as before


def test_erasure_clears_the_bytes_and_the_chain_still_verifies(store: EventStore) -> None:
    rows = store.append([_memory("kept one"), _memory(MARKER), _memory("kept two")])
    erased = _erase(store, [rows[1]])
    store.wipe()
    assert store.verify_chain() == 4
    after = list(store.read())
    assert after[1].salt is None and after[1].seal == rows[1].seal and after[1].hash == rows[1].hash
    assert msgspec.json.decode(after[1].payload)["content"] == erasure.PLACEHOLDER
    assert after[0] == rows[0] and after[2] == rows[2] and erased.position == 4
    for suffix in ("", "-wal"):
        path = Path(store.path + suffix)
        assert not path.exists() or MARKER.encode() not in path.read_bytes()


def test_the_log_refuses_an_update_no_erased_event_names(store: EventStore) -> None:
    rows = store.append([_memory(MARKER), _memory("other")])
    _erase(store, [rows[1]])
    for sql in (
        "UPDATE events SET payload='{}', salt=NULL WHERE position=1",  # not named by an Erased event
        "UPDATE events SET actor='x' WHERE position=2",  # named, but another column changes
        "DELETE FROM events WHERE position=1",
    ):
        with pytest.raises(apsw.ConstraintError, match="append-only"):
            store.conn.execute(sql)
    assert store.verify_chain() == 3


def test_an_altered_seal_of_an_erased_row_fails_verify_at_its_position(store: EventStore) -> None:
    rows = store.append([_memory("a"), _memory(MARKER), _memory("b")])
    _erase(store, [rows[1]])
    raw = _raw(store)
    raw.execute("UPDATE events SET seal=? WHERE position=2", ("0" * 64,))
    raw.close()
    with pytest.raises(ChainBroken) as caught:
        store.verify_chain()
    assert caught.value.details["position"] == 2 and "position 2" in caught.value.message


def test_a_dropped_seal_of_an_erased_row_fails_verify_at_its_position(store: EventStore) -> None:
    rows = store.append([_memory("a"), _memory(MARKER)])
    _erase(store, [rows[1]])
    raw = _raw(store)
    raw.execute("UPDATE events SET seal='' WHERE position=2")
    raw.close()
    with pytest.raises(ChainBroken) as caught:
        store.verify_chain()
    assert caught.value.details["position"] == 2


def test_an_erasure_without_its_event_fails_verify_at_the_cleared_row(store: EventStore) -> None:
    rows = store.append([_memory("a"), _memory(MARKER), _memory("b")])
    raw = _raw(store)
    raw.execute(
        "UPDATE events SET payload=?, salt=NULL WHERE position=2", (erasure.redact(rows[1].type, rows[1].payload),)
    )
    raw.close()
    with pytest.raises(ChainBroken, match="erased without an Erased event") as caught:
        store.verify_chain()
    assert caught.value.details["position"] == 2


def test_an_erased_event_whose_row_still_holds_its_fields_fails_verify(store: EventStore) -> None:
    rows = store.append([_memory("a"), _memory(MARKER)])
    store.append(
        [
            NewEvent(
                data=Erased(memory=rows[1].stream_id, rows=(ErasedRow(2, rows[1].event_id, rows[1].seal),)),
                stream_id=rows[1].stream_id,
                event_time=T0,
            )
        ]
    )
    with pytest.raises(ChainBroken, match="still holds its fields") as caught:
        store.verify_chain()
    assert caught.value.details["position"] == 2


def test_an_edited_erasable_field_of_a_live_row_fails_its_seal(store: EventStore) -> None:
    store.append([_memory("a"), _memory("port 8001")])
    raw = _raw(store)
    raw.execute("UPDATE events SET payload=replace(payload, '8001', '9001') WHERE position=2")
    raw.close()
    with pytest.raises(ChainBroken, match="does not match its seal") as caught:
        store.verify_chain()
    assert caught.value.details["position"] == 2


def test_a_claim_set_keeps_its_member_ids_and_loses_their_values() -> None:
    a, b = uuid7(), uuid7()
    data = ClaimCollided(
        conflict=uuid7(),
        subject="carol",
        attribute="phone",
        members=(SetMember(a, MARKER, MARKER), SetMember(b, "555", "555")),
    )
    payload = canonical_json(data).decode()
    redacted = erasure.redact("ClaimCollided", payload)
    assert MARKER not in redacted and a in redacted and b in redacted
    public, fields = erasure.split("ClaimCollided", payload)
    assert a in public and b in public and MARKER not in public and fields is not None and MARKER.encode() in fields
    assert erasure.split("ClaimCollided", redacted)[0] == erasure.split("ClaimCollided", payload)[0]


def _legacy(rows: list[StoredEvent]) -> list[StoredEvent]:
    """The same rows as a log written before sealing holds them: whole payloads under the hash."""
    from fact_ledger.ledger.log.chain import row_hash

    out, prev = [], GENESIS_HASH
    for row in rows:
        old = msgspec.structs.replace(row, seal="", salt=None, prev_hash=prev, hash="")
        old.hash = row_hash(prev, old)
        out.append(old)
        prev = old.hash
    return out


def test_resealing_an_old_log_keeps_every_event_and_lets_it_erase(tmp_path: Path) -> None:
    fresh = EventStore(tmp_path / "fresh.db")
    rows = fresh.append([_memory(f"fact {n}") for n in range(5)] + [_memory(MARKER)])
    fresh.close()
    old = EventStore(tmp_path / "old.db")
    old.append_stored(_legacy(rows))
    assert old.verify_chain() == 6 and not any(r.seal for r in old.read())
    assert old.replace_all(resealed(old.read())) == 6
    sealed = list(old.read())
    assert all(r.seal and r.salt for r in sealed) and [r.payload for r in sealed] == [r.payload for r in rows]
    _erase(old, [sealed[5]])
    assert old.verify_chain() == 7
    old.close()


def test_resealing_refuses_rows_that_do_not_chain(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "log.db")
    rows = store.append([_memory("a"), _memory("b")])
    bad = list(resealed(rows))
    bad[1] = msgspec.structs.replace(bad[1], hash="f" * 64)
    with pytest.raises(ChainBroken):
        store.replace_all(bad)
    assert list(store.read()) == rows  # nothing swapped
    store.close()


# -- PostgreSQL: the narrow path ----------------------------------------------------------------
def _pg_erase(store: object, rows: list[StoredEvent]) -> None:
    def work() -> None:
        store.append_in_transaction(  # type: ignore[attr-defined]
            [
                NewEvent(
                    data=Erased(
                        memory=rows[0].stream_id, rows=tuple(ErasedRow(r.position, r.event_id, r.seal) for r in rows)
                    ),
                    stream_id=rows[0].stream_id,
                    event_time=T0,
                )
            ]
        )
        store.erase_rows([(r.position, erasure.redact(r.type, r.payload)) for r in rows])  # type: ignore[attr-defined]

    store.write(work)  # type: ignore[attr-defined]


def test_postgresql_erases_only_through_its_function_and_only_named_rows(pg_cluster: object) -> None:
    psycopg = pytest.importorskip("psycopg")
    from fact_ledger.ledger.log.pg_store import PostgresEventStore, grant_appender

    owner = PostgresEventStore(pg_cluster.database())  # type: ignore[attr-defined]
    owner.conn.execute("CREATE ROLE eraser_host NOLOGIN")
    grant_appender(owner.conn, "eraser_host")
    owner.conn.execute("SET ROLE eraser_host")
    rows = owner.append([_memory("a"), _memory(MARKER), _memory("b")])
    for statement in ("UPDATE events SET payload='{}' WHERE position=2", "DELETE FROM events"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            owner.conn.execute(statement)
    with pytest.raises(psycopg.errors.RaiseException, match="append-only"):  # no Erased event names it yet
        owner.conn.execute("SELECT ledger_erase_row(2, '{}')")
    _pg_erase(owner, [rows[1]])
    with pytest.raises(psycopg.errors.RaiseException, match="append-only"):  # named, but not this one
        owner.conn.execute("SELECT ledger_erase_row(1, '{}')")
    owner.conn.execute("RESET ROLE")
    with pytest.raises(psycopg.errors.RaiseException, match="append-only"):  # even the owner, directly
        owner.conn.execute("UPDATE events SET actor='x' WHERE position=3")
    assert owner.verify_chain() == 4
    assert owner.wipe() is None
    dump = b"".join(
        owner.conn.execute("SELECT convert_to(payload, 'UTF8') FROM events").fetchall()[i][0] for i in range(4)
    )
    assert MARKER.encode() not in dump
    owner.close()


def test_what_a_type_without_erasable_fields_or_values_keeps_whole() -> None:
    retired = canonical_json(MemoryRetired(memory="m", reason=MARKER)).decode()
    assert erasure.split("MemoryRetired", retired) == (retired, None)
    assert erasure.redact("MemoryRetired", retired) == retired
    from fact_ledger.ledger.log.events import DuplicateSighted

    sighted = canonical_json(DuplicateSighted(memory="m")).decode()  # no source_ref: nothing to seal
    assert erasure.split("DuplicateSighted", sighted) == (sighted, None)
    lone = canonical_json(ClaimCollided(conflict="c", subject="s", attribute="a")).decode()  # no members
    public, fields = erasure.split("ClaimCollided", lone)
    assert "members" not in public and fields is not None and b"members" not in fields
    assert "members" not in erasure.redact("ClaimCollided", lone)
    typed = erasure.redact(
        "MemoryRecorded",
        canonical_json(MemoryRecorded(memory="m", content="x", tags=("t",), metadata={"k": 1})).decode(),
    )
    assert msgspec.json.decode(typed) == {"memory": "m", "content": "[erased]", "tags": [], "metadata": {}}


def test_a_cleared_row_whose_event_names_another_seal_fails_verify(store: EventStore) -> None:
    rows = store.append([_memory("a"), _memory(MARKER)])
    store.append(
        [
            NewEvent(
                data=Erased(memory=rows[1].stream_id, rows=(ErasedRow(2, rows[1].event_id, "f" * 64),)),
                stream_id=rows[1].stream_id,
                event_time=T0,
            )
        ]
    )
    with pytest.raises(apsw.ConstraintError, match="append-only"):  # the trigger wants the named seal
        store.erase_rows([(2, erasure.redact(rows[1].type, rows[1].payload))])
    raw = _raw(store)
    raw.execute(
        "UPDATE events SET payload=?, salt=NULL WHERE position=2", (erasure.redact(rows[1].type, rows[1].payload),)
    )
    raw.close()
    with pytest.raises(ChainBroken, match="does not match the digest") as caught:
        store.verify_chain()
    assert caught.value.details["position"] == 2
