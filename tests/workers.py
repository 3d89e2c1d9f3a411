"""Worker processes for the concurrency and crash tests (run as ``python tests/workers.py``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


PAUSE_S = 0.002  # between writes, outside the transaction: the others get a chance at the lock


def wait_for_start() -> None:
    """A start barrier across processes: say ready, then wait for the test's go on stdin."""
    print("ready", flush=True)
    sys.stdin.readline()


def append_batches(db: str, worker: int, batches: int) -> None:
    """Append ``batches`` batches of 3 events and print each batch's positions."""
    from fact_ledger.ledger.ids import uuid7
    from fact_ledger.ledger.log.chain import NewEvent
    from fact_ledger.ledger.log.events import MemoryRecorded
    from fact_ledger.ledger.log.store import EventStore

    store = EventStore(db)
    wait_for_start()
    for b in range(batches):
        time.sleep(PAUSE_S)
        batch = []
        for i in range(3):
            stream = uuid7()
            batch.append(
                NewEvent(
                    data=MemoryRecorded(memory=stream, content=f"w{worker} b{b} e{i}"),
                    stream_id=stream,
                    event_time="2026-07-01T00:00:00.000000Z",
                )
            )
        stored = store.append(batch)
        print(" ".join(str(e.position) for e in stored), flush=True)


def append_forever(url: str) -> None:
    """Append single events to the log at ``url`` (any backend) until killed, printing each
    acknowledged position and event id after the append returns."""
    from fact_ledger.ledger.ids import uuid7
    from fact_ledger.ledger.log.chain import NewEvent
    from fact_ledger.ledger.log.copy import open_log
    from fact_ledger.ledger.log.events import MemoryRecorded

    log = open_log(url, create=True)
    n = 0
    while True:
        stream = uuid7()
        [stored] = log.append(
            [
                NewEvent(
                    data=MemoryRecorded(memory=stream, content=f"kill test {n}"),  # type: ignore[attr-defined]
                    stream_id=stream,
                    event_time="2026-07-01T00:00:00.000000Z",
                )
            ]
        )
        print(stored.position, stored.event_id, flush=True)
        n += 1


def remember_forever(db: str) -> None:
    """Remember memories until killed, printing each acknowledged id after the call returns."""
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings

    app = LedgerApp(Settings(db=db, client="crash-test"))
    n = 0
    while True:
        result = app.remember(f"crash test memory number {n} about port {8000 + n}")
        print(result["memory_id"], flush=True)
        n += 1


def facade_remember(db: str, worker: int, count: int) -> None:
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings

    app = LedgerApp(Settings(db=db, client=f"worker{worker}"))
    wait_for_start()
    for i in range(count):
        time.sleep(PAUSE_S)
        print(app.remember(f"worker {worker} fact {i}")["memory_id"], flush=True)


if __name__ == "__main__":
    kind, db, *rest = sys.argv[1:]
    if kind == "append":
        append_batches(db, int(rest[0]), int(rest[1]))
    elif kind == "remember-forever":
        remember_forever(db)
    elif kind == "append-forever":
        append_forever(db)
    elif kind == "remember":
        facade_remember(db, int(rest[0]), int(rest[1]))
