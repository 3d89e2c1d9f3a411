"""``tools/bench/working.py`` runs end to end: working and long-term remember interleaved, find
with and without a session, and the budget it checks."""

from __future__ import annotations

import json

import pytest

from tools.bench import working

pytestmark = pytest.mark.slow


def test_the_working_benchmark_reports_both_costs_and_the_budget(capsys: pytest.CaptureFixture[str]) -> None:
    assert working.main(["--memories", "1200", "--calls", "10", "--working-sets", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["remember_ms"]) == {"working", "long"} and report["remember_ms"]["working"]["n"] == 10
    assert set(report["find_ms"]) == {"with_session", "without", "paired_delta"}
    assert report["find_ms"]["without"]["n"] == report["find_ms"]["paired_delta"]["n"] == 10
    budget = report["budget"]
    assert budget["find_delta_budget_ms"] == 1.0
    assert budget["holds"] == (
        budget["remember_working_p50_le_long_p50"] and budget["find_session_p50_delta_ms"] <= 1.0
    )
