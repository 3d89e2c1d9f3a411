"""The semantic layer's budgets, measured with a real embedding model, as one JSON document.

* ``find`` p50 with vectors at N memories against the query embedding's own p50 (budget:
  at most 8 ms more), each query new to the query-embedding cache, and the exact-phrase rate;
* ``remember`` p50 with the vectors worker running against lexical-only, interleaved
  (budget: within 10 %), then the vectors' lag after a burst of writes and how long the
  worker takes to catch up;
* rebuild of the vectors from cached embeddings against the lexical rebuild (budget: at
  least 0.8x its speed; ``find`` uses them from then on), the notices stage that follows it
  (a nearest-neighbour look per vector), and ``reembed`` texts/s from an empty cache;
* the RSS of a process with the model loaded and the vectors searched (aim: 450 MB).

``find`` and the RSS are measured in a fresh process that opens the finished ledger as
``ledger serve`` would (:func:`server_process`), once the bench's own process has closed it:
that process has built the ledger, rebuilt it three times and looked up 100k vectors'
neighbours, and holds the whole corpus, so its caches and heap are not a server's. The same
``find`` loop in the bench's process is reported beside it (``find_in_bench_process``).

Embedding 100k passages takes about an hour on 2 cores, so the N-memory ledger gets its
vectors from ``--distinct`` texts embedded for real and reused round-robin (each memory's
cache entry and vector row are written as if its own text had been embedded), each copy moved
by its own noise so that copies are not near-duplicates. Timings of KNN and fusion do not
depend on which vectors they are; the exact-phrase check does not either.

    python -m tools.bench.semantic --model PATH [--size 100000] [--distinct 2000] [--burst 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fact_ledger.projections import derived, vectors
from fact_ledger.projections.indexer import Indexer
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings, load_settings
from tools.bench.corpus import Corpus, Memory
from tools.bench.run import bench_exact_phrase, build, latency_summary, remember, timed


def seed_vectors(
    app: LedgerApp, distinct: int, embed: Callable[[list[str]], list[bytes]] | None = None
) -> dict[str, float]:
    """Embed ``distinct`` memories for real (with ``embed``, by default the model's passage
    embedding); give every other memory one of those vectors."""
    model = app.embedding_model()
    assert model is not None
    rows = app.conn.execute("SELECT memory_id, workspace, content FROM memories ORDER BY memory_id").fetchall()
    sample = [vectors.passage_text(r[2]) for r in rows[:distinct]]
    started = time.perf_counter()
    real = (embed or model.embed_passages)(sample)
    seconds = time.perf_counter() - started
    blobs = _spread(real, len(rows))

    Indexer(app.store, model).prepare(rebuild=True)

    def write(batch: list[tuple[int, str, bytes, bytes]], cache: list[tuple[bytes, bytes]]) -> None:
        # a transaction per batch: one for a million rows spilled 12 GB of pages to the WAL
        app.store.write(lambda: (vectors.write(app.conn, batch), derived.store(app.conn, cache)))

    # One vector per embedding key, as a model gives: memories of the same text share it (so
    # that a rebuild from the cache gives back exactly these vectors).
    by_key: dict[bytes, bytes] = {}
    batch: list[tuple[int, str, bytes, bytes]] = []
    cache: list[tuple[bytes, bytes]] = []
    previous = ""
    for i, (memory_id, workspace, content) in enumerate(rows):
        key = derived.embedding_key(model.model_id, vectors.passage_text(content))
        if key not in by_key:
            cache.append((key, by_key.setdefault(key, blobs[i])))
        batch.append((memory_id, workspace, key, by_key[key]))
        # Every memory's context passage is cached too, so that a rebuild embeds nothing.
        context = vectors.context_passage(previous, content)
        if context is not None and (context_key := derived.embedding_key(model.model_id, context)) not in by_key:
            cache.append((context_key, by_key.setdefault(context_key, blobs[(i + 1) % len(rows)])))
        previous = content
        if len(batch) == 5000:
            write(batch, cache)
            batch, cache = [], []
    write(batch, cache)

    def done() -> None:
        vectors.set_checkpoint(app.conn, app.store.last_position())
        app.conn.execute(
            "INSERT OR REPLACE INTO vectors_meta(name, value) VALUES('notices_seq', (SELECT max(seq) FROM vectors))"
        )

    app.store.write(done)
    return {"distinct": len(sample), "embed_s": round(seconds, 2), "texts_per_s": round(len(sample) / seconds, 1)}


def _spread(real: list[bytes], n: int, seed: int = 7) -> list[bytes]:
    """``n`` vectors from the real ones, round-robin, each moved by its own random noise (cosine
    ~0.8 to its source): copies of one vector would all be near-duplicates of each other, and
    the notices stage would spend its time on pairs a real ledger does not have."""
    import numpy as np

    rng = np.random.default_rng(seed)
    base = np.stack([np.frombuffer(b, dtype=np.float32) for b in real])
    out = []
    for start in range(0, n, 10_000):
        count = min(10_000, n - start)
        noise = rng.standard_normal((count, base.shape[1])).astype(np.float32) * (0.7 / np.sqrt(base.shape[1]))
        moved = base[np.arange(start, start + count) % len(base)] + noise
        moved /= np.linalg.norm(moved, axis=1, keepdims=True)
        out += [row.astype(np.float32).tobytes() for row in moved]
    return out


def seed_contexts(app: LedgerApp) -> int:
    """The worst case for ``find``: a context vector for every memory (a ledger of nothing but
    conversation turns), so the context scan covers as many rows as the main one. The corpus's
    random event times put few memories in a session, so few have one of their own."""
    ids = [r[0] for r in app.conn.execute("SELECT memory_id FROM vectors ORDER BY memory_id")]
    for start in range(0, len(ids), 20_000):  # a transaction per batch (see seed_vectors)
        mine = ids[start : start + 20_000]
        nexts = [ids[(start + i + 1) % len(ids)] for i in range(len(mine))]
        rows = {
            r[0]: r
            for r in app.conn.execute(
                "SELECT memory_id, workspace, key, embedding FROM vectors "
                "WHERE memory_id IN (SELECT value FROM json_each(?))",
                (json.dumps(mine + nexts),),
            )
        }
        shifted = [(m, rows[m][1], bytes(rows[m][2]), bytes(rows[n][3])) for m, n in zip(mine, nexts, strict=True)]
        app.store.write(lambda shifted=shifted: vectors.write_contexts(app.conn, shifted, []))
    return len(ids)


def bench_find_vs_embedding(app: LedgerApp, queries: list[str]) -> dict[str, Any]:
    model = app.embedding_model()
    assert model is not None
    embed, find = [], []
    for query in queries:  # interleaved; each query new to the query-embedding cache
        started = time.perf_counter()
        model.embed_query(vectors.query_text(query))
        embed.append((time.perf_counter() - started) * 1000)
        app.semantic._query_vectors.clear()  # words unchanged (a suffix would change full text's work)
        started = time.perf_counter()
        app.find(query, limit=10)
        find.append((time.perf_counter() - started) * 1000)
    e, f = latency_summary(embed), latency_summary(find)
    return {
        "embed_query_ms": e,
        "find_ms": f,
        "overhead_p50_ms": round(f["p50"] - e["p50"], 3),
        "budget_overhead_ms": 8.0,
        "within_budget": f["p50"] - e["p50"] <= 8.0,
    }


def bench_remember_pair(semantic: LedgerApp, lexical: LedgerApp, corpus: Corpus, count: int) -> dict[str, Any]:
    with_model, without = [], []
    for i, m in enumerate(corpus.memories(2 * count)):
        app, samples = (semantic, with_model) if i % 2 == 0 else (lexical, without)
        started = time.perf_counter()
        remember(app, m)
        samples.append((time.perf_counter() - started) * 1000)
    w, wo = latency_summary(with_model), latency_summary(without)
    return {
        "with_worker_ms": w,
        "lexical_only_ms": wo,
        "ratio_p50": round(w["p50"] / wo["p50"], 3),
        "within_10_percent": w["p50"] <= 1.1 * wo["p50"],
    }


def bench_burst(app: LedgerApp, memories: list[Memory], max_wait_s: float) -> dict[str, Any]:
    """Write a burst with the worker running; the lag right after it, then watch it drain."""
    started = time.perf_counter()
    for m in memories:
        remember(app, m)
    written = time.perf_counter() - started
    lag = app.vectors_status()["lag"]
    while app.vectors_status()["lag"] and time.perf_counter() - started - written < max_wait_s:
        time.sleep(0.2)
    waited = time.perf_counter() - started - written
    left = app.vectors_status()["lag"]
    return {
        "writes": len(memories),
        "write_s": round(written, 2),
        "lag_after_burst": lag,
        "lag_after_wait": left,
        "waited_s": round(waited, 2),
        "drained_per_s": round((lag - left) / waited, 1) if waited else None,
    }


def server_process(db: Path, model: str, queries: list[str]) -> dict[str, Any]:
    """``find`` against the query embedding and the RSS at each step, in a fresh process that
    opens the ledger as ``ledger serve`` does (:func:`probe`)."""
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench.semantic", "--probe", str(db), "--model", model],
        input=json.dumps(queries),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def probe(db: str, model: str, queries: list[str]) -> dict[str, Any]:
    """Run in the fresh process: open the ledger; load the model and answer the queries
    (:func:`bench_find_vs_embedding`); start the vectors worker and let it embed one write."""
    rss = {"opened": 0.0, "model_loaded_and_find": 0.0, "worker_and_a_write": 0.0}
    app = LedgerApp(Settings(db=db, client="bench", embedding=Embedding(model=model)))
    try:
        rss["opened"] = rss_mb()
        app.find(queries[0])
        finds = bench_find_vs_embedding(app, queries)
        rss["model_loaded_and_find"] = rss_mb()
        app.start_vector_worker()
        # a write longer than the model's window: the encoder's buffers at their largest
        app.remember(" ".join(["the probe's own note, embedded by the worker in windows of tokens"] * 16))
        deadline = time.monotonic() + 60
        while app.vectors_status()["lag"] and time.monotonic() < deadline:
            time.sleep(0.05)
        rss["worker_and_a_write"] = rss_mb()
    finally:
        app.close()
    return {"find": finds, "rss_mb": rss}


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run(args: argparse.Namespace) -> dict[str, Any]:
    corpus = Corpus(seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-semantic-") as tmp:
        db = Path(tmp) / "semantic.db"
        lexical, memories, build_info = build(db, corpus, args.size)
        lexical.close()
        lexical = LedgerApp(Settings(db=str(db), client="bench", embedding=Embedding(enabled=False)))
        app = LedgerApp(Settings(db=str(db), client="bench", embedding=Embedding(model=args.model)))
        try:
            seeded = seed_vectors(app, args.distinct)
            lexical_rebuild = statistics.median(timed(lexical.rebuild) for _ in range(args.reps))
            indexer = Indexer(app.store, app.embedding_model(), thresholds=app.semantic._thresholds())
            vector_rebuild = statistics.median(
                timed(lambda: indexer.run(rebuild=True, notices=False)) for _ in range(args.reps)
            )
            notices_s = timed(indexer.find_notices)  # the notices stage, after the last rebuild
            events = app.store.last_position()
            contexts = seed_contexts(app)
            rng = random.Random(args.seed)
            queries = [corpus.query(memories[rng.randrange(len(memories))])[1] for _ in range(args.queries)]
            app.find(queries[0])
            finds_here = bench_find_vs_embedding(app, queries)
            phrase = bench_exact_phrase(app, memories, args.phrases, args.seed)
            app.start_vector_worker()
            remembers = bench_remember_pair(app, lexical, corpus, args.remembers)
            burst = bench_burst(app, list(Corpus(seed=args.seed + 1).memories(args.burst)), args.burst_wait)
        finally:
            app.close()
            lexical.close()
        server = server_process(db, args.model, queries)
        with tempfile.TemporaryDirectory(prefix="bench-reembed-") as tmp2:
            small = LedgerApp(
                Settings(db=str(Path(tmp2) / "r.db"), client="bench", embedding=Embedding(model=args.model))
            )
            try:
                for m in Corpus(seed=args.seed + 2).memories(args.reembed):
                    remember(small, m)
                reembed = small.reembed()
            finally:
                small.close()
    return {
        "task": "semantic bench",
        "memories": args.size,
        "model": args.model,
        "build": build_info,
        "seeded_vectors": {**seeded, "context_vectors_for_find": contexts},
        "find": server["find"],
        "find_in_bench_process": finds_here,
        "exact_phrase": phrase,
        "rebuild": {
            "events": events,
            "lexical_s": round(lexical_rebuild, 3),
            "vectors_from_cache_s": round(vector_rebuild, 3),
            "speed_ratio": round(lexical_rebuild / vector_rebuild, 3),
            "then_notices_s": round(notices_s, 3),
            "budget_min_ratio": 0.8,
        },
        "remember": remembers,
        "burst": burst,
        "reembed": {k: reembed[k] for k in ("memories", "embedded", "seconds", "texts_per_s")},
        "rss_mb": server["rss_mb"],
        "rss_aim_mb": 450,
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="GGUF path (default: the configured model)")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--distinct", type=int, default=2000, help="texts embedded for real to seed vectors")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--phrases", type=int, default=500)
    parser.add_argument("--remembers", type=int, default=300)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--burst-wait", type=float, default=3600.0, help="seconds to watch the lag drain")
    parser.add_argument("--reembed", type=int, default=300, help="memories embedded from an empty cache")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--probe", metavar="DB", help=argparse.SUPPRESS)  # the fresh process of server_process
    args = parser.parse_args(argv)
    args.model = args.model or load_settings().embedding_model_path
    if not args.model:
        raise SystemExit("no embedding model: pass --model or run ledger model install")
    if args.probe:
        json.dump(probe(args.probe, args.model, json.loads(sys.stdin.read())), sys.stdout)
        return 0
    json.dump(run(args), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
