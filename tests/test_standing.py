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
