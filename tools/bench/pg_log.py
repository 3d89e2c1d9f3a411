"""The PostgreSQL log's append figures beside the SQLite log's, as one JSON document.

A throwaway PostgreSQL cluster with its default durability (fsync and synchronous commit on)
is started in a temp dir (tools/pg_cluster.py). Measured, per backend:

* ``append_1``: one writer appending single events, each its own acknowledged transaction:
  events/s and the latency p50/p99 of one append;
* ``append_4``: four writer processes doing the same at once: total events/s, and a check that
  the positions came out gapless and the chain verifies.

    python -m tools.bench.pg_log                 # 2,000 appends per writer
    python -m tools.bench.pg_log --appends 200   # a quick look
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ledger.events import MemoryRecorded
from ledger.ids import uuid7
from ledger.log_copy import Log, open_log
from ledger.store import NewEvent
from tools.bench.run import latency_summary
from tools.pg_cluster import running_cluster

WRITERS = 4


def _event(n: int, writer: str) -> NewEvent:
    stream = uuid7()
    return NewEvent(data=MemoryRecorded(memory=stream, content=f"{writer} fact {n}: the port is {n}"),
                    stream_id=stream, event_time="2026-07-01T00:00:00.000000Z", actor=writer)


def _append_many(url: str, writer: str, count: int) -> list[float]:
    log = open_log(url, create=False)
    samples = []
    for n in range(count):
        start = time.perf_counter()
        log.append([_event(n, writer)])  # type: ignore[attr-defined]
        samples.append((time.perf_counter() - start) * 1000)
    log.close()
    return samples


def _writer(args: tuple[str, str, int]) -> int:
    return len(_append_many(*args))


def measure(url: str, appends: int) -> dict[str, Any]:
    open_log(url, create=True).close()
    start = time.perf_counter()
    samples = _append_many(url, "w0", appends)
    single = {"events_per_s": round(appends / (time.perf_counter() - start)), **latency_summary(samples)}
    context = multiprocessing.get_context("spawn")
    with context.Pool(WRITERS) as pool:
        start = time.perf_counter()
        done = sum(pool.map(_writer, [(url, f"w{n + 1}", appends) for n in range(WRITERS)]))
        elapsed = time.perf_counter() - start
    log: Log = open_log(url, create=False)
    total = log.last_position()
    verified = log.verify_chain()
    log.close()
    return {"append_1": single,
            "append_4": {"events_per_s": round(done / elapsed), "writers": WRITERS,
                         "gapless_and_verified": total == verified == appends + done}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--appends", type=int, default=2000, help="appends per writer")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"appends_per_writer": args.appends}
    with tempfile.TemporaryDirectory() as tmp:
        result["sqlite"] = measure(f"sqlite:///{Path(tmp) / 'log.db'}", args.appends)
    with running_cluster(durable=True) as cluster:
        result["postgresql"] = measure(cluster.database(), args.appends)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
