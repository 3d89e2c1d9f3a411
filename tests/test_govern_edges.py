"""The edges of the pure governance decisions (``ledger.govern``).

Each test builds the facts a decision takes (memories, claim sets, a verdict from the real
arbiter) and asserts on the events it returns or on the refusal it raises: its class and the
field it names. Covered: a decision on a memory that is no longer current, the refusals of
``resolve`` and ``judge``, which members a winner supersedes and which other sets they leave, and
how ``arbitrate`` records a verdict (the set it opens or reuses, its leader and key) and applies it.
"""

from __future__ import annotations

import pytest

from fact_ledger.ledger.arbiter import arbitrate
from fact_ledger.ledger.claims import Claim, explicit_claim
from fact_ledger.ledger.decide import set_key
from fact_ledger.ledger.errors import InvalidInput, Locked, Unauthorized
from fact_ledger.ledger.facts import ConflictFacts, MemoryFacts, Policy
from fact_ledger.ledger.govern import (
    decide_arbitrate,
    decide_confirm,
    decide_judge,
    decide_resolve,
    decide_retire,
    decide_supersede,
)
from fact_ledger.ledger.log.events import (
    AUTH_AGENT,
    AUTH_USER,
    ClaimCollided,
    ConflictMemberLeft,
    ConflictResolved,
    JudgmentSubmitted,
    Superseded,
)
from tests.ledger_facts import memory_facts

JAN = "2026-01-10T09:00:00.000000Z"
FEB = "2026-02-10T09:00:00.000000Z"
STRICT = Policy(locked_requires_user_channel=True)


def memory(n: int, **kw: object) -> MemoryFacts:
    return memory_facts(n, **{"subject": "staging", "event_time": JAN, "recorded_at": JAN, **kw})


def cset(stream: str, values: dict[str, str], state: str = "open") -> ConflictFacts:
    ids = {s: int(s[1:]) for s in values}
    return ConflictFacts(conflict_id=int(stream[1:]), stream_id=stream, state=state, values=dict(values), ids=ids)


def port(value: str) -> Claim:
    claim = explicit_claim("staging", "port", value)
    assert claim is not None
    return claim


def kinds(decision: list[tuple[str, object]]) -> list[tuple[str, str]]:
    return [(stream, type(event).__name__) for stream, event in decision]


def members_of(*ms: MemoryFacts) -> dict[str, MemoryFacts]:
    return {m.stream_id: m for m in ms}


# -- a memory that is no longer current ---------------------------------------------------------
@pytest.mark.parametrize("status", ["retired", "superseded"])
def test_confirming_or_retiring_a_memory_that_is_no_longer_current_is_refused(status: str) -> None:
    gone = memory(1, status=status)
    with pytest.raises(InvalidInput) as confirm:
        decide_confirm(gone, authorization=AUTH_USER)
    with pytest.raises(InvalidInput) as retire:
        decide_retire(gone, reason="obsolete", authorization=AUTH_USER)
    for refusal in (confirm.value, retire.value):
        assert refusal.field == "memory_id"
        assert refusal.details == {"memory_id": 1, "status": status}


def test_a_memory_cannot_be_superseded_by_one_that_is_no_longer_current() -> None:
    with pytest.raises(InvalidInput) as refused:
        decide_supersede(memory(1), memory(2, status="retired"), reason="newer", authorization=AUTH_AGENT)
    assert refused.value.field == "winner_id"
    assert refused.value.details["memory_id"] == 2


# -- resolve: refusals -------------------------------------------------------------------------
def test_resolve_refuses_an_unknown_resolution_by_its_own_field() -> None:
    conflict = cset("c7", {"m1": "5432", "m2": "5433"})
    with pytest.raises(InvalidInput) as refused:
        decide_resolve(
            conflict,
            winner=None,
            members=members_of(memory(1), memory(2)),
            resolution="merge",
            authorization=AUTH_AGENT,
        )
    assert refused.value.field == "resolution"


