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

from ledger.arbiter import portable
from ledger.claims import Claim
from ledger.decide import (
    DEFAULT_POLICY,
    ConflictFacts,
    Decision,
    MemoryFacts,
    NewId,
    Policy,
    check_authorized,
    check_current,
    check_writable,
    reopen,
    settle,
)
from ledger.errors import InvalidInput, Unauthorized, VersionConflict
from ledger.events import (
    AUTH_USER,
    ClaimCollided,
    Confirmed,
    ConflictResolved,
    JudgmentSubmitted,
    MemoryRetired,
    MemoryUnlocked,
    Superseded,
)
from ledger.ids import uuid7


def decide_confirm(memory: MemoryFacts, *, authorization: str, conflicts: Sequence[ConflictFacts] = ()) -> Decision:
    """The memory becomes user_confirmed and locked; a user channel upgrades an agent's confirmation.

    Re-confirming is a no-op unless it strengthens the channel: an agent can never overwrite a
    confirmation that a person gave.
    """
    check_authorized(authorization)
    check_current(memory)
    if memory.source_type == "user_confirmed" and memory.protection == "locked" and (
            memory.confirmed_via == AUTH_USER or authorization != AUTH_USER):
        return []
    return [(memory.stream_id, Confirmed(memory=memory.stream_id, authorization=authorization)),
            *reopen(conflicts, memory, "was confirmed")]


def decide_unlock(memory: MemoryFacts, *, authorization: str, policy: Policy = DEFAULT_POLICY,
                  conflicts: Sequence[ConflictFacts] = ()) -> Decision:
    check_authorized(authorization, memory)
    if memory.protection == "normal":
        return []
    check_writable(memory, expected_version=None, authorization=authorization, policy=policy)
    return [(memory.stream_id, MemoryUnlocked(memory=memory.stream_id, authorization=authorization)),
            *reopen(conflicts, memory, "was unlocked")]


def decide_retire(memory: MemoryFacts, *, reason: str, authorization: str, policy: Policy = DEFAULT_POLICY,
                  conflicts: Sequence[ConflictFacts] = ()) -> Decision:
    check_authorized(authorization, memory)
    check_current(memory)
    check_writable(memory, expected_version=None, authorization=authorization, policy=policy)
    return [(memory.stream_id, MemoryRetired(memory=memory.stream_id, reason=reason, authorization=authorization)),
            *settle(memory.stream_id, conflicts, resolution="retired", reason=reason or "retired",
                    authorization=authorization)]


def decide_supersede(loser: MemoryFacts, winner: MemoryFacts, *, reason: str, authorization: str,
                     rule: str = "manual", policy: Policy = DEFAULT_POLICY,
                     conflicts: Sequence[ConflictFacts] = ()) -> Decision:
    """``winner`` replaces ``loser``; the loser's open conflicts are decided for their other side."""
    check_authorized(authorization, loser)
    if loser.stream_id == winner.stream_id:
        raise InvalidInput("a memory cannot supersede itself", field="winner_id")
    check_current(loser, "loser_id")
    check_current(winner, "winner_id")
    check_writable(loser, expected_version=None, authorization=authorization, policy=policy)
    return [(loser.stream_id, Superseded(loser=loser.stream_id, winner=winner.stream_id, reason=reason, rule=rule,
                                         authorization=authorization)),
            *settle(loser.stream_id, conflicts, winner=winner.stream_id, resolution="superseded",
                    reason=reason or rule, authorization=authorization)]


def decide_resolve(conflict: ConflictFacts, *, winner: MemoryFacts | None, loser: MemoryFacts | None,
                   resolution: str | None, authorization: str, policy: Policy = DEFAULT_POLICY,
                   loser_conflicts: Sequence[ConflictFacts] = ()) -> Decision:
    """``keep_both`` closes the conflict as is; a winner supersedes the other member."""
    check_authorized(authorization, loser if winner is not None else None)
    if conflict.state == "resolved":
        raise InvalidInput(f"conflict {conflict.conflict_id} is already resolved", field="conflict_id")
    if resolution not in (None, "keep_both", "winner"):
        raise InvalidInput("resolution must be keep_both (or give winner_id)", field="resolution")
    if resolution == "keep_both" and winner is None:
        return [(conflict.stream_id, ConflictResolved(conflict=conflict.stream_id, resolution="keep_both",
                                                      authorization=authorization, reason="keep both"))]
    if winner is None or loser is None:
        raise InvalidInput("give winner_id (a member of the conflict) or resolution: keep_both", field="winner_id")
    if winner.stream_id not in (conflict.left, conflict.right):
        raise InvalidInput(f"memory {winner.memory_id} is not a member of conflict {conflict.conflict_id}",
                           field="winner_id")
    if loser.status != "active":  # already gone: only the conflict is left to close
        return [(conflict.stream_id, ConflictResolved(conflict=conflict.stream_id, winner=winner.stream_id,
                                                      authorization=authorization, reason="resolve_conflict"))]
    others = [c for c in loser_conflicts if c.stream_id != conflict.stream_id]
    return decide_supersede(loser, winner, reason=f"conflict {conflict.conflict_id} resolved",
                            authorization=authorization, rule="resolve_conflict", policy=policy,
                            conflicts=[conflict, *others])


