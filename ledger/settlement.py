"""Automatic settlement of claim sets (policies ``settle_changes``, on by default, and
``auto_settle``, off by default). A pure decision.

``settle_changes`` settles only a *change*: a set whose leader wins by rule 2 (event time) and
became true at least :data:`CHANGE_HORIZON_S` after every other member, and no member it would
supersede is guarded (a guarded member may lead the change). "The staging port is
8080" in January and "… moved to 9090" in April are one fact that changed; the April value
leads and the January one is superseded, so the fact holds one active value. Two values stated
within the horizon of each other are a disagreement, not a change: the set stays open for the
rules' ranking and a person (as do sets decided by any other rule). Measured on the fact stream
of ``tools/eval/stream`` (docs/governance.md): without it 0.32 of the facts held more than one
active value and a stale value was ranked above the current one for a fifth of the changed facts.

With ``auto_settle`` on, a write that opens or joins a claim set settles it in the same decision when
a rule decides the set's verdict (no manual review) and no member is protected, locked or
``user_confirmed``: every member holding another value than the leader is superseded by the
leader — each ``Superseded`` names the deciding rule and carries ``authorization: "policy"`` —
and the set is resolved with ``resolution: "policy"``. Status-like facts (a port, the on-call
person, the current sprint) then keep one current value without a person, and the log still
says which rule decided. What a person vouched for, or what no rule separates, is left for a
person: the set stays open exactly as without the policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from fact_ledger.ledger.arbiter import arbitrate_set
from fact_ledger.ledger.clock import to_datetime
from fact_ledger.ledger.decide import supersede_losers
from fact_ledger.ledger.facts import ConflictFacts, Decision, MemoryFacts, Policy
from fact_ledger.ledger.log.events import AUTH_POLICY, ClaimCollided, ConflictMemberLeft, ConflictResolved

CHANGE_HORIZON_S = 3600  # a value stated this long after every other one is a change, not a disagreement
POLICY_REASON = "settled by policy auto_settle: "
CHANGE_REASON = "settled by policy settle_changes: "


def guarded(memory: MemoryFacts) -> bool:
    """A member no policy may supersede: protected, locked, or labelled user_confirmed (even an
    agent's label: the set then waits for a person instead of settling against it)."""
    return memory.protection != "normal" or memory.source_type == "user_confirmed"


def settle_by_policy(
    decision: Decision,
    *,
    members: Mapping[str, MemoryFacts],
    sets: Mapping[str, ConflictFacts],
    other_sets: Mapping[str, Sequence[ConflictFacts]],
    review_agent_conflicts: bool = False,
    changes_only: bool = False,
    several_facts: frozenset[str] | set[str] = frozenset(),
) -> Decision:
    """The settlements for the claim sets that ``decision`` opens or joins (events to append after it).

    ``sets``: each unresolved set the write may join, by stream, with *all* its current members
    and their values; ``members``: facts of the memories in those sets, the writer as the decision
    leaves it — a set with a member missing here is left alone (the caller need not read the
    members of a set it knows is guarded); ``other_sets``: each member's other unresolved sets (a
    superseded member leaves them too); ``changes_only``: settle only sets whose leader is a
    change (rule 2, by :data:`CHANGE_HORIZON_S` or more) — the ``settle_changes`` policy;
    ``several_facts``: members that state other facts too: a set that would supersede one stays
    open for a person (superseding a note of several facts hid the ones that did not change).
    """
    known = _after(decision, sets, other_sets)
    touched = list(
        dict.fromkeys(
            e.conflict for _, e in decision if isinstance(e, ClaimCollided) and (not e.joins or e.conflict in sets)
        )
    )
    out: Decision = []
    for stream in touched:
        conflict = known[stream]  # a join's set is in ``sets``, an opened one comes from its event
        if conflict.state == "resolved" or not conflict.disputed():
            continue
        facts = [members.get(s) for s in conflict.values]
        if any(m is None or (guarded(m) and not changes_only) for m in facts):
            continue
        sides = {m.memory_id: s for s, m in zip(conflict.values, facts, strict=True) if m is not None}
        verdict = arbitrate_set(
            [m.side() for m in facts if m is not None], review_agent_conflicts=review_agent_conflicts
        )
        if verdict["manual_review"] or verdict["leader_id"] is None:
            continue
        winner, rule = sides[verdict["leader_id"]], verdict["rule"]
        losers = [s for s, v in conflict.values.items() if v != conflict.values[winner]]
        if changes_only and (
            not is_change(rule, winner, conflict.values, members) or any(guarded(members[s]) for s in losers)
        ):
            continue  # a guarded value may lead a change, never be superseded by one
        if any(s in several_facts for s in losers):
            continue  # superseding it would retire its other facts with this one
        reason = f"{CHANGE_REASON if changes_only else POLICY_REASON}{rule}"
        theirs = {loser: [known[c] for c in _streams_of(loser, known) if c != stream] for loser in losers}
        out += supersede_losers(losers, winner, rule=rule, reason=reason, authorization=AUTH_POLICY, other_sets=theirs)
        out.append(
            (
                stream,
                ConflictResolved(
                    conflict=stream, winner=winner, resolution="policy", reason=reason, authorization=AUTH_POLICY
                ),
            )
        )
        conflict.state = "resolved"
    return out


def is_change(rule: str, winner: str, values: Mapping[str, str], members: Mapping[str, MemoryFacts]) -> bool:
    """The leader won by event time and every member holding another value became true at
    least :data:`CHANGE_HORIZON_S` before it."""
    if rule != "event_time":
        return False
    lead = to_datetime(members[winner].event_time)
    return all(
        (lead - to_datetime(members[s].event_time)).total_seconds() >= CHANGE_HORIZON_S
        for s, v in values.items()
        if v != values[winner]
    )


def _after(
    decision: Decision, sets: Mapping[str, ConflictFacts], other_sets: Mapping[str, Sequence[ConflictFacts]]
) -> dict[str, ConflictFacts]:
    """Every set the settlement may touch, as ``decision`` leaves it (copies: the inputs stay as given)."""
    known: dict[str, ConflictFacts] = {}
    for conflict in (*sets.values(), *(c for group in other_sets.values() for c in group)):
        if conflict.stream_id not in known:  # ``sets`` first: the sets being joined as given
            known[conflict.stream_id] = msgspec.structs.replace(
                conflict, values=dict(conflict.values), ids=dict(conflict.ids)
            )
    for stream, event in decision:
        if isinstance(event, ClaimCollided) and (event.conflict in known or not event.joins):
            conflict = known.setdefault(
                event.conflict, ConflictFacts(conflict_id=0, stream_id=stream, state="open", key=event.key)
            )
            conflict.values.update({m.memory: m.norm for m in event.members})
        elif isinstance(event, ConflictMemberLeft) and event.conflict in known:
            known[event.conflict].values.pop(event.member, None)
        elif isinstance(event, ConflictResolved) and event.conflict in known:
            known[event.conflict].state = "resolved"
    return known


def _streams_of(member: str, known: Mapping[str, ConflictFacts]) -> list[str]:
    """The unresolved sets (streams) ``member`` is in, in a stable order."""
    return [s for s, c in known.items() if c.state != "resolved" and member in c.values]


class SettleState(msgspec.Struct, frozen=True, kw_only=True):
    """What a settling policy reads about the sets a write may open or join: each set whole (by
    stream), the facts of their members (a guarded set's are not read), each member's other sets,
    and which members state other facts too."""

    sets: dict[str, ConflictFacts]
    members: dict[str, MemoryFacts]
    other_sets: dict[str, list[ConflictFacts]]
    several_facts: frozenset[str] = frozenset()  # members that state other facts too (never superseded)
    writer_several: bool = False  # the writer states other facts too


def settle_with(decision: Decision, settle: SettleState, writer: MemoryFacts, policy: Policy) -> Decision:
    """The settlements ``policy`` makes of what ``decision`` opens or joins, from what a write read
    (``settle``) and the writer as its decision leaves it: ``auto_settle`` settles every set the
    rules decide, ``settle_changes`` only those whose leader is a change."""
    return settle_by_policy(
        decision,
        members={**settle.members, writer.stream_id: writer},
        sets=settle.sets,
        other_sets=settle.other_sets,
        review_agent_conflicts=policy.review_agent_conflicts,
        changes_only=not policy.auto_settle,
        several_facts=settle.several_facts | ({writer.stream_id} if settle.writer_several else set()),
    )
