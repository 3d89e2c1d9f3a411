"""Governance on the facade: arbitration, confirmation, retirement, supersession, judgments.

Each write reads what its decision needs inside the write transaction (``_commit`` runs the
``decide`` closure after ``BEGIN IMMEDIATE``), hands it to the pure decisions in
:mod:`ledger.govern`, and answers with docs/contract.md's keys. The write side of
``remember``/``update`` (claims, collisions, their report) is :mod:`server.app.collisions`; the
read views are :mod:`server.app.governance_views`, of which this service is given one to show a
set as they do.
"""

from __future__ import annotations

from typing import Any

from fact_ledger.ledger import clock
from fact_ledger.ledger.arbiter import arbitrate as arbitrate_pair
from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.facts import Decision, MemoryFacts
from fact_ledger.ledger.govern import (
    decide_arbitrate,
    decide_confirm,
    decide_judge,
    decide_resolve,
    decide_retire,
    decide_supersede,
    decide_unlock,
)
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.projections import memories as mem
from fact_ledger.projections.confirmations import agent_asserted_confirmations
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.conflicts.queries import conflict_facts
from fact_ledger.server.app import credentials
from fact_ledger.server.app.collisions import superseded_by
from fact_ledger.server.app.governance_views import GovernanceViews
from fact_ledger.server.app.service import Service
from fact_ledger.server.app.storage import BackedUp, Storage, storage_call
from fact_ledger.server.app.workspaces import Workspaces
from fact_ledger.server.app.writes import Unchanged

__all__ = ["Governance", "agent_asserted_confirmations"]


