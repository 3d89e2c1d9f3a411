"""Writes that survive an unreachable database: the JSONL backup path and its replay.

When SQLite refuses a write (locked past the busy timeout, read-only file, disk full, corrupt or
unopenable file), the command is still decided, against a read snapshot when the file can be
read and against an empty in-memory ledger when it cannot, and its events are appended to the
backup (:mod:`server.backup_log`). The caller gets ``{"ok": true, "backup_only": true, "backup":
{"path", "event_ids"}}`` and no ``memory_id`` (the log assigns ids on replay); if the backup
append fails as well the caller gets ``unavailable`` and nothing is claimed.

Every public facade method gets this for free through :func:`backup_aware`, applied to
:class:`server.app.LedgerApp`: ``_commit`` raises :class:`BackupOnly` carrying the result and
the outermost public call turns it into its return value, whichever write method it was.

A database that cannot be opened (or read) puts the facade in a degraded mode: ``status`` says
why, writes go to the backup, every other answer that would come from the database is
``unavailable`` (an empty shadow must never pass for an empty ledger), and the real file is
retried at most once per ``REOPEN_INTERVAL_S``.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import apsw

from ledger import clock
from ledger.dbfiles import MissingDatabase, ReadOnlySidecar
from ledger.errors import Locked, NotFound, Unauthorized, Unavailable, VersionConflict
from ledger.store import EventStore, NewEvent, StoreBusy, StoredEvent
from projections.runner import ProjectionRunner, Projector
from server.backup_log import BackupLog

if TYPE_CHECKING:
    from ledger.decide import Decision
    from server.config import Settings

STORAGE_ERRORS: tuple[type[Exception], ...] = (
    StoreBusy, apsw.BusyError, apsw.LockedError, apsw.ReadOnlyError, apsw.FullError, apsw.CorruptError,
    apsw.NotADBError, apsw.CantOpenError, apsw.IOError,
)
_OPEN_ERRORS: tuple[type[Exception], ...] = (*STORAGE_ERRORS, OSError)
_REASONS: tuple[tuple[type[Exception], str], ...] = (
    (StoreBusy, "locked"), (apsw.BusyError, "locked"), (apsw.LockedError, "locked"),
    (apsw.ReadOnlyError, "read_only"), (apsw.FullError, "disk_full"), (apsw.CorruptError, "corrupt"),
    (apsw.NotADBError, "corrupt"), (apsw.CantOpenError, "cant_open"), (apsw.IOError, "io_error"),
    (MissingDatabase, "missing"), (ReadOnlySidecar, "read_only"), (OSError, "cant_open"),
)
DEGRADED_OK = frozenset({"status", "pending_backup", "backup_notice", "replay_backup", "close"})
REPLAY_BATCH = 500
Decide = Callable[[], "tuple[Decision, str, str]"]
F = TypeVar("F", bound=Callable[..., Any])


def reason_of(exc: BaseException) -> str:
    return next((reason for cls, reason in _REASONS if isinstance(exc, cls)), "io_error")


class BackupOnly(Exception):  # not an error: the outcome of a write that went to the backup
    """The command's events are in the backup; the outermost facade call returns ``result``."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("written to the backup only")
        self.result = result


def backup_aware(cls: type) -> type:
    """Wrap every public method of ``cls`` (mixins included) with :func:`_public`."""
    for name in dir(cls):
        attr = inspect.getattr_static(cls, name)
        if not name.startswith("_") and inspect.isfunction(attr) and not hasattr(attr, "__wrapped__"):
            setattr(cls, name, _public(name, attr))
    return cls


def _public(name: str, fn: F) -> F:
    @functools.wraps(fn)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls = self._calls
        outer = getattr(calls, "depth", 0) == 0
        calls.depth = getattr(calls, "depth", 0) + 1
        try:
            if not outer:
                return fn(self, *args, **kwargs)
            self._maybe_reopen()
            if self._shadow and name == "status":
                return self._degraded_status()
            result = fn(self, *args, **kwargs)
            if self._shadow and name not in DEGRADED_OK:
                raise self._unreadable()
            return result
        except BackupOnly as exc:
            if not outer:
                raise
            return exc.result
        except (NotFound, Locked, VersionConflict):
            if outer and self._shadow:  # decided against the empty shadow: not a real answer
                raise self._unreadable() from None
            raise
        except STORAGE_ERRORS as exc:
            if not outer or isinstance(exc, Unavailable):
                raise
            raise Unavailable(f"the database is unavailable ({reason_of(exc)}); nothing was stored",
                              reason=reason_of(exc)) from None
        finally:
            calls.depth -= 1

    return call  # type: ignore[return-value]


