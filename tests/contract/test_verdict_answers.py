"""Claim-set verdicts over stdio (docs/contract.md "A claim set's verdict"; issue 29 points 12, 13
and 15): every id an answer shows is one a tool accepts, a resolved set says who won and by what,
and an agent's change to a confirmed fact says that it was relabelled."""

from __future__ import annotations

import json
import re

import pytest

from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _port(srv: LedgerServer, port: int, day: int) -> dict[str, object]:
    return srv.memory(
        "remember",
        {"content": f"The billing API listens on port {port}", "event_time": f"2025-03-{day:02d}T00:00:00Z"},
    ).body


def test_a_resolved_set_answers_ids_a_tool_accepts_and_says_how_it_ended(srv: LedgerServer) -> None:
    older = _port(srv, 8001, 1)["memory_id"]
    newer = _port(srv, 8002, 2)
    cid = newer["conflicts"][0]["conflict_id"]  # type: ignore[index]
    resolved = srv.call(
        "memory_govern", "resolve_conflict", {"conflict_id": cid, "winner_id": older, "authorized": True}
    )
    listed = srv.call("memory_review", "conflicts", {"state": "resolved"})
    detail = srv.call("memory_review", "conflict_detail", {"conflict_id": cid})
    audit = srv.call("memory_review", "audit", {"type": "ClaimCollided", "limit": 5})
    for reply in (resolved, listed, detail):
        assert reply.ok and not UUID.search(json.dumps(reply.body)), reply.body
    for verdict in (resolved["conflict"]["verdict"], listed["conflicts"][0]["verdict"], detail["conflict"]["verdict"]):
        assert verdict["winner_id"] == older and verdict["decided_by"] == "resolve_conflict", verdict
        assert verdict["reasons"][0].startswith(f"resolve_conflict: #{older} was chosen")
        assert "#0" not in json.dumps(verdict) and "leader" not in {k for k in verdict if k != "leader_id"}
    assert listed["conflicts"][0]["verdict"]["rules_favour"] == newer["memory_id"]
    opening = next(e for e in audit["events"] if e["conflict_id"] == cid)["payload"]
    assert opening["verdict"]["leader_id"] == newer["memory_id"] and "leader" not in opening["verdict"]
    assert not UUID.search(json.dumps(opening)) and "#0" not in json.dumps(opening)


def test_an_agents_authorised_change_to_a_confirmed_fact_says_it_was_relabelled(srv: LedgerServer) -> None:
    fact = srv.confirmed("The billing cron runs at 02:00")  # the user's word, locked
    read = srv.memory("read", {"memory_id": fact})
    changed = srv.memory(
        "update",
        {
            "memory_id": fact,
            "expected_version": read["memory"]["version"],
            "content": "The billing cron runs at 03:00",
            "authorized": True,
        },
    )
    assert changed.ok, changed.body
    assert changed["relabelled"] == {
        "from": "user_confirmed",
        "source_type": "agent_generated",
        "protection": "protected",
    }
    assert any("was user_confirmed" in n for n in changed["notices"])
