"""The application facade: one object that the MCP tools, the CLI and the console all call.

Every write follows docs/design.md's write path: ``BEGIN IMMEDIATE`` → read the state the decision
needs → pure decision in ``ledger.decide`` → append + inline projections → commit → compact
result. Results are plain dicts with the keys of docs/contract.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec

from ledger import clock
from ledger.decide import (
    Decision,
    MemoryFacts,
    RememberCommand,
    check_current,
    check_writable,
    decide_remember,
    effective_changes,
)
from ledger.duplicates import duplicate_key
from ledger.errors import NotFound
from ledger.events import AUTH_AGENT, AUTH_USER, ClaimSpec
from ledger.ids import uuid7
from ledger.store import EventStore
from projections import memories as mem
from projections.claims import ClaimsProjector, NearDuplicatesProjector
from projections.conflicts import ConflictsProjector, count_by_state
from projections.memories import MemoriesProjector
from projections.notices import NoticeReviewsProjector
from projections.runner import ProjectionRunner, Projector
from projections.search import SearchProjector
from projections.sections import SectionsProjector
from projections.timeline import TimelineProjector
from projections.workspaces import WorkspacesProjector
from server.backup import REPLAY_BATCH, replay_backup
from server.backup_log import BackupLog
from server.config import Settings
from server.governance import GovernanceMixin
from server.sections_view import SectionsRequest
from server.semantic import SemanticMixin
from server.storage import BackedUp, Storage, Written, storage_call
from server.timetravel import HISTORY_PAGE, TIMELINE_MAX, History
from server.views import Views, memory_view
from server.workspaces import Workspaces

Progress = Callable[[int, int], None]
AGENT_ASSERTED_NOTICE = ("user_confirmed kept as agent_asserted: not locked, ranked as the agent's word "
                         "until the user confirms it")


class _Unchanged(Exception):  # control flow: never leaves the facade
    """An update whose fields all equal the memory's: nothing to write."""

    def __init__(self, version: int) -> None:
        super().__init__("unchanged")
        self.version = version


def _current_fields(conn: Any, memory_id: int) -> dict[str, Any]:
    """The fields ``update`` may change, as the memory holds them now (decoded like the input)."""
    row = mem.by_id(conn, memory_id) or {}
    current = {k: row.get(k) for k in ("content", "subject", "confidence", "event_time")}
    current["tags"] = json.loads(row.get("tags") or "[]")
    current["metadata"] = json.loads(row.get("metadata") or "{}")
    return current


def default_projectors(settings: Settings | None = None) -> list[Projector]:
    """Every read model, in dependency order (memories first: others map stream ids to ids)."""
    threshold = (settings or Settings()).section_threshold
    return [MemoriesProjector(), ClaimsProjector(), NearDuplicatesProjector(), ConflictsProjector(),
            SearchProjector(), SectionsProjector(threshold), WorkspacesProjector(), TimelineProjector(),
            NoticeReviewsProjector()]


