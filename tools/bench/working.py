"""The working tier's costs, as one JSON document.

- ``remember`` into the working tier against a long-term ``remember`` of the same kind of text,
  interleaved call by call in one ledger (both with a ``session_id``). Budget: the working p50
  is no more than the long-term p50.
- ``find`` with a ``session_id`` (its working set first, its conversation ranked first) against
  the same query without one, interleaved, at ``--memories`` long-term memories spread over
  conversations. Budget: within +1 ms at p50.

    python -m tools.bench.working                       # 100k memories, 300 of each
    python -m tools.bench.working --memories 5000 --calls 100   # a quick look
    python -m tools.bench.working --keep /tmp/w100k.db         # build once, reuse on later runs
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

import msgspec

from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tools.bench.corpus import Corpus
from tools.bench.run import latency_summary, remembered_event

FIND_BUDGET_MS = 1.0
CONVERSATIONS = 1000  # the built memories are spread over this many conversations


def build(db: Path, corpus: Corpus, n: int, batch: int = 5000) -> list[Any]:
    """``n`` long-term memories, each in one of CONVERSATIONS conversations, appended in bulk."""
    memories = list(corpus.memories(n))
    store = EventStore(db)
    try:
        for start in range(0, n, batch):
            events = []
            for i, m in enumerate(memories[start : start + batch], start):
                event = remembered_event(m)
                data = msgspec.structs.replace(event.data, session=f"conv-{i % CONVERSATIONS}", turn=i // CONVERSATIONS)
                events.append(
                    NewEvent(data=data, stream_id=event.stream_id, event_time=event.event_time, actor="bench")
                )
            store.append(events)
    finally:
        store.close()
    return memories


def _timed(call: Any) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def bench_remember(app: LedgerApp, corpus: Corpus, calls: int) -> dict[str, Any]:
    """Working and long-term ``remember`` of fresh texts, interleaved (the order alternates)."""
    texts = [m.content for m in corpus.memories(2 * calls + 100)][100:]
    samples: dict[str, list[float]] = {"working": [], "long": []}
    for i in range(calls):
        pair = [("working", texts[2 * i]), ("long", texts[2 * i + 1])]
        for tier, text in pair if i % 2 == 0 else pair[::-1]:
            session = f"bench-{i % 50}"
            samples[tier].append(_timed(lambda t=text, s=session, k=tier: app.remember(t, session_id=s, tier=k)))
    return {tier: latency_summary(values) for tier, values in samples.items()}


def bench_find(app: LedgerApp, corpus: Corpus, memories: list[Any], calls: int, seed: int) -> dict[str, Any]:
    """The same query with and without a ``session_id``, interleaved."""
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {"with_session": [], "without": []}
    for i in range(calls):
        query = corpus.query(memories[rng.randrange(len(memories))])[1]
        session = f"conv-{rng.randrange(CONVERSATIONS)}"
        pair = [("with_session", {"session_id": session}), ("without", {})]
        for kind, extra in pair if i % 2 == 0 else pair[::-1]:
            samples[kind].append(_timed(lambda q=query, e=extra: app.find(q, limit=10, **e)))
    out: dict[str, Any] = {kind: latency_summary(values) for kind, values in samples.items()}
    # The same query asked both ways one after the other: the median of the differences is the
    # session's own cost, less exposed to the machine's load than a difference of medians.
    deltas = [a - b for a, b in zip(samples["with_session"], samples["without"], strict=True)]
    out["paired_delta"] = latency_summary(deltas)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=300, help="calls of each kind")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--working-sets", type=int, default=50, help="conversations given a full working set")
    parser.add_argument("--keep", type=Path, help="ledger file to build once and reuse (same --memories and --seed)")
    args = parser.parse_args(argv)
    corpus = Corpus(seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-working-") as tmp:
        db = args.keep or Path(tmp) / "working.db"
        started = time.perf_counter()
        reused = db.exists()
        memories = list(corpus.memories(args.memories)) if reused else build(db, corpus, args.memories)
        app = LedgerApp(Settings(db=str(db), client="bench", embedding=Embedding(enabled=False)))
        built_s = time.perf_counter() - started
        try:
            for c in range(0, CONVERSATIONS, max(CONVERSATIONS // max(args.working_sets, 1), 1)):  # sets to answer from
                for k in range(20):
                    app.remember(memories[(c * 20 + k) % len(memories)].content, session_id=f"conv-{c}", tier="working")
            for _ in range(20):  # warm the page cache, outside the measurement
                app.find(corpus.query(memories[0])[1], session_id="conv-0")
            remember = bench_remember(app, corpus, args.calls)
            find = bench_find(app, corpus, memories, args.calls, args.seed)
        finally:
            app.close()
    find_delta = find["with_session"]["p50"] - find["without"]["p50"]
    paired = find["paired_delta"]["p50"]
    report = {
        "benchmark": "working",
        "memories": args.memories,
        "calls": args.calls,
        "build_s": round(built_s, 1),
        "reused": reused,
        "remember_ms": remember,
        "find_ms": find,
        "budget": {
            "remember_working_p50_le_long_p50": remember["working"]["p50"] <= remember["long"]["p50"],
            "find_session_p50_delta_ms": round(find_delta, 3),
            "find_session_paired_delta_p50_ms": round(paired, 3),
            "find_delta_budget_ms": FIND_BUDGET_MS,
            "holds": remember["working"]["p50"] <= remember["long"]["p50"] and find_delta <= FIND_BUDGET_MS,
        },
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
