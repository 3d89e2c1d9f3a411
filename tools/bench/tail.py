"""Where a ``remember``'s time goes, call by call: the phases of every call and the slowest 1 %.

Builds the ``tools.bench`` corpus ledger (two-file layout), warms it with 200 writes, then times
``--calls`` writes one after another, recording for each the log's and the read models' COMMIT,
any checkpoint the writer ran itself, the after-commit fold (``Storage.settle``) and a full
garbage collection. Prints JSON: the latency summary, the per-phase medians and, for the slowest
1 % of calls, what each of them spent in those phases (the tail's causes, counted).

    python -m tools.bench.tail [--size 100000] [--calls 2000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fact_ledger.ledger.log.store import EventStore
from fact_ledger.server.app.storage import Storage
from tools.bench.corpus import Corpus
from tools.bench.run import build, latency_summary, remember

WARM = 200
SLOW_MS = 1.0  # a phase counts as a cause of a slow call past this many milliseconds


@contextmanager
def phases() -> Iterator[dict[str, float]]:
    """Milliseconds per phase of the call in flight (reset by the caller between calls)."""
    spent: dict[str, float] = {}
    saved: list[tuple[Any, str, Any]] = []

    def timed(owner: Any, name: str, label: Callable[[Any], str]) -> None:
        original = getattr(owner, name)

        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(self, *args, **kwargs)
            finally:
                key = label(self)
                spent[key] = spent.get(key, 0.0) + (time.perf_counter() - started) * 1000

        saved.append((owner, name, original))
        setattr(owner, name, wrapper)

    timed(EventStore, "commit_write", lambda store: "commit_views" if store.path.endswith("views.db") else "commit_log")
    timed(EventStore, "_checkpoint_if_large", lambda _: "checkpoint")
    timed(Storage, "settle_quietly", lambda _: "settle")

    collecting: list[float] = []

    def collected(phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            collecting.append(time.perf_counter())
        elif collecting:
            spent["gc"] = spent.get("gc", 0.0) + (time.perf_counter() - collecting.pop()) * 1000

    gc.callbacks.append(collected)
    try:
        yield spent
    finally:
        gc.callbacks.remove(collected)
        for owner, name, original in saved:
            setattr(owner, name, original)


def run(workdir: Path, size: int, calls: int, seed: int) -> dict[str, Any]:
    app, _, built = build(workdir / "ledger.db", Corpus(seed=seed), size)
    try:
        writes = list(Corpus(seed=seed + 1).memories(calls + WARM))
        for memory in writes[:WARM]:
            remember(app, memory)
        rows: list[tuple[float, dict[str, float]]] = []
        with phases() as spent:
            for memory in writes[WARM:]:
                spent.clear()
                started = time.perf_counter()
                remember(app, memory)
                rows.append(((time.perf_counter() - started) * 1000, dict(spent)))
    finally:
        app.close()
    rows.sort(key=lambda row: -row[0])
    slowest = rows[: max(1, len(rows) // 100)]
    names = sorted({name for _, spent in rows for name in spent})
    return {
        "size": size,
        "calls": calls,
        "build": built,
        "remember_ms": latency_summary([total for total, _ in rows]),
        "phase_median_ms": {
            name: round(statistics.median(spent.get(name, 0.0) for _, spent in rows), 4) for name in names
        },
        "slowest_1pct": {
            "n": len(slowest),
            "from_ms": round(slowest[-1][0], 4),
            "causes": dict(
                Counter(
                    max(spent, key=lambda name: spent[name]) if spent and max(spent.values()) > SLOW_MS else "none"
                    for _, spent in slowest
                )
            ),
            "calls": [
                {"ms": round(total, 4), **{name: round(ms, 3) for name, ms in spent.items() if ms >= 0.05}}
                for total, spent in slowest
            ],
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        report = run(args.workdir, args.size, args.calls, args.seed)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            report = run(Path(tmp), args.size, args.calls, args.seed)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
