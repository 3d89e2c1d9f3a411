"""``tools/bench/tail.py`` runs end to end: per-call phases and the causes of the slowest calls."""

from __future__ import annotations

import json

import pytest

from tools.bench import tail

pytestmark = pytest.mark.slow


def test_the_tail_benchmark_names_each_slow_calls_phases(capsys: pytest.CaptureFixture[str]) -> None:
    assert tail.main(["--size", "600", "--calls", "120"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["remember_ms"]["n"] == 120
    assert {"commit_log", "commit_views"} <= set(report["phase_median_ms"])  # two files: two commits a call
    slowest = report["slowest_1pct"]
    assert slowest["n"] == len(slowest["calls"]) == 1 and sum(slowest["causes"].values()) == 1
    assert slowest["calls"][0]["ms"] >= report["remember_ms"]["p50"]
