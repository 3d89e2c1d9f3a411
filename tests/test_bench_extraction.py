"""``tools/bench/extraction.py`` runs end to end and measures every text anew (the memo cleared)."""

from __future__ import annotations

import json
import statistics

import pytest

from fact_ledger.ledger import claims
from tools.bench import extraction


def test_the_extraction_benchmark_reports_each_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert extraction.main(["--texts", "200", "--passes", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["texts"] == 200 and len(report["us_per_text"]) == 2
    assert all(us > 0 for us in report["us_per_text"])
    assert report["median_us_per_text"] == statistics.median(report["us_per_text"])
    assert claims._extract.cache_info().misses >= 200  # type: ignore[attr-defined]  # each pass extracted anew
