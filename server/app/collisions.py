"""Collisions on write: the claims a ``remember`` or ``update`` brings, the claim sets they open or
join, automatic settlement by policy, and how the reply reports them. Governance actions build on
this (:mod:`server.app.governance`)."""

from __future__ import annotations

from typing import Any

from fact_ledger.ledger import clock
from fact_ledger.ledger.chain import StoredEvent
from fact_ledger.ledger.claims import Claim, clause_count, extract_claims
from fact_ledger.ledger.decide import (
    RememberCommand,
    decide_remember,
    decide_restatement,
    decide_update,
    set_key,
    writer_facts,
)
from fact_ledger.ledger.entity_alias import rekey
from fact_ledger.ledger.events import MemoryUpdated
from fact_ledger.ledger.facts import Candidate, ConflictFacts, Decision, MemoryFacts, facts_after
from fact_ledger.ledger.normalize import same_value
from fact_ledger.ledger.reply import other_side, rank_for_reply
from fact_ledger.ledger.restatement import restated_memory, says_more
from fact_ledger.ledger.settlement import settle_by_policy
from fact_ledger.projections import claims as claims_model
from fact_ledger.projections import conflicts as conflicts_model
from fact_ledger.projections import entity_aliases
from fact_ledger.projections import memories as mem
from fact_ledger.server.app.governance_views import GovernanceViews, conflict_facts
from fact_ledger.server.app.set_verdicts import verdict_of

# Per set key: the key's unresolved set (None: none) and which of the key's candidates are its
# current members (memory id -> normalised value), as read earlier in the same transaction.
KnownSets = dict[str, tuple[dict[str, Any] | None, dict[int, str]]]


