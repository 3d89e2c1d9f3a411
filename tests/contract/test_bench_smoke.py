"""``tools/bench/mcp_roundtrip.py`` runs end to end and reports the figures the issue asks for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.bench import mcp_roundtrip

pytestmark = pytest.mark.slow


def test_roundtrip_benchmark_reports_p50_and_bytes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert mcp_roundtrip.main(["--memories", "200", "--calls", "8", "--workdir", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["transport"] == "stdio" and report["memories"] == 200
    for action in ("remember", "find", "read"):
        assert report[action]["n"] == 8
        assert report[action]["p50_ms"] > 0 and report[action]["mean_bytes"] > 0
    assert report["remember"]["max_bytes"] < 300
    assert report["status"]["n"] == 16  # one before each remember and each find, on the same connection
    budget = report["budget"]
    for action in ("remember", "find"):
        assert report[action]["in_process_p50_ms"] > 0  # the same call straight to the facade, side by side
        assert budget[action]["allowed_ms"] == pytest.approx(
            report["status"]["p50_ms"] + report[action]["in_process_p50_ms"] + budget["slack_ms"], abs=1e-3
        )
        assert {type(budget[action][k]) for k in ("holds", "holds_on_transport_floor")} == {bool}
    assert report["find"]["max_bytes"] < 2500
