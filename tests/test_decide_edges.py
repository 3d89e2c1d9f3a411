"""The edges of the pure write decisions (``ledger.decide``, ``ledger.facts``, ``ledger.trust``).

Each test builds the command and the state a decision takes and asserts on the events (or the
facts) it returns: which memory a retraction retires and why, which sets a departing member
leaves or settles and for whom, which claims collide, and what the writer looks like to the
rankings. One test runs the shipped policy default in a subprocess (tests/conftest.py pins
review mode in this process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fact_ledger.ledger.claims import Claim, explicit_claim
from fact_ledger.ledger.decide import (
    RETRACTED,
    RememberCommand,
    decide_remember,
    decide_update,
    leave_or_dissolve,
    set_key,
    settle,
    supersede_losers,
    writer_facts,
)
from fact_ledger.ledger.errors import InvalidInput, Locked
from fact_ledger.ledger.facts import Candidate, ConflictFacts, MemoryFacts, facts_after
from fact_ledger.ledger.log.events import (
    AUTH_AGENT,
    AUTH_USER,
    ClaimCollided,
    ConflictMemberLeft,
    ConflictResolved,
    DuplicateSighted,
    MemoryRecorded,
    MemoryRetired,
    MemoryUpdated,
    SetMember,
    Superseded,
)
from fact_ledger.ledger.trust import default_protection
from tests.ledger_facts import memory_facts

NOW = "2026-03-01T12:00:00.000000Z"
JAN = "2026-01-10T09:00:00.000000Z"


def memory(n: int, **kw: object) -> MemoryFacts:
    return memory_facts(n, **{"event_time": JAN, "recorded_at": JAN, **kw})


def port(value: str) -> Claim:
    claim = explicit_claim("staging", "port", value)
    assert claim is not None
    return claim


def cset(stream: str, values: dict[str, str], state: str = "open") -> ConflictFacts:
    return ConflictFacts(conflict_id=int(stream[1:]), stream_id=stream, state=state, values=dict(values))


def kinds(decision: list[tuple[str, object]]) -> list[tuple[str, str]]:
    return [(stream, type(event).__name__) for stream, event in decision]


# -- trust -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source_type", "authorization", "protection"),
    [
        ("user_confirmed", AUTH_USER, "locked"),
        ("user_confirmed", AUTH_AGENT, "normal"),
        ("user_confirmed", "", "normal"),
        ("agent_generated", AUTH_USER, "normal"),
        ("document_extracted", AUTH_USER, "normal"),
        ("agent_generated", "", "normal"),
    ],
)
def test_only_a_person_confirming_locks_a_new_memory(source_type: str, authorization: str, protection: str) -> None:
    assert default_protection(source_type, authorization) == protection
    cmd = RememberCommand(content="x", source_type=source_type, authorization=authorization, event_time=NOW)
    [(_, event)] = decide_remember(cmd, new_stream="new", duplicate=None, target=None)
    assert isinstance(event, MemoryRecorded) and event.protection == protection


# -- remember: references, retractions --------------------------------------------------------
def test_a_memory_that_only_refers_to_another_retires_nothing() -> None:
    cmd = RememberCommand(content="See also the port note.", event_time=NOW, ref_id=1)
    target = memory(1, protection="locked")
    decision = decide_remember(cmd, new_stream="new", duplicate=None, target=target)
    assert kinds(decision) == [("new", "MemoryRecorded")]
    recorded = decision[0][1]
    assert isinstance(recorded, MemoryRecorded) and recorded.ref == "m1" and recorded.retracts is False


def test_a_reference_still_collides_with_what_it_refers_to() -> None:
    cmd = RememberCommand(content="staging port is 9090", event_time=NOW, ref_id=1)
    target = memory(1)
    cand = Candidate(other=target, claim=port("8080"))
    decision = decide_remember(
        cmd,
        new_stream="new",
        duplicate=None,
        target=target,
        claims=[port("9090")],
        candidates=[cand],
        new_id=lambda: "c7",
    )
    assert kinds(decision) == [("new", "MemoryRecorded"), ("c7", "ClaimCollided")]
    collided = decision[1][1]
    assert isinstance(collided, ClaimCollided)
    assert [m.memory for m in collided.members] == ["m1", "new"]


def test_a_retraction_never_collides_with_the_memory_it_retires() -> None:
    cmd = RememberCommand(content="No: staging port is 9090", event_time=NOW, ref_id=1, retracts=True)
    target = memory(1)
    other = memory(2)
    candidates = [Candidate(other=target, claim=port("8080")), Candidate(other=other, claim=port("7070"))]
    decision = decide_remember(
        cmd,
        new_stream="new",
        duplicate=None,
        target=target,
        claims=[port("9090")],
        candidates=candidates,
        new_id=lambda: "c7",
    )
    assert kinds(decision) == [("new", "MemoryRecorded"), ("m1", "MemoryRetired"), ("c7", "ClaimCollided")]
    retired, collided = decision[1][1], decision[2][1]
    assert retired == MemoryRetired(memory="m1", reason=RETRACTED, by="new", authorization="")
    assert isinstance(collided, ClaimCollided) and [m.memory for m in collided.members] == ["m2", "new"]


def test_a_retraction_in_its_targets_own_words_is_a_new_memory_not_a_sighting() -> None:
    cmd = RememberCommand(content="Alice lives in Berlin.", event_time=NOW, ref_id=4, retracts=True)
    target = memory(4)
    decision = decide_remember(cmd, new_stream="new", duplicate=target, target=target)
    assert kinds(decision) == [("new", "MemoryRecorded"), ("m4", "MemoryRetired")]
    assert decision[1][1] == MemoryRetired(memory="m4", reason=RETRACTED, by="new", authorization="")


def test_a_retraction_that_is_a_duplicate_of_a_third_memory_retires_the_target_by_it() -> None:
    cmd = RememberCommand(content="Alice lives in Paris.", event_time=NOW, ref_id=4, retracts=True)
    decision = decide_remember(cmd, new_stream="new", duplicate=memory(5), target=memory(4))
    assert kinds(decision) == [("m5", "DuplicateSighted"), ("m4", "MemoryRetired")]
    assert decision[0][1] == DuplicateSighted(memory="m5", source_type="agent_generated", source_ref="")
    assert decision[1][1] == MemoryRetired(memory="m4", reason=RETRACTED, by="m5", authorization="")


def test_an_unknown_authorization_channel_is_refused_on_every_write_path() -> None:
    plain = RememberCommand(content="x", event_time=NOW, authorization="somebody")
    with pytest.raises(InvalidInput) as err:
        decide_remember(plain, new_stream="new", duplicate=None, target=None)
    assert err.value.field == "authorized"
    retraction = RememberCommand(content="x", event_time=NOW, ref_id=4, retracts=True, authorization="somebody")
    with pytest.raises(InvalidInput) as err:  # even when the words are an existing memory's
        decide_remember(retraction, new_stream="new", duplicate=memory(5), target=memory(4))
    assert err.value.field == "authorized"
    with pytest.raises(InvalidInput) as err:
        decide_update(memory(4), {"content": "y"}, expected_version=None, authorization="somebody")
    assert err.value.field == "authorized"


@pytest.mark.parametrize("status", ["superseded", "retired"])
def test_retracting_a_locked_memory_that_is_no_longer_current_still_needs_authorisation(status: str) -> None:
    cmd = RememberCommand(content="No.", event_time=NOW, ref_id=4, retracts=True)
    target = memory(4, protection="locked", status=status)
    with pytest.raises(Locked) as err:
        decide_remember(cmd, new_stream="new", duplicate=None, target=target)
    assert err.value.field == "ref_id"
    authorised = RememberCommand(content="No.", event_time=NOW, ref_id=4, retracts=True, authorization=AUTH_AGENT)
    decision = decide_remember(authorised, new_stream="new", duplicate=None, target=target)
    assert kinds(decision) == [("new", "MemoryRecorded")]  # it is history already: nothing to retire


def test_a_retraction_whose_target_is_unknown_is_recorded_alone() -> None:
    cmd = RememberCommand(content="Forget what I said.", event_time=NOW, retracts=True)
    decision = decide_remember(cmd, new_stream="new", duplicate=None, target=None)
    assert kinds(decision) == [("new", "MemoryRecorded")]


# -- settle ------------------------------------------------------------------------------------
def test_settle_ignores_resolved_sets_and_sets_the_member_is_not_in() -> None:
    resolved = cset("c1", {"m1": "a", "m2": "b", "m3": "c"}, state="resolved")
    elsewhere = cset("c2", {"m2": "b", "m3": "c"})
    assert settle("m1", [resolved, elsewhere], resolution="retired", reason="gone") == []
    assert resolved.values == {"m1": "a", "m2": "b", "m3": "c"} and elsewhere.state == "open"


def test_settle_without_a_winner_and_two_members_left_with_one_value_names_none() -> None:
    conflict = cset("c1", {"m1": "a", "m2": "b", "m3": "b"})
    [(stream, event)] = settle("m1", [conflict], resolution="retired", reason="gone", authorization=AUTH_AGENT)
    assert stream == "c1"
    assert event == ConflictResolved(
        conflict="c1", winner=None, resolution="retired", reason="gone", authorization=AUTH_AGENT
    )
    assert conflict.state == "resolved" and conflict.values == {"m2": "b", "m3": "b"}


def test_a_departing_member_leaves_with_the_reason_or_else_the_resolution() -> None:
    conflict = cset("c1", {"m1": "a", "m2": "b", "m3": "c"})
    [(_, event)] = settle("m1", [conflict], resolution="retired", reason="")
    assert event == ConflictMemberLeft(conflict="c1", member="m1", reason="retired")


# -- supersede_losers --------------------------------------------------------------------------
def test_supersede_settles_a_set_for_the_winner_when_the_winner_is_in_it() -> None:
    conflict = cset("c1", {"m1": "a", "m2": "b", "m3": "b"})
    decision = supersede_losers(
        ["m1"], "m2", rule="event_time", reason="newer", authorization=AUTH_AGENT, other_sets={"m1": [conflict]}
    )
    assert decision == [
        ("m1", Superseded(loser="m1", winner="m2", reason="newer", rule="event_time", authorization=AUTH_AGENT)),
        (
            "c1",
            ConflictResolved(conflict="c1", winner="m2", resolution="winner", reason="newer", authorization=AUTH_AGENT),
        ),
    ]


def test_supersede_settles_a_set_the_winner_is_not_in_for_the_one_member_left() -> None:
    conflict = cset("c1", {"m1": "a", "m3": "c"})
    decision = supersede_losers(
        ["m1"], "m2", rule="event_time", reason="newer", authorization=AUTH_USER, other_sets={"m1": [conflict]}
    )
    assert decision[1] == (
        "c1",
        ConflictResolved(conflict="c1", winner="m3", resolution="superseded", reason="newer", authorization=AUTH_USER),
    )


def test_a_superseded_loser_leaves_a_set_that_still_disputes_with_the_reason() -> None:
    conflict = cset("c1", {"m1": "a", "m3": "c", "m4": "d"})
    decision = supersede_losers(
        ["m1"], "m2", rule="event_time", reason="newer", authorization=AUTH_AGENT, other_sets={"m1": [conflict]}
    )
    assert decision[1] == ("c1", ConflictMemberLeft(conflict="c1", member="m1", reason="newer"))


# -- leave_or_dissolve -------------------------------------------------------------------------
def test_a_changed_member_leaves_a_set_that_still_disputes_and_dissolves_one_that_does_not() -> None:
    mine = memory(1)
    three = cset("c1", {"m1": "a", "m2": "b", "m3": "c"})
    two = cset("c2", {"m1": "a", "m2": "b"})
    assert leave_or_dissolve([three, two], mine) == [
        (
            "c1",
            ConflictMemberLeft(conflict="c1", member="m1", reason="member #1 changed; its claim no longer disagrees"),
        ),
        (
            "c2",
            ConflictResolved(
                conflict="c2", resolution="dissolved", reason="member #1 changed; the claims no longer collide"
            ),
        ),
    ]


# -- collisions --------------------------------------------------------------------------------
def remember_port(value: str, candidates: list[Candidate], **kw: object) -> list[tuple[str, object]]:
    cmd = RememberCommand(content=f"staging port is {value}", event_time=NOW, **kw)  # type: ignore[arg-type]
    return decide_remember(
        cmd,
        new_stream="new",
        duplicate=None,
        target=None,
        claims=[port(value)],
        candidates=candidates,
        new_id=lambda: "c7",
    )


def test_the_same_value_is_no_collision() -> None:
    same = Candidate(other=memory(1), claim=port("8080"))
    assert kinds(remember_port("8080", [same])) == [("new", "MemoryRecorded")]


def test_a_memory_collides_once_per_other_memory() -> None:
    a, b = memory(1), memory(2)
    candidates = [
        Candidate(other=a, claim=port("8080")),
        Candidate(other=a, claim=port("8081")),
        Candidate(other=b, claim=port("8080")),
    ]
    decision = remember_port("9090", candidates)
    assert kinds(decision) == [("new", "MemoryRecorded"), ("c7", "ClaimCollided")]
    collided = decision[1][1]
    assert isinstance(collided, ClaimCollided)
    assert collided.members == (
        SetMember(memory="m1", value="8080", norm="8080"),
        SetMember(memory="m2", value="8080", norm="8080"),
        SetMember(memory="new", value="9090", norm="9090"),
    )
    assert collided.joins is False


def test_a_collision_with_an_open_set_joins_it() -> None:
    claim = port("9090")
    existing = cset("c3", {"m1": "8080"})
    cmd = RememberCommand(content="staging port is 9090", event_time=NOW)
    decision = decide_remember(
        cmd,
        new_stream="new",
        duplicate=None,
        target=None,
        claims=[claim],
        candidates=[Candidate(other=memory(1), claim=port("8080")), Candidate(other=memory(2), claim=port("7070"))],
        sets={set_key(claim): existing},
        new_id=lambda: "never",
    )
    assert kinds(decision) == [("new", "MemoryRecorded"), ("c3", "ClaimCollided")]
    joined = decision[1][1]
    assert isinstance(joined, ClaimCollided) and joined.joins is True and joined.conflict == "c3"
    assert [m.memory for m in joined.members] == ["new", "m2"]


def test_an_opened_sets_verdict_names_the_leading_memory_by_its_stream() -> None:
    confirmed = memory(1, source_type="user_confirmed", protection="locked", confirmed_via=AUTH_USER, confidence=1.0)
    decision = remember_port("9090", [Candidate(other=confirmed, claim=port("8080"))])
    collided = decision[1][1]
    assert isinstance(collided, ClaimCollided) and collided.verdict["leader"] == "m1"


def test_a_writer_a_person_confirmed_leads_a_document() -> None:
    doc = memory(1, source_type="document_extracted", confidence=0.7)
    decision = remember_port(
        "9090", [Candidate(other=doc, claim=port("8080"))], source_type="user_confirmed", authorization=AUTH_USER
    )
    collided = decision[1][1]
    assert isinstance(collided, ClaimCollided) and collided.verdict["leader"] == "new"


def test_the_writer_as_decisions_see_it() -> None:
    cmd = RememberCommand(
        content="x",
        subject="staging",
        source_type="user_confirmed",
        authorization=AUTH_USER,
        event_time=NOW,
        workspace="ops",
    )
    assert writer_facts(cmd, "new", NOW) == MemoryFacts(
        memory_id=0,
        stream_id="new",
        version=1,
        protection="locked",
        source_type="user_confirmed",
        status="active",
        workspace="ops",
        subject="staging",
        event_time=NOW,
        recorded_at=NOW,
        confidence=1.0,
        confirmed_via=AUTH_USER,
    )
    agent = RememberCommand(content="x", source_type="agent_generated", authorization=AUTH_USER, event_time=NOW)
    facts = writer_facts(agent, "new", NOW)
    assert (facts.confirmed_via, facts.protection, facts.confidence) == ("", "normal", 0.45)


# -- facts_after -------------------------------------------------------------------------------
def test_a_plain_change_keeps_the_labels_and_bumps_the_version() -> None:
    confirmed = memory(4, version=3, source_type="user_confirmed", protection="locked", confirmed_via=AUTH_USER)
    after = facts_after(confirmed, MemoryUpdated(memory="m4", content="y", authorization=AUTH_USER))
    assert after == MemoryFacts(**{**{f: getattr(confirmed, f) for f in confirmed.__struct_fields__}, "version": 4})


def test_a_relabelling_change_drops_the_persons_confirmation() -> None:
    confirmed = memory(4, source_type="user_confirmed", protection="locked", confirmed_via=AUTH_USER)
    change = MemoryUpdated(memory="m4", source_type="document_extracted", protection="protected", confidence=0.7)
    after = facts_after(confirmed, change)
    assert (after.version, after.source_type, after.protection, after.confidence, after.confirmed_via) == (
        2,
        "document_extracted",
        "protected",
        0.7,
        "",
    )


def test_an_agents_change_to_a_confirmed_memory_loses_the_lead_it_had() -> None:
    confirmed = memory(4, source_type="user_confirmed", protection="locked", confirmed_via=AUTH_USER, confidence=1.0)
    doc = memory(1, source_type="document_extracted", protection="protected", confidence=0.7)
    doc = Candidate(other=doc, claim=port("8080"))
    for authorization, leader in ((AUTH_USER, "m4"), (AUTH_AGENT, "m1")):
        decision = decide_update(
            confirmed,
            {"content": "staging port is 9090"},
            expected_version=None,
            authorization=authorization,
            claims=[port("9090")],
            candidates=[doc],
            new_id=lambda: "c7",
        )
        collided = decision[-1][1]
        assert isinstance(collided, ClaimCollided) and collided.verdict["leader"] == leader, authorization


# -- the shipped policy ------------------------------------------------------------------------
SHIPPED = textwrap.dedent(
    """
    import json, sys
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings
    app = LedgerApp(Settings(db=sys.argv[1], client="test"))
    old = app.remember("The staging API listens on port 8080", event_time="2026-01-10T09:00:00Z")
    new = app.remember("The staging API listens on port 9090", event_time="2026-04-01T08:00:00Z")
    print(json.dumps({"old": app.read(old["memory_id"])["memory"]["status"], "new": new}))
    app.close()
    """
)


def test_by_default_a_value_stated_months_later_supersedes_the_old_one(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LEDGER_POLICY_SETTLE_CHANGES"}
    out = subprocess.run(
        [sys.executable, "-c", SHIPPED, str(tmp_path / "l.db")], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-2000:]
    answer = json.loads(out.stdout.strip().splitlines()[-1])
    assert answer["old"] == "superseded", answer
