"""As-of query latency at corpus scale, printed as one JSON document of medians.

The corpus is the seeded one of ``tools.bench.corpus`` plus a history on top of it: some
memories are updated (new words, corrected event times), some superseded by a later one, some
retired, so the version tables hold several states per memory and the recorded axis matters.
Events are bulk-appended, then the facade opens and folds every projection.

Measured per repetition (the median over repetitions is reported with the repetitions kept):
as-of ``find`` on the recorded axis, on the event axis, on both, and with an empty query;
as-of ``read``; ``timeline`` of a memory. Budget: every kind's p50 ≤ 20 ms at 100k memories.

    python -m tools.bench.asof                       # 100000 memories, 3 repetitions
    python -m tools.bench.asof --memories 5000 --reps 1 --queries 50   # smoke
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from fact_ledger.ledger.errors import NotFound
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import MemoryRetired, MemoryUpdated, Superseded
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tools.bench.corpus import Corpus, Memory
from tools.bench.run import latency_summary, median_of, remembered_event

BUDGET_P50_MS = 20.0


def build(
    db: Path, corpus: Corpus, n: int, rng: random.Random, batch: int = 5000
) -> tuple[list[Memory], dict[str, Any]]:
    """n memories, then ~10% updated, ~5% superseded, ~3% retired, interleaved in recording order."""
    memories = list(corpus.memories(n))
    events = [remembered_event(m) for m in memories]
    streams = [e.stream_id for e in events]
    history: list[NewEvent] = []
    for _ in range(n // 10):
        i = rng.randrange(n)
        other = memories[rng.randrange(n)]
        history.append(
            NewEvent(
                data=MemoryUpdated(
                    memory=streams[i], content=other.content + " (revised)", event_time=other.event_time
                ),
                stream_id=streams[i],
                event_time=other.event_time,
                actor="bench",
            )
        )
    for _ in range(n // 20):
        loser, winner = rng.sample(range(n), 2)
        history.append(
            NewEvent(
                data=Superseded(loser=streams[loser], winner=streams[winner], rule="event_time"),
                stream_id=streams[loser],
                event_time=memories[winner].event_time,
                actor="bench",
            )
        )
    for _ in range(n * 3 // 100):
        i = rng.randrange(n)
        history.append(
            NewEvent(
                data=MemoryRetired(memory=streams[i], reason="bench"),
                stream_id=streams[i],
                event_time=memories[rng.randrange(n)].event_time,
                actor="bench",
            )
        )
    # History events land after their memory: spread them over the second half of the log.
    half = n // 2
    ordered = events[:half]
    rest = events[half:]
    step = max(1, len(rest) // max(1, len(history)))
    for k, event in enumerate(rest):
        ordered.append(event)
        if k % step == 0 and history:
            ordered.append(history.pop())
    ordered.extend(history)
    store = EventStore(db)
    started = time.perf_counter()
    for i in range(0, len(ordered), batch):
        store.append(ordered[i : i + batch])
    appended = time.perf_counter() - started
    store.close()
    return memories, {"events": len(ordered), "append_s": round(appended, 2)}


def sample(fn: Callable[[], Any], count: int) -> list[float]:
    out = []
    for _ in range(count):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def one_rep(
    app: LedgerApp, corpus: Corpus, memories: list[Memory], rng: random.Random, queries: int
) -> dict[str, dict[str, float]]:
    last = app.store.last_position()
    times = [m.event_time for m in memories]
    point = lambda: rng.randrange(last // 4, last + 1)  # noqa: E731 - a sampler, read as one
    when = lambda: rng.choice(times)  # noqa: E731
    text = lambda: corpus.query(memories[rng.randrange(len(memories))])[1]  # noqa: E731
    ids = [r[0] for r in app.conn.execute("SELECT memory_id FROM memories")]
    kinds: dict[str, Callable[[], Any]] = {
        "find_recorded": lambda: app.find(text(), limit=10, as_of_recorded=point()),
        "find_event_time": lambda: app.find(text(), limit=10, as_of_event_time=when()),
        "find_both": lambda: app.find(text(), limit=10, as_of_recorded=point(), as_of_event_time=when()),
        "find_empty_query": lambda: app.find("", limit=10, as_of_recorded=point(), as_of_event_time=when()),
        "read_both": lambda: _read(app, rng.choice(ids), point(), when()),
        "timeline_memory": lambda: app.timeline(memory_id=rng.choice(ids)),
    }
    return {kind: latency_summary(sample(fn, queries)) for kind, fn in kinds.items()}


def _read(app: LedgerApp, memory_id: int, position: int, at: str) -> None:
    with contextlib.suppress(NotFound):  # not yet known or valid at that point: still a lookup
        app.read(memory_id, as_of_recorded=position, as_of_event_time=at)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="as-of query latency (JSON on stdout)")
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--queries", type=int, default=300, help="calls per kind per repetition")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="where the database goes (default: a temp dir)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    corpus = Corpus(seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="ledger-asof-", dir=args.workdir) as tmp:
        db = Path(tmp) / "asof.db"
        memories, build_info = build(db, corpus, args.memories, rng)
        started = time.perf_counter()
        app = LedgerApp(Settings(db=str(db), client="bench"))
        build_info["open_fold_s"] = round(time.perf_counter() - started, 2)
        build_info["states"] = app.conn.execute("SELECT count(*) FROM tt_states").get
        try:
            app.find("warm", as_of_recorded=1)
            reps = [one_rep(app, corpus, memories, rng, args.queries) for _ in range(args.reps)]
        finally:
            app.close()
    medians = {kind: median_of([r[kind] for r in reps]) for kind in reps[0]}
    worst = max(m["p50"] for m in medians.values())
    report = {
        "machine": {
            "python": platform.python_version(),
            "sqlite": apsw.sqlite_lib_version(),
            "platform": platform.platform(),
        },
        "config": {k: str(v) for k, v in vars(args).items()},
        "build": build_info,
        "p50_ms": {kind: m["p50"] for kind, m in medians.items()},
        "medians_ms": medians,
        "reps": reps,
        "budget": {"p50_ms": BUDGET_P50_MS, "worst_p50_ms": worst, "ok": worst <= BUDGET_P50_MS},
    }
    json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
