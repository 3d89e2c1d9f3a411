"""The JSONL backup's side of the storage seam: one state for reachability, degraded mode and
the pending backup, and the replay ``ledger serve`` runs by itself (a mixin of
:class:`server.app.storage.Storage`).

``status``, doctor and the notices all read :meth:`BackupState.health`, so they cannot disagree.
A write replayed from the backup (:mod:`server.app.backup`) is decided again while
``replaying`` pins its identity (:mod:`server.app.replay_pin`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec

from fact_ledger.ledger.ids import uuid7
from fact_ledger.server.app import credentials
from fact_ledger.server.app.backup_log import BackupLog
from fact_ledger.server.app.replay_pin import REPLAY_COUNTS, ReplayPin, replay_summary
from fact_ledger.server.app.storage_errors import STORAGE_ERRORS, reason_of

logger = logging.getLogger("fact_ledger.storage")


class BackupState:
    """Reachability, the pending backup and replay, over the storage's log and backup."""

    REOPEN_INTERVAL_S = 1.0
    shadow: bool
    degraded: dict[str, str] | None
    backup_log: BackupLog
    log: Any
    store: Any
    not_a_ledger: bool
    runner: Any
    _calls: threading.local
    # Replay of backed-up writes (server/app/backup.py): ``redo`` re-runs a recorded call on the
    # facade, ``replayable`` names the calls it runs (others' events are pasted), ``redo_all``
    # applies this machine's backup; ``auto_replay`` (``ledger serve``) runs it as soon as the log
    # takes writes again, and ``replay_notice`` tells the next reply about it.
    redo: Callable[[str, list[Any], dict[str, Any]], Any] | None = None
    replayable: frozenset[str] = frozenset()
    redo_all: Callable[[], dict[str, Any]] | None = None
    auto_replay = False
    replay_notice: str | None = None
    replaying: ReplayPin | None = None
    _replay_at = 0.0
    # What replays the log cut short (it went away again) replayed, told with the run that
    # finishes the backup: one notice counts every write replayed since the log came back.
    _replay_cut: dict[str, Any] | None = None
    # The log's head as a write of the current call left it (the notices of its reply reuse it).
    head_seen: int | None = None

    @property
    def offline(self) -> bool:
        raise NotImplementedError

    def _note_failure(self, exc: BaseException) -> None:
        raise NotImplementedError

    def chain_warning(self) -> str | None:
        raise NotImplementedError

    def transaction(self, work: Callable[[], Any]) -> Any:
        raise NotImplementedError

    def lock_free(self) -> bool:
        raise NotImplementedError

    def new_stream_id(self) -> str:
        """The stream of a memory a write is about to record: a replayed write keeps its own."""
        pin = self.replaying
        if pin is not None and pin.fresh_stream is not None:
            stream, pin.fresh_stream = pin.fresh_stream, None
            return stream
        return uuid7()

    def record_replay(self, pin: ReplayPin, outcome: str, reason: str = "") -> None:
        """A replayed write that wrote nothing (refused now, or nothing left to change) lands as
        its :class:`WriteReplayed` event alone, under the write's own id: replayed once."""
        note = pin.note(outcome, reason, pin.head.event_id)
        self.transaction(lambda: self.runner.append([note]))

    def masked_texts(self, swaps: dict[str, str]) -> None:
        """The texts the current call's write masked (as given → as stored): its backed-up
        request holds them as stored (:meth:`_request`)."""
        self._calls.masked = {**getattr(self._calls, "masked", {}), **swaps}

    def _request(self) -> dict[str, Any] | None:
        """The outermost call that made this write, for replay to decide it again; None when it
        cannot be written down (an argument is not JSON, or a credential would reach the backup).

        A write that masked credentials (``on_secret: "mask"``) is recorded with its texts as
        stored, so replay decides it again like any other (it used to go in as backed up, past
        the decisions replay makes: an erased or retired target, a claim set to join)."""
        name, request = getattr(self._calls, "request", None) or (None, None)
        if name not in self.replayable or request is None:
            return None
        args, kwargs = request
        if kwargs.get("on_secret") == "mask":
            args, kwargs = credentials.swapped([list(args), kwargs], getattr(self._calls, "masked", {}))
            if credentials.scan({"request": [args, kwargs]}):  # kept as given (an allowed workspace)
                return None
        try:
            recorded = msgspec.json.decode(msgspec.json.encode({"op": name, "args": list(args), "kwargs": kwargs}))
        except (TypeError, msgspec.EncodeError):
            return None
        if name == "update":  # the log position its decision read up to: a replay tells another
            # writer's later change of the memory from this machine's own (writes.py ``_not_overtaken``)
            with contextlib.suppress(*STORAGE_ERRORS):
                recorded["seen"] = self.store.last_position()
        return dict(recorded)

    # -- one state: reachability, degraded mode and the pending backup -------------------------
    def health(self) -> dict[str, Any]:
        """``{"head", "reachable", "degraded", "pending"}`` from one look at the log.

        ``status``, doctor and the notices all read this, so they cannot disagree: a log that
        answers is reachable and no longer ``log_unreachable``; one that does not is; pending
        counts the backed-up writes whose first event id the log does not hold (all of them,
        ``checked: false``, while it cannot be asked).
        """
        head: int | None = None
        if not self.shadow:
            try:  # a write of the call this answers has just seen the head (Storage.call)
                head = self.head_seen if self.head_seen is not None else self.log.last_position()
            except STORAGE_ERRORS as exc:
                if self.degraded is None or self.degraded.get("reason") != reason_of(exc):
                    self._note_failure(exc)
        unreachable = self.degraded is not None and self.degraded.get("reason") == "log_unreachable"
        if head is not None and unreachable and not self.offline:
            self.degraded = None
        pending = None
        if head is not None:
            try:
                pending = self.backup_log.pending(self.log.present_ids, head)
            except STORAGE_ERRORS as exc:
                self._note_failure(exc)
                head = None
        if head is None:
            pending = self._pending_by_copy()
        return {"head": head, "reachable": head is not None, "degraded": self.degraded, "pending": pending}

    def _pending_by_copy(self) -> dict[str, Any] | None:
        """The backed-up writes pending while the log cannot be asked: those this machine's copy
        of the log does not hold (a write replayed before this outage is in it: not pending again)."""
        if self.shadow or self.store is self.log:
            return self.backup_log.pending(None, 0)
        try:
            pending = self.backup_log.pending(self.store.present_ids, self.store.last_position())
        except STORAGE_ERRORS:
            return self.backup_log.pending(None, 0)
        return None if pending is None else {**pending, "checked": False}  # the log itself was not asked

    def pending_backup(self) -> dict[str, Any] | None:
        """``{"path", "writes", "events", "bad_lines", "checked"}`` while backed-up writes await replay."""
        return self.health()["pending"]

    def forget_backed_up(self, streams: list[str] | set[str]) -> int:
        """This machine's backed-up writes that name an erased memory, dropped with its words
        (``BackupLog.forget``); the next reply says how many, once. They went without a word:
        an acknowledged write was gone, and nothing told the agent that made it."""
        pending = len(self.backup_log.pending_commands())
        if not self.backup_log.forget(streams):
            return 0
        dropped = pending - len(self.backup_log.pending_commands())
        if dropped > 0:
            self._tell(
                f"{dropped} backed-up write(s) named a memory erased since and were dropped with its words: "
                "nothing of them was stored"
            )
        return dropped

    def _tell(self, said: str, *, first: bool = False) -> None:
        """Add ``said`` to what the next reply says once (``replay_notice``)."""
        told = [said, self.replay_notice] if first else [self.replay_notice, said]
        self.replay_notice = "; ".join(t for t in told if t)

    def where_writes_go(self) -> str:
        """Where a write goes while the log takes none, in words: the JSONL backup, or nowhere
        when the backup cannot be written either (beside a log in a read-only folder, or with the
        log locked or out of reach and the backup's folder read-only, it said "writes go to the
        JSONL backup" while every write was refused, nothing stored)."""
        return self.backup_log.where_writes_go()

    def backup_notice(self) -> str | None:
        """One short notice for agents: the log's chain is broken, backed-up writes were just
        replayed (once), a backup awaits replay, or the database is unreachable."""
        chain = self.chain_warning()
        if chain is not None:
            return chain
        replayed, self.replay_notice = self.replay_notice, None
        if replayed is not None:
            return replayed
        state = self.health()
        pending = state["pending"]
        if pending is not None:
            then = (
                "they replay by themselves when the log is back"
                if self.auto_replay
                else "memory_repair replay_backup (dry run first)"
            )
            return f"{pending['writes']} write(s) in the JSONL backup await replay: {then}"
        if state["degraded"] is not None:
            if self.not_a_ledger:  # no backup either: a mistyped path must not grow one
                return f"no ledger here ({state['degraded']['reason']}): writes are refused until `ledger init`"
            reason = state["degraded"]["reason"]
            if self.backup_log.why_unwritable():  # short: an agent's notice is cut at 160 characters
                return (
                    f"database unavailable ({reason}): writes are refused, nothing is stored: the JSONL backup "
                    "cannot be written either (ledger doctor names it)"
                )
            return f"database unavailable ({reason}): writes go to the JSONL backup"
        return None

    def replay_if_due(self) -> None:
        """``ledger serve``: once the log takes writes again, replay this machine's own backup
        (at most one try per ``REOPEN_INTERVAL_S``; a stat of the file when nothing is pending)."""
        if not self.auto_replay or self.redo_all is None or self.replaying is not None:
            return
        if self.shadow or self.offline or time.monotonic() < self._replay_at:
            return
        reason = self.degraded.get("reason") if self.degraded is not None else None
        if reason == "locked" and self.lock_free():
            self.degraded = None  # the other writer let go: writes are taken again, and status says so
        elif reason is not None and reason != "log_unreachable":
            return  # a local file still locked, read-only or full: its next accepted write clears this
        if not self.backup_log.scan():
            if self._replay_cut is not None:  # another run (by hand, another process) finished it
                self._tell_replayed(None)
            return
        self._replay_at = time.monotonic() + self.REOPEN_INTERVAL_S
        if self.health()["head"] is None:  # still unreachable: the next try waits its turn
            return
        from fact_ledger.ledger.errors import LedgerError

        try:
            self._count_unheard()
            out = self.redo_all()
        except STORAGE_ERRORS as exc:  # the log went away again before the replay began
            self._note_failure(exc)
            return
        except LedgerError as exc:
            self._cut_short(getattr(exc, "partial", None))
            logger.warning("replay of the backup did not finish (%s); it goes on when the log answers", exc)
            return
        self._tell_replayed(out)

    def _cut_short(self, partial: dict[str, Any] | None) -> None:
        """Keep what a replay the log cut short replayed, for the notice of the run that finishes."""
        if not partial:
            return
        kept = self._replay_cut or {k: 0 for k in REPLAY_COUNTS} | {"unheard": {}}
        for key in REPLAY_COUNTS:
            kept[key] += partial.get(key, 0)
        kept["unheard"] = {**kept["unheard"], **partial.get("unheard", {})}
        self._replay_cut = kept

    def _count_unheard(self) -> None:
        """The writes whose commit the log went away during: those it holds landed then (the next
        run finds them present and does not count them), so they count with what that run replayed."""
        cut = self._replay_cut
        if cut is None or not cut["unheard"]:
            return
        landed = self.log.present_ids(list(cut["unheard"]))
        for head in landed:
            cut["replayed"] += 1
            cut[cut["unheard"][head]] += 1
        cut["unheard"] = {}  # the others are not in the log: the next run replays and counts them

    def _tell_replayed(self, out: dict[str, Any] | None) -> None:
        """One notice for the replay that finished: its writes and those of the runs cut short."""
        total = {k: (out or {}).get(k, 0) for k in REPLAY_COUNTS}
        if self._replay_cut is not None:
            with contextlib.suppress(*STORAGE_ERRORS):
                self._count_unheard()
            for key in REPLAY_COUNTS:
                total[key] += self._replay_cut[key]
            self._replay_cut = None
        if total["replayed"]:  # before what the replay's own pull dropped (writes about an erased memory)
            self._tell(replay_summary(total), first=True)
