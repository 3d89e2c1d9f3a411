"""The append-only event store: one APSW connection, one ``events`` table, a hash chain.

Guarantees (each one has a test in ``tests/test_store_contract.py``):

1. ``position`` is global and gapless: a batch of n events gets exactly ``max+1..max+n``.
2. ``event_id`` is UNIQUE; appending an event whose id is already stored is a no-op that returns
   the stored row, so a retried append (or an import) never duplicates.
3. ``(stream_id, stream_version)`` is UNIQUE: optimistic concurrency is the constraint, surfaced
   as :class:`StreamVersionConflict`; the whole batch is rolled back.
4. Triggers abort every UPDATE and DELETE on ``events``.
5. ``hash = sha256(prev_hash || canonical bytes of the row)``; :meth:`EventStore.verify_chain`
   recomputes it.
6. Writes run in ``BEGIN IMMEDIATE`` (a read transaction is never upgraded to a write, which
   fails with BUSY at once, https://www.sqlite.org/lang_transaction.html) with the busy timeout
   the caller passes (``busy_timeout_ms`` in the settings) and a retry when BUSY still escapes under saturation.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import apsw

from fact_ledger.ledger.errors import Unavailable
from fact_ledger.ledger.log import dbfiles
from fact_ledger.ledger.log.chain import (
    COLUMNS,
    NewEvent,
    StoredEvent,
    chain_batch,
    check_continues,
    event_from_row,
    event_row,
    verify_events,
    version_taken,
)
from fact_ledger.ledger.log.checkpoint import CHECKPOINT_FRAMES, CHECKPOINT_FRAMES_INLINE, Checkpointer
from fact_ledger.ledger.sql import insert_rows, marks

T = TypeVar("T")
_INSERT_EVENTS = f"INSERT INTO events({COLUMNS})"
DEFAULT_BUSY_TIMEOUT_MS = 5000
SCHEMA_VERSION = 2  # 2: sealed rows (seal, salt) and the one UPDATE an erasure may make

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events(
    position        INTEGER PRIMARY KEY,
    event_id        TEXT NOT NULL UNIQUE,
    stream_id       TEXT NOT NULL,
    stream_version  INTEGER NOT NULL,
    type            TEXT NOT NULL,
    v               INTEGER NOT NULL,
    payload         TEXT NOT NULL,
    event_time      TEXT NOT NULL,
    recorded_at     TEXT NOT NULL,
    actor           TEXT NOT NULL,
    workspace       TEXT NOT NULL,
    idempotency_key TEXT UNIQUE,
    prev_hash       TEXT NOT NULL,
    hash            TEXT NOT NULL,
    seal            TEXT NOT NULL DEFAULT '',
    salt            TEXT,
    UNIQUE(stream_id, stream_version)
);
"""
# Version 1 files get the two columns; then every file gets the same indexes and triggers.
_ADD_SEAL = """
ALTER TABLE events ADD COLUMN seal TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN salt TEXT;
"""
# The only UPDATE the log takes: an erasure (ledger.erasure) clears the salt of a sealed row
# that a later Erased event names (by event id, as ``verify`` matches them: an Erased event
# imported from another ledger names the rows by that ledger's positions), rewriting its payload
# and nothing else (the payload's public part is under the hash, so ``verify`` catches any other
# change to it).
_TRIGGERS = """
CREATE INDEX IF NOT EXISTS events_recorded_at ON events(recorded_at);
CREATE INDEX IF NOT EXISTS events_erased ON events(position) WHERE type = 'Erased';
DROP TRIGGER IF EXISTS events_no_update;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
    WHEN NOT (
        OLD.seal <> '' AND OLD.salt IS NOT NULL AND NEW.salt IS NULL AND NEW.seal = OLD.seal
        AND NEW.position = OLD.position AND NEW.event_id = OLD.event_id AND NEW.stream_id = OLD.stream_id
        AND NEW.stream_version = OLD.stream_version AND NEW.type = OLD.type AND NEW.v = OLD.v
        AND NEW.event_time = OLD.event_time AND NEW.recorded_at = OLD.recorded_at AND NEW.actor = OLD.actor
        AND NEW.workspace = OLD.workspace AND NEW.idempotency_key IS OLD.idempotency_key
        AND NEW.prev_hash = OLD.prev_hash AND NEW.hash = OLD.hash
        AND EXISTS (
            SELECT 1 FROM events e, json_each(e.payload, '$.rows') r
            WHERE e.type = 'Erased' AND e.position > OLD.position
              AND json_extract(r.value, '$.event_id') = OLD.event_id
              AND json_extract(r.value, '$.seal') = OLD.seal))
    BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
"""


