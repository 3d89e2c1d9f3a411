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
    assert report["find"]["max_bytes"] < 2500
