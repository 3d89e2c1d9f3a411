"""What a backed-up write keeps when replay decides it again (:mod:`server.app.backup`).

A write that went to the JSONL backup was decided against this machine's read models while the
log could not be reached. Replay runs the same call again against the log as it is when it
lands (duplicates absorbed, claim sets joined, retired or superseded members respected); while
it runs, :class:`ReplayPin` stamps the new decision's events with what the write keeps:

- its identity: the first event takes the backed-up first event's id (the *head*; the log holds
  it exactly when the write has landed, so a second replay is a no-op), a new memory keeps its
  stream id, and every later event whose type matches the backed-up event at the same place
  keeps that event's id (others get ids derived from the head);
- its event time and its actor.

A :class:`WriteReplayed` event in the same transaction records both decisions' event types and
whether they differ; a write refused now, or with nothing left to write, lands as that event
alone under the head's id.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import MemoryRecorded, WriteReplayed, type_name
from fact_ledger.server.app.backup_log import Command

REPLAY_COUNTS = ("replayed", "as_backed_up", "decided_anew", "refused")  # what the replay notice counts
NOTE_SLOT = 1_000_000  # the derived id of the WriteReplayed event of a write that landed


def derived_id(head: str, slot: int) -> str:
    """A stable event id for the ``slot``-th event of a replayed write (not the head)."""
    return str(uuid.uuid5(uuid.NAMESPACE_OID, f"{head}/{slot}"))


class ReplayPin:
    """One backed-up write being decided again: the events it keeps ids and times from."""

    def __init__(self, command: Command, op: str) -> None:
        self.command, self.op = command, op
        self.originals = command.events
        self.head = command.events[0]
        self.used = 0
        self.decided: list[str] = []
        self.noted = False
        self.fresh_stream: str | None = self.head.stream_id if isinstance(self.head.data, MemoryRecorded) else None

    @property
    def landed(self) -> bool:
        return self.used > 0

    def mark(self) -> tuple[int, int, bool]:
        """Where a commit starts (a retried transaction stamps its events again from here)."""
        return self.used, len(self.decided), self.noted

    def stamp(self, events: list[NewEvent], start: tuple[int, int, bool] | None) -> list[NewEvent]:
        if start is not None:
            self.used, kept, self.noted = start
            del self.decided[kept:]
        out = []
        for new in events:
            slot = self.used
            self.used += 1
            original = self.originals[slot] if slot < len(self.originals) else None
            if slot == 0:
                event_id = self.head.event_id
            elif original is not None and type_name(original.data) == type_name(new.data):
                event_id = original.event_id
            else:
                event_id = derived_id(self.head.event_id, slot)
            event_time = original.event_time if original is not None else self.head.event_time
            actor = self.head.actor or new.actor
            out.append(msgspec.structs.replace(new, event_id=event_id, event_time=event_time, actor=actor))
            self.decided.append(type_name(new.data))
        if out and not self.noted:
            self.noted = True
            out.append(self.note(None, "", derived_id(self.head.event_id, NOTE_SLOT)))
        return out

    def note(self, outcome: str | None, reason: str, event_id: str) -> NewEvent:
        """The :class:`WriteReplayed` event: ``outcome=None`` compares the two decisions."""
        backed_up = tuple(type_name(e.data) for e in self.originals)
        decided = tuple(self.decided)
        if outcome is None:
            outcome = "as_backed_up" if decided == backed_up else "decided_anew"
        command = self.command.command_id or self.head.event_id
        return NewEvent(
            data=WriteReplayed(
                command=command,
                head=self.head.event_id,
                op=self.op,
                outcome=outcome,
                backed_up=backed_up,
                decided=decided,
                backed_up_at=self.head.recorded_at or "",
                reason=reason[:300],
            ),
            stream_id=f"replay:{command}",
            event_time=self.head.event_time,
            actor=self.head.actor,
            workspace=self.head.workspace,
            event_id=event_id,
        )


def replay_summary(out: dict[str, Any]) -> str:
    """The one notice an agent gets after ``ledger serve`` replayed its backup by itself."""
    return (
        f"the log is reachable again: {out['replayed']} backed-up write(s) replayed "
        f"({out['as_backed_up']} as backed up, {out['decided_anew']} decided anew, "
        f"{out['refused']} refused); each is in memory_review audit as WriteReplayed"
    )
