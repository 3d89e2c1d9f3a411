"""``tools/bench/health.py`` runs end to end: the pass timed with its memory peak, and writes
interleaved with a pass running in another process against the same file."""

from __future__ import annotations

import json

import pytest

from tools.bench import health

pytestmark = pytest.mark.slow


def test_the_health_benchmark_reports_the_pass_and_the_writes_beside_it(capsys: pytest.CaptureFixture[str]) -> None:
    code = health.main(["--size", "300", "--sets", "6", "--reps", "2", "--writes", "8", "--block", "2"])
    report = json.loads(capsys.readouterr().out)
    assert report["pass"]["clusters"] == 6 and report["pass"]["open_members"] == sum(2 + i % 6 for i in range(6))
    assert report["pass"]["pass_s_median"] > 0 and report["pass"]["pass_peak_python_mib"] > 0
    writes = report["writes"]
    assert writes["remember_alone_ms"]["n"] == writes["remember_during_pass_ms"]["n"] == 4
    assert writes["passes_run"] >= 1  # the other process really ran the pass meanwhile
    assert code == (0 if writes["within_budget"] else 1)
