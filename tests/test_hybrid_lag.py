"""Hybrid recall while the vectors lag (:func:`projections.hybrid.fuse`): a candidate that has
no vector yet (written a moment ago, or not reached by a ``reembed``) is ranked on its text
alone, never as "far" from the query. Real tiny model (tests/tiny_model.py): its vectors carry
no meaning, which is the point: with half the ledger embedded, the embedded half must not
crowd the rest out, so recall stays at least at full text's.
"""

from __future__ import annotations

import pytest

from fact_ledger.projections.hybrid import Pool, fuse
from fact_ledger.projections.indexer import Indexer
from fact_ledger.projections.search import queries as search
from fact_ledger.server.app.facade import LedgerApp

NAMES = ("ada", "bruno", "chen", "dara", "emil", "farah", "goran", "hana", "ines", "jonas")
THINGS = ("coffee", "tea", "music", "book", "dog", "cat")
CITIES = ("oslo", "lima", "kyoto", "accra")


def _facts() -> list[tuple[str, str]]:
    """(fact, question) pairs: each question shares two rare words with its fact, in another order."""
    out = []
    for i, name in enumerate(NAMES):
        for j, city in enumerate(CITIES):
            thing = THINGS[(i + j) % len(THINGS)]
            out.append((f"{name} likes the {thing} in {city} every morning", f"{city} {name} what"))
    return out


def test_a_memory_written_just_before_the_query_ranks_first(sem: LedgerApp) -> None:
    for i in range(30):
        sem.remember(f"note {i}: the staging server of team t{i} moved to port {8000 + i}")
    assert sem.reembed()["lag"] == 0
    target = sem.remember("the budget meeting of the green project moved to the blue room")["memory_id"]
    assert sem.vectors_status()["lag"] == 1  # not embedded yet
    found = sem.find("blue room budget meeting green project", limit=5)["results"]
    assert found[0]["memory_id"] == target


def test_half_embedded_keeps_recall_at_least_at_full_text(sem: LedgerApp) -> None:
    facts = _facts()
    ids = [sem.remember(fact)["memory_id"] for fact, _ in facts[: len(facts) // 2]]
    Indexer(sem.store, sem.embedding_model()).run()  # the first half embedded
    ids += [sem.remember(fact)["memory_id"] for fact, _ in facts[len(facts) // 2 :]]
    assert sem.vectors_status()["lag"] == len(facts) // 2

    def recall(rank: list[list[int]]) -> float:
        return sum(memory_id in top[:5] for memory_id, top in zip(ids, rank, strict=True)) / len(ids)

    hybrid = [[r["memory_id"] for r in sem.find(q, limit=5)["results"]] for _, q in facts]
    lexical = [[h.memory_id for h in search.search(sem.conn, q, search.SearchFilters(), 5)[0]] for _, q in facts]
    assert sem.status()["search_mode"] == "vector+fts"
    assert recall(hybrid) >= recall(lexical) > 0.5


def test_a_candidate_without_a_vector_is_ranked_on_its_text() -> None:
    pool = Pool(
        ids=[1, 2, 3],
        text={1: 10.0, 2: 5.0, 3: 0.0},
        similarity={2: 0.9, 3: 0.8},
        phrase=set(),
        nearest=[2, 3],
        total=2,
    )
    assert [i for i, _ in fuse(pool, (0.4, 0.6))] == [1, 2, 3]  # 1: unknown closeness, best text
    assert dict(fuse(pool, (0.4, 0.6)))[1] == 1.0


def _lagging_pool() -> Pool:
    """Text matches 1 and 2 have no vector yet, 3 has one; 4 is a nearest neighbour drawn from the
    embedded part of the ledger, sharing no word with the query."""
    return Pool(
        ids=[1, 2, 3, 4],
        text={1: 10.0, 2: 8.0, 3: 6.0},
        similarity={3: 0.2, 4: 0.9},
        phrase=set(),
        nearest=[4, 3],
        total=3,
    )


def test_while_most_text_matches_lack_a_vector_meaning_speaks_in_proportion() -> None:
    # Two of three text candidates have no vector: a neighbour found by meaning alone among the
    # embedded third must not push a text match below it (full weight put it third, above 3).
    ranked = fuse(_lagging_pool(), (0.4, 0.6))
    assert [i for i, _ in ranked] == [1, 2, 3, 4]
    scores = dict(ranked)
    assert scores[4] == pytest.approx(0.6 / 3)  # its closeness, at a third of its weight
    assert scores[3] == pytest.approx(2 / 3 * 0.6 + 1 / 3 * 0.4 * 0.6)  # 2/3 text alone, 1/3 the weighted sum


def test_once_every_text_match_has_a_vector_the_calibrated_fusion_holds() -> None:
    pool = _lagging_pool()
    pool.similarity.update({1: 0.1, 2: 0.15})
    scores = dict(fuse(pool, (0.4, 0.6)))
    assert scores[4] == pytest.approx(0.6)  # the best closeness, text 0: the weighted sum exactly
    assert scores[1] == pytest.approx(0.4)  # best text, worst closeness


def test_a_memory_edited_since_it_was_embedded_has_no_vector_until_it_is_again(sem: LedgerApp) -> None:
    """Its stored vector embeds the old text: ``find`` ranked it by what it no longer says (an
    edit from "Alice prefers tea" to "Carlos maintains the cluster" still matched a tea question
    by meaning). Until the indexer embeds the new text it counts as not embedded yet."""
    from fact_ledger.projections.hybrid import candidates

    ids = [
        sem.remember(f"note {i}: the staging server of team t{i} moved to port {8000 + i}")["memory_id"]
        for i in range(4)
    ]
    edited = ids[0]
    assert sem.reembed()["lag"] == 0
    query = "where did the staging server move"
    vector = sem.embedding_model().embed_query(query)
    before = candidates(sem.conn, query, search.SearchFilters(), 30, vector)
    assert edited in before.similarity  # embedded, and a candidate by meaning
    sem.update(edited, content="Carlos maintains the Kubernetes cluster upgrades")
    stale = candidates(sem.conn, query, search.SearchFilters(), 30, vector)
    assert edited not in stale.similarity and edited not in stale.ids, stale
    assert all(m in stale.similarity for m in ids[1:])  # the others keep theirs
    sem.reembed()
    again = candidates(sem.conn, query, search.SearchFilters(), 30, vector)
    assert edited in again.similarity
