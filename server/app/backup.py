"""Replay of the JSONL backup: the events that storage kept while the database refused them.

Writes reach the backup through :class:`server.app.storage.Storage` (``commit`` answers
:class:`server.app.storage.BackedUp`); this module appends them to the log afterwards, through the
same path as any write, in bounded transactions, idempotent by ``event_id``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fact_ledger.ledger.chain import NewEvent
from fact_ledger.ledger.errors import Unauthorized, Unavailable
from fact_ledger.server.app.storage import STORAGE_ERRORS, Storage, reason_of

REPLAY_BATCH = 500


def append_batch(storage: Storage, batch: list[NewEvent]) -> int:
    """Append in one transaction through the normal path; returns how many events were new.

    Repeated event ids inside the batch are dropped first: the store would return the same row
    twice and the runner would fold it twice.
    """
    unique = list({e.event_id: e for e in batch}.values())

    def work() -> int:
        before = storage.store.last_position()
        return sum(1 for e in storage.runner.append(unique) if e.position > before)

    return int(storage.transaction(work))


def replay_backup(
    storage: Storage,
    dry_run: bool = True,
    authorization: str = "",
    *,
    progress: Callable[[int, int], None] | None = None,
    batch_size: int = REPLAY_BATCH,
) -> dict[str, Any]:
    """Append the backup's events through the normal path: dry run unless authorised.

    Idempotent by ``event_id``; a bad line (or a command with one) is skipped and reported;
    events go in transactions of about ``batch_size`` (a command is never split); the file
    is kept.
    """
    if not dry_run and not authorization:
        raise Unauthorized("applying the backup needs authorized: true (run a dry run first)", field="authorized")
    storage.maybe_reopen(force=True)
    if storage.shadow and not dry_run:
        raise storage.unreadable()
    return _Replay(storage, dry_run=dry_run, progress=progress, batch_size=max(1, batch_size)).run()


class _Replay:
    def __init__(
        self, storage: Storage, *, dry_run: bool, progress: Callable[[int, int], None] | None, batch_size: int
    ) -> None:
        self.storage, self.dry_run, self.progress, self.batch_size = storage, dry_run, progress, batch_size
        self.readable = not storage.shadow
        self.batch: list[NewEvent] = []
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
            "bad_total": 0,
            "bad_lines": [],
            "kept": True,
        }

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
            else:
                self.batch.extend(command.events)
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
            return
        present = self.storage.store.present_ids([e.event_id for e in events])
        self.out["already_present"] += len(present)
        self.out["to_apply"] += len(events) - len(present)

    def _flush(self) -> None:
        if not self.batch:
            return
        try:
            fresh = append_batch(self.storage, self.batch)
        except STORAGE_ERRORS as exc:
            raise Unavailable(
                f"replay stopped before line {self.line} ({reason_of(exc)}) after appending "
                f"{self.out['appended']} events; run it again: it skips what is already there",
                reason=reason_of(exc),
                appended=self.out["appended"],
            ) from None
        self.out["appended"] += fresh
        self.out["already_present"] += len(self.batch) - fresh
        self.batch = []
