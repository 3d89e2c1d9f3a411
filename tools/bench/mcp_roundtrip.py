"""Round-trip latency and response size of the MCP tools over stdio, beside the facade in-process.

What an agent actually waits for: a ``tools/call`` sent by the mcp SDK's stdio client to a
real ``ledger serve`` subprocess and its answer parsed, on a ledger already holding
``--memories`` memories (the synthetic corpus of :mod:`tools.bench.corpus`, bulk-loaded).
Reported per action (status, remember, find, read): p50/p95/mean milliseconds and the mean size
in bytes of the JSON result an agent reads (the text block; the structured copy is identical).

Side by side, in the same run and interleaved call by call, the same ``remember`` and ``find``
go straight to the facade (:class:`server.app.facade.LedgerApp`) on a copy of the same ledger. The
budget: over MCP, p50 of ``remember`` and of ``find`` ≤ p50 of ``memory status`` over the same
connection (the transport's floor) + the in-process p50 of the same call + 0.5 ms; since
``status`` does work of its own, the stricter form (``holds_on_transport_floor``) takes its
in-process p50 off the floor first. Both sides
search lexically (no embedding model): the semantic layer has its own benchmark
(:mod:`tools.bench.semantic`), and a vector worker embedding the corpus in the background would
only add noise here.

    python -m tools.bench.mcp_roundtrip                     # 10k memories, 300 calls per action
    python -m tools.bench.mcp_roundtrip --memories 500 --calls 30   # a quick look
    python -m tools.bench.mcp_roundtrip --profile server.prof       # where the server's time goes
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from fact_ledger.server.mcp.routes import MEMORY
from tools.bench.corpus import Corpus
from tools.bench.run import build, latency_summary

REPO = Path(__file__).resolve().parents[2]
SLACK_MS = 0.5  # what the MCP path may add to a call beyond the transport's floor


def _in_process(app: LedgerApp, action: str, data: dict[str, Any]) -> float:
    """Milliseconds of the facade call the MCP dispatcher makes for ``action`` (the edge's parse untimed)."""
    route = MEMORY.routes[action]
    method = getattr(app, route.method or "")
    kwargs = route.model.parse(data).to_kwargs()
    started = time.perf_counter()
    method(**kwargs)
    return (time.perf_counter() - started) * 1000


async def measure(
    db: Path,
    twin: LedgerApp,
    corpus: Corpus,
    seeded: list[Any],
    calls: int,
    seed: int,
    server_args: tuple[str, ...] = (),
) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[*server_args, "-m", "fact_ledger.server", "serve", "--db", str(db)],
        env={**os.environ, "LEDGER_CLIENT": "bench", "LEDGER_EMBEDDING_ENABLED": "false"},
        cwd=str(REPO),
    )
    rng = random.Random(seed)
    started = time.perf_counter()
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            spawn_s = time.perf_counter() - started

            async def call(action: str, data: dict[str, Any]) -> tuple[float, int, dict[str, Any]]:
                t0 = time.perf_counter()
                result = await session.call_tool("memory", {"action": action, "data": data})
                elapsed = (time.perf_counter() - t0) * 1000
                body = result.structured_content or {}
                assert body.get("ok"), body
                return elapsed, len(result.content[0].text.encode("utf-8")), body  # type: ignore[union-attr]

            for _ in range(20):  # warm the interpreters, caches and page cache on both sides
                data = {"query": rng.choice(seeded).content.split()[0]}
                await call("find", data)
                _in_process(twin, "find", data)
                await call("status", {})
            actions = ("status", "remember", "find", "read")
            samples: dict[str, list[float]] = {a: [] for a in actions}
            sizes: dict[str, list[int]] = {a: [] for a in actions}
            local: dict[str, list[float]] = {"status": [], "remember": [], "find": []}
            results_per_find: list[int] = []

            async def side_by_side(action: str, data: dict[str, Any]) -> dict[str, Any]:
                ms, size, _ = await call("status", {})
                samples["status"].append(ms)
                sizes["status"].append(size)
                local["status"].append(_in_process(twin, "status", {}))
                ms, size, body = await call(action, data)
                samples[action].append(ms)
                sizes[action].append(size)
                local[action].append(_in_process(twin, action, data))
                return body

            for memory in corpus.memories(calls):  # continues the seeded stream: new, non-duplicate memories
                await side_by_side(
                    "remember",
                    {
                        "content": memory.content,
                        "subject": memory.subject,
                        "tags": list(memory.tags),
                        "source_type": memory.source_type,
                        "event_time": memory.event_time,
                    },
                )
            for _ in range(calls):
                _kind, query = corpus.query(rng.choice(seeded))
                body = await side_by_side("find", {"query": query})
                results_per_find.append(len(body["results"]))
            for _ in range(calls):
                ms, size, _body = await call("read", {"memory_id": rng.randint(1, len(seeded))})
                samples["read"].append(ms)
                sizes["read"].append(size)
    out: dict[str, Any] = {"spawn_initialize_s": round(spawn_s, 3)}
    for action in actions:
        summary = latency_summary(samples[action])
        out[action] = {
            "p50_ms": summary["p50"],
            "p95_ms": summary["p95"],
            "mean_ms": summary["mean"],
            "n": summary["n"],
            "mean_bytes": round(statistics.fmean(sizes[action]), 1),
            "max_bytes": max(sizes[action]),
        }
    out["find"]["mean_results"] = round(statistics.fmean(results_per_find), 2)
    for action, values in local.items():
        out[action]["in_process_p50_ms"] = latency_summary(values)["p50"]
    floor = out["status"]["p50_ms"]
    # ``status`` does work of its own (counts, lags): without it, what the transport costs.
    transport = round(floor - out["status"]["in_process_p50_ms"], 4)
    out["budget"] = {"slack_ms": SLACK_MS, "status_p50_ms": floor, "transport_floor_ms": transport}
    for action in ("remember", "find"):
        mcp_p50, in_process = out[action]["p50_ms"], out[action]["in_process_p50_ms"]
        out["budget"][action] = {
            "mcp_p50_ms": mcp_p50,
            "in_process_p50_ms": in_process,
            "allowed_ms": round(floor + in_process + SLACK_MS, 4),
            "holds": mcp_p50 <= floor + in_process + SLACK_MS,
            "overhead_beyond_transport_ms": round(mcp_p50 - transport - in_process, 4),
            "holds_on_transport_floor": mcp_p50 <= transport + in_process + SLACK_MS,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10000, help="memories in the ledger before measuring")
    parser.add_argument("--calls", type=int, default=300, help="calls per action")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=None, help="keep the database here (default: a temp dir)")
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="run the server under cProfile, its stats written here (the figures include the profiler)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        db = workdir / "mcp-roundtrip.db"
        for leftover in [*workdir.glob("mcp-roundtrip.db*"), *workdir.glob("in-process.db*")]:
            leftover.unlink()
        corpus = Corpus(seed=args.seed)
        app, seeded, build_stats = build(db, corpus, args.memories)
        app.close()
        for path in workdir.glob("mcp-roundtrip.db*"):  # the in-process twin starts from the same ledger
            shutil.copyfile(path, workdir / path.name.replace("mcp-roundtrip", "in-process"))
        twin = LedgerApp(
            Settings(db=str(workdir / "in-process.db"), client="bench", embedding=Embedding(enabled=False))
        )
        try:
            server_args = ("-m", "cProfile", "-o", str(args.profile.resolve())) if args.profile else ()
            figures = anyio.run(measure, db, twin, corpus, seeded, args.calls, args.seed, server_args)
        finally:
            twin.close()
    report = {
        "benchmark": "mcp_roundtrip",
        "transport": "stdio",
        "memories": args.memories,
        "calls": args.calls,
        "seed": args.seed,
        "build": build_stats,
        **figures,
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
