"""The edges of the automatic settlement (``ledger.settlement``) and of a write's reply
(``ledger.reply``).

Each pure test builds the decision a write makes (the claim sets it opens or joins, the facts of
their members) and asserts on the events :func:`settle_by_policy` returns: which values a later
one supersedes (policy ``settle_changes``: an hour or more later, by event time), which sets it
leaves open, and which sets a superseded member leaves. Two facade tests check the same edges on
a real ledger file: the one-hour horizon and the number of sets a reply names.
tests/conftest.py switches ``settle_changes`` off in this process: these tests pass it explicitly.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fact_ledger.ledger.facts import ConflictFacts, MemoryFacts, Policy
from fact_ledger.ledger.log.events import (
    AUTH_POLICY,
    ClaimCollided,
    ConflictMemberLeft,
    ConflictResolved,
    SetMember,
    Superseded,
)
from fact_ledger.ledger.reply import rank_for_reply
from fact_ledger.ledger.settlement import is_change, settle_by_policy
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

JAN = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)
CHANGE = "settled by policy settle_changes: event_time"
AUTO = "settled by policy auto_settle: "


def at(seconds: float) -> str:
    """An event time ``seconds`` after JAN, in the ledger's canonical form."""
    return (JAN + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def memory(stream: str, seconds: float = 0, **kw: object) -> MemoryFacts:
    base: dict[str, object] = {
        "memory_id": int(stream[1:]),
        "stream_id": stream,
        "version": 1,
        "protection": "normal",
        "source_type": "agent_generated",
        "status": "active",
        "event_time": at(seconds),
        "recorded_at": at(0),
    }
    return MemoryFacts(**{**base, **kw})  # type: ignore[arg-type]


def opened(conflict: str, attribute: str = "port", **values: str) -> tuple[str, ClaimCollided]:
    members = tuple(SetMember(memory=s, value=v, norm=v) for s, v in values.items())
    return (conflict, ClaimCollided(conflict=conflict, subject="staging", attribute=attribute, members=members))


def joined(conflict: str, **values: str) -> tuple[str, ClaimCollided]:
    members = tuple(SetMember(memory=s, value=v, norm=v) for s, v in values.items())
    return (
        conflict,
        ClaimCollided(conflict=conflict, subject="staging", attribute="port", members=members, joins=True),
    )


def superseded(loser: str, winner: str, reason: str = CHANGE, rule: str = "event_time") -> tuple[str, Superseded]:
    return (loser, Superseded(loser=loser, winner=winner, reason=reason, rule=rule, authorization=AUTH_POLICY))


def resolved(conflict: str, winner: str, reason: str = CHANGE, resolution: str = "policy") -> tuple[str, object]:
    return (
        conflict,
        ConflictResolved(
            conflict=conflict, winner=winner, resolution=resolution, reason=reason, authorization=AUTH_POLICY
        ),
    )


def changes(decision: list, members: dict[str, MemoryFacts], **kw: object) -> list:  # type: ignore[type-arg]
    """settle_by_policy as the shipped policy ``settle_changes`` calls it (auto_settle off)."""
    return settle_by_policy(
        decision,
        members=members,
        sets=kw.pop("sets", {}),  # type: ignore[arg-type]
        other_sets=kw.pop("other_sets", {}),  # type: ignore[arg-type]
        review_agent_conflicts=False,
        changes_only=True,
    )


# -- is_change: the one-hour horizon ----------------------------------------------------------
def test_a_value_stated_exactly_an_hour_after_every_other_is_a_change() -> None:
    values = {"m1": "8080", "m2": "8080", "m3": "9090"}
    members = {"m1": memory("m1", 0), "m2": memory("m2", 1800), "m3": memory("m3", 5400)}
    assert is_change("event_time", "m3", values, members) is True  # exactly an hour after m2
    members["m2"] = memory("m2", 1801)
    assert is_change("event_time", "m3", values, members) is False  # 59:59 after m2: a disagreement
    # The members that hold the leader's value do not count, however close they are.
    values = {"m1": "8080", "m2": "9090", "m3": "9090"}
    members = {"m1": memory("m1", 0), "m2": memory("m2", 3599), "m3": memory("m3", 3600)}
    assert is_change("event_time", "m3", values, members) is True
    assert is_change("event_time", "m2", values, members) is False


def test_only_a_leader_by_event_time_can_be_a_change() -> None:
    values = {"m1": "8080", "m2": "9090"}
    members = {"m1": memory("m1", 0), "m2": memory("m2", 86400)}
    assert is_change("event_time", "m2", values, members) is True
    for rule in ("source_type", "confidence", "ingest_time", "user_confirmed/locked protection"):
        assert is_change(rule, "m2", values, members) is False


# -- settle_by_policy with settle_changes ------------------------------------------------------
def test_a_change_supersedes_the_older_values_and_resolves_the_set_for_the_leader() -> None:
    members = {"m1": memory("m1", 0), "m2": memory("m2", 600), "m3": memory("m3", 3600 + 600)}
    decision = [opened("c1", m1="8080", m2="8081", m3="9090")]
    assert changes(decision, members) == [superseded("m1", "m3"), superseded("m2", "m3"), resolved("c1", "m3")]
    # A member holding the leader's value stays; the set is resolved for the leader.
    members["m4"] = memory("m4", 0)
    decision = [opened("c1", m1="8080", m4="9090", m3="9090")]
    assert changes(decision, members) == [superseded("m1", "m3"), resolved("c1", "m3")]


def test_values_stated_within_the_hour_stay_open_for_a_person() -> None:
    members = {"m1": memory("m1", 0), "m2": memory("m2", 3599)}
    assert changes([opened("c1", m1="8080", m2="9090")], members) == []
    members["m2"] = memory("m2", 3600)
    assert changes([opened("c1", m1="8080", m2="9090")], members) == [superseded("m1", "m2"), resolved("c1", "m2")]


def test_a_set_another_rule_decides_is_not_a_change() -> None:
    """Same event time, a document above an agent (rule 3): settle_changes leaves it open,
    auto_settle settles it and names the rule."""
    members = {"m1": memory("m1", 0), "m2": memory("m2", 0, source_type="document_extracted")}
    decision = [opened("c1", m1="8080", m2="9090")]
    assert changes(decision, members) == []
    reason = AUTO + "source_type"
    auto = settle_by_policy(decision, members=members, sets={}, other_sets={}, changes_only=False)
    assert auto == [superseded("m1", "m2", reason, "source_type"), resolved("c1", "m2", reason)]


def test_a_change_never_supersedes_a_guarded_value_but_a_guarded_value_may_lead_it() -> None:
    decision = [opened("c1", m1="8080", m2="9090")]
    locked = {"m1": memory("m1", 0, protection="locked"), "m2": memory("m2", 7200)}
    assert changes(decision, locked) == []
    confirmed = {"m1": memory("m1", 0), "m2": memory("m2", 7200, source_type="user_confirmed")}
    assert changes(decision, confirmed) == [superseded("m1", "m2"), resolved("c1", "m2")]


def test_the_defaults_settle_any_rule_decided_set_without_review() -> None:
    """Called without the switches, settle_by_policy is the policy auto_settle: two agents'
    values ten minutes apart (not a change, and both agent_generated) are settled by event time."""
    members = {"m1": memory("m1", 0), "m2": memory("m2", 600)}
    decision = [opened("c1", m1="8080", m2="9090")]
    reason = AUTO + "event_time"
    assert settle_by_policy(decision, members=members, sets={}, other_sets={}) == [
        superseded("m1", "m2", reason),
        resolved("c1", "m2", reason),
    ]
    with_review = settle_by_policy(decision, members=members, sets={}, other_sets={}, review_agent_conflicts=True)
    assert with_review == []


def test_a_set_the_decision_already_resolved_or_left_undisputed_is_not_settled_again() -> None:
    members = {"m1": memory("m1", 0), "m2": memory("m2", 7200)}
    done = ConflictResolved(conflict="c1", winner="m2", resolution="winner")
    assert changes([opened("c1", m1="8080", m2="9090"), ("c1", done)], members) == []
    # A join after which one value remains (the other member left in the same decision).
    sets = {"c1": ConflictFacts(conflict_id=1, stream_id="c1", state="open", values={"m1": "8080"})}
    left = ConflictMemberLeft(conflict="c1", member="m1")
    assert changes([joined("c1", m2="9090"), ("c1", left)], members, sets=sets) == []


def test_a_member_that_left_in_the_same_decision_is_not_superseded() -> None:
    members = {"m1": memory("m1", 0), "m2": memory("m2", 1800), "m3": memory("m3", 7200)}
    sets = {"c1": ConflictFacts(conflict_id=1, stream_id="c1", state="open", values={"m1": "8080", "m2": "8081"})}
    decision = [joined("c1", m3="9090"), ("c1", ConflictMemberLeft(conflict="c1", member="m2"))]
    assert changes(decision, members, sets=sets) == [superseded("m1", "m3"), resolved("c1", "m3")]
    assert sets["c1"].values == {"m1": "8080", "m2": "8081"}  # the caller's sets are left as given


def test_a_superseded_member_leaves_its_other_sets_by_their_streams() -> None:
    """The writer opens two sets with the same memory (port and host); the change supersedes
    it in the first, so the second, without it, is resolved for the writer, named by its stream."""
    members = {"m1": memory("m1", 0), "m2": memory("m2", 7200)}
    decision = [opened("c1", m1="8080", m2="9090"), opened("c2", "host", m1="alpha", m2="beta")]
    assert changes(decision, members) == [
        superseded("m1", "m2"),
        resolved("c2", "m2", resolution="winner"),
        resolved("c1", "m2"),
    ]
    # A third member keeps the other set disputed: the loser leaves it.
    members["m3"] = memory("m3", 60)
    decision = [opened("c1", m1="8080", m2="9090"), opened("c2", "host", m1="alpha", m2="beta", m3="gamma")]
    assert changes(decision, members)[:2] == [
        superseded("m1", "m2"),
        ("c2", ConflictMemberLeft(conflict="c2", member="m1", reason=CHANGE)),
    ]


# -- on a real ledger --------------------------------------------------------------------------
@pytest.fixture
def shipped(tmp_path: Path) -> Iterator[LedgerApp]:
    ledger = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="t", policy=Policy(settle_changes=True)))
    yield ledger
    ledger.close()


