"""Replay of the JSONL backup: the writes that storage kept while the log refused them.

Writes reach the backup through :class:`server.app.storage.Storage` (``commit`` answers
:class:`server.app.storage.BackedUp`); this module lands them in the log afterwards, each
exactly once: a write is in the log when its first event's id (its *head*) is.

A write whose backup line records the call that made it (``request``) is a command, not events
to paste: replay runs that call again through the facade (``redo``), so it is decided against
the log as it is now — an exact duplicate is absorbed, a contradiction joins today's claim set,
a retired or superseded member is left out — while it keeps its identity, event time and actor
(:mod:`server.app.replay_pin`), and a ``WriteReplayed`` event records what was kept and what was
decided anew. A refusal now (the memory was retired meanwhile, a version moved on) lands as that
event alone. Lines without ``request`` (written by older versions) are appended as they are, in
bounded transactions, idempotent by ``event_id``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fact_ledger.ledger.errors import LedgerError, Unauthorized, Unavailable
from fact_ledger.ledger.log.chain import NewEvent, StoredEvent
from fact_ledger.ledger.log.events import named_streams
from fact_ledger.server.app.backup_log import Command
from fact_ledger.server.app.erasure import erased_among
from fact_ledger.server.app.replay_pin import REPLAY_COUNTS, ReplayPin
from fact_ledger.server.app.storage import STORAGE_ERRORS, Storage, reason_of

REPLAY_BATCH = 500
Redo = Callable[[str, list[Any], dict[str, Any]], Any]


def append_batch(
    storage: Storage, batch: list[NewEvent], also: Callable[[list[StoredEvent]], object] | None = None
) -> int:
    """Append in one transaction through the normal path; returns how many events were new.
    ``also`` runs in the same transaction on the new rows (an import clears what they erase).

    Repeated event ids inside the batch are dropped first: the store would return the same row
    twice and the runner would fold it twice.
    """
    unique = list({e.event_id: e for e in batch}.values())

    def work() -> int:
        before = storage.store.last_position()
        fresh = [e for e in storage.runner.append(unique) if e.position > before]
        if also is not None:
            also(fresh)
        return len(fresh)

    return int(storage.transaction(work))


def replay_backup(
    storage: Storage,
    dry_run: bool = True,
    authorization: str = "",
    *,
    progress: Callable[[int, int], None] | None = None,
    batch_size: int = REPLAY_BATCH,
    redo: Redo | None = None,
) -> dict[str, Any]:
    """Land the backup's writes in the log: dry run unless authorised.

    Idempotent by the writes' ids; a bad line (or a command with one) is skipped and reported;
    a write with its call recorded is decided again through ``redo``; others go in
    transactions of about ``batch_size`` events (a command is never split); the file is kept.
    """
    if not dry_run and not authorization:
        raise Unauthorized("applying the backup needs authorized: true (run a dry run first)", field="authorized")
    storage.maybe_reopen(force=True)
    if storage.shadow and not dry_run:
        raise storage.unreadable()
    if not dry_run and storage.settings.shared_log and storage.backup_log.scan():
        try:  # another machine's erasure: this backup's lines about it go first (Storage.forget_pulled_erasures)
            storage.pull()
        except STORAGE_ERRORS as exc:
            raise Unavailable(f"replay could not read the log ({reason_of(exc)})", reason=reason_of(exc)) from None
    replay = _Replay(storage, dry_run=dry_run, progress=progress, batch_size=max(1, batch_size), redo=redo)
    out = replay.run()
    storage.pending_backup()  # what is left pending, as status will say it
    return out


class _Replay:
    def __init__(
        self,
        storage: Storage,
        *,
        dry_run: bool,
        progress: Callable[[int, int], None] | None,
        batch_size: int,
        redo: Redo | None,
    ) -> None:
        self.storage, self.dry_run, self.progress, self.batch_size = storage, dry_run, progress, batch_size
        self.redo = redo
        self.readable = not storage.shadow
        self.batch: list[NewEvent] = []
        self.heads: list[str] = []  # the first event id of each write in ``batch``
        # A write whose commit the log went away during: its head and how it would count. Its
        # commit may have landed unheard; the next run finds it present (BackupState.replay_if_due).
        self.unheard: dict[str, str] = {}
        self.line = 0
        self.out: dict[str, Any] = {
            "ok": True,
            "dry_run": dry_run,
            "path": str(storage.backup_log.path),
            "lines": 0,
            "commands": 0,
            "events": 0,
            "already_present": 0 if self.readable else None,
            ("to_apply" if dry_run else "appended"): 0,
            "writes_present": 0 if self.readable else None,
            ("writes_to_replay" if dry_run else "replayed"): 0,
            "bad_total": 0,
            "bad_lines": [],
            "kept": True,
        }
        if not dry_run:
            self.out.update(as_backed_up=0, decided_anew=0, refused=0, refusals=[])

    def run(self) -> dict[str, Any]:
        log, out = self.storage.backup_log, self.out
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
            elif self._names_erased(command):
                self._flush()
                self._refuse_erased(command)
            elif command.request is not None and self.redo is not None:
                self._flush()  # the writes land in the order they were made
                self._decide_again(command)
            else:
                self.batch.extend(command.events)
                self.heads.append(command.head)
                if len(self.batch) >= self.batch_size:
                    self._flush()
            if self.progress and (len(self.batch) == 0 or last_line % 1000 == 0):
                self.progress(last_line, total)
        self._flush()
        if not self.dry_run:
            self.storage.degraded = None  # the log took the replayed events: it is writable again
        if self.progress:
            self.progress(total, total)
        return out

    def _count(self, events: list[NewEvent]) -> None:
        if not self.readable:
            self.out["to_apply"] += len(events)
            self.out["writes_to_replay"] += 1
            return
        present = events[0].event_id in self._present([events[0].event_id])
        self.out["already_present" if present else "to_apply"] += len(events)
        self.out["writes_present" if present else "writes_to_replay"] += 1

    def _present(self, event_ids: list[str]) -> set[str]:
        try:
            return self.storage.log.present_ids(event_ids)
        except STORAGE_ERRORS as exc:
            raise self._stopped(exc) from None

    def _stopped(self, exc: BaseException) -> Unavailable:
        if self.dry_run:  # it appends nothing: "after appending 0 events; run it again" told of a replay
            return Unavailable(
                f"the dry run could not read the log ({reason_of(exc)}): it compares the backup with the log; "
                "run it again once the log answers",
                reason=reason_of(exc),
            )
        out = self.out
        stopped = Unavailable(
            f"replay stopped before line {self.line} ({reason_of(exc)}) after replaying {out['replayed']} "
            f"write(s) ({out['refused']} refused) and appending {out['appended']} events; run it again: "
            "it skips what is already there",
            reason=reason_of(exc),
            appended=out["appended"],
            replayed=out["replayed"],
            refused=out["refused"],
        )
        # what this run replayed, for the notice of the run that finishes the backup (BackupState)
        stopped.partial = {  # type: ignore[attr-defined]
            **{k: out[k] for k in REPLAY_COUNTS},
            "unheard": dict(self.unheard),
        }
        return stopped

    def _names_erased(self, command: Command) -> bool:
        """Whether the write, not in the log yet, names a memory the log has erased since it was
        backed up (its stream, a memory its events refer to, a claim set member): its words
        must not come back (on a team's log, :func:`replay_backup` pulled first)."""
        if command.head in self._present([command.head]):
            return False  # landed already: counted as present where it is replayed
        names = {event.stream_id for event in command.events}
        names.update(name for event in command.events for name in named_streams(event.data))
        return erased_among(self.storage.store.conn, names)

    def _refuse_erased(self, command: Command) -> None:
        """Recorded as refused (a :class:`WriteReplayed` under its id: replayed once, never pending)."""
        op = str((command.request or {}).get("op") or type(command.events[0].data).__name__)
        reason = "refused: the memory it names was erased since the write was backed up"
        self._record_unlanded(ReplayPin(command, op), reason)
        self.out["replayed"] += 1
        self.out["appended"] += 1  # its WriteReplayed record
        self._count_refusal(command, op, reason)

    def _record_unlanded(self, pin: ReplayPin, refused: str | None) -> None:
        """A write that landed nothing: its ``WriteReplayed`` record alone (refused, or unchanged)."""
        try:
            self.storage.record_replay(pin, "refused" if refused else "unchanged", refused or "")
        except STORAGE_ERRORS as exc:
            self.unheard[pin.head.event_id] = "refused" if refused else "decided_anew"
            raise self._stopped(exc) from None

    def _count_refusal(self, command: Command, op: str, reason: str) -> None:
        out = self.out
        out["refused"] += 1
        out["refusals"] = (out["refusals"] + [{"line": command.first_line, "op": op, "error": reason}])[:20]

    def _decide_again(self, command: Command) -> None:
        """Run the recorded call again, pinned to the write's identity and time."""
        out, storage = self.out, self.storage
        if command.head in self._present([command.head]):
            out["already_present"] += len(command.events)
            out["writes_present"] += 1
            return
        assert command.request is not None and self.redo is not None
        op = str(command.request["op"])
        args = command.request.get("args") or []
        kwargs = command.request.get("kwargs") or {}
        pin = ReplayPin(command, op)
        refused: str | None = None
        storage.replaying = pin
        try:
            self.redo(op, list(args), dict(kwargs))
        except (*STORAGE_ERRORS, Unavailable) as exc:
            if pin.landed:  # its events went to the log: the commit may have landed unheard
                same = tuple(pin.decided) == tuple(type(e.data).__name__ for e in command.events)
                self.unheard[command.head] = "as_backed_up" if same else "decided_anew"
            raise self._stopped(exc) from None
        except LedgerError as exc:
            refused = f"{exc.code}: {exc.message}"
        except TypeError as exc:  # a call this version no longer takes in that form
            refused = f"invalid_input: {exc}"
        finally:
            storage.replaying = None
        if not pin.landed:
            self._record_unlanded(pin, refused)
        out["replayed"] += 1
        out["appended"] += pin.used
        if refused is not None:
            self._count_refusal(command, op, refused)
        elif not pin.landed or tuple(pin.decided) != tuple(type(e.data).__name__ for e in command.events):
            out["decided_anew"] += 1  # other events than offline, or nothing left to write
        else:
            out["as_backed_up"] += 1

    def _flush(self) -> None:
        if not self.batch:
            return
        present = self._present(self.heads)
        landed = len(self.heads) - len(present)
        try:
            fresh = append_batch(self.storage, self.batch)
        except STORAGE_ERRORS as exc:
            self.unheard.update((head, "as_backed_up") for head in self.heads if head not in present)
            raise self._stopped(exc) from None
        self.out["appended"] += fresh
        self.out["already_present"] += len(self.batch) - fresh
        self.out["replayed"] += landed
        self.out["as_backed_up"] += landed
        self.out["writes_present"] += len(self.heads) - landed
        self.batch, self.heads = [], []
