"""Several machines on one PostgreSQL log, each with its own read models, driven over MCP.

Each "machine" is a ``ledger serve`` process with ``LEDGER_STORE`` pointing at one real
PostgreSQL database and a ``LEDGER_VIEWS`` file of its own, as two laptops of a team would run.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.conftest import ledger_cli
from tests.contract.conftest import LedgerServer
from tools.pg_cluster import Cluster

LAG_BOUND_S = 3.0  # a NOTIFY normally lands in milliseconds; polling catches a lost one within 1 s


@pytest.fixture
def machines(pg_cluster: Cluster, tmp_path: Path) -> Iterator[Callable[..., LedgerServer]]:
    url = pg_cluster.database()
    started: list[LedgerServer] = []

    def start(name: str) -> LedgerServer:
        home = tmp_path / name
        home.mkdir()
        env = {
            "LEDGER_STORE": url,
            "LEDGER_VIEWS": str(home / "views.db"),
            "LEDGER_BACKUP": str(home / "backup.jsonl"),
            "LEDGER_EMBEDDING_ENABLED": "false",
            "LEDGER_CLIENT": name,
        }
        server = LedgerServer(home / "unused.db", env=env).start()
        started.append(server)
        return server

    start.url = url  # type: ignore[attr-defined]
    yield start
    for server in reversed(started):
        server.close()
        assert "Traceback" not in server.stderr, server.stderr


def found(server: LedgerServer, query: str) -> list[int]:
    reply = server.memory("find", {"query": query, "limit": 20})
    assert reply.ok, reply.body
    return [r["memory_id"] for r in reply["results"]]


def wait_until(check: Callable[[], bool], timeout_s: float, what: Callable[[], Any] = lambda: None) -> float:
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout_s:
            raise AssertionError(f"not within {timeout_s} s: {what()}")
        time.sleep(0.01)
    return time.monotonic() - start


def positions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT position FROM events ORDER BY position")]


def test_a_write_on_one_machine_is_found_on_the_other_within_a_bounded_lag(
    machines: Callable[..., LedgerServer],
) -> None:
    a, b = machines("laptop-a"), machines("laptop-b")
    lags = []
    for i in range(12):
        writer, reader = (a, b) if i % 2 == 0 else (b, a)
        text = f"Shared fact number {i}: the deploy window of service {i} opens at {10 + i}:00"
        assert writer.memory("remember", {"content": text})["memory_id"] == i + 1
        query = f"fact number {i}"
        lags.append(
            wait_until(
                lambda i=i, reader=reader, query=query: i + 1 in found(reader, query),
                LAG_BOUND_S,
                lambda reader=reader, query=query: (query, found(reader, query), reader.memory("status").body),
            )
        )
    assert statistics.median(lags) < 1.0, lags
    status = a.memory("status").body
    assert status["log"]["store"] == "postgresql" and status["log"]["behind"] == 0
    assert status["memories"] == b.memory("status")["memories"] == 12


def test_contradicting_writes_on_two_machines_meet_in_one_claim_set(machines: Callable[..., LedgerServer]) -> None:
    a, b = machines("laptop-a"), machines("laptop-b")
    replies: dict[str, Any] = {}

    def say(server: LedgerServer, port: int, name: str) -> None:
        data = {"content": f"The staging API listens on port {port}", "subject": "staging api"}
        replies[name] = server.memory("remember", data)

    threads = [threading.Thread(target=say, args=(a, 7070, "a")), threading.Thread(target=say, args=(b, 8080, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = {replies["a"]["memory_id"], replies["b"]["memory_id"]}
    assert ids == {1, 2}
    # Whichever wrote second saw the first (it pulled before deciding) and joined its set.
    second = max(replies.values(), key=lambda r: r["memory_id"])
    assert [c["other_id"] for c in second["conflicts"]] == [1]
    for server in (a, b):
        wait_until(lambda server=server: server.memory("status")["memories"] == 2, LAG_BOUND_S)
        sets = server.call("memory_review", "conflicts", {"state": "open"})["conflicts"]
        assert len(sets) == 1 and sets[0]["member_count"] == 2, sets


def test_four_machines_writing_at_once_lose_nothing(machines: Callable[..., LedgerServer]) -> None:
    servers = [machines(f"host-{n}") for n in range(4)]
    acked: dict[int, list[int]] = {n: [] for n in range(4)}

    def write(n: int) -> None:
        for i in range(15):
            reply = servers[n].memory("remember", {"content": f"host {n} observation {i}: queue depth {n * 100 + i}"})
            assert reply.ok, reply.body
            acked[n].append(reply["memory_id"])

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for ids in acked.values() for i in ids]
    assert len(set(every)) == 60  # no id given twice
    url = machines.url  # type: ignore[attr-defined]
    assert positions(url) == list(range(1, len(positions(url)) + 1))  # gapless
    for server in servers:  # none lost: every acknowledged memory is on every machine
        wait_until(lambda server=server: server.memory("status")["memories"] == 60, LAG_BOUND_S)
        for n, ids in acked.items():
            for i, memory_id in enumerate(ids):
                content = server.memory("read", {"memory_id": memory_id})["memory"]["content"]
                assert content == f"host {n} observation {i}: queue depth {n * 100 + i}"
    verified = servers[0].call("memory_repair", "verify")
    assert verified["chain"] == "intact" and verified["projections"] == "consistent"


def test_a_server_restart_mid_stream_backs_up_then_replays_once(
    machines: Callable[..., LedgerServer], pg_cluster: Cluster
) -> None:
    a, b = machines("laptop-a"), machines("laptop-b")
    a.memory("remember", {"content": "Written before the outage: the VPN gateway is vpn-2"})
    pg_cluster.stop()
    try:
        down = a.memory("remember", {"content": "Written during the outage: the VPN gateway is vpn-3"})
        assert down["backup_only"] is True and "memory_id" not in down.body
        event_ids = down["backup"]["event_ids"]
        # Reads go on from this machine's read models, with a notice that writes are backed up;
        # this machine's own backed-up write comes first, marked pending (no id yet).
        reply = a.memory("find", {"query": "VPN gateway"})
        assert [(r["memory_id"], r.get("pending")) for r in reply["results"]] == [(None, True), (1, None)]
        assert any("backup" in n or "unavailable" in n for n in reply.body.get("notices", [])), reply.body
        assert a.memory("status")["degraded"]["reason"] == "log_unreachable"
    finally:
        pg_cluster.resume()
    # ledger serve replays its own backup by itself once the log is back; a manual replay then
    # finds it already there: nothing twice.
    wait_until(lambda: a.memory("status")["pending_backup"] is None, LAG_BOUND_S)
    again = a.call("memory_repair", "replay_backup", {"dry_run": False, "authorized": True})
    assert again["appended"] == 0 and again["writes_present"] == 1, again.body
    wait_until(lambda: 2 in found(b, "VPN gateway"), LAG_BOUND_S)
    url = machines.url  # type: ignore[attr-defined]
    with psycopg.connect(url) as conn:
        counts = [conn.execute("SELECT count(*) FROM events WHERE event_id=%s", (e,)).fetchone()[0] for e in event_ids]
    assert counts == [1] * len(event_ids)
    assert a.memory("status")["degraded"] is None


def test_a_machine_started_while_the_server_is_down_answers_from_its_read_models(
    pg_cluster: Cluster, tmp_path: Path
) -> None:
    """No LEDGER_VIEWS: the read models sit in the user data dir under the log's id, which the
    machine remembers per URL, so a start with the server down still finds them."""
    url = pg_cluster.database()
    env = {
        "LEDGER_STORE": url,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "LEDGER_EMBEDDING_ENABLED": "false",
        "LEDGER_CLIENT": "laptop",
    }
    first = LedgerServer(tmp_path / "unused.db", env=env).start()
    try:
        assert first.memory("remember", {"content": "The VPN gateway is vpn-2"})["memory_id"] == 1
        views = Path(first.memory("status")["log"]["views"])
    finally:
        first.close()
    assert views.parent == tmp_path / "data" / "fact-ledger" / "views" and views.is_file()
    pg_cluster.stop()
    try:
        offline = LedgerServer(tmp_path / "unused.db", env=env).start()
        try:
            assert found(offline, "VPN gateway") == [1]
            status = offline.memory("status").body
            assert status["degraded"]["reason"] == "log_unreachable" and status["log"]["reachable"] is False
            assert offline.memory("remember", {"content": "The VPN gateway is vpn-3"})["backup_only"] is True
        finally:
            offline.close()
    finally:
        pg_cluster.resume()


def test_a_following_serve_drops_an_erased_memorys_words_from_its_files(
    machines: Callable[..., LedgerServer], tmp_path: Path
) -> None:
    """Machine A erases; machine B's ``ledger serve`` answered "erased" at once but kept the
    words in its read models' WAL until it exited (docs/governance.md: both files rewritten)."""
    a, b = machines("laptop-a"), machines("laptop-b")
    words = b"X7654321"
    written = a.memory("remember", {"content": "Carla's passport number is X7654321", "subject": "carla"})
    memory_id = written["memory_id"]
    wait_until(lambda: memory_id in found(b, "Carla passport"), LAG_BOUND_S)
    files = [p for p in (tmp_path / "laptop-b").iterdir() if p.is_file()]
    assert any(words in p.read_bytes() for p in files)  # B holds them before the erasure
    env = dict(a.params.env or {})
    done = ledger_cli("erase", str(memory_id), "--reason", "Carla asked", "--json", env=env)
    assert done.returncode == 0, done.stderr

    def b_holds_none() -> bool:
        return not any(words in p.read_bytes() for p in (tmp_path / "laptop-b").iterdir() if p.is_file())

    wait_until(b_holds_none, 15.0, lambda: [p.name for p in (tmp_path / "laptop-b").iterdir()])
    assert b.memory("read", {"memory_id": memory_id})["memory"]["status"] == "erased"
