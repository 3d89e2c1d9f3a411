"""Full-text search through the facade: English and Chinese, exact phrases, ranking signals,
hostile queries, current-only results, the bounded query plan and rebuild determinism."""

from __future__ import annotations

import re
import time

import pytest

from fact_ledger.projections.search import queries as search_module
from fact_ledger.server.app.facade import LedgerApp
from tests.test_text import HOSTILE


def ids(result: dict) -> list[int]:
    assert result["ok"] is True
    return [r["memory_id"] for r in result["results"]]


def remember(app: LedgerApp, content: str, **kw: object) -> int:
    return app.remember(content, **kw)["memory_id"]


def test_english_words_are_stemmed_and_ranked(app: LedgerApp) -> None:
    port = remember(app, "The staging API listens on port 8080", subject="staging")
    deploy = remember(app, "Production deploys happen on Fridays")
    remember(app, "The kitchen printer is on the second floor")
    assert ids(app.find("staging ports"))[0] == port
    deploys = ids(app.find("deploying production"))
    assert deploys == [deploy]  # stemmed: deploys / deploying, production; the others share no word


def test_chinese_two_and_one_character_words_are_found(app: LedgerApp) -> None:
    api = remember(app, "接口返回的数据格式是JSON")
    cat = remember(app, "我家的猫叫小白")
    remember(app, "明天下午开会讨论预算")
    assert ids(app.find("接口"))[0] == api
    assert ids(app.find("数据"))[0] == api
    assert ids(app.find("猫"))[0] == cat
    assert ids(app.find("返回的数据"))[0] == api
    assert ids(app.find("JSON 接口"))[0] == api


def test_mixed_script_text_is_found_by_either_part(app: LedgerApp) -> None:
    memory = remember(app, "我们使用Python开发后端服务")
    assert ids(app.find("Python开发"))[0] == memory
    assert ids(app.find("使用python"))[0] == memory
    assert ids(app.find("python"))[0] == memory


def test_a_verbatim_phrase_outranks_memories_with_the_same_words(app: LedgerApp) -> None:
    scattered = [remember(app, f"report {i}: the deploy was late, the review on time") for i in range(5)]
    exact = remember(app, "the review was late, then the deploy went on time")
    assert ids(app.find("the review was late"))[0] == exact
    assert exact not in ids(app.find("report 3"))[:1] and scattered[3] in ids(app.find("report 3"))


def test_only_current_memories_by_default(app: LedgerApp) -> None:
    old = remember(app, "The VPN gateway is vpn-old.example.com")
    app.remember("The VPN gateway moved to vpn-new.example.com", ref_id=old, retracts=True)
    assert old not in ids(app.find("VPN gateway"))
    assert old in ids(app.find("VPN gateway", include_inactive=True))


def test_subject_tags_and_trust_break_ties(app: LedgerApp) -> None:
    body = remember(app, "The cache is warmed nightly by a cron job")
    tagged = remember(app, "Warm-up runs nightly from a scheduled job", tags=["cache"])
    subject = remember(app, "It is warmed nightly by a scheduled job", subject="cache")
    top = ids(app.find("cache"))
    assert set(top) == {body, tagged, subject} and top[0] in (subject, tagged)
    remember(app, "Office wifi password rotates monthly", subject="wifi")
    user = remember(app, "Office wifi password changes monthly", subject="wifi", source_type="user_confirmed")
    assert ids(app.find("wifi password"))[0] == user


def test_session_context_finds_the_answer_after_the_question(app: LedgerApp) -> None:
    when = "2023-05-08T13:56:00Z"
    remember(app, "Melanie: Hey Caroline! How was the weekend?", event_time=when)
    remember(app, "Caroline: Wow, what an amazing family pic! How long have you been married?", event_time=when)
    answer = remember(app, "Melanie: 5 years already! Time flies, Caroline.", event_time=when)
    remember(app, "Caroline: Melanie, did you see the game on Sunday?", event_time=when)
    remember(app, "Melanie: Caroline, I made pottery with the kids yesterday.", event_time=when)
    assert answer in ids(app.find("How long have Melanie and her husband been married?", limit=2))


def test_context_never_adds_a_memory_without_any_query_term(app: LedgerApp) -> None:
    first = remember(app, "the ledger uses APSW")
    remember(app, "aliases canonicalise names")
    assert ids(app.find("ledger")) == [first]


