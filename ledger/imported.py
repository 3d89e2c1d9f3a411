"""An imported memory meets this ledger's claims.

``ledger import`` appends events that another ledger decided: its sets are the disagreements it
knew of, not the ones the file makes with what this ledger holds. "The staging API listens on
port 9090" imported beside this ledger's "… on port 8080" would stay current side by side, with
no set and no leader. So each memory whose content came in with an import is decided once more
as a write of it would be (:func:`ledger.decide.collisions`): it opens or joins the set of each
claim key it disputes here, ranked by the same rules, and a settling policy settles it.

Only a memory held here before the import is disputed with: the file's memories among themselves
are as the exporting ledger decided them (deciding them again would judge its past writes by
today's rules, and an export imported into an empty ledger would not come out as it went in).
A memory it already shared a set with (here or in the exporting ledger: the import brought that
set along) is left out too: the pair was disputed before, and a person or the rules settled it
or still hold it open. Where the memory is in an open set the file brought and this ledger holds
another open set on the same key, the two are left apart (sets do not merge): a person settles
one of them, or the next write on the key joins one.
"""

from __future__ import annotations

import msgspec

from fact_ledger.ledger.claims import Claim
from fact_ledger.ledger.decide import collisions, set_key
from fact_ledger.ledger.facts import DEFAULT_POLICY, Candidate, ConflictFacts, Decision, MemoryFacts, NewId, Policy
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.settlement import SettleState, settle_with


class ImportedState(msgspec.Struct, frozen=True, kw_only=True):
    """What deciding an imported memory reads: the memory, its claims, the current claims of
    other memories sharing their keys, the unresolved sets of those keys, the memories it shared
    any set with (``partners``, by stream) and, under a settling policy, what settling reads."""

    memory: MemoryFacts
    claims: tuple[Claim, ...]
    candidates: tuple[Candidate, ...]
    sets: dict[str, ConflictFacts] = {}
    partners: frozenset[str] = frozenset()
    held: dict[str, str] = {}  # set key -> the unresolved set (stream) the memory is in already
    settle: SettleState | None = None


def decide(
    state: ImportedState, *, came_with: frozenset[str], policy: Policy = DEFAULT_POLICY, new_id: NewId = uuid7
) -> Decision:
    """The sets the imported memory opens or joins with memories held here before the import
    (``came_with``: the streams of every memory whose content came in with it); none when it
    disputes nothing new here."""
    memory = state.memory
    # A key whose set the memory is in already (the file brought it) but where the set found here
    # is another: joining it would leave two open sets for one fact, sharing members for good.
    claims = tuple(
        c
        for c in state.claims
        if (key := set_key(c)) not in state.held or (key in state.sets and state.sets[key].stream_id == state.held[key])
    )
    decision = collisions(
        memory,
        memory.stream_id,
        claims,
        state.candidates,
        sets=state.sets,
        skip=state.partners | came_with,
        policy=policy,
        new_id=new_id,
    )
    if not decision or state.settle is None:
        return decision
    return decision + settle_with(decision, state.settle, memory, policy)


__all__ = ["ImportedState", "decide"]
