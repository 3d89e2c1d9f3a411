"""What the credential scan adds to ``remember`` (server/app/credentials.py), interleaved.

One ledger, one stream of corpus memories (English and Chinese, tools/bench/corpus.py); calls
alternate between the real write path and the same path with the scan replaced by one that
finds nothing, so both see the same ledger size, cache state and machine load. Also the scan
alone on the same texts. Prints JSON: p50/p95 of each side, the difference of the medians, and
the scan's own cost.

    python -m tools.bench.secrets [--count 2000] [--warmup 200] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fact_ledger.server.app import credentials, writes
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tools.bench.corpus import Corpus
from tools.bench.run import latency_summary, remember


def _no_scan(fields: dict[str, Any]) -> list[credentials.Secret]:
    return []


def run(count: int, warmup: int, seed: int) -> dict[str, Any]:
    corpus = Corpus(seed=seed)
    memories = list(corpus.memories(warmup + 2 * count))
    real_scan = credentials.scan
    with tempfile.TemporaryDirectory() as tmp:
        app = LedgerApp(Settings(db=str(Path(tmp) / "ledger.db"), client="bench", embedding=Embedding(enabled=False)))
        try:
            for m in memories[:warmup]:
                remember(app, m)
            samples: dict[str, list[float]] = {"with_scan": [], "without_scan": []}
            for i, m in enumerate(memories[warmup:]):
                side = "with_scan" if i % 2 == 0 else "without_scan"
                writes.credentials.scan = real_scan if side == "with_scan" else _no_scan  # type: ignore[assignment]
                started = time.perf_counter()
                remember(app, m)
                samples[side].append((time.perf_counter() - started) * 1000)
        finally:
            writes.credentials.scan = real_scan  # type: ignore[assignment]
            app.close()
    scan_only = []
    for m in memories[warmup:]:
        fields = {"content": m.content, "subject": m.subject, "tags": list(m.tags), "metadata": None}
        started = time.perf_counter()
        credentials.scan(fields)
        scan_only.append((time.perf_counter() - started) * 1000)
    with_scan, without = latency_summary(samples["with_scan"]), latency_summary(samples["without_scan"])
    return {
        "remember_with_scan_ms": with_scan,
        "remember_without_scan_ms": without,
        "p50_difference_ms": round(with_scan["p50"] - without["p50"], 4),
        "scan_alone_ms": {"p50": round(statistics.median(scan_only), 4), "max": round(max(scan_only), 4)},
        "texts": {"count": count, "mean_chars": round(statistics.fmean(len(m.content) for m in memories), 1)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000, help="remembers per side")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(json.dumps(run(args.count, args.warmup, args.seed), indent=2))


if __name__ == "__main__":
    main()
