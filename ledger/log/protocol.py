"""The log of record, as every part of the program sees it: one protocol for both backends.

``ledger.log.store.EventStore`` (SQLite, also the read models' local copy) and
``ledger.log.pg_store.PostgresEventStore`` (a team's PostgreSQL log) both are an :class:`EventLog`.
The storage seam writes through it, the projection runner pulls and appends through it, and a
log copy moves rows between two of them; each used to declare its own part of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

from fact_ledger.ledger.log.chain import NewEvent, StoredEvent

T = TypeVar("T")


class EventLog(Protocol):
    """An append-only, hash-chained event log."""

    path: str  # where it is, for messages (a file, or a server's URL without its password)

    def write(self, work: Callable[[], T]) -> T: ...
    def append_in_transaction(self, events: Sequence[NewEvent], *, new_ids: bool = False) -> list[StoredEvent]: ...
    def append_stored(self, rows: Sequence[StoredEvent]) -> None: ...
    def present_ids(self, event_ids: Sequence[str]) -> set[str]: ...
    def last_position(self) -> int: ...
    def read(self, after: int = 0, until: int | None = None, batch: int = 2000) -> Iterator[StoredEvent]: ...
    def verify_chain(self, progress: Callable[[int], None] | None = None) -> int: ...
    def close(self) -> None: ...
