"""Round-trip latency and response size of the MCP tools over stdio, as one JSON document.

What an agent actually waits for: a ``tools/call`` sent by the mcp SDK's stdio client to a
real ``ledger serve`` subprocess and its answer parsed, on a ledger already holding
``--memories`` memories (the synthetic corpus of :mod:`tools.bench.corpus`, bulk-loaded).
Reported per action (remember, find, read): p50/p95/mean milliseconds and the mean size in
bytes of the JSON result an agent reads (the text block; the structured copy is identical).

    python -m tools.bench.mcp_roundtrip                     # 10k memories, 300 calls per action
    python -m tools.bench.mcp_roundtrip --memories 500 --calls 30   # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from tools.bench.corpus import Corpus
from tools.bench.run import build, latency_summary

REPO = Path(__file__).resolve().parents[2]


async def measure(db: Path, corpus: Corpus, seeded: list[Any], calls: int, seed: int) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "server", "serve", "--db", str(db)],
                                   env={**os.environ, "LEDGER_CLIENT": "bench"}, cwd=str(REPO))
    rng = random.Random(seed)
    started = time.perf_counter()
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            spawn_s = time.perf_counter() - started

            async def call(arguments: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
                t0 = time.perf_counter()
                result = await session.call_tool("memory", arguments)
                elapsed = (time.perf_counter() - t0) * 1000
                body = result.structured_content or {}
                assert body.get("ok"), body
                return elapsed, len(result.content[0].text.encode("utf-8")), body  # type: ignore[union-attr]

            for _ in range(20):  # warm the interpreter, caches and page cache
                await call({"action": "find", "data": {"query": rng.choice(seeded).content.split()[0]}})
            samples: dict[str, list[float]] = {"remember": [], "find": [], "read": []}
            sizes: dict[str, list[int]] = {"remember": [], "find": [], "read": []}
            results_per_find: list[int] = []
            fresh = corpus.memories(calls)  # continues the seeded stream: new, non-duplicate memories
            for memory in fresh:
                ms, size, body = await call({"action": "remember", "data": {
                    "content": memory.content, "subject": memory.subject, "tags": list(memory.tags),
                    "source_type": memory.source_type, "event_time": memory.event_time}})
                samples["remember"].append(ms)
                sizes["remember"].append(size)
            for _ in range(calls):
                _kind, query = corpus.query(rng.choice(seeded))
                ms, size, body = await call({"action": "find", "data": {"query": query}})
                samples["find"].append(ms)
                sizes["find"].append(size)
                results_per_find.append(len(body["results"]))
            for _ in range(calls):
                ms, size, _body = await call({"action": "read", "data": {"memory_id": rng.randint(1, len(seeded))}})
                samples["read"].append(ms)
                sizes["read"].append(size)
    out: dict[str, Any] = {"spawn_initialize_s": round(spawn_s, 3)}
    for action in samples:
        summary = latency_summary(samples[action])
        out[action] = {"p50_ms": summary["p50"], "p95_ms": summary["p95"], "mean_ms": summary["mean"],
                       "n": summary["n"], "mean_bytes": round(statistics.fmean(sizes[action]), 1),
                       "max_bytes": max(sizes[action])}
    out["find"]["mean_results"] = round(statistics.fmean(results_per_find), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10000, help="memories in the ledger before measuring")
    parser.add_argument("--calls", type=int, default=300, help="calls per action")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=None, help="keep the database here (default: a temp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        db = workdir / "mcp-roundtrip.db"
        for leftover in workdir.glob("mcp-roundtrip.db*"):
            leftover.unlink()
        corpus = Corpus(seed=args.seed)
        app, seeded, build_stats = build(db, corpus, args.memories)
        app.close()
        figures = anyio.run(measure, db, corpus, seeded, args.calls, args.seed)
    report = {
        "benchmark": "mcp_roundtrip", "transport": "stdio", "memories": args.memories, "calls": args.calls,
        "seed": args.seed, "build": build_stats, **figures,
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count()},
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
