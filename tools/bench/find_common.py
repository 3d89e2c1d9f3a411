"""``find`` with frequent words at scale, beside the usual query mix, as one JSON document.

A query made of frequent words that a quarter of the ledger answers (``corpus.common_queries``)
is the worst case for candidate generation and ranking: every term is common. Budget: p50 ≤ 10 ms
in-process at 100k memories. The usual mix (``Corpus.query``) is measured alongside, interleaved
query by query, so the two figures share the machine's load.

    python -m tools.bench.find_common                       # 100k memories, 300 queries of each kind
    python -m tools.bench.find_common --memories 20000 --queries 100   # a quick look
    python -m tools.bench.find_common --keep /tmp/fc100k.db   # build once, reuse on later runs
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tools.bench.corpus import Corpus, common_queries
from tools.bench.run import build, latency_summary

BUDGET_P50_MS = 10.0


def measure(app: LedgerApp, mixed: list[str], common: list[str]) -> dict[str, Any]:
    samples: dict[str, list[float]] = {"common_words": [], "mixed": []}
    results: list[int] = []
    for ordinary, frequent in zip(mixed, common, strict=True):
        for kind, query in (("mixed", ordinary), ("common_words", frequent)):
            started = time.perf_counter()
            result = app.find(query, limit=10)
            samples[kind].append((time.perf_counter() - started) * 1000)
            if kind == "common_words":
                results.append(len(result["results"]))
    out: dict[str, Any] = {kind: latency_summary(values) for kind, values in samples.items()}
    out["common_words"]["mean_results"] = round(sum(results) / len(results), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300, help="queries of each kind")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--keep", type=Path, help="ledger file to build once and reuse (same --memories and --seed) on later runs"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="find-common-") as tmp:
        corpus = Corpus(seed=args.seed)
        db = args.keep or Path(tmp) / "find-common.db"
        if args.keep and args.keep.exists():
            memories, build_stats = list(corpus.memories(args.memories)), {"reused": str(args.keep)}
        else:
            app, memories, build_stats = build(db, corpus, args.memories)
            app.close()
        app = LedgerApp(
            Settings(db=str(db), client="bench", embedding=Embedding(enabled=False))
        )  # lexical: what this budget is about
        try:
            rng = random.Random(args.seed)
            common = common_queries(memories, args.queries, rng)
            mixed = [corpus.query(memories[rng.randrange(len(memories))])[1] for _ in range(args.queries)]
            for query in common[:10] + mixed[:10]:  # warm the page cache, outside the measurement
                app.find(query, limit=10)
            figures = measure(app, mixed, common)
            words = sorted({w for q in common for w in q.split()})
            share = {
                w: round(
                    app.conn.execute("SELECT count(*) FROM search_fts WHERE search_fts MATCH ?", (w,)).get
                    / args.memories,
                    3,
                )
                for w in words
            }
            share["any_of_a_query_mean"] = round(
                sum(
                    app.conn.execute(
                        "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?", (" OR ".join(q.split()),)
                    ).get
                    for q in common[:20]
                )
                / 20
                / args.memories,
                3,
            )
        finally:
            app.close()
    p50 = figures["common_words"]["p50"]
    report = {
        "benchmark": "find_common",
        "memories": args.memories,
        "queries": args.queries,
        "seed": args.seed,
        "build": build_stats,
        "common_words_share": share,
        "examples": common[:5],
        "find_ms": figures,
        "budget": {"common_words_p50_ms": p50, "budget_ms": BUDGET_P50_MS, "holds": p50 <= BUDGET_P50_MS},
    }
    json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
