"""The two storage layouts side by side: read models in the log's file, or in a file of their own.

One corpus is appended once; two copies of that log are opened, one with the read models in the
log's own file (``views = db``: one commit, every page fsynced) and one with the default layout
(``ledger.views.db`` beside the log: the log's commit fsynced, the read models' not). Then
``remember`` calls alternate between the two, call by call, so machine load hits both alike, and
full rebuilds alternate likewise. Prints one JSON document with the medians, their ratio and the
ledger-core budgets (remember p50 ≤ 1 ms, p99 ≤ 5 ms; rebuild ≥ 30k events/s).

    python -m tools.bench.layouts --size 100000
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fact_ledger.ledger.log.store import EventStore
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tools.bench.corpus import Corpus
from tools.bench.run import BUDGETS, latency_summary, remember, remembered_event, timed

LAYOUTS = ("one_file", "two_files")


def build_log(path: Path, corpus: Corpus, n: int, batch: int = 5000) -> None:
    store = EventStore(path)
    memories = list(corpus.memories(n))
    for i in range(0, n, batch):
        store.append([remembered_event(m) for m in memories[i : i + batch]])
    store.close()


def open_layouts(workdir: Path, log: Path) -> dict[str, LedgerApp]:
    apps = {}
    for layout in LAYOUTS:
        home = workdir / layout
        home.mkdir()
        db = home / "ledger.db"
        shutil.copyfile(log, db)
        views = str(db) if layout == "one_file" else ""
        apps[layout] = LedgerApp(Settings(db=str(db), views=views, client="bench"))
    return apps


def run(workdir: Path, size: int, remembers: int, rebuilds: int, seed: int) -> dict[str, Any]:
    log = workdir / "log.db"
    build_log(log, Corpus(seed=seed), size)
    apps = open_layouts(workdir, log)
    try:
        corpus = Corpus(seed=seed + 1)
        samples: dict[str, list[float]] = {layout: [] for layout in LAYOUTS}
        for m in corpus.memories(remembers):
            for layout, app in apps.items():
                started = time.perf_counter()
                remember(app, m)
                samples[layout].append((time.perf_counter() - started) * 1000)
        rebuild: dict[str, list[float]] = {layout: [] for layout in LAYOUTS}
        events = apps["two_files"].store.last_position()
        for _ in range(rebuilds):
            for layout, app in apps.items():
                rebuild[layout].append(round(events / timed(app.rebuild), 1))
    finally:
        for app in apps.values():
            app.close()
    out: dict[str, Any] = {"memories": size, "remembers": remembers, "layouts": {}}
    for layout in LAYOUTS:
        out["layouts"][layout] = {
            "remember_ms": latency_summary(samples[layout]),
            "rebuild_events_per_s": sorted(rebuild[layout])[len(rebuild[layout]) // 2],
            "rebuild_reps": rebuild[layout],
        }
    one, two = (out["layouts"][x] for x in LAYOUTS)
    out["ratio_two_over_one"] = {
        "remember_p50": round(two["remember_ms"]["p50"] / one["remember_ms"]["p50"], 3),
        "remember_p99": round(two["remember_ms"]["p99"] / one["remember_ms"]["p99"], 3),
        "rebuild": round(two["rebuild_events_per_s"] / one["rebuild_events_per_s"], 3),
    }
    out["budgets_two_files"] = {
        "remember_p50_ms": {"value": two["remember_ms"]["p50"], "budget": BUDGETS["remember_p50_ms"][0]},
        "remember_p99_ms": {"value": two["remember_ms"]["p99"], "budget": BUDGETS["remember_p99_ms"][0]},
        "rebuild_events_per_s": {"value": two["rebuild_events_per_s"], "budget": BUDGETS["rebuild_events_per_s"][0]},
    }
    for figure in out["budgets_two_files"].values():
        kind = "min" if figure["budget"] > 1000 else "max"
        figure["ok"] = figure["value"] >= figure["budget"] if kind == "min" else figure["value"] <= figure["budget"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one-file vs two-file layout (JSON on stdout)")
    parser.add_argument("--size", type=int, default=100000, help="memories in the corpus")
    parser.add_argument("--remembers", type=int, default=1000, help="remember calls per layout")
    parser.add_argument("--rebuilds", type=int, default=3, help="full rebuilds per layout")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ledger-layouts-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        result = run(workdir, args.size, args.remembers, args.rebuilds, args.seed)
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