@pytest.mark.parametrize("resolution", [None, "winner"])
def test_resolve_without_a_winner_or_keep_all_asks_for_a_winner(resolution: str | None) -> None:
    conflict = cset("c7", {"m1": "5432", "m2": "5433"})
    with pytest.raises(InvalidInput) as refused:
        decide_resolve(
            conflict,
            winner=None,
            members=members_of(memory(1), memory(2)),
            resolution=resolution,
            authorization=AUTH_AGENT,
        )
    assert refused.value.field == "winner_id"


def test_resolve_refuses_a_winner_that_is_not_a_member() -> None:
    conflict = cset("c7", {"m1": "5432", "m2": "5433"})
    with pytest.raises(InvalidInput) as refused:
        decide_resolve(
            conflict,
            winner=memory(3),
            members=members_of(memory(1), memory(2)),
            resolution=None,
            authorization=AUTH_AGENT,
        )
    assert refused.value.field == "winner_id"
    assert "memory 3 is not a member of conflict 7" in str(refused.value)


def test_resolve_refuses_a_winner_that_is_no_longer_current() -> None:
    winner = memory(1, status="superseded")
    conflict = cset("c7", {"m1": "5432", "m2": "5433"})
    with pytest.raises(InvalidInput) as refused:
        decide_resolve(
            conflict,
            winner=winner,
            members=members_of(winner, memory(2)),
            resolution=None,
            authorization=AUTH_AGENT,
        )
    assert refused.value.field == "winner_id"
    assert refused.value.details["status"] == "superseded"


def test_resolve_without_authorisation_names_the_protected_loser_not_the_first_one() -> None:
    members = members_of(memory(1), memory(2), memory(3, protection="locked"))
    conflict = cset("c7", {"m1": "5432", "m2": "5433", "m3": "5434"})
    with pytest.raises(Locked) as refused:
        decide_resolve(conflict, winner=memory(1), members=members, resolution=None, authorization="")
    assert refused.value.details["memory_id"] == 3
    assert refused.value.field == "authorized"


def test_an_agent_resolves_against_a_locked_loser_unless_the_policy_asks_for_a_person() -> None:
    locked = memory(2, protection="locked", source_type="user_confirmed")
    members = members_of(memory(1), locked)
    decision = decide_resolve(
        cset("c7", {"m1": "5432", "m2": "5433"}),
        winner=memory(1),
        members=members,
        resolution=None,
        authorization=AUTH_AGENT,
    )
    assert kinds(decision) == [("m2", "Superseded"), ("c7", "ConflictResolved")]
    with pytest.raises(Unauthorized) as refused:
        decide_resolve(
            cset("c7", {"m1": "5432", "m2": "5433"}),
            winner=memory(1),
            members=members,
            resolution=None,
            authorization=AUTH_AGENT,
            policy=STRICT,
        )
    assert refused.value.details["memory_id"] == 2
    assert refused.value.field == "authorized"


# -- resolve: what a winner supersedes ----------------------------------------------------------
def test_a_winner_supersedes_only_the_members_whose_value_differs_from_its_own() -> None:
    members = members_of(memory(1), memory(2), memory(3))
    conflict = cset("c7", {"m1": "5432", "m2": "5433", "m3": "5432"})
    decision = decide_resolve(conflict, winner=memory(1), members=members, resolution=None, authorization=AUTH_AGENT)
    assert kinds(decision) == [("m2", "Superseded"), ("c7", "ConflictResolved")]
    superseded, resolved = decision[0][1], decision[1][1]
    assert isinstance(superseded, Superseded)
    assert (superseded.winner, superseded.rule, superseded.reason) == ("m1", "resolve_conflict", "conflict 7 resolved")
    assert isinstance(resolved, ConflictResolved)
    assert (resolved.winner, resolved.resolution, resolved.authorization) == ("m1", "winner", AUTH_AGENT)