def test_a_value_stated_an_hour_later_supersedes_one_stated_59_minutes_later_does_not(shipped: LedgerApp) -> None:
    old = shipped.remember("The staging API listens on port 7070", event_time=at(0))["memory_id"]
    close = shipped.remember("The staging API listens on port 7071", event_time=at(3599))
    assert "superseded" not in close and close["conflicts_total"] == 1
    later = shipped.remember("The staging API listens on port 8080", event_time=at(3599 + 3600))
    assert later["status"] == "active" and later["superseded"] == [old, close["memory_id"]]
    assert shipped.read(old)["memory"]["superseded_by"] == later["memory_id"]
    assert shipped.status()["open_conflicts"] == 0


def test_a_reply_names_five_sets_and_counts_them_all(app: LedgerApp) -> None:
    attributes = [f"limit{i}" for i in range(6)]
    app.remember("the old limits", claims=[{"subject": "api", "attribute": a, "value": "10"} for a in attributes])
    reply = app.remember(
        "the new limits", claims=[{"subject": "api", "attribute": a, "value": "20"} for a in attributes]
    )
    assert reply["conflicts_total"] == 6 and len(reply["conflicts"]) == 5
    shown, total = rank_for_reply([{"conflict_id": c, "leader_id": 1} for c in range(1, 8)], mine=2)
    assert [s["conflict_id"] for s in shown] == [1, 2, 3, 4, 5] and total == 7
