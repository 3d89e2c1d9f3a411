"""What every service of the facade is given: the settings, the storage seam and the workspace rules.

:class:`Service` gives the governance and semantic services the same few helpers the facade used
to lend its mixins (the connection, a write through :meth:`server.app.storage.Storage.commit`, the
workspace checks), as plain delegation to the objects they were built with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fact_ledger.ledger.chain import StoredEvent
from fact_ledger.ledger.facts import Decision
from fact_ledger.ledger.store import EventStore
from fact_ledger.projections.conflicts import conflict_ids_of
from fact_ledger.projections.runner import ProjectionRunner
from fact_ledger.server.app.storage import BackedUp, Storage, Written
from fact_ledger.server.app.views import memory_view
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

    def _memory_view(self, row: dict[str, Any], *, score: float | None = None) -> dict[str, Any]:
        conflict_ids = conflict_ids_of(self.storage.conn, row["memory_id"])
        return memory_view(row, conflict_ids=conflict_ids, score=score)

    def pending_backup(self) -> dict[str, Any] | None:
        return self.storage.pending_backup()
