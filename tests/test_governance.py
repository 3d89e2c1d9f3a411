"""Trust labels, protection and authorisation on every write path (issue point 1)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.errors import InvalidInput, Locked, Unauthorized
from fact_ledger.ledger.log.events import AUTH_AGENT, AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Policy, Settings

T1, T6, T8 = "2025-07-01T00:00:00Z", "2025-07-06T00:00:00Z", "2025-08-01T00:00:00Z"


@pytest.fixture
def strict_app(tmp_path: Path) -> Iterator[LedgerApp]:
    app = LedgerApp(
        Settings(db=str(tmp_path / "strict.db"), client="test", policy=Policy(locked_requires_user_channel=True))
    )
    yield app
    app.close()


def events(app: LedgerApp) -> list[tuple[str, dict]]:
    """(type, payload fields with defaults filled in) for every event in the log."""
    import msgspec

    return [(e.type, msgspec.structs.asdict(e.data)) for e in app.store.read()]


def memory(app: LedgerApp, memory_id: int) -> dict:
    return app.read(memory_id)["memory"]


def test_source_types_carry_trust_and_default_confidence(app: LedgerApp) -> None:
    expected = {
        "user_confirmed": (100, 1.0),
        "document_extracted": (70, 0.7),
        "agent_generated": (45, 0.45),
        "unknown": (10, 0.1),
    }
    for i, (source, (trust, confidence)) in enumerate(expected.items()):
        m = memory(app, app.remember(f"fact number {i}", source_type=source, authorization=AUTH_USER)["memory_id"])
        assert (m["trust"], m["confidence"]) == (trust, confidence)
    # The trust shown is the one arbitration and ranking use: an agent's own "user_confirmed"
    # is trusted as its word (it showed 100 while every rule counted 45).
    asserted = memory(app, app.remember("fact asserted by an agent", source_type="user_confirmed")["memory_id"])
    assert (asserted["source_type"], asserted["trust"]) == ("user_confirmed", 45)
    given = memory(app, app.remember("a fact with a confidence", confidence=0.9)["memory_id"])
    assert given["confidence"] == 0.9


def test_user_confirmed_is_locked_on_write_and_update_needs_authorisation(app: LedgerApp) -> None:
    mid = app.remember("the prod region is eu-west-1", source_type="user_confirmed", authorization=AUTH_USER)[
        "memory_id"
    ]
    assert memory(app, mid)["protection"] == "locked"
    before = app.store.last_position()
    with pytest.raises(Locked):
        app.update(mid, content="the prod region is us-east-1")
    assert app.store.last_position() == before


def test_an_agent_asserted_change_to_a_confirmed_fact_drops_the_label(app: LedgerApp) -> None:
    mid = app.remember("the prod region is eu-west-1", source_type="user_confirmed", authorization=AUTH_USER)[
        "memory_id"
    ]
    app.update(mid, content="the prod region is us-east-1", authorization=AUTH_AGENT)
    m = memory(app, mid)
    assert m["source_type"] == "agent_generated" and m["protection"] == "protected"
    row = app.conn.execute("SELECT derived_from, confirmed_via FROM memories WHERE memory_id=?", (mid,)).fetchone()
    assert row == (mid, "")  # links back to the confirmed version; no confirmation left
    history = app.history(mid)["versions"]
    assert history[0]["source_type"] == "user_confirmed" and history[-1]["source_type"] == "agent_generated"
    app.confirm(mid, authorization=AUTH_USER)
    assert memory(app, mid)["source_type"] == "user_confirmed" and memory(app, mid)["protection"] == "locked"


def test_a_user_channel_change_keeps_the_label(app: LedgerApp) -> None:
    mid = app.remember("the prod region is eu-west-1", source_type="user_confirmed", authorization=AUTH_USER)[
        "memory_id"
    ]
    app.update(mid, content="the prod region is eu-central-1", authorization=AUTH_USER)
    assert memory(app, mid)["source_type"] == "user_confirmed"


def test_confirm_and_unlock_record_their_channel(app: LedgerApp) -> None:
    mid = app.remember("the office wifi is guest-5g")["memory_id"]
    with pytest.raises(Unauthorized):
        app.confirm(mid, authorization="")
    result = app.confirm(mid, authorization=AUTH_AGENT)
    assert result["source_type"] == "user_confirmed" and result["protection"] == "locked"
    assert app.overview()["agent_asserted_confirmations"] == 1
    assert app.confirm(mid, authorization=AUTH_AGENT)["changed"] is False  # nothing stronger to record
    app.confirm(mid, authorization=AUTH_USER)  # a person upgrades the agent's word
    assert app.overview()["agent_asserted_confirmations"] == 0
    assert app.confirm(mid, authorization=AUTH_AGENT)["changed"] is False  # never downgraded
    app.unlock(mid, authorization=AUTH_USER)
    assert memory(app, mid)["protection"] == "normal"
    kinds = [(t, p.get("authorization")) for t, p in events(app) if t in ("Confirmed", "MemoryUnlocked")]
    assert kinds == [("Confirmed", AUTH_AGENT), ("Confirmed", AUTH_USER), ("MemoryUnlocked", AUTH_USER)]


def test_doctor_counts_confirmations_only_an_agent_asserted(app: LedgerApp) -> None:
    app.remember("the CI runner is buildkite", source_type="user_confirmed")  # an agent says "user_confirmed"
    check = next(c for c in app.doctor()["checks"] if c["name"] == "agent_asserted_confirmations")
    assert check["severity"] == "warning" and check["count"] == 1
    assert app.doctor()["severity"] == "warning"


@pytest.mark.parametrize("action", ["retire", "supersede", "unlock", "confirm", "arbitrate", "resolve"])
def test_governance_actions_refuse_without_authorisation(app: LedgerApp, action: str) -> None:
    a = app.remember("GET /ping returns 200", event_time=T1)["memory_id"]
    b = app.remember("GET /ping returns 204", event_time=T6)
    conflict = b["conflicts"][0]["conflict_id"]
    calls = {
        "retire": lambda: app.retire(a, authorization=""),
        "supersede": lambda: app.supersede(a, b["memory_id"], authorization=""),
        "unlock": lambda: app.unlock(a, authorization=""),
        "confirm": lambda: app.confirm(a, authorization=""),
        "arbitrate": lambda: app.arbitrate(a, b["memory_id"], apply=True, authorization=""),
        "resolve": lambda: app.resolve_conflict(conflict, winner_id=a, authorization=""),
    }
    before = app.store.last_position()
    with pytest.raises(Unauthorized):
        calls[action]()
    assert app.store.last_position() == before


def test_unauthorised_changes_to_a_locked_memory_answer_locked(app: LedgerApp) -> None:
    locked = app.remember(
        "the fiscal year starts in April", source_type="user_confirmed", authorization=AUTH_USER, event_time=T1
    )["memory_id"]
    newer = app.remember(
        "the fiscal year starts in May", source_type="user_confirmed", authorization=AUTH_USER, event_time=T8
    )["memory_id"]
    before = app.store.last_position()
    refusals = [
        lambda: app.update(locked, content="the fiscal year starts in June"),
        lambda: app.retire(locked),
        lambda: app.supersede(locked, newer),
        lambda: app.unlock(locked),
        lambda: app.arbitrate(locked, newer, apply=True),  # both locked: the older one would lose
        lambda: app.remember("forget the fiscal year note", ref_id=locked, retracts=True),
    ]
    for refuse in refusals:
        with pytest.raises(Locked):
            refuse()
    assert app.store.last_position() == before
    with pytest.raises(Unauthorized):
        app.arbitrate(locked, newer, mark_conflict=True)  # changes no memory: plain unauthorized


def test_authorisation_is_a_known_channel_never_a_free_string(app: LedgerApp) -> None:
    mid = app.remember("the api key rotates monthly")["memory_id"]
    with pytest.raises(InvalidInput):
        app.retire(mid, authorization="root")


def test_retraction_of_a_locked_memory_needs_authorisation(app: LedgerApp) -> None:
    mid = app.remember("the all-hands is on Wednesday", source_type="user_confirmed", authorization=AUTH_USER)[
        "memory_id"
    ]
    with pytest.raises(Locked):
        app.remember("cancel the all-hands", ref_id=mid, retracts=True)
    assert memory(app, mid)["status"] == "active"
    app.remember("cancel the all-hands", ref_id=mid, retracts=True, authorization=AUTH_AGENT)
    assert memory(app, mid)["status"] == "retired"


def test_policy_refuses_agent_asserted_changes_to_locked_memories(strict_app: LedgerApp) -> None:
    app = strict_app
    locked = app.remember("the prod db is db-1", source_type="user_confirmed", authorization=AUTH_USER)["memory_id"]
    other = app.remember("the prod db is db-2", event_time=T8)["memory_id"]
    before = app.store.last_position()
    refusals = [
        lambda: app.update(locked, content="the prod db is db-3", authorization=AUTH_AGENT),
        lambda: app.retire(locked, authorization=AUTH_AGENT),
        lambda: app.supersede(locked, other, authorization=AUTH_AGENT),
        lambda: app.unlock(locked, authorization=AUTH_AGENT),
        lambda: app.remember("forget the prod db", ref_id=locked, retracts=True, authorization=AUTH_AGENT),
    ]
    for refuse in refusals:
        with pytest.raises(Unauthorized):
            refuse()
    assert app.store.last_position() == before
    app.update(locked, content="the prod db is db-3", authorization=AUTH_USER)  # a person may
    assert memory(app, locked)["content"] == "the prod db is db-3"


def test_every_governance_event_records_its_channel(app: LedgerApp) -> None:
    a = app.remember("the queue is sqs", event_time=T1)["memory_id"]
    b = app.remember("the queue is Kafka", event_time=T6)["memory_id"]
    c = app.remember("the cron runs at 02:00")["memory_id"]
    app.arbitrate(a, b, mark_conflict=True, apply=True, authorization=AUTH_AGENT)
    app.retire(c, reason="moved to a scheduler", authorization=AUTH_USER)
    governed = {"Superseded", "MemoryRetired", "ConflictResolved", "Confirmed", "MemoryUnlocked"}
    channels = {t: p.get("authorization") for t, p in events(app) if t in governed}
    assert channels == {"Superseded": AUTH_AGENT, "ConflictResolved": AUTH_AGENT, "MemoryRetired": AUTH_USER}


def test_seed_example_user_confirmed_beats_a_newer_agent_guess_and_stays_locked(app: LedgerApp) -> None:
    fact = app.remember("接口 /api/foo 返回 200", source_type="user_confirmed", event_time=T1, authorization=AUTH_USER)[
        "memory_id"
    ]
    guess = app.remember("接口 /api/foo 返回 404", event_time=T6)
    (conflict,) = guess["conflicts"]
    assert conflict["other_id"] == fact and conflict["verdict"]["winner_id"] == fact
    verdict = app.compare(fact, guess["memory_id"])["verdict"]
    assert verdict["winner_side"] == "left" and verdict["rule"] == "user_confirmed/locked protection"
    app.arbitrate(fact, guess["memory_id"], apply=True, authorization=AUTH_AGENT)
    assert memory(app, fact)["protection"] == "locked" and memory(app, fact)["status"] == "active"
    assert memory(app, guess["memory_id"])["status"] == "superseded"


def test_update_refuses_a_memory_that_is_no_longer_current(app: LedgerApp) -> None:
    old = app.remember("the standup is at 9:30")["memory_id"]
    app.remember("cancel that", ref_id=old, retracts=True)
    before = app.store.last_position()
    with pytest.raises(InvalidInput) as info:
        app.update(old, content="the standup is at 10:00")
    assert info.value.field == "memory_id" and "retired" in info.value.message
    assert app.store.last_position() == before


def test_unlock_refuses_a_memory_that_is_no_longer_current(app: LedgerApp) -> None:
    """ "ledger unlock" of an erased memory appended MemoryUnlocked and printed it as changed;
    confirm and update already refused a memory that is no longer current."""
    kept = app.remember("Zed's phone is 555-0000", source_type="user_confirmed", authorization=AUTH_USER)["memory_id"]
    app.erase(kept, reason="test", authorization=AUTH_USER)
    retired = app.remember("Zed's desk is on floor 3", source_type="user_confirmed", authorization=AUTH_USER)
    app.retire(retired["memory_id"], reason="moved", authorization=AUTH_USER)
    before = app.store.last_position()
    for memory_id, status in ((kept, "erased"), (retired["memory_id"], "retired")):
        with pytest.raises(InvalidInput) as info:
            app.unlock(memory_id, authorization=AUTH_USER)
        assert info.value.field == "memory_id" and status in info.value.message
    assert app.store.last_position() == before


def test_read_shows_both_ends_of_a_retraction(app: LedgerApp) -> None:
    meeting = app.remember(
        "Team meeting on Wednesday at 3pm", subject="team meeting", event_time="2026-11-01T09:00:00Z"
    )["memory_id"]
    cancel = app.remember(
        "Cancel the Wednesday meeting", ref_id=meeting, retracts=True, event_time="2026-11-10T09:00:00Z"
    )["memory_id"]
    retired, retraction = memory(app, meeting), memory(app, cancel)
    assert retired["status"] == "retired" and retired["retired_by"] == cancel and retired["retracts"] == []
    assert retired["status_reason"] and retired["valid_to"].startswith("2026-11-10T09:00:00")
    assert retraction["retracts"] == [meeting] and retraction["retired_by"] is None
    assert retraction["status_reason"] == "" and retraction["valid_to"] is None
    # The reverse link comes from an index that holds only retired rows, not from a scan.
    plan = app.conn.execute("EXPLAIN QUERY PLAN SELECT memory_id FROM memories WHERE retired_by=?", (1,)).fetchall()
    assert "memories_retired_by" in plan[0][3]


def test_audit_shows_who_authorised_every_act(app: LedgerApp) -> None:
    """An agent's confirm and unlock store no ``authorization`` (``agent_asserted`` is the
    type's default), so audit and history showed none; a workspace alias recorded none at all."""
    mid = app.remember("the prod region is eu-west-1")["memory_id"]
    app.confirm(mid, authorization=AUTH_AGENT)
    app.unlock(mid, authorization=AUTH_AGENT)
    app.accept_alias("Fact Ledger", "fact-ledger", authorization=AUTH_USER)
    said = {e["type"]: e["payload"].get("authorization") for e in app.audit(limit=10)["events"]}
    assert said["Confirmed"] == said["MemoryUnlocked"] == AUTH_AGENT
    assert said["WorkspaceAliasSet"] == AUTH_USER
    kinds = {e["type"]: e.get("authorization") for v in app.history(mid)["versions"] for e in v["events"]}
    assert kinds["Confirmed"] == kinds["MemoryUnlocked"] == AUTH_AGENT
