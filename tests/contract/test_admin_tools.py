"""docs/contract.md tools ``memory_review``, ``memory_govern`` and ``memory_repair`` over stdio.

Every view, action and task is reached, and each must succeed with the contract's keys (every
capability named here is shipped: none may answer ``unavailable``).
"""

from __future__ import annotations

import json

import pytest

from tests.contract.conftest import LedgerServer, Reply

pytestmark = pytest.mark.slow


def succeeded(r: Reply) -> None:
    assert r.ok, r.body


def remember(srv: LedgerServer, content: str, **extra: object) -> int:
    return int(srv.memory("remember", {"content": content, **extra})["memory_id"])


def test_overview_and_doctor(srv: LedgerServer) -> None:
    remember(srv, "Overview fact one")
    succeeded(srv.call("memory_review", "overview"))
    doctor = srv.call("memory_review", "doctor")
    succeeded(doctor)
    assert isinstance(doctor["checks"], list) and "severity" in doctor.body


def test_history_carries_versions_and_the_actor(srv: LedgerServer) -> None:
    memory_id = remember(srv, "History fact v1")
    srv.memory("update", {"memory_id": memory_id, "content": "History fact v2"})
    r = srv.call("memory_review", "history", {"memory_id": memory_id})
    assert [v["content"] for v in r["versions"]] == ["History fact v1", "History fact v2"]
    for version in r["versions"]:
        assert {"version", "content", "subject", "event_time", "recorded_at", "actor", "events"} <= set(version)
        assert version["actor"] == "contract-test"  # LEDGER_CLIENT of the server process
    assert srv.call("memory_review", "history", {"memory_id": 987654}).code == "not_found"


def test_conflicts_and_conflict_detail(srv: LedgerServer) -> None:
    r = srv.call("memory_review", "conflicts", {"state": "all", "limit": 5})
    succeeded(r)
    assert isinstance(r["conflicts"], list)
    detail = srv.call("memory_review", "conflict_detail", {"conflict_id": 987654})
    assert detail.code == "not_found", detail.body


def test_compare_returns_a_verdict_and_writes_nothing(srv: LedgerServer) -> None:
    left = remember(srv, "The release train leaves on Monday", event_time="2025-01-01T00:00:00Z")
    right = remember(srv, "The release train leaves on Tuesday", event_time="2025-02-01T00:00:00Z")
    before = srv.events()
    r = srv.call("memory_review", "compare", {"left_id": left, "right_id": right})
    succeeded(r)
    verdict = r["verdict"]
    assert {"winner_side", "winner_id", "loser_id", "manual_review", "reasons", "rule_order"} <= set(verdict)
    assert verdict["winner_id"] == right  # newer event_time
    assert srv.events() == before


def test_audit_and_timeline(srv: LedgerServer) -> None:
    memory_id = remember(srv, "Audit trail fact", subject="audit subject")
    audit = srv.call("memory_review", "audit", {"memory_id": memory_id, "limit": 10})
    succeeded(audit)
    assert audit["events"], audit.body
    assert {"position", "type", "stream_id", "event_time", "recorded_at", "actor", "payload"} <= set(audit["events"][0])
    assert audit["events"][0]["actor"] == "contract-test"
    assert [e["type"] for e in audit["events"]] == ["MemoryRecorded"]  # the design's names
    srv.call("memory_govern", "confirm", {"memory_id": memory_id, "authorized": True})
    for name in ("Confirmed", "MemoryConfirmed"):  # the earlier name filters the same rows
        confirmed = srv.call("memory_review", "audit", {"memory_id": memory_id, "type": name})["events"]
        assert [(e["type"], e.get("stored_type")) for e in confirmed] == [("Confirmed", None)]
    timeline = srv.call("memory_review", "timeline", {"memory_id": memory_id})
    succeeded(timeline)
    assert {"memory_id", "valid_from", "valid_to", "status", "superseded_by"} <= set(timeline["intervals"][0])
    assert srv.call("memory_review", "timeline", {"subject": "audit subject"})["intervals"]


