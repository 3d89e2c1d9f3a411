"""The append-only log on PostgreSQL, for a team that shares one memory.

The same rows, the same canonical bytes and the same hash chain as :mod:`ledger.log.store`, so
``verify`` and ``export`` give identical results for the same events on either backend. The
guarantees, and what each rests on here:

1. Gapless positions committed in position order: every write first takes one transaction-scoped
   advisory lock (``pg_advisory_xact_lock``), held until commit or rollback. It serialises writers
   for the whole transaction while readers go on, so position n+1 is never visible before n: its
   writer cannot start before n's commit. (``LOCK TABLE events IN EXCLUSIVE MODE``, which
   eventsourcing's recorder takes, needs UPDATE or DELETE privilege, which an appender role
   must not hold; the advisory lock needs none.)
2. ``event_id`` is UNIQUE; appending an already stored id returns the stored row.
3. ``(stream_id, stream_version)`` is UNIQUE (constraint ``events_stream_version``), surfaced as
   :class:`StreamVersionConflict`; the whole batch rolls back.
4. Triggers refuse UPDATE, DELETE and TRUNCATE; :func:`grant_appender` makes a role that holds
   no such privilege at all, so a broken trigger is not the only line.
5. ``hash = sha256(prev_hash || canonical bytes)``, computed by the same code as the SQLite log.
6. Each append sends ``NOTIFY ledger_events`` (delivered at commit) so readers on other
   machines wake at once instead of polling.

A connection that fails raises :class:`Unavailable`; the next call reconnects. psycopg is the
``[postgres]`` extra, imported only when this module is.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql as pg_sql

from fact_ledger.ledger.errors import LogUnreachable, Unavailable
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
from fact_ledger.ledger.log.copy import display_url

T = TypeVar("T")
SCHEMA_VERSION = 2  # 2: sealed rows (seal, salt) and the erasure path
NOTIFY_CHANNEL = "ledger_events"
IDLE_PING_S = 1.0  # a connection idle this long is checked before use (a restarted server closed it)
# Advisory lock keys (per database): schema creation between processes that open a fresh
# database at the same moment, and the log's single writer.
_SCHEMA_LOCK_KEY = 0x6C6564676572  # "ledger"
_WRITE_LOCK_KEY = 0x6C6564676573

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger_meta(
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events(
    position        BIGINT PRIMARY KEY,
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
    CONSTRAINT events_stream_version UNIQUE(stream_id, stream_version)
);
ALTER TABLE events ADD COLUMN IF NOT EXISTS seal TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN IF NOT EXISTS salt TEXT;
CREATE INDEX IF NOT EXISTS events_recorded_at ON events(recorded_at);
CREATE INDEX IF NOT EXISTS events_erased ON events(position) WHERE type = 'Erased';
CREATE OR REPLACE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only';
END $$;
-- The one UPDATE the log takes (as on SQLite): an erasure clears the salt of a sealed row that a
-- later Erased event names (by event id) with its seal, rewriting its payload and no other column.
CREATE OR REPLACE FUNCTION events_erase_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.seal <> '' AND OLD.salt IS NOT NULL AND NEW.salt IS NULL AND NEW.seal = OLD.seal
       AND (NEW.position, NEW.event_id, NEW.stream_id, NEW.stream_version, NEW.type, NEW.v, NEW.event_time,
            NEW.recorded_at, NEW.actor, NEW.workspace, NEW.prev_hash, NEW.hash)
         = (OLD.position, OLD.event_id, OLD.stream_id, OLD.stream_version, OLD.type, OLD.v, OLD.event_time,
            OLD.recorded_at, OLD.actor, OLD.workspace, OLD.prev_hash, OLD.hash)
       AND NEW.idempotency_key IS NOT DISTINCT FROM OLD.idempotency_key
       AND EXISTS (
           SELECT 1 FROM events e, jsonb_array_elements(e.payload::jsonb -> 'rows') r
           WHERE e.type = 'Erased' AND e.position > OLD.position
             AND r ->> 'event_id' = OLD.event_id AND r ->> 'seal' = OLD.seal) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'events are append-only';
END $$;
-- The narrow path an appender role may take (it holds no UPDATE privilege): the trigger above
-- still decides which rows it may clear.
CREATE OR REPLACE FUNCTION ledger_erase_row(p_position BIGINT, p_payload TEXT) RETURNS void
    LANGUAGE sql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    UPDATE events SET payload = p_payload, salt = NULL WHERE position = p_position
$$;
CREATE OR REPLACE TRIGGER events_no_update BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION events_erase_only();
CREATE OR REPLACE TRIGGER events_no_delete BEFORE DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE OR REPLACE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
"""


def _first(cursor: psycopg.Cursor[Any]) -> Any:
    """The first column of a statement's one row (an aggregate or a catalogue lookup: always one)."""
    row = cursor.fetchone()
    if row is None:
        raise LookupError("the statement returned no row")
    return row[0]


