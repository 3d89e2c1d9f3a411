"""Hybrid recall across scripts (:func:`projections.hybrid.fuse`): a memory written in the other
script than the query (an English fact, a Chinese question) cannot share words with it, so its
missing text score is unknown, not bad; it is fused on its closeness alone. The hand-written
cross-language set the eval uses (tools/eval/crosslang_set.json) is checked here for shape only:
the eval itself needs the real model and the LoCoMo data (docs/search.md has its figures).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fact_ledger.ledger.text import script
from fact_ledger.projections import hybrid
from fact_ledger.projections.hybrid import Pool, fuse
from fact_ledger.projections.search.queries import SearchFilters
from fact_ledger.server.app.facade import LedgerApp

SET = Path(__file__).resolve().parents[1] / "tools" / "eval" / "crosslang_set.json"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The staging API listens on port 8080", "alphabetic"),
        ("预发布环境的接口用哪个端口？", "cjk"),
        ("Gina：是啊，我也是！现代舞特别有表现力", "cjk"),  # a Latin name in a Chinese sentence
        ("Jon最喜欢的舞蹈风格是什么？", "cjk"),
        ("I love 火锅 and noodles every day", "alphabetic"),  # a Chinese word in English
        ("API 端口是 8080", None),  # as much of each: mixed
        ("Москва — столица России", "alphabetic"),
        ("8080", None),  # digits belong to neither
        ("", None),
        ("!!! ...", None),
    ],
)
def test_script_is_the_one_most_of_the_text_is_written_in(text: str, expected: str | None) -> None:
    assert script(text) == expected


def _pool(text: dict[int, float], similarity: dict[int, float], other_script: set[int]) -> Pool:
    ids = sorted(similarity)
    nearest = sorted(ids, key=lambda i: -similarity[i])
    return Pool(
        ids=ids,
        text=text,
        similarity=similarity,
        phrase=set(),
        nearest=nearest,
        total=len(text),
        other_script=other_script,
    )


# 1 and 2 share words with the query; 3 shares none but is the closest in meaning.
TEXT = {1: 4.0, 2: 2.0}
CLOSENESS = {1: 0.80, 2: 0.70, 3: 0.84}


def test_a_memory_in_the_other_script_is_fused_on_its_closeness_alone() -> None:
    weights = (0.4, 0.6)
    same_script = fuse(_pool(TEXT, CLOSENESS, set()), weights)
    assert next(i for i, _ in same_script) == 1  # same script: sharing no word counts against 3
    other_script = fuse(_pool(TEXT, CLOSENESS, {3}), weights)
    assert dict(other_script)[3] == 1.0  # the closest, its text unknown: as good as its meaning
    assert [i for i, _ in other_script] == [3, 1, 2]


def test_words_shared_across_scripts_still_count() -> None:
    """A name or a number the other-script memory shares with the query can only raise it."""
    pool = _pool({1: 4.0, 2: 1.0}, {1: 0.85, 2: 0.90, 3: 0.80}, {1})
    assert dict(fuse(pool, (0.4, 0.6)))[1] == pytest.approx(0.4 * 1.0 + 0.6 * 0.5)  # above 1.0 × 0.5


def test_candidates_know_which_memories_are_in_the_other_script(sem: LedgerApp) -> None:
    english = sem.remember("The staging API listens on port 8080")["memory_id"]
    chinese = sem.remember("预发布环境的数据每天凌晨自动重置")["memory_id"]
    mixed = sem.remember("API 端口是 8080")["memory_id"]
    sem.reembed()
    model = sem.embedding_model()

    def pool(query: str) -> Pool:
        vector = sem.semantic._query_vector(model, query)
        return hybrid.candidates(sem.conn, query, SearchFilters(), 50, vector, page=10)

    asked_in_chinese = pool("预发布环境的接口用哪个端口")
    assert {english, chinese} <= set(asked_in_chinese.ids)
    assert asked_in_chinese.other_script & {english, chinese, mixed} == {english}
    asked_in_english = pool("which port does the staging API use")
    assert {english, chinese} <= set(asked_in_english.ids)
    assert asked_in_english.other_script & {english, chinese, mixed} == {chinese}
    assert pool("staging 预发布 API 端口").other_script == set()  # a mixed query has no other script


def test_the_cross_language_set_is_complete() -> None:
    spec = json.loads(SET.read_text(encoding="utf-8"))
    assert len(spec["items"]) >= 20 and len({i["dia_id"] for i in spec["items"]}) == len(spec["items"])
    for item in spec["items"]:
        assert script(item["question_zh"]) == "cjk" and script(item["turn_zh"]) == "cjk", item["dia_id"]
    assert len(spec["facts"]) == len(spec["distractors_zh"]) == 10
    for fact in spec["facts"]:
        assert script(fact["fact"]) == "alphabetic" and script(fact["question_en"]) == "alphabetic"
        assert script(fact["question_zh"]) == "cjk"
    assert all(script(text) == "cjk" for text in spec["distractors_zh"])


def test_the_eval_without_an_embedding_model_says_so(tmp_path: Path) -> None:
    """With no model configured or installed it ended in an AttributeError's traceback (a
    missing model was passed on as None)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}
    env.update(HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "data"))
    done = subprocess.run(
        [sys.executable, "-m", "tools.eval.crosslang", "--workdir", str(tmp_path / "work")],
        cwd=SET.parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == "no embedding model: install one (ledger model install) or pass --model"
