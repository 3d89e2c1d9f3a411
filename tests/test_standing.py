"""``find`` says which value of a disputed claim is current: leader or challenger."""

from __future__ import annotations

from fact_ledger.ledger.arbiter import leaders_first
from fact_ledger.server.app.facade import LedgerApp

T1, T2 = "2025-01-01T00:00:00Z", "2025-06-01T00:00:00Z"


def test_leaders_first_moves_a_leader_up_to_its_first_challenger() -> None:
    assert leaders_first([1, 2, 3, 4], {1: 3, 3: 3, 4: 3}) == [3, 1, 2, 4]
    assert leaders_first([1, 2], {1: 9}) == [1, 2]  # the leader did not answer the query
    assert leaders_first([5, 6], {5: None, 6: None}) == [5, 6]  # a tie: no leader


def _standing(result: dict, memory_id: int) -> dict:
    return next(r for r in result["results"] if r["memory_id"] == memory_id)["standing"]


def test_english_the_current_value_ranks_first_and_each_result_says_its_standing(app: LedgerApp) -> None:
    paris = app.remember("Bob lives in Paris", subject="Bob", event_time=T1)["memory_id"]
    berlin = app.remember("Bob moved to Berlin", subject="Bob", event_time=T2)["memory_id"]
    found = app.find("where does Bob live")
    ids = [r["memory_id"] for r in found["results"]]
    assert ids.index(berlin) < ids.index(paris)
    leader, challenger = _standing(found, berlin), _standing(found, paris)
    assert leader["role"] == "leader" and challenger["role"] == "challenger"
    assert challenger["leader_id"] == berlin == leader["leader_id"]
    assert challenger["conflict_id"] == leader["conflict_id"] and challenger["claim"]["attribute"]
    only = app.find("Paris")  # only the challenger's wording: it is found, marked as the challenger
    assert only["results"][0]["memory_id"] == paris and only["results"][0]["standing"]["leader_id"] == berlin


def test_chinese_a_changed_taste_ranks_the_current_one_first(app: LedgerApp) -> None:
    likes = app.remember("用户喜欢喝咖啡", subject="用户", event_time=T1)["memory_id"]
    dislikes = app.remember("用户不喜欢喝咖啡了", subject="用户", event_time=T2)["memory_id"]
    found = app.find("咖啡")
    ids = [r["memory_id"] for r in found["results"]]
    assert ids[:2] == [dislikes, likes]
    assert _standing(found, dislikes)["role"] == "leader" and _standing(found, likes)["role"] == "challenger"
    scores = [r["score"] for r in found["results"]]
    assert scores == sorted(scores, reverse=True)


def test_a_memory_outside_any_set_has_no_standing(app: LedgerApp) -> None:
    app.remember("The deploy checklist lives in the wiki")
    assert "standing" not in app.find("deploy checklist")["results"][0]


def test_the_standing_leader_is_the_set_verdicts_leader_in_every_kind_of_set(app: LedgerApp) -> None:
    """``find`` reads each set's best two members in the statement that finds the memberships;
    the leader it names must be the one the set's verdict names."""
    from fact_ledger.projections.conflicts.queries import memberships_with_leaders
    from fact_ledger.server.app.set_verdicts import set_verdict

    sets = [
        [("agent_generated", T1, 0.9), ("agent_generated", T2, 0.5)],  # newer event time leads
        [("agent_generated", T1, 0.7), ("agent_generated", T1, 0.7)],  # the later ingest leads
        [("unknown", T1, 1.0), ("agent_generated", T1, 0.9), ("document_extracted", T1, 0.5)],  # the last one
        [("user_confirmed", T1, 0.5), ("agent_generated", T2, 1.0)],  # the user's word leads
    ]
    ids: list[int] = []
    for n, members in enumerate(sets):
        for value, (source, when, confidence) in enumerate(members):
            ids.append(
                app.remember(
                    f"Service {n} listens on port {9000 + value}",
                    subject=f"service {n}",
                    source_type=source,
                    event_time=when,
                    confidence=confidence,
                )["memory_id"]
            )
    rows = memberships_with_leaders(app.conn, ids)
    assert len({cid for _, cid, *_ in rows}) == len(sets)
    review = app.settings.policy.review_agent_conflicts
    leaders = set()
    for memory_id, cid, _subject, _attribute, best in rows:
        expected = set_verdict(app.conn, cid, review_agent_conflicts=review)["leader_id"]
        assert len(best) == 2
        assert app.governance_views.standings([memory_id])[0][memory_id]["leader_id"] == expected
        leaders.add(expected)
    assert len(leaders) == len(sets)
