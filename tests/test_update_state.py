"""``update`` reads one typed state and decides once from it (``projections.write_state``,
``ledger.update``): the pure decision on hand-built states, and on a real ledger the state read
in a write's transaction (what differs, the claims after the change, the sets they meet)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fact_ledger.ledger.claims import Claim, explicit_claim
from fact_ledger.ledger.decide import set_key
from fact_ledger.ledger.facts import Candidate, ConflictFacts, Policy
from fact_ledger.ledger.log.events import ClaimCollided, ConflictResolved, MemoryUpdated
from fact_ledger.ledger.settlement import SettleState
from fact_ledger.ledger.update import UpdateState, decide
from fact_ledger.projections import write_state
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.ledger_facts import memory_facts

JAN, MAR = "2026-01-10T09:00:00.000000Z", "2026-03-01T12:00:00.000000Z"


def port(value: str) -> Claim:
    claim = explicit_claim("staging", "port", value)
    assert claim is not None
    return claim


def test_a_change_is_a_new_version_and_its_new_value_collides() -> None:
    mine, other = memory_facts(1, event_time=JAN), memory_facts(2, event_time=JAN)
    state = UpdateState(
        memory=mine,
        changes={"content": "staging port is 8081"},
        claims=(port("8081"),),
        candidates=(Candidate(other=other, claim=port("8080")),),
    )
    decision = decide(state, expected_version=1, authorization="", new_id=lambda: "c1")
    assert [type(e).__name__ for _, e in decision] == ["MemoryUpdated", "ClaimCollided"]
    assert isinstance(decision[1][1], ClaimCollided) and {m.memory for m in decision[1][1].members} == {"m1", "m2"}


def test_a_settling_policy_settles_from_the_state_alone_and_only_with_claims() -> None:
    mine, other = memory_facts(1, event_time=MAR), memory_facts(2, event_time=JAN)
    key = set_key(port("8080"))
    open_set = ConflictFacts(conflict_id=9, stream_id="c9", state="open", key=key, values={"m2": "8080"}, ids={"m2": 2})
    settle = SettleState(sets={"c9": open_set}, members={"m2": other}, other_sets={"m2": [open_set]})
    state = UpdateState(
        memory=mine,
        changes={"content": "staging port is 8081", "event_time": MAR},
        claims=(port("8081"),),
        candidates=(Candidate(other=other, claim=port("8080")),),
        sets={key: open_set},
        settle=settle,
    )
    settled = decide(state, expected_version=None, authorization="", policy=Policy(auto_settle=True))
    assert isinstance(settled[0][1], MemoryUpdated) and any(isinstance(e, ConflictResolved) for _, e in settled)
    no_claims = UpdateState(memory=mine, changes={"tags": ("a",)}, settle=settle)
    assert [type(e).__name__ for _, e in decide(no_claims, expected_version=None, authorization="")] == [
        "MemoryUpdated"
    ]


@pytest.fixture
def app(tmp_path: Path) -> Any:
    ledger = LedgerApp(Settings(db=str(tmp_path / "u.db"), client="test"))
    yield ledger
    ledger.close()


def test_the_state_says_what_differs_and_what_the_new_text_meets(app: LedgerApp) -> None:
    other = app.remember("The staging API listens on port 8080", subject="staging api")["memory_id"]
    mine = app.remember("The staging API moved to rack 4", subject="staging api")["memory_id"]
    row = app.governance._row(mine)
    policy = app.governance._policy
    same = write_state.update_state(
        app.conn, row, {"content": "The staging API moved to rack 4"}, scope=("",), policy=policy
    )
    assert same.changes == {} and same.claims is None  # nothing differs: nothing else is read
    moved = write_state.update_state(
        app.conn, row, {"content": "The staging API listens on port 8081"}, scope=("",), policy=policy
    )
    assert moved.changes == {"content": "The staging API listens on port 8081"}
    assert [c.other.memory_id for c in moved.candidates] == [other]
    answer = app.update(mine, content="The staging API listens on port 8081")
    recorded = [e["type"] for e in app.audit(limit=2)["events"]][::-1]
    assert recorded == ["MemoryUpdated", "ClaimCollided"] and answer["conflicts"][0]["other_id"] == other


def test_a_stale_expected_version_is_refused_from_the_state() -> None:
    from fact_ledger.ledger.errors import VersionConflict

    state = UpdateState(memory=memory_facts(1, event_time=JAN), changes={"content": "moved to rack 4"})
    with pytest.raises(VersionConflict):
        decide(state, expected_version=2, authorization="")
    assert [type(e).__name__ for _, e in decide(state, expected_version=1, authorization="")] == ["MemoryUpdated"]


def test_an_update_reads_the_memory_s_row_once_before_it_appends(app: LedgerApp) -> None:
    """The row that checks the caller may change the memory is the row the change is compared
    with: one read of it, not one per step (``Service._row`` hands it to ``update_state``)."""
    mine = app.remember("The staging API moved to rack 4", subject="staging api")["memory_id"]
    statements: list[str] = []

    def trace(_cursor: object, sql: str, _bindings: object) -> bool:
        statements.append(" ".join(sql.split()))
        return True

    app.conn.exec_trace = trace
    try:
        app.update(mine, content="The staging API moved to rack 5")
    finally:
        app.conn.exec_trace = None
    appended = next(i for i, sql in enumerate(statements) if sql.startswith("INSERT INTO events"))
    row_reads = [sql for sql in statements[:appended] if "FROM memories WHERE memory_id=?" in sql]
    assert len(row_reads) == 1, row_reads


def test_an_update_of_a_member_of_a_set_of_three_states_its_new_value(tmp_path: Path) -> None:
    """The set kept the member's old value ("erin" for a memory that now says Grace): the update
    answered no set, and settling the set superseded a memory by a value it no longer states."""
    from tests.test_retractions import assert_rebuild_reproduces

    ledger = LedgerApp(Settings(db=str(tmp_path / "s.db"), client="test", policy=Policy(settle_changes=False)))
    try:
        ids = [
            ledger.remember(f"{who} is the on-call lead for payments", subject="payments", event_time=when)["memory_id"]
            for who, when in (("Dave", "2024-01-01"), ("Erin", "2024-02-01"), ("Frank", "2024-03-01"))
        ]
        (conflict,) = {c["conflict_id"] for c in ledger.conflicts()["conflicts"]}
        changed = ledger.update(ids[1], content="Grace is the on-call lead for payments")
        assert [(c["conflict_id"], c["claim"]["value"]) for c in changed["conflicts"]] == [(conflict, "grace")]
        members = ledger.conflict_detail(conflict)["conflict"]["memories"]
        assert {m["memory_id"]: m["value"] for m in members} == {ids[0]: "dave", ids[1]: "grace", ids[2]: "frank"}
        assert_rebuild_reproduces(ledger)
    finally:
        ledger.close()
