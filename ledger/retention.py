"""Which memories are archived, and the decision that archives them.

Retention moves a memory out of the hot read model once it has been retired or superseded and
nothing has changed it for the retention period; an active memory is never archived, however
old. The events stay, so time travel still sees it. The read model proposes candidates
(``projections.memories.archivable``); :func:`decide_archive` re-checks each against the rule
inside the write transaction, so a memory that changed between the count and the write is left.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import NamedTuple

from fact_ledger.ledger import clock
from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.facts import Decision
from fact_ledger.ledger.log.events import MemoryArchived

ARCHIVABLE_STATUSES = ("retired", "superseded")


class ArchiveCandidate(NamedTuple):
    memory_id: int
    stream_id: str
    workspace: str
    status: str
    updated_at: str


MAX_RETENTION_DAYS = 36_500  # a century: a longer period is a typo, and past ~2.9M days a date overflows


def archive_cutoff(now: str, retention_days: int) -> str:
    """The time before which an inactive memory's last change makes it archivable."""
    if not 0 <= retention_days <= MAX_RETENTION_DAYS:
        raise InvalidInput(f"older_than_days must be between 0 and {MAX_RETENTION_DAYS:,}", field="older_than_days")
    return clock.format_time(clock.to_datetime(now) - timedelta(days=retention_days))


def is_archivable(status: str, updated_at: str, cutoff: str) -> bool:
    """Retired or superseded, and unchanged since before ``cutoff`` (canonical times compare as text)."""
    return status in ARCHIVABLE_STATUSES and updated_at < cutoff


def decide_archive(candidates: Iterable[ArchiveCandidate], cutoff: str) -> Decision:
    """One ``MemoryArchived`` per candidate that the rule still archives, in the given order."""
    return [
        (c.stream_id, MemoryArchived(memory=c.stream_id))
        for c in candidates
        if is_archivable(c.status, c.updated_at, cutoff)
    ]
