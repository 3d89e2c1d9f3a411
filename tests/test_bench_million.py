"""``tools/bench/million.py`` runs every phase end to end on a small ledger and the tiny model
(real llama.cpp), keeps each phase's result in its workdir, and a rerun measures only what was
not measured yet."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _bench(workdir: Path, model: Path, *extra: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench.million", "--workdir", str(workdir), "--model", str(model),
         "--size", "400", "--distinct", "20", "--queries", "10", "--phrases", "20", "--remembers", "10", *extra],
        cwd=REPO, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_the_million_bench_measures_every_phase_and_keeps_them(tmp_path: Path, tiny_gguf: Path) -> None:
    result = _bench(tmp_path, tiny_gguf)
    assert result["build"]["events"] == 400
    lexical = result["lexical"]
    assert 0 < lexical["find_ms"]["p50"] <= lexical["find_ms"]["p95"]
    assert lexical["rebuild"]["events"] == 410 and lexical["rebuild"]["events_per_s"] > 0
    assert result["vectors"]["counts"]["vectors"] == 410
    assert result["vectors"]["context_vectors"] == 410
    for run in (result["serve"]["index_from_the_tables"], result["serve"]["index_from_its_snapshot"]):
        assert run["find_p50_ms"] > 0 and run["rss_mb"]["model_loaded_and_find"] > 0
    assert len(result["cli"]["results"]) == 3 and all(found > 0 for found in result["cli"]["results"])
    assert result["health"]["median_ms"] > 0
    assert {"ledger.db", "ledger.views.db"} <= set(result["files_mb"])
    time.sleep(1.1)  # a new second for measured_at
    again = _bench(tmp_path, tiny_gguf, "--redo", "health")
    assert again["build"] == result["build"] and again["serve"] == result["serve"]  # kept, not measured again
    assert again["health"]["measured_at"] > result["health"]["measured_at"]
