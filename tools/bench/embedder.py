"""What the embedding model costs: query latency, passage throughput and RSS per context size.

Each ``--n-ctx`` value runs in a fresh subprocess (RSS is per process): load the model, embed
``--queries`` short questions one at a time (p50/p95 ms) and ``--passages`` chat turns one per
call (texts/s), then read the process's peak and current RSS. Texts are LoCoMo dev turns and
questions when the data is present, else the synthetic bench corpus. One JSON document.

    python -m tools.bench.embedder                          # the installed default model
    python -m tools.bench.embedder --model PATH.gguf --n-ctx 128,256,512
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tools.bench.run import latency_summary

REPO = Path(__file__).resolve().parents[2]
LOCOMO = REPO.parent / "shared" / "data" / "locomo-dev"


def _texts(limit: int) -> tuple[list[str], list[str]]:
    """(questions, turns) from LoCoMo dev, or synthetic sentences when it is absent."""
    questions: list[str] = []
    turns: list[str] = []
    for path in sorted(LOCOMO.glob("*.json")) if LOCOMO.is_dir() else []:
        data = json.loads(path.read_text(encoding="utf-8"))
        questions += [q["question"] for q in data.get("qa", []) if q.get("question")]
        turns += [
            t["text"]
            for key, session in data.items()
            if key.startswith("session_") and isinstance(session, list)
            for t in session
            if t.get("text")
        ]
    if not turns:
        from tools.bench.corpus import Corpus

        turns = [m.content for m in Corpus(seed=1).memories(limit)]
        questions = [" ".join(t.split()[:6]) for t in turns]
    return questions[:limit], turns[:limit]


def _rss_kib() -> tuple[int, int]:
    status = Path("/proc/self/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return int(fields["VmHWM"].split()[0]), int(fields["VmRSS"].split()[0])


def measure(model: str, n_ctx: int, queries: int, passages: int) -> dict[str, Any]:
    from fact_ledger.projections.runtime.embedding import load_embedder
    from fact_ledger.server.config import load_settings

    started = time.perf_counter()
    embedder = load_embedder(model, n_ctx=n_ctx, threads=load_settings().embedding.threads)
    load_s = time.perf_counter() - started
    questions, turns = _texts(max(queries, passages))
    for text in questions[:10]:
        embedder.embed_query(text)
    samples = []
    for text in questions[:queries]:
        t0 = time.perf_counter()
        embedder.embed_query(text)
        samples.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    for text in turns[:passages]:
        embedder.embed_passages([text])
    passage_s = time.perf_counter() - t0
    long_text = " ".join(turns[:60])
    t0 = time.perf_counter()
    embedder.embed_passages([long_text])
    long_ms = (time.perf_counter() - t0) * 1000
    peak, current = _rss_kib()
    return {
        "n_ctx": embedder.n_ctx,
        "model_id": embedder.model_id,
        "load_s": round(load_s, 2),
        "query_ms": latency_summary(samples),
        "passages_per_s": round(passages / passage_s, 1),
        "long_text": {"chars": len(long_text), "tokens": len(embedder.tokenize(long_text)), "ms": round(long_ms, 1)},
        "rss_peak_mb": round(peak / 1024, 1),
        "rss_mb": round(current / 1024, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="GGUF path (default: the configured or installed model)")
    parser.add_argument("--n-ctx", default="128,256,512", help="comma-separated context sizes")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--passages", type=int, default=200)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # child process mode
    args = parser.parse_args(argv)
    model = args.model
    if model is None:
        from fact_ledger.server.config import load_settings

        model = load_settings().embedding_model_path
        if model is None:
            sys.exit("no embedding model: run `ledger model install` or pass --model")
    if args.one is not None:
        print(json.dumps(measure(model, args.one, args.queries, args.passages)))
        return
    runs = []
    for n_ctx in (int(v) for v in args.n_ctx.split(",")):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tools.bench.embedder",
                "--model",
                model,
                "--one",
                str(n_ctx),
                "--queries",
                str(args.queries),
                "--passages",
                str(args.passages),
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
        runs.append(json.loads(done.stdout))
    print(
        json.dumps(
            {
                "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
                "model": model,
                "runs": runs,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