class PostgresEventStore:
    """The log in one PostgreSQL database. Not thread-safe: one store per thread or process."""

    def __init__(self, url: str, *, connect_timeout_s: int = 5, create: bool = True) -> None:
        self.url = url
        self.path = display_url(url)  # what the SQLite store calls its location, for messages
        self._connect_timeout_s = connect_timeout_s
        self._conn: psycopg.Connection[Any] | None = None
        self._used = time.monotonic()
        self._depth = 0
        try:
            with self._unavailable_on_failure():
                if create:
                    self._create_schema()
                self.log_id: str = self._meta("log_id")
        except BaseException:
            self.close()
            raise

    def _create_schema(self) -> None:
        conn = self.conn
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
            conn.execute(_SCHEMA)
            conn.execute(
                "INSERT INTO ledger_meta(key, value) VALUES ('log_id', %s), ('schema_version', %s)"
                " ON CONFLICT (key) DO NOTHING",
                (str(uuid.uuid4()), str(SCHEMA_VERSION)),
            )

    # -- connection --------------------------------------------------------------------------
    @property
    def conn(self) -> psycopg.Connection[Any]:
        """The live connection, reconnecting after a failure (outside a transaction only).

        A connection idle for ``IDLE_PING_S`` is asked whether it still stands before a call
        uses it: a server restarted meanwhile closed it, and the first call after a routine
        restart was answered "unreachable" (its write sent to the backup) while the server was
        back. Outside a transaction only: inside one, a lost connection is the unit's failure."""
        now = time.monotonic()
        idle = now - self._used > IDLE_PING_S
        self._used = now
        if self._conn is not None and not self._conn.closed and not self._conn.broken and idle and not self._depth:
            try:
                self._conn.execute("SELECT 1")
            except psycopg.OperationalError:
                self._conn.close()
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=self._connect_timeout_s)
        return self._conn

    @contextmanager
    def _unavailable_on_failure(self) -> Iterator[None]:
        try:
            yield
        except psycopg.OperationalError as exc:
            if self._conn is not None and self._conn.broken:
                self._conn = None
            raise LogUnreachable(
                f"the PostgreSQL log is unreachable: {str(exc).strip()}", reason="log_unreachable"
            ) from None

    def _meta(self, key: str) -> str:
        row = None
        if _first(self.conn.execute("SELECT to_regclass('ledger_meta')")) is not None:
            row = self.conn.execute("SELECT value FROM ledger_meta WHERE key=%s", (key,)).fetchone()
        if row is None:
            raise Unavailable(f"{self.path} holds no ledger log (no {key})")
        return str(row[0])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- transactions ------------------------------------------------------------------------
    def write(self, work: Callable[[], T]) -> T:
        """Run ``work`` holding the log's write lock; nested calls join the outer transaction."""
        if self._depth:
            return work()
        with self._unavailable_on_failure():
            conn = self.conn
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK_KEY,))
                self._depth += 1
                try:
                    return work()
                finally:
                    self._depth -= 1

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: several SELECTs see one consistent state. Never writes."""
        if self._depth:
            yield
            return
        with self._unavailable_on_failure():
            conn = self.conn
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1

    # -- append ------------------------------------------------------------------------------
    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]:
        """Append a batch atomically; returns the stored rows (already stored ones for retries)."""
        return self.write(lambda: self.append_in_transaction(events))

    def append_in_transaction(self, events: Sequence[NewEvent], *, new_ids: bool = False) -> list[StoredEvent]:
        """Append inside the caller's :meth:`write` (which holds the log's write lock)."""
        out = chain_batch(events, self._tail(), self._by_event_ids, self._next_version, self._insert, new_ids=new_ids)
        if out:
            self._notify(out[-1].position)
        return out

    def append_stored(self, rows: Sequence[StoredEvent]) -> None:
        """Append rows copied from another log as they are (see :func:`check_continues`)."""

        def work() -> None:
            check_continues(self._tail(), rows)
            self._insert(rows)
            if rows:
                self._notify(rows[-1].position)

        self.write(work)

    def _tail(self) -> tuple[int, str] | None:
        return self.conn.execute("SELECT position, hash FROM events ORDER BY position DESC LIMIT 1").fetchone()

    def _notify(self, position: int) -> None:
        self.conn.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, str(position)))

    def _insert(self, rows: Sequence[StoredEvent]) -> None:
        # Row by row: a failed statement aborts a PostgreSQL transaction, so the row that took a
        # stream version must be the one that fails.
        for ev in rows:
            try:
                self.conn.execute(
                    f"INSERT INTO events({COLUMNS}) VALUES(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                    event_row(ev),
                )
            except pg_errors.UniqueViolation as exc:
                if exc.diag.constraint_name == "events_stream_version":
                    raise version_taken(ev) from None
                raise

    def _next_version(self, stream_id: str) -> int:
        return (
            int(
                _first(self.conn.execute("SELECT max(stream_version) FROM events WHERE stream_id=%s", (stream_id,)))
                or 0
            )
            + 1
        )

    def _by_event_ids(self, event_ids: Sequence[str]) -> dict[str, StoredEvent]:
        if not event_ids:
            return {}
        rows = self.conn.execute(f"SELECT {COLUMNS} FROM events WHERE event_id = ANY(%s)", (list(event_ids),))
        return {ev.event_id: ev for ev in map(event_from_row, rows)}

    # -- read --------------------------------------------------------------------------------
    def present_ids(self, event_ids: Sequence[str]) -> set[str]:
        """Which of ``event_ids`` the log holds already (a replay skips those)."""
        if not event_ids:
            return set()
        with self._unavailable_on_failure():
            rows = self.conn.execute("SELECT event_id FROM events WHERE event_id = ANY(%s)", (list(event_ids),))
            return {r[0] for r in rows}

    def last_position(self) -> int:
        with self._unavailable_on_failure():
            return int(_first(self.conn.execute("SELECT coalesce(max(position), 0) FROM events")))

    def read(self, after: int = 0, until: int | None = None, batch: int = 2000) -> Iterator[StoredEvent]:
        """Events with ``after < position <= until`` in order, fetched in bounded batches."""
        last = after
        bound = until if until is not None else 2**63 - 1
        while True:
            with self._unavailable_on_failure():
                rows = self.conn.execute(
                    f"SELECT {COLUMNS} FROM events WHERE position > %s AND position <= %s ORDER BY position LIMIT %s",
                    (last, bound, batch),
                ).fetchall()
            if not rows:
                return
            for row in rows:
                yield event_from_row(row)
            last = rows[-1][0]

    def verify_chain(self, progress: Callable[[int], None] | None = None) -> int:
        """Recompute every hash; return the number of events, raise ChainBroken at the first bad one."""
        return verify_events(self.read(), progress)

    # -- erasure -----------------------------------------------------------------------------
    def erase_rows(self, rows: Sequence[tuple[int, str]]) -> None:
        """Clear ``rows`` ((position, redacted payload)) through ``ledger_erase_row``, inside the
        caller's :meth:`write`, after the Erased event naming them was appended."""
        for position, payload in rows:
            self.conn.execute("SELECT ledger_erase_row(%s, %s)", (position, payload))

    def wipe(self) -> str | None:
        """After an erasure: ``VACUUM FULL events`` rewrites the table without the old row
        versions, which a plain UPDATE leaves in its pages. Needs the table's owner; another role
        gets the reason back (an administrator runs it), never an error."""
        try:
            with self._unavailable_on_failure():
                self.conn.execute("VACUUM FULL events")
        except psycopg.errors.InsufficientPrivilege as exc:
            return f"VACUUM FULL events needs the table's owner ({str(exc).strip()})"
        return None


