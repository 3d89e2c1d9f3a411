"""``update``'s decision from one typed state, as ``remember``'s is (:mod:`ledger.remember`).

:class:`UpdateState` holds what the decision needs, read once inside the write transaction by
:func:`projections.write_state.update_state`: the memory's facts, the changes that differ from
what it holds, its claims after them with the claims sharing their keys and their sets, the sets
it is in, and what a settling policy reads. :func:`decide` turns it into the events.
"""

from __future__ import annotations

from typing import Any

import msgspec

from fact_ledger.ledger.claims import Claim
from fact_ledger.ledger.decide import decide_update
from fact_ledger.ledger.facts import (
    DEFAULT_POLICY,
    Candidate,
    ConflictFacts,
    Decision,
    MemoryFacts,
    Policy,
    facts_after,
)
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.events import MemoryUpdated
from fact_ledger.ledger.settlement import SettleState, settle_with


class UpdateState(msgspec.Struct, frozen=True, kw_only=True):
    """Everything ``update``'s decision reads, inside the write transaction.

    ``changes``: the requested fields that differ from the memory as it stands (empty: nothing
    to write); ``claims``: the memory's claims after the change (None when content and subject
    stay), with the ``candidates`` sharing their keys and the unresolved ``sets`` of those keys;
    ``conflicts``: the sets the memory is in; ``settle``: present when the policy settles."""

    memory: MemoryFacts
    changes: dict[str, Any]
    claims: tuple[Claim, ...] | None = None
    candidates: tuple[Candidate, ...] = ()
    sets: dict[str, ConflictFacts] = {}
    conflicts: tuple[ConflictFacts, ...] = ()
    settle: SettleState | None = None


def decide(
    state: UpdateState,
    *,
    expected_version: int | None,
    authorization: str,
    policy: Policy = DEFAULT_POLICY,
    new_id: Any = uuid7,
) -> Decision:
    """The events of one ``update`` with something to change, from its state alone."""
    decision = decide_update(
        state.memory,
        state.changes,
        expected_version=expected_version,
        authorization=authorization,
        claims=state.claims,
        candidates=state.candidates,
        conflicts=state.conflicts,
        sets=state.sets,
        policy=policy,
        new_id=new_id,
    )
    if state.settle is None or not state.claims:
        return decision
    change = decision[0][1]
    assert isinstance(change, MemoryUpdated)
    return decision + settle_with(decision, state.settle, facts_after(state.memory, change), policy)
