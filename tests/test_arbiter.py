"""Arbitration as a pure function (issue point 2): rule order, verdict shape and its properties."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from fact_ledger.ledger.arbiter import (
    RULE_ORDER,
    Side,
    arbitrate,
    arbitrate_set,
    leaders_first,
    portable,
    set_leaders,
    with_ids,
)

EXPECTED_ORDER = ["user_confirmed/locked protection", "event_time", "source_type", "confidence", "ingest_time"]


def side(memory_id: int, **kw: object) -> Side:
    base: dict[str, object] = {
        "source_type": "agent_generated",
        "protection": "normal",
        "event_time": "2025-07-01T00:00:00.000000Z",
        "confidence": 0.45,
        "recorded_at": "2025-07-10T00:00:00.000000Z",
    }
    base.update(kw)
    return Side(memory_id=memory_id, **base)  # type: ignore[arg-type]


def test_seed_example_newer_event_time_wins_without_review() -> None:
    old = side(1, event_time="2025-07-01T00:00:00.000000Z")
    new = side(2, event_time="2025-07-06T00:00:00.000000Z")
    verdict = arbitrate(old, new)
    assert verdict["winner_side"] == "right" and verdict["winner_id"] == 2 and verdict["loser_id"] == 1
    assert verdict["manual_review"] is False
    assert verdict["rule_order"] == EXPECTED_ORDER == RULE_ORDER
    assert verdict["rule"] == "event_time"
    assert "event_time" in verdict["reasons"][-1] and "decides" in verdict["reasons"][-1]
    assert set(verdict) >= {"winner_side", "winner_id", "loser_id", "manual_review", "reasons", "rule_order"}


def test_user_confirmed_beats_a_newer_agent_guess() -> None:
    confirmed = side(1, source_type="user_confirmed", protection="locked", event_time="2025-07-01T00:00:00.000000Z")
    guess = side(2, event_time="2025-08-01T00:00:00.000000Z", confidence=0.99)
    verdict = arbitrate(confirmed, guess)
    assert verdict["winner_id"] == 1 and verdict["rule"] == "user_confirmed/locked protection"
    assert verdict["reasons"][0].startswith("user_confirmed/locked protection: the left side is locked")


def test_each_rule_decides_when_the_earlier_ones_tie() -> None:
    assert arbitrate(side(1), side(2, source_type="document_extracted"))["rule"] == "source_type"
    assert arbitrate(side(1, confidence=0.9), side(2))["rule"] == "confidence"
    later = side(2, recorded_at="2025-07-11T00:00:00.000000Z")
    verdict = arbitrate(side(1), later)
    assert verdict["rule"] == "ingest_time" and verdict["winner_id"] == 2
    assert [r.split(":")[0] for r in verdict["reasons"]] == EXPECTED_ORDER


def test_no_rule_separates_identical_sides_manual_review() -> None:
    verdict = arbitrate(side(1), side(2))
    assert verdict["winner_side"] is None and verdict["winner_id"] is None and verdict["loser_id"] is None
    assert verdict["manual_review"] is True and verdict["rule"] is None


def test_policy_asks_review_for_two_agent_guesses_but_keeps_the_suggestion() -> None:
    old, new = side(1), side(2, event_time="2025-07-06T00:00:00.000000Z")
    assert arbitrate(old, new)["manual_review"] is False
    verdict = arbitrate(old, new, review_agent_conflicts=True)
    assert verdict["manual_review"] is True and verdict["winner_id"] == 2
    doc = side(2, source_type="document_extracted")
    assert arbitrate(old, doc, review_agent_conflicts=True)["manual_review"] is False


def test_portable_verdicts_carry_no_ids_and_get_them_back() -> None:
    verdict = arbitrate(side(7), side(9, event_time="2025-07-02T00:00:00.000000Z"))
    stored = portable(verdict)
    assert "winner_id" not in stored and "loser_id" not in stored
    assert with_ids(stored, 7, 9) == verdict


times = st.sampled_from([f"2025-07-0{d}T00:00:00.000000Z" for d in range(1, 4)])
sides = st.builds(
    Side,
    memory_id=st.integers(1, 10**6),
    source_type=st.sampled_from(["user_confirmed", "document_extracted", "agent_generated", "unknown"]),
    protection=st.sampled_from(["normal", "protected", "locked"]),
    event_time=times,
    confidence=st.sampled_from([0.1, 0.45, 0.7, 1.0]),
    recorded_at=times,
)
policy = st.booleans()


@settings(deadline=None, max_examples=200)
@given(sides, sides, policy)
def test_arbitration_is_deterministic(left: Side, right: Side, review: bool) -> None:
    assert arbitrate(left, right, review_agent_conflicts=review) == arbitrate(
        left, right, review_agent_conflicts=review
    )


@settings(deadline=None, max_examples=200)
@given(sides, sides, policy)
def test_swapping_sides_swaps_the_winner(left: Side, right: Side, review: bool) -> None:
    there = arbitrate(left, right, review_agent_conflicts=review)
    back = arbitrate(right, left, review_agent_conflicts=review)
    flip = {"left": "right", "right": "left", None: None}
    assert back["winner_side"] == flip[there["winner_side"]]
    assert back["winner_id"] == there["winner_id"] and back["loser_id"] == there["loser_id"]
    assert back["manual_review"] == there["manual_review"] and back["rule"] == there["rule"]


@settings(deadline=None, max_examples=200)
@given(sides, sides, policy)
def test_a_locked_side_always_beats_an_unlocked_one(left: Side, right: Side, review: bool) -> None:
    locked = Side(**{**{f: getattr(left, f) for f in Side.__struct_fields__}, "protection": "locked"})
    unlocked_protection = "normal" if right.protection == "locked" else right.protection
    unlocked = Side(**{**{f: getattr(right, f) for f in Side.__struct_fields__}, "protection": unlocked_protection})
    for a, b, winner in ((locked, unlocked, "left"), (unlocked, locked, "right")):
        verdict = arbitrate(a, b, review_agent_conflicts=review)
        assert verdict["winner_side"] == winner
        assert verdict["rule"] == "user_confirmed/locked protection"


# -- the rule order against an independent reference -------------------------------------------
# Written plainly from docs/design.md "Trust and arbitration", without the production helpers, so that
# a reordered, dropped or weakened rule in ledger/arbiter.py disagrees with it.
REFERENCE_TRUST = {"user_confirmed": 100, "document_extracted": 70, "agent_generated": 45, "unknown": 10}


def reference_winner(left: Side, right: Side) -> tuple[str | None, str | None]:
    """(winner side, deciding rule): the first rule that separates the sides wins."""

    def by_a_person(s: Side) -> bool:  # a label or lock an agent asserted counts for nothing here
        return s.confirmed_via == "user_channel"

    def protection(s: Side) -> int:
        if s.protection == "locked" and by_a_person(s):
            return 2  # a locked side beats everything short of another lock
        if (s.source_type == "user_confirmed" and by_a_person(s)) or s.protection == "protected":
            return 1  # user_confirmed or protected beats a side that is neither
        return 0

    def trust(s: Side) -> int:  # an agent's "user_confirmed" is trusted as the agent's own word
        asserted = s.source_type == "user_confirmed" and not by_a_person(s)
        return REFERENCE_TRUST["agent_generated" if asserted else s.source_type]

    def event_time(s: Side) -> datetime:
        return datetime.fromisoformat(s.event_time.replace("Z", "+00:00"))

    def recorded(s: Side) -> datetime:
        return datetime.fromisoformat(s.recorded_at.replace("Z", "+00:00"))

    rules = [
        ("user_confirmed/locked protection", protection),
        ("event_time", event_time),
        ("source_type", trust),
        ("confidence", lambda s: s.confidence),
        ("ingest_time", recorded),
    ]
    for name, key in rules:
        if key(left) > key(right):
            return "left", name
        if key(right) > key(left):
            return "right", name
    return None, None


# Few distinct values per field, so that ties happen and later rules get their turn, and rules
# often disagree (an older but more trusted side, a newer but less confident one, ...).
ref_times = st.sampled_from(
    ["2025-07-01T00:00:00.000000Z", "2025-07-01T09:30:00.000000Z", "2025-07-02T00:00:00.000000Z"]
)
ref_sides = st.builds(
    Side,
    memory_id=st.integers(1, 10**6),
    source_type=st.sampled_from(sorted(REFERENCE_TRUST)),
    protection=st.sampled_from(["normal", "protected", "locked"]),
    event_time=ref_times,
    confidence=st.sampled_from([0.1, 0.45, 0.7, 1.0]),
    recorded_at=ref_times,
    confirmed_via=st.sampled_from(["user_channel", "agent_asserted"]),
)


@settings(deadline=None, max_examples=300)
@given(ref_sides, ref_sides, policy)
def test_the_first_rule_that_separates_the_sides_wins(left: Side, right: Side, review: bool) -> None:
    expected_side, expected_rule = reference_winner(left, right)
    verdict = arbitrate(left, right, review_agent_conflicts=review)
    assert (verdict["winner_side"], verdict["rule"]) == (expected_side, expected_rule)
    ids = {"left": left.memory_id, "right": right.memory_id}
    expected_ids = (
        (None, None)
        if expected_side is None
        else (ids[expected_side], ids["right" if expected_side == "left" else "left"])
    )
    assert (verdict["winner_id"], verdict["loser_id"]) == expected_ids
    both_agents = left.source_type == right.source_type == "agent_generated"
    assert verdict["manual_review"] is (expected_side is None or (review and both_agents))
    if expected_rule is not None:
        decided = [r for r in verdict["reasons"] if r.endswith("this rule decides")]
        assert len(decided) == 1 and decided[0].startswith(f"{expected_rule}: the {expected_side} side")
    if expected_side is None:
        assert "no rule separates the two sides" in verdict["reasons"][-1]
    elif review and both_agents:
        assert "review_agent_conflicts" in verdict["reasons"][-1]


def test_rules_that_disagree_are_settled_by_the_earlier_one() -> None:
    """One pinned case per adjacent pair of rules, the earlier rule favouring the other side."""
    cases = [  # (left wins by the earlier rule, right is favoured by every later one)
        (
            side(1, protection="protected", event_time="2025-07-01T00:00:00.000000Z", confidence=0.1),
            side(2, event_time="2025-08-01T00:00:00.000000Z", source_type="document_extracted", confidence=1.0),
            "user_confirmed/locked protection",
        ),
        (
            side(1, event_time="2025-07-02T00:00:00.000000Z", source_type="unknown", confidence=0.1),
            side(2, source_type="document_extracted", confidence=1.0, recorded_at="2025-09-01T00:00:00.000000Z"),
            "event_time",
        ),
        (
            side(1, source_type="document_extracted", confidence=0.1),
            side(2, confidence=1.0, recorded_at="2025-09-01T00:00:00.000000Z"),
            "source_type",
        ),
        (side(1, confidence=0.9), side(2, confidence=0.8, recorded_at="2025-09-01T00:00:00.000000Z"), "confidence"),
    ]
    for left, right, rule in cases:
        verdict = arbitrate(left, right)
        assert (verdict["winner_id"], verdict["rule"]) == (1, rule)
        assert arbitrate(right, left)["winner_id"] == 1
    protected, normal = cases[0][0], cases[0][1]
    assert arbitrate(protected, normal)["reasons"] == [
        "user_confirmed/locked protection: the left side is protected and the right side is normal — this rule decides"
    ]
    assert arbitrate(normal, protected)["reasons"] == [
        "user_confirmed/locked protection: the right side is protected and the left side is normal — this rule decides"
    ]
    confirmed = side(3, source_type="user_confirmed")
    assert arbitrate(normal, confirmed)["reasons"][0].startswith(
        "user_confirmed/locked protection: the right side is user_confirmed and the left side is normal"
    )


def test_a_stored_verdict_without_manual_review_reads_back_by_its_winner() -> None:
    assert with_ids({"winner_side": None}, 1, 2)["manual_review"] is True
    assert with_ids({"winner_side": "left"}, 1, 2) == {
        "winner_side": "left",
        "winner_id": 1,
        "loser_id": 2,
        "manual_review": False,
        "reasons": [],
        "rule_order": EXPECTED_ORDER,
        "rule": None,
    }


def test_a_set_under_another_rule_order_is_led_by_that_orders_winner() -> None:
    newer_guess = side(1, event_time="2025-08-01T00:00:00.000000Z")
    older_document = side(2, source_type="document_extracted", confidence=0.7)
    fixed = arbitrate_set([newer_guess, older_document], review_agent_conflicts=False)
    assert (fixed["leader_id"], fixed["rule"]) == (1, "event_time")
    trust_first = [RULE_ORDER[0], RULE_ORDER[2], RULE_ORDER[1], RULE_ORDER[3], RULE_ORDER[4]]
    other = arbitrate_set([newer_guess, older_document], review_agent_conflicts=False, rule_order=trust_first)
    assert (other["leader_id"], other["rule"], other["manual_review"]) == (2, "source_type", False)
    assert other["ranking"] == [2, 1] and other["rule_order"] == trust_first


def test_a_set_of_one_member_is_led_by_it_without_review() -> None:
    verdict = arbitrate_set([side(7)], review_agent_conflicts=True)
    assert (verdict["leader_id"], verdict["winner_id"], verdict["manual_review"], verdict["ranking"]) == (
        7,
        7,
        False,
        [7],
    )


def test_a_leader_already_placed_is_not_placed_again() -> None:
    assert leaders_first([3, 5], {5: 3}) == [3, 5]
    assert leaders_first([5, 3], {5: 3}) == [3, 5]
    assert leaders_first([5, 9, 3], {5: 3, 9: 3}) == [3, 5, 9]


def test_a_tie_between_two_labels_names_both() -> None:
    """An agent's "user_confirmed" counts as 45 like agent_generated: the tie said
    "user_confirmed (45) on both sides" when the other side was agent_generated."""
    when = "2026-01-01T00:00:00.000000Z"
    same = {"protection": "normal", "event_time": when, "confidence": 0.5}
    asserted = Side(memory_id=1, source_type="user_confirmed", recorded_at=when, confirmed_via="agent_asserted", **same)
    agent = Side(memory_id=2, source_type="agent_generated", recorded_at="2026-01-03T00:00:00.000000Z", **same)
    reasons = dict(r.split(": ", 1) for r in arbitrate(asserted, agent)["reasons"])
    assert reasons["source_type"] == "tie (user_confirmed (45) and agent_generated (45) rank the same)"
    assert reasons["confidence"] == "tie (0.5 on both sides)"


PORT = (("staging api", "port"), "number", "8080")


def test_set_leaders_names_the_rules_leader_of_each_key_with_two_values() -> None:
    old, new, same = side(1, event_time="2026-01-01T00:00:00Z"), side(2, event_time="2026-02-01T00:00:00Z"), side(3)
    other = (("deploys", "day"), "when", "fri")
    members = [
        (old, [PORT, other]),
        (new, [(PORT[0], "number", "9090")]),
        (same, [(other[0], "when", "fri")]),  # one value on its key: no set
    ]
    assert set_leaders(members) == {1: 2}
    # "$8,080" and "8080" state one value: no set between them
    assert set_leaders([(old, [PORT]), (new, [(PORT[0], "number", "8080 usd")])]) == {}


def test_a_member_stating_a_key_twice_is_one_member() -> None:
    old, new = side(1, event_time="2026-01-01T00:00:00Z"), side(2, event_time="2026-02-01T00:00:00Z")
    nine = (PORT[0], "number", "9090")
    members = [(old, [PORT]), (new, [nine, nine])]  # the leader twice tied with itself: no leader
    assert set_leaders(members) == {1: 2}


def test_a_set_is_two_members_that_differ_whichever_comes_first() -> None:
    """A bare number is the same value as one with a unit, yet two units differ: "8080", "$8080"
    and "€8080" are a set (as the dollar and euro claims collide), whichever member is read first."""
    sides = [side(i, event_time=f"2026-01-0{i}T00:00:00Z") for i in (1, 2, 3)]
    values = ["8080", "8080 usd", "8080 eur"]
    for first in range(3):
        order = [*range(first, 3), *range(first)]
        members = [(sides[i], [(PORT[0], "number", values[i])]) for i in order]
        assert set_leaders(members) == {1: 3, 2: 3}, order


def test_set_leaders_names_none_for_a_tie() -> None:
    a, b = side(1), side(2)
    assert arbitrate_set([a, b], review_agent_conflicts=False)["leader_id"] is None
    assert set_leaders([(a, [PORT]), (b, [(PORT[0], "number", "9090")])]) == {}


@given(st.permutations(list(range(1, 6))), st.lists(st.sampled_from(["8080", "9090", "7070"]), min_size=5, max_size=5))
def test_set_leaders_agrees_with_arbitrate_set_whatever_the_order(order: list[int], values: list[str]) -> None:
    sides = {i: side(i, event_time=f"2026-01-0{i}T00:00:00Z") for i in order}
    members = [(sides[i], [(PORT[0], "number", values[i - 1])]) for i in order]
    leader_of = set_leaders(members)
    if len(set(values)) == 1:
        assert leader_of == {}
    else:
        expected = arbitrate_set(list(sides.values()), review_agent_conflicts=False)["leader_id"]
        assert set(leader_of.values()) == {expected} and expected not in leader_of
        assert set(leader_of) == set(sides) - {expected}
