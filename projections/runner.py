"""The projection runner: inline application, checkpoints, catch-up and rebuild.

A projector is a name, a version, the event types it handles and an ``apply``. ``handles``
names current types: a row stored under a type's old name (``ledger.log.events.RENAMED``) goes to
the projectors of its current name. Inline
projectors run inside the append transaction and write their checkpoint there too, so a write
is readable when it returns and a crash can never leave a projection ahead of or behind the
log. On open each projector catches up from its checkpoint (events from another process that
ran older code, a restored backup, an import); a projector whose version changed is rebuilt.

The read models may live apart from the log of record (a second SQLite file, or a PostgreSQL
log shared by a team): then ``store`` is the *local copy* of the log, kept in the read models'
file, and ``log`` is the log of record. The copy is always a prefix of the log: :meth:`pull`
appends what the log has beyond it (rows as they are, hashes included) and folds them, and an
append goes to the log first and to the copy second, in the copy's own transaction, which the
caller commits after the log's (``server.app.storage``). A crash between the two commits leaves
the read models behind the log, never ahead, and the next pull repairs them.

Only the read models a write's decision reads are folded inside its transaction (claims,
duplicates, conflicts, memory facts: the *inline* projectors). A projector marked
``after_commit`` (full text, the timeline) is folded after the write commits, in batches: before
the next read (:meth:`ProjectionRunner.settle`, which the storage seam calls ahead of every
call but the hot writes), when ``SETTLE_EVERY`` events await it, and on close. It reads the
events back from the local copy of the log, which holds them once the write commits, so a crash
in between leaves it behind its checkpoint and the next open or read catches it up: a read
always sees every write the log holds. Such a projector reads only its own tables and the
event (never another read model, which may have moved on), so folding later folds the same rows.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import apsw

from fact_ledger.ledger.errors import ChainBroken
from fact_ledger.ledger.log.chain import NewEvent, StoredEvent
from fact_ledger.ledger.log.events import EVENT_TYPES, Event, current_type
from fact_ledger.ledger.log.protocol import EventLog
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.ledger.sql import insert_rows, marks
from fact_ledger.projections import derived

log = logging.getLogger("fact_ledger.projections")

Progress = Callable[[int, int], None]


class Projector(Protocol):
    name: str
    version: int
    handles: frozenset[str]
    tables: tuple[str, ...]

    def create(self, conn: apsw.Connection) -> None:
        """Create the projection's tables if missing (idempotent)."""

    def drop(self, conn: apsw.Connection) -> None:
        """Drop every table the projection owns."""

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        """Fold one event into the tables. Deterministic: no clock, no randomness."""


class BulkProjector(Projector, Protocol):
    """Optional rebuild hooks (each may be absent).

    ``deferrable`` names the event types the projector folds during a rebuild without reading
    any projection table: it may keep their rows in memory and write them in batches. Before
    any event that some projector cannot defer, the runner calls ``flush`` on every projector,
    so whatever a projector reads is complete.
    """

    deferrable: frozenset[str]

    def begin_rebuild(self, conn: apsw.Connection) -> None: ...
    def end_rebuild(self, conn: apsw.Connection) -> None: ...
    def flush(self, conn: apsw.Connection) -> None: ...
    def cancel_rebuild(self) -> None:
        """A rebuild failed part way (rolled back); drop any in-memory rebuild state."""


class DeferredRows:
    """Rows a projector keeps during a rebuild for its deferrable events, one list per statement.

    ``flush`` writes each list with one ``executemany`` (the runner calls it before any event
    some projector must read for, and the projector at its ``end_rebuild``).
    """

    def __init__(self) -> None:
        self._rows: dict[str, list[tuple[Any, ...]]] = {}

    def add(self, sql: str, *rows: tuple[Any, ...]) -> None:
        self._rows.setdefault(sql, []).extend(rows)

    def flush(self, conn: apsw.Connection) -> None:
        for sql, rows in self._rows.items():
            if rows:
                conn.executemany(sql, rows)
                rows.clear()


class DeferringProjector:
    """The rebuild hooks of a projector whose deferrable events only add rows (``_pending``).

    While not rebuilding ``_pending`` is None and ``apply`` writes at once.
    """

    _pending: DeferredRows | None = None

    def begin_rebuild(self, conn: apsw.Connection) -> None:
        self._pending = DeferredRows()

    def flush(self, conn: apsw.Connection) -> None:
        if self._pending is not None:
            self._pending.flush(conn)

    def cancel_rebuild(self) -> None:
        self._pending = None

    def end_rebuild(self, conn: apsw.Connection) -> None:
        self.flush(conn)
        self._pending = None


