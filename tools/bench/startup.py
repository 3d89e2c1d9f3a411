"""What the embedding model costs a command's start, as one JSON document (docs/performance.md).

On a ledger of ``--size`` memories with vectors of the model, each round runs, once with the
model configured and once with ``LEDGER_EMBEDDING_ENABLED=false`` (the order alternating round
by round, so a host that slows down weighs on both alike):

* ``status``: a fresh ``ledger status --json``, wall seconds;
* ``serve_initialize``: ``ledger serve`` spawned, seconds until it answers ``initialize``; with
  the model, also seconds until ``status`` says ``vector+fts`` (the model loaded in the
  background) and the server's RSS then;
* ``find_cold``: a fresh ``ledger find --json`` with no server running (with the model: the CLI
  loads it);
* ``find_with_serve`` (model only): the same while a ``ledger serve`` on the database lends its
  loaded model (:mod:`server.app.model_lender`).

Medians over the rounds, and every sample. The ledger's vectors come from ``--distinct`` texts
embedded for real and spread over the memories (:func:`tools.bench.semantic.seed_vectors`).

    python -m tools.bench.startup --model PATH [--size 10000] [--rounds 5] [--distinct 300]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tools.bench.corpus import Corpus
from tools.bench.run import build
from tools.bench.semantic import seed_vectors

LEDGER = [sys.executable, "-m", "fact_ledger.server"]
PROTOCOL = "2025-06-18"
READY_TIMEOUT_S = 120.0


def make_ledger(folder: Path, model: str, size: int, distinct: int) -> tuple[Path, list[str], dict[str, Any]]:
    db = folder / "ledger.db"
    app, memories, built = build(db, Corpus(), size)
    app.close()
    app = LedgerApp(Settings(db=str(db), client="bench", embedding=Embedding(model=model, threads=1)))
    try:
        seeded = seed_vectors(app, distinct)
    finally:
        app.close()
    queries = [" ".join(m.content.split()[:3]) for m in memories[7::997]]
    return db, queries, {**built, **seeded}


def timed_run(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[3:])} failed ({done.returncode}): {done.stderr[-500:]}")
    return seconds


class Serve:
    """``ledger serve`` over raw JSON-RPC lines on its stdio."""

    def __init__(self, db: Path, env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [*LEDGER, "serve", "--db", str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline() if self.proc.stdout else ""
            if not line:
                raise RuntimeError("ledger serve closed its output")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def initialize(self) -> float:
        self.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        )
        seconds = time.perf_counter() - self.started
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return seconds

    def status(self) -> dict[str, Any]:
        answer = self.request("tools/call", {"name": "memory", "arguments": {"action": "status", "data": {}}})
        return answer["result"]["structuredContent"]

    def wait_ready(self) -> float:
        deadline = time.perf_counter() + READY_TIMEOUT_S
        while time.perf_counter() < deadline:
            status = self.status()
            if status["search_mode"] == "vector+fts" and status["vectors"]["index_memories"]:
                return time.perf_counter() - self.started
            time.sleep(0.05)
        raise RuntimeError("the model did not load in time")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
        return 0.0

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def one_round(db: Path, query: str, env: dict[str, str], with_model: bool) -> dict[str, float]:
    sample: dict[str, float] = {}
    sample["status"] = timed_run([*LEDGER, "status", "--db", str(db), "--json"], env)
    serve = Serve(db, env)
    try:
        sample["serve_initialize"] = serve.initialize()
        if with_model:
            sample["serve_model_ready"] = serve.wait_ready()
            sample["serve_rss_mb"] = serve.rss_mb()
            sample["find_with_serve"] = timed_run([*LEDGER, "find", query, "--db", str(db), "--json"], env)
        else:
            serve.status()
            sample["serve_rss_mb"] = serve.rss_mb()
    finally:
        serve.close()
    sample["find_cold"] = timed_run([*LEDGER, "find", query, "--db", str(db), "--json"], env)
    return sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the GGUF model (e.g. the installed multilingual-e5-small)")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--distinct", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ledger-startup-") as folder:
        base = {**os.environ, "XDG_DATA_HOME": str(Path(folder) / "data"), "LEDGER_CLIENT": "bench"}
        base.pop("LEDGER_EMBEDDING_ENABLED", None)
        os.environ.update(base)
        db, queries, built = make_ledger(Path(folder), args.model, args.size, args.distinct)
        envs = {
            "model": {**base, "LEDGER_EMBEDDING_MODEL": args.model},
            "no_model": {**base, "LEDGER_EMBEDDING_ENABLED": "false"},
        }
        timed_run([*LEDGER, "status", "--db", str(db)], envs["model"])  # the model file's digest, once
        samples: dict[str, dict[str, list[float]]] = {"model": {}, "no_model": {}}
        for number in range(args.rounds):
            order = ("model", "no_model") if number % 2 == 0 else ("no_model", "model")
            for mode in order:
                result = one_round(db, queries[number % len(queries)], envs[mode], mode == "model")
                for name, value in result.items():
                    samples[mode].setdefault(name, []).append(round(value, 3))
    medians = {
        mode: {k: round(statistics.median(v), 3) for k, v in figures.items()} for mode, figures in samples.items()
    }
    model, bare = medians["model"], medians["no_model"]
    report = {
        "size": args.size,
        "rounds": args.rounds,
        "model": args.model,
        "ledger": built,
        "median": medians,
        "delta": {k: round(model[k] - bare[k], 3) for k in ("status", "serve_initialize", "find_cold")},
        "acceptance": {
            "status_within_0.2s": model["status"] - bare["status"] <= 0.2,
            "serve_initialize_within_0.5s": model["serve_initialize"] - bare["serve_initialize"] <= 0.5,
            "find_cold_at_most_2s": model["find_cold"] <= 2.0,
            "find_with_serve_at_most_2s": model["find_with_serve"] <= 2.0,
        },
        "samples": samples,
    }
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