def append_batch(app: Any, batch: list[NewEvent]) -> int:
    """Append in one transaction through the normal path; returns how many events were new.

    Repeated event ids inside the batch are dropped first: the store would return the same row
    twice and the runner would fold it twice.
    """
    unique = list({e.event_id: e for e in batch}.values())

    def work() -> int:
        before = app.store.last_position()
        return sum(1 for e in app.runner.append(unique) if e.position > before)

    return int(app.store.write(work))


class BackupMixin:
    """Storage opening, the write-or-backup path, pending-backup notices and replay."""

    REOPEN_INTERVAL_S = 1.0
    if TYPE_CHECKING:
        settings: Settings
        store: EventStore
        runner: ProjectionRunner

        def _new_events(self, decision: Decision, event_time: str, workspace: str) -> list[NewEvent]: ...

    # -- opening -----------------------------------------------------------------------------
    def _open_storage(self, projectors: Callable[[], list[Projector]]) -> None:
        """Open the database, or start degraded (backup-only writes) when it cannot be opened."""
        self._projectors = projectors
        self._calls = threading.local()
        self._shadow = False
        self.degraded: dict[str, str] | None = None
        self._reopen_at = 0.0
        self.backup_log = BackupLog(self.settings.backup_path)
        try:
            self.store, self.runner = self._open_real()
        except _OPEN_ERRORS as exc:
            self._enter_shadow(exc)

    def _open_real(self) -> tuple[EventStore, ProjectionRunner]:
        store = EventStore(self.settings.db, busy_timeout_ms=self.settings.busy_timeout_ms,
                           create=self.settings.may_create)
        try:
            runner = ProjectionRunner(store, self._projectors())
            runner.open()
        except BaseException:
            store.close()
            raise
        return store, runner

    def _enter_shadow(self, exc: BaseException) -> None:
        self._note_failure(exc)
        if self._shadow:
            return
        real = getattr(self, "store", None)
        self.store = EventStore(":memory:")
        self.runner = ProjectionRunner(self.store, self._projectors())
        self.runner.open()
        self._shadow = True
        self._reopen_at = time.monotonic() + self.REOPEN_INTERVAL_S
        if real is not None:
            with contextlib.suppress(apsw.Error):
                real.close()

    def _maybe_reopen(self, *, force: bool = False) -> None:
        if not self._shadow or (not force and time.monotonic() < self._reopen_at):
            return
        self._reopen_at = time.monotonic() + self.REOPEN_INTERVAL_S
        try:
            store, runner = self._open_real()
        except _OPEN_ERRORS as exc:
            self._note_failure(exc)
            return
        shadow, self.store, self.runner = self.store, store, runner
        self._shadow, self.degraded = False, None
        shadow.close()

    def _note_failure(self, exc: BaseException) -> None:
        self.degraded = {"reason": reason_of(exc), "message": str(exc)[:200], "since": clock.now()}

    def _unreadable(self) -> Unavailable:
        reason = self.degraded["reason"] if self.degraded else "cant_open"
        if reason == "missing":
            return self._missing()
        detail = f": {self.degraded['message']}" if self.degraded and reason == "read_only" else ""
        return Unavailable(f"the database cannot be read ({reason}{detail}); writes go to the JSONL backup",
                           reason=reason)

    def _missing(self) -> Unavailable:
        """No ledger at an explicit path: nothing is written anywhere, not even the backup."""
        message = self.degraded["message"] if self.degraded else f"no ledger at {self.settings.db}"
        return Unavailable(f"{message}; nothing was stored", reason="missing")

    # -- the write path ----------------------------------------------------------------------
    def _write_or_backup(self, decide: Decide) -> list[StoredEvent]:
        """Decide and append in one write transaction; if storage refuses, back the events up."""
        built: list[NewEvent] = []
        if not self._shadow:
            def work() -> list[StoredEvent]:
                decision, event_time, workspace = decide()
                built[:] = self._new_events(decision, event_time, workspace)
                return self.runner.append(built)

            try:
                stored = self.store.write(work)
                self.degraded = None
                return stored
            except STORAGE_ERRORS as exc:
                self._note_failure(exc)
        # Events already built keep their ids: if the failed commit did land after all, replay
        # of the same event ids is a no-op instead of a second copy.
        self._to_backup(built or self._decide_offline(decide))

    def _decide_offline(self, decide: Decide) -> list[NewEvent]:
        if not self._shadow:
            try:
                with self.store.snapshot():  # WAL: a locked or read-only file still reads
                    return self._new_events(*decide())
            except STORAGE_ERRORS as exc:
                self._enter_shadow(exc)
        return self._new_events(*decide())

    def _to_backup(self, events: list[NewEvent]) -> NoReturn:
        reason = self.degraded["reason"] if self.degraded else "io_error"
        if reason == "missing":  # a mistyped path must not grow a backup file either
            raise self._missing()
        try:
            ids = self.backup_log.append(events)
        except OSError as exc:
            raise Unavailable("the database is unavailable and the backup could not be written; "
                              "nothing was stored", reason=reason, backup_error=str(exc)[:200]) from None
        raise BackupOnly({"ok": True, "backup_only": True, "reason": reason,
                          "backup": {"path": str(self.backup_log.path), "event_ids": ids},
                          "notices": [f"database unavailable ({reason}): kept in the JSONL backup, "
                                      "no id until memory_repair replay_backup"]})

    # -- pending backup ----------------------------------------------------------------------
    def _present_ids(self, event_ids: list[str]) -> set[str]:
        return self.store.present_ids(event_ids)

    def pending_backup(self) -> dict[str, Any] | None:
        """``{"path", "events", "bad_lines", "checked"}`` while backed-up events await replay."""
        if self._shadow:
            return self.backup_log.pending(None, 0)
        try:
            return self.backup_log.pending(self._present_ids, self.store.last_position())
        except STORAGE_ERRORS:
            return self.backup_log.pending(None, 0)

    def backup_notice(self) -> str | None:
        """One short notice for agents: a backup awaits replay, or the database is unreachable."""
        pending = self.pending_backup()
        if pending is not None:
            return (f"{pending['events']} backed-up events await replay: "
                    "memory_repair replay_backup (dry run first)")
        if self.degraded is not None:
            return f"database unavailable ({self.degraded['reason']}): writes go to the JSONL backup"
        return None

    def _degraded_status(self) -> dict[str, Any]:
        return {"ok": True, "db": self.settings.db, "events": None, "memories": None,
                "open_conflicts": None, "projections": {}, "search_mode": None,
                "degraded": self.degraded, "pending_backup": self.pending_backup()}

    # -- replay ------------------------------------------------------------------------------
    def replay_backup(self, dry_run: bool = True, authorization: str = "", *,
                      progress: Callable[[int, int], None] | None = None,
                      batch_size: int = REPLAY_BATCH) -> dict[str, Any]:
        """Append the backup's events through the normal path: dry run unless authorised.

        Idempotent by ``event_id``; a bad line (or a command with one) is skipped and reported;
        events go in transactions of about ``batch_size`` (a command is never split); the file
        is kept.
        """
        if not dry_run and not authorization:
            raise Unauthorized("applying the backup needs authorized: true (run a dry run first)",
                               field="authorized")
        self._maybe_reopen(force=True)
        if self._shadow and not dry_run:
            raise self._unreadable()
        return _Replay(self, dry_run=dry_run, progress=progress, batch_size=max(1, batch_size)).run()


