"""The PostgreSQL log's append figures beside the SQLite log's, as one JSON document.

A throwaway PostgreSQL cluster with its default durability (fsync and synchronous commit on)
is started in a temp dir (tools/pg_cluster.py). Measured, per backend:

* ``append_1``: one writer appending single events, each its own acknowledged transaction:
  events/s and the latency p50/p99 of one append;
* ``append_4``: four writer processes doing the same at once: total events/s, and a check that
  the positions came out gapless and the chain verifies;
* ``visibility`` (PostgreSQL): a writer process appends one event every 20 ms; a reader in this
  process waits with a ``LogWatcher`` (LISTEN/NOTIFY, polling only as the fallback). The lag is
  the reader's wake-up time minus the writer's acknowledgement time (both CLOCK_MONOTONIC, which
  Linux shares between processes): p50/p99 in ms. Negative means the reader saw the event before
  the writer's call returned;
* ``remember``: ``remember`` through the facade on each backend (the read models in a local file
  beside the log, or on this machine for PostgreSQL), p50/p99 in ms;
* ``find_visibility`` (PostgreSQL): two ledgers on one log with read-model files of their own, as
  two machines; B follows the log (``ledger serve``'s follower). The lag from A's acknowledged
  ``remember`` until B's ``find`` returns it, p50/p99 in ms.

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

from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.copy import open_log
from fact_ledger.ledger.log.events import MemoryRecorded
from fact_ledger.ledger.log.protocol import EventLog
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tools.bench.corpus import Corpus
from tools.bench.run import latency_summary, remember
from tools.pg_cluster import running_cluster

WRITERS = 4


def _event(n: int, writer: str) -> NewEvent:
    stream = uuid7()
    return NewEvent(
        data=MemoryRecorded(memory=stream, content=f"{writer} fact {n}: the port is {n}"),
        stream_id=stream,
        event_time="2026-07-01T00:00:00.000000Z",
        actor=writer,
    )


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


def _paced_writer(url: str, count: int, acks: Any) -> None:
    log = open_log(url, create=False)
    for n in range(count):
        time.sleep(0.02)
        [stored] = log.append([_event(n, "paced")])  # type: ignore[attr-defined]
        acks.put((stored.position, time.monotonic()))
    log.close()


def visibility(url: str, count: int) -> dict[str, Any]:
    from fact_ledger.ledger.log.pg_store import LogWatcher

    watcher = LogWatcher(url, poll_s=1.0)
    seen_at: dict[int, float] = {}
    head = watcher.head() or 0
    start = head
    context = multiprocessing.get_context("spawn")
    acks = context.Queue()
    writer = context.Process(target=_paced_writer, args=(url, count, acks))
    writer.start()
    while head < start + count:
        now_head = watcher.wait_beyond(head, timeout_s=30)
        now = time.monotonic()
        if now_head is None or now_head <= head:
            break
        seen_at.update((p, now) for p in range(head + 1, now_head + 1))
        head = now_head
    writer.join(timeout=60)
    watcher.close()
    lags = [(seen_at[p] - t) * 1000 for p, t in (acks.get(timeout=10) for _ in range(count)) if p in seen_at]
    return {"events": count, "seen": len(lags), **latency_summary(lags)}


def _ledger(workdir: Path, name: str, url: str) -> LedgerApp:
    lexical = Embedding(enabled=False)
    if url.startswith("sqlite:///"):
        return LedgerApp(Settings(db=url.removeprefix("sqlite://"), client="bench", embedding=lexical))
    return LedgerApp(Settings(store=url, views=str(workdir / f"{name}.views.db"), client="bench", embedding=lexical))


def remember_latency(workdir: Path, url: str, count: int) -> dict[str, Any]:
    app = _ledger(workdir, "remember", url)
    try:
        samples = []
        for m in Corpus(seed=5).memories(count):
            start = time.perf_counter()
            remember(app, m)
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        app.close()
    return latency_summary(samples)


def find_visibility(workdir: Path, url: str, count: int) -> dict[str, Any]:
    """Machine A remembers; how long until machine B's ``find`` returns it."""
    a, b = _ledger(workdir, "a", url), _ledger(workdir, "b", url)
    b.start_log_follower()
    lags = []
    try:
        for n in range(count):
            token = f"visibility{n:05d}marker"
            a.remember(f"Deploy note {token}: the gateway moved")
            start = time.perf_counter()
            while not b.find(token)["results"]:
                if time.perf_counter() - start > 10:
                    break
                time.sleep(0.0005)
            lags.append((time.perf_counter() - start) * 1000)
    finally:
        a.close()
        b.close()
    return latency_summary(lags)


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
    log: EventLog = open_log(url, create=False)
    total = log.last_position()
    verified = log.verify_chain()
    log.close()
    return {
        "append_1": single,
        "append_4": {
            "events_per_s": round(done / elapsed),
            "writers": WRITERS,
            "gapless_and_verified": total == verified == appends + done,
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--appends", type=int, default=2000, help="appends per writer")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"appends_per_writer": args.appends}
    remembers = min(args.appends, 1000)
    with tempfile.TemporaryDirectory() as tmp:
        result["sqlite"] = measure(f"sqlite:///{Path(tmp) / 'log.db'}", args.appends)
        result["sqlite"]["remember"] = remember_latency(Path(tmp), f"sqlite:///{Path(tmp) / 'r.db'}", remembers)
    with running_cluster(durable=True) as cluster, tempfile.TemporaryDirectory() as tmp:
        url = cluster.database()
        result["postgresql"] = measure(url, args.appends)
        result["postgresql"]["visibility"] = visibility(url, min(args.appends, 500))
        result["postgresql"]["remember"] = remember_latency(Path(tmp), cluster.database(), remembers)
        result["postgresql"]["find_visibility"] = find_visibility(Path(tmp), cluster.database(), min(args.appends, 200))
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
