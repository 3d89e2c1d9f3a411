"""``remember``'s decision from one typed state: what the write read, then one pure function.

:class:`RememberState` holds everything the decision needs, read once inside the write
transaction by :func:`projections.write_state.remember_state`; :func:`decide` turns the command and
that state into the events — a sighting of an exact duplicate, a restatement, or a new memory with
its collisions, a retraction's effect and, under a settling policy, the settlements. The reply
reads its near-duplicates and cancellation candidates from the same state: nothing is read again
to decide, nothing decided twice.
"""

from __future__ import annotations

from typing import Any, TypeGuard

import msgspec

from fact_ledger.ledger.cancellation import Target
from fact_ledger.ledger.claims import Claim
from fact_ledger.ledger.decide import (
    ENDED,
    RememberCommand,
    decide_remember,
    decide_restatement,
    decide_sighting,
    writer_facts,
)
from fact_ledger.ledger.facts import DEFAULT_POLICY, Candidate, ConflictFacts, Decision, MemoryFacts, Policy
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.events import MemoryRetired
from fact_ledger.ledger.settlement import SettleState, settle_with


class RememberState(msgspec.Struct, frozen=True, kw_only=True):
    """Everything ``remember``'s decision and reply read, inside the write transaction.

    ``target``: the memory a retraction names (or a cancellation's words found); ``cancelling``:
    what a cancellation without ``ref_id`` matched; ``duplicate``: the exact duplicate;
    ``restated``: the memory this statement restates (not disputed), when there is one; the
    writer's ``claims``, the ``candidates`` sharing their keys and the unresolved ``sets`` of those
    keys; ``target_conflicts``: a retracted target's sets; ``replaced``: the newest memory the
    retracted target superseded (a pure cancellation brings it back); ``near``: near-duplicates
    for the reply; ``settle``: present when the policy settles; ``denied_by``: the denial that
    ended the value this write states, from a later event time (the write arrived late)."""

    target: MemoryFacts | None = None
    cancelling: tuple[Target, ...] = ()
    duplicate: MemoryFacts | None = None
    restated: MemoryFacts | None = None
    claims: tuple[Claim, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    sets: dict[str, ConflictFacts] = {}
    target_conflicts: tuple[ConflictFacts, ...] = ()
    replaced: MemoryFacts | None = None
    near: tuple[dict[str, Any], ...] = ()
    recorded_at: str = ""
    settle: SettleState | None = None
    denied_by: MemoryFacts | None = None


def absorbed(duplicate: MemoryFacts | None, cmd: RememberCommand, target: MemoryFacts | None) -> TypeGuard[MemoryFacts]:
    """The write is a sighting of its exact ``duplicate``: no claims, sets or near-duplicates to
    read (a retraction of that same memory is recorded as a new memory instead). A guard: where
    it holds, the checker knows there is a duplicate."""
    retracting = target if cmd.retracts else None
    return duplicate is not None and (retracting is None or retracting.stream_id != duplicate.stream_id)


def decide(
    cmd: RememberCommand, state: RememberState, *, new_stream: str, policy: Policy = DEFAULT_POLICY, new_id: Any = uuid7
) -> Decision:
    """The events of one ``remember``, from its command and its state alone."""
    if absorbed(state.duplicate, cmd, state.target):
        return decide_sighting(
            cmd, state.duplicate, target=state.target, target_conflicts=state.target_conflicts, policy=policy
        )
    if state.restated is not None:
        return decide_restatement(cmd, state.restated)
    if state.denied_by is not None:  # "… no longer …" was said after the time this write speaks of
        recorded = decide_remember(
            cmd,
            new_stream=new_stream,
            duplicate=None,
            target=state.target,
            claims=(),
            candidates=(),
            target_conflicts=state.target_conflicts,
            replaced=state.replaced,
            sets={},
            recorded_at=state.recorded_at,
            policy=policy,
            new_id=new_id,
        )
        ended = MemoryRetired(
            memory=new_stream, reason=ENDED, by=state.denied_by.stream_id, authorization=cmd.authorization
        )
        return [*recorded, (new_stream, ended)]
    decision = decide_remember(
        cmd,
        new_stream=new_stream,
        duplicate=None,
        target=state.target,
        claims=state.claims,
        candidates=state.candidates,
        target_conflicts=state.target_conflicts,
        replaced=state.replaced,
        sets=state.sets,
        recorded_at=state.recorded_at,
        policy=policy,
        new_id=new_id,
    )
    if state.settle is None:
        return decision
    return decision + settle_with(decision, state.settle, writer_facts(cmd, new_stream, state.recorded_at), policy)
