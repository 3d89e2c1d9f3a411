"""Collisions at write time, conflict states, judgments, resolution and arbitration (points 2-4)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from fact_ledger.ledger.errors import InvalidInput, Unauthorized, VersionConflict
from fact_ledger.ledger.log.events import AUTH_AGENT, AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Policy, Settings

T1, T2, T6 = "2025-07-01T00:00:00Z", "2025-07-02T00:00:00Z", "2025-07-06T00:00:00Z"
RULES = ["user_confirmed/locked protection", "event_time", "source_type", "confidence", "ingest_time"]


def state(app: LedgerApp, conflict_id: int) -> str:
    return app.conflict_detail(conflict_id)["conflict"]["state"]


def pair(
    app: LedgerApp, left: str = "接口 /api/foo 返回 200", right: str = "接口 /api/foo 返回 404"
) -> tuple[int, int, int]:
    a = app.remember(left, event_time=T1)["memory_id"]
    result = app.remember(right, event_time=T6)
    return a, result["memory_id"], result["conflicts"][0]["conflict_id"]


def test_seed_example_write_reports_the_collision_and_compare_names_the_right_side(app: LedgerApp) -> None:
    first = app.remember("接口 /api/foo 返回 200", event_time=T1)
    assert first["conflicts"] == [] and first["conflicts_total"] == 0
    second = app.remember("接口 /api/foo 返回 404", event_time=T6)
    assert second["conflicts_total"] == 1
    (conflict,) = second["conflicts"]
    assert conflict["other_id"] == first["memory_id"]
    assert conflict["claim"] == {"subject": "接口 /api/foo", "attribute": "returns", "value": "404"}
    assert conflict["leader_id"] == second["memory_id"] and conflict["member_count"] == 2
    assert conflict["verdict"]["winner_id"] == second["memory_id"]
    verdict = app.compare(first["memory_id"], second["memory_id"])["verdict"]
    assert verdict["winner_side"] == "right" and verdict["winner_id"] == second["memory_id"]
    assert verdict["manual_review"] is False and verdict["rule_order"] == RULES
    assert any(r.startswith("event_time:") and "decides" in r for r in verdict["reasons"])
    positions = app.store.last_position()
    app.compare(first["memory_id"], second["memory_id"])
    assert app.store.last_position() == positions  # compare writes nothing
    assert app.status()["open_conflicts"] == 1
    assert app.read(first["memory_id"])["memory"]["conflict_ids"] == [conflict["conflict_id"]]
    assert app.conflicts()["conflicts"][0]["conflict_id"] == conflict["conflict_id"]


def test_the_same_value_restated_is_not_a_conflict(app: LedgerApp) -> None:
    first = app.remember("项目预算是5万")["memory_id"]
    # the same fact in another format confirms the memory (ledger.restatement): no conflict, no copy
    assert app.remember("项目预算为50,000元")["restatement_of"] == first
    assert app.remember("The project budget is $50,000")["conflicts"] == []
    assert app.status()["open_conflicts"] == 0


def test_collisions_stay_inside_a_workspace(app: LedgerApp) -> None:
    app.remember("deploy port: 7000", workspace="alpha")
    assert app.remember("deploy port: 9000", workspace="beta")["conflicts"] == []
    assert app.remember("deploy port: 9100", workspace="alpha")["conflicts_total"] == 1


def test_every_older_value_is_in_the_one_set_of_the_claim(app: LedgerApp) -> None:
    first = app.remember("the gateway port is 7000")["memory_id"]
    for port in range(7001, 7006):
        app.remember(f"the gateway port is {port}")
    before = app.store.last_position()
    result = app.remember("the gateway port is 8000")
    assert app.store.last_position() - before == 2  # the memory and one ClaimCollided joining the set
    (conflict,) = result["conflicts"]
    assert result["conflicts_total"] == 1 and conflict["member_count"] == 7
    assert conflict["leader_id"] == result["memory_id"]  # the same event_time rank: ingested last
    assert app.status()["open_conflicts"] == 1
    assert first in app.conflict_detail(conflict["conflict_id"])["conflict"]["members"]


def test_judgment_is_pinned_and_a_changed_member_reopens_it(app: LedgerApp) -> None:
    a, b, cid = pair(app)
    with pytest.raises(VersionConflict):
        app.judge(cid, b, rationale="newer log", pins={str(a): 2, str(b): 1})
    judged = app.judge(cid, b, rationale="the newer deploy log says 404", pins={str(a): 1, str(b): 1})
    assert judged["conflict"]["state"] == "judged" and judged["judgment_id"] > cid
    assert app.read(a)["memory"]["status"] == "active"  # a judgment is guidance: nothing changed
    detail = app.conflict_detail(cid)["conflict"]
    assert detail["judgments"][0]["pins"] == {str(a): 1, str(b): 1}
    assert detail["judgments"][0]["winner_id"] == b
    app.update(a, content="接口 /api/foo 返回 302")
    assert state(app, cid) == "open"
    with pytest.raises(VersionConflict):
        app.judge(cid, b, pins={a: 1, b: 1})
    app.judge(cid, b, pins={a: 2, b: 1})
    assert state(app, cid) == "judged"


def test_a_judgment_repeated_on_the_same_versions_is_recorded_once(app: LedgerApp) -> None:
    """A retried call (or a console form sent again) wrote a second identical judgment."""
    a, b, cid = pair(app)
    first = app.judge(cid, b, rationale="newer log", pins={str(a): 1, str(b): 1})
    again = app.judge(cid, b, rationale="newer log", pins={str(a): 1, str(b): 1})
    assert again["unchanged"] is True and again["judgment_id"] == first["judgment_id"]
    assert again["conflict"]["state"] == "judged"
    assert len(app.conflict_detail(cid)["conflict"]["judgments"]) == 1
    other = app.judge(cid, b, rationale="the deploy log")  # another rationale is another judgment
    assert "unchanged" not in other and len(app.conflict_detail(cid)["conflict"]["judgments"]) == 2


def test_a_judged_set_whose_members_come_to_agree_dissolves_and_one_that_loses_a_member_reopens(
    app: LedgerApp,
) -> None:
    """Judged, then #b updated to #a's value: the set re-opened with both members stating one
    value (and the health pass offered to supersede #b). Judged, then a member superseded: the
    set stayed judged, its judgment naming a memory no longer in it."""
    a, b, cid = pair(app)
    app.judge(cid, a, rationale="the deploy log says 200")
    result = app.update(b, content="接口 /api/foo 返回 200")
    assert result["dissolved"] == [cid] and "reopened" not in result
    assert state(app, cid) == "resolved"
    x = app.remember("The staging API listens on port 8080", event_time=T1)["memory_id"]
    y = app.remember("The staging API listens on port 9090", event_time=T2, source_type="agent_generated")
    z = app.remember("The staging API listens on port 7070", event_time=T6, source_type="document_extracted")
    (staging,) = z["conflicts"]
    app.judge(staging["conflict_id"], y["memory_id"], rationale="the agent checked")
    app.arbitrate(y["memory_id"], z["memory_id"], apply=True, authorization=AUTH_USER)  # #y loses and leaves
    detail = app.conflict_detail(staging["conflict_id"])["conflict"]
    assert detail["state"] == "open" and y["memory_id"] not in detail["members"]
    assert x in detail["members"]
    folded = app.conflict_detail(staging["conflict_id"])["conflict"]["state"]
    app.rebuild()
    assert app.conflict_detail(staging["conflict_id"])["conflict"]["state"] == folded


def test_a_member_that_stops_contradicting_dissolves_the_conflict(app: LedgerApp) -> None:
    a, b, cid = pair(app)
    app.update(a, content="接口 /api/foo 返回 302")  # still a different value: the conflict stays
    assert state(app, cid) == "open"
    result = app.update(a, content="接口 /api/foo 已经下线了")  # no claim on the key any more
    assert result["conflicts_total"] == 0 and result["dissolved"] == [cid]
    detail = app.conflict_detail(cid)["conflict"]
    assert detail["state"] == "resolved" and detail["resolution"] == "dissolved" and detail["winner_id"] is None
    assert f"member #{a} changed" in detail["reason"]
    assert {app.read(m)["memory"]["status"] for m in (a, b)} == {"active"}  # nobody lost
    assert app.status()["open_conflicts"] == 0
    assert app.verify()["ok"]


def test_a_judged_conflict_whose_disagreement_is_gone_dissolves_like_an_open_one(app: LedgerApp) -> None:
    a, b, cid = pair(app)
    app.judge(cid, b, rationale="the newer log says 404", pins={str(a): 1, str(b): 1})
    result = app.update(b, content="接口 /api/foo 返回 200")  # now agrees with a
    assert result["dissolved"] == [cid] and "reopened" not in result
    detail = app.conflict_detail(cid)["conflict"]
    assert detail["state"] == "resolved" and detail["resolution"] == "dissolved"
    again = app.remember("接口 /api/foo 返回 500")  # both still claim 200: one new set of three
    assert again["conflicts_total"] == 1 and again["conflicts"][0]["member_count"] == 3


def test_an_unrelated_change_leaves_the_conflict_alone(app: LedgerApp) -> None:
    a, _b, cid = pair(app)
    app.update(a, tags=["api"])  # no text change: claims are not looked at again
    assert state(app, cid) == "open"


def test_resolve_keep_both_changes_no_memory(app: LedgerApp) -> None:
    a, b, cid = pair(app)
    result = app.resolve_conflict(cid, resolution="keep_both", authorization=AUTH_USER)
    assert result["conflict"]["state"] == "resolved" and result["conflict"]["resolution"] == "keep_both"
    assert {app.read(m)["memory"]["status"] for m in (a, b)} == {"active"}
    with pytest.raises(InvalidInput):
        app.resolve_conflict(cid, winner_id=a, authorization=AUTH_USER)


def test_resolve_with_a_winner_supersedes_the_other_member(app: LedgerApp) -> None:
    a, b, cid = pair(app)
    result = app.resolve_conflict(cid, winner_id=a, authorization=AUTH_USER)
    assert result["conflict"]["state"] == "resolved" and result["conflict"]["winner_id"] == a
    loser = app.read(b)["memory"]
    assert loser["status"] == "superseded" and loser["superseded_by"] == a
    assert app.read(a)["memory"]["supersedes"] == [b]
    assert app.find("api foo")["results"][0]["memory_id"] == a
    assert [r["memory_id"] for r in app.find("api foo")["results"]] == [a]  # inactive never in a default find


def test_supersede_chains_read_both_ways_and_settle_conflicts(app: LedgerApp) -> None:
    a, b, cid = pair(app)
    c = app.remember("接口 /api/foo 返回 410", event_time="2025-07-09T00:00:00Z")["memory_id"]
    result = app.supersede(a, b, reason="404 is newer", authorization=AUTH_AGENT)
    assert result["resolved_conflicts"] == []  # 404 and 410 still disagree: a only leaves the set
    still = app.conflict_detail(cid)["conflict"]
    assert still["state"] == "open" and still["member_count"] == 2 and sorted(still["members"]) == [b, c]
    gone = next(m for m in still["memories"] if m["memory_id"] == a)
    assert gone["in_set"] is False and gone["left_reason"] == "404 is newer"
    settled_now = app.supersede(b, c, authorization=AUTH_AGENT)
    assert settled_now["resolved_conflicts"] == [cid]
    settled = app.conflict_detail(cid)["conflict"]
    assert (settled["resolution"], settled["winner_id"]) == ("winner", c)
    middle = app.read(b)["memory"]
    assert middle["supersedes"] == [a] and middle["superseded_by"] == c
    assert app.read(c)["memory"]["supersedes"] == [b]
    assert app.conflicts(state="open")["conflicts"] == []  # every conflict with a dead member is settled
    check = next(x for x in app.doctor()["checks"] if x["name"] == "conflicts_with_inactive_members")
    assert check["severity"] == "ok"
    with pytest.raises(InvalidInput):
        app.supersede(a, c, authorization=AUTH_AGENT)  # a is no longer current


def test_retire_and_retraction_settle_open_conflicts(app: LedgerApp) -> None:
    a, b, cid = pair(app)
    app.retire(b, reason="wrong environment", authorization=AUTH_USER)
    resolved = app.conflict_detail(cid)["conflict"]
    assert resolved["state"] == "resolved" and resolved["winner_id"] == a
    assert resolved["resolution"] == "retired" and resolved["reason"] == "wrong environment"
    c = app.remember("接口 /api/foo 返回 500", event_time=T6)
    (conflict,) = c["conflicts"]
    app.remember("please disregard the 500 note", ref_id=c["memory_id"], retracts=True)
    assert state(app, conflict["conflict_id"]) == "resolved"
    assert app.read(c["memory_id"])["memory"]["status"] == "retired"


def test_arbitrate_marks_and_applies_in_one_call(app: LedgerApp) -> None:
    a = app.remember("the build server is ci-7", subject="build", event_time=T1)["memory_id"]
    b = app.remember("our build machine moved to a new host", subject="build", event_time=T6)["memory_id"]
    before = app.store.last_position()
    result = app.arbitrate(a, b, mark_conflict=True, apply=True, authorization=AUTH_AGENT)
    assert result["applied"] and result["verdict"]["winner_id"] == b and result["verdict"]["rule"] == "event_time"
    written = list(app.store.read(after=before))
    assert [e.type for e in written] == ["ClaimCollided", "Superseded", "ConflictResolved"]
    superseded = written[1].data
    assert superseded.rule == "event_time" and superseded.authorization == AUTH_AGENT  # type: ignore[attr-defined]
    assert {e.actor for e in written} == {"test:pytest"} and len({e.recorded_at[:19] for e in written}) == 1
    assert state(app, result["conflict_id"]) == "resolved"


def test_arbitrate_settles_an_existing_conflict_and_refuses_bad_pairs(app: LedgerApp) -> None:
    a, b, cid = pair(app)
    unrelated = app.remember("the office closes at 6pm", subject="office")["memory_id"]
    with pytest.raises(InvalidInput):
        app.arbitrate(a, unrelated, apply=True, authorization=AUTH_USER)
    result = app.arbitrate(a, b, apply=True, authorization=AUTH_USER)
    assert result["conflict_id"] == cid and state(app, cid) == "resolved"
    with pytest.raises(InvalidInput):
        app.arbitrate(a, b, apply=True, authorization=AUTH_USER)  # a side is no longer current
    c = app.remember("接口 /api/foo 返回 418", event_time=T2)["memory_id"]
    recorded = app.arbitrate(b, c, authorization=AUTH_USER)
    assert not recorded["applied"] and recorded["conflict_id"] is not None  # the write already opened one


def test_apply_refuses_when_no_rule_separates(app: LedgerApp, monkeypatch: pytest.MonkeyPatch) -> None:
    from fact_ledger.ledger import clock

    monkeypatch.setattr(clock, "now", lambda: "2025-07-10T00:00:00.000000Z")  # a tie on ingest time too
    a = app.remember("the timezone is UTC", subject="tz", event_time=T1)["memory_id"]
    b = app.remember("the timezone is CET", subject="tz", event_time=T1)["memory_id"]
    assert app.compare(a, b)["verdict"]["manual_review"] is True
    with pytest.raises(InvalidInput):
        app.arbitrate(a, b, apply=True, authorization=AUTH_USER)


def test_policy_review_agent_conflicts_needs_a_person_to_apply(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "r.db"), client="test", policy=Policy(review_agent_conflicts=True)))
    a, b, cid = pair(app)
    verdict = app.conflict_detail(cid)["conflict"]["verdict"]
    assert verdict["manual_review"] is True and verdict["winner_id"] == b
    with pytest.raises(Unauthorized):
        app.arbitrate(a, b, apply=True, authorization=AUTH_AGENT)
    assert app.arbitrate(a, b, apply=True, authorization=AUTH_USER)["applied"]
    app.close()


def test_an_update_that_creates_a_collision_reports_it(app: LedgerApp) -> None:
    a = app.remember("port is 8080", subject="staging")["memory_id"]
    b = app.remember("port is 9090", subject="production")
    assert b["conflicts"] == []
    result = app.update(b["memory_id"], subject="staging")
    assert result["conflicts_total"] == 1 and result["conflicts"][0]["other_id"] == a
    again = app.update(b["memory_id"], content="port is 9091")
    # the pair already has an unresolved set: no second one opens, and the answer names that set
    # with the value the memory states now (it answered none, and the set kept 9090)
    assert again["conflicts_total"] == 1 and again["conflicts"][0]["claim"]["value"] == "9091"
    assert again["conflicts"][0]["conflict_id"] == result["conflicts"][0]["conflict_id"]


def test_conflict_lists_filter_by_state(app: LedgerApp) -> None:
    _, _, first = pair(app)
    _, _, second = pair(app, "the VPN gateway is vpn-1", "the VPN gateway is vpn-2")
    app.resolve_conflict(first, resolution="keep_both", authorization=AUTH_USER)
    assert [c["conflict_id"] for c in app.conflicts()["conflicts"]] == [second]
    assert [c["conflict_id"] for c in app.conflicts(state="resolved")["conflicts"]] == [first]
    assert app.conflicts(state="all")["total"] == 2
    with pytest.raises(InvalidInput):
        app.conflicts(state="closed")
    overview = app.overview()
    assert overview["conflicts"] == {"open": 1, "judged": 0, "resolved": 1} and overview["open_conflicts"] == 1


def test_racing_writers_never_miss_each_others_collision(db_path: Path) -> None:
    """The collision check reads claims inside the write transaction (BEGIN IMMEDIATE).

    The two writers start each round together (a barrier per round), so their writes race for
    the lock and the log shows them interleaved — proved before anything else is checked.
    """
    import threading

    apps = [LedgerApp(Settings(db=str(db_path), client=f"w{i}")) for i in range(2)]
    rounds = 6
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def writer(app: LedgerApp, offset: int) -> None:
        try:
            for i in range(rounds):
                start.wait(timeout=30)
                app.remember(f"the shared cache port is {7000 + offset + 2 * i}")
        except BaseException as exc:  # surfaced below: a thread's assertion would be lost
            failures.append(exc)
            start.abort()

    threads = [threading.Thread(target=writer, args=(app, i)) for i, app in enumerate(apps)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    created = [e for e in apps[0].store.read() if e.type.startswith("Memory") and e.stream_version == 1]
    writers = [e.actor.split(":")[0] for e in created]
    assert sorted(writers) == ["w0"] * rounds + ["w1"] * rounds, writers
    switches = sum(a != b for a, b in itertools.pairwise(writers))
    assert switches >= rounds, writers  # interleaved: each round holds one write of each writer
    sets = list(apps[0].conn.execute("SELECT member_count FROM conflicts"))
    assert sets == [(12,)]  # every write joined the one set of the claim
    for app in apps:
        app.close()


def test_a_changed_taste_is_a_conflict_and_a_second_taste_is_not(app: LedgerApp) -> None:
    first = app.remember("用户喜欢喝咖啡，不喜欢茶。", subject="用户偏好", event_time=T1)["memory_id"]
    assert app.remember("The user likes jazz", subject="user", event_time=T2)["conflicts_total"] == 0
    flipped = app.remember("用户现在不喜欢喝咖啡了", subject="用户偏好", event_time=T6)
    (conflict,) = flipped["conflicts"]
    assert conflict["other_id"] == first and conflict["claim"]["attribute"] == "喜欢喝咖啡"
    assert conflict["claim"]["value"] == "no" and conflict["member_count"] == 2
    assert conflict["verdict"]["winner_id"] == flipped["memory_id"] and conflict["verdict"]["rule"] == "event_time"


def test_find_shows_each_result_its_own_unresolved_conflicts(app: LedgerApp) -> None:
    a, b, first = pair(app)
    c, d, second = pair(app, "接口 /api/bar 返回 200", "接口 /api/bar 返回 500")
    apart = app.remember("接口文档在共享目录里")["memory_id"]
    app.resolve_conflict(second, winner_id=d, authorization=AUTH_USER)
    shown = {r["memory_id"]: r["conflict_ids"] for r in app.find("接口", limit=10)["results"]}
    assert shown[a] == shown[b] == [first]
    assert c not in shown or shown[c] == []  # its conflict is resolved (c lost and left the active set)
    assert shown[d] == [] and shown[apart] == []
    assert all(shown[m] == app.read(m)["memory"]["conflict_ids"] for m in shown)
