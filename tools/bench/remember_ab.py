"""``remember`` (or ``find``) p50 before and after a change, interleaved: two source trees, one
corpus, rounds that alternate between them so that the host's drift hits both alike.

Each tree runs in its own process (``fact_ledger`` is imported from that tree through a small
package of links in a temporary directory, ahead of the installed one); each builds its corpus
ledger once (``tools.bench`` corpus, same seed) and then answers rounds of ``remember`` calls,
or with ``--operation find`` rounds of lexical ``find`` calls (a query drawn from one corpus
memory each, as ``tools.bench.run`` draws them; nothing is written), or with ``--operation
settle`` the after-commit fold (full text, timeline) of each ``SETTLE_EVERY`` writes, timed
alone (``--calls`` writes per round), or with ``--operation rebuild`` whole rebuilds of the corpus
(``--calls`` per round; events/s is the corpus size over the time). The figure to quote is the
median of the per-round ratios (after / before), not one run.

    python -m tools.bench.remember_ab --before ../old-checkout [--after .] [--memories 100000]
        [--rounds 5] [--calls 400] [--operation remember|find|settle|rebuild] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("ledger", "projections", "server")

ROUND = """
import json, sys, time
from pathlib import Path
from tools.bench.corpus import Corpus
from tools.bench.run import build, latency_summary, remember
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

db, n, calls, seed, operation = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
corpus = Corpus(seed=7)
if not db.exists():
    app, _, _ = build(db, corpus, n)
    app.close()
app = LedgerApp(Settings(db=str(db), client="bench"))
samples = []
if operation == "find":
    stored = list(corpus.memories(n))
    queries = [corpus.query(stored[(seed * 7919 + i * 104729) % n])[1] for i in range(calls)]
    calls_of = [lambda q=q: app.find(q, limit=10) for q in queries]
elif operation == "settle":  # each sample: the after-commit fold of one batch of writes
    import fact_ledger.server.app.storage as storage
    batch, storage.SETTLE_EVERY = storage.SETTLE_EVERY, 10**9
    written = list(Corpus(seed=seed).memories(calls))

    def fold(part):
        for m in part:
            remember(app, m)
        started = time.perf_counter()
        app.storage.settle()
        return (time.perf_counter() - started) * 1000

    samples = [fold(written[i : i + batch]) for i in range(0, calls, batch)]
    calls_of = []  # timed above
elif operation == "rebuild":  # each sample: one whole rebuild (``--calls`` of them a round)
    calls_of = [app.rebuild] * calls
else:
    calls_of = [lambda m=m: remember(app, m) for m in Corpus(seed=seed).memories(calls)]
for call in calls_of:
    started = time.perf_counter()
    call()
    samples.append((time.perf_counter() - started) * 1000)
app.close()
summary = latency_summary(samples)
summary["max"] = round(max(samples), 4)  # rounded as p50 is: both are rounded again to 3 places
print(json.dumps(summary))
"""


def _links(tree: Path, where: Path) -> Path:
    """A ``fact_ledger`` package whose subpackages are ``tree``'s folders (what the install maps)."""
    package = where / "fact_ledger"
    if package.exists():  # a kept workdir run again: the links are made afresh (the ledgers stay)
        shutil.rmtree(package)
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    for name in PACKAGES:
        (package / name).symlink_to(tree / name, target_is_directory=True)
    return where


def one_round(
    tree: Path, links: Path, db: Path, memories: int, calls: int, seed: int, operation: str = "remember"
) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(links), str(tree), str(REPO)))}
    done = subprocess.run(
        [sys.executable, "-c", ROUND, str(db), str(memories), str(calls), str(seed), operation],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def run(
    before: Path, after: Path, memories: int, rounds: int, calls: int, workdir: Path, operation: str = "remember"
) -> dict[str, Any]:
    trees = {"before": before.resolve(), "after": after.resolve()}
    links = {name: _links(tree, workdir / f"links-{name}") for name, tree in trees.items()}
    reps: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for r in range(rounds):
        for name, tree in trees.items():
            db = workdir / f"{name}-{memories}.db"
            reps[name].append(one_round(tree, links[name], db, memories, calls, 100 + r, operation))
    ratios = [a["p50"] / b["p50"] for a, b in zip(reps["after"], reps["before"], strict=True)]
    return {
        "benchmark": "remember_ab",
        "operation": operation,
        "memories": memories,
        "calls": calls,
        "rounds": rounds,
        "p50_ms": {name: [round(x["p50"], 3) for x in xs] for name, xs in reps.items()},
        "p99_ms": {name: [round(x["p99"], 3) for x in xs] for name, xs in reps.items()},
        # The mean and the slowest call carry the after-commit folds (one per SETTLE_EVERY writes).
        "mean_ms": {name: [round(x["mean"], 3) for x in xs] for name, xs in reps.items()},
        "max_ms": {name: [round(x["max"], 3) for x in xs] for name, xs in reps.items()},
        "ratios": [round(x, 3) for x in ratios],
        "median_ratio": round(statistics.median(ratios), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the source tree before the change")
    parser.add_argument("--after", type=Path, default=REPO, help="the source tree after it (default: this one)")
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--operation", choices=("remember", "find", "settle", "rebuild"), default="remember")
    parser.add_argument("--workdir", type=Path, help="where the ledgers go (kept; default: a temp dir)")
    args = parser.parse_args(argv)
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        result = run(args.before, args.after, args.memories, args.rounds, args.calls, args.workdir, args.operation)
    else:
        with tempfile.TemporaryDirectory(prefix="remember-ab-") as tmp:
            result = run(args.before, args.after, args.memories, args.rounds, args.calls, Path(tmp), args.operation)
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
