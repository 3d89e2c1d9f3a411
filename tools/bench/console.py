"""Console page latency at corpus scale, printed as one JSON document of medians.

Builds the as-of benchmark's ledger (``tools.bench.asof.build``: the seeded corpus plus
updates, supersessions and retirements), adds colliding facts through the facade so there are
open conflicts, starts the real ``ledger console`` on it, and times each page over HTTP from
request to the last byte (server rendering + loopback transfer), round-robin so every page sees
the same machine load. Budget: p50 ≤ 100 ms per page at 100k memories.

    python -m tools.bench.console                                  # 100000 memories, 3 repetitions
    python -m tools.bench.console --memories 5000 --reps 1 --requests 10   # smoke
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tools.bench.asof import build
from tools.bench.corpus import Corpus
from tools.bench.run import latency_summary, median_of

BUDGET_P50_MS = 100.0
REPO = Path(__file__).resolve().parents[2]


def add_conflicts(db: Path, count: int) -> dict[str, Any]:
    """``count`` people who moved: each pair of facts opens one conflict through the facade."""
    app = LedgerApp(Settings(db=str(db), client="bench"))
    try:
        last = None
        for i in range(count):
            app.remember(f"Person{i} lives in Paris", subject=f"Person{i}", event_time="2023-01-01T00:00:00Z")
            last = app.remember(f"Person{i} lives in Berlin", subject=f"Person{i}", event_time="2024-01-01T00:00:00Z")
        assert last is not None and last["conflicts"], "the colliding facts opened a conflict"
        return {
            "conflict_id": last["conflicts"][0]["conflict_id"],
            "memory_id": last["memory_id"],
            "events": app.status()["events"],
            "subject": f"Person{count - 1}",
        }
    finally:
        app.close()


def start(db: Path) -> tuple[subprocess.Popen[str], str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fact_ledger.server", "console", "--no-open", "--port", "0", "--db", str(db)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    while "token=" not in (line := proc.stdout.readline()):
        if not line:
            raise RuntimeError("the console did not start")
    url = line.strip()
    base, token = url.split("/?token=")
    return proc, base, f"ledger_console_{base.rsplit(':', 1)[1]}={token}"


def fetch(base: str, cookie: str, path: str) -> float:
    request = urllib.request.Request(base + path, headers={"Cookie": cookie})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
        assert response.status == 200, (path, response.status)
    return (time.perf_counter() - started) * 1000


def pages(rng: random.Random, ids: list[int], words: list[str], seeded: dict[str, Any]) -> dict[str, Any]:
    """Each page kind with a sampler of its URL (random ids and words, so caches do not flatter)."""
    point = seeded["events"]
    return {
        "overview": lambda: "/",
        "memories": lambda: "/memories",
        "memories_search": lambda: f"/memories?q={rng.choice(words)}",
        "memories_page5": lambda: f"/memories?q={rng.choice(words)}&page=5",
        "memories_as_of": lambda: f"/memories?q={rng.choice(words)}&as_of={rng.randrange(point // 4, point)}",
        "memory": lambda: f"/memory/{rng.choice(ids)}",
        "memory_as_of": lambda: f"/memory/{rng.choice(ids)}?as_of={point}&at=2030-01-01",
        "conflicts": lambda: "/conflicts",
        "conflict": lambda: f"/conflict/{seeded['conflict_id']}",
        "timeline": lambda: f"/timeline?subject={seeded['subject']}",
        "timeline_memory": lambda: f"/timeline?subject={rng.choice(ids)}",
        "audit": lambda: "/audit",
        "audit_filtered": lambda: "/audit?type=Superseded",
        "audit_as_of": lambda: f"/audit?as_of={rng.randrange(2, point)}",
        "doctor": lambda: "/doctor",
        "settings": lambda: "/settings",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="console page latency (JSON on stdout)")
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--conflicts", type=int, default=200)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--requests", type=int, default=30, help="requests per page per repetition")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="where the database goes (default: a temp dir)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    corpus = Corpus(seed=args.seed)
    with tempfile.TemporaryDirectory(prefix="ledger-console-", dir=args.workdir) as tmp:
        db = Path(tmp) / "console.db"
        memories, build_info = build(db, corpus, args.memories, rng)
        seeded = add_conflicts(db, args.conflicts)
        words = [quote(corpus.query(memories[rng.randrange(len(memories))])[1].split()[0]) for _ in range(200)]
        proc, base, cookie = start(db)
        try:
            candidates = range(1, seeded["events"], max(1, seeded["events"] // 5000))
            ids = list(itertools.islice((i for i in candidates if _exists(base, cookie, i)), 500))
            kinds = pages(rng, ids, words, seeded)
            for make in kinds.values():  # warm: first-use costs (templates, page cache) are not a page's
                fetch(base, cookie, make())
            reps = []
            for _ in range(args.reps):
                samples: dict[str, list[float]] = {k: [] for k in kinds}
                for _ in range(args.requests):
                    for kind, make in kinds.items():
                        samples[kind].append(fetch(base, cookie, make()))
                reps.append({k: latency_summary(v) for k, v in samples.items()})
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
    medians = {kind: median_of([r[kind] for r in reps]) for kind in reps[0]}
    over = sorted(k for k, m in medians.items() if m["p50"] > BUDGET_P50_MS)
    print(
        json.dumps(
            {
                "benchmark": "console",
                "memories": args.memories,
                "reps": args.reps,
                "requests": args.requests,
                "machine": platform.machine(),
                "python": platform.python_version(),
                "build": build_info,
                "pages_ms": medians,
                "budget_p50_ms": BUDGET_P50_MS,
                "over_budget": over,
            },
            indent=1,
        )
    )
    return 0


def _exists(base: str, cookie: str, memory_id: int) -> bool:
    """Memory ids are log positions: skip the positions that hold other events."""
    try:
        fetch(base, cookie, f"/memory/{memory_id}")
    except urllib.error.HTTPError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
