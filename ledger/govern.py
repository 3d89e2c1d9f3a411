"""Governance decisions: confirm, unlock, retire, supersede, resolve, judge, arbitrate. Pure.

Every action that changes governed state needs an authorisation channel and records it in its
event (``user_channel`` or ``agent_asserted``), so the log always says who vouched for a change.
A memory that stops being current (retired, superseded) settles its unresolved conflicts in the
same decision, so no conflict is left open between a current memory and a dead one, and one
``arbitrate`` call with ``mark_conflict`` and ``apply`` writes the whole story: the conflict,
the supersession by the deciding rule, and the resolution.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fact_ledger.ledger.arbiter import portable
from fact_ledger.ledger.claims import Claim
from fact_ledger.ledger.decide import reopen, set_key, settle, supersede_losers
from fact_ledger.ledger.errors import InvalidInput, Unauthorized, VersionConflict
from fact_ledger.ledger.facts import (
    DEFAULT_POLICY,
    ConflictFacts,
    Decision,
    MemoryFacts,
    NewId,
    Policy,
    check_authorized,
    check_current,
    check_writable,
)
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.events import (
    AUTH_USER,
    ClaimCollided,
    Confirmed,
    ConflictResolved,
    JudgmentSubmitted,
    MemoryRetired,
    MemoryUnlocked,
    SetMember,
    Superseded,
)

# Closing a claim set as it is, every value kept. ``keep_all`` says it for any number of members;
# ``keep_both``, the first name (sets had two members then), stays accepted: published names are
# never taken back.
KEEP_RESOLUTIONS = ("keep_both", "keep_all")


KEPT_ALL = "keep all values"  # why a set kept all its values ended (a ConflictResolved's reason)


def resolved_reason(conflict_id: int) -> str:
    """Why a member left a set a person resolved: "conflict 33 resolved"."""
    return f"conflict {conflict_id} resolved"


def decide_confirm(memory: MemoryFacts, *, authorization: str, conflicts: Sequence[ConflictFacts] = ()) -> Decision:
    """The memory becomes user_confirmed and locked; a user channel upgrades an agent's confirmation.

    Re-confirming is a no-op unless it strengthens the channel: an agent can never overwrite a
    confirmation that a person gave.
    """
    check_authorized(authorization)
    check_current(memory)
    if (
        memory.source_type == "user_confirmed"
        and memory.protection == "locked"
        and (memory.confirmed_via == AUTH_USER or authorization != AUTH_USER)
    ):
        return []
    return [
        (
            memory.stream_id,
            Confirmed(
                memory=memory.stream_id,
                authorization=authorization,
                confidence=1.0 if authorization == AUTH_USER else None,  # a person vouches for it whole
            ),
        ),
        *reopen(conflicts, memory, "was confirmed"),
    ]


def decide_unlock(
    memory: MemoryFacts, *, authorization: str, policy: Policy = DEFAULT_POLICY, conflicts: Sequence[ConflictFacts] = ()
) -> Decision:
    check_authorized(authorization, memory)
    check_current(memory)  # an erased or retired memory has nothing left to unlock (as to confirm)
    if memory.protection == "normal":
        return []
    check_writable(memory, expected_version=None, authorization=authorization, policy=policy)
    return [
        (memory.stream_id, MemoryUnlocked(memory=memory.stream_id, authorization=authorization)),
        *reopen(conflicts, memory, "was unlocked"),
    ]


def decide_retire(
    memory: MemoryFacts,
    *,
    reason: str,
    authorization: str,
    policy: Policy = DEFAULT_POLICY,
    conflicts: Sequence[ConflictFacts] = (),
) -> Decision:
    check_authorized(authorization, memory)
    check_current(memory)
    check_writable(memory, expected_version=None, authorization=authorization, policy=policy)
    return [
        (memory.stream_id, MemoryRetired(memory=memory.stream_id, reason=reason, authorization=authorization)),
        *settle(
            memory.stream_id, conflicts, resolution="retired", reason=reason or "retired", authorization=authorization
        ),
    ]


def decide_supersede(
    loser: MemoryFacts,
    winner: MemoryFacts,
    *,
    reason: str,
    authorization: str,
    rule: str = "manual",
    policy: Policy = DEFAULT_POLICY,
    conflicts: Sequence[ConflictFacts] = (),
) -> Decision:
    """``winner`` replaces ``loser``; the loser's open conflicts are decided for their other side."""
    check_authorized(authorization, loser)
    if loser.stream_id == winner.stream_id:
        raise InvalidInput("a memory cannot supersede itself", field="winner_id")
    check_current(loser, "loser_id")
    check_current(winner, "winner_id")
    check_writable(loser, expected_version=None, authorization=authorization, policy=policy)
    return [
        (
            loser.stream_id,
            Superseded(
                loser=loser.stream_id, winner=winner.stream_id, reason=reason, rule=rule, authorization=authorization
            ),
        ),
        *settle(
            loser.stream_id,
            conflicts,
            winner=winner.stream_id,
            resolution="superseded",
            reason=reason or rule,
            authorization=authorization,
        ),
    ]


