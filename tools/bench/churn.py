"""Churn: facts that change often and are re-stated instead of updated, as one JSON document.

Three workloads of ``remember`` calls sent through the MCP tool dispatcher in-process (the
reply measured is the compacted JSON an agent reads), each beside the same corpus with every
subject made unique (no claim ever collides):

* ``one_key``: one claim key re-stated ``--calls`` times with a new value each time;
* ``keys_100x10``: 100 keys × 10 values, round robin;
* ``mixed``: 10 subjects × 5 sentence shapes (latency, port, sprint, on-call, replicas) with a
  varying number.

Per workload: events per ``remember``, reply bytes (mean, max), ``remember`` p50/p99 in ms, and
the p50 ratio against the no-collision corpus, whose remembers are interleaved with the
churn's one by one (so a busy machine slows both alike). Budgets: ≤ 2 events per ``remember``, reply
≤ 600 bytes, p50 ratio ≤ 1.3.

    python -m tools.bench.churn                 # 1,000 calls per workload
    python -m tools.bench.churn --calls 100     # a quick look
    python -m tools.bench.churn --auto-settle   # with policy auto_settle (the losers are superseded)
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Policy, Settings
from fact_ledger.server.mcp.compact import size
from fact_ledger.server.mcp.dispatch import LedgerTools
from fact_ledger.server.mcp.routes import MEMORY
from tools.bench.run import latency_summary

BUDGETS = {"events_per_remember": 2.0, "reply_bytes_max": 600.0, "p50_ratio": 1.3}
SUBJECTS = (
    "search index",
    "billing api",
    "auth gateway",
    "staging api",
    "payments queue",
    "user service",
    "ingest worker",
    "cache cluster",
    "report job",
    "email relay",
)
SHAPES = (
    "The {s} p95 latency is {n} ms",
    "The {s} listens on port {n}",
    "The current sprint of {s} is {n}",
    "The on-call person for {s} is {who}",
    "The {s} replica count is {n}",
)
PEOPLE = ("Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana")

Workload = Callable[[int, random.Random, bool], list[str]]


def _subject(name: str, i: int, unique: bool) -> str:
    return f"{name} {i}" if unique else name


def one_key(calls: int, rng: random.Random, unique: bool) -> list[str]:
    return [f"The {_subject('staging api', i, unique)} listens on port {1000 + i}" for i in range(calls)]


def keys_100x10(calls: int, rng: random.Random, unique: bool) -> list[str]:
    return [f"The {_subject(f'service {i % 100}', i, unique)} port is {2000 + i // 100}" for i in range(calls)]


def mixed(calls: int, rng: random.Random, unique: bool) -> list[str]:
    out = []
    for i in range(calls):
        shape = SHAPES[rng.randrange(len(SHAPES))]
        subject = _subject(SUBJECTS[rng.randrange(len(SUBJECTS))], i, unique)
        out.append(shape.format(s=subject, n=rng.randrange(1, 10000), who=PEOPLE[rng.randrange(len(PEOPLE))]))
    return out


WORKLOADS: dict[str, Workload] = {"one_key": one_key, "keys_100x10": keys_100x10, "mixed": mixed}


class _Run:
    """One ledger being fed one workload: its samples and reply sizes."""

    def __init__(self, db: Path, contents: list[str], auto_settle: bool = False) -> None:
        self.app = LedgerApp(Settings(db=str(db), client="bench", policy=Policy(auto_settle=auto_settle)))
        self.tools = LedgerTools(self.app)
        self.contents = contents
        self.before = self.app.store.last_position()
        self.samples: list[float] = []
        self.replies: list[int] = []

    async def step(self, i: int) -> None:
        started = time.perf_counter()
        result = await self.tools.call(MEMORY, "remember", {"content": self.contents[i]}, None)
        self.samples.append((time.perf_counter() - started) * 1000)
        body = result.structured_content or {}
        if not body.get("ok"):
            raise RuntimeError(f"remember failed: {body}")
        self.replies.append(size(body))

    def figures(self) -> dict[str, Any]:
        events = self.app.store.last_position() - self.before
        return {
            "events_per_remember": round(events / len(self.contents), 3),
            "reply_bytes_mean": round(sum(self.replies) / len(self.replies), 1),
            "reply_bytes_max": max(self.replies),
            "remember_ms": latency_summary(self.samples),
            "open_conflicts": self.app.conn.execute("SELECT count(*) FROM conflicts WHERE state='open'").get,
            "active_memories": self.app.conn.execute("SELECT count(*) FROM memories WHERE status='active'").get,
        }


async def _interleaved(runs: list[_Run]) -> None:
    """Call i of every run before call i+1 of any: load on the machine hits both alike."""
    for i in range(len(runs[0].contents)):
        for run in runs:
            await run.step(i)


def run_pair(
    workdir: Path, name: str, calls: int, seed: int, auto_settle: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The churn workload and its no-collision twin, their remembers interleaved."""
    runs = [
        _Run(
            workdir / f"{name}-{kind}.db",
            WORKLOADS[name](calls, random.Random(seed), kind == "unique"),
            auto_settle=auto_settle,
        )
        for kind in ("churn", "unique")
    ]
    try:
        anyio.run(_interleaved, runs)
        churn, baseline = (run.figures() for run in runs)
        return churn, baseline
    finally:
        for run in runs:
            run.app.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--auto-settle", action="store_true", help="policy auto_settle on (docs/governance.md)")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"calls": args.calls, "auto_settle": args.auto_settle, "budgets": BUDGETS, "workloads": {}}
    with tempfile.TemporaryDirectory(prefix="ledger-churn-") as tmp:
        for name in args.workloads.split(","):
            churn, baseline = run_pair(Path(tmp), name, args.calls, args.seed, args.auto_settle)
            ratio = churn["remember_ms"]["p50"] / max(baseline["remember_ms"]["p50"], 1e-9)
            report["workloads"][name] = {
                "churn": churn,
                "no_collision": baseline,
                "p50_ratio": round(ratio, 3),
                "within_budget": (
                    churn["events_per_remember"] <= BUDGETS["events_per_remember"]
                    and churn["reply_bytes_max"] <= BUDGETS["reply_bytes_max"]
                    and ratio <= BUDGETS["p50_ratio"]
                ),
            }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
