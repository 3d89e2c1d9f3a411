"""The work one call does stays where it was measured (``tools/bench/statements.py``), and the
blends' layouts are measured on real vectors of a real ledger (``tools/bench/blends.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tools.bench import blends, statements

REPO = Path(__file__).resolve().parents[1]


def test_a_colliding_remember_and_a_find_run_no_more_statements_than_measured(tmp_path: Path) -> None:
    result = statements.run(tmp_path)
    remember, find = result["remember_colliding"], result["find_lexical"]
    # docs/performance.md, "Statements per call": 94 and 16, then 55 and 12, now 30 and 11.
    assert remember["statements"] <= 30, remember["sql"]
    assert find["statements"] <= 11, find["sql"]
    assert remember["by_kind"]["INSERT"] <= 12 and remember["by_kind"]["COMMIT"] == 2  # two files
    assert remember["calls"] > 0 and find["functions"] > 0
    # Full text and the timeline are not in the write's transaction: the next read folds them.
    assert not any("search_" in sql or "tt_" in sql for sql in remember["sql"]), remember["sql"]
    folded = result["after_commit"]["sql"]
    assert any("INSERT INTO search_docs" in sql for sql in folded) and any("tt_states" in sql for sql in folded)
    # Over MCP the reply's notices reuse the log's head the write saw.
    assert result["mcp_remember_colliding"]["statements"] <= 30, result["mcp_remember_colliding"]["sql"]
    assert result["mcp_find_lexical"]["statements"] <= 12, result["mcp_find_lexical"]["sql"]


def test_the_statements_bench_prints_its_counts() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench.statements"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    printed = json.loads(done.stdout)
    assert set(printed) == {
        "remember_colliding",
        "after_commit",
        "find_lexical",
        "mcp_remember_colliding",
        "mcp_after_commit",
        "mcp_find_lexical",
    }
    assert "sql" not in printed["find_lexical"] and printed["find_lexical"]["statements"] > 0


def test_the_blends_bench_compares_float16_and_centred_int8_on_a_ledgers_vectors(
    tmp_path: Path, tiny_gguf: Path
) -> None:
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db), client="test", embedding=Embedding(model=str(tiny_gguf))))
    try:
        for i in range(40):
            app.remember(f"note {i}: the deploy window of service s{i} is {i % 12} pm", session_id="s", turn=i)
        assert app.reembed()["lag"] == 0
        dim = app.embedding_model().dim  # type: ignore[union-attr]
    finally:
        app.close()
    result = blends.measure([db], stride=3)
    assert result["memories"] == 40
    int8, half = result["layouts"]["int8_centred"], result["layouts"]["float16"]
    assert int8["bytes_per_row"] == dim + 4 and half["bytes_per_row"] == 2 * dim
    assert 0 < int8["max_error"] < 5e-3 and half["max_error"] < int8["max_error"]
    assert 0.8 <= int8["top10_overlap"] <= 1.0