class LedgerApp(GovernanceMixin, SemanticMixin):
    """The ledger as the rest of the program sees it. One per process (or thread)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # Degraded (backup-only writes) if the database cannot be opened: server/storage.py.
        self.storage = Storage(settings, lambda: default_projectors(settings))
        self.storage.after_write.append(self._written)  # the vector worker has something to embed
        self.workspace_service = Workspaces(settings, self.storage)
        self.history_service = History(settings, self.storage, self.workspace_service)
        self.view_service = Views(settings, self.storage, self.workspace_service, self.history_service,
                                  search=self._search, standings=self._standings)

    @property
    def store(self) -> EventStore:
        return self.storage.store

    @property
    def runner(self) -> ProjectionRunner:
        return self.storage.runner

    @property
    def conn(self) -> Any:
        return self.storage.conn

    @property
    def degraded(self) -> dict[str, str] | None:
        return self.storage.degraded

    @property
    def backup_log(self) -> BackupLog:
        return self.storage.backup_log

    @storage_call
    def close(self) -> None:
        self._close_semantic()
        self.storage.close()

    # -- plumbing ----------------------------------------------------------------------------
    def _commit(self, decide: Callable[[], tuple[Decision, str, str]]) -> Written | BackedUp:
        """Decide and append in one write transaction; ``decide`` returns (decision, time, workspace).

        When storage refuses the write, the events go to the JSONL backup (:class:`BackedUp`).
        """
        return self.storage.commit(decide)

    # -- workspaces (server/workspaces.py) ---------------------------------------------------
    @storage_call
    def canonical_workspace(self, name: str) -> str:
        return self.workspace_service.canonical_workspace(name)

    @storage_call
    def own_workspace(self) -> str:
        return self.workspace_service.own_workspace()

    @storage_call
    def workspace_scope(self, name: str) -> tuple[str, ...]:
        return self.workspace_service.workspace_scope(name)

    @storage_call
    def accept_alias(self, alias: str, canonical: str, *, authorization: str = "") -> dict[str, Any]:
        return self.workspace_service.accept_alias(alias, canonical, authorization=authorization)

    @storage_call
    def reject_alias(self, alias: str, canonical: str, *, authorization: str = "") -> dict[str, Any]:
        return self.workspace_service.reject_alias(alias, canonical, authorization=authorization)

    @storage_call
    def workspaces(self) -> dict[str, Any]:
        return self.workspace_service.workspaces()

    # -- history and time travel (server/timetravel.py) -------------------------------------
    @storage_call
    def as_of(self, as_of_event_time: str | None = None, as_of_recorded: str | int | None = None) -> dict[str, Any]:
        return self.history_service.as_of(as_of_event_time, as_of_recorded)

    @storage_call
    def history(self, memory_id: int, *, limit: int = HISTORY_PAGE, cursor: str | None = None) -> dict[str, Any]:
        return self.history_service.history(memory_id, limit=limit, cursor=cursor)

    @storage_call
    def timeline(self, subject: str | None = None, memory_id: int | None = None, *,
                 as_of_recorded: str | int | None = None, limit: int = TIMELINE_MAX,
                 cursor: str | None = None) -> dict[str, Any]:
        return self.history_service.timeline(subject, memory_id, as_of_recorded=as_of_recorded, limit=limit,
                                             cursor=cursor)

    @storage_call
    def audit(self, since: str | None = None, until: str | None = None, memory_id: int | None = None,
              actor: str | None = None, type: str | None = None, limit: int = 100,
              cursor: str | None = None, *, client: str | None = None, workspace: str | None = None,
              conflict_id: int | None = None, before_position: int | None = None) -> dict[str, Any]:
        return self.history_service.audit(since, until, memory_id, actor, type, limit, cursor, client=client,
                                          workspace=workspace, conflict_id=conflict_id,
                                          before_position=before_position)

    @storage_call
    def archive(self, *, dry_run: bool = False, older_than_days: int | None = None,
                progress: Progress | None = None) -> dict[str, Any]:
        return self.history_service.archive(dry_run=dry_run, older_than_days=older_than_days, progress=progress)

    def _check_workspace(self, workspace: str, field: str = "memory_id") -> None:
        self.workspace_service.check_workspace(workspace, field)

    def _write_workspace(self, requested: str | None) -> str:
        return self.workspace_service.write_workspace(requested)

    def _find_scope(self, requested: str | None) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
        return self.workspace_service.find_scope(requested)

    def _facts(self, memory_id: int) -> MemoryFacts:
        row = mem.by_id(self.conn, memory_id)
        if row is None:
            raise NotFound(f"no memory {memory_id}", field="memory_id")
        self._check_workspace(row["workspace"])
        return MemoryFacts.from_row(row)

    # -- memory actions ----------------------------------------------------------------------
    @storage_call
    def remember(
        self,
        content: str,
        *,
        subject: str = "",
        tags: list[str] | tuple[str, ...] = (),
        source_type: str = "agent_generated",
        confidence: float | None = None,
        event_time: str | None = None,
        workspace: str | None = None,
        source_ref: str = "",
        ref_id: int | None = None,
        retracts: bool = False,
        claims: list[dict[str, str]] | None = None,
        metadata: dict[str, Any] | None = None,
        authorization: str = "",
    ) -> dict[str, Any]:
        if event_time is not None:
            event_time = self._plausible(event_time)
        cmd = RememberCommand(
            content=content, subject=subject, tags=tuple(dict.fromkeys(tags)), source_type=source_type,
            confidence=confidence, event_time=event_time or clock.now(),
            workspace=self._write_workspace(workspace),
            source_ref=source_ref, ref_id=ref_id, retracts=retracts,
            claims=tuple(ClaimSpec(**c) for c in claims or ()), metadata=metadata or {},
            authorization=authorization)
        new_stream = uuid7()
        near: list[dict[str, Any]] = []

        def decide() -> tuple[Decision, str, str]:
            target = self._facts(ref_id) if ref_id is not None else None
            duplicate = self._find_duplicate(cmd)
            if duplicate is None:  # claims, collisions and near-duplicates: server/governance.py
                return self._decide_remember(cmd, new_stream, target, near), cmd.event_time, cmd.workspace
            decision = decide_remember(cmd, new_stream=new_stream, duplicate=duplicate, target=target)
            return decision, cmd.event_time, cmd.workspace

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        head = outcome.events[0]
        if head.type == "DuplicateSighted":
            row = mem.by_stream(self.conn, head.stream_id)
            assert row is not None
            return {"ok": True, "memory_id": row["memory_id"], "version": row["version"],
                    "status": row["status"], "duplicate_of": row["memory_id"]}
        result = {"ok": True, "memory_id": head.position, "version": 1, "status": "active",
                  **self._write_report(outcome.events, head.position, near)}
        if head.position in result.get("superseded", ()):  # policy auto_settle: a later value leads
            row = mem.by_id(self.conn, head.position)
            assert row is not None
            result.update(status=row["status"], version=row["version"])
        if source_type == "user_confirmed" and authorization != AUTH_USER:
            result.update(authorization=AUTH_AGENT, notices=[AGENT_ASSERTED_NOTICE])
        return result

    def _plausible(self, event_time: str) -> str:
        """The canonical event time, refused when far ahead of now or before the floor."""
        canonical = clock.parse_time(event_time, field="event_time")
        clock.check_event_time(canonical, now=clock.now(), skew_s=self.settings.event_time_skew_s)
        return canonical

    def _find_duplicate(self, cmd: RememberCommand) -> MemoryFacts | None:
        row = mem.exact_duplicate(self.conn, duplicate_key(cmd.content, cmd.subject, cmd.workspace))
        if row is None:
            return None
        return MemoryFacts(memory_id=row["memory_id"], stream_id=row["stream_id"], version=row["version"],
                           protection=row["protection"], source_type=row["source_type"],
                           status=row["status"], workspace=row["workspace"])

    @storage_call
    def update(
        self,
        memory_id: int,
        *,
        expected_version: int | None = None,
        authorization: str = "",
        **changes: Any,
    ) -> dict[str, Any]:
        requested = {k: v for k, v in changes.items() if v is not None}
        if "event_time" in requested:
            requested["event_time"] = self._plausible(requested["event_time"])

        def decide() -> tuple[Decision, str, str]:
            facts = self._facts(memory_id)
            effective = effective_changes(_current_fields(self.conn, memory_id), requested)
            if not effective:  # nothing differs: no version, so nobody's expected_version goes stale
                check_current(facts)  # a stale expected_version is still reported as such
                check_writable(msgspec.structs.replace(facts, protection="normal"),
                               expected_version=expected_version, authorization=authorization)
                raise _Unchanged(facts.version)
            decision = self._decide_update(facts, effective, expected_version=expected_version,
                                           authorization=authorization)
            return decision, effective.get("event_time") or clock.now(), facts.workspace

        try:
            outcome = self._commit(decide)
        except _Unchanged as same:
            return {"ok": True, "memory_id": memory_id, "version": same.version, "unchanged": True}
        if isinstance(outcome, BackedUp):
            return outcome.result
        stored = outcome.events
        row = mem.by_id(self.conn, memory_id)
        assert row is not None
        return {"ok": True, "memory_id": memory_id, "version": row["version"],
                **self._write_report(stored, memory_id), **self._conflict_changes(stored)}

    @storage_call
    def find(
        self,
        query: str = "",
        *,
        limit: int = 5,
        tags_filter: list[str] | tuple[str, ...] = (),
        source_type: str | None = None,
        workspace: str | None = None,
        after_time: str | None = None,
        before_time: str | None = None,
        include_inactive: bool = False,
        as_of_event_time: str | None = None,
        as_of_recorded: str | int | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        return self.view_service.find(
            query, limit=limit, tags_filter=tags_filter, source_type=source_type, workspace=workspace,
            after_time=after_time, before_time=before_time, include_inactive=include_inactive,
            as_of_event_time=as_of_event_time, as_of_recorded=as_of_recorded, cursor=cursor)

    @storage_call
    def read(self, memory_id: int, *, as_of_event_time: str | None = None,
             as_of_recorded: str | int | None = None, sections: SectionsRequest = None) -> dict[str, Any]:
        return self.view_service.read(memory_id, as_of_event_time=as_of_event_time, as_of_recorded=as_of_recorded,
                                      sections=sections)

    def _memory_view(self, row: dict[str, Any], *, score: float | None = None) -> dict[str, Any]:
        return memory_view(self.conn, row, score=score)

    # -- maintenance -------------------------------------------------------------------------
    @storage_call
    def pending_backup(self) -> dict[str, Any] | None:
        """``{"path", "events", "bad_lines", "checked"}`` while backed-up events await replay."""
        return self.storage.pending_backup()

    @storage_call
    def backup_notice(self) -> str | None:
        """One short notice for agents: a backup awaits replay, or the database is unreachable."""
        return self.storage.backup_notice()

    @storage_call
    def replay_backup(self, dry_run: bool = True, authorization: str = "", *,
                      progress: Progress | None = None, batch_size: int = REPLAY_BATCH) -> dict[str, Any]:
        """Append the backup's events through the normal path (``server.backup``)."""
        return replay_backup(self.storage, dry_run, authorization, progress=progress, batch_size=batch_size)

    @storage_call
    def status(self) -> dict[str, Any]:
        with self.storage.snapshot():
            memories = mem.count_active(self.conn)
            return {
                "ok": True,
                "db": self.settings.db,
                "events": self.store.last_position(),
                "memories": memories,
                "open_conflicts": count_by_state(self.conn)["open"],
                "projections": self.runner.status(),
                "search_mode": self.search_mode(),
                "vectors": self.vectors_status(),
                "pending_backup": self.pending_backup(),
                "degraded": self.degraded,
            }

    @storage_call
    def rebuild(self, projection: str | None = None, progress: Progress | None = None) -> dict[str, Any]:
        from ledger.errors import InvalidInput

        if projection == "vectors":  # asynchronous: rebuilt from the embedding cache by the indexer
            result = self.reembed(progress, rebuild=True)
            return {"ok": True, "events": self.store.last_position(), "projections": ["vectors"],
                    "vectors": {k: v for k, v in result.items() if k != "ok"}}
        try:
            count = self.runner.rebuild([projection] if projection else None, progress)
        except KeyError:
            raise InvalidInput(f"no projection named {projection!r}; known: "
                               f"{', '.join(self.runner.by_name)}", field="projection") from None
        return {"ok": True, "events": count, "projections": sorted(
            [projection] if projection else self.runner.by_name)}

    @storage_call
    def verify(self, progress: Progress | None = None) -> dict[str, Any]:
        """Recompute the hash chain, then fold the log afresh (rolled back) and compare tables."""
        from ledger.errors import ChainBroken

        count = self.store.verify_chain(progress=(lambda n: progress(n, 0)) if progress else None)
        bad = self.runner.differs_from_fresh_fold()
        if bad:
            raise ChainBroken(f"projection table {bad[0]} differs from a fresh fold of the log",
                              table=bad[0])
        return {"ok": True, "events": count, "chain": "intact", "projections": "consistent"}
