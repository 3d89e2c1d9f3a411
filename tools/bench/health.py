"""The health report's cost, as one JSON document.

A ledger of ``--size`` memories (bulk-appended corpus, folded once) plus ``--sets`` claim sets of
2 to 7 values each (written through ``remember``), then:

- the pass (``health``) timed ``--reps`` times (median, max), then once more traced for the
  peak of Python memory it allocates (tracemalloc), and the process's peak RSS;
- ``remember`` p50 while a second process runs the pass in a loop against the same file, and
  without it, in alternating blocks of ``--block`` writes (so a busy machine slows both alike).
  Budget: the p50 with the pass within +20% of the p50 without it.

    python -m tools.bench.health                         # 100k memories, 1,000 sets
    python -m tools.bench.health --size 5000 --sets 50 --writes 60   # a quick look
    python -m tools.bench.health --keep /tmp/h100k.db    # build once, reuse on later runs
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Policy, Settings
from tools.bench.corpus import Corpus
from tools.bench.run import build, latency_summary

BUDGET_P50_RATIO = 1.2
SOURCES = ("agent_generated", "document_extracted", "unknown")
REVIEW = Policy(settle_changes=False)  # the sets stay open for the report to find


def _settings(db: Path) -> Settings:
    return Settings(db=str(db), client="bench", policy=REVIEW)


def seed(db: Path, size: int, sets: int) -> dict[str, Any]:
    """The corpus, then ``sets`` disputed budgets (2..7 values, months apart)."""
    app, _, built = build(db, Corpus(), size)
    app.close()
    app = LedgerApp(_settings(db))
    started = time.perf_counter()
    try:
        for i in range(sets):
            for k in range(2 + i % 6):
                app.remember(
                    f"The project-{i} budget is ${100 + 10 * k}k",
                    subject=f"project-{i}",
                    source_type=SOURCES[k % 3],
                    event_time=f"2026-{1 + k:02d}-01T00:00:00Z",
                )
    finally:
        app.close()
    return {**built, "sets_written_s": round(time.perf_counter() - started, 1)}


def time_pass(db: Path, reps: int) -> dict[str, Any]:
    app = LedgerApp(_settings(db))
    try:
        times = []
        report: dict[str, Any] = {}
        for _ in range(reps):
            started = time.perf_counter()
            report = app.health()
            times.append(time.perf_counter() - started)
        tracemalloc.start()  # one more pass, traced (tracing slows it: not timed)
        app.health()
        peaks = [tracemalloc.get_traced_memory()[1]]
        tracemalloc.stop()
        return {
            "pass_s_median": round(statistics.median(times), 3),
            "pass_s_max": round(max(times), 3),
            "pass_peak_python_mib": round(max(peaks) / 2**20, 1),
            "process_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "clusters": report["cluster_count"],
            "open_members": report["open_members"],
            "hot": report["hot"],
        }
    finally:
        app.close()


def _loop(db: str, running: Any, began: Any, stop: Any, count: Any) -> None:
    """A second process: the pass, again and again while ``running`` is set (``began``: one began)."""
    app = LedgerApp(_settings(Path(db)))
    try:
        while not stop.is_set():
            if running.wait(0.05):
                began.set()
                app.health()
                with count.get_lock():
                    count.value += 1
    finally:
        app.close()


def writes_during_pass(db: Path, writes: int, block: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    running, began, stop, count = ctx.Event(), ctx.Event(), ctx.Event(), ctx.Value("i", 0)
    worker = ctx.Process(target=_loop, args=(str(db), running, began, stop, count))
    worker.start()
    app = LedgerApp(_settings(db))
    samples: dict[bool, list[float]] = {True: [], False: []}
    try:
        for n in range(writes):
            during = (n // block) % 2 == 1
            if during != running.is_set():
                if during:
                    began.clear()
                    running.set()
                    began.wait(120)  # a pass is under way (the first waits for the process to start)
                else:
                    running.clear()
                    time.sleep(0.2)
            started = time.perf_counter()
            app.remember(f"Write {n} of the interleaved run: note {n * 7919 % 10007}", subject=f"bench note {n}")
            samples[during].append((time.perf_counter() - started) * 1000)
    finally:
        stop.set()
        running.clear()
        worker.join(timeout=120)
        app.close()
    alone, busy = latency_summary(samples[False]), latency_summary(samples[True])
    ratio = busy["p50"] / alone["p50"] if alone["p50"] else 0.0
    return {
        "remember_alone_ms": alone,
        "remember_during_pass_ms": busy,
        "p50_ratio": round(ratio, 3),
        "passes_run": count.value,
        "budget_p50_ratio": BUDGET_P50_RATIO,
        "within_budget": ratio <= BUDGET_P50_RATIO,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--sets", type=int, default=1_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--writes", type=int, default=400)
    parser.add_argument("--block", type=int, default=20)
    parser.add_argument("--keep", type=Path, default=None, help="a ledger file to build once and reuse")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = args.keep or Path(tmp) / "health.db"
        built = seed(db, args.size, args.sets) if not db.exists() else {"reused": str(db)}
        out = {
            "size": args.size,
            "sets": args.sets,
            "build": built,
            "pass": time_pass(db, args.reps),
            "writes": writes_during_pass(db, args.writes, args.block),
        }
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0 if out["writes"]["within_budget"] else 1


if __name__ == "__main__":
    sys.exit(main())
