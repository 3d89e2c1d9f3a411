"""Weak isolation ranks the caller's own workspace first (issue 29, point 9): of two memories
that match a query equally, the caller's ranks above another workspace's, in full-text and in
hybrid find alike (docs/search.md: +0.2 on either scale)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

FACT = "The staging api port is 7070"


def _app(db: Path, model: str | None, **extra: str) -> LedgerApp:
    embedding = Embedding(model=model or "", enabled=bool(model))
    return LedgerApp(Settings(db=str(db), client="test", embedding=embedding, **extra))


def _seed(db: Path, model: str | None) -> tuple[int, int]:
    """The same fact in two workspaces, the other workspace's written later (newer, so it
    would win the tie and the recency signal). With a model, nothing else: the tiny test
    model's cosines are noise, so any other memory could outrank both by chance."""
    writer = _app(db, model)
    try:
        own = writer.remember(FACT, workspace="zephyr", event_time="2025-01-01T00:00:00Z")["memory_id"]
        other = writer.remember(FACT, workspace="aurora", event_time="2025-06-01T00:00:00Z")["memory_id"]
        for i in range(0 if model else 6):  # other texts, so that the full-text scores spread
            writer.remember(f"unrelated note {i} about lunch", workspace="aurora")
        if model:
            writer.reembed()
    finally:
        writer.close()
    return own, other


@pytest.mark.parametrize("query", ["staging api port", "what port does staging use"])
def test_weak_ranks_the_callers_equally_matching_memory_first_in_full_text(tmp_path: Path, query: str) -> None:
    db = tmp_path / "ledger.db"
    own, other = _seed(db, None)
    for workspace, first in (("zephyr", own), ("aurora", other)):
        app = _app(db, None, workspace=workspace, isolation="weak")
        try:
            found = [r["memory_id"] for r in app.find(query)["results"]]
        finally:
            app.close()
        assert found[0] == first and set(found[:2]) == {own, other}


@pytest.mark.parametrize("query", ["staging api port", "what port does staging use"])
def test_weak_ranks_the_callers_equally_matching_memory_first_in_hybrid(
    tmp_path: Path, tiny_gguf: Path, query: str
) -> None:
    db = tmp_path / "ledger.db"
    own, other = _seed(db, str(tiny_gguf))
    for workspace, first in (("zephyr", own), ("aurora", other)):
        app = _app(db, str(tiny_gguf), workspace=workspace, isolation="weak")
        try:
            assert app.search_mode() == "vector+fts"
            found = [r["memory_id"] for r in app.find(query)["results"]]
        finally:
            app.close()
        assert found[0] == first and set(found[:2]) == {own, other}
    app = _app(db, str(tiny_gguf), workspace="zephyr", isolation="none")
    try:
        assert next(r["memory_id"] for r in app.find(query)["results"]) == other  # no isolation: the newer
    finally:
        app.close()


def test_fusion_adds_the_workspace_bonus_on_its_own_scale() -> None:
    """Full text's +0.2 shrinks to almost nothing once text scores are min-max normalised beside a
    verbatim match, so fusion adds the bonus again on the fused scale: of two memories that
    match the query alike and lie nearly as close (0.80 / 0.82), the caller's ranks first."""
    from fact_ledger.projections.hybrid import Pool, fuse

    own, other, phrase = 1, 2, 3
    pool = Pool(
        ids=[phrase, own, other],
        text={phrase: 2.3, own: 1.2, other: 1.0},  # own: +0.2 from full text's own bonus
        similarity={phrase: 0.9, own: 0.80, other: 0.82},
        phrase={phrase},
        nearest=[phrase, other, own],
        total=3,
    )
    assert [i for i, _ in fuse(pool, (0.4, 0.6))][1:] == [other, own]  # without the bonus
    ranked = fuse(pool, (0.4, 0.6), frozenset({own}))
    assert [i for i, _ in ranked][1:] == [own, other]
    scores = dict(ranked)
    assert scores[own] - scores[other] < 0.2 + 1e-9  # the bonus, no more
