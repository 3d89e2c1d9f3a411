"""``ledger.decide`` and ``ledger.govern`` called directly: pure decisions on plain facts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fact_ledger.ledger.decide import RememberCommand, decide_remember, decide_update, effective_changes, settle
from fact_ledger.ledger.errors import InvalidInput, Locked, Unauthorized, VersionConflict
from fact_ledger.ledger.facts import ConflictFacts, Policy
from fact_ledger.ledger.govern import decide_confirm, decide_retire, decide_supersede, decide_unlock
from fact_ledger.ledger.log.events import (
    AUTH_AGENT,
    AUTH_USER,
    Confirmed,
    ConflictMemberLeft,
    ConflictResolved,
    DuplicateSighted,
    MemoryRecorded,
    MemoryRetired,
    MemoryUpdated,
    Superseded,
)
from tests.ledger_facts import memory_facts as memory

NOW = "2026-03-01T12:00:00.000000Z"


def test_remember_records_a_new_memory_or_sights_its_duplicate() -> None:
    cmd = RememberCommand(content="Alice lives in Berlin.", subject="Alice", event_time=NOW)
    [(stream, event)] = decide_remember(cmd, new_stream="new", duplicate=None, target=None)
    assert stream == "new" and isinstance(event, MemoryRecorded) and event.content == cmd.content
    [(stream, event)] = decide_remember(cmd, new_stream="new", duplicate=memory(4), target=None)
    assert stream == "m4" and isinstance(event, DuplicateSighted) and event.memory == "m4"


def test_a_retraction_retires_its_target_unless_the_target_is_locked() -> None:
    cmd = RememberCommand(content="No, Alice lives in Paris.", event_time=NOW, ref_id=4, retracts=True)
    decision = decide_remember(cmd, new_stream="new", duplicate=None, target=memory(4))
    assert [type(e) for _, e in decision] == [MemoryRecorded, MemoryRetired]
    assert decision[1][1].by == "new"
    with pytest.raises(Locked) as err:
        decide_remember(cmd, new_stream="new", duplicate=None, target=memory(4, protection="locked"))
    assert err.value.field == "ref_id"


def test_an_agent_saying_user_confirmed_is_recorded_as_the_agent_saying_so() -> None:
    cmd = RememberCommand(content="x", source_type="user_confirmed", event_time=NOW)
    [(_, event)] = decide_remember(cmd, new_stream="new", duplicate=None, target=None)
    assert event.authorization == AUTH_AGENT


@given(
    st.dictionaries(st.sampled_from(["content", "subject", "confidence"]), st.text(max_size=5), max_size=3),
    st.dictionaries(st.sampled_from(["content", "subject", "confidence"]), st.text(max_size=5), max_size=3),
)
def test_effective_changes_are_exactly_those_that_differ(current: dict[str, str], changes: dict[str, str]) -> None:
    out = effective_changes(current, changes)
    assert out == {k: v for k, v in changes.items() if k not in current or current[k] != v}


def test_update_checks_the_version_and_downgrades_an_unconfirmed_change_to_a_confirmed_memory() -> None:
    with pytest.raises(VersionConflict):
        decide_update(memory(4, version=2), {"content": "y"}, expected_version=1, authorization="")
    confirmed = memory(4, source_type="user_confirmed", protection="locked")
    [(_, event)] = decide_update(confirmed, {"content": "y"}, expected_version=None, authorization=AUTH_AGENT)
    assert isinstance(event, MemoryUpdated) and event.source_type == "agent_generated"
    assert event.protection == "protected"
    [(_, event)] = decide_update(confirmed, {"content": "y"}, expected_version=None, authorization=AUTH_USER)
    assert (event.source_type, event.protection, event.derived_from_confirmed) == (None, None, False)


def test_settle_leaves_a_disputed_set_and_resolves_one_that_is_not() -> None:
    three = ConflictFacts(conflict_id=1, stream_id="c1", state="open", values={"m1": "a", "m2": "b", "m3": "c"})
    two = ConflictFacts(conflict_id=2, stream_id="c2", state="open", values={"m1": "a", "m2": "b"})
    decision = settle("m1", [three, two], resolution="retired", reason="gone")
    assert isinstance(decision[0][1], ConflictMemberLeft) and decision[0][0] == "c1"
    assert isinstance(decision[1][1], ConflictResolved) and decision[1][1].winner == "m2"
    assert two.state == "resolved" and "m1" not in three.values


def test_governance_needs_an_authorisation_channel() -> None:
    with pytest.raises(Unauthorized):
        decide_confirm(memory(1), authorization="")
    with pytest.raises(Locked):
        decide_retire(memory(1, protection="locked"), reason="", authorization="")
    with pytest.raises(InvalidInput):
        decide_confirm(memory(1), authorization="somebody")


def test_confirm_never_lets_an_agent_overwrite_a_persons_confirmation() -> None:
    by_person = memory(1, source_type="user_confirmed", protection="locked", confirmed_via=AUTH_USER)
    assert decide_confirm(by_person, authorization=AUTH_AGENT) == []
    by_agent = memory(1, source_type="user_confirmed", protection="locked", confirmed_via=AUTH_AGENT)
    [(_, event)] = decide_confirm(by_agent, authorization=AUTH_USER)
    assert isinstance(event, Confirmed) and event.authorization == AUTH_USER


def test_a_persons_confirmation_sets_confidence_to_one_an_agents_leaves_it() -> None:
    [(_, by_person)] = decide_confirm(memory(1), authorization=AUTH_USER)
    [(_, by_agent)] = decide_confirm(memory(2), authorization=AUTH_AGENT)
    assert isinstance(by_person, Confirmed) and by_person.confidence == 1.0
    assert isinstance(by_agent, Confirmed) and by_agent.confidence is None


def test_unlock_respects_the_user_channel_policy() -> None:
    locked = memory(1, protection="locked")
    strict = Policy(locked_requires_user_channel=True)
    with pytest.raises(Unauthorized):
        decide_unlock(locked, authorization=AUTH_AGENT, policy=strict)
    assert len(decide_unlock(locked, authorization=AUTH_USER, policy=strict)) == 1
    assert decide_unlock(memory(1), authorization=AUTH_AGENT) == []


def test_supersede_settles_the_losers_sets_for_the_winner() -> None:
    conflict = ConflictFacts(conflict_id=9, stream_id="c9", state="open", values={"m1": "a", "m2": "b"})
    decision = decide_supersede(memory(1), memory(2), reason="newer", authorization=AUTH_AGENT, conflicts=[conflict])
    assert isinstance(decision[0][1], Superseded) and decision[0][1].winner == "m2"
    assert isinstance(decision[1][1], ConflictResolved) and decision[1][1].winner == "m2"
    assert decision[1][1].resolution == "winner"
    with pytest.raises(InvalidInput):
        decide_supersede(memory(1), memory(1), reason="", authorization=AUTH_AGENT)