class Collisions(GovernanceViews):
    """What ``remember`` and ``update`` ask about claims inside their write transaction."""

    # -- state helpers (inside a transaction) ------------------------------------------------
    def _claim_state(
        self,
        content: str,
        subject: str,
        explicit: tuple[tuple[str, str, str], ...],
        workspace: str,
        exclude: int | None = None,
        *,
        joining: KnownSets | None = None,
    ) -> tuple[tuple[Claim, ...], list[Candidate]]:
        """The writer's claims and the current claims of other memories that share their keys.

        ``joining`` (a new memory): of a key's unresolved set, only one member the writer
        collides with is kept (see :meth:`_outside_sets`), and what was read about each key's
        set is left in it for :meth:`_claim_sets`."""
        claims = extract_claims(content, subject, explicit)
        aliases = entity_aliases.accepted(self.conn)
        if aliases:  # keyed as the claims projection keys them (ledger.entity_alias)
            claims = rekey(claims, aliases)
        if not claims:
            return claims, []
        scope = self.workspace_scope(workspace) or (workspace,)
        if joining is None:
            found = [hit for ws in scope for hit in claims_model.matching_claims(self.conn, claims, ws, exclude)]
        else:
            found = self._outside_sets(claims, scope, joining)
        rows = mem.load_many(self.conn, sorted({memory_id for memory_id, _ in found}))
        facts = {m: MemoryFacts.from_row(r) for m, r in rows.items() if r["status"] == "active"}
        return claims, [Candidate(other=facts[m], claim=claim) for m, claim in found if m in facts]

    def _outside_sets(
        self, claims: tuple[Claim, ...], scope: tuple[str, ...], known: KnownSets
    ) -> list[tuple[int, Claim]]:
        """The candidates a new memory's decision needs: the current claims of other memories
        that share a key with the writer's (as ``matching_claims`` finds them) and, of a key
        with an unresolved set, only the ones not in it yet and one member the writer collides
        with (so that it joins).

        The set's other members are recorded already; loading them would make every write to
        a disputed claim cost what its history does. Values and membership are read from the
        key index first; whole claims only for the candidates kept. ``known`` keeps, per set
        key, the set row and which of the key's candidates are its members."""
        kept: list[tuple[int, int]] = []
        for claim in claims:
            key = set_key(claim)
            rows = [r for ws in scope for r in claims_model.values_and_members(self.conn, claim, key, ws, scope)]
            if not rows:
                continue
            row = conflicts_model.unresolved_for_key(self.conn, key, scope)
            members = {m: norm for m, _, _, norm in rows if norm is not None} if row else {}
            known[key] = (row, members)
            anchor = next(
                ((m, o) for m, o, v, _ in rows if m in members and not same_value(claim.kind, claim.value_norm, v)),
                None,
            )
            kept += [(m, o) for m, o, _, _ in rows if m not in members or (m, o) == anchor]
        full = claims_model.claims_at(self.conn, sorted(set(kept)))
        return [(m, full[m, o]) for m, o in kept if (m, o) in full]

    def remember_decision(
        self,
        cmd: RememberCommand,
        new_stream: str,
        target: MemoryFacts | None,
        near: list[dict[str, Any]],
        duplicate: MemoryFacts | None = None,
    ) -> Decision:
        """``remember``'s decision (fills ``near`` for a memory that is not an exact duplicate).

        An exact duplicate is a sighting, unless the write retracts a target: that retraction
        still lands (``ledger.decide.decide_remember``)."""
        retracting = target if cmd.retracts else None
        if duplicate is not None and (retracting is None or retracting.stream_id != duplicate.stream_id):
            target_conflicts = self._conflicts_of(retracting.memory_id) if retracting is not None else []
            return decide_remember(
                cmd,
                new_stream=new_stream,
                duplicate=duplicate,
                target=target,
                target_conflicts=target_conflicts,
                policy=self._policy,
            )
        explicit = tuple((c.subject, c.attribute, c.value) for c in cmd.claims)
        known: KnownSets = {}
        claims, candidates = self._claim_state(cmd.content, cmd.subject, explicit, cmd.workspace, joining=known)
        restated = restated_memory(
            claims,
            self._holders(claims, cmd.workspace),
            clauses=clause_count(cmd.content),
            workspace=cmd.workspace,
            plain=not (
                cmd.tags
                or cmd.metadata
                or cmd.claims
                or cmd.ref_id is not None
                or says_more(cmd.content, cmd.subject, claims)
            ),
            source_type=cmd.source_type,
            authorization=cmd.authorization,
        )
        if restated is not None and not self._disputed(restated.memory_id, claims):
            return decide_restatement(cmd, restated)
        near[:] = claims_model.near_duplicates(self.conn, cmd.content, cmd.workspace)
        target_conflicts = self._conflicts_of(target.memory_id) if target is not None and cmd.retracts else []
        sets, recorded_at = self._claim_sets(claims, candidates, cmd.workspace, known=known), clock.now()
        decision = decide_remember(
            cmd,
            new_stream=new_stream,
            duplicate=None,
            target=target,
            claims=claims,
            candidates=candidates,
            target_conflicts=target_conflicts,
            sets=sets,
            recorded_at=recorded_at,
            policy=self._policy,
        )
        if not self._settles:
            return decision
        return decision + self._settlement(decision, writer_facts(cmd, new_stream, recorded_at), candidates, sets)

    @property
    def _settles(self) -> bool:
        """A write may settle the sets it opens or joins (policy ``auto_settle`` or ``settle_changes``)."""
        return self._policy.auto_settle or self._policy.settle_changes

    def _disputed(self, memory_id: int, claims: tuple[Claim, ...]) -> bool:
        """``memory_id`` is in an unresolved set of one of ``claims``' keys: a restatement of its
        value must take part in the set's ranking (it is stored and joins)."""
        keys = {set_key(c) for c in claims}
        return any(c.key in keys for c in self._conflicts_of(memory_id))

    def _holders(self, claims: tuple[Claim, ...], workspace: str) -> dict[tuple[str, str, str], list[MemoryFacts]]:
        """Per claim key, the memories of ``workspace`` whose claim holds the same value (oldest first)."""
        ids = {claim.key: claims_model.holding_value(self.conn, claim, workspace) for claim in claims}
        rows = mem.load_many(self.conn, sorted({m for found in ids.values() for m in found}))
        return {key: [MemoryFacts.from_row(rows[m]) for m in found if m in rows] for key, found in ids.items()}

    def _settlement(
        self, decision: Decision, writer: MemoryFacts, candidates: list[Candidate], sets: dict[str, ConflictFacts]
    ) -> Decision:
        """Policy ``auto_settle``: read what :func:`ledger.settlement.settle_by_policy` needs about the
        sets this write opens or joins, and let it decide. A set with a member no policy may
        supersede waits for a person: its members' facts are not read (only their values)."""
        full = {
            c.stream_id: conflict_facts(self.conn, row)
            for c in sets.values()
            if (row := conflicts_model.by_id(self.conn, c.conflict_id)) is not None
        }
        settleable = [  # auto_settle leaves a set with a guarded member alone; settle_changes may let it lead
            c
            for c in full.values()
            if not (self._policy.auto_settle and conflicts_model.has_guarded_member(self.conn, c.conflict_id))
        ]
        facts = {c.other.stream_id: c.other for c in candidates}
        missing = sorted({i for c in settleable for s, i in c.ids.items() if s not in facts})
        facts |= {
            r["stream_id"]: MemoryFacts.from_row(r)
            for r in mem.load_many(self.conn, missing).values()
            if r["status"] == "active"
        }
        facts[writer.stream_id] = writer
        other_sets = {s: self._conflicts_of(m.memory_id) for s, m in facts.items() if m.memory_id}
        return settle_by_policy(
            decision,
            members=facts,
            sets=full,
            other_sets=other_sets,
            review_agent_conflicts=self._policy.review_agent_conflicts,
            changes_only=not self._policy.auto_settle,
        )

    def _claim_sets(
        self,
        claims: tuple[Claim, ...],
        candidates: list[Candidate],
        workspace: str,
        mine: MemoryFacts | None = None,
        *,
        known: KnownSets | None = None,
    ) -> dict[str, ConflictFacts]:
        """The unresolved claim set of each disputed key, with which candidates are already in it.

        Only the candidates' (and the writer's) membership is read: joining a set of a thousand
        costs what joining a set of two does. A key in ``known`` (read by :meth:`_outside_sets`
        in this transaction, for a superset of these candidates) is not read again.
        """
        scope = self.workspace_scope(workspace) or (workspace,)
        streams = {c.other.memory_id: c.other.stream_id for c in candidates}
        if mine is not None:
            streams[mine.memory_id] = mine.stream_id
        sets: dict[str, ConflictFacts] = {}
        for claim in claims:
            ids = [c.other.memory_id for c in candidates if c.claim.key == claim.key]
            if not ids:
                continue
            key = set_key(claim)
            members: dict[int, str] | None = None
            if known is not None and key in known:
                row, members = known[key]
            else:
                row = conflicts_model.unresolved_for_key(self.conn, key, scope)
            if row is None:
                row, members = conflicts_model.unkeyed_of(self.conn, ids, claim.attribute), None
            if row is None:
                continue
            if members is not None and mine is None:
                active = {m: members[m] for m in ids if m in members}
            else:
                active = conflicts_model.active_among(
                    self.conn, row["conflict_id"], ids + ([mine.memory_id] if mine is not None else [])
                )
            sets[key] = ConflictFacts(
                conflict_id=row["conflict_id"],
                stream_id=row["stream_id"],
                state=row["state"],
                key=key,
                values={streams[m]: v for m, v in active.items()},
                ids={streams[m]: m for m in active},
            )
        return sets

    def update_decision(
        self, memory: MemoryFacts, changes: dict[str, Any], *, expected_version: int | None, authorization: str
    ) -> Decision:
        """``update``'s decision: protection and policy, re-opened judgments, new collisions."""
        claims, candidates = None, []
        if changes.get("content") is not None or changes.get("subject") is not None:
            row = mem.by_id(self.conn, memory.memory_id) or {}
            explicit = tuple(
                (c.subject, c.attribute, c.value)
                for c in claims_model.claims_of(self.conn, memory.memory_id)
                if c.origin == "explicit"
            )
            claims, candidates = self._claim_state(
                changes.get("content") or row.get("content", ""),
                changes.get("subject", row.get("subject", "")),
                explicit,
                memory.workspace,
                exclude=memory.memory_id,
            )
        sets = self._claim_sets(claims, candidates, memory.workspace, memory) if claims else {}
        decision = decide_update(
            memory,
            changes,
            expected_version=expected_version,
            authorization=authorization,
            claims=claims,
            candidates=candidates,
            conflicts=self._conflicts_of(memory.memory_id),
            sets=sets,
            policy=self._policy,
        )
        if not (self._settles and claims):
            return decision
        change = decision[0][1]
        assert isinstance(change, MemoryUpdated)
        return decision + self._settlement(decision, facts_after(memory, change), candidates, sets)

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
            covered = {m for row, _, among in sets.values() if row["conflict_id"] in shown for m in among}
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
                changes.setdefault(keys[ev.type], []).append(row["conflict_id"])
        return changes

    def _collision_report(
        self,
        stored: list[StoredEvent],
        mine: int,
        sets: dict[str, tuple[dict[str, Any], list[dict[str, Any]], list[int]]],
    ) -> dict[str, Any]:
        """``conflicts``: each set this write opened or joined, in a few bytes whatever its size —
        the claim with this memory's value, the leader and the member count (never the other values).
        ``sets``: what :func:`projections.conflicts.reported_sets` read of them."""
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
                    "conflict_id": row["conflict_id"],
                    "other_id": other_side(verdict["ranking"], leader, mine),
                    "leader_id": leader,
                    "member_count": row["member_count"],
                    "claim": {"subject": row["subject"], "attribute": row["attribute"], "value": value},
                    "verdict": brief,
                }
            )
        shown, total = rank_for_reply(items, mine)
        return {"conflicts": shown, "conflicts_total": total}


def mine_stream(conn: Any, memory_id: int) -> str:
    return mem.stream_of(conn, memory_id) or ""


def superseded_by(conn: Any, stored: list[StoredEvent]) -> list[int]:
    return [m for e in stored if e.type == "Superseded" if (m := mem.memory_id_of(conn, e.stream_id)) is not None]