def decide_judge(conflict: ConflictFacts, members: dict[str, MemoryFacts], *, winner: MemoryFacts,
                 rationale: str, pins: dict[str, int] | None, judgment: str) -> Decision:
    """A judgment: guidance pinned to both members' versions; a stale pin is a version conflict."""
    if conflict.state == "resolved":
        raise InvalidInput(f"conflict {conflict.conflict_id} is already resolved", field="conflict_id")
    if winner.stream_id not in members:
        raise InvalidInput(f"memory {winner.memory_id} is not a member of conflict {conflict.conflict_id}",
                           field="winner_id")
    current = {stream: m.version for stream, m in members.items()}
    for stream, version in (pins or {}).items():
        if stream not in members:
            raise InvalidInput("pins name a memory that is not a member of the conflict", field="pins")
        if version != current[stream]:
            memory = members[stream]
            raise VersionConflict(
                f"memory {memory.memory_id} is at version {memory.version}, the judgment pinned {version}",
                field="pins", memory_id=memory.memory_id, current_version=memory.version)
    return [(conflict.stream_id, JudgmentSubmitted(
        conflict=conflict.stream_id, judgment=judgment, winner=winner.stream_id, rationale=rationale,
        pins=dict(sorted(current.items()))))]


def decide_arbitrate(left: MemoryFacts, right: MemoryFacts, verdict: dict[str, Any], *,
                     left_claim: Claim | None, right_claim: Claim | None, same_subject: bool,
                     mark_conflict: bool, apply: bool,
                     authorization: str, existing: ConflictFacts | None, policy: Policy = DEFAULT_POLICY,
                     loser_conflicts: Sequence[ConflictFacts] = (), new_id: NewId = uuid7) -> Decision:
    """Record the verdict as a conflict and/or apply it (supersede the loser) — one transaction."""
    loser = {"left": right, "right": left}.get(verdict["winner_side"] or "")
    check_authorized(authorization, loser if apply else None)
    if left.stream_id == right.stream_id:
        raise InvalidInput("left_id and right_id are the same memory", field="right_id")
    check_current(left, "left_id")
    check_current(right, "right_id")
    if not same_subject:
        raise InvalidInput(f"memories {left.memory_id} and {right.memory_id} are not about the same subject "
                           "(no shared subject or claim key)", field="right_id")
    decision: Decision = []
    conflict = existing if existing is not None and existing.state != "resolved" else None
    if conflict is None and mark_conflict:
        stream = new_id()
        decision.append((stream, ClaimCollided(
            conflict=stream, left=left.stream_id, right=right.stream_id,
            subject=right_claim.subject if right_claim else left.subject,
            attribute=right_claim.attribute if right_claim else "",
            left_value=left_claim.value if left_claim else "", right_value=right_claim.value if right_claim else "",
            verdict=portable(verdict), authorization=authorization)))
        conflict = ConflictFacts(conflict_id=0, stream_id=stream, state="open", left=left.stream_id,
                                 right=right.stream_id)
    if not apply:
        return decision
    if verdict["winner_side"] is None:
        raise InvalidInput("no rule separates the two memories; resolve the conflict with a winner_id",
                           field="apply")
    if verdict["manual_review"] and authorization != AUTH_USER:
        raise Unauthorized("policy review_agent_conflicts: a person must apply a verdict between two "
                           "agent_generated memories", field="authorized")
    winner, loser = (left, right) if verdict["winner_side"] == "left" else (right, left)
    conflicts = [c for c in loser_conflicts if conflict is None or c.stream_id != conflict.stream_id]
    if conflict is not None:
        conflicts.insert(0, conflict)
    rule = verdict.get("rule") or "arbitration"
    return decision + decide_supersede(loser, winner, reason=f"arbitration: {rule}", authorization=authorization,
                                       rule=rule, policy=policy, conflicts=conflicts)
