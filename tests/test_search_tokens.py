"""The bounded search path: the index's stored tokens, its one-statement document frequencies,
the phrase query skipped when no memory holds all the terms, and a candidate pool sized by the
page shown. Each must give what the slower way gives."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fact_ledger.ledger.text import analyse, index_text
from fact_ledger.projections.search import queries as search_module
from fact_ledger.projections.search.index import TOKEN_FIELDS, doc_tokens, tokens
from fact_ledger.projections.search.queries import SearchFilters, document_frequencies
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LedgerApp]:
    app = LedgerApp(Settings(db=str(tmp_path_factory.mktemp("tokens") / "ledger.db"), client="test"))
    yield app
    app.close()


def stored(app: LedgerApp, memory_id: int) -> tuple[str, str, str, str]:
    return app.conn.execute(
        "SELECT subject, body, tags, tokens FROM search_docs WHERE memory_id=?", (memory_id,)
    ).fetchone()


def fresh(app: LedgerApp, subject: str, content: str, tags: list[str]) -> list[list[str]]:
    """What tokenising the memory's fields now gives, without the stored column."""
    return [tokens(app.conn, index_text(text)) for text in (subject, content, " ".join(tags))]


def as_fields(column: str) -> list[list[str]]:
    return [field.split() for field in column.split(TOKEN_FIELDS)]


CHARACTERS = [*"abc XYZ éü 0 9 _-'.,:\n\t接口返回数据猫 ", "🙂", "Ｆｕｌｌ", "\u200b"]
TEXT = st.lists(st.sampled_from(CHARACTERS), max_size=40).map("".join)
TAGS = st.lists(st.sampled_from(["ops", "数据", "Déjà"]), max_size=2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(subject=TEXT, content=TEXT.filter(str.strip), tags=TAGS)
def test_stored_tokens_equal_a_fresh_tokenisation(
    ledger: LedgerApp, subject: str, content: str, tags: list[str]
) -> None:
    memory = ledger.remember(content, subject=subject, tags=tags)["memory_id"]  # or its exact duplicate
    row = stored(ledger, memory)
    now = ledger.conn.execute("SELECT subject, content, tags FROM memories WHERE memory_id=?", (memory,)).fetchone()
    assert as_fields(row[3]) == fresh(ledger, now[0], now[1], json.loads(now[2]))
    assert row[3] == doc_tokens(ledger.conn, row[:3])  # fields never bleed into each other


def test_updates_and_rebuilds_recut_the_stored_tokens(app: LedgerApp) -> None:
    memory = app.remember("The build server is jenkins-01", subject="ci", tags=["build"])["memory_id"]
    app.update(memory, content="Die Builds laufen auf buildkite 接口")
    assert as_fields(stored(app, memory)[3]) == fresh(app, "ci", "Die Builds laufen auf buildkite 接口", ["build"])
    app.update(memory, subject="Pipelines", tags=["ops", "数据"])
    expected = fresh(app, "Pipelines", "Die Builds laufen auf buildkite 接口", ["ops", "数据"])
    assert as_fields(stored(app, memory)[3]) == expected
    app.rebuild("search")  # the bulk path writes the column too
    assert as_fields(stored(app, memory)[3]) == expected


def test_a_speaker_label_still_moves_to_the_subject(app: LedgerApp) -> None:
    turn = app.remember("Caroline: I went to the adoption meeting")["memory_id"]
    titled = app.remember("Caroline: the adoption meeting", subject="Adoption")["memory_id"]
    (candidate,) = search_module._candidates(app.conn, [turn], set(), "", [])
    assert candidate.fields == (["carolin"], ["i", "went", "to", "the", "adopt", "meet"], [])
    (candidate,) = search_module._candidates(app.conn, [titled], set(), "", [])  # a subject of its own wins
    assert candidate.fields == (["adopt"], ["carolin", "the", "adopt", "meet"], [])


def test_document_frequencies_count_exactly_up_to_the_cap(app: LedgerApp, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "COMMON_CAP", 5)
    for i in range(9):
        app.remember(f"disk {i} on the {'zebra' if i < 2 else 'rack'} host 接口" + (" 数据" * (i % 2)))
    terms = analyse("disk zebra rack host missing 接口 数据 接").terms
    direct = [
        app.conn.execute("SELECT count(*) FROM search_fts WHERE search_fts MATCH ?", (t.fts(),)).get for t in terms
    ]
    assert direct == [9, 2, 7, 9, 0, 9, 4, 9]
    assert document_frequencies(app.conn, terms) == [min(n, 6) for n in direct]
    assert document_frequencies(app.conn, ()) == []


WORDS = ["alpha", "beta", "gamma", "the", "of", "deploy", "接口", "返回", "数据", "猫"]


@pytest.fixture(scope="module")
def phrases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LedgerApp]:
    """Memories made of few words, so that every few-word query is a phrase of some of them."""
    import random

    rng = random.Random(3)
    app = LedgerApp(Settings(db=str(Path(tmp_path_factory.mktemp("phrases")) / "ledger.db"), client="test"))
    for _ in range(60):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 7))]
        app.remember(" ".join(words))
    yield app
    app.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.lists(st.sampled_from([*WORDS, "zeta"]), min_size=2, max_size=5).map(" ".join))
def test_the_phrase_query_is_skipped_only_when_it_cannot_match(phrases: LedgerApp, query: str) -> None:
    conn = phrases.conn
    parsed = analyse(query)
    where, params = SearchFilters().sql()
    dfs = document_frequencies(conn, parsed.terms)
    phrase, found = search_module._retrieve(conn, parsed, dfs, where, params, pool=1000)
    direct = conn.execute("SELECT rowid FROM search_fts WHERE search_fts MATCH ?", (parsed.phrase_fts(),))
    holders = {r[0] for r in direct}
    assert phrase == holders
    assert holders <= set(found)
    hits, _ = search_module.search(conn, query, SearchFilters(), limit=1000)
    assert {h.memory_id for h in hits if h.phrase} == holders  # each verbatim match is found, and marked


def test_the_pool_is_sized_by_the_page_and_keeps_the_verbatim_match(
    app: LedgerApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "RARE", 3)  # every query term is common at test scale
    verbatim = app.remember("rotates the week shift plan")["memory_id"]
    for i in range(80):
        app.remember(f"shift {i}: the week plan rotates again")
    pooled: list[int] = []
    candidates = search_module._candidates

    def counting(conn, ids, *args):  # type: ignore[no-untyped-def]
        pooled.append(len(ids))
        return candidates(conn, ids, *args)

    monkeypatch.setattr(search_module, "_candidates", counting)
    found = app.find("rotates the week shift plan", limit=5)["results"]
    assert found[0]["memory_id"] == verbatim  # the oldest match, found by the phrase query
    pool = max(6 * search_module.POOL_PER_RESULT, search_module.POOL_MIN)  # 5 shown + 1 to tell has_more
    assert pooled[0] <= pool + 1 < 80  # the newest of all 81 that hold every term, and the verbatim one
    assert len(app.find("week rotates", limit=5)["results"]) == 5