def decide_resolve(
    conflict: ConflictFacts,
    *,
    winner: MemoryFacts | None,
    members: dict[str, MemoryFacts],
    resolution: str | None,
    authorization: str,
    policy: Policy = DEFAULT_POLICY,
    member_conflicts: dict[str, Sequence[ConflictFacts]] | None = None,
) -> Decision:
    """``keep_both``/``keep_all`` closes the set as is; a winner supersedes every member whose
    value differs from the winner's, in one decision, and settles the set for the winner.

    ``members``: the set's current members by stream id; ``member_conflicts``: each member's
    other unresolved sets (a superseded member leaves them too).
    """
    losers = (
        []
        if winner is None
        else [
            m
            for s, m in members.items()
            if s != winner.stream_id and conflict.values.get(s) != conflict.values.get(winner.stream_id)
        ]
    )
    guarded = next((m for m in losers if m.protection != "normal"), losers[0] if losers else None)
    check_authorized(authorization, guarded)
    if conflict.state == "resolved":
        raise InvalidInput(f"conflict {conflict.conflict_id} is already resolved", field="conflict_id")
    if resolution not in (None, *KEEP_RESOLUTIONS, "winner"):
        raise InvalidInput("resolution must be keep_both or keep_all (or give winner_id)", field="resolution")
    if resolution in KEEP_RESOLUTIONS and winner is None:
        return [
            (
                conflict.stream_id,
                ConflictResolved(
                    conflict=conflict.stream_id,
                    resolution=resolution,
                    authorization=authorization,
                    reason=KEPT_ALL,
                ),
            )
        ]
    if winner is None:
        raise InvalidInput("give winner_id (a member of the conflict) or resolution: keep_all", field="winner_id")
    if winner.stream_id not in members:
        raise InvalidInput(
            f"memory {winner.memory_id} is not a member of conflict {conflict.conflict_id}", field="winner_id"
        )
    check_current(winner, "winner_id")
    for loser in losers:
        check_writable(loser, expected_version=None, authorization=authorization, policy=policy)
    # One object per other set, shared by every loser in it: each sees the others' departures.
    others = {
        c.stream_id: c for sets in (member_conflicts or {}).values() for c in sets if c.stream_id != conflict.stream_id
    }
    theirs = {
        loser.stream_id: [
            others[c.stream_id] for c in (member_conflicts or {}).get(loser.stream_id, ()) if c.stream_id in others
        ]
        for loser in losers
    }
    decision = supersede_losers(
        [loser.stream_id for loser in losers],
        winner.stream_id,
        rule="resolve_conflict",
        reason=resolved_reason(conflict.conflict_id),
        authorization=authorization,
        other_sets=theirs,
    )
    decision.append(
        (
            conflict.stream_id,
            ConflictResolved(
                conflict=conflict.stream_id,
                winner=winner.stream_id,
                authorization=authorization,
                reason="resolve_conflict",
            ),
        )
    )
    return decision


