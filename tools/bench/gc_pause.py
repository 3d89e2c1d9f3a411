"""What one full garbage collection costs a server process, with and without start-up frozen.

Each mode runs in a fresh process that builds what ``ledger serve`` holds: the facade on a
ledger of ``--memories`` memories (the synthetic corpus, bulk-loaded), the MCP server and its
dispatcher; then ``frozen`` calls :func:`server.process.freeze_start_up`, as ``ledger serve`` and
``ledger console`` do. Both then answer ``--calls`` ``remember`` calls (what a session adds)
and time ``--reps`` full collections (``gc.collect(2)``): the pause a tool call pays when the
collector decides on a full pass.

    python -m tools.bench.gc_pause [--memories 10000] [--calls 200] [--reps 7]

Prints one JSON object: per mode the median and each pause in ms and the objects the collector
tracks; ``ratio``: frozen over plain medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
MODES = ("plain", "frozen")

ONE_MODE = """
import gc, json, sys, time
from pathlib import Path
from tools.bench.corpus import Corpus
from tools.bench.run import build, remember
from fact_ledger.server.mcp.dispatch import LedgerTools
from fact_ledger.server.mcp.server import build_server
from fact_ledger.server.process import freeze_start_up

db, mode, memories, calls, reps = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
app, _, _ = build(db, Corpus(seed=7), memories)
server = build_server(app, LedgerTools(app))
if mode == "frozen":
    freeze_start_up()
for m in Corpus(seed=8).memories(calls):
    remember(app, m)
pauses = []
for _ in range(reps):
    started = time.perf_counter()
    gc.collect(2)
    pauses.append(round((time.perf_counter() - started) * 1000, 3))
print(json.dumps({"pauses_ms": pauses, "tracked": len(gc.get_objects()), "frozen": gc.get_freeze_count()}))
app.close()
"""


def one_mode(workdir: Path, mode: str, memories: int, calls: int, reps: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", ONE_MODE, str(workdir / f"{mode}.db"), mode, str(memories), str(calls), str(reps)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["median_ms"] = round(statistics.median(result["pauses_ms"]), 3)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--calls", type=int, default=200, help="remember calls after start-up")
    parser.add_argument("--reps", type=int, default=7, help="full collections timed per mode")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gc-pause-"))
    workdir.mkdir(parents=True, exist_ok=True)
    modes = {mode: one_mode(workdir, mode, args.memories, args.calls, args.reps) for mode in MODES}
    plain, frozen = modes["plain"]["median_ms"], modes["frozen"]["median_ms"]
    report = {
        "benchmark": "gc_pause",
        "memories": args.memories,
        "calls": args.calls,
        "reps": args.reps,
        "modes": modes,
        "ratio": round(frozen / plain, 4) if plain else None,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
