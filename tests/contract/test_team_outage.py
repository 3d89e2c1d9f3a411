"""Issue 30's acceptance scenario: two real ``ledger serve`` machines on one PostgreSQL log, driven
through the MCP client, while the server is stopped for a while and started again.

During the outage the same fact is written on both machines, a contradicting fact joins a claim
set, a member of that set is retired, and machine A's ``ledger serve`` is itself restarted with a
pending backup. Once the server is back, nobody calls ``replay_backup``: each machine replays
its own backup by itself. At every point ``status`` and doctor say the same about what is pending
and whether the log is reachable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.contract.conftest import LedgerServer
from tests.contract.test_team_log import LAG_BOUND_S, machines, wait_until  # noqa: F401 (fixture)
from tools.pg_cluster import Cluster

REPLAY_BOUND_S = 10.0  # the serve looks once a second; a reconnect after a restart can take a few


def agree(server: LedgerServer) -> dict[str, Any]:
    """status and doctor from one state: the same pending count, reachable xor log_unreachable.

    A replay may land between two calls (the serve replays by itself): then both are asked again.
    """
    for _ in range(5):
        status = server.memory("status").body
        doctor = {c["name"]: c for c in server.call("memory_review", "doctor")["checks"]}
        after = server.memory("status").body
        unreachable = (status["degraded"] or {}).get("reason") == "log_unreachable"
        assert status["log"]["reachable"] is not unreachable, status
        if status["pending_backup"] == after["pending_backup"]:
            pending = status["pending_backup"]
            assert doctor["pending_backup"].get("count", 0) == (pending["writes"] if pending else 0), (status, doctor)
            return after
    raise AssertionError("the pending backup kept changing between calls")


def finds(server: LedgerServer, query: str) -> list[tuple[Any, Any]]:
    reply = server.memory("find", {"query": query, "limit": 20})
    assert reply.ok, reply.body
    return [(r["memory_id"], r.get("pending")) for r in reply["results"]]


def test_an_outage_on_two_serving_machines_heals_by_itself(
    machines: Callable[..., LedgerServer],  # noqa: F811
    pg_cluster: Cluster,
) -> None:
    a, b = machines("laptop-a"), machines("laptop-b")
    restarted: list[LedgerServer] = []
    try:
        heal(a, b, pg_cluster, restarted)
    finally:
        for server in restarted:
            server.close()


def heal(a: LedgerServer, b: LedgerServer, pg_cluster: Cluster, restarted: list[LedgerServer]) -> None:
    assert (
        a.memory("remember", {"content": "The staging API listens on port 7070", "subject": "staging api"})["memory_id"]
        == 1
    )
    contradicting = b.memory("remember", {"content": "The staging API listens on port 9090", "subject": "staging api"})
    assert len(contradicting["conflicts"]) == 1  # the two machines meet in one set before the outage
    wait_until(lambda: a.memory("status")["memories"] == 2, LAG_BOUND_S)
    agree(a)
    pg_cluster.stop("fast")
    try:
        dup_a = a.memory("remember", {"content": "The VPN gateway is vpn-3", "subject": "vpn"})
        dup_b = b.memory("remember", {"content": "The VPN gateway is vpn-3", "subject": "vpn"})
        joins = a.memory("remember", {"content": "The staging API listens on port 8080", "subject": "staging api"})
        retired = b.call("memory_govern", "retire", {"memory_id": 1, "reason": "moved", "authorized": True})
        assert all(r["backup_only"] is True for r in (dup_a, dup_b, joins, retired)), retired.body
        assert finds(a, "VPN gateway") == [(None, True)]  # A finds its own outage write, pending
        assert agree(a)["pending_backup"]["writes"] == 2 and agree(b)["pending_backup"]["writes"] == 2
        # A's ledger serve itself restarts while the server is still down, its backup pending.
        first = a
        first.close()
        a = LedgerServer(first.db, env=dict(first.params.env or {})).start()
        restarted.append(a)
        assert finds(a, "VPN gateway") == [(None, True)]
        status = agree(a)
        assert status["log"]["reachable"] is False and status["pending_backup"]["writes"] == 2
    finally:
        pg_cluster.resume()
    # Nobody calls replay_backup: both machines replay their own backups by themselves.
    for server in (a, b):
        wait_until(lambda server=server: agree(server)["pending_backup"] is None, REPLAY_BOUND_S)
    for server in (a, b):
        wait_until(lambda server=server: server.memory("status")["log"]["behind"] == 0, LAG_BOUND_S)
        status = agree(server)
        assert status["degraded"] is None and status["log"]["reachable"] is True
        vpn = finds(server, "VPN gateway")
        assert len(vpn) == 1 and vpn[0][0] is not None and vpn[0][1] is None  # one memory, not pending
        for open_set in server.call("memory_review", "conflicts", {"state": "open"})["conflicts"]:
            for member in open_set["members"]:
                assert server.memory("read", {"memory_id": member})["memory"]["status"] == "active", open_set
        doctor = {c["name"]: c for c in server.call("memory_review", "doctor")["checks"]}
        assert doctor["conflicts_with_inactive_members"]["severity"] == "ok", doctor
        verified = server.call("memory_repair", "verify")
        assert verified["chain"] == "intact" and verified["projections"] == "consistent"
    # Whichever machine replayed first, 9090 and the outage's 8080 meet in one open set and the
    # retired 7070 is in none: the set it shared (if B's retire landed first, it ended with the
    # retirement and the contradiction opened a new one; else 7070 left the set it joined).
    open_sets = a.call("memory_review", "conflicts", {"state": "open"})["conflicts"]
    staging_sets = [c for c in open_sets if c["claim"]["subject"] == "staging api"]
    assert len(staging_sets) == 1 and len(staging_sets[0]["members"]) == 2 and 1 not in staging_sets[0]["members"]
    audit = a.call("memory_review", "audit", {"type": "WriteReplayed", "limit": 20})["events"]
    assert len(audit) == 4
