"""``remember`` reads one typed state and decides once from it (``projections.write_state``,
``ledger.remember``): the pure decision on hand-built states, each branch; and on a real ledger,
the state read inside a write's transaction gives, decided again, exactly the events the write
recorded, and the reply's near-duplicates are the state's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from fact_ledger.ledger.claims import Claim, explicit_claim
from fact_ledger.ledger.decide import RememberCommand, set_key
from fact_ledger.ledger.facts import Candidate, ConflictFacts, Policy
from fact_ledger.ledger.log.events import ClaimCollided, ConflictResolved, MemoryRecorded, Restated
from fact_ledger.ledger.remember import RememberState, absorbed, decide
from fact_ledger.ledger.settlement import SettleState
from fact_ledger.projections import write_state
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.ledger_facts import memory_facts

JAN, MAR = "2026-01-10T09:00:00.000000Z", "2026-03-01T12:00:00.000000Z"


def port(value: str) -> Claim:
    claim = explicit_claim("staging", "port", value)
    assert claim is not None
    return claim


def command(content: str = "staging port is 8081", **kw: Any) -> RememberCommand:
    return RememberCommand.of({"content": content, "claims": [], **kw}, event_time=MAR)


def kinds(decision: list[tuple[str, object]]) -> list[str]:
    return [type(event).__name__ for _, event in decision]


def test_an_exact_duplicate_is_a_sighting_unless_the_write_retracts_it() -> None:
    dup = memory_facts(1, event_time=JAN)
    assert kinds(decide(command(), RememberState(duplicate=dup), new_stream="s")) == ["DuplicateSighted"]
    retracting = command(ref_id=1, retracts=True)
    assert absorbed(dup, command(), None) and not absorbed(dup, retracting, dup)
    assert not absorbed(None, command(), None)  # nothing to be a sighting of
    assert absorbed(dup, command(ref_id=1), dup)  # a reference is not a retraction: still a sighting


def test_a_restatement_confirms_the_memory_that_holds_it() -> None:
    held = memory_facts(4, event_time=JAN)
    [(stream, event)] = decide(command(), RememberState(restated=held, claims=(port("8081"),)), new_stream="s")
    assert isinstance(event, Restated) and stream == held.stream_id


def test_a_new_value_opens_a_set_with_the_candidate_it_collides_with() -> None:
    other = memory_facts(2, event_time=JAN)
    mine = port("8081")
    state = RememberState(claims=(mine,), candidates=(Candidate(other=other, claim=port("8080")),), recorded_at=MAR)
    decision = decide(command(), state, new_stream="s", new_id=lambda: "c1")
    assert kinds(decision) == ["MemoryRecorded", "ClaimCollided"]
    collided = decision[1][1]
    assert isinstance(collided, ClaimCollided) and {m.memory for m in collided.members} == {"s", "m2"}


def _disputed_port() -> RememberState:
    """Port 8081 written against memory 2's 8080 (January), in open set 9, settling inputs read."""
    other = memory_facts(2, event_time=JAN, recorded_at=JAN)
    key = set_key(port("8080"))
    open_set = ConflictFacts(conflict_id=9, stream_id="c9", state="open", key=key, values={"m2": "8080"}, ids={"m2": 2})
    return RememberState(
        claims=(port("8081"),),
        candidates=(Candidate(other=other, claim=port("8080")),),
        sets={key: open_set},
        recorded_at=MAR,
        settle=SettleState(sets={"c9": open_set}, members={"m2": other}, other_sets={"m2": [open_set]}),
    )


def test_a_settling_policy_settles_from_the_state_alone() -> None:
    """``auto_settle``: the newer value leads, the older is superseded, with nothing read."""
    state = _disputed_port()
    decision = decide(command(), state, new_stream="s", policy=Policy(auto_settle=True))
    assert isinstance(decision[0][1], MemoryRecorded)
    assert any(isinstance(e, ConflictResolved) for _, e in decision)
    unsettled = msgspec.structs.replace(state, settle=None)  # what the state read under review mode
    assert not any(isinstance(e, ConflictResolved) for _, e in decide(command(), unsettled, new_stream="s"))


@pytest.fixture
def app(tmp_path: Path) -> Any:
    ledger = LedgerApp(Settings(db=str(tmp_path / "w.db"), client="test"))
    yield ledger
    ledger.close()


def test_the_state_read_in_a_write_decides_the_events_it_recorded(app: LedgerApp) -> None:
    first = app.remember("The staging API listens on port 8080", subject="staging api")
    app.remember("The staging API was moved to a new rack in March", subject="staging api")
    cmd = command("The staging API listens on port 8081", subject="staging api", workspace="")
    state = write_state.remember_state(
        app.conn, cmd, scope=("",), target=None, cancelling=(), duplicate=None, policy=app.governance._policy
    )
    assert [c.other.memory_id for c in state.candidates] == [first["memory_id"]]
    assert state.near  # the moved-rack memory is close in words
    answer = app.remember("The staging API listens on port 8081", subject="staging api")
    recorded = [e["type"] for e in app.audit(limit=10)["events"] if e["position"] >= answer["memory_id"]]
    assert sorted(recorded) == sorted(kinds(decide(cmd, state, new_stream="s")))
    shown = {n["memory_id"] for n in answer.get("near_duplicates", [])}
    assert shown <= {n["memory_id"] for n in state.near}


def test_a_cancellation_s_matches_reach_the_reply_from_the_state(app: LedgerApp) -> None:
    app.remember("Send the minutes to the board every Friday", subject="minutes")
    app.remember("Send the minutes to the team every Monday", subject="minutes")
    answer = app.remember("Don't send the minutes anymore", subject="minutes")
    assert "retracted" not in answer  # two instructions match: none is chosen
    assert len(answer["retraction_candidates"]) == 2
    assert all(
        isinstance(t, dict) and t["content"].startswith("Send the minutes") for t in answer["retraction_candidates"]
    )


def test_only_auto_settle_settles_a_set_whose_leader_is_no_change() -> None:
    """Ten minutes apart is a disagreement, not a change (the horizon is an hour): ``settle_changes``
    leaves the set to a person, ``auto_settle`` settles it by the rules."""
    state = _disputed_port()
    soon = msgspec.structs.replace(command(), event_time="2026-01-10T09:10:00.000000Z")
    settled = decide(soon, state, new_stream="s", policy=Policy(auto_settle=True, settle_changes=False))
    assert any(isinstance(e, ConflictResolved) for _, e in settled)
    waits = decide(soon, state, new_stream="s", policy=Policy(auto_settle=False, settle_changes=True))
    assert not any(isinstance(e, ConflictResolved) for _, e in waits)