class StoreBusy(Unavailable):
    """The database stayed locked past the busy timeout (and the retries)."""


class EventStore:
    """The log on one SQLite file. Not thread-safe: one store per thread or process."""

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        synchronous: str = "FULL",
        create: bool = True,
    ) -> None:
        self.path = str(path)
        # A ``file:`` URI passes through as is (e.g. ``file:/srv/ledger.db?mode=ro`` for a
        # read-only copy, https://www.sqlite.org/uri.html); a plain path gets its folder made
        # when ``create``, else it must hold a ledger already (ledger.log.dbfiles).
        dbfiles.prepare(self.path, create=create)
        # The caller's value (the server passes Settings.busy_timeout_ms): the ledger reads no
        # environment, so the one place settings are resolved also validates them.
        self.busy_timeout_ms = max(0, busy_timeout_ms)
        self.conn = apsw.Connection(
            self.path, flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE | apsw.SQLITE_OPEN_URI
        )
        self.conn.set_busy_timeout(self.busy_timeout_ms)
        self._wal_frames = 0
        self._checkpointer: Checkpointer | None = None
        self._configure(synchronous)

    @classmethod
    def read_only(cls, path: str, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> EventStore:
        """An existing ledger file opened only to read it: its folder or file system takes no
        writes, or its disk is full. SQLite reads a WAL database read-only when its ``-shm`` can
        be read or created (https://www.sqlite.org/wal.html#readonly); where neither can be and
        no ``-wal`` holds anything beyond the file, it is read as ``immutable``. Nothing is
        created, converted or written: a write on it fails with ``read_only``."""
        dbfiles.prepare(path, create=False)
        absolute = quote(str(Path(path).expanduser().resolve()))
        wal = Path(f"{path}-wal")
        try:
            return cls._opened_read_only(f"file:{absolute}?mode=ro", path, busy_timeout_ms)
        except apsw.Error:
            if wal.exists() and wal.stat().st_size > 0:  # immutable would not read what the WAL holds
                raise
        return cls._opened_read_only(f"file:{absolute}?mode=ro&immutable=1", path, busy_timeout_ms)

    @classmethod
    def _opened_read_only(cls, uri: str, path: str, busy_timeout_ms: int) -> EventStore:
        store = cls.__new__(cls)
        store.path = path
        store.busy_timeout_ms = max(0, busy_timeout_ms)
        store._wal_frames = 0
        store._checkpointer = None
        store.conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        try:
            store.conn.set_busy_timeout(store.busy_timeout_ms)
            store._refuse_foreign_database()  # the first statement: any failure to read shows here
            if store.conn.execute("PRAGMA user_version").get < SCHEMA_VERSION:
                raise apsw.ReadOnlyError(f"{path} needs its schema upgraded, which a read-only open cannot do")
        except BaseException:
            store.conn.close()
            raise
        return store

    # -- setup -------------------------------------------------------------------------------
    def _configure(self, synchronous: str) -> None:
        conn = self.conn
        self._refuse_foreign_database()
        if conn.execute("PRAGMA journal_mode").get != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        conn.execute("PRAGMA foreign_keys=ON")
        if conn.execute("PRAGMA journal_mode").get == "wal":
            # A WAL hook replaces SQLite's auto-checkpoint: the checkpoint runs in the background.
            self._checkpointer = Checkpointer(self.path)
            conn.set_wal_hook(self._wal_hook)
        if conn.execute("PRAGMA user_version").get < SCHEMA_VERSION:
            self.write(self._create_schema)

    def _refuse_foreign_database(self) -> None:
        """Another program's SQLite database is not a ledger: refuse it before anything (not even
        the journal mode) changes in it. Ours, even empty, has the ``events`` table or no table."""
        if self.conn.execute("PRAGMA user_version").get >= SCHEMA_VERSION:
            return
        tables = [row[0] for row in self.conn.execute("SELECT name FROM sqlite_schema WHERE type='table'")]
        if tables and "events" not in tables:
            self.conn.close()
            raise dbfiles.NotALedger(self.path, f"an SQLite database with other tables: {', '.join(tables[:3])}")

    def _wal_hook(self, _conn: apsw.Connection, _name: str, frames: int) -> int:
        self._wal_frames = frames
        if self._checkpointer is not None:
            self._checkpointer.last_write = time.monotonic()
            if frames >= CHECKPOINT_FRAMES:
                self._checkpointer.request()
        return apsw.SQLITE_OK

    @property
    def wal_frames(self) -> int:
        """Frames in the WAL after this connection's last commit (0 right after a checkpoint)."""
        return self._wal_frames

    def _checkpoint_if_large(self, limit: int) -> None:
        """Checkpoint on the writer's own connection when the WAL holds ``limit`` frames or more."""
        if self._wal_frames >= limit:
            self._wal_frames = 0
            with suppress(apsw.Error):
                self.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)

    def _create_schema(self) -> None:
        conn = self.conn
        columns = {row[1] for row in conn.execute("PRAGMA table_info(events)")}
        if not columns:
            conn.execute(_SCHEMA)
        elif "seal" not in columns:
            conn.execute(_ADD_SEAL)
        conn.execute(_TRIGGERS)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
            # A short-lived process leaves the WAL no larger than auto-checkpoint would have;
            # the last connection to close checkpoints it whole anyway.
            self._checkpoint_if_large(CHECKPOINT_FRAMES)
        self.conn.close()

    # -- transactions ------------------------------------------------------------------------
    def write(self, work: Callable[[], T]) -> T:
        """Run ``work`` inside ``BEGIN IMMEDIATE``; retry the whole unit when BUSY escapes.

        ``work`` must read whatever state it decides on inside the transaction, so a retry
        decides afresh. Nested calls join the outer transaction.
        """
        if not self.conn.get_autocommit():
            return work()
        deadline = self._deadline()
        while True:
            self.begin_write(deadline)
            try:
                result = work()
                self.commit_write()
                return result
            except apsw.BusyError:
                self._rollback()
                if time.monotonic() >= deadline:
                    raise StoreBusy("database is locked by another writer") from None
            except BaseException:
                self._rollback()
                raise

    def _deadline(self) -> float:
        return time.monotonic() + max(self.busy_timeout_ms, 100) * 3 / 1000

    def begin_write(self, deadline: float | None = None) -> None:
        """``BEGIN IMMEDIATE``, waiting (busy timeout, then backoff) until ``deadline``.

        For a caller that must commit this file at a moment of its own choosing (the local copy
        of a log commits after the log); :meth:`write` is the usual way in.
        """
        deadline = self._deadline() if deadline is None else deadline
        delay = 0.005
        while True:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                return
            except apsw.BusyError:
                if time.monotonic() >= deadline:
                    raise StoreBusy("database is locked by another writer") from None
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.2)

    def takes_a_writer_now(self) -> bool:
        """Whether a write could begin at once (no other connection holds the write lock): a
        probe that waits for nothing and writes nothing. False inside this connection's own
        transaction."""
        if not self.conn.get_autocommit():
            return False
        self.conn.set_busy_timeout(0)
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError:
            return False
        finally:
            self.conn.set_busy_timeout(self.busy_timeout_ms)
        self.conn.execute("ROLLBACK")
        return True

    def commit_write(self) -> None:
        self.conn.execute("COMMIT")
        self._checkpoint_if_large(CHECKPOINT_FRAMES_INLINE)

    def rollback_write(self) -> None:
        self._rollback()

    def _rollback(self) -> None:
        if not self.conn.get_autocommit():
            self.conn.execute("ROLLBACK")

    def rolled_back(self, work: Callable[[], T]) -> T:
        """Run ``work`` inside ``BEGIN IMMEDIATE`` and always roll back: a trial fold that
        compares what it computes with what is stored, and leaves nothing behind."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            return work()
        finally:
            self._rollback()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: several SELECTs see one consistent state. Never writes."""
        if not self.conn.get_autocommit():
            yield
            return
        self.conn.execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            self._rollback()

    # -- append ------------------------------------------------------------------------------
    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        """Append a batch atomically; returns the stored rows (already stored ones for retries)."""
        return self.write(lambda: self.append_in_transaction(events))

    def append_in_transaction(self, events: Sequence[NewEvent], *, new_ids: bool = False) -> list[StoredEvent]:
        """Append inside the caller's write transaction (``write``), so that a projection
        update folded in the same transaction commits or rolls back with the events."""
        return chain_batch(events, self.tail(), self._by_event_ids, self._next_version, self._insert, new_ids=new_ids)

    def append_stored(self, rows: Sequence[StoredEvent], *, tail: tuple[int, str] | None = None) -> None:
        """Append rows copied from another log as they are (see :func:`check_continues`).
        ``tail``: this file's last (position, hash), when the caller read it in this transaction."""

        def work() -> None:
            check_continues(tail or self.tail(), rows)
            self._insert(rows)

        self.write(work)

    def tail(self) -> tuple[int, str] | None:
        """The last row's (position, hash), or None for an empty log."""
        return self.conn.execute("SELECT position, hash FROM events ORDER BY position DESC LIMIT 1").fetchone()

    def _insert(self, rows: Sequence[StoredEvent]) -> None:
        """The rows in one statement (per parameter limit); a stream version another writer took
        is named by the row that took it, found again row by row (the failed statement wrote nothing)."""
        try:
            insert_rows(self.conn, _INSERT_EVENTS, [event_row(ev) for ev in rows])
        except apsw.ConstraintError:
            for ev in rows:
                self._insert_one(ev)

    def _insert_one(self, ev: StoredEvent) -> None:
        try:
            insert_rows(self.conn, _INSERT_EVENTS, [event_row(ev)])
        except apsw.ConstraintError as exc:
            if "stream_id" in str(exc):
                raise version_taken(ev) from None
            raise

    def _next_version(self, stream_id: str) -> int:
        current = self.conn.execute("SELECT max(stream_version) FROM events WHERE stream_id=?", (stream_id,)).get
        return (current or 0) + 1

    def _by_event_ids(self, event_ids: Sequence[str]) -> dict[str, StoredEvent]:
        if not event_ids:
            return {}
        found = self.conn.execute(
            f"SELECT {COLUMNS} FROM events WHERE event_id IN ({marks(len(event_ids))})", tuple(event_ids)
        )
        return {ev.event_id: ev for ev in map(event_from_row, found)}

    # -- read --------------------------------------------------------------------------------
    def present_ids(self, event_ids: Sequence[str]) -> set[str]:
        """Which of ``event_ids`` the log holds already (a replay skips those)."""
        if not event_ids:
            return set()
        return {
            r[0]
            for r in self.conn.execute(
                f"SELECT event_id FROM events WHERE event_id IN ({marks(len(event_ids))})", tuple(event_ids)
            )
        }

    def last_position(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(position), 0) FROM events").get)

    def read(self, after: int = 0, until: int | None = None, batch: int = 2000) -> Iterator[StoredEvent]:
        """Events with ``after < position <= until`` in order, fetched in bounded batches."""
        last = after
        while True:
            sql = f"SELECT {COLUMNS} FROM events WHERE position > ?"
            params: list[Any] = [last]
            if until is not None:
                sql += " AND position <= ?"
                params.append(until)
            rows = self.conn.execute(sql + " ORDER BY position LIMIT ?", (*params, batch)).fetchall()
            if not rows:
                return
            for row in rows:
                stored = event_from_row(row)
                yield stored
            last = stored.position

    def verify_chain(self, progress: Callable[[int], None] | None = None) -> int:
        """Recompute every hash; return the number of events, raise ChainBroken at the first bad one."""
        return verify_events(self.read(), progress)

    # -- erasure -----------------------------------------------------------------------------
    def erase_rows(self, rows: Sequence[tuple[int, str]]) -> None:
        """Clear the erasable fields and salt of ``rows`` ((position, redacted payload)), inside
        the caller's write transaction, after the Erased event naming them was appended: the
        trigger refuses any other UPDATE. ``secure_delete`` zeroes the freed bytes."""
        self.conn.execute("PRAGMA secure_delete=ON")
        self.conn.executemany("UPDATE events SET payload=?, salt=NULL WHERE position=?", [(p, n) for n, p in rows])

    def wipe(self) -> None:
        """After an erasure: rewrite the file without free pages that may hold old bytes, and
        empty the WAL, whose old frames still hold the pages as they were before."""
        with suppress(apsw.Error):
            self.conn.execute("PRAGMA secure_delete=ON")
        self.conn.execute("VACUUM")
        self.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)

    def replace_all(self, rows: Iterable[StoredEvent]) -> int:
        """Swap the whole log for ``rows`` in one transaction (``ledger migrate --seal``): the
        same events, chained again with seals; the caller verified the old chain first. The
        rows are checked to chain from the genesis hash before the swap."""

        def work() -> int:
            conn = self.conn
            conn.execute("DROP TABLE IF EXISTS events_sealed")
            conn.execute(_SCHEMA.replace("IF NOT EXISTS events(", "events_sealed("))
            tail: tuple[int, str] | None = None
            count = 0
            batch: list[StoredEvent] = []
            for row in rows:
                batch.append(row)
                if len(batch) >= 2000:
                    tail = self._insert_sealed(batch, tail)
                    count += len(batch)
                    batch = []
            if batch:
                tail = self._insert_sealed(batch, tail)
                count += len(batch)
            conn.execute("DROP TABLE events")
            conn.execute("ALTER TABLE events_sealed RENAME TO events")
            conn.execute(_TRIGGERS)
            return count

        return self.write(work)

    def _insert_sealed(self, batch: list[StoredEvent], tail: tuple[int, str] | None) -> tuple[int, str]:
        check_continues(tail, batch)
        insert = f"INSERT INTO events_sealed({COLUMNS}) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        self.conn.executemany(insert, [event_row(r) for r in batch])
        return batch[-1].position, batch[-1].hash
