"""``tools/bench/semantic.py`` runs end to end on the tiny model (real llama.cpp), and measures
``find`` and the RSS in a fresh process of their own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_semantic_bench_runs_and_measures_find_in_a_server_process(tiny_gguf: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench.semantic", "--model", str(tiny_gguf), "--size", "300",
         "--distinct", "20", "--queries", "10", "--phrases", "20", "--remembers", "10", "--burst", "20",
         "--reembed", "10", "--reps", "1"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    for measured in (result["find"], result["find_in_bench_process"]):
        assert measured["find_ms"]["n"] == measured["embed_query_ms"]["n"] == 10
        assert measured["find_ms"]["p50"] > 0
    rss = result["rss_mb"]
    assert 0 < rss["opened"] <= rss["model_loaded_and_find"]  # the probe's own process, step by step
    assert rss["worker_and_a_write"] > 0
    assert result["burst"]["lag_after_wait"] == 0 and result["rebuild"]["vectors_from_cache_s"] > 0
