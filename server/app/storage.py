"""The storage seam: the one object that owns the log, the read models, the JSONL backup and
degraded mode, and the only one that opens transactions.

Two protocols say what it needs from each side: an :class:`~ledger.log.protocol.EventLog` (the append-only
log of record: ``ledger.log.store`` on a local file, ``ledger.log.pg_store`` on a team's PostgreSQL server)
and a :class:`ProjectionStore` (the read models folded from it: ``projections.runner``), which
live in a file of their own with a local copy of the log (:mod:`server.app.views_file`).

A write (:meth:`Storage.commit`) takes the log's write lock, then the read models' lock, pulls
whatever the log holds beyond the local copy (another process or machine wrote it), decides on
that fresh state, appends to the log and folds into the read models; the log commits first
(``synchronous=FULL`` or PostgreSQL's commit), the read models second with no fsync of their
own. So the read models are never ahead of the log, and a crash between the two commits leaves
them behind by that one write, which the next pull repairs.

A write (:meth:`Storage.commit`) returns :class:`Written` or :class:`BackedUp`. When SQLite refuses
it (locked past the busy timeout, read-only file, disk full, corrupt or unopenable file), the
command is still decided, against a read snapshot when the file can be read and against an empty
in-memory ledger when it cannot, and its events go to the backup (:mod:`server.app.backup_log`): the
caller gets ``{"ok": true, "backup_only": true, "backup": {"path", "event_ids"}}`` and no
``memory_id`` (the log assigns ids on replay); if the backup append fails as well the caller gets
``unavailable`` and nothing is claimed.

A local log whose files can be read but not written at open (a read-only folder, file or mount,
a full disk) is opened read-only (:meth:`Storage._open_read_only`): reads answer from it (the read
models' file as it is when current, else folded in memory), writes go to the backup, ``status``
names the cause, and the real open is retried. A database that cannot be opened (or read) at
all puts storage in degraded mode: ``status`` says why,
writes go to the backup, every other answer that would come from the database is ``unavailable``
(an empty shadow must never pass for an empty ledger), and the real file is retried at most once
per ``REOPEN_INTERVAL_S``. Facade methods marked :func:`storage_call` get this answer policy.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import apsw
import msgspec

from fact_ledger.ledger import clock
from fact_ledger.ledger.errors import ChainBroken, Locked, LogUnreachable, NotFound, Unavailable, VersionConflict
from fact_ledger.ledger.facts import Decision
from fact_ledger.ledger.log.chain import NewEvent, StoredEvent
from fact_ledger.ledger.log.dbfiles import MissingDatabase, NotALedger, read_models_of, why_unwritable
from fact_ledger.ledger.log.events import ClaimCollided, Event, MemoryRecorded
from fact_ledger.ledger.log.protocol import EventLog
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections.runner import SETTLE_EVERY, ProjectionRunner, Projector
from fact_ledger.server.app.backup_log import BackupLog
from fact_ledger.server.app.backup_state import BackupState
from fact_ledger.server.app.erasure import finish_unfinished
from fact_ledger.server.app.replay_pin import ReplayPin
from fact_ledger.server.app.storage_errors import OPEN_ERRORS as _OPEN_ERRORS
from fact_ledger.server.app.storage_errors import STORAGE_ERRORS, reason_of
from fact_ledger.server.app.views_file import (
    UnreachableLog,
    event_at,
    known_views,
    open_views,
    remember_views,
    same_file,
)
from fact_ledger.server.config import Settings

logger = logging.getLogger("fact_ledger.storage")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
Decide = Callable[[], "tuple[Decision, str, str]"]  # (decision, event time, workspace)

# Calls that answer without a usable database (a worker not started, an index not loaded).
DEGRADED_OK = frozenset(
    {
        "status",
        "pending_backup",
        "backup_notice",
        "replay_backup",
        "replay_due",
        "close",
        "start_vector_worker",
        "warm_search",
    }
)

# Calls that let the after-commit read models (full text, the timeline) trail the log: the hot
# writes, whose decisions never read them (a cancellation settles inside its own transaction),
# the notices an agent's reply carries and ``ledger serve``'s replay poll (a write when anything
# replays). Every other call settles them first, so a read sees every write the log holds
# (projections/runner.py).
# The notices a reply carries, asked right after its call: they may reuse what that call saw.
REPLY_NOTICES = frozenset({"backup_notice", "semantic_notice"})
SETTLE_LATER = frozenset({"remember", "update", "replay_due", "close"}) | REPLY_NOTICES

# Why a local log's open failed when its files may still be read: opened read-only instead.
READ_ONLY_REASONS = frozenset({"read_only", "cant_open", "disk_full", "io_error"})


def opens_stream(event: Event) -> bool:
    """The event is the first of its stream: a memory recorded, a claim set opened (every
    decision gives either a new id)."""
    return isinstance(event, MemoryRecorded) or (isinstance(event, ClaimCollided) and not event.joins)


class ProjectionStore(Protocol):
    """The read models folded from the log (``projections.runner.ProjectionRunner``)."""

    by_name: dict[str, Projector]

    def open(self) -> None: ...
    def pull(self) -> int: ...
    def behind(self) -> int: ...
    def append(self, events: Sequence[NewEvent]) -> list[StoredEvent]: ...
    def rebuild(
        self, names: Sequence[str] | None = None, progress: Callable[[int, int], None] | None = None
    ) -> int: ...
    def status(self) -> dict[str, dict[str, int]]: ...
    def differs_from_fresh_fold(self) -> list[str]: ...


def read_only_files(log: Any, store: Any) -> list[str]:
    """The local log and the read models' file, as a person names them, that SQLite opened
    read-only (no write permission): it does so without a word, and every write then fails."""
    files = [("the log", log)] + ([("the read models' file", store)] if store is not log else [])
    return [f"{name} ({f.path})" for name, f in files if isinstance(f, EventStore) and f.conn.readonly("main")]


class Written(msgspec.Struct, frozen=True):
    """The command's events are in the log (and folded into the read models); ``reply``: what
    the command's ``reply`` function made of them inside the same transaction, if it had one."""

    events: list[StoredEvent]
    reply: Any = None


