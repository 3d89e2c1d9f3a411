"""What the PostgreSQL log adds to the shared contract (tests/test_store_contract.py runs that on
both backends): concurrent writer processes, order of visibility, privileges, the same bytes as
the SQLite log, notifications and a server that goes away and comes back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgspec
import psycopg
import pytest

from fact_ledger.ledger.errors import Unavailable
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.copy import open_log
from fact_ledger.ledger.log.events import MemoryRecorded, MemoryRetired
from fact_ledger.ledger.log.pg_store import NOTIFY_CHANNEL, LogWatcher, PostgresEventStore, grant_appender
from fact_ledger.ledger.log.store import EventStore
from tools.pg_cluster import Cluster, running_cluster

T0 = "2026-07-01T00:00:00.000000Z"
REPO = Path(__file__).resolve().parent.parent


def remembered(content: str = "x") -> NewEvent:
    stream = uuid7()
    return NewEvent(data=MemoryRecorded(memory=stream, content=content), stream_id=stream, event_time=T0)


def append_when_back(store: PostgresEventStore, within_s: float = 10.0) -> None:
    """Append one event once the server is back. The first call after a restart may still meet a
    connection the server dropped: the store answers unavailable and reconnects on the next call,
    so a caller retries the same batch (its event id makes a retry after an unseen commit a no-op).
    """
    batch = [remembered()]
    deadline = time.monotonic() + within_s
    while True:
        try:
            store.append(batch)
            return
        except Unavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture
def url(pg_cluster: Cluster) -> str:
    return pg_cluster.database()


def test_truncate_is_refused(url: str) -> None:
    store = PostgresEventStore(url)
    store.append([remembered()])
    with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
        store.conn.execute("TRUNCATE events")
    assert store.last_position() == 1
    store.close()


def test_an_appender_role_cannot_edit_even_without_the_triggers(url: str) -> None:
    owner = PostgresEventStore(url)
    owner.conn.execute("CREATE ROLE agent_host NOLOGIN")
    grant_appender(owner.conn, "agent_host")
    owner.conn.execute("SET ROLE agent_host")
    [stored] = owner.append([remembered()])
    assert stored.position == 1
    owner.conn.execute("RESET ROLE")
    owner.conn.execute("DROP TRIGGER events_no_update ON events")
    owner.conn.execute("DROP TRIGGER events_no_delete ON events")
    owner.conn.execute("SET ROLE agent_host")
    for statement in ("UPDATE events SET payload='{}'", "DELETE FROM events", "TRUNCATE events"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            owner.conn.execute(statement)
    owner.conn.execute("RESET ROLE")
    assert owner.verify_chain() == 1
    owner.close()


def test_the_same_events_give_the_same_rows_and_hashes_on_both_backends(url: str, tmp_path: Path) -> None:
    def batch() -> list[NewEvent]:
        return [
            NewEvent(
                data=MemoryRecorded(memory=f"m-{n}", content=f"接口 {n} 🙂 \u2028 \x00 end"),
                stream_id=f"m-{n}",
                event_time=T0,
                event_id=f"00000000-0000-7000-8000-0000000000{n:02d}",
                recorded_at="2026-07-01T00:00:01.000000Z",
                actor="agent:a",
                workspace="w",
                idempotency_key=f"k-{n}" if n % 2 else None,
            )
            for n in range(12)
        ] + [
            NewEvent(
                data=MemoryRetired(memory="m-3", reason="gone"),
                stream_id="m-3",
                event_time=T0,
                event_id="00000000-0000-7000-8000-000000000099",
                recorded_at="2026-07-01T00:00:02.000000Z",
            )
        ]

    sqlite = EventStore(tmp_path / "events.db")
    pg = PostgresEventStore(url)
    # A sealed row's salt is random (docs/design.md), so the hashes of two appends differ; the
    # rows agree on everything else, and rows copied across verify to the same head.
    unsalted = ("salt", "seal", "hash", "prev_hash")
    mine, theirs = sqlite.append(batch()), pg.append(batch())
    assert [msgspec.structs.replace(r, **dict.fromkeys(unsalted, "")) for r in mine] == [
        msgspec.structs.replace(r, **dict.fromkeys(unsalted, "")) for r in theirs
    ]
    assert all(r.seal for r in mine[:12]) and not mine[12].seal
    sqlite2 = EventStore(tmp_path / "copy.db")
    sqlite2.append_stored(list(pg.read()))
    assert list(sqlite2.read()) == list(pg.read())
    sqlite2.close()
    assert sqlite.verify_chain() == pg.verify_chain() == 13
    sqlite.close()
    pg.close()


_WRITER = """
import sys
from ledger.log.events import MemoryRecorded
from ledger.ids import uuid7
from ledger.log.copy import open_log
from ledger.log.pg_store import PostgresEventStore
from ledger.log.store import NewEvent
url, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = PostgresEventStore(url)
for n in range(count):
    stream = uuid7()
    batch = [NewEvent(data=MemoryRecorded(memory=stream, content=f"{name} {n}"), stream_id=stream,
                      event_time="2026-07-01T00:00:00.000000Z", actor=name)]
    store.append(batch * (1 + n % 3))  # the same event twice or thrice: stored once
