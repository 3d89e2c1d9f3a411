"""Arbitration: which of two memories wins, by five rules in a fixed order. A pure function.

The rules (docs/design.md "Trust and arbitration", kept exactly):

1. user_confirmed/locked protection — a locked side beats an unlocked one; short of locks, a
   user_confirmed (or protected) side beats one that is neither;
2. event_time — the fact that became true later wins;
3. source_type — the more trusted source wins (user_confirmed 100 … unknown 10);
4. confidence — the higher confidence wins;
5. ingest_time — the memory the ledger learned later wins.

A ``user_confirmed`` label or a lock counts on rule 1 (and the label's trust on rule 3) only when
a person gave it, through the user channel (``Side.confirmed_via``): an agent that asserts the
label is ranked as the agent it is, so the label cannot be faked through the agent's tools.

The first rule that separates the sides decides; the reasons name it. When none does, the
verdict asks for manual review and names no winner. The policy ``review_agent_conflicts`` also
asks for review when both sides are agent_generated — the winner the rules found is kept as a
suggestion. Swapping the sides swaps the winner (every rule compares one side's key with the
other's), and the same inputs always give the same verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import combinations
from typing import Any

import msgspec

from fact_ledger.ledger.log.events import AUTH_USER as USER_CHANNEL
from fact_ledger.ledger.normalize import same_value
from fact_ledger.ledger.trust import effective_trust

RULE_ORDER = ["user_confirmed/locked protection", "event_time", "source_type", "confidence", "ingest_time"]


class Side(msgspec.Struct, frozen=True, kw_only=True):
    """What arbitration looks at in a memory."""

    memory_id: int
    source_type: str
    protection: str
    event_time: str  # canonical UTC text: string order is time order
    confidence: float
    recorded_at: str
    confirmed_via: str = USER_CHANNEL  # who vouched for a user_confirmed label or a lock


def user_backed(side: Side) -> bool:
    """A user_confirmed label or a lock counts only when a person gave it (the user channel):
    an agent asserting it keeps the label, but ranks as the agent it is."""
    return side.confirmed_via == USER_CHANNEL


def _protection_rank(side: Side) -> int:
    if side.protection == "locked" and user_backed(side):
        return 2
    confirmed = side.source_type == "user_confirmed" and user_backed(side)
    return 1 if confirmed or side.protection == "protected" else 0


def _protection_label(side: Side) -> str:
    if side.protection == "locked" and user_backed(side):
        return "locked"
    if side.source_type == "user_confirmed":
        return "user_confirmed" if user_backed(side) else "user_confirmed (agent_asserted)"
    return side.protection


def _trust(side: Side) -> int:
    """Rule 3: an agent-asserted user_confirmed label is trusted as the agent's own word."""
    return effective_trust(side.source_type, side.confirmed_via)


_Rule = tuple[str, Callable[[Side], Any], Callable[[Side], str]]
_RULES: tuple[_Rule, ...] = (
    (RULE_ORDER[0], _protection_rank, _protection_label),
    (RULE_ORDER[1], lambda s: s.event_time, lambda s: s.event_time),
    (RULE_ORDER[2], _trust, lambda s: f"{s.source_type} ({_trust(s)})"),
    (RULE_ORDER[3], lambda s: round(s.confidence, 9), lambda s: f"{s.confidence:g}"),
    (RULE_ORDER[4], lambda s: s.recorded_at, lambda s: s.recorded_at),
)
_WINS_BECAUSE = {
    RULE_ORDER[0]: "is {w} and the {l_side} side is {l}",
    RULE_ORDER[1]: "has the newer event_time ({w} > {l})",
    RULE_ORDER[2]: "comes from the more trusted source ({w} > {l})",
    RULE_ORDER[3]: "has the higher confidence ({w} > {l})",
    RULE_ORDER[4]: "was ingested later ({w} > {l})",
}


_BY_NAME = {rule[0]: rule for rule in _RULES}