class LogWatcher:
    """Wakes a reader as soon as the log grows past a position: ``LISTEN`` for the appends'
    ``NOTIFY``, with polling as the fallback (a notification lost with a dropped connection
    costs at most ``poll_s``). One per reader; it holds its own connection."""

    def __init__(self, url: str, *, poll_s: float = 1.0) -> None:
        self.url = url
        self.poll_s = poll_s
        self._conn: psycopg.Connection[Any] | None = None

    def _listening(self) -> psycopg.Connection[Any] | None:
        if self._conn is None or self._conn.closed or self._conn.broken:
            try:
                self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
                self._conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
            except psycopg.OperationalError:
                self._conn = None
        return self._conn

    def head(self) -> int | None:
        """The log's last position, or None while the server is unreachable."""
        conn = self._listening()
        if conn is None:
            return None
        try:
            return int(_first(conn.execute("SELECT coalesce(max(position), 0) FROM events")))
        except psycopg.OperationalError:
            return None

    def wait_beyond(self, position: int, timeout_s: float) -> int | None:
        """Block until the head passes ``position`` (returns it) or ``timeout_s`` ends (returns
        the head then, None if unreachable). LISTEN is issued before the first look at the
        head, so an append between that look and the wait still wakes it."""
        deadline = time.monotonic() + timeout_s
        while True:
            head = self.head()
            remaining = deadline - time.monotonic()
            if (head is not None and head > position) or remaining <= 0:
                return head
            conn = self._conn
            wait = min(self.poll_s, remaining)
            if conn is None:
                time.sleep(wait)
                continue
            try:
                for _ in conn.notifies(timeout=wait, stop_after=1):
                    pass
            except psycopg.OperationalError:
                self._conn = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def grant_appender(conn: psycopg.Connection[Any], role: str) -> None:
    """Let ``role`` read and append to the log and nothing else: no UPDATE, DELETE or TRUNCATE.

    The triggers already refuse those statements; a role without the privileges means a
    dropped trigger alone cannot open the log to edits. ``role`` must exist.
    """
    ident = pg_sql.Identifier(role)
    for statement in (
        "REVOKE ALL ON events, ledger_meta FROM {}",
        "GRANT SELECT, INSERT ON events TO {}",
        "GRANT SELECT ON ledger_meta TO {}",
        "GRANT EXECUTE ON FUNCTION ledger_erase_row(BIGINT, TEXT) TO {}",
    ):
        conn.execute(pg_sql.SQL(statement).format(ident))