def test_the_losers_leave_their_other_sets_and_settle_those_left_without_a_dispute() -> None:
    members = members_of(memory(1), memory(2), memory(3))
    conflict = cset("c7", {"m1": "5432", "m2": "5433", "m3": "5434"})
    # c8: m2 against m5 only -> settled for m5; c9: m3, m5 and m6 -> m3 leaves, m5 and m6 still disagree.
    c8 = cset("c8", {"m2": "a", "m5": "b"})
    c9 = cset("c9", {"m3": "a", "m5": "b", "m6": "c"})
    member_conflicts = {"m1": [conflict], "m2": [conflict, c8], "m3": [conflict, c9]}
    decision = decide_resolve(
        conflict,
        winner=memory(1),
        members=members,
        resolution=None,
        authorization=AUTH_USER,
        member_conflicts=member_conflicts,
    )
    assert kinds(decision) == [
        ("m2", "Superseded"),
        ("c8", "ConflictResolved"),
        ("m3", "Superseded"),
        ("c9", "ConflictMemberLeft"),
        ("c7", "ConflictResolved"),
    ]
    settled, left = decision[1][1], decision[3][1]
    assert isinstance(settled, ConflictResolved)
    assert (settled.winner, settled.resolution) == ("m5", "superseded")
    assert isinstance(left, ConflictMemberLeft)
    assert (left.member, left.reason) == ("m3", "conflict 7 resolved")


def test_keep_all_closes_the_set_as_it_is() -> None:
    decision = decide_resolve(
        cset("c7", {"m1": "5432", "m2": "5433"}),
        winner=None,
        members=members_of(memory(1), memory(2)),
        resolution="keep_all",
        authorization=AUTH_AGENT,
    )
    [(stream, event)] = decision
    assert stream == "c7" and isinstance(event, ConflictResolved)
    assert (event.winner, event.resolution, event.reason) == (None, "keep_all", "keep all values")


