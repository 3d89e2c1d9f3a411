"""The ledger's performance budgets, measured and printed as one JSON document.

Measured, each over ``--reps`` repetitions (the median of the per-repetition figures is
reported, the repetitions are kept):

* append throughput of the raw ``EventStore``: batches of 1000 events, and single durable
  (``synchronous=FULL``) appends with their latency;
* per corpus size (``--sizes``): building the corpus (events bulk-appended in big
  transactions, then the projections folded by the open-time rebuild), ``rebuild`` events/s
  (the repetitions reuse the claims and signatures cached by content hash; ``cold_events_per_s``
  is one rebuild after emptying that cache),
  ``find`` latency over a mix of English / Chinese / question queries, the exact-phrase hit
  rate (a verbatim phrase of a current memory must come back in the top 10), and ``remember``
  end-to-end latency through the facade, in-process;
* budgets (remember p50 ≤ 1 ms and p99 ≤ 5 ms, find p50 ≤ 5 ms at the largest size, rebuild
  ≥ 30k events/s, exact phrase ≥ 98 %) with the measured/budget ratio.

    python -m tools.bench                      # sizes 10000,100000, 3 repetitions
    python -m tools.bench --quick              # tiny sizes, the smoke test's mode
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import apsw

from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import MemoryRecorded
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.ledger.normalize import content_hash
from fact_ledger.ledger.trust import DEFAULT_CONFIDENCE, default_protection
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tools.bench.corpus import Corpus, Memory, phrase_of

BUDGETS = {  # metric → (budget, "max" | "min")
    "remember_p50_ms": (1.0, "max"),
    "remember_p99_ms": (5.0, "max"),
    "find_p50_ms": (5.0, "max"),
    "rebuild_events_per_s": (30000.0, "min"),
    "exact_phrase_hit_rate": (0.98, "min"),
}


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sample."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def latency_summary(samples_ms: Sequence[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(samples_ms, 50), 4),
        "p95": round(percentile(samples_ms, 95), 4),
        "p99": round(percentile(samples_ms, 99), 4),
        "mean": round(statistics.fmean(samples_ms), 4),
        "max": round(max(samples_ms), 4),
        "n": len(samples_ms),
    }


def median_of(reps: list[dict[str, float]]) -> dict[str, float]:
    """Key-wise median over repetitions (each key a figure of one repetition)."""
    return {k: round(statistics.median(r[k] for r in reps), 4) for k in reps[0]}


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def remembered_event(m: Memory) -> NewEvent:
    stream = uuid7()
    data = MemoryRecorded(
        memory=stream,
        content=m.content,
        subject=m.subject,
        tags=m.tags,
        source_type=m.source_type,
        confidence=DEFAULT_CONFIDENCE[m.source_type],
        protection=default_protection(m.source_type),
        content_hash=content_hash(m.content),
    )
    return NewEvent(data=data, stream_id=stream, event_time=m.event_time, actor="bench")


# -- append ------------------------------------------------------------------------------------
def bench_append(workdir: Path, corpus: Corpus, batched: int, single: int, reps: int) -> dict[str, Any]:
    events = [remembered_event(m) for m in corpus.memories(batched)]
    batch_reps, single_reps = [], []
    for rep in range(reps):
        store = EventStore(workdir / f"append-{rep}.db")
        try:
            elapsed = timed(lambda s=store: [s.append(events[i : i + 1000]) for i in range(0, len(events), 1000)])
            batch_reps.append({"events_per_s": len(events) / elapsed})
            fresh = [remembered_event(m) for m in corpus.memories(single)]
            samples = []
            for event in fresh:
                started = time.perf_counter()
                store.append([event])
                samples.append((time.perf_counter() - started) * 1000)
            summary = latency_summary(samples)
            single_reps.append(
                {"events_per_s": 1000 / summary["mean"], "p50_ms": summary["p50"], "p99_ms": summary["p99"]}
            )
        finally:
            store.close()
    return {
        "batched_1000": {**median_of(batch_reps), "events": len(events), "reps": batch_reps},
        "single_durable": {**median_of(single_reps), "events": single, "reps": single_reps},
    }


# -- one corpus size ---------------------------------------------------------------------------
def build(
    db: Path, corpus: Corpus, n: int, batch: int = 5000, *, views: str = ""
) -> tuple[LedgerApp, list[Memory], dict[str, float]]:
    """Bulk-append n remembered events (one transaction per batch), then open the facade
    (read models beside the log, or at ``views``: the log's own path keeps one file)."""
    memories = list(corpus.memories(n))
    store = EventStore(db)
    started = time.perf_counter()
    for i in range(0, n, batch):
        store.append([remembered_event(m) for m in memories[i : i + batch]])
    appended = time.perf_counter() - started
    store.close()
    started = time.perf_counter()
    app = LedgerApp(Settings(db=str(db), views=views, client="bench"))
    opened = time.perf_counter() - started
    return (
        app,
        memories,
        {
            "append_s": round(appended, 3),
            "open_fold_s": round(opened, 3),
            "append_events_per_s": round(n / appended, 1),
        },
    )


def bench_find(app: LedgerApp, queries: list[tuple[str, str]], limit: int = 10) -> dict[str, Any]:
    samples: dict[str, list[float]] = {}
    for kind, text in queries:
        started = time.perf_counter()
        app.find(text, limit=limit)
        samples.setdefault(kind, []).append((time.perf_counter() - started) * 1000)
    everything = [s for kind in samples.values() for s in kind]
    return {**latency_summary(everything), "by_kind": {k: latency_summary(v) for k, v in sorted(samples.items())}}


def bench_exact_phrase(app: LedgerApp, memories: list[Memory], samples: int, seed: int) -> dict[str, Any]:
    """Verbatim phrases of random memories; a hit is the source memory in the top 10."""
    rng = random.Random(seed)
    first_id = app.conn.execute("SELECT min(memory_id) FROM memories").get or 1
    by_lang: dict[str, list[int]] = {"en": [0, 0], "zh": [0, 0]}
    misses: list[str] = []
    for _ in range(samples):
        phrase = None
        while phrase is None:
            index = rng.randrange(len(memories))
            memory = memories[index]
            phrase = phrase_of(memory, rng)
        found = [r["memory_id"] for r in app.find(phrase, limit=10)["results"]]
        hit = (first_id + index) in found
        by_lang[memory.lang][0] += hit
        by_lang[memory.lang][1] += 1
        if not hit and len(misses) < 10:
            misses.append(phrase)
    hits = sum(h for h, _ in by_lang.values())
    return {
        "hit_rate": round(hits / samples, 4),
        "n": samples,
        "by_lang": {k: {"hit_rate": round(h / max(n, 1), 4), "n": n} for k, (h, n) in by_lang.items()},
        "example_misses": misses,
    }


def remember(app: LedgerApp, m: Memory) -> None:
    """One corpus memory through the facade, as an agent's ``remember`` would send it."""
    app.remember(m.content, subject=m.subject, tags=m.tags, source_type=m.source_type, event_time=m.event_time)


def bench_remember(app: LedgerApp, corpus: Corpus, count: int) -> dict[str, float]:
    samples = []
    for m in corpus.memories(count):
        started = time.perf_counter()
        remember(app, m)
        samples.append((time.perf_counter() - started) * 1000)
    return latency_summary(samples)


def bench_size(workdir: Path, n: int, args: argparse.Namespace) -> dict[str, Any]:
    corpus = Corpus(seed=args.seed)
    app, memories, build_info = build(workdir / f"corpus-{n}.db", corpus, n)
    try:
        events = app.store.last_position()
        rebuild_reps = []
        for _ in range(args.reps):
            elapsed = timed(app.rebuild)
            rebuild_reps.append({"events_per_s": round(events / elapsed, 1), "seconds": round(elapsed, 3)})
        # Which read model costs what: each one rebuilt alone (the log is read every time).
        by_projection = {
            name: round(events / timed(lambda name=name: app.rebuild(name)), 1) for name in app.runner.by_name
        }
        # The reps above reuse claims and signatures cached by content hash (as every rebuild
        # after the first does); a cold rebuild computes them all again.
        app.conn.execute("DELETE FROM derived_cache")
        cold = round(events / timed(app.rebuild), 1)
        queries = [corpus.query(memories[corpus.rng.randrange(n)]) for _ in range(args.queries)]
        app.find(queries[0][1])  # warm the page cache once, outside the measurement
        find_reps = [bench_find(app, queries) for _ in range(args.reps)]
        phrase = bench_exact_phrase(app, memories, args.phrases, args.seed)
        remember_reps = [bench_remember(app, corpus, args.remembers) for _ in range(args.reps)]
    finally:
        app.close()
    return {
        "memories": n,
        "build": build_info,
        "rebuild": {
            **median_of([{"events_per_s": r["events_per_s"]} for r in rebuild_reps]),
            "events": events,
            "reps": rebuild_reps,
            "alone_events_per_s": by_projection,
            "cold_events_per_s": cold,
        },
        "find_ms": {
            **median_of([{k: v for k, v in r.items() if k != "by_kind"} for r in find_reps]),
            "by_kind": {kind: median_of([r["by_kind"][kind] for r in find_reps]) for kind in find_reps[0]["by_kind"]},
            "reps": [{k: r[k] for k in ("p50", "p95", "p99")} for r in find_reps],
        },
        "exact_phrase": phrase,
        "remember_ms": {**median_of(remember_reps), "reps": [{k: r[k] for k in ("p50", "p99")} for r in remember_reps]},
    }


def budgets(sizes: dict[str, Any]) -> dict[str, Any]:
    largest = sizes[max(sizes, key=int)]
    measured = {
        "remember_p50_ms": largest["remember_ms"]["p50"],
        "remember_p99_ms": largest["remember_ms"]["p99"],
        "find_p50_ms": largest["find_ms"]["p50"],
        "rebuild_events_per_s": largest["rebuild"]["events_per_s"],
        "exact_phrase_hit_rate": largest["exact_phrase"]["hit_rate"],
    }
    out = {}
    for key, (budget, kind) in BUDGETS.items():
        value = measured[key]
        out[key] = {
            "value": value,
            "budget": budget,
            "ratio": round(value / budget, 3),
            "ok": value <= budget if kind == "max" else value >= budget,
            "at_memories": largest["memories"],
        }
    return out


def scaling(sizes: dict[str, Any]) -> dict[str, float]:
    """Largest-size figure divided by smallest-size figure: how each cost grows with the corpus."""
    keys = sorted(sizes, key=int)
    if len(keys) < 2:
        return {}
    small, large = sizes[keys[0]], sizes[keys[-1]]
    return {
        "find_p50": round(large["find_ms"]["p50"] / small["find_ms"]["p50"], 3),
        "remember_p50": round(large["remember_ms"]["p50"] / small["remember_ms"]["p50"], 3),
        "rebuild_events_per_s": round(large["rebuild"]["events_per_s"] / small["rebuild"]["events_per_s"], 3),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="fact-ledger benchmarks (JSON on stdout)")
    parser.add_argument("--sizes", default="10000,100000", help="corpus sizes, comma-separated")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of every timed part")
    parser.add_argument("--queries", type=int, default=400, help="find calls per repetition")
    parser.add_argument("--phrases", type=int, default=1000, help="exact-phrase samples per size")
    parser.add_argument("--remembers", type=int, default=1000, help="remember calls per repetition")
    parser.add_argument("--append-events", type=int, default=20000, help="events for the batched append")
    parser.add_argument("--single-appends", type=int, default=2000, help="single durable appends")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="where the databases go (default: a temp dir)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes and counts (smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.reps, args.queries, args.phrases = "300,600", 2, 20, 20
        args.remembers, args.append_events, args.single_appends = 20, 500, 20
    args.size_list = [int(s) for s in args.sizes.split(",") if s.strip()]
    if not args.size_list or min(args.size_list) <= 0 or args.reps < 1:
        parser.error("--sizes needs positive integers and --reps at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ledger-bench-", dir=args.workdir) as tmp:
        workdir = Path(tmp)
        started = time.perf_counter()
        report: dict[str, Any] = {
            "machine": {
                "python": platform.python_version(),
                "sqlite": apsw.sqlite_lib_version(),
                "cpus": __import__("os").cpu_count(),
                "platform": platform.platform(),
            },
            "config": {k: v for k, v in vars(args).items() if k not in ("workdir", "size_list")},
            "append": bench_append(workdir, Corpus(seed=args.seed), args.append_events, args.single_appends, args.reps),
        }
        sizes = {str(n): bench_size(workdir, n, args) for n in args.size_list}
        report["sizes"] = sizes
        report["scaling"] = scaling(sizes)
        report["budgets"] = budgets(sizes)
        report["seconds"] = round(time.perf_counter() - started, 1)
    json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