class _Replay:
    def __init__(self, app: BackupMixin, *, dry_run: bool, progress: Callable[[int, int], None] | None,
                 batch_size: int) -> None:
        self.app, self.dry_run, self.progress, self.batch_size = app, dry_run, progress, batch_size
        self.readable = not app._shadow
        self.batch: list[NewEvent] = []
        self.line = 0
        self.out: dict[str, Any] = {
            "ok": True, "dry_run": dry_run, "path": str(app.backup_log.path), "lines": 0, "commands": 0,
            "events": 0, "already_present": 0 if self.readable else None,
            ("to_apply" if dry_run else "appended"): 0, "bad_total": 0, "bad_lines": [], "kept": True,
        }

    def run(self) -> dict[str, Any]:
        log, out = self.app.backup_log, self.out
        out["lines"] = total = log.count_lines()
        for _end, last_line, command in log.commands():
            self.line = last_line
            if command.errors:
                out["bad_total"] += len(command.errors)
                out["bad_lines"] = (out["bad_lines"] + command.errors)[:20]
                continue
            out["commands"] += 1
            out["events"] += len(command.events)
            if self.dry_run:
                self._count(command.events)
            else:
                self.batch.extend(command.events)
                if len(self.batch) >= self.batch_size:
                    self._flush()
            if self.progress and (len(self.batch) == 0 or last_line % 1000 == 0):
                self.progress(last_line, total)
        self._flush()
        if not self.dry_run:
            self.app.degraded = None  # the log took the replayed events: it is writable again
        if self.progress:
            self.progress(total, total)
        return out

    def _count(self, events: list[NewEvent]) -> None:
        if not self.readable:
            self.out["to_apply"] += len(events)
            return
        present = self.app._present_ids([e.event_id for e in events])
        self.out["already_present"] += len(present)
        self.out["to_apply"] += len(events) - len(present)

    def _flush(self) -> None:
        if not self.batch:
            return
        try:
            fresh = append_batch(self.app, self.batch)
        except STORAGE_ERRORS as exc:
            raise Unavailable(
                f"replay stopped before line {self.line} ({reason_of(exc)}) after appending "
                f"{self.out['appended']} events; run it again: it skips what is already there",
                reason=reason_of(exc), appended=self.out["appended"]) from None
        self.out["appended"] += fresh
        self.out["already_present"] += len(self.batch) - fresh
        self.batch = []