store.close()
"""


@pytest.mark.slow
def test_four_writer_processes_leave_gapless_positions_seen_in_order(url: str) -> None:
    PostgresEventStore(url).close()  # the schema, once
    per_writer = 150
    seen_gap: list[tuple[int, int]] = []
    stop = threading.Event()

    def reader() -> None:
        """Reads the tail while writers commit: a later position must never show before an earlier one."""
        store = PostgresEventStore(url)
        while not stop.is_set():
            positions = [row[0] for row in store.conn.execute("SELECT position FROM events ORDER BY position")]
            if positions != list(range(1, len(positions) + 1)):
                seen_gap.append((len(positions), positions[-1]))
        store.close()

    watcher = threading.Thread(target=reader)
    watcher.start()
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, url, f"w{n}", str(per_writer)], cwd=REPO) for n in range(4)
    ]
    try:
        assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    finally:
        stop.set()
        watcher.join()
    store = PostgresEventStore(url)
    assert store.last_position() == 4 * per_writer
    assert store.verify_chain() == 4 * per_writer
    by_actor = {}
    for ev in store.read():
        by_actor.setdefault(ev.actor, []).append(ev.data.content)
    assert {actor: len(contents) for actor, contents in by_actor.items()} == {f"w{n}": per_writer for n in range(4)}
    assert by_actor["w2"] == [f"w2 {n}" for n in range(per_writer)]  # each writer's order kept
    assert seen_gap == []
    store.close()


def test_an_append_notifies_listeners_at_commit(url: str) -> None:
    store = PostgresEventStore(url)
    listener = psycopg.connect(url, autocommit=True)
    listener.execute(f"LISTEN {NOTIFY_CHANNEL}")
    store.append([remembered(), remembered()])
    notes = list(listener.notifies(timeout=5, stop_after=1))
    assert [(n.channel, n.payload) for n in notes] == [(NOTIFY_CHANNEL, "2")]
    listener.close()
    store.close()


def test_the_log_keeps_its_identity_and_refuses_a_database_without_one(pg_cluster: Cluster, url: str) -> None:
    first = PostgresEventStore(url)
    again = PostgresEventStore(url)
    assert first.log_id == again.log_id and len(first.log_id) == 36
    other = PostgresEventStore(pg_cluster.database())
    assert other.log_id != first.log_id
    other.close()
    with pytest.raises(Unavailable, match="holds no ledger log"):
        PostgresEventStore(pg_cluster.database(), create=False)
    first.close()
    again.close()


@pytest.mark.slow
def test_a_server_that_goes_away_is_unavailable_and_the_store_reconnects_when_it_is_back() -> None:
    with running_cluster() as cluster:
        store = PostgresEventStore(cluster.database())
        store.append([remembered()])
        cluster.stop("immediate")
        with pytest.raises(Unavailable, match="unreachable"):
            store.append([remembered()])
        with pytest.raises(Unavailable, match="unreachable"):
            store.last_position()
        cluster.resume()
        append_when_back(store)
        assert store.last_position() == 2 and store.verify_chain() == 2
        store.close()


@pytest.mark.slow
def test_the_append_benchmark_runs_on_both_backends(capsys: pytest.CaptureFixture[str]) -> None:
    from tools.bench import pg_log

    assert pg_log.main(["--appends", "5"]) == 0
    figures = json.loads(capsys.readouterr().out)
    for backend in ("sqlite", "postgresql"):
        assert figures[backend]["append_1"]["n"] == 5 and figures[backend]["append_1"]["events_per_s"] > 0
        assert figures[backend]["append_4"]["gapless_and_verified"] is True
    assert figures["postgresql"]["visibility"]["seen"] == 5


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_sigkilled_writer_loses_no_acknowledged_append(backend: str, pg_cluster: Cluster, tmp_path: Path) -> None:
    from tests.test_processes import spawn

    url = pg_cluster.database() if backend == "postgresql" else f"sqlite:///{tmp_path / 'log.db'}"
    proc = spawn("append-forever", url)
    acked: dict[int, str] = {}
    assert proc.stdout is not None
    while len(acked) < 200:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "worker died"
        position, event_id = line.split()
        acked[int(position)] = event_id
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()
    if proc.stderr:
        proc.stderr.close()
    log = open_log(url, create=False)
    stored = {ev.position: ev.event_id for ev in log.read()}
    assert {p: stored.get(p) for p in acked} == acked
    assert log.verify_chain() == len(stored) >= len(acked)
    log.close()


def test_a_watcher_wakes_on_the_notification_not_the_poll(url: str) -> None:
    store = PostgresEventStore(url)
    store.append([remembered()])
    watcher = LogWatcher(url, poll_s=30)  # a poll would come far too late: only NOTIFY can wake it
    assert watcher.wait_beyond(0, timeout_s=5) == 1  # already past: no wait
    timer = threading.Timer(0.3, lambda: store.append([remembered(), remembered()]))
    start = time.monotonic()
    timer.start()
    assert watcher.wait_beyond(1, timeout_s=20) == 3
    assert time.monotonic() - start < 5
    timer.join()
    start = time.monotonic()
    assert watcher.wait_beyond(3, timeout_s=0.3) == 3  # nothing new: the head at the deadline
    assert 0.25 < time.monotonic() - start < 5
    watcher.close()
    store.close()


@pytest.mark.slow
def test_a_watcher_outlives_a_server_restart() -> None:
    with running_cluster() as cluster:
        url = cluster.database()
        store = PostgresEventStore(url)
        watcher = LogWatcher(url, poll_s=0.2)
        assert watcher.wait_beyond(0, timeout_s=0.1) == 0
        cluster.stop("immediate")
        assert watcher.wait_beyond(0, timeout_s=0.5) is None  # unreachable: no exception, no head
        cluster.resume()
        store.close()
        store = PostgresEventStore(url)
        appender = threading.Timer(0.3, append_when_back, args=(store,))
        appender.start()
        assert watcher.wait_beyond(0, timeout_s=20) == 1
        appender.join()  # done before the cluster goes: a retry never outlives the test
        assert store.last_position() == 1
        watcher.close()
        store.close()