def test_audit_offers_only_the_event_types_the_log_writes(srv: LedgerServer) -> None:
    """The ``type`` filter listed ``MemoryRemembered`` and ``MemoryConfirmed`` beside the written
    types (in the tool's schema and in the refusal of an unknown type): nothing writes them any
    more. Only written types are offered now; the old names still filter (above)."""
    tools = {t.name: t for t in srv.list_tools()}
    offered = json.dumps(tools["memory_review"].input_schema)
    assert '"WriteReplayed"' in offered and "MemoryRemembered" not in offered and "MemoryConfirmed" not in offered
    bogus = srv.call("memory_review", "audit", {"type": "MemoryRecordd"})
    assert bogus.code == "invalid_input" and bogus.error["field"] == "type", bogus.body
    assert bogus.error["did_you_mean"] == "MemoryRecorded"
    listed = bogus.error["message"].split("the log writes ", 1)[1].split(", ")
    assert listed[0] == "MemoryRecorded" and "WriteReplayed" in listed
    assert "MemoryRemembered" not in listed and "MemoryConfirmed" not in listed


def test_governance_actions(srv: LedgerServer) -> None:
    a = remember(srv, "Coffee machine is on floor 2", event_time="2025-01-01T00:00:00Z")
    b = remember(srv, "Coffee machine is on floor 3", event_time="2025-06-01T00:00:00Z")
    r = srv.call("memory_govern", "arbitrate", {"left_id": a, "right_id": b, "authorized": True})
    succeeded(r)
    assert r["verdict"]["winner_id"] == b
    confirmed = remember(srv, "Standup is at 9:30")
    succeeded(srv.call("memory_govern", "confirm", {"memory_id": confirmed, "authorized": True}))
    assert srv.memory("read", {"memory_id": confirmed})["memory"]["protection"] == "locked"
    retired = remember(srv, "The old VPN endpoint is vpn1")
    succeeded(srv.call("memory_govern", "retire", {"memory_id": retired, "reason": "replaced", "authorized": True}))
    assert srv.memory("read", {"memory_id": retired})["memory"]["status"] == "retired"
    loser, winner = remember(srv, "Wiki lives at wiki1"), remember(srv, "Wiki lives at wiki2")
    succeeded(srv.call("memory_govern", "supersede", {"loser_id": loser, "winner_id": winner, "authorized": True}))
    assert srv.memory("read", {"memory_id": loser})["memory"]["superseded_by"] == winner
    locked = remember(srv, "My employee number is 4711", source_type="user_confirmed")
    succeeded(srv.call("memory_govern", "unlock", {"memory_id": locked, "authorized": True}))
    assert srv.memory("read", {"memory_id": locked})["memory"]["protection"] == "normal"
    missing = srv.call(
        "memory_govern", "resolve_conflict", {"conflict_id": 987654, "resolution": "keep_both", "authorized": True}
    )
    assert missing.code == "not_found", missing.body


def test_governance_without_authorization_writes_nothing(srv: LedgerServer) -> None:
    memory_id = remember(srv, "Unauthorised target")
    before = srv.events()
    for action, data in (
        ("confirm", {"memory_id": memory_id}),
        ("retire", {"memory_id": memory_id}),
        ("unlock", {"memory_id": memory_id}),
        ("arbitrate", {"left_id": 1, "right_id": 2}),
        ("supersede", {"loser_id": 1, "winner_id": 2, "authorized": False}),
        ("resolve_conflict", {"conflict_id": 1, "resolution": "keep_both"}),
        ("accept", {"alias": "x", "canonical": "y"}),
        ("reject", {"alias": "x", "canonical": "y"}),
    ):
        r = srv.call("memory_govern", action, data)
        assert r.code == "unauthorized", (action, r.body)
    assert srv.events() == before


