"""Collisions on write: the claims a ``remember`` or ``update`` brings, the claim sets they open or
join, automatic settlement by policy, and how the reply reports them. Governance actions build on
this (:mod:`server.app.governance`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fact_ledger.ledger import clock, imported
from fact_ledger.ledger.arbiter import Side
from fact_ledger.ledger.cancellation import Target
from fact_ledger.ledger.decide import RememberCommand
from fact_ledger.ledger.facts import Decision, MemoryFacts
from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import ClaimCollided
from fact_ledger.ledger.remember import RememberState
from fact_ledger.ledger.remember import decide as decide_remember_state
from fact_ledger.ledger.reply import other_side, rank_for_reply
from fact_ledger.ledger.update import UpdateState
from fact_ledger.projections import claims as claims_model
from fact_ledger.projections import memories as mem
from fact_ledger.projections import write_state
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.conflicts.queries import ConflictRow
from fact_ledger.projections.memory_row import CurrentMemory
from fact_ledger.server.app.service import Service
from fact_ledger.server.app.set_verdicts import verdict_of

# Imported memories decided per write transaction: a transaction's reads stay bounded, and an
# import of a whole ledger is not one fsync per memory.
IMPORT_DISPUTE_BATCH = 256


class Collisions(Service):
    """What ``remember`` and ``update`` decide about claims inside their write transaction, from
    the state :mod:`projections.write_state` reads; and how the reply reports it."""

    def remember_decision(
        self,
        cmd: RememberCommand,
        new_stream: str,
        *,
        target: MemoryFacts | None = None,
        cancelling: tuple[Target, ...] = (),
        duplicate: MemoryFacts | None = None,
    ) -> tuple[Decision, RememberState]:
        """``remember``'s state, read once, and its decision from it alone (``ledger.remember``)."""
        state = write_state.remember_state(
            self.conn,
            cmd,
            scope=self.workspace_scope(cmd.workspace) or (cmd.workspace,),
            target=target,
            cancelling=cancelling,
            duplicate=duplicate,
            policy=self._policy,
        )
        return decide_remember_state(cmd, state, new_stream=new_stream, policy=self._policy), state

    def update_state(self, row: CurrentMemory, requested: dict[str, Any]) -> UpdateState:
        """``update``'s state, read once (``projections.write_state.update_state``) from the
        memory's row, which the caller read to check it may change it."""
        scope = self.workspace_scope(row.workspace) or (row.workspace,)
        return write_state.update_state(self.conn, row, requested, scope=scope, policy=self._policy)

    def dispute_imported(self, streams: Sequence[str]) -> list[int]:
        """Each memory whose content came in with an import (``streams``) and shares a claim key
        with one held before it, decided as a write of it would be (:mod:`ledger.imported`),
        ``IMPORT_DISPUTE_BATCH`` memories a transaction: the claim sets they opened or joined."""
        came_with = frozenset(streams)
        with self.storage.snapshot():
            meeting = claims_model.disputing_others(self.conn, sorted(came_with))
        touched: dict[str, None] = {}
        for start in range(0, len(meeting), IMPORT_DISPUTE_BATCH):

            def work(chunk: list[int] = meeting[start : start + IMPORT_DISPUTE_BATCH]) -> None:
                rows = mem.load_many(self.conn, chunk)
                now = clock.now()
                for row in (rows[i] for i in chunk if i in rows):  # oldest memory first, as they were written
                    if row.status != "active":
                        continue
                    scope = self.workspace_scope(row.workspace) or (row.workspace,)
                    state = write_state.imported_state(self.conn, row, scope=scope, policy=self._policy)
                    decision = imported.decide(state, came_with=came_with, policy=self._policy)
                    if decision:
                        self.runner.append(self.storage.new_events(decision, now, row.workspace))
                        touched.update((e.conflict, None) for _, e in decision if isinstance(e, ClaimCollided))

            self.storage.transaction(work)
        with self.storage.snapshot():
            found = [conflicts_model.by_stream(self.conn, stream) for stream in touched]
        return sorted({row.conflict_id for row in found if row is not None})

    def write_report(
        self, stored: list[StoredEvent], mine: int, near: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        near_ids = [n["memory_id"] for n in near or ()]
        sets = conflicts_model.reported_sets(
            self.conn, list(dict.fromkeys(e.stream_id for e in stored if e.type == "ClaimCollided")), near_ids
        )
        report = self._collision_report(stored, mine, sets)
        if near is not None:
            # A near-duplicate that is in a set this write joined is the same claim with another
            # value: the conflict already reports it, in fewer bytes.
            shown = {c["conflict_id"] for c in report["conflicts"]}
            covered = {m for row, _, among in sets.values() if row.conflict_id in shown for m in among}
            report["near_duplicates"] = [n for n in near if n["memory_id"] not in covered]
        superseded = superseded_by(self.conn, stored)  # by policy auto_settle: the only way a write supersedes
        if superseded:
            report["superseded"] = superseded
        return report

    def conflict_changes(self, stored: list[StoredEvent]) -> dict[str, list[int]]:
        """The sets an update ended (``dissolved``), left (``left``) or put back before a person (``reopened``)."""
        changes: dict[str, list[int]] = {}
        keys = {"ConflictResolved": "dissolved", "ConflictReopened": "reopened", "ConflictMemberLeft": "left"}
        for ev in stored:
            if ev.type not in keys or (ev.type == "ConflictResolved" and ev.data.resolution != "dissolved"):
                continue  # a set settled by policy auto_settle is reported through ``superseded``
            row = conflicts_model.by_stream(self.conn, ev.stream_id)
            if row is not None:
                changes.setdefault(keys[ev.type], []).append(row.conflict_id)
        return changes

    def _collision_report(
        self,
        stored: list[StoredEvent],
        mine: int,
        sets: dict[str, tuple[ConflictRow, list[Side], list[int]]],
    ) -> dict[str, Any]:
        """``conflicts``: each set this write opened or joined, in a few bytes whatever its size —
        the claim with this memory's value, the leader and the member count (never the other values).
        ``sets``: what :func:`projections.conflicts.queries.reported_sets` read of them."""
        items = []
        stream = None
        review = self.settings.policy.review_agent_conflicts
        for ev in stored:
            if ev.type != "ClaimCollided" or ev.stream_id not in sets:
                continue
            row, best, _ = sets[ev.stream_id]
            if stream is None:  # a remember's own event names its stream; an update's is looked up
                recorded = (e.stream_id for e in stored if e.type == "MemoryRecorded" and e.position == mine)
                stream = next(recorded, None) or mine_stream(self.conn, mine)
            value = next((m.value for m in ev.data.members if m.memory == stream), "")
            verdict = verdict_of(best, review_agent_conflicts=review)
            leader = verdict["leader_id"]
            brief = {k: verdict[k] for k in ("winner_id", "manual_review", "rule")}  # reasons: conflict_detail
            items.append(
                {
                    "conflict_id": row.conflict_id,
                    "other_id": other_side(verdict["ranking"], leader, mine),
                    "leader_id": leader,
                    "member_count": row.member_count,
                    "claim": {"subject": row.subject, "attribute": row.attribute, "value": value},
                    "verdict": brief,
                }
            )
        shown, total = rank_for_reply(items, mine)
        return {"conflicts": shown, "conflicts_total": total}


def mine_stream(conn: Any, memory_id: int) -> str:
    return mem.stream_of(conn, memory_id) or ""


def superseded_by(conn: Any, stored: list[StoredEvent]) -> list[int]:
    return [m for e in stored if e.type == "Superseded" if (m := mem.memory_id_of(conn, e.stream_id)) is not None]
