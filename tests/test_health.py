"""The memory health report (docs/governance.md "Hindsight"): clusters, suggestions, ratios; a
suggestion applied as one change and undone in one step; the read models rebuild identically."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest

from fact_ledger.ledger import health
from fact_ledger.ledger.arbiter import Side
from fact_ledger.ledger.errors import InvalidInput, NotFound, Unauthorized
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.projections import changes as changes_model
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import REVIEW

BUDGETS = [100, 120, 150, 90, 200, 130, 175]
SOURCES = [
    "agent_generated",
    "document_extracted",
    "agent_generated",
    "unknown",
    "document_extracted",
    "agent_generated",
    "document_extracted",
]


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[LedgerApp]:
    app = LedgerApp(
        Settings(db=str(tmp_path / "h.db"), client="test", agent_id="pytest", policy=REVIEW, health_every_minutes=1)
    )
    yield app
    app.close()


def seed(app: LedgerApp) -> tuple[list[int], list[int]]:
    """Seven budgets (event times months apart, three sources) and a two-value port dispute."""
    budget = [
        app.remember(
            content=f"The Apollo project budget is ${v}k",
            subject="Apollo project",
            source_type=SOURCES[i],
            event_time=f"2026-0{i + 1}-05T10:00:00Z",
            source_ref=f"minutes-{i}",
        )["memory_id"]
        for i, v in enumerate(BUDGETS)
    ]
    port = [
        app.remember(content=f"The staging port is {p}", subject="staging", event_time="2026-02-01T00:00:00Z")[
            "memory_id"
        ]
        for p in (8080, 9090)
    ]
    return budget, port


def statuses(app: LedgerApp, ids: list[int]) -> set[str]:
    return {app.read(i)["memory"]["status"] for i in ids}


def test_the_report_ranks_the_largest_cluster_first_with_its_values_and_a_suggestion(ledger: LedgerApp) -> None:
    budget, port = seed(ledger)
    before = ledger.store.last_position()
    report = ledger.health()
    assert ledger.store.last_position() == before  # read-only
    first, second = report["clusters"]
    assert first["member_count"] == 7 and sorted(first["members"]) == sorted(budget)
    assert first["claim"] == {"subject": "Apollo project", "attribute": "budget"}
    assert {v["value"] for v in first["values"]} == {f"${v}k" for v in BUDGETS}
    by_value = {v["value"]: v for v in first["values"]}
    assert by_value["$90k"]["sources"] == ["unknown"] and by_value["$90k"]["source_refs"] == ["minutes-3"]
    suggestion = first["suggestion"]
    assert suggestion["kind"] == "settle" and suggestion["winner_id"] == budget[-1] == first["leader_id"]
    assert suggestion["rule"] == "event_time" and suggestion["value"] == "$175k"
    assert suggestion["supersedes"] == sorted(budget[:-1])
    assert any("event_time" in r for r in first["reasons"])
    # The port values share an event time and a source: the ingest time decides.
    assert sorted(second["members"]) == sorted(port) and second["suggestion"]["rule"] == "ingest_time"
    assert report["cluster_count"] == 2 and report["open_members"] == 9
    assert ledger.health(limit=1)["clusters"] == [first]


def test_a_tie_needs_a_person_and_cannot_be_applied(ledger: LedgerApp) -> None:
    sides = [
        Side(
            memory_id=i,
            source_type="agent_generated",
            protection="normal",
            event_time="2026-01-01T00:00:00.000000Z",
            confidence=0.5,
            recorded_at="2026-01-01T00:00:00.000000Z",
        )
        for i in (1, 2)
    ]
    members = tuple(
        health.Member(side=s, stream_id=f"s{s.memory_id}", value=str(s.memory_id), value_norm=str(s.memory_id))
        for s in sides
    )
    open_set = health.OpenSet(
        conflict_id=5,
        stream_id="c",
        state="open",
        workspace="",
        subject="x",
        attribute="y",
        updated_at="",
        members=members,
    )
    proposal = health.settlement(open_set)
    assert proposal["kind"] == "needs_person" and proposal["winner_id"] is None and proposal["supersedes"] == []
    assert health.conflict_of_suggestion(proposal["suggestion_id"]) == 5
    assert proposal["explanation"].startswith("no rule decides")
    # A rule decides, but the policy leaves agents' disagreements to a person: the explanation
    # said "no rule decides" while the reasons said "event_time … this rule decides".
    newer = msgspec.structs.replace(
        members[1], side=msgspec.structs.replace(sides[1], event_time="2026-02-01T00:00:00.000000Z")
    )
    reviewed = health.settlement(
        msgspec.structs.replace(open_set, members=(members[0], newer)), review_agent_conflicts=True
    )
    assert reviewed["kind"] == "needs_person" and reviewed["explanation"].startswith("the rules favour #2")


def test_a_suggestion_id_names_the_set_as_it_stands() -> None:
    side = Side(
        memory_id=1, source_type="unknown", protection="normal", event_time="t", confidence=0.5, recorded_at="t"
    )
    a = health.Member(side=side, stream_id="a", value="1", value_norm="1", said_since=1)
    b = health.Member(side=side, stream_id="b", value="2", value_norm="2", said_since=1)
    c = health.Member(side=side, stream_id="b", value="3", value_norm="3", said_since=9)
    assert health.suggestion_id(7, [a, b]) == health.suggestion_id(7, [b, a])
    # a member's value changes with its words (an update): the id shown before it is stale
    assert health.suggestion_id(7, [a, b]) != health.suggestion_id(7, [a, c])
    # … and with the claim extraction that read the values (an upgrade between showing and applying)
    assert health.suggestion_id(7, [a, b], extraction=1) != health.suggestion_id(7, [a, b], extraction=2)
    # a confirmation of one member moves the leader: the id that named the old settlement is stale
    confirmed = msgspec.structs.replace(b, side=msgspec.structs.replace(side, source_type="user_confirmed"))
    assert health.suggestion_id(7, [a, b]) != health.suggestion_id(7, [a, confirmed])
    assert health.conflict_of_suggestion("settle-7-x") is None and health.conflict_of_suggestion("7") is None


def test_a_suggestion_id_holds_no_value() -> None:
    """An applied suggestion's id stays in the log (``ChangeRecorded.suggestion``) after its members
    are erased, and everything else it digests stays public: were the values digested, an erased
    value with few possibilities could be confirmed by trying each. Values that differ, and
    nothing else, name one suggestion."""
    side = Side(
        memory_id=1, source_type="unknown", protection="normal", event_time="t", confidence=0.5, recorded_at="t"
    )
    a = health.Member(side=side, stream_id="a", value="yes", value_norm="true", said_since=3)
    b = health.Member(side=side, stream_id="b", value="no", value_norm="false", said_since=1)
    tried = [msgspec.structs.replace(a, value=v, value_norm=v) for v in ("false", "42", "[erased]", "")]
    assert {health.suggestion_id(7, [t, b], extraction=30) for t in tried} == {
        health.suggestion_id(7, [a, b], extraction=30)
    }


def test_find_latency_is_what_this_process_measured(ledger: LedgerApp) -> None:
    assert ledger.health()["find_latency_ms"] is None
    seed(ledger)
    for query in ("budget", "staging port", "Apollo"):
        ledger.find(query)
    found = ledger.health()["find_latency_ms"]
    assert found["n"] == 3 and 0 < found["p50"] <= found["p95"]
    assert health.latency([5.0, 1.0, 3.0, 2.0, 4.0]) == {"p50": 3.0, "p95": 5.0, "n": 5}
    assert ledger.record_health()["summary"]["find_p50_ms"] == found["p50"]


def test_ratios_and_duplicate_groups() -> None:
    r = health.ratios({"active": 6, "superseded": 3, "retired": 1, "archived": 10}, cold=3)
    assert r["hot"] == 10 and r["superseded_ratio"] == 0.4 and r["stale_ratio"] == 0.5
    assert health.groups([(1, 2), (2, 3), (7, 9)]) == [[1, 2, 3], [7, 9]]
    d = health.duplicates(writes=990, sightings=7, restatements=3, near_groups=[[1, 2]])
    assert d["absorbed_per_1000_writes"] == 10.0 and d["near_group_count"] == 1


def test_apply_settles_as_one_change_and_undo_reopens_it(ledger: LedgerApp) -> None:
    budget, _ = seed(ledger)
    suggestion = ledger.health()["clusters"][0]["suggestion"]
    with pytest.raises(Unauthorized):
        ledger.apply_suggestion(suggestion["suggestion_id"])
    applied = ledger.apply_suggestion(suggestion["suggestion_id"], authorization=AUTH_USER)
    change = applied["change_id"]
    assert applied["conflict"]["state"] == "resolved" and applied["conflict"]["winner_id"] == budget[-1]
    assert statuses(ledger, budget[:-1]) == {"superseded"} and statuses(ledger, budget[-1:]) == {"active"}
    events = [e for e in ledger.store.read() if '"change"' in e.payload]
    assert {e.type for e in events} == {"Superseded", "ConflictResolved", "ChangeRecorded"}
    assert len([e for e in events if e.type == "Superseded"]) == 6
    assert ledger.health()["cluster_count"] == 1  # the port dispute is left
    record = changes_model.by_id(ledger.conn, change)  # the read model's typed row: streams decoded once
    assert isinstance(record, changes_model.ChangeRow) and record.kind == "apply_suggestion"
    assert len(record.superseded) == 6 and applied["change"]["superseded"] == budget[:-1]
    (recorded,) = ledger.audit(type="ChangeRecorded")["events"]  # ids a tool takes, not stream UUIDs
    assert recorded["payload"]["superseded_ids"] == budget[:-1] and "superseded" not in recorded["payload"]
    with pytest.raises(InvalidInput, match="stale"):
        ledger.apply_suggestion(suggestion["suggestion_id"], authorization=AUTH_USER)

    undone = ledger.undo(change, authorization=AUTH_USER)
    assert undone["undoes"] == change and undone["conflict"]["state"] == "open"
    assert statuses(ledger, budget) == {"active"}
    report = ledger.health()
    assert report["clusters"][0]["member_count"] == 7
    assert report["clusters"][0]["suggestion"]["suggestion_id"] == suggestion["suggestion_id"]
    kinds = [(c["kind"], c["undone_by"]) for c in report["changes"]]
    assert kinds == [("undo", None), ("apply_suggestion", undone["change_id"])]
    undo_events = [e for e in ledger.store.read() if undone["change_id"] in e.payload]
    assert sorted(e.type for e in undo_events) == ["ChangeRecorded", "ConflictReopened", *["Reinstated"] * 6]
    with pytest.raises(InvalidInput, match="already undone") as again:
        ledger.undo(change, authorization=AUTH_USER)
    # named by the log positions the Health page lists changes by, not by ids alone
    positions = {c["change_id"]: c["position"] for c in report["changes"]}
    assert f"change @{positions[change]} (" in again.value.message
    assert f"by change @{positions[undone['change_id']]} (" in again.value.message
    with pytest.raises(InvalidInput, match="is an undo"):
        ledger.undo(undone["change_id"], authorization=AUTH_USER)
    with pytest.raises(NotFound):
        ledger.undo("no-such-change", authorization=AUTH_USER)
    # History shows each event of the change with its change id.
    versions = ledger.history(budget[0])["versions"]
    ids = {e.get("change_id") for v in versions for e in v["events"]}
    assert {change, undone["change_id"]} <= ids
    # A write after the undo meets the reinstated values again (their claims are back).
    joined = ledger.remember(content="The Apollo project budget is $999k", subject="Apollo project")
    assert [c["conflict_id"] for c in joined["conflicts"]] == [report["clusters"][0]["conflict_id"]]
    assert joined["conflicts"][0]["member_count"] == 8


def test_undo_refuses_when_a_member_changed_since(ledger: LedgerApp) -> None:
    seed(ledger)
    applied = ledger.apply_suggestion(
        ledger.health()["clusters"][0]["suggestion"]["suggestion_id"], authorization=AUTH_USER
    )
    assert ledger.archive(older_than_days=0)["archived"]  # the superseded leave the hot read model
    before = ledger.store.last_position()
    with pytest.raises(InvalidInput, match="changed since"):
        ledger.undo(applied["change_id"], authorization=AUTH_USER)
    assert ledger.store.last_position() == before  # nothing half-written


def test_a_pasted_suggestion_or_change_id_is_found_with_a_space_or_in_capitals(ledger: LedgerApp) -> None:
    """``ledger undo "ID "`` (a space copied with it) or the id in capitals said "no change …"."""
    ledger.remember("The staging API listens on port 8080", subject="staging", source_type="agent_generated")
    ledger.remember("The staging API listens on port 9090", subject="staging", source_type="agent_generated")
    suggestion = ledger.health()["clusters"][0]["suggestion"]["suggestion_id"]
    applied = ledger.apply_suggestion(f" {suggestion}\n", authorization=AUTH_USER)
    undone = ledger.undo(f"{applied['change_id'].upper()} ", authorization=AUTH_USER)
    assert undone["change"]["kind"] == "undo" and undone["change"]["undoes"] == applied["change_id"], undone


def _applied_staging_change(ledger: LedgerApp) -> tuple[str, int]:
    """Two agent values of the staging port, the health pass's suggestion applied: the change
    and its winner."""
    ledger.remember("The staging API listens on port 8080", subject="staging", source_type="agent_generated")
    ledger.remember("The staging API listens on port 9090", subject="staging", source_type="agent_generated")
    suggestion = ledger.health()["clusters"][0]["suggestion"]["suggestion_id"]
    applied = ledger.apply_suggestion(suggestion, authorization=AUTH_USER)
    return applied["change_id"], applied["conflict"]["winner_id"]


def test_undo_refuses_when_the_winner_left_or_another_set_opened_on_the_fact(ledger: LedgerApp) -> None:
    """An undo after the winner was retired re-opened the set led by a retired memory (and the
    health pass suggested it); after a later value opened a new set on the same fact it left two
    open sets for one fact, sharing the winner for good."""
    change, winner = _applied_staging_change(ledger)
    ledger.retire(winner, reason="gone", authorization=AUTH_USER)
    before = ledger.store.last_position()
    for attempt in (ledger.check_undo, lambda c: ledger.undo(c, authorization=AUTH_USER)):
        with pytest.raises(InvalidInput, match="retired since"):
            attempt(change)
    assert ledger.store.last_position() == before
    assert ledger.conflicts("open")["conflicts"] == []

    other = LedgerApp(Settings(db=str(Path(ledger.settings.db).with_name("other.db")), client="test"))
    try:
        change, winner = _applied_staging_change(other)
        joined = other.remember(
            "The staging API listens on port 6060", subject="staging", source_type="agent_generated"
        )
        (opened,) = joined["conflicts"]
        with pytest.raises(InvalidInput, match=f"claim set {opened['conflict_id']} opened on this fact"):
            other.undo(change, authorization=AUTH_USER)
        (still,) = other.conflicts("open")["conflicts"]
        assert still["conflict_id"] == opened["conflict_id"]
    finally:
        other.close()


@pytest.mark.parametrize(
    "now_says",
    [
        "The staging API runs on Kubernetes",
        "The staging API listens on port 7070",
        "The staging API listens on port 8080",
    ],
)
def test_undo_refuses_when_the_winner_no_longer_states_the_value_it_won_with(ledger: LedgerApp, now_says: str) -> None:
    """The set re-opened with the winner's old value: health then offered to settle it for a
    memory that no longer said so, superseding the others by it (and with "… port 8080", the loser's
    own value, superseding a memory by one that says the same)."""
    change, winner = _applied_staging_change(ledger)
    ledger.update(winner, content=now_says, authorization=AUTH_USER)
    before = ledger.store.last_position()
    with pytest.raises(InvalidInput, match="no longer states the value it won with"):
        ledger.undo(change, authorization=AUTH_USER)
    assert ledger.store.last_position() == before


def test_undo_after_an_edit_that_keeps_the_winner_s_value_still_reopens(ledger: LedgerApp) -> None:
    change, winner = _applied_staging_change(ledger)
    ledger.update(winner, tags=["ops"], authorization=AUTH_USER)
    assert ledger.undo(change, authorization=AUTH_USER)["ok"]
    assert [c["conflict_id"] for c in ledger.conflicts("open")["conflicts"]]


def test_apply_and_undo_rebuild_to_the_same_tables(ledger: LedgerApp) -> None:
    seed(ledger)
    change = ledger.apply_suggestion(
        ledger.health()["clusters"][0]["suggestion"]["suggestion_id"], authorization=AUTH_USER
    )["change_id"]
    ledger.undo(change, authorization=AUTH_USER)
    second = ledger.apply_suggestion(
        ledger.health()["clusters"][1]["suggestion"]["suggestion_id"], authorization=AUTH_USER
    )
    assert second["change_id"] != change
    incremental = ledger.runner.checksums()
    assert "changes" in incremental
    report = ledger.health()
    ledger.rebuild()
    assert ledger.runner.checksums() == incremental
    again = ledger.health()
    assert {**again, "pass_ms": 0} == {**report, "pass_ms": 0}


def test_bad_limits_are_refused(ledger: LedgerApp) -> None:
    for limit in (0, 201, True):
        with pytest.raises(InvalidInput):
            ledger.health(limit=limit)
    with pytest.raises(InvalidInput):
        ledger.apply_suggestion("settle-x", authorization=AUTH_USER)


def test_recorded_passes_make_the_trend_and_rebuild_the_same(ledger: LedgerApp) -> None:
    seed(ledger)
    before = ledger.store.last_position()
    ledger.health()
    assert ledger.store.last_position() == before and ledger.health()["trend"] == []
    first = ledger.record_health()
    assert first["summary"]["cluster_count"] == 2 and first["summary"]["open_members"] == 9
    ledger.apply_suggestion(ledger.health()["clusters"][0]["suggestion"]["suggestion_id"], authorization=AUTH_USER)
    ledger.record_health()
    trend = ledger.health()["trend"]
    assert [p["cluster_count"] for p in trend] == [2, 1] and trend[1]["superseded_ratio"] > 0
    # no find answered in this process: the contract's latency keys are there, null
    assert [(p["find_p50_ms"], p["find_p95_ms"]) for p in trend] == [(None, None), (None, None)]
    assert [e.type for e in ledger.store.read(after=before)].count("HealthChecked") == 2
    ledger.rebuild()
    assert ledger.health()["trend"] == trend


def test_ledger_serve_records_a_pass_on_its_schedule_and_never_when_off(
    ledger: LedgerApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    from fact_ledger.server.mcp import server
    from fact_ledger.server.mcp.dispatch import LedgerTools

    seed(ledger)
    monkeypatch.setattr(server, "HEALTH_FIRST_S", 0.05)  # the first pass soon after start, not in two minutes
    tools = LedgerTools(ledger)

    async def run_for(seconds: float) -> None:
        with anyio.move_on_after(seconds):
            await server._health_periodically(tools)

    anyio.run(run_for, 1.0)
    assert [p["cluster_count"] for p in ledger.health()["trend"]] == [2]  # one pass: the next is a minute away
    ledger.settings = tools.settings = replace(ledger.settings, health_every_minutes=0)
    anyio.run(run_for, 0.3)
    assert len(ledger.health()["trend"]) == 1


def test_an_unknown_suggestion_is_named_by_the_field_the_caller_gave(ledger: LedgerApp) -> None:
    """It answered ``not_found`` naming ``conflict_id``, a field the caller never gave."""
    with pytest.raises(NotFound) as missing:
        ledger.apply_suggestion(health.suggestion_id(999, ()), authorization=AUTH_USER)
    assert missing.value.field == "suggestion_id" and "no suggestion" in str(missing.value)


def test_a_suggestion_shown_before_a_member_changed_its_words_is_stale(ledger: LedgerApp) -> None:
    """The id holds no value, so what dates a member's words must: a member updated to another
    value after the report makes the suggestion shown a stale one, and updated back to the words it
    had, the report names the suggestion as before."""
    ids = [
        ledger.remember(
            f"The billing service owner is {name}",
            source_type="agent_generated",
            event_time=f"2026-03-0{day}T00:00:00Z",
        )["memory_id"]
        for name, day in (("Alice", 1), ("Bob", 2), ("Carol", 3))
    ]
    [cluster] = ledger.health()["clusters"]
    shown = cluster["suggestion"]["suggestion_id"]
    ledger.update(ids[0], content="The billing service owner is Dave")
    before = ledger.store.last_position()
    with pytest.raises(InvalidInput, match="is stale"):
        ledger.apply_suggestion(shown, authorization=AUTH_USER)
    assert ledger.store.last_position() == before
    ledger.update(ids[0], content="The billing service owner is Alice")
    [cluster] = ledger.health()["clusters"]
    assert cluster["suggestion"]["suggestion_id"] == shown


def test_a_judgment_against_the_rules_leaves_the_set_to_a_person(ledger: LedgerApp) -> None:
    """The health pass suggested the rules' winner whatever a person had judged, with the same
    id as before the judgment, and applying it superseded the member the judgment chose."""
    for name, minute in (("Alice", "00"), ("Bob", "10"), ("Carol", "20")):
        ledger.remember(
            f"The billing service owner is {name}",
            source_type="agent_generated",
            event_time=f"2026-03-01T00:{minute}:00Z",
        )
    [cluster] = ledger.health()["clusters"]
    shown, cid, alice = cluster["suggestion"]["suggestion_id"], cluster["conflict_id"], min(cluster["members"])
    judged = ledger.judge(cid, alice, rationale="Alice really")["judgment_id"]
    [cluster] = ledger.health()["clusters"]
    suggestion = cluster["suggestion"]
    assert suggestion["kind"] == "needs_person" and suggestion["winner_id"] is None
    assert f"judgment {judged} says #{alice} should win" in suggestion["explanation"]
    before = ledger.store.last_position()
    with pytest.raises(InvalidInput, match="is stale"):
        ledger.apply_suggestion(shown, authorization=AUTH_USER)
    with pytest.raises(InvalidInput, match="needs a person"):
        ledger.apply_suggestion(suggestion["suggestion_id"], authorization=AUTH_USER)
    assert ledger.store.last_position() == before
    leader = max(cluster["members"])
    agreeing = ledger.judge(cid, leader, rationale="the latest word")["judgment_id"]
    [cluster] = ledger.health()["clusters"]
    assert cluster["suggestion"]["kind"] == "settle" and cluster["suggestion"]["winner_id"] == leader
    assert cluster["suggestion"]["reasons"][-1] == f"judgment {agreeing} agrees"
    assert ledger.apply_suggestion(cluster["suggestion"]["suggestion_id"], authorization=AUTH_USER)["ok"]


def test_a_member_that_states_other_facts_is_left_to_a_person(ledger: LedgerApp) -> None:
    """The report proposed superseding a note of several facts for one that changed."""
    ledger.remember(
        "Notes from sync: staging API listens on port 8080. Standup is at 10am. Billing owner is Alice.",
        source_type="agent_generated",
        event_time="2026-11-01T09:00:00Z",
    )
    ledger.remember("Standup is at 11am", source_type="agent_generated", event_time="2026-11-10T09:00:00Z")
    [cluster] = ledger.health()["clusters"]
    suggestion = cluster["suggestion"]
    assert suggestion["kind"] == "needs_person" and suggestion["supersedes"] == []
    assert "states other facts too" in suggestion["explanation"]
