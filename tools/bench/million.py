"""The budgets at a million memories, on one kept ledger, phase by phase, as one JSON document.

Building a 1M ledger and its vectors takes most of an hour on 2 cores, so the ledger lives in
``--workdir`` and every phase's result is kept in ``million.json`` there: a rerun measures only
the phases not done yet (``--redo PHASE`` measures one again).

* ``build``: the bench corpus (English and Chinese, :mod:`tools.bench.corpus`) bulk-appended,
  then the read models folded by the first open;
* ``lexical`` (no model): ``find`` p50/p95 over the bench's query mix, the exact-phrase rate,
  ``remember`` p50/p99 (each a new memory: the ledger churns as it is measured), one rebuild;
* ``vectors``: ``--distinct`` passages embedded for real (cached in the workdir as
  ``embeddings-<model>.npy`` for reruns) and spread over every memory (:func:`semantic.seed_vectors`),
  the vectors rebuilt from the cached embeddings and the notices stage that follows it (which
  finds nothing changed); then a context vector for every memory (the worst case for the scan);
* ``serve``: a fresh process opens the ledger as ``ledger serve`` does, loads the model and the
  index, answers ``find`` against the query embedding, and reports its RSS
  (:func:`semantic.probe`); twice: the first builds the index from the tables and saves its
  snapshot, the second starts from it;
* ``cli``: a cold ``ledger find`` with the model, no server running (wall clock, 3 runs);
* ``health``: the health report's pass (``memory_review health``), three times;
* the files' sizes.

    python -m tools.bench.million --workdir DIR [--size 1000000] [--distinct 2000] [--model PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections import knn_snapshot, vectors
from fact_ledger.projections.indexer import Indexer
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings, load_settings, views_beside
from tools.bench import semantic
from tools.bench.corpus import Corpus, Memory
from tools.bench.run import bench_exact_phrase, bench_find, bench_remember, remembered_event, timed

PHASES = ("build", "lexical", "vectors", "serve", "cli", "health")


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.workdir: Path = args.workdir
        self.db = self.workdir / "ledger.db"
        self.results_path = self.workdir / "million.json"
        self.results: dict[str, Any] = json.loads(self.results_path.read_text()) if self.results_path.exists() else {}
        self.corpus = Corpus(seed=args.seed)
        self._memories: list[Memory] | None = None

    @property
    def memories(self) -> list[Memory]:
        if self._memories is None:
            self._memories = list(Corpus(seed=self.args.seed).memories(self.args.size))
        return self._memories

    def run(self) -> dict[str, Any]:
        for phase in PHASES:
            if phase in self.results and phase not in self.args.redo:
                continue
            if self.args.only and phase not in self.args.only:
                continue
            started = time.perf_counter()
            result = getattr(self, phase)()
            result["phase_s"] = round(time.perf_counter() - started, 1)
            result["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            self.results[phase] = result
            self.results["files_mb"] = self.sizes()
            self.results["machine"] = {"cpus": os.cpu_count(), "loadavg_at_end": os.getloadavg()}
            self.results_path.write_text(json.dumps(self.results, indent=2))
            print(f"{phase}: {json.dumps(result)[:400]}", file=sys.stderr, flush=True)
        return self.results

    def open(self, *, model: bool) -> LedgerApp:
        embedding = Embedding(model=self.args.model) if model else Embedding(enabled=False)
        return LedgerApp(Settings(db=str(self.db), client="bench", embedding=embedding))

    def build(self) -> dict[str, Any]:
        if not self.db.exists():
            store = EventStore(self.db)
            started = time.perf_counter()
            for i in range(0, self.args.size, 5000):
                store.append([remembered_event(m) for m in self.memories[i : i + 5000]])
            appended = time.perf_counter() - started
            store.close()
        else:
            appended = None  # a log kept from an earlier run
        started = time.perf_counter()
        app = self.open(model=False)
        folded = time.perf_counter() - started
        events = app.store.last_position()
        app.close()
        return {"events": events, "append_s": appended, "open_fold_s": round(folded, 1)}

    def lexical(self) -> dict[str, Any]:
        app = self.open(model=False)
        try:
            rng = random.Random(self.args.seed)
            queries = [self.corpus.query(self.memories[rng.randrange(self.args.size)]) for _ in range(400)]
            app.find(queries[0][1])
            finds = bench_find(app, queries)
            phrase = bench_exact_phrase(app, self.memories, self.args.phrases, self.args.seed)
            remembers = bench_remember(app, Corpus(seed=self.args.seed + 3), self.args.remembers)
            events = app.store.last_position()
            rebuild_s = timed(app.rebuild)
        finally:
            app.close()
        return {
            "find_ms": {k: finds[k] for k in ("p50", "p95", "p99")},
            "find_by_kind_p50_ms": {k: v["p50"] for k, v in finds["by_kind"].items()},
            "exact_phrase": {k: phrase[k] for k in ("hit_rate", "n", "by_lang")},
            "remember_ms": {k: remembers[k] for k in ("p50", "p99")},
            "rebuild": {"events": events, "seconds": round(rebuild_s, 1), "events_per_s": round(events / rebuild_s)},
        }

    def vectors(self) -> dict[str, Any]:
        app = self.open(model=True)
        try:
            seeded = seed_vectors_cached(app, self.args.distinct, self.workdir)
            indexer = Indexer(app.store, app.embedding_model(), thresholds=app.semantic._thresholds())
            rebuild_s = timed(lambda: indexer.run(rebuild=True, notices=False))
            notices_s = timed(indexer.find_notices)
            contexts = semantic.seed_contexts(app)  # after the rebuild, which embeds the real sessions' only
            counted = vectors.counts(app.conn)
        finally:
            app.close()
        return {
            "seeded": seeded,
            "context_vectors": contexts,
            "counts": counted,
            "rebuild_from_cache_s": round(rebuild_s, 1),
            "then_notices_s": round(notices_s, 1),
        }

    def serve(self) -> dict[str, Any]:
        rng = random.Random(self.args.seed + 1)
        queries = [self.corpus.query(self.memories[rng.randrange(self.args.size)])[1] for _ in range(self.args.queries)]
        snapshot = knn_snapshot.beside(views_beside(str(self.db)))
        snapshot.unlink(missing_ok=True)
        runs = {}
        for name in ("index_from_the_tables", "index_from_its_snapshot"):
            started = time.perf_counter()
            probe = semantic.server_process(self.db, self.args.model, queries)
            runs[name] = {**_brief(probe), "process_s": round(time.perf_counter() - started, 1)}
            runs[name]["snapshot_after"] = snapshot.exists()
        return runs

    def cli(self) -> dict[str, Any]:
        env = {**os.environ, "LEDGER_DB": str(self.db), "LEDGER_EMBEDDING_MODEL": self.args.model}
        env.pop("LEDGER_EMBEDDING_ENABLED", None)
        seconds, said = [], []
        for query in ("who owns the staging server", "deploy report meeting", "服务器 接口 问题"):
            started = time.perf_counter()
            done = subprocess.run(
                [str(Path(sys.executable).with_name("ledger")), "find", query, "--json"],
                env=env,
                capture_output=True,
                check=True,
            )
            seconds.append(time.perf_counter() - started)
            said.append(len(json.loads(done.stdout)["results"]))
        median = round(statistics.median(seconds), 2)
        return {"find_s": [round(s, 2) for s in seconds], "median_s": median, "results": said}

    def health(self) -> dict[str, Any]:
        app = self.open(model=False)
        try:
            seconds = [timed(app.health) for _ in range(3)]
            report = app.health()
        finally:
            app.close()
        return {
            "pass_ms": [round(1000 * s, 1) for s in seconds],
            "median_ms": round(1000 * statistics.median(seconds), 1),
            "clusters": report["cluster_count"],
            "alias_proposals": len(report["aliases"]),
        }

    def sizes(self) -> dict[str, float]:
        return {
            p.name: round(p.stat().st_size / 2**20, 1)
            for p in sorted(self.workdir.iterdir())
            if p.is_file() and p.suffix in (".db", ".knn", ".npy")
        }


def seed_vectors_cached(app: LedgerApp, distinct: int, workdir: Path) -> dict[str, Any]:
    """:func:`semantic.seed_vectors`, its real embeddings kept in ``workdir`` for reruns."""
    import numpy as np

    model = app.embedding_model()
    assert model is not None
    cache = workdir / f"embeddings-{model.model_id.replace('/', '_').replace(':', '_')}-{distinct}.npy"
    if cache.exists():
        kept = np.load(cache)
        embed: Callable[[list[str]], list[bytes]] = lambda texts: [row.tobytes() for row in kept[: len(texts)]]  # noqa: E731
        return {**semantic.seed_vectors(app, distinct, embed=embed), "embeddings_from": cache.name}

    def embed_and_keep(texts: list[str]) -> list[bytes]:
        blobs = model.embed_passages(texts)
        np.save(cache, np.stack([np.frombuffer(b, dtype=np.float32) for b in blobs]))
        return blobs

    return semantic.seed_vectors(app, distinct, embed=embed_and_keep)


def _brief(probe: dict[str, Any]) -> dict[str, Any]:
    find = probe["find"]
    return {
        "embed_query_p50_ms": find["embed_query_ms"]["p50"],
        "find_p50_ms": find["find_ms"]["p50"],
        "find_p95_ms": find["find_ms"]["p95"],
        "overhead_p50_ms": find["overhead_p50_ms"],
        "rss_mb": probe["rss_mb"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, required=True, help="where the kept ledger and results live")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--distinct", type=int, default=2000, help="passages embedded for real")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--phrases", type=int, default=500)
    parser.add_argument("--remembers", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--model", default=None, help="GGUF path (default: the configured model)")
    parser.add_argument("--redo", action="append", default=[], choices=PHASES, help="measure this phase again")
    parser.add_argument("--only", action="append", default=[], choices=PHASES, help="measure only these phases")
    args = parser.parse_args(argv)
    args.model = args.model or load_settings().embedding_model_path
    if not args.model:
        raise SystemExit("no embedding model: pass --model or run ledger model install")
    args.workdir.mkdir(parents=True, exist_ok=True)
    json.dump(Bench(args).run(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
