"""A machine joining a team's log: how long a new read-model file takes to copy and fold it.

A throwaway PostgreSQL cluster with its default durability (tools/pg_cluster.py) gets a log of
``--events`` memories (one writer, batches of 1,000; a tenth of them state a claim, every
fiftieth contradicts an earlier one, so claim sets exist too). Then a ledger with an empty
read-model file opens on it, as ``ledger serve`` does on a new machine, with the progress
callback ``ledger serve`` prints on stderr; the figure is that open, from the constructor's call
until it returns, plus the progress lines it gave. The read models are then checked against a
fresh fold (``verify``).

    python -m tools.bench.join                    # 100,000 events
    python -m tools.bench.join --events 5000      # a quick look
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import ClaimSpec, MemoryRecorded
from fact_ledger.ledger.log.pg_store import PostgresEventStore
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tools.pg_cluster import running_cluster

T0 = "2026-07-01T00:00:00.000000Z"


def _memory(n: int) -> NewEvent:
    stream = uuid7()
    claims: tuple[ClaimSpec, ...] = ()
    if n % 10 == 0:  # every fiftieth repeats a subject with another value: a claim set
        subject = f"service {n // 50 if n % 50 == 0 else n}"
        claims = (ClaimSpec(subject=subject, attribute="port", value=str(1000 + n)),)
    data = MemoryRecorded(
        memory=stream, content=f"fact {n}: the queue depth of worker {n % 97} was {n * 7 % 1000}", claims=claims
    )
    return NewEvent(data=data, stream_id=stream, event_time=T0, actor="bench")


def fill(url: str, events: int, batch: int = 1000) -> float:
    log = PostgresEventStore(url)
    start = time.perf_counter()
    for first in range(0, events, batch):
        log.append([_memory(n) for n in range(first, min(events, first + batch))])
    log.close()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args(argv)
    with running_cluster(durable=True) as cluster:
        url = cluster.database()
        filled = fill(url, args.events)
        home = Path(tempfile.mkdtemp(prefix="ledger-join-"))
        (home / "views.db").touch()  # an empty read-model file, as a new machine has
        settings = Settings(
            store=url,
            views=str(home / "views.db"),
            backup=str(home / "backup.jsonl"),
            client="joining",
            embedding=Embedding(enabled=False),
        )
        lines: list[tuple[float, int, int]] = []
        start = time.perf_counter()

        def progress(done: int, total: int) -> None:
            lines.append((round(time.perf_counter() - start, 2), done, total))

        app = LedgerApp(settings, join_progress=progress)
        joined = time.perf_counter() - start
        status = app.status()
        verified = app.verify()
        app.close()
    out: dict[str, Any] = {
        "events": args.events,
        "fill_s": round(filled, 1),
        "join_s": round(joined, 1),
        "events_per_s": round(args.events / joined),
        "memories": status["memories"],
        "behind": status["log"]["behind"],
        "verified": verified["projections"],
        "progress_calls": len(lines),
        "progress_sample": lines[:: max(1, len(lines) // 8)] + lines[-1:],
    }
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