class BackedUp(msgspec.Struct, frozen=True):
    """The database refused the write; the events are in the JSONL backup. ``result`` is the answer."""

    result: dict[str, Any]


def storage_call(fn: F) -> F:
    """Mark a public facade method: it answers through :meth:`Storage.call` (degraded mode,
    storage errors as ``unavailable``, a backed-up write as the answer of the outermost call)."""
    name = fn.__name__

    @functools.wraps(fn)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self.storage.call(name, lambda: fn(self, *args, **kwargs), request=(args, kwargs))

    return call  # type: ignore[return-value]


class Storage(BackupState):
    """The log of record, the read models (with the log's local copy), the backup and degraded
    mode, for one facade."""

    def __init__(
        self,
        settings: Settings,
        projectors: Callable[[], list[Projector]],
        join_progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Open the log and the read models, or start degraded (backup-only writes) when the
        log cannot be opened; reads go on from the read models when the log is a server that
        cannot be reached but this machine's copy can be read."""
        self.settings = settings
        self._projectors = projectors
        self._join_progress = join_progress  # a new read-model file copying and folding the log
        self._calls = threading.local()
        self.closed = False
        self.shadow = False
        # The local log's files opened only to read (a read-only folder or mount, a full disk):
        # reads answer from them, writes go to the backup, the real open is retried.
        self.read_only = False
        self.degraded: dict[str, str] | None = None
        # The path holds no ledger (missing, or something else): refuse writes, no backup either.
        self.not_a_ledger = False
        self._reopen_at = 0.0
        self.views_path = ""
        self._follower: Any = None
        self.backup_log = BackupLog(settings.backup_path)
        self.after_write: list[Callable[[], None]] = []  # called after each write the log took
        self.replaying: ReplayPin | None = None  # a backed-up write being decided again (backup_state)
        self.log: EventLog
        self.store: EventStore  # the local copy of the log, in the read models' file
        self.runner: ProjectionRunner
        try:
            self.log, self.store, self.runner = self._open_real()
            self._note_read_only_files()
            self.forget_pulled_erasures()
            self.finish_erasures()
        except LogUnreachable as exc:
            if not self._open_offline(exc):
                self._enter_shadow(exc)
        except _OPEN_ERRORS as exc:
            if not self._open_read_only(exc):
                self._enter_shadow(exc)

    @property
    def conn(self) -> Any:
        return self.store.conn

    @property
    def offline(self) -> bool:
        """Serving from the read models while the log of record cannot be reached."""
        return isinstance(self.log, UnreachableLog)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.stop_following()
        if not self.shadow:
            try:  # an erasure pulled on a path that did not clear after it (it must not outlive the process)
                self.forget_pulled_erasures()
            except STORAGE_ERRORS as exc:
                logger.warning("closing: clearing after a pulled erasure failed (%s)", exc)
        if not self.shadow and self.runner.pending:  # this process's writes reach every read model before it goes
            self.settle_quietly()
        if self.log is not self.store:
            self.log.close()
        self.store.close()

    # -- following a shared log --------------------------------------------------------------
    def start_following(self, on_pull: Callable[[int], None] | None = None) -> bool:
        """On a PostgreSQL log, pull into the read models whenever another machine writes
        (``ledger serve``); a local log needs nothing: its writers update the shared file."""
        if not self.settings.shared_log or self._follower is not None or not self.views_path:
            return False
        from fact_ledger.server.app.follower import LogFollower

        self._follower = LogFollower(
            self.settings.store,
            self.views_path,
            self._projectors,
            busy_timeout_ms=self.settings.busy_timeout_ms,
            on_pull=on_pull,
            on_erasure=self.forget_erased,
        )
        self._follower.start()
        return True

    def stop_following(self) -> None:
        follower, self._follower = self._follower, None
        if follower is not None:
            follower.stop()

    def log_location(self) -> str:
        """The log of record as a person would name it: the local path, or the server's URL
        without its password."""
        if not self.settings.shared_log:
            return self.settings.db
        from fact_ledger.ledger.log.copy import display_url

        return display_url(self.settings.store)

    def log_status(self, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """Where the log of record is, how far it goes, and how far the read models lag it
        (``state``: :meth:`health`'s answer, so that status reads the log once)."""
        kind = "postgresql" if self.settings.shared_log else "sqlite"
        copy = self.store.last_position()
        head = (state or self.health())["head"]
        return {
            "store": kind,
            "location": self.log_location(),
            "views": self.views_path or None,
            "events": head,
            "behind": None if head is None else max(0, head - copy),
            "reachable": head is not None,
        }

    def verify_log(self, progress: Callable[[int], None] | None = None) -> int:
        """Recompute the log's hash chain, and check that the read models' copy is a prefix of it
        (the copy is pulled up to the head first)."""
        count = self.log.verify_chain(progress=progress)
        if self.log is not self.store:
            # only when the copy trails: a pull takes the read models' write lock, and doctor
            # waited out the busy timeout, then called the chain broken ("check failed:
            # StoreBusy"), while another process held that lock
            if self.runner.behind():
                self.pull()
            self.store.verify_chain()
            ahead = self.views_ahead(count)
            if ahead:
                raise ChainBroken(ahead, position=count + 1)
            if event_at(self.store, count) != event_at(self.log, count):
                raise ChainBroken(
                    f"the read models' copy of the log differs from the log at position {count}; "
                    "delete the read-model file and it is built again",
                    position=count,
                )
        return count

    def differs_from_fresh_fold(self) -> list[str]:
        """The projection tables that differ from a fresh fold of the whole log. The fold runs in
        a rolled-back write transaction on the read models' file; where that file is open only
        to read (:meth:`_open_read_only`) it runs in memory instead and the tables are compared."""
        runner = self.runner
        if not self.store.conn.readonly("main"):
            return runner.differs_from_fresh_fold()
        fresh = ProjectionRunner(EventStore(":memory:"), self._projectors(), log=self.log)
        try:
            fresh.open()
            held, folded = runner.checksums(), fresh.checksums()
        finally:
            fresh.store.close()
        return sorted(t for t in held if held[t] != folded.get(t))

    def views_ahead(self, log_head: int) -> str | None:
        """Why the read models cannot be trusted when they hold more events than the log (the
        log was restored from an older copy, or another log is pointed at), else None."""
        held = self.store.last_position()
        if self.log is self.store or held <= log_head:
            return None
        return (
            f"the read models hold {held} events, the log only {log_head}: the log was restored from an "
            f"older copy or another log is pointed at; delete the read-model file ({self.views_path}) "
            "and it is built again from the log"
        )

    # -- opening -----------------------------------------------------------------------------
    def _open_log(self) -> EventLog:
        settings = self.settings
        if settings.shared_log:
            try:
                from fact_ledger.ledger.log.pg_store import PostgresEventStore
            except ImportError as exc:
                raise Unavailable(
                    f"LEDGER_STORE names a PostgreSQL log but the [postgres] extra is not installed ({exc})",
                    reason="cant_open",
                ) from None
            return PostgresEventStore(settings.store)  # a server's database exists already: never a typo'd path
        log_of = read_models_of(settings.db)
        if log_of is not None:
            raise NotALedger(settings.db, f"it holds the read models of {log_of}: pass --db {log_of}")
        return EventStore(settings.db, busy_timeout_ms=settings.busy_timeout_ms, create=settings.may_create)

    def _open_real(self) -> tuple[EventLog, EventStore, ProjectionRunner]:
        log = self._open_log()
        copy: EventStore | None = None
        try:
            log_id = getattr(log, "log_id", None)
            self.views_path = self.settings.views_path(log_id)
            if isinstance(log, EventStore) and same_file(self.views_path, self.settings.db):
                copy, separate = log, None  # the read models kept in the log's own file
            else:
                adopt = None if self.settings.shared_log else self.settings.db
                copy = open_views(self.views_path, log, busy_timeout_ms=self.settings.busy_timeout_ms, adopt_from=adopt)
                separate = log
            if log_id is not None:
                remember_views(self.settings.store, log_id)
            runner = ProjectionRunner(copy, self._projectors(), log=separate)
            runner.progress = self._join_progress
            runner.open()
            runner.progress = None
        except BaseException:
            if copy is not None and copy is not log:
                copy.close()
            log.close()
            raise
        return log, copy, runner

    def _open_offline(self, exc: LogUnreachable) -> bool:
        """The team's log is unreachable: serve reads from this machine's read models, if any."""
        path = self.settings.views or known_views(self.settings.store)
        if not path or not Path(path).is_file():
            return False
        try:
            store = EventStore(path, busy_timeout_ms=self.settings.busy_timeout_ms, create=False)
            runner = ProjectionRunner(store, self._projectors())
            runner.open()
        except _OPEN_ERRORS:
            return False
        self.views_path = path
        self.log, self.store, self.runner = UnreachableLog(self.settings.store, str(exc)), store, runner
        self._note_failure(exc)
        self._reopen_at = time.monotonic() + self.REOPEN_INTERVAL_S
        return True

    def _open_read_only(self, exc: BaseException) -> bool:
        """The local log could not be opened to write (a read-only folder, file or mount, a full
        disk): open its files only to read, so that reads answer from them while writes go to
        the backup. The read models' file is used as it is when it is current; else they are
        folded afresh in memory from the log (nothing is written to the disk)."""
        settings = self.settings
        if settings.shared_log or self.not_a_ledger or isinstance(exc, (MissingDatabase, NotALedger)):
            return False
        if reason_of(exc) not in READ_ONLY_REASONS:
            return False
        try:
            log = EventStore.read_only(settings.db, busy_timeout_ms=settings.busy_timeout_ms)
        except _OPEN_ERRORS as again:
            logger.warning("the log cannot be opened to read either (%s)", again)
            return False
        views_path = settings.views_path()
        try:
            copy, runner = self._read_only_views(log, views_path)
        except _OPEN_ERRORS as again:
            logger.warning("the read models cannot be folded from the read-only log (%s)", again)
            log.close()
            return False
        self.log, self.store, self.runner = log, copy, runner
        self.views_path = "" if copy.path == ":memory:" else views_path
        self.read_only = True
        self._note_failure(exc)
        self._reopen_at = time.monotonic() + self.REOPEN_INTERVAL_S
        logger.warning(
            "%s: reading the ledger read-only, %s", self.degraded and self.degraded["message"], self.where_writes_go()
        )
        return True

    def _read_only_views(self, log: EventStore, views_path: str) -> tuple[EventStore, ProjectionRunner]:
        """The read models over a read-only log: its own file, or the read models' file, when
        they are current (opening them writes nothing then); else folded in memory."""
        if same_file(views_path, self.settings.db):
            candidates: list[Callable[[], EventStore]] = [lambda: log]
        else:
            candidates = [lambda: EventStore.read_only(views_path, busy_timeout_ms=self.settings.busy_timeout_ms)]
        for opening in [*candidates, lambda: EventStore(":memory:")]:
            copy: EventStore | None = None
            try:
                copy = opening()
                runner = ProjectionRunner(copy, self._projectors(), log=None if copy is log else log)
                runner.open()
                return copy, runner
            except _OPEN_ERRORS:
                if copy is not None and copy is not log:
                    copy.close()
                if copy is not None and copy.path == ":memory:":
                    raise
        raise AssertionError("unreachable: the in-memory read models either open or raise")

    def _enter_shadow(self, exc: BaseException) -> None:
        self._note_failure(exc)
        if self.shadow:
            return
        opened = (getattr(self, "log", None), getattr(self, "store", None))  # one object when one file
        real = list({id(x): x for x in opened if x is not None}.values())
        self.store = EventStore(":memory:")
        self.log = self.store
        self.runner = ProjectionRunner(self.store, self._projectors())
        self.runner.open()
        self.shadow = True
        self._reopen_at = time.monotonic() + self.REOPEN_INTERVAL_S
        for old in real:
            if not isinstance(old, UnreachableLog):
                with contextlib.suppress(apsw.Error, Unavailable):
                    old.close()

    def maybe_reopen(self, *, force: bool = False) -> None:
        """In degraded mode, try the real log again (at most once per ``REOPEN_INTERVAL_S``)."""
        if not (self.shadow or self.offline or self.read_only) or (not force and time.monotonic() < self._reopen_at):
            return
        self._reopen_at = time.monotonic() + self.REOPEN_INTERVAL_S
        try:
            log, store, runner = self._open_real()
        except _OPEN_ERRORS as exc:
            self._note_failure(exc)
            return
        if read_only_files(log, store):  # still not writable: keep what is open, try again later
            for file in {id(x): x for x in (log, store) if isinstance(x, EventStore)}.values():
                file.close()
            return
        old = {id(x): x for x in (self.log, self.store) if isinstance(x, EventStore)}
        self.log, self.store, self.runner = log, store, runner
        self.shadow, self.read_only, self.degraded = False, False, None
        for file in old.values():
            file.close()
        self.forget_pulled_erasures()
        self.finish_erasures()

    def _note_read_only_files(self) -> None:
        """SQLite opens a file it may not write read-only without a word: every write then fails
        into the backup, and nothing tried the real open again once the file could be written
        (a ``ledger serve`` stayed read-only for its whole life). Such an open is read-only mode."""
        named = read_only_files(self.log, self.store)
        if named:
            self.read_only = True  # status, doctor and the console read it from ``degraded``
            self.degraded = {"reason": "read_only", "message": f"read-only: {'; '.join(named)}", "since": clock.now()}
            self._reopen_at = time.monotonic() + self.REOPEN_INTERVAL_S

    def _note_failure(self, exc: BaseException) -> None:
        self.not_a_ledger = isinstance(exc, (MissingDatabase, NotALedger))
        reason, message = reason_of(exc), _shortened(str(exc))
        if reason in READ_ONLY_REASONS and not self.settings.shared_log and not self.not_a_ledger:
            # SQLite names a read-only folder or mount "unable to open database file": name the cause
            cause = why_unwritable(self.settings.db) or why_unwritable(self.views_path or self.settings.views_path())
            if cause is not None:
                reason, message = cause[0], f"{cause[1]} ({message})"
        self.degraded = {"reason": reason, "message": message, "since": clock.now()}

    def unreadable(self, *, write: bool = False) -> Unavailable:
        """The refusal of a call that needs the database; ``write``: the call tried to store something."""
        reason = self.degraded["reason"] if self.degraded else "cant_open"
        if self.not_a_ledger:
            return self._missing(write=write)
        detail = f": {self.degraded['message']}" if self.degraded and reason == "read_only" else ""
        return Unavailable(
            f"the database cannot be read ({reason}{detail}); writes go to the JSONL backup", reason=reason
        )

    def require_log(self) -> None:
        """Refuse, as a public call would, when no real log is open (a path that holds no
        ledger, an unreadable file): for the paths that read or append the log without the
        answer policy of :meth:`call` (export, import), which must not answer from the empty
        stand-in."""
        if self.shadow:
            raise self.unreadable()

    def _missing(self, *, write: bool) -> Unavailable:
        """No ledger at an explicit path (or something else there): nothing is written anywhere,
        not even the backup. Only a write is told "nothing was stored": a read (``memory find``)
        stored nothing to begin with, and the words sent a person looking for a lost write."""
        message = self.degraded["message"] if self.degraded else f"no ledger at {self.settings.db}"
        reason = self.degraded["reason"] if self.degraded else "missing"
        return Unavailable(f"{message}; nothing was stored" if write else message, reason=reason)

    # -- the answer policy of a public call --------------------------------------------------
    def call(
        self, name: str, run: Callable[[], T], request: tuple[tuple[Any, ...], dict[str, Any]] | None = None
    ) -> T | dict[str, Any]:
        """Run one public facade call. Only the outermost call applies the policy; a write that
        went to the backup inside it becomes its answer, whatever the call went on to do."""
        calls = self._calls
        depth = getattr(calls, "depth", 0)
        if self.closed:  # closed twice: nothing left to replay, settle or read
            return run()
        if depth:
            calls.depth = depth + 1
            try:
                return run()
            finally:
                calls.depth = depth
        calls.depth, calls.backed_up, calls.request, calls.masked = 1, None, (name, request), {}
        calls.writing = False  # set by commit: the call tried to store something
        if name not in REPLY_NOTICES:
            self.head_seen = None  # the log's head a write of this call saw (BackupState.health)
        try:
            self.maybe_reopen()
            self.replay_if_due()
            if self.shadow and name == "status":
                return self.degraded_status()
            if not self.shadow and name not in SETTLE_LATER:
                self._settle_before_call()
            result = run()
            if calls.backed_up is not None:
                return calls.backed_up
            if self.shadow and name not in DEGRADED_OK:
                raise self.unreadable(write=calls.writing)
            return result
        except (NotFound, Locked, VersionConflict):
            if calls.backed_up is not None:
                return calls.backed_up
            if self.shadow:  # decided against the empty shadow: not a real answer
                raise self.unreadable(write=calls.writing) from None
            raise
        except STORAGE_ERRORS as exc:
            if isinstance(exc, Unavailable):
                raise
            # Only a write is told "nothing was stored": a read stored nothing to begin with, and
            # the words send a person looking for a lost write.
            stored = "; nothing was stored" if calls.writing else ""
            reason = reason_of(exc)
            raise Unavailable(f"the database is unavailable ({reason}){stored}", reason=reason) from None
        finally:
            calls.depth, calls.backed_up, calls.request, calls.writing = 0, None, None, False
            calls.unsettled = None

    def _settle_before_call(self) -> None:
        """Fold what the after-commit read models trail by before a call reads them; a refusal
        (a full disk, a read-only or locked file) is noted as degraded and the call answers from
        the read models as they are. A read must not fail because a fold, which writes, could
        not: ``status`` then says why (degraded, pending backup) instead of refusing, and a
        write of this call goes to the backup (:meth:`commit`)."""
        try:
            self.settle()
        except STORAGE_ERRORS as exc:
            self._note_failure(exc)
            self._calls.unsettled = exc
            logger.warning(
                "the full-text and timeline read models trail the log (%s); reads answer from them as they are", exc
            )

    # -- transactions ------------------------------------------------------------------------
    def transaction(self, work: Callable[[], T]) -> T:
        """``work`` in one write transaction of the log and the read models (no backup fallback:
        maintenance), after pulling what the log holds beyond the local copy."""
        if self.log is self.store:
            return self.store.write(work)
        opened: list[bool] = []

        def under_log_lock() -> T:
            if opened:  # the log retried the unit after BUSY: start the copy's side afresh too
                self.store.rollback_write()
                opened.clear()
            self.store.begin_write()
            opened.append(True)
            self.runner.pull()
            if self.runner.broken is not None:  # never decide on, or append to, a log that breaks
                raise self._chain_refusal(self.runner.broken)
            try:
                return work()
            finally:
                self.runner.pulled_tail = None  # valid in this transaction only

        try:
            result = self.log.write(under_log_lock)
        except BaseException:
            if opened:
                self.store.rollback_write()
            raise
        try:  # the log has committed: the read models follow, or fall behind until the next pull
            self.store.commit_write()
        except apsw.Error as exc:
            self.store.rollback_write()
            logger.warning("read models fell behind the log (%s); the next write or open catches up", exc)
        self.forget_pulled_erasures()
        return result

    def lock_free(self) -> bool:
        """Whether every local file a write locks (the log's, the read models') takes a writer
        now, without waiting: ``ledger serve`` asks once a second after a write found one locked."""
        files = {id(f): f for f in (self.log, self.store) if isinstance(f, EventStore)}.values()
        try:
            return all(f.takes_a_writer_now() for f in files)
        except STORAGE_ERRORS:
            return False

    def settle(self) -> None:
        """Fold what the after-commit read models trail by (this process's writes, or another's).
        Waits for the read models' write lock like a write. Not again in a call whose fold was
        refused already (:meth:`_settle_before_call`): its reads answer from the read models as
        they are rather than fail on a second try."""
        if getattr(self._calls, "unsettled", None) is not None:
            return
        if self.runner.unsettled():
            self.store.write(self.runner.settle_in_transaction)

    def settle_quietly(self) -> None:
        """:meth:`settle` where a refusal must not fail the caller (the write has committed, the
        process is closing): the read models trail until the next read, open or write settles."""
        try:
            self.settle()
        except STORAGE_ERRORS as exc:
            logger.warning("the full-text and timeline read models trail the log (%s); the next read folds", exc)

    def pull(self) -> int:
        """Fold what the log holds beyond the read models (another process or machine wrote it)."""
        if self.log is self.store or self.offline:
            return 0
        count = self.store.write(self.runner.pull)
        self.forget_pulled_erasures()
        return count

    def forget_pulled_erasures(self) -> None:
        """A pull brought erasures another machine made, and the copy's rows and read models
        were cleared with them: this machine's backup lines that name those memories go (a
        replay would bring their words back), and the read models' file is rewritten without
        their old bytes (free pages, WAL frames), as on the machine that erased."""
        streams, self.runner.pulled_erasures = self.runner.pulled_erasures, []
        if streams:
            self.forget_erased(streams, self.store)

    def finish_erasures(self) -> None:
        """An erasure this file marks unfinished (its process died after the log cleared the
        rows), finished: until then the read models may still show the erased words. A failure
        leaves the marks for the next open (``doctor`` reports them)."""
        try:
            finish_unfinished(self)
        except STORAGE_ERRORS as exc:
            logger.warning("an unfinished erasure could not be finished now (%s); the next open tries again", exc)

    def forget_erased(self, streams: list[str], copy: EventStore) -> None:
        """What this machine keeps outside the log of the memories ``streams``, gone: the backup
        lines that name them and the old bytes of ``copy``'s file (the caller's connection)."""
        try:
            self.forget_backed_up(streams)
        except OSError as exc:  # a full disk: the lines stay until the next erasure or replay, which refuses them
            logger.warning("the JSONL backup keeps lines about an erased memory for now (%s)", exc)
        try:
            copy.wipe()
        except apsw.Error as exc:  # busy: the bytes go with the next erasure's or the file's rewrite
            logger.warning("the read models' file keeps old pages of an erased memory for now (%s)", exc)

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """A read transaction on the read models: several queries see one state."""
        return self.store.snapshot()

    def new_events(self, decision: Decision, event_time: str, workspace: str) -> list[NewEvent]:
        # A remembered memory and an opened claim set start their (fresh) streams: version 1
        # spares the store a lookup, and the UNIQUE(stream_id, stream_version) constraint still
        # guards it.
        return [
            NewEvent(
                data=event,
                stream_id=stream,
                event_time=event_time,
                actor=self.settings.actor,
                workspace=workspace,
                stream_version=1 if opens_stream(event) else None,
            )
            for stream, event in decision
        ]

    def commit(self, decide: Decide, reply: Callable[[list[StoredEvent]], Any] | None = None) -> Written | BackedUp:
        """Decide and append in one write transaction; if storage refuses, back the events up.

        ``reply`` makes the answer from the stored events inside the same transaction, after they
        are folded: it reads the state the write produced and nothing a later writer changed,
        under the lock the decision held (never a second look after commit).

        While a backed-up write is replayed (``self.replaying``) the decision's events take the
        write's identity, event time and actor, a :class:`WriteReplayed` event records what was
        kept and decided anew, and a refusal by storage stops the replay: nothing is backed up twice.
        """
        built: list[NewEvent] = []
        pin = self.replaying
        self._calls.writing = True  # a refusal of this call says that nothing was stored
        if pin is not None and self.shadow:
            raise self.unreadable(write=True)
        if not self.shadow:
            start = pin.mark() if pin is not None else None

            def work() -> Written:
                decision, event_time, workspace = decide()
                built[:] = self.new_events(decision, event_time, workspace)
                if pin is not None:
                    built[:] = pin.stamp(built, start)
                # a replay's events keep their recorded ids (the log may hold them); a decision's are new
                stored = [e for e in self.runner.append(built, new_ids=pin is None) if e.type != "WriteReplayed"]
                return Written(stored, reply(stored) if reply is not None else None)

            try:
                refused = getattr(self._calls, "unsettled", None)
                if refused is not None:  # this call's fold was refused: its write cannot land either
                    raise refused
                written = self.transaction(work)
                self.degraded = None
                if written.events and pin is None:  # a decision's new events end at the log's head
                    self.head_seen = written.events[-1].position
                for hook in self.after_write:
                    hook()
                if self.runner.pending >= SETTLE_EVERY:  # a long run of writes: fold them in one go
                    self.settle_quietly()
                return written
            except STORAGE_ERRORS as exc:
                self._note_failure(exc)
                if pin is not None:
                    raise
        # Events already built keep their ids: if the failed commit did land after all, replay
        # of the same event ids is a no-op instead of a second copy.
        outcome = self._to_backup(built or self._decide_offline(decide))
        if getattr(self._calls, "depth", 0) and self._calls.backed_up is None:
            self._calls.backed_up = outcome.result
        return outcome

    def _decide_offline(self, decide: Decide) -> list[NewEvent]:
        if not self.shadow:
            try:
                with self.store.snapshot():  # WAL: a locked or read-only file still reads
                    return self.new_events(*decide())
            except STORAGE_ERRORS as exc:
                self._enter_shadow(exc)
        return self.new_events(*decide())

    def _to_backup(self, events: list[NewEvent]) -> BackedUp:
        reason = self.degraded["reason"] if self.degraded else "io_error"
        if self.not_a_ledger:  # a mistyped path must not grow a backup file either
            raise self._missing(write=True)
        try:
            ids = self.backup_log.append(events, self._request())
        except OSError as exc:
            raise Unavailable(
                "the database is unavailable and the backup could not be written; nothing was stored",
                reason=reason,
                backup_error=str(exc)[:200],
            ) from None
        then = " (by itself once the log takes writes)" if self.auto_replay else ": memory_repair replay_backup"
        return BackedUp(
            {
                "ok": True,
                "backup_only": True,
                "reason": reason,
                "backup": {"path": str(self.backup_log.path), "event_ids": ids},
                "notices": [f"database unavailable ({reason}): kept in the JSONL backup, no id until it replays{then}"],
            }
        )

    # -- a broken hash chain ------------------------------------------------------------------
    def chain_warning(self) -> str | None:
        """Why answers stop short of the log: its hash chain breaks at a position the read
        models could not copy past (reads answer from the events before it, writes are refused)."""
        broken = getattr(self.runner, "broken", None)
        if broken is None:
            return None
        position = broken.details.get("position")
        return (
            f"the log's hash chain is broken at position {position} ({broken.message}); answers show only "
            f"the {max(0, int(position or 1) - 1)} events before it and writes are refused: run ledger doctor"
        )

    @staticmethod
    def _chain_refusal(broken: ChainBroken) -> ChainBroken:
        return ChainBroken(
            f"the log's hash chain is broken ({broken.message}); nothing was written: run ledger doctor",
            position=broken.details.get("position"),
        )

    def degraded_status(self) -> dict[str, Any]:
        state = self.health()
        return {
            "ok": True,
            "db": self.log_location(),
            "events": None,
            "memories": None,
            "open_conflicts": None,
            "projections": {},
            "search_mode": None,
            "degraded": state["degraded"],
            "pending_backup": state["pending"],
        }


def _shortened(message: str, limit: int = 300) -> str:
    """An error's message in one line of at most ``limit`` characters, cut between words (a
    driver's message cut mid-word read "… accepting connec")."""
    text = " ".join(message.split())
    if len(text) <= limit:
        return text
    return text[: text.rfind(" ", 0, limit - 1)].rstrip(" ,;:") + " …"