def test_a_speaker_label_counts_as_the_subject(app: LedgerApp) -> None:
    when = "2023-05-08T13:56:00Z"
    remember(app, "Caroline: Jon told me he bought a new guitar", event_time=when)
    own = remember(app, "Jon: I finally bought a new guitar", event_time="2023-01-01T10:00:00Z")
    assert ids(app.find("What guitar did Jon buy?"))[0] == own
    remember(app, "小红: 小明买了一把新吉他", event_time=when)
    mine = remember(app, "小明: 我买了一把新吉他", event_time="2023-01-01T10:00:00Z")
    assert ids(app.find("小明 吉他"))[0] == mine


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_are_plain_text(app: LedgerApp, query: str) -> None:
    memory = remember(app, 'Quotes " and stars * and NEAR(a b) and subject:x and (parens) 🔥 fire')
    other = remember(app, "an unrelated note about fire drills")
    assert set(ids(app.find(query, limit=5))) <= {memory, other}  # no error, nothing invented
    assert memory in ids(app.find(f"{query} parens", limit=5))  # the query's syntax never hides a word


def test_hostile_queries_still_find_their_words(app: LedgerApp) -> None:
    memory = remember(app, "subject: NEAR the AND gate, see (figure 2)")
    for query in ["subject:NEAR", "NEAR(gate", '"AND gate"', "figure 2)", "gate*", "^gate"]:
        assert memory in ids(app.find(query)), query
    emoji = remember(app, "🔥🔥🔥")
    assert ids(app.find("🔥")) == [emoji]


def test_a_5000_character_query_is_answered_quickly(app: LedgerApp) -> None:
    memory = remember(app, "alpha beta gamma delta")
    started = time.perf_counter()
    result = app.find("alpha beta gamma delta " + "lorem ipsum dolor sit amet " * 185)
    assert time.perf_counter() - started < 2.0
    assert memory in ids(result)


def fts_queries(app: LedgerApp, query: str, **kw: object) -> tuple[list[int], list[tuple[str, str]]]:
    """The result ids of ``find`` and each full-text match it ran: (ORDER BY clause, MATCH expression)."""
    ran: list[tuple[str, str]] = []

    def trace(cursor: object, sql: str, bindings: object) -> bool:
        # One statement may run several matches (projections/search/queries.py, _match_all): each is
        # "search_fts MATCH ? ORDER BY <order> LIMIT ?", its expression the binding of that "?".
        for match in re.finditer(r"search_fts MATCH \?( AND [^?]*?)? ORDER BY (.+?) LIMIT", sql):
            if match.group(1) and "?" in match.group(1):
                continue
            ran.append((match.group(2).strip(), str(bindings[sql[: match.start()].count("?")])))  # type: ignore[index]
        return True

    app.conn.exec_trace = trace
    try:
        found = ids(app.find(query, **kw))
    finally:
        app.conn.exec_trace = None
    return found, ran


def test_common_terms_take_the_bounded_path(app: LedgerApp, monkeypatch: pytest.MonkeyPatch) -> None:
    # RARE lowered so "common" and "rare" happen at test scale; the plan must still find both.
    monkeypatch.setattr(search_module, "RARE", 3)
    monkeypatch.setattr(search_module, "COMMON_CAP", 6)
    many = [remember(app, f"server note {i} about disks") for i in range(8)]
    rare = remember(app, "server note about the zebra migration")
    found, ran = fts_queries(app, "zebra server")
    assert found[0] == rare
    ranked = [expression for order, expression in ran if "bm25" in order]
    assert ranked and all("zebra" in e and "server" not in e for e in ranked), ran  # only the rare term is ranked
    common, ran = fts_queries(app, "server disks", limit=10)
    assert set(common[:8]) == set(many) and common[8:] == [rare]
    assert ran and not [order for order, _ in ran if "bm25" in order], ran  # no bm25 over a common term
    assert {order for order, _ in ran} == {"rowid DESC"}
    assert len(ids(app.find("note", limit=3))) == 3


def test_filters_that_reject_the_best_matches_fall_back(app: LedgerApp, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "POOL_MIN", 2)
    monkeypatch.setattr(search_module, "POOL_PER_RESULT", 1)
    for i in range(12):
        remember(app, f"quarterly budget review {i} budget budget", workspace="finance")
    mine = remember(app, "the budget for the offsite", workspace="events")
    assert ids(app.find("budget", workspace="events")) == [mine]


def test_updates_reindex_the_memory(app: LedgerApp) -> None:
    memory = remember(app, "The build server is jenkins-01")
    app.update(memory, content="The build server is buildkite")
    assert memory in ids(app.find("buildkite"))
    assert memory not in ids(app.find("jenkins"))


def test_rebuild_regenerates_the_same_search_projection(app: LedgerApp) -> None:
    for text in ("接口返回数据", "The staging API listens on port 8080", "我们使用Python开发"):
        remember(app, text, tags=["t"])
    renamed = remember(app, "renamed later")
    app.update(renamed, content="renamed now 已更新")
    before = app.runner.checksums(["search"])
    query_before = app.find("接口 python")
    app.rebuild("search")
    assert app.runner.checksums(["search"]) == before
    assert app.find("接口 python") == query_before
