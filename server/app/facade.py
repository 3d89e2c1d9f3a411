"""The application facade: one object that the MCP tools, the CLI and the console all call.

Every write follows docs/design.md's write path: ``BEGIN IMMEDIATE`` → read the state the decision
needs → pure decision in ``ledger.decide`` → append + inline projections → commit → compact
result. Results are plain dicts with the keys of docs/contract.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections import conversations as conv
from fact_ledger.projections import memories as mem
from fact_ledger.projections import workspaces as ws
from fact_ledger.projections.changes import ChangesProjector
from fact_ledger.projections.claims import ClaimsProjector, NearDuplicatesProjector
from fact_ledger.projections.conflicts.projector import ConflictsProjector
from fact_ledger.projections.conflicts.queries import count_by_state
from fact_ledger.projections.conversations import ConversationsProjector
from fact_ledger.projections.entity_aliases import EntityAliasesProjector
from fact_ledger.projections.health_trend import HealthTrendProjector
from fact_ledger.projections.memories import MemoriesProjector
from fact_ledger.projections.notices import NoticeReviewsProjector
from fact_ledger.projections.runner import ProjectionRunner, Projector
from fact_ledger.projections.search.index import SearchProjector
from fact_ledger.projections.sections import SectionsProjector
from fact_ledger.projections.timeline.projector import TimelineProjector
from fact_ledger.projections.workspaces import WorkspacesProjector
from fact_ledger.server.app import credentials
from fact_ledger.server.app.backup import REPLAY_BATCH, replay_backup
from fact_ledger.server.app.backup_log import BackupLog
from fact_ledger.server.app.collisions import Collisions
from fact_ledger.server.app.conversations import Conversations
from fact_ledger.server.app.governance import Governance
from fact_ledger.server.app.governance_views import GovernanceViews
from fact_ledger.server.app.hindsight import Hindsight
from fact_ledger.server.app.sections_view import SectionsRequest
from fact_ledger.server.app.semantic import Semantic
from fact_ledger.server.app.service_method import ServiceMethod
from fact_ledger.server.app.storage import Storage, storage_call
from fact_ledger.server.app.timetravel import History
from fact_ledger.server.app.views import Views
from fact_ledger.server.app.workspaces import Workspaces
from fact_ledger.server.app.writes import Writes
from fact_ledger.server.config import Settings
from fact_ledger.server.write_lock import busy, replay_then

Progress = Callable[[int, int], None]
# The writes a backup line may ask replay to run again (each decides against the log it lands in).
REPLAYABLE = frozenset(
    {
        "remember",
        "update",
        "confirm",
        "unlock",
        "retire",
        "supersede",
        "resolve_conflict",
        "judge",
        "arbitrate",
        "accept_alias",
        "reject_alias",
        "review_notice",
        "reinforce",  # signals sent offline promote when they land together
        "promote",
    }
)


def default_projectors(settings: Settings | None = None) -> list[Projector]:
    """Every read model, in dependency order (memories first: others map stream ids to ids)."""
    threshold = (settings or Settings()).section_threshold
    return [
        MemoriesProjector(),
        ConversationsProjector(),
        EntityAliasesProjector(),  # before claims: it keys claims through the aliases
        ClaimsProjector(),
        NearDuplicatesProjector(),
        ConflictsProjector(),
        SearchProjector(),
        SectionsProjector(threshold),
        WorkspacesProjector(),
        TimelineProjector(),
        NoticeReviewsProjector(),
        ChangesProjector(),
        HealthTrendProjector(),
    ]


class LedgerApp:
    """The ledger as the rest of the program sees it: a thin facade over small services, each
    given the storage seam. One per process (or thread).

    Public methods keep their names and signatures (the MCP routes, the CLI and the console call
    them); each one marked ``@storage_call`` answers through :meth:`Storage.call` (degraded mode,
    ``unavailable``, a backed-up write); the governance and semantic services mark their own.
    An operation a service answers alone is not written again here: its name is the service's
    method (:class:`ServiceMethod`), declared once where it is built. The methods left combine
    services (a working memory or a long-term one, pending backed-up writes, find's latency).
    """

    def __init__(self, settings: Settings, *, join_progress: Progress | None = None) -> None:
        # Degraded (backup-only writes) if the database cannot be opened: server/app/storage.py.
        # ``join_progress(done, total)``: a new read-model file copying, then folding, the log.
        self.storage = Storage(settings, lambda: default_projectors(settings), join_progress)
        self.workspace_service = Workspaces(self.storage)
        self.governance_views = GovernanceViews(self.storage, self.workspace_service)
        self.collisions = Collisions(self.storage, self.workspace_service)
        self.governance = Governance(self.storage, self.workspace_service, self.governance_views)
        self.hindsight = Hindsight(self.storage, self.workspace_service, self.governance_views)
        self.semantic = Semantic(self.storage, self.workspace_service)
        self.writes = Writes(self.storage, self.workspace_service, self.collisions)
        self.conversations = Conversations(self.storage, self.workspace_service, self.collisions, self.writes)
        self.history_service = History(self.storage, self.workspace_service)
        self.view_service = Views(
            self.storage,
            self.workspace_service,
            self.history_service,
            search=self.semantic.search_hits,
            standings=self.governance_views.standings,
            conversations=self.conversations,
        )
        self.storage.after_write.append(self.semantic.poke_worker)  # the vector worker has something to embed
        self.storage.redo = self._redo  # replay decides a backed-up write again through this facade
        self.storage.replayable = REPLAYABLE
        self.storage.redo_all = lambda: replay_backup(
            self.storage, dry_run=False, authorization=AUTH_USER, redo=self._redo
        )  # what ledger serve runs by itself once the log is back (this machine's user's writes)

    def _redo(self, op: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Run a backed-up write's recorded call again (replay, server/app/backup.py)."""
        method = getattr(self, op, None)
        if op.startswith("_") or op not in REPLAYABLE or method is None:
            raise InvalidInput(f"{op!r} is not a write replay can run", field="request")
        return method(*args, **kwargs)

    @property
    def settings(self) -> Settings:
        return self.storage.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        """Every service reads the storage's settings, so a new identity reaches them all."""
        self.storage.settings = settings

    @property
    def store(self) -> EventStore:
        return self.storage.store

    @property
    def runner(self) -> ProjectionRunner:
        """The projection runner, with this process's writes folded (see :attr:`conn`)."""
        self._settled()
        return self.storage.runner

    @property
    def conn(self) -> Any:
        """The read models' connection, with this process's writes folded into every one of them
        (full text and the timeline follow a write at the next read: projections/runner.py)."""
        self._settled()
        return self.storage.conn

    def _settled(self) -> None:
        if self.unsettled_writes():
            self.storage.settle()

    def unsettled_writes(self) -> bool:
        """This process wrote what full text and the timeline have not folded yet (no statement)."""
        return not self.storage.shadow and self.storage.runner.pending > 0

    def settle(self) -> None:
        """Fold this process's writes into full text and the timeline now (``ledger serve`` does it
        between calls); a refusal waits for the next read."""
        if self.unsettled_writes():
            self.storage.settle_quietly()

    @property
    def degraded(self) -> dict[str, str] | None:
        return self.storage.degraded

    @property
    def backup_log(self) -> BackupLog:
        return self.storage.backup_log

    @storage_call
    def close(self) -> None:
        self.conversations.close()
        self.semantic.close()
        self.storage.close()

    # -- writes (server/app/writes.py) -----------------------------------------------------------
    @storage_call
    def remember(
        self,
        content: str,
        *,
        tier: str | None = None,
        session_id: str | None = None,
        turn: int | None = None,
        sticky: bool = False,
        **fields: Any,
    ) -> dict[str, Any]:
        """``remember``: long-term by default (``Writes.remember``), or a working note
        (``Conversations.note``); ``fields``: the rest of its edge model, passed through."""
        if turn is not None and not session_id:  # it was stored on the event and never shown again
            raise InvalidInput("turn needs session_id (the conversation the turn belongs to)", field="turn")
        credentials.refuse_in_names(session_id=session_id, workspace=fields.get("workspace"))
        if (tier or self.settings.default_tier) == "working":
            if not session_id:
                raise InvalidInput(
                    "a working memory needs session_id (the conversation it belongs to)", field="session_id"
                )
            return self.conversations.note(content, session_id=session_id, turn=turn, sticky=sticky, **fields)
        if sticky:
            raise InvalidInput('sticky applies to the working tier (tier: "working")', field="sticky")
        answer = self.writes.remember(content, session_id=session_id, turn=turn, **fields)
        if (tier or session_id) and "memory_id" in answer:  # a caller who speaks of tiers is told which
            answer["tier"] = "long"
        return answer

    @storage_call
    def update(
        self,
        memory_id: int,
        *,
        expected_version: int | None = None,
        authorization: str = "",
        on_secret: str = "refuse",
        session_id: str | None = None,
        turn: int | None = None,
        **changes: Any,
    ) -> dict[str, Any]:
        credentials.refuse_in_names(session_id=session_id)
        if self.conversations.is_working(memory_id):
            return self.conversations.update(
                memory_id,
                turn=turn,
                changes=changes,
                on_secret=on_secret,
                expected_version=expected_version,
                session_id=session_id,
            )
        return self.writes.update(
            memory_id,
            expected_version=expected_version,
            authorization=authorization,
            on_secret=on_secret,
            session_id=session_id,
            turn=turn,
            **changes,
        )

    # -- conversations and the working tier (server/app/conversations.py) ------------------------
    reinforce = ServiceMethod("conversations", Conversations.reinforce, storage_call=True)
    promote = ServiceMethod("conversations", Conversations.promote, storage_call=True)
    is_working = ServiceMethod("conversations", Conversations.is_working, storage_call=True)
    working = ServiceMethod("conversations", Conversations.working, storage_call=True)

    @storage_call
    def sweep(self, dry_run: bool = False) -> dict[str, Any]:
        return self.conversations.sweep(dry_run=dry_run)

    # -- workspaces (server/app/workspaces.py) ---------------------------------------------------
    canonical_workspace = ServiceMethod("workspace_service", Workspaces.canonical_workspace, storage_call=True)
    own_workspace = ServiceMethod("workspace_service", Workspaces.own_workspace, storage_call=True)
    workspace_scope = ServiceMethod("workspace_service", Workspaces.workspace_scope, storage_call=True)
    accept_alias = ServiceMethod("workspace_service", Workspaces.accept_alias, storage_call=True)
    reject_alias = ServiceMethod("workspace_service", Workspaces.reject_alias, storage_call=True)
    workspaces = ServiceMethod("workspace_service", Workspaces.workspaces, storage_call=True)
    # -- history and time travel (server/app/timetravel.py) -------------------------------------
    as_of = ServiceMethod("history_service", History.as_of, storage_call=True)

    history = ServiceMethod("history_service", History.history, storage_call=True)
    timeline = ServiceMethod("history_service", History.timeline, storage_call=True)
    audit = ServiceMethod("history_service", History.audit, storage_call=True)
    archive = ServiceMethod("history_service", History.archive, storage_call=True)

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
        session_id: str | None = None,
        turn: int | None = None,  # accepted like on every memory action; a find records nothing
        session_only: bool = False,
        include_cold: bool = False,
    ) -> dict[str, Any]:
        if session_only and not session_id:
            raise InvalidInput("session_only needs session_id", field="session_only")
        started = time.perf_counter()
        answer = self.view_service.find(
            query,
            limit=limit,
            tags_filter=tags_filter,
            source_type=source_type,
            workspace=workspace,
            after_time=after_time,
            before_time=before_time,
            include_inactive=include_inactive,
            as_of_event_time=as_of_event_time,
            as_of_recorded=as_of_recorded,
            cursor=cursor,
            session_id=session_id,
            session_only=session_only,
            include_cold=include_cold,
        )
        self.hindsight.find_ms.append((time.perf_counter() - started) * 1000)  # the report's find latency
        if cursor is None and as_of_event_time is None and as_of_recorded is None and not session_only:
            answer = self._with_pending_finds(answer, query, workspace)
        if workspace is not None and cursor is None and not answer.get("results"):
            answer = self._with_empty_workspace(answer, workspace)
        return answer

    def _with_empty_workspace(self, answer: dict[str, Any], workspace: str) -> dict[str, Any]:
        """Nothing found in a workspace that never held a memory: said so, with the name it most
        likely meant, so that a mistyped workspace does not read as "no match"."""
        empty = self.workspace_service.empty_workspace(workspace)
        if empty is None:
            return answer
        notice = ws.empty_notice(empty["workspace"], empty["nearest"])
        return {**answer, "workspace_empty": empty, "notices": [*answer.get("notices", ()), notice]}

    def _with_pending_finds(self, answer: dict[str, Any], query: str, workspace: str | None) -> dict[str, Any]:
        """This machine's backed-up writes the log does not hold yet, first, marked ``pending``
        (server/app/pending_reads.py); they do not count against ``limit``."""
        from fact_ledger.server.app.pending_reads import pending_finds

        scope, _ = self.workspace_service.find_scope(workspace)
        pending = pending_finds(self.storage, query, scope)
        if not pending:
            return answer
        return {**answer, "results": [*pending, *answer.get("results", [])], "pending_results": len(pending)}

    @storage_call
    def read(
        self,
        memory_id: int,
        *,
        as_of_event_time: str | None = None,
        as_of_recorded: str | int | None = None,
        sections: SectionsRequest = None,
        session_id: str | None = None,  # a read records nothing; another conversation's working note is not found
        turn: int | None = None,
    ) -> dict[str, Any]:
        if as_of_event_time is None and as_of_recorded is None and mem.by_id(self.conn, memory_id) is None:
            working = self.conversations.read(memory_id, session_id)
            if working is not None:
                note = conv.working_by_id(self.conn, memory_id)
                return self._with_pending_changes(working, note.stream_id if note is not None else None)
        answer = self.view_service.read(
            memory_id, as_of_event_time=as_of_event_time, as_of_recorded=as_of_recorded, sections=sections
        )
        if as_of_event_time is None and as_of_recorded is None:
            memory = answer["memory"]
            memory.update(self.conversations.long_term_fields(memory_id, mem.stream_of(self.conn, memory_id) or ""))
            self.conversations.used([memory_id])
            answer = self._with_pending_changes(answer, mem.stream_of(self.conn, memory_id))
        return answer

    def _with_pending_changes(self, answer: dict[str, Any], stream_id: str | None) -> dict[str, Any]:
        """``pending_changes``: this machine's backed-up changes to the memory (long-term, or a
        working note: its revisions), not in the log yet."""
        from fact_ledger.server.app.pending_reads import pending_changes

        changes = pending_changes(self.storage, stream_id) if stream_id is not None else []
        return {**answer, "pending_changes": changes} if changes else answer

    # -- governance (server/app/governance.py) ----------------------------------------------
    arbitrate = ServiceMethod("governance", Governance.arbitrate)
    confirm = ServiceMethod("governance", Governance.confirm)
    judge = ServiceMethod("governance", Governance.judge)
    resolve_conflict = ServiceMethod("governance", Governance.resolve_conflict)
    retire = ServiceMethod("governance", Governance.retire)
    supersede = ServiceMethod("governance", Governance.supersede)
    unlock = ServiceMethod("governance", Governance.unlock)

    # -- erasure (server/app/erasure.py) -------------------------------------------------------
    @storage_call
    def erase(
        self,
        memory_id: int | None = None,
        workspace: str | None = None,
        reason: str = "",
        authorization: str = "",
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        from fact_ledger.server.app import erasure

        return erasure.erase(self, memory_id, workspace, reason, authorization, progress)

    @storage_call
    def erasable(self, memory_id: int | None = None, workspace: str | None = None) -> list[int]:
        """The memories ``erase`` would erase, refused as it would refuse: checked before a user
        is asked to confirm an erasure that cannot happen."""
        from fact_ledger.server.app import erasure

        return [target[0] for target in erasure.erasable(self, memory_id, workspace)]

    @storage_call
    def erasable_in(self, workspace: str) -> list[tuple[int, str, bool]]:
        """:meth:`erasable` of a workspace, with where each memory is recorded (a name of the
        workspace, or another workspace a promotion ties it from): the user is told before they
        confirm it."""
        from fact_ledger.server.app import erasure

        return erasure.erasable_by_name(self, workspace)

    @storage_call
    def verify_receipt(self, receipt: Any, progress: Progress | None = None) -> dict[str, Any]:
        from fact_ledger.server.app import erasure

        return erasure.verify_receipt(self.storage, receipt, progress)

    @storage_call
    def seal(self, progress: Progress | None = None) -> dict[str, Any]:
        from fact_ledger.server.app import erasure

        return erasure.seal_log(self.storage, progress)

    @storage_call
    def compare(self, left_id: int, right_id: int) -> dict[str, Any]:
        """The verdict, diff and closeness (governance), then each side's state path and
        reference chain (history); the first part checks both ids and their workspaces."""
        answer = self.governance_views.compare(left_id, right_id)
        return {**answer, **self.history_service.compare_sides(left_id, right_id)}

    conflict_detail = ServiceMethod("governance_views", GovernanceViews.conflict_detail)
    conflicts = ServiceMethod("governance_views", GovernanceViews.conflicts)
    # -- hindsight (server/app/hindsight.py) --------------------------------------------------
    health = ServiceMethod("hindsight", Hindsight.health)
    record_health = ServiceMethod("hindsight", Hindsight.record_health)
    apply_suggestion = ServiceMethod("hindsight", Hindsight.apply_suggestion)
    check_suggestion = ServiceMethod("hindsight", Hindsight.check_suggestion)
    undo = ServiceMethod("hindsight", Hindsight.undo)
    check_undo = ServiceMethod("hindsight", Hindsight.check_undo)
    whatif = ServiceMethod("hindsight", Hindsight.whatif)
    accept_entity_alias = ServiceMethod("hindsight", Hindsight.accept_entity_alias)
    reject_entity_alias = ServiceMethod("hindsight", Hindsight.reject_entity_alias)
    near_duplicates_of = ServiceMethod("governance_views", GovernanceViews.near_duplicates_of)
    overview = ServiceMethod("governance_views", GovernanceViews.overview)
    # -- semantic (server/app/semantic.py) --------------------------------------------------
    embedding_model = ServiceMethod("semantic", Semantic.embedding_model)
    notices = ServiceMethod("semantic", Semantic.notices)
    reembed = ServiceMethod("semantic", Semantic.reembed)
    review_notice = ServiceMethod("semantic", Semantic.review_notice)
    search_mode = ServiceMethod("semantic", Semantic.search_mode)
    semantic_notice = ServiceMethod("semantic", Semantic.semantic_notice)
    semantic_problem = ServiceMethod("semantic", Semantic.semantic_problem)
    load_model_in_background = ServiceMethod("semantic", Semantic.load_model_in_background)
    start_vector_worker = ServiceMethod("semantic", Semantic.start_vector_worker)
    lend_model = ServiceMethod("semantic", Semantic.lend_model)
    warm_search = ServiceMethod("semantic", Semantic.warm_search)

    def start_log_follower(self) -> bool:
        """On a team's PostgreSQL log, keep the read models following it (``ledger serve``)."""
        return self.storage.start_following(on_pull=lambda _count: self.semantic.poke_worker())

    stop_vector_worker = ServiceMethod("semantic", Semantic.stop_vector_worker)
    vectors_status = ServiceMethod("semantic", Semantic.vectors_status)
    # -- maintenance -------------------------------------------------------------------------
    pending_backup = ServiceMethod("storage", Storage.pending_backup, storage_call=True)
    backup_notice = ServiceMethod("storage", Storage.backup_notice, storage_call=True)

    @storage_call
    def replay_backup(
        self,
        dry_run: bool = True,
        authorization: str = "",
        *,
        progress: Progress | None = None,
        batch_size: int = REPLAY_BATCH,
    ) -> dict[str, Any]:
        """Land the backup's writes in the log, each decided again (``server.app.backup``)."""
        return replay_backup(
            self.storage, dry_run, authorization, progress=progress, batch_size=batch_size, redo=self._redo
        )

    @storage_call
    def replay_due(self) -> None:
        """``ledger serve`` between calls: the call policy replays this machine's backup once the
        log takes writes again (``Storage.replay_if_due``); nothing to do here."""

    @storage_call
    def status(self) -> dict[str, Any]:
        scope, _ = self.workspace_service.find_scope(None)  # strict: counts of the caller's workspace
        state = self.storage.health()  # reachable, degraded and pending from one look at the log
        # another process's long write: each write waits, then goes to the backup (doctor warns the same)
        held = None if state["degraded"] else busy(self.storage, replay_then(self.storage))
        with self.storage.snapshot():
            memories = (
                mem.count_active(self.conn) if scope is None else mem.status_counts(self.conn, scope).get("active", 0)
            )
            return {
                "ok": True,
                "db": self.storage.log_location(),
                "events": self.store.last_position(),
                "log": self.storage.log_status(state),
                "memories": memories,
                "open_conflicts": count_by_state(self.conn, scope)["open"],
                "projections": self.runner.status(),
                "search_mode": self.search_mode(),
                "vectors": self.vectors_status(scope),
                "pending_backup": state["pending"],
                "degraded": state["degraded"],
                "busy": held,
            }

    @storage_call
    def rebuild(self, projection: str | None = None, progress: Progress | None = None) -> dict[str, Any]:
        from fact_ledger.ledger.errors import InvalidInput

        if projection == "vectors":  # asynchronous: rebuilt from the embedding cache by the indexer
            result = self.reembed(progress, rebuild=True)
            return {
                "ok": True,
                "events": self.store.last_position(),
                "projections": ["vectors"],
                "vectors": {k: v for k, v in result.items() if k != "ok"},
            }
        try:
            count = self.runner.rebuild([projection] if projection else None, progress)
        except KeyError:
            raise InvalidInput(
                f"no projection named {projection!r}; known: {', '.join([*self.runner.by_name, 'vectors'])}",
                field="projection",
            ) from None
        self.storage.forget_pulled_erasures()  # a rebuild pulls too: another machine's erasure may come with it
        self.storage.finish_erasures()  # an erasure left unfinished: the rebuild alone keeps the old bytes
        return {"ok": True, "events": count, "projections": sorted([projection] if projection else self.runner.by_name)}

    @storage_call
    def doctor(self) -> dict[str, Any]:
        from fact_ledger.server.doctor import run_checks

        return run_checks(self)

    @storage_call
    def verify(self, progress: Progress | None = None) -> dict[str, Any]:
        """Recompute the hash chain, then fold the log afresh (rolled back) and compare tables."""
        from fact_ledger.ledger.errors import ChainBroken
        from fact_ledger.server.doctor import damaged_files, found

        damaged = damaged_files(self)  # a chain read through pages that are sound says nothing of the rest
        if damaged:
            path, rows = damaged[0]
            raise ChainBroken(f"the database file {path} is corrupt (SQLite quick_check: {found(rows)})")
        count = self.storage.verify_log(progress=(lambda n: progress(n, 0)) if progress else None)
        self._settled()  # what the pull above brought, folded into full text and the timeline too
        behind = {name: p["lag"] for name, p in self.storage.runner.status().items() if p["lag"] > 0}
        if behind:  # a fold refused (a full disk): tables behind the log are no proof of a fault
            from fact_ledger.ledger.errors import Unavailable

            named = ", ".join(f"{name} by {lag}" for name, lag in sorted(behind.items()))
            raise Unavailable(
                f"the hash chain is intact over {count} events, but the read models could not catch up with "
                f"the log ({named} events behind; see ledger status): verify compares them once they have",
                field="projections",
            )
        bad = self.storage.differs_from_fresh_fold()
        if bad:
            raise ChainBroken(
                f"the hash chain is intact over {count} events, but projection table {bad[0]} differs from a "
                "fresh fold of the log: run ledger rebuild (the log itself is sound; nothing to restore)",
                table=bad[0],
            )
        return {"ok": True, "events": count, "chain": "intact", "projections": "consistent"}
