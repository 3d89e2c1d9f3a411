"""``tools/bench/churn.py`` runs end to end; the budgets that do not depend on the clock hold."""

from __future__ import annotations

import json

import pytest

from tools.bench import churn

pytestmark = pytest.mark.slow


def test_churn_benchmark_reports_events_bytes_and_one_set_per_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert churn.main(["--calls", "120"]) == 0
    report = json.loads(capsys.readouterr().out)
    workloads = report["workloads"]
    assert set(workloads) == {"one_key", "keys_100x10", "mixed"}
    for figures in workloads.values():
        assert figures["churn"]["events_per_remember"] <= churn.BUDGETS["events_per_remember"]
        assert figures["churn"]["reply_bytes_max"] <= churn.BUDGETS["reply_bytes_max"]
        assert figures["no_collision"]["open_conflicts"] == 0 and figures["churn"]["remember_ms"]["n"] == 120
        assert figures["p50_ratio"] > 0
    assert workloads["one_key"]["churn"]["open_conflicts"] == 1  # one set, whatever the number of values
    assert workloads["keys_100x10"]["churn"]["open_conflicts"] == 20  # 120 calls: keys 0-19 got a second value


def test_churn_with_auto_settle_keeps_one_current_value(capsys: pytest.CaptureFixture[str]) -> None:
    assert churn.main(["--calls", "30", "--workloads", "one_key", "--auto-settle"]) == 0
    report = json.loads(capsys.readouterr().out)
    figures = report["workloads"]["one_key"]
    assert report["auto_settle"] is True
    assert figures["churn"]["active_memories"] == 1 and figures["churn"]["open_conflicts"] == 0
    assert figures["no_collision"]["active_memories"] == 30  # nothing collides, nothing is settled