def _rules(rule_order: Sequence[str] | None) -> tuple[_Rule, ...]:
    """The rules in ``rule_order`` (a permutation of :data:`RULE_ORDER`; None: the fixed order).
    Only a what-if asks for another order (``ledger.whatif``); decisions never do."""
    return _RULES if rule_order is None else tuple(_BY_NAME[name] for name in rule_order)


def rank_key(side: Side, rule_order: Sequence[str] | None = None) -> tuple[Any, ...]:
    """The rules' keys in order: a side beats another exactly when its key is greater."""
    return tuple(key(side) for _, key, _ in _rules(rule_order))


def arbitrate(
    left: Side,
    right: Side,
    *,
    review_agent_conflicts: bool = False,
    names: tuple[str, str] = ("left", "right"),
    rule_order: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The verdict object of docs/contract.md (plus ``rule``: the deciding rule, or null).

    ``names`` only change how the reasons call the two sides (a claim set names members).
    """
    reasons: list[str] = []
    winner_side: str | None = None
    deciding: str | None = None
    for name, key, label in _rules(rule_order):
        lk, rk = key(left), key(right)
        if lk == rk:
            said = label(left), label(right)
            tie = f"{said[0]} on both sides" if said[0] == said[1] else f"{said[0]} and {said[1]} rank the same"
            reasons.append(f"{name}: tie ({tie})")
            continue
        winner_side = "left" if lk > rk else "right"
        win, lose = (left, right) if winner_side == "left" else (right, left)
        loser_side = "right" if winner_side == "left" else "left"
        named = {"left": names[0], "right": names[1]}
        reasons.append(
            f"{name}: the {named[winner_side]} side "
            + _WINS_BECAUSE[name].format(w=label(win), l=label(lose), l_side=named[loser_side])
            + " — this rule decides"
        )
        deciding = name
        break
    manual_review = winner_side is None
    if manual_review:
        reasons.append("no rule separates the two sides: a person should decide")
    elif review_agent_conflicts and left.source_type == right.source_type == "agent_generated":
        manual_review = True
        reasons.append(
            "both sides are agent_generated and policy review_agent_conflicts asks a person to "
            "confirm the suggested winner"
        )
    winner = None if winner_side is None else (left if winner_side == "left" else right)
    loser = None if winner_side is None else (right if winner_side == "left" else left)
    return {
        "winner_side": winner_side,
        "winner_id": winner.memory_id if winner else None,
        "loser_id": loser.memory_id if loser else None,
        "manual_review": manual_review,
        "reasons": reasons,
        "rule_order": list(rule_order or RULE_ORDER),
        "rule": deciding,
    }


def arbitrate_set(
    sides: Sequence[Side], *, review_agent_conflicts: bool, rule_order: Sequence[str] | None = None
) -> dict[str, Any]:
    """The verdict over a claim set's members: the leader is the member that beats every other.

    The rules are a lexicographic order, so the leader is the first of the members sorted by
    :func:`rank_key`, and it beats every other exactly when it beats the runner-up: the reasons
    are that comparison. A tie at the top (no rule separates the first two) names no leader and
    asks for manual review, as a tied pair does. ``ranking`` lists the members best first (ties
    by memory id, newest first, only to make the order stable).
    """
    ranked = sorted(sides, key=lambda s: (rank_key(s, rule_order), s.memory_id), reverse=True)
    ids = [s.memory_id for s in ranked]
    if len(ranked) < 2:
        leader = ids[0] if ids else None
        return {
            "winner_id": leader,
            "leader_id": leader,
            "manual_review": False,
            "rule": None,
            "reasons": [],
            "rule_order": list(rule_order or RULE_ORDER),
            "ranking": ids,
        }
    first, second = ranked[0], ranked[1]
    pair = arbitrate(
        first,
        second,
        review_agent_conflicts=review_agent_conflicts,
        names=(f"#{first.memory_id}", f"#{second.memory_id}"),
        rule_order=rule_order,
    )
    leader = first.memory_id if pair["winner_side"] == "left" else None
    return {
        "winner_id": leader,
        "leader_id": leader,
        "manual_review": pair["manual_review"],
        "rule": pair["rule"],
        "reasons": pair["reasons"],
        "rule_order": list(rule_order or RULE_ORDER),
        "ranking": ids,
    }


def leaders_first(ids: Sequence[int], leader_of: Mapping[int, int | None]) -> list[int]:
    """Search order with each claim set's leader ahead of its challengers.

    A challenger never outranks its set's leader when both answer the query: the leader moves up
    to the place of its first challenger, the rest keep their order. A challenger whose leader
    is not among ``ids`` (the query matched only the challenger's wording) keeps its place.
    """
    present = set(ids)
    placed: set[int] = set()
    out: list[int] = []
    for memory_id in ids:
        if memory_id in placed:
            continue
        leader = leader_of.get(memory_id)
        if leader is not None and leader != memory_id and leader in present and leader not in placed:
            out.append(leader)
            placed.add(leader)
        out.append(memory_id)
        placed.add(memory_id)
    return out


def leaders_first_scored(
    scored: Sequence[tuple[int, float]], leader_of: Mapping[int, int | None]
) -> list[tuple[int, float]]:
    """:func:`leaders_first` over ``(memory_id, score)`` pairs, best first: a leader moved up takes
    its challenger's score, so scores still fall down the list."""
    score_of = dict(scored)
    out: list[tuple[int, float]] = []
    for memory_id in leaders_first([m for m, _ in scored], leader_of):
        score = score_of[memory_id]
        if out and score > out[-1][1]:
            out[-1] = (out[-1][0], score)
        out.append((memory_id, score))
    return out


def set_leaders(members: Sequence[tuple[Side, Sequence[tuple[Hashable, str, str]]]]) -> dict[int, int]:
    """Per memory, the leader of a claim set it forms with others of ``members``: what the claim
    sets of the current read model give :func:`leaders_first`, for memories as they stood at an
    as-of point, where no set is stored. Each member is a side and its claims as ``(key, kind,
    normalised value)``; a key is a set when two of its members state values that differ (as two
    claims collide), and a set whose top is tied names no leader. The policy that asks a person to
    review agents' disagreements keeps the rules' leader as its suggestion, so it is not asked."""
    by_key: dict[Hashable, dict[int, tuple[Side, str, str]]] = {}
    for side, claims in members:
        for key, kind, value in claims:  # a member stating a key twice is one member of its set
            by_key.setdefault(key, {}).setdefault(side.memory_id, (side, kind, value))
    leader_of: dict[int, int] = {}
    for by_member in by_key.values():
        stating = list(by_member.values())
        if all(same_value(kind, value, other) for (_, kind, value), (_, _, other) in combinations(stating, 2)):
            continue  # one member, or every pair states one value
        leader = arbitrate_set([side for side, _, _ in stating], review_agent_conflicts=False)["leader_id"]
        for side, _, _ in stating:
            if leader is not None and side.memory_id != leader:
                leader_of.setdefault(side.memory_id, leader)
    return leader_of


def portable(verdict: dict[str, Any]) -> dict[str, Any]:
    """The verdict as stored in an event: no integer ids (they differ in another ledger)."""
    return {k: v for k, v in verdict.items() if k not in ("winner_id", "loser_id", "leader_id", "ranking")}


def with_ids(verdict: dict[str, Any], left_id: int | None, right_id: int | None) -> dict[str, Any]:
    """A stored (portable) verdict with the ids of this ledger filled back in."""
    side = verdict.get("winner_side")
    winner, loser = {"left": (left_id, right_id), "right": (right_id, left_id)}.get(side or "", (None, None))
    return {
        "winner_side": side,
        "winner_id": winner,
        "loser_id": loser,
        "manual_review": verdict.get("manual_review", side is None),
        "reasons": verdict.get("reasons", []),
        "rule_order": verdict.get("rule_order", list(RULE_ORDER)),
        "rule": verdict.get("rule"),
    }
