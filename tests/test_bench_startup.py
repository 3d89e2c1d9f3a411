"""``tools/bench/startup.py`` runs end to end on the tiny model (real llama.cpp, real subprocesses)
and reports every figure for both configurations."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_startup_bench_runs_both_configurations_interleaved(tiny_gguf: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench.startup", "--model", str(tiny_gguf), "--size", "200", "--rounds", "2",
         "--distinct", "10"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert set(result["median"]["model"]) == {
        "status", "serve_initialize", "serve_model_ready", "serve_rss_mb", "find_with_serve", "find_cold"
    }  # fmt: skip
    assert set(result["median"]["no_model"]) == {"status", "serve_initialize", "serve_rss_mb", "find_cold"}
    assert all(len(values) == 2 for mode in result["samples"].values() for values in mode.values())
    assert set(result["delta"]) == {"status", "serve_initialize", "find_cold"} and set(result["acceptance"]) == {
        "status_within_0.2s", "serve_initialize_within_0.5s", "find_cold_at_most_2s", "find_with_serve_at_most_2s"
    }  # fmt: skip