# -- judge --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("state", "winner", "pins", "field"),
    [
        ("resolved", 1, None, "conflict_id"),  # a settled set is not judged again
        ("open", 3, None, "winner_id"),  # the winner must be a member
        ("open", 1, {"m1": 1, "m3": 1}, "pins"),  # a pin must name a member
    ],
)
def test_a_judgment_outside_its_set_is_refused(
    state: str, winner: int, pins: dict[str, int] | None, field: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        decide_judge(
            cset("c7", {"m1": "5432", "m2": "5433"}, state=state),
            members_of(memory(1), memory(2)),
            winner=memory(winner),
            rationale="",
            pins=pins,
            judgment="j1",
        )
    assert refused.value.field == field


def test_a_judgment_is_pinned_to_every_members_version() -> None:
    [(stream, event)] = decide_judge(
        cset("c7", {"m1": "5432", "m2": "5433"}),
        members_of(memory(2, version=3), memory(1)),
        winner=memory(1),
        rationale="the runbook says so",
        pins={"m1": 1},
        judgment="j1",
    )
    assert stream == "c7" and isinstance(event, JudgmentSubmitted)
    assert (event.winner, event.pins, event.rationale) == ("m1", {"m1": 1, "m2": 3}, "the runbook says so")


# -- arbitrate ----------------------------------------------------------------------------------
def newer_left(left: MemoryFacts | None = None, right: MemoryFacts | None = None) -> tuple[MemoryFacts, MemoryFacts]:
    return left or memory(1, event_time=FEB), right or memory(2, event_time=JAN)


def arb(
    left: MemoryFacts,
    right: MemoryFacts,
    *,
    mark_conflict: bool = False,
    apply: bool = False,
    existing: ConflictFacts | None = None,
    loser_conflicts: tuple[ConflictFacts, ...] = (),
    left_claim: Claim | None = None,
    right_claim: Claim | None = None,
    policy: Policy | None = None,
    authorization: str = AUTH_AGENT,
) -> list[tuple[str, object]]:
    verdict = arbitrate(left.side(), right.side())
    return decide_arbitrate(
        left,
        right,
        verdict,
        left_claim=left_claim if left_claim is not None else port("5432"),
        right_claim=right_claim if right_claim is not None else port("5433"),
        same_subject=True,
        mark_conflict=mark_conflict,
        apply=apply,
        authorization=authorization,
        existing=existing,
        loser_conflicts=loser_conflicts,
        new_id=lambda: "c99",
        **({"policy": policy} if policy is not None else {}),
    )


def test_a_memory_cannot_be_arbitrated_against_itself() -> None:
    left = memory(1)
    with pytest.raises(InvalidInput) as refused:
        arb(left, left, mark_conflict=True)
    assert refused.value.field == "right_id"


@pytest.mark.parametrize("side", ["left_id", "right_id"])
def test_arbitrating_a_memory_that_is_no_longer_current_is_refused(side: str) -> None:
    gone = {"status": "retired"}
    left = memory(1, event_time=FEB, **(gone if side == "left_id" else {}))
    right = memory(2, **(gone if side == "right_id" else {}))
    with pytest.raises(InvalidInput) as refused:
        arb(left, right, mark_conflict=True)
    assert refused.value.field == side
    assert refused.value.details["status"] == "retired"


def test_a_verdict_only_asked_for_writes_nothing() -> None:
    assert arb(*newer_left()) == []


def test_marking_a_pair_opens_a_set_led_by_the_winner_under_the_shared_key() -> None:
    decision = arb(*newer_left(), mark_conflict=True)
    [(stream, event)] = decision
    assert stream == "c99" and isinstance(event, ClaimCollided)
    assert event.key == set_key(port("5432")) != ""
    assert event.verdict["leader"] == "m1"
    assert event.verdict["rule"] == "event_time"
    assert [(m.memory, m.value) for m in event.members] == [("m1", "5432"), ("m2", "5433")]


def test_a_pair_whose_claims_differ_in_key_opens_a_set_without_one() -> None:
    other = explicit_claim("staging", "host", "db1")
    assert other is not None
    [(_, event)] = arb(*newer_left(), mark_conflict=True, right_claim=other)
    assert isinstance(event, ClaimCollided)
    assert (event.key, event.attribute) == ("", "host")


def test_marking_a_pair_that_already_has_an_open_set_opens_no_second_one() -> None:
    existing = cset("c5", {"m1": "5432", "m2": "5433"})
    assert arb(*newer_left(), mark_conflict=True, existing=existing) == []


def test_a_resolved_set_between_the_pair_does_not_stop_a_new_one() -> None:
    existing = cset("c5", {"m1": "5432", "m2": "5433"}, state="resolved")
    assert kinds(arb(*newer_left(), mark_conflict=True, existing=existing)) == [("c99", "ClaimCollided")]


def test_applying_a_verdict_settles_the_pairs_set_first_then_the_losers_other_sets() -> None:
    existing = cset("c5", {"m1": "5432", "m2": "5433"})
    # The loser's sets as the facade reads them: the pair's own set (another copy) and one more.
    other = cset("c6", {"m2": "x", "m4": "y"})
    decision = arb(*newer_left(), apply=True, existing=existing, loser_conflicts=(cset("c5", existing.values), other))
    assert kinds(decision) == [("m2", "Superseded"), ("c5", "ConflictResolved"), ("c6", "ConflictResolved")]
    superseded, pair, rest = (event for _, event in decision)
    assert isinstance(superseded, Superseded)
    assert (superseded.winner, superseded.rule, superseded.reason) == ("m1", "event_time", "arbitration: event_time")
    assert isinstance(pair, ConflictResolved) and (pair.winner, pair.resolution) == ("m1", "winner")
    assert isinstance(rest, ConflictResolved) and (rest.winner, rest.resolution) == ("m4", "superseded")


def test_marking_and_applying_at_once_settles_the_new_set_and_the_losers_others() -> None:
    other = cset("c6", {"m2": "x", "m4": "y"})
    decision = arb(*newer_left(), mark_conflict=True, apply=True, loser_conflicts=(other,))
    assert kinds(decision) == [
        ("c99", "ClaimCollided"),
        ("m2", "Superseded"),
        ("c99", "ConflictResolved"),
        ("c6", "ConflictResolved"),
    ]


def test_applying_against_a_locked_loser_follows_the_user_channel_policy() -> None:
    left = memory(1, event_time=FEB, protection="locked", source_type="user_confirmed")
    right = memory(2, protection="locked", source_type="user_confirmed")
    with pytest.raises(Unauthorized) as refused:
        arb(left, right, apply=True, policy=STRICT)
    assert refused.value.details["memory_id"] == 2
    assert kinds(arb(left, right, apply=True, policy=STRICT, authorization=AUTH_USER)) == [("m2", "Superseded")]
