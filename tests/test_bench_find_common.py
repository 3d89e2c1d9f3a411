"""``tools/bench/find_common.py`` runs end to end; its queries are made of frequent words only."""

from __future__ import annotations

import json
import random

import pytest

from fact_ledger.ledger.text import STOP_WORDS
from tools.bench import find_common
from tools.bench.corpus import Corpus, common_queries

pytestmark = pytest.mark.slow


def test_common_queries_are_frequent_content_words_that_a_quarter_of_the_corpus_answers() -> None:
    memories = list(Corpus(seed=3).memories(3000))
    queries = common_queries(memories, 20, random.Random(1))
    assert len(queries) == 20
    for query in queries:
        words = set(query.split())
        assert words and not words & STOP_WORDS  # find would drop stop words: they are not the test
        share = sum(1 for m in memories if words & {w.strip(".,").lower() for w in m.content.split()}) / 3000
        assert 0.2 <= share <= 0.35, (query, share)


def test_find_common_benchmark_reports_both_kinds_and_the_budget(capsys: pytest.CaptureFixture[str]) -> None:
    assert find_common.main(["--memories", "1500", "--queries", "10"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["find_ms"]["common_words"]["n"] == report["find_ms"]["mixed"]["n"] == 10
    assert report["find_ms"]["common_words"]["mean_results"] == 10  # a common query always fills the page
    assert report["common_words_share"]["any_of_a_query_mean"] > 0.05  # every query matches widely
    assert report["budget"]["budget_ms"] == 10.0 and isinstance(report["budget"]["holds"], bool)