def decide_judge(
    conflict: ConflictFacts,
    members: dict[str, MemoryFacts],
    *,
    winner: MemoryFacts,
    rationale: str,
    pins: dict[str, int] | None,
    judgment: str,
) -> Decision:
    """A judgment: guidance pinned to every member's version; a stale pin is a version conflict."""
    if conflict.state == "resolved":
        raise InvalidInput(f"conflict {conflict.conflict_id} is already resolved", field="conflict_id")
    if winner.stream_id not in members:
        raise InvalidInput(
            f"memory {winner.memory_id} is not a member of conflict {conflict.conflict_id}", field="winner_id"
        )
    current = {stream: m.version for stream, m in members.items()}
    for stream, version in (pins or {}).items():
        if stream not in members:
            raise InvalidInput("pins name a memory that is not a member of the conflict", field="pins")
        if version != current[stream]:
            memory = members[stream]
            raise VersionConflict(
                f"memory {memory.memory_id} is at version {memory.version}, the judgment pinned {version}",
                field="pins",
                memory_id=memory.memory_id,
                current_version=memory.version,
            )
    return [
        (
            conflict.stream_id,
            JudgmentSubmitted(
                conflict=conflict.stream_id,
                judgment=judgment,
                winner=winner.stream_id,
                rationale=rationale,
                pins=dict(sorted(current.items())),
            ),
        )
    ]


def decide_arbitrate(
    left: MemoryFacts,
    right: MemoryFacts,
    verdict: dict[str, Any],
    *,
    left_claim: Claim | None,
    right_claim: Claim | None,
    same_subject: bool,
    mark_conflict: bool,
    apply: bool,
    authorization: str,
    existing: ConflictFacts | None,
    policy: Policy = DEFAULT_POLICY,
    loser_conflicts: Sequence[ConflictFacts] = (),
    new_id: NewId = uuid7,
) -> Decision:
    """Record the verdict as a conflict and/or apply it (supersede the loser) — one transaction."""
    loser = {"left": right, "right": left}.get(verdict["winner_side"] or "")
    check_authorized(authorization, loser if apply else None)
    if left.stream_id == right.stream_id:
        raise InvalidInput("left_id and right_id are the same memory", field="right_id")
    check_current(left, "left_id")
    check_current(right, "right_id")
    if not same_subject:
        raise InvalidInput(
            f"memories {left.memory_id} and {right.memory_id} are not about the same subject "
            "(no shared subject or claim key)",
            field="right_id",
        )
    decision: Decision = []
    conflict = existing if existing is not None and existing.state != "resolved" else None
    if conflict is None and mark_conflict:
        stream = new_id()
        left_value = SetMember(
            memory=left.stream_id,
            value=left_claim.value if left_claim else "",
            norm=left_claim.value_norm if left_claim else "",
        )
        right_value = SetMember(
            memory=right.stream_id,
            value=right_claim.value if right_claim else "",
            norm=right_claim.value_norm if right_claim else "",
        )
        leader = {"left": left.stream_id, "right": right.stream_id}.get(verdict["winner_side"] or "")
        decision.append(
            (
                stream,
                ClaimCollided(
                    conflict=stream,
                    subject=right_claim.subject if right_claim else left.subject,
                    attribute=right_claim.attribute if right_claim else "",
                    key=set_key(right_claim)
                    if right_claim and left_claim and right_claim.key == left_claim.key
                    else "",
                    members=(left_value, right_value),
                    verdict={**portable(verdict), "leader": leader},
                    authorization=authorization,
                ),
            )
        )
        conflict = ConflictFacts(
            conflict_id=0,
            stream_id=stream,
            state="open",
            values={left.stream_id: left_value.norm, right.stream_id: right_value.norm},
        )
    if not apply:
        return decision
    if verdict["winner_side"] is None:
        raise InvalidInput("no rule separates the two memories; resolve the conflict with a winner_id", field="apply")
    if verdict["manual_review"] and authorization != AUTH_USER:
        raise Unauthorized(
            "policy review_agent_conflicts: a person must apply a verdict between two agent_generated memories",
            field="authorized",
        )
    winner, loser = (left, right) if verdict["winner_side"] == "left" else (right, left)
    conflicts = [c for c in loser_conflicts if conflict is None or c.stream_id != conflict.stream_id]
    if conflict is not None:
        conflicts.insert(0, conflict)
    rule = verdict.get("rule") or "arbitration"
    return decision + decide_supersede(
        loser,
        winner,
        reason=f"arbitration: {rule}",
        authorization=authorization,
        rule=rule,
        policy=policy,
        conflicts=conflicts,
    )