_CHECKPOINTS = """
CREATE TABLE IF NOT EXISTS projection_checkpoints(
    name     TEXT PRIMARY KEY,
    version  INTEGER NOT NULL,
    position INTEGER NOT NULL
)
"""
# The memories whose erasure a process began and did not finish (projections/forget.py).
_ERASURES_UNFINISHED = """
CREATE TABLE IF NOT EXISTS erasures_unfinished(
    stream TEXT PRIMARY KEY
)
"""
# Tables the runner keeps beside the projections (created on open, never dropped by a rebuild).
_SUPPORT_TABLES = {
    "projection_checkpoints": _CHECKPOINTS,
    "derived_cache": derived.SCHEMA,
    "erasures_unfinished": _ERASURES_UNFINISHED,
}
REBUILD_CACHE_KIB = -262144  # page cache during a rebuild: 256 MiB (negative: KiB, SQLite's convention)


PULL_BATCH = 2000
# Events the after-commit projectors may trail by before a write folds them itself: one settle
# (a few ms per hundred events) every SETTLE_EVERY writes stays out of the p99 of ``remember``.
SETTLE_EVERY = 256


def folds_after_commit(projector: Projector) -> bool:
    return bool(getattr(projector, "after_commit", False))


class ProjectionRunner:
    def __init__(self, store: EventStore, projectors: Sequence[Projector], log: EventLog | None = None) -> None:
        for p in projectors:  # an old or misspelt name would never match: the projector would miss events
            unknown = sorted(p.handles - EVENT_TYPES.keys())
            if unknown:
                raise ValueError(f"projector {p.name} handles unknown event types {unknown} (current names only)")
        self.store = store
        self.log: EventLog = store if log is None else log
        self.projectors = list(projectors)
        self.inline = [p for p in self.projectors if not folds_after_commit(p)]
        self.after_commit = [p for p in self.projectors if folds_after_commit(p)]
        self.by_name = {p.name: p for p in self.projectors}
        # Events this process folded inline that the after-commit projectors have not (another
        # process's writes are found by :meth:`unsettled`), and the derivations those writes
        # computed, stored with the next settle (a cache: losing them costs a recomputation).
        self.pending = 0
        self._derivations: dict[bytes, bytes] = {}
        self._derivations_after = 0  # the log position the kept derivations' writes came after
        # The local copy's last (position, hash) as the pull in this write transaction left it
        # (equal to the log's, whose lock the transaction holds): the append needs no second look.
        # Whoever ends the transaction clears it (server.app.storage).
        self.pulled_tail: tuple[int, str] | None = None
        self.broken: ChainBroken | None = None  # where the log's chain broke, pulling it (_copy)
        # The memories (streams) whose erasure a pull brought (another machine erased them): what
        # this machine keeps outside the read models (its backup, the files' old bytes) follows
        # once the transaction is over (server.app.storage takes them).
        self.pulled_erasures: list[str] = []
        # Called as (done, total) while a new read-model file copies, then folds, the whole log.
        self.progress: Progress | None = None

    @property
    def conn(self) -> apsw.Connection:
        return self.store.conn

    # -- open --------------------------------------------------------------------------------
    def open(self) -> None:
        """Create missing tables, rebuild projectors whose version changed, catch up the rest,
        then pull what the log of record holds beyond the local copy."""
        if not self._needs_work():
            return
        self.store.write(self._open_in_transaction)

    @property
    def separate_log(self) -> bool:
        return self.log is not self.store

    def behind(self) -> int:
        """How many events the log of record holds beyond the local copy (0 for one file)."""
        return self.log.last_position() - self.store.last_position() if self.separate_log else 0

    def _needs_work(self) -> bool:
        try:
            rows = dict(
                (name, (version, position))
                for name, version, position in self.conn.execute(
                    "SELECT name, version, position FROM projection_checkpoints"
                )
            )
        except apsw.SQLError:
            return True
        present = self.conn.execute(
            f"SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN ({marks(len(_SUPPORT_TABLES))})",
            tuple(_SUPPORT_TABLES),
        ).fetchone()[0]
        last = self.store.last_position()
        return (
            present < len(_SUPPORT_TABLES)
            or any(rows.get(p.name) != (p.version, last) for p in self.projectors)
            or self.behind() > 0
        )

    def _open_in_transaction(self) -> None:
        self._create_support_tables()
        # A new read-model file: copy the whole log first, then fold it in one rebuild (much
        # faster than folding event by event).
        if self.separate_log and self.store.last_position() == 0 and self._copy(fold=False, progress=self.progress):
            self._rebuild(self.projectors, self.progress)
        stale: list[Projector] = []
        upgraded: list[str] = []
        for p in self.projectors:
            row = self.conn.execute("SELECT version FROM projection_checkpoints WHERE name=?", (p.name,)).fetchone()
            if row is None or row[0] != p.version:
                stale.append(p)
                if row is not None:
                    upgraded.append(f"{p.name} v{row[0]} → v{p.version}")
            else:
                p.create(self.conn)
        if upgraded:  # on a big ledger this takes a while: say why the first open is slow
            log.warning("rebuilding from the log once, for new projection versions: %s", ", ".join(upgraded))
        if stale:
            self._rebuild(stale, None)
        try:
            self._catch_up(self.projectors)
        except apsw.ConstraintError as exc:  # rows past a checkpoint: the checkpoints lag the tables
            log.warning("read models hold rows their checkpoints do not (%s); building them again from the log", exc)
            self._rebuild(self.projectors, self.progress)
        self.pull()

    def _catch_up(self, projectors: Sequence[Projector]) -> None:
        """Fold into ``projectors``, each from its own checkpoint, what the local copy of the log
        holds beyond it (on open: every projector; at a settle: the after-commit ones)."""
        if not projectors:
            return
        checkpoints = self.checkpoints()
        start = min(checkpoints.get(p.name, 0) for p in projectors)
        last = start
        for event in self.store.read(after=start):
            kind = current_type(event.type)
            data = None
            for p in projectors:
                if event.position > checkpoints.get(p.name, 0) and kind in p.handles:
                    data = data or event.data
                    p.apply(self.conn, event, data)
            last = event.position
        if last > start:
            self._set_checkpoints(projectors, last)

    # -- inline ------------------------------------------------------------------------------
    def append(self, events: Sequence[NewEvent], *, new_ids: bool = False) -> list[StoredEvent]:
        """Append and project in the caller's write transaction (``store.write``; with a
        separate log, inside the log's write transaction as well, after a :meth:`pull`).
        ``new_ids``: the events' ids were made for this append (``chain_batch``), so every
        stored row is a new one."""
        tail, self.pulled_tail = self.pulled_tail, None
        if new_ids:
            stored = self.log.append_in_transaction(events, new_ids=True)
            fresh = list({e.position: e for e in stored}.values())
        else:
            before = tail[0] if tail else self.store.last_position()
            stored = self.log.append_in_transaction(events)
            fresh = [e for e in stored if e.position > before]
        if self.separate_log:
            self.store.append_stored(fresh, tail=tail)
        if fresh and not self._derivations:
            self._derivations_after = fresh[0].position - 1
        with derived.writing_through(self._derivations):
            self.project(fresh)
        return stored

    # -- after commit ------------------------------------------------------------------------
    def unsettled(self) -> bool:
        """Whether the after-commit projectors trail the local copy of the log (this process's
        writes, known without a statement, or another's, found by one)."""
        if self.pending or not self.after_commit:
            return bool(self.pending)
        names = [p.name for p in self.after_commit]
        behind = self.conn.execute(
            "SELECT (SELECT coalesce(max(position), 0) FROM events) > "
            f"(SELECT coalesce(min(position), 0) FROM projection_checkpoints WHERE name IN ({marks(len(names))}))",
            names,
        ).get
        return bool(behind)

    def _erased_after(self, position: int) -> bool:
        """Whether a memory was erased since ``position``: the derivations kept since then may
        quote its text, and the erasure pruned the cache of it (projections/forget.py), so
        they are dropped (a cache: the next rebuild computes what it needs)."""
        return (
            self.conn.execute(
                "SELECT 1 FROM events WHERE position > ? AND type='Erased' LIMIT 1", (position,)
            ).fetchone()
            is not None
        )

    def settle_in_transaction(self) -> None:
        """Fold what the after-commit projectors have not, in the caller's write transaction on
        the read models (each from its own checkpoint)."""
        self.pending = 0
        if self._derivations and not self._erased_after(self._derivations_after):
            derived.store(self.conn, list(self._derivations.items()))
        self._derivations.clear()
        self._catch_up(self.after_commit)

    def pull(self) -> int:
        """Copy and fold what the log of record holds beyond the local copy, in the caller's
        write transaction on the copy; returns how many events came. Reading needs no lock
        on the log: its positions become visible in order."""
        return self._copy(fold=True)

    def _copy(self, *, fold: bool, progress: Progress | None = None) -> int:
        """Copy (and fold) the log beyond the local copy. Where the log's hash chain breaks, the
        copy stops before the bad event and :attr:`broken` says where: the events before it
        are still answered from, and nothing after it is trusted. ``progress(copied, total)``
        after each batch (a machine joining a long log)."""
        if not self.separate_log:
            return 0
        count, self.broken, self.pulled_tail = 0, None, None
        total = self.log.last_position() if progress else 0
        while True:
            tail = self.store.tail()
            head = tail[0] if tail else 0
            rows = list(self.log.read(after=head, until=head + PULL_BATCH, batch=PULL_BATCH))
            if progress:
                progress(head + len(rows), max(total, head + len(rows)))
            if not rows:  # the copy is the log: an append in this transaction continues this tail
                self.pulled_tail = tail
                return count
            try:
                self.store.append_stored(rows)
            except ChainBroken as exc:
                self.broken = exc  # every row before the first bad one passed the check
                rows = [row for row in rows if row.position < exc.details["position"]]
                if rows:
                    self.store.append_stored(rows)
            erased = self._clear_erased(rows)
            self.pulled_erasures += erased
            if fold:
                self.project(rows)
                if erased:  # what the read models hold of the erased rows goes: fold them again
                    touched: set[bytes] = set()
                    with derived.recording(touched):
                        self._rebuild(self.projectors, None)
                    from fact_ledger.projections import forget

                    forget.pulled(self.conn, erased, touched)
            count += len(rows)
            if self.broken is not None:
                return count

    def _clear_erased(self, rows: Sequence[StoredEvent]) -> list[str]:
        """Rows of the copy that an ``Erased`` event among ``rows`` names, cleared as the log
        cleared them (another machine erased); returns the erased memories' stream ids."""
        named: set[str] = set()  # event ids: the log may hold them at other positions than the erasing ledger
        streams: list[str] = []
        for row in rows:
            if current_type(row.type) == "Erased":
                data = row.data
                streams.append(data.memory)  # type: ignore[attr-defined]
                named.update(r.event_id for r in data.rows)  # type: ignore[attr-defined]
        if not named:
            return []
        live = [
            r[0]
            for r in self.conn.execute(
                "SELECT position FROM events WHERE salt IS NOT NULL AND event_id IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted(named)),),
            )
        ]
        cleared = [(p, ev.payload) for p in live for ev in self.log.read(after=p - 1, until=p)]
        self.store.erase_rows(cleared)
        return streams

    def project(self, events: Iterable[StoredEvent]) -> None:
        """Fold into the inline projectors; the after-commit ones follow at the next settle."""
        last, count = 0, 0
        for event in events:
            data: Event | None = None
            kind = current_type(event.type)
            for p in self.inline:
                if kind in p.handles:
                    data = data or event.data
                    p.apply(self.conn, event, data)
            last, count = event.position, count + 1
        if last:
            self._set_checkpoints(self.inline, last)
            self.pending += count

    def _set_checkpoints(self, projectors: Iterable[Projector], position: int) -> None:
        insert_rows(
            self.conn,
            "INSERT INTO projection_checkpoints(name, version, position)",
            [(p.name, p.version, position) for p in projectors],
            "ON CONFLICT(name) DO UPDATE SET version=excluded.version, position=excluded.position",
        )

    # -- rebuild -----------------------------------------------------------------------------
    def rebuild(self, names: Sequence[str] | None = None, progress: Progress | None = None) -> int:
        """Throw the named projections (default: all) away and fold the whole log again."""
        unknown = [n for n in names or () if n not in self.by_name]
        if unknown:
            raise KeyError(unknown[0])
        chosen = [self.by_name[n] for n in names] if names else self.projectors

        def work() -> int:
            self.pull()
            return self._rebuild(chosen, progress)

        return self.store.write(work)

    def _create_support_tables(self) -> None:
        for schema in _SUPPORT_TABLES.values():
            self.conn.execute(schema)

    def _rebuild(self, projectors: Sequence[Projector], progress: Progress | None) -> int:
        self._create_support_tables()
        # A rebuild rewrites every page of the projections in one transaction: with the default
        # 2 MB page cache the pager spills dirty pages to the WAL over and over. Give it room for
        # the duration (the setting is per connection; the old value comes back afterwards).
        cache_size = self.conn.execute("PRAGMA cache_size").get
        self.conn.execute(f"PRAGMA cache_size={REBUILD_CACHE_KIB}")
        try:
            return self._fold_all(projectors, progress)
        except BaseException:
            # The transaction is rolled back; a projector must not stay in its bulk mode (it
            # would keep the next inline writes in memory instead of writing them).
            for p in projectors:
                if hasattr(p, "cancel_rebuild"):
                    p.cancel_rebuild()
            raise
        finally:
            self.conn.execute(f"PRAGMA cache_size={int(cache_size)}")

    def _fold_all(self, projectors: Sequence[Projector], progress: Progress | None) -> int:
        # Dependencies run in declaration order, so keep the runner's order.
        ordered = [p for p in self.projectors if p in projectors]
        for p in ordered:
            p.drop(self.conn)
            p.create(self.conn)
            if hasattr(p, "begin_rebuild"):
                p.begin_rebuild(self.conn)
        handlers = {t: [p for p in ordered if t in p.handles] for t in frozenset().union(*(p.handles for p in ordered))}
        deferred = frozenset(t for t, ps in handlers.items() if all(t in getattr(p, "deferrable", ()) for p in ps))
        flushers = [p for p in ordered if hasattr(p, "flush")]
        total = self.store.last_position()
        count = 0
        for event in self.store.read():
            count += 1
            kind = current_type(event.type)
            todo = handlers.get(kind)
            if todo:
                if kind not in deferred:
                    for p in flushers:
                        p.flush(self.conn)
                data = event.data
                for p in todo:
                    p.apply(self.conn, event, data)
            if progress and count % 2000 == 0:
                progress(count, total)
        for p in flushers:
            p.flush(self.conn)
        for p in ordered:
            if hasattr(p, "end_rebuild"):
                p.end_rebuild(self.conn)
        self._set_checkpoints(ordered, total)
        if progress:
            progress(count, total)
        return count

    # -- inspection --------------------------------------------------------------------------
    def checkpoints(self) -> dict[str, int]:
        try:
            return {n: pos for n, pos in self.conn.execute("SELECT name, position FROM projection_checkpoints")}
        except apsw.SQLError:
            return {}

    def status(self) -> dict[str, dict[str, int]]:
        last = self.store.last_position()
        cps = self.checkpoints()
        return {p.name: {"position": cps.get(p.name, 0), "lag": last - cps.get(p.name, 0)} for p in self.projectors}

    def differs_from_fresh_fold(self) -> list[str]:
        """The projection tables whose rows differ from a fresh fold of the whole log (sorted).

        The fold runs in a write transaction that is always rolled back, with the derivation
        cache bypassed (a fresh fold must not trust a cache), so it changes nothing.
        """

        def compare() -> list[str]:
            before = self.checksums()
            with derived.bypassed():
                self._rebuild(self.projectors, None)
            after = self.checksums()
            return sorted(t for t in before if before[t] != after.get(t))

        return self.store.rolled_back(compare)

    def checksums(self, names: Sequence[str] | None = None) -> dict[str, str]:
        """sha256 of every projection table's rows in primary-key order: equal iff equal content."""
        out: dict[str, str] = {}
        for p in self.projectors:
            if names and p.name not in names:
                continue
            for table in p.tables:
                out[table] = table_checksum(self.conn, table)
        return out


def table_checksum(conn: apsw.Connection, table: str) -> str:
    digest = hashlib.sha256()
    cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    order = ", ".join(f'"{c}"' for c in cols)
    for row in conn.execute(f"SELECT {order} FROM {table} ORDER BY {order}"):
        digest.update(repr(tuple(_stable(v) for v in row)).encode())
    return digest.hexdigest()


def _stable(value: Any) -> Any:
    return round(value, 12) if isinstance(value, float) else value