def test_workspace_aliases_through_governance(srv: LedgerServer) -> None:
    srv.memory("remember", {"content": "Sprint goal: ship the importer", "workspace": "Team Rocket"})
    srv.memory("remember", {"content": "Sprint review on Friday", "workspace": "team-rocket"})
    srv.memory("remember", {"content": "Sprint retro notes", "workspace": "team-rocket"})
    listing = srv.call("memory_review", "workspaces")
    assert {"alias": "Team Rocket", "canonical": "team-rocket"} in listing["suggestions"]
    r = srv.call("memory_govern", "accept", {"alias": "Team Rocket", "canonical": "team-rocket", "authorized": True})
    assert r.ok and r["canonical"] == "team-rocket"
    found = srv.memory("find", {"query": "sprint", "workspace": "team-rocket"})["results"]
    assert len(found) == 3
    later = srv.memory("remember", {"content": "Sprint planning moved", "workspace": "Team Rocket"})
    assert srv.memory("read", {"memory_id": later["memory_id"]})["memory"]["workspace"] == "team-rocket"
    undone = srv.call(
        "memory_govern", "reject", {"alias": "Team Rocket", "canonical": "team-rocket", "authorized": True}
    )
    assert undone.ok and undone["canonical"] == "Team Rocket"
    assert len(srv.memory("find", {"query": "sprint", "workspace": "team-rocket"})["results"]) == 3


def test_repair_tasks(srv: LedgerServer) -> None:
    remember(srv, "Repair fact")
    events = srv.events()
    rebuilt = srv.call("memory_repair", "rebuild")
    assert rebuilt["events"] == events and "memories" in rebuilt["projections"]
    assert srv.call("memory_repair", "rebuild", {"projection": "search"})["projections"] == ["search"]
    verified = srv.call("memory_repair", "verify")
    assert verified["chain"] == "intact" and verified["projections"] == "consistent"
    succeeded(srv.call("memory_repair", "replay_backup"))  # dry run by default
    succeeded(srv.call("memory_repair", "archive"))
    reembed = srv.call("memory_repair", "reembed")
    assert reembed.ok or reembed.code == "unavailable"
    assert srv.events() == events  # rebuild, verify and dry runs append nothing


def test_conflict_lifecycle_open_judged_resolved(srv: LedgerServer) -> None:
    def claim(value: str) -> dict[str, object]:
        return {
            "content": f"The build server runs Java {value}",
            "subject": "build server",
            "claims": [{"subject": "build server", "attribute": "java", "value": value}],
        }

    old = srv.memory("remember", claim("17"))["memory_id"]
    new = srv.memory("remember", claim("21"))
    conflict_id = new["conflicts"][0]["conflict_id"]
    listed = srv.call("memory_review", "conflicts", {"state": "open"})["conflicts"]
    assert conflict_id in [c["conflict_id"] for c in listed]
    detail = srv.call("memory_review", "conflict_detail", {"conflict_id": conflict_id})["conflict"]
    assert sorted(detail["members"]) == sorted([old, new["memory_id"]]) and "rule_order" in detail["verdict"]
    stale = srv.memory(
        "judge",
        {
            "conflict_id": conflict_id,
            "winner_id": new["memory_id"],
            "rationale": "newer",
            "pins": {str(old): 7, str(new["memory_id"]): 1},
        },
    )
    assert stale.code == "version_conflict"
    judged = srv.memory(
        "judge",
        {
            "conflict_id": conflict_id,
            "winner_id": new["memory_id"],
            "rationale": "newer",
            "pins": {str(old): 1, str(new["memory_id"]): 1},
        },
    )
    assert judged["conflict"]["state"] == "judged" and isinstance(judged["judgment_id"], int)
    resolved = srv.call(
        "memory_govern",
        "resolve_conflict",
        {"conflict_id": conflict_id, "winner_id": new["memory_id"], "authorized": True},
    )
    assert resolved["conflict"]["state"] == "resolved"
    assert srv.memory("read", {"memory_id": old})["memory"]["status"] == "superseded"
    assert conflict_id in [
        c["conflict_id"] for c in srv.call("memory_review", "conflicts", {"state": "resolved"})["conflicts"]
    ]