class Governance(Service):
    """Arbitration, confirmation, retirement, supersession and judgments over the storage seam."""

    def __init__(self, storage: Storage, workspaces: Workspaces, views: GovernanceViews) -> None:
        super().__init__(storage, workspaces)
        self.views = views

    # -- governance actions ------------------------------------------------------------------
    @storage_call
    def confirm(self, memory_id: int, authorization: str = "") -> dict[str, Any]:
        def decide() -> tuple[Decision, str, str]:
            memory = self._memory(memory_id)
            decision = decide_confirm(memory, authorization=authorization, conflicts=self._conflicts_of(memory_id))
            return decision, clock.now(), memory.workspace

        outcome = self._commit(decide)
        return outcome.result if isinstance(outcome, BackedUp) else self._memory_result(memory_id, outcome.events)

    @storage_call
    def unlock(self, memory_id: int, authorization: str = "") -> dict[str, Any]:
        def decide() -> tuple[Decision, str, str]:
            memory = self._memory(memory_id)
            decision = decide_unlock(
                memory, authorization=authorization, policy=self._policy, conflicts=self._conflicts_of(memory_id)
            )
            return decision, clock.now(), memory.workspace

        outcome = self._commit(decide)
        return outcome.result if isinstance(outcome, BackedUp) else self._memory_result(memory_id, outcome.events)

    @storage_call
    def retire(self, memory_id: int, reason: str = "", authorization: str = "") -> dict[str, Any]:
        credentials.refuse_in_note("reason", reason)

        def decide() -> tuple[Decision, str, str]:
            memory = self._memory(memory_id)
            decision = decide_retire(
                memory,
                reason=reason,
                authorization=authorization,
                policy=self._policy,
                conflicts=self._conflicts_of(memory_id),
            )
            return decision, clock.now(), memory.workspace

        outcome = self._commit(decide)
        return outcome.result if isinstance(outcome, BackedUp) else self._memory_result(memory_id, outcome.events)

    @storage_call
    def supersede(self, loser_id: int, winner_id: int, reason: str = "", authorization: str = "") -> dict[str, Any]:
        credentials.refuse_in_note("reason", reason)

        def decide() -> tuple[Decision, str, str]:
            loser, winner = self._memory(loser_id, "loser_id"), self._memory(winner_id, "winner_id")
            decision = decide_supersede(
                loser,
                winner,
                reason=reason,
                authorization=authorization,
                policy=self._policy,
                conflicts=self._conflicts_of(loser_id),
            )
            return decision, clock.now(), loser.workspace

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        stored = outcome.events
        return {
            **self._memory_result(loser_id, stored),
            "superseded_by": winner_id,
            "resolved_conflicts": _resolved(self.conn, stored),
        }

    @storage_call
    def resolve_conflict(
        self, conflict_id: int, winner_id: int | None = None, resolution: str | None = None, authorization: str = ""
    ) -> dict[str, Any]:
        """A winner among the members (every member with another value is superseded) or keep_all."""

        def decide() -> tuple[Decision, str, str]:
            conflict = self._conflict(conflict_id)
            members = {s: self._memory(i, "conflict_id") for s, i in conflict.ids.items()}
            winner = self._memory(winner_id, "winner_id") if winner_id is not None else None
            others = {s: self._conflicts_of(m.memory_id) for s, m in members.items()} if winner else {}
            decision = decide_resolve(
                conflict,
                winner=winner,
                members=members,
                resolution=resolution,
                authorization=authorization,
                policy=self._policy,
                member_conflicts=others,
            )
            return decision, clock.now(), self._conflict_row(conflict_id).workspace

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        stored = outcome.events
        return {
            "ok": True,
            "conflict": self.views._conflict_view_by_id(conflict_id),
            "superseded": [memory_id for memory_id in superseded_by(self.conn, stored)],
            "resolved_conflicts": _resolved(self.conn, stored),
        }

    @storage_call
    def judge(
        self, conflict_id: int, winner_id: int, rationale: str = "", pins: dict[str, int] | dict[int, int] | None = None
    ) -> dict[str, Any]:
        credentials.refuse_in_note("rationale", rationale)

        def decide() -> tuple[Decision, str, str]:
            conflict = self._conflict(conflict_id)
            members = {s: self._memory(i, "conflict_id") for s, i in conflict.ids.items()}
            winner = self._memory(winner_id, "winner_id")
            pinned = None
            if pins is not None:
                pinned = {}
                for key, version in pins.items():
                    mid = _as_id(key)
                    if mid not in conflict.ids.values():
                        raise InvalidInput(f"pins name memory {key}, not a member of the conflict", field="pins")
                    pinned[members_by_id(members)[mid]] = version
            decision = decide_judge(
                conflict, members, winner=winner, rationale=rationale, pins=pinned, judgment=uuid7()
            )
            last = conflicts_model.judgments_of(self.conn, conflict_id)[-1:] if conflict.state == "judged" else []
            if last and _repeats(last[0], winner.memory_id, rationale, members):
                raise Unchanged(last[0]["judgment_id"])  # a retried or resubmitted call: recorded once
            return decision, clock.now(), winner.workspace

        try:
            outcome = self._commit(decide)
        except Unchanged as same:
            view = self.views._conflict_view_by_id(conflict_id)
            return {"ok": True, "judgment_id": same.version, "unchanged": True, "conflict": view}
        if isinstance(outcome, BackedUp):
            return outcome.result
        stored = outcome.events
        judgment = next((e.position for e in stored if e.type == "JudgmentSubmitted"), None)
        return {"ok": True, "judgment_id": judgment, "conflict": self.views._conflict_view_by_id(conflict_id)}

    @storage_call
    def arbitrate(
        self, left_id: int, right_id: int, mark_conflict: bool = False, apply: bool = False, authorization: str = ""
    ) -> dict[str, Any]:
        """The verdict, recorded as a conflict (``mark_conflict``) and applied (``apply``) in one call."""
        verdicts: list[dict[str, Any]] = []
        found: list[int] = []

        def decide() -> tuple[Decision, str, str]:
            left, right = self._memory(left_id, "left_id"), self._memory(right_id, "right_id")
            left_claim, right_claim, same = self.views._shared(left, right)
            verdict = arbitrate_pair(
                left.side(), right.side(), review_agent_conflicts=self._policy.review_agent_conflicts
            )
            verdicts[:] = [verdict]
            existing = conflicts_model.unresolved_between(self.conn, left_id, right_id)
            found[:] = [existing.conflict_id] if existing else []
            loser_id = verdict["loser_id"]
            decision = decide_arbitrate(
                left,
                right,
                verdict,
                left_claim=left_claim,
                right_claim=right_claim,
                same_subject=same,
                mark_conflict=mark_conflict,
                apply=apply,
                authorization=authorization,
                existing=conflict_facts(self.conn, existing) if existing else None,
                policy=self._policy,
                loser_conflicts=self._conflicts_of(loser_id) if apply and loser_id else (),
            )
            return decision, clock.now(), left.workspace

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        stored = outcome.events
        opened = next((e.position for e in stored if e.type == "ClaimCollided"), None)
        resolved = _resolved(self.conn, stored)
        conflict_id = opened or (found[0] if found else resolved[0] if resolved else None)
        return {
            "ok": True,
            "verdict": verdicts[0],
            "conflict_id": conflict_id,
            "applied": any(e.type == "Superseded" for e in stored),
            "resolved_conflicts": resolved,
        }

    def _memory_result(self, memory_id: int, stored: list[StoredEvent]) -> dict[str, Any]:
        row = mem.by_id(self.conn, memory_id)
        assert row is not None
        return {
            "ok": True,
            "memory_id": memory_id,
            "version": row.version,
            "status": row.status,
            "source_type": row.source_type,
            "protection": row.protection,
            "changed": bool(stored),
            "resolved_conflicts": _resolved(self.conn, stored),
        }


def members_by_id(members: dict[str, MemoryFacts]) -> dict[int, str]:
    return {m.memory_id: s for s, m in members.items()}


def _resolved(conn: Any, stored: list[StoredEvent]) -> list[int]:
    streams = [e.stream_id for e in stored if e.type == "ConflictResolved"]
    return [row.conflict_id for s in streams if (row := conflicts_model.by_stream(conn, s)) is not None]


def _as_id(key: Any) -> int:
    if isinstance(key, bool):
        raise InvalidInput("pins keys are memory ids", field="pins")
    try:
        return int(key)
    except (TypeError, ValueError):
        raise InvalidInput("pins keys are memory ids", field="pins") from None


def _repeats(last: dict[str, Any], winner_id: int, rationale: str, members: dict[str, MemoryFacts]) -> bool:
    """Whether a judgment says what the set's standing one says, of the members as they are now
    (the same winner and rationale, pinned to the same versions): a second one adds nothing."""
    now = {str(m.memory_id): m.version for m in members.values()}
    return last["winner_id"] == winner_id and last["rationale"] == rationale and last["pins"] == now
