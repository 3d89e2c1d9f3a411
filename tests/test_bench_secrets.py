"""tools/bench/secrets.py runs end to end on a tiny corpus and puts the real scan back."""

from __future__ import annotations

from fact_ledger.server.app import credentials, writes
from tools.bench.secrets import run


def test_the_interleaved_bench_measures_both_sides_and_restores_the_scan() -> None:
    real = credentials.scan
    report = run(count=6, warmup=2, seed=3)
    assert report["remember_with_scan_ms"]["n"] == 6 and report["remember_without_scan_ms"]["n"] == 6
    assert report["p50_difference_ms"] == round(
        report["remember_with_scan_ms"]["p50"] - report["remember_without_scan_ms"]["p50"], 4
    )
    assert report["scan_alone_ms"]["p50"] > 0
    assert writes.credentials.scan is real
