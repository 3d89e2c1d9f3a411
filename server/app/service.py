"""What every service of the facade is given: the settings, the storage seam and the workspace rules.

:class:`Service` gives every service the same few helpers (the connection, a write through
:meth:`server.app.storage.Storage.commit`, the workspace checks, the policy, and the loaders of a
memory's and a claim set's facts with their isolation checks), as plain delegation to the objects
it was built with. Services are siblings over it: one that needs another's answers is given it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fact_ledger.ledger.errors import InvalidInput, NotFound
from fact_ledger.ledger.facts import ConflictFacts, Decision, MemoryFacts, Policy
from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections import conversations as conv
from fact_ledger.projections import memories as mem
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.conflicts.queries import ConflictRow, conflict_facts, conflict_ids_of
from fact_ledger.projections.memory_row import CurrentMemory, MemoryRow
from fact_ledger.projections.runner import ProjectionRunner
from fact_ledger.projections.write_state import conflicts_of
from fact_ledger.server.app.memory_view import memory_view
from fact_ledger.server.app.storage import BackedUp, Storage, Written
from fact_ledger.server.app.workspaces import Workspaces
from fact_ledger.server.config import Settings


class Service:
    def __init__(self, storage: Storage, workspaces: Workspaces) -> None:
        self.storage = storage
        self.workspaces = workspaces

    @property
    def settings(self) -> Settings:
        """The storage's settings: the MCP server swaps them per call (the caller's identity)."""
        return self.storage.settings

    @property
    def conn(self) -> Any:
        return self.storage.conn

    @property
    def store(self) -> EventStore:
        return self.storage.store

    @property
    def runner(self) -> ProjectionRunner:
        return self.storage.runner

    def _commit(
        self, decide: Callable[[], tuple[Decision, str, str]], reply: Callable[[list[StoredEvent]], Any] | None = None
    ) -> Written | BackedUp:
        return self.storage.commit(decide, reply)

    def _check_workspace(self, workspace: str, field: str = "memory_id") -> None:
        self.workspaces.check_workspace(workspace, field)

    def workspace_scope(self, name: str) -> tuple[str, ...]:
        return self.workspaces.workspace_scope(name)

    def _find_scope(self, requested: str | None) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
        return self.workspaces.find_scope(requested)

    def _memory_view(self, row: MemoryRow, *, score: float | None = None) -> dict[str, Any]:
        conflict_ids = conflict_ids_of(self.storage.conn, row.memory_id)
        return memory_view(row, conflict_ids=conflict_ids, score=score)

    def pending_backup(self) -> dict[str, Any] | None:
        return self.storage.pending_backup()

    # -- loaders shared by the governing services (inside a transaction or a read) -------------
    @property
    def _policy(self) -> Policy:
        p = self.settings.policy
        return Policy(
            locked_requires_user_channel=p.locked_requires_user_channel,
            review_agent_conflicts=p.review_agent_conflicts,
            auto_settle=p.auto_settle,
            settle_changes=p.settle_changes,
        )

    def _row(self, memory_id: int, field: str = "memory_id") -> CurrentMemory:
        """The memory's current row; refused, named by ``field``, when it does not exist or is
        another workspace's."""
        row = mem.by_id(self.conn, memory_id)
        if row is None:
            note = conv.working_by_id(self.conn, memory_id)
            if note is not None:  # it exists: say what it is, and what can be done
                advice = {
                    conv.WORKING: "promote it first",
                    conv.PROMOTED: f"it was promoted: act on #{mem.memory_id_of(self.conn, note.promoted_to)}",
                }.get(note.state, f"it is {note.state}")
                raise InvalidInput(f"#{memory_id} is a working memory: this is a long-term act ({advice})", field=field)
            raise NotFound(f"no memory {memory_id}", field=field)
        self._check_workspace(row.workspace, field=field)
        return row

    def _memory(self, memory_id: int, field: str = "memory_id") -> MemoryFacts:
        return MemoryFacts.from_row(self._row(memory_id, field))

    def _conflicts_of(self, memory_id: int) -> list[ConflictFacts]:
        return conflicts_of(self.conn, memory_id)

    def _conflict_row(self, conflict_id: int) -> ConflictRow:
        """The claim set ``conflict_id`` names (an old pairwise id names the set it folded into)."""
        cid = conflicts_model.set_of(self.conn, conflict_id)
        row = conflicts_model.by_id(self.conn, cid) if cid is not None else None
        if row is None:
            raise NotFound(f"no conflict {conflict_id}", field="conflict_id")
        self._check_workspace(row.workspace, field="conflict_id")
        return row

    def _conflict(self, conflict_id: int) -> ConflictFacts:
        return conflict_facts(self.conn, self._conflict_row(conflict_id))
