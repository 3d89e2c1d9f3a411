"""docs/contract.md tool ``memory`` through ``ledger serve`` over stdio: every action, compact results."""

from __future__ import annotations

import pytest

from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow

RESULT_KEYS = {
    "memory_id",
    "subject",
    "content",
    "tags",
    "source_type",
    "trust",
    "confidence",
    "protection",
    "status",
    "event_time",
    "recorded_at",
    "version",
    "source_ref",
    "score",
    "conflict_ids",
}


def test_tools_list_has_the_four_contract_tools(srv: LedgerServer) -> None:
    tools = {t.name: t for t in srv.list_tools()}
    assert set(tools) == {"memory", "memory_review", "memory_govern", "memory_repair"}
    assert tools["memory"].input_schema["required"] == ["action"]
    assert tools["memory_review"].input_schema["required"] == ["view"]
    assert tools["memory_repair"].input_schema["required"] == ["task"]


def test_remember_returns_a_compact_result_and_stamps_one_event(srv: LedgerServer) -> None:
    before = srv.events()
    r = srv.memory(
        "remember",
        {
            "content": "The staging API listens on port 8080",
            "subject": "staging api",
            "tags": ["infra", "staging"],
            "source_type": "document_extracted",
            "confidence": 0.8,
            "event_time": "2025-03-01T09:00:00Z",
            "source_ref": "docs/ops.md",
            "metadata": {"page": 3},
        },
    )
    assert r.ok and isinstance(r["memory_id"], int) and r["version"] == 1 and r["status"] == "active"
    assert r.size < 300, r.body
    assert srv.events() > before
    full = srv.memory("read", {"memory_id": r["memory_id"]})["memory"]
    assert full["content"] == "The staging API listens on port 8080"
    assert full["tags"] == ["infra", "staging"] and full["source_type"] == "document_extracted"
    assert full["trust"] == 70 and full["confidence"] == 0.8 and full["metadata"] == {"page": 3}
    assert full["event_time"] == "2025-03-01T09:00:00.000000Z" and full["source_ref"] == "docs/ops.md"
    assert {"superseded_by", "supersedes", "sections"} <= set(full)


def test_an_exact_duplicate_is_not_stored_twice(srv: LedgerServer) -> None:
    first = srv.memory("remember", {"content": "Backups run nightly at 02:00", "subject": "backups"})
    again = srv.memory("remember", {"content": "backups  run nightly at 02:00", "subject": "Backups"})
    assert again["duplicate_of"] == first["memory_id"] == again["memory_id"]
    assert again.size < 300


def test_find_returns_contract_fields_within_the_byte_budget(srv: LedgerServer) -> None:
    for i in range(7):
        srv.memory(
            "remember",
            {
                "content": f"Service {i} of the billing cluster listens on port {9000 + i}",
                "subject": f"billing service {i}",
                "tags": ["billing"],
            },
        )
    r = srv.memory("find", {"query": "billing cluster port"})
    assert len(r["results"]) == 5 and r["has_more"] is True and r["next_cursor"]
    rest = srv.memory("find", {"query": "billing cluster port", "cursor": r["next_cursor"]})
    billing = [i["memory_id"] for i in r["results"] + rest["results"] if i["subject"].startswith("billing")]
    assert len(billing) == len(set(billing)) == 7  # the second page goes on where the first stopped
    for item in r["results"]:
        assert set(item) >= RESULT_KEYS, set(item) ^ RESULT_KEYS
        assert "billing cluster" in item["content"]
    assert r.size < 2000, r.size  # "a 5-result find well under 2,500 bytes"
    narrowed = srv.memory(
        "find", {"query": "billing", "tags_filter": ["billing"], "limit": 2, "source_type": "agent_generated"}
    )
    assert len(narrowed["results"]) == 2


def test_find_trims_long_contents_and_read_has_them_whole(srv: LedgerServer) -> None:
    long = "Preamble. " * 300 + "The escalation phone number is 555-0199. " + "Appendix. " * 300
    memory_id = srv.memory("remember", {"content": long, "subject": "escalation"})["memory_id"]
    for i in range(4):
        srv.memory("remember", {"content": f"Escalation policy note {i}: " + "details " * 200})
    r = srv.memory("find", {"query": "escalation phone number"})
    assert r.size < 2500
    hit = next(x for x in r["results"] if x["memory_id"] == memory_id)
    assert hit["truncated"] is True and "555-0199" in hit["content"]
    assert srv.memory("read", {"memory_id": memory_id})["memory"]["content"] == long


def test_update_bumps_the_version_and_checks_the_expected_one(srv: LedgerServer) -> None:
    memory_id = srv.memory("remember", {"content": "The on-call rotation is weekly"})["memory_id"]
    r = srv.memory(
        "update",
        {
            "memory_id": memory_id,
            "expected_version": 1,
            "content": "The on-call rotation is fortnightly",
            "tags": ["oncall"],
        },
    )
    assert r.ok and r["version"] == 2 and r["memory_id"] == memory_id
    stale = srv.memory("update", {"memory_id": memory_id, "expected_version": 1, "content": "daily"})
    assert stale.code == "version_conflict" and stale.error["field"] == "expected_version"
    assert srv.memory("read", {"memory_id": memory_id})["memory"]["content"].endswith("fortnightly")
    history = srv.call("memory_review", "history", {"memory_id": memory_id})
    assert [v["version"] for v in history["versions"]] == [1, 2]


def test_locked_memories_refuse_unauthorised_updates(srv: LedgerServer) -> None:
    memory_id = srv.confirmed("My passport expires in 2031")
    assert srv.memory("read", {"memory_id": memory_id})["memory"]["protection"] == "locked"
    before = srv.events()
    r = srv.memory("update", {"memory_id": memory_id, "content": "expires in 2029"})
    assert r.code == "locked" and srv.events() == before
    ok = srv.memory("update", {"memory_id": memory_id, "content": "My passport expires in 2032", "authorized": True})
    assert ok.ok


def test_retraction_cancels_the_referenced_memory(srv: LedgerServer) -> None:
    meeting = srv.memory("remember", {"content": "Team sync on Wednesday at 10:00"})["memory_id"]
    srv.memory("remember", {"content": "Cancel the Wednesday sync", "ref_id": meeting, "retracts": True})
    assert srv.memory("read", {"memory_id": meeting})["memory"]["status"] == "retired"
    found = srv.memory("find", {"query": "Wednesday sync"})["results"]
    assert meeting not in [x["memory_id"] for x in found]
    assert meeting in [
        x["memory_id"] for x in srv.memory("find", {"query": "Wednesday sync", "include_inactive": True})["results"]
    ]


def test_missing_ids_are_not_found_and_nothing_is_written(srv: LedgerServer) -> None:
    before = srv.events()
    for action, data in (
        ("read", {"memory_id": 987654}),
        ("update", {"memory_id": 987654, "content": "x"}),
        ("remember", {"content": "retract a ghost", "ref_id": 987654, "retracts": True}),
    ):
        r = srv.memory(action, data)
        assert r.code == "not_found", (action, r.body)
    assert srv.events() == before


def test_judge_is_answered_cleanly(srv: LedgerServer) -> None:
    r = srv.memory("judge", {"conflict_id": 987654, "winner_id": 1, "rationale": "newer", "pins": {"1": 1, "2": 1}})
    assert r.code == "not_found", r.body
    assert "987654" in r.error["message"] or r.error.get("field") == "conflict_id", r.body


def test_status_reports_the_contract_keys(srv: LedgerServer) -> None:
    r = srv.memory("status")
    assert {"db", "events", "memories", "open_conflicts", "projections", "search_mode"} <= set(r.body)
    assert r["search_mode"] in {"vector+fts", "fts", "like"}
    assert r["db"] == str(srv.db)
    assert all({"position", "lag"} <= set(p) for p in r["projections"].values())


def test_help_lists_every_action_and_gives_examples(srv: LedgerServer) -> None:
    r = srv.memory("help")
    assert set(r["actions"]) == {"remember", "find", "read", "update", "reinforce", "judge", "status", "help"}
    topic = srv.memory("help", {"topic": "remember"})
    assert topic["example"]["action"] == "remember" and "content" in topic["example"]["data"]
    example = srv.call("memory", topic["example"]["action"], topic["example"]["data"])
    assert example.ok  # the documented example works as written
    assert "forbidden_workspace" in srv.memory("help", {"topic": "errors"})["text"]
    assert srv.memory("help", {"topic": "nonsense"}).code == "invalid_input"
    for tool, key in (("memory_review", "views"), ("memory_govern", "actions"), ("memory_repair", "tasks")):
        assert "help" in srv.call(tool, "help")[key]
        # help's own example names an entry of the same tool (it was {"topic": "find"} everywhere)
        own = srv.call(tool, "help", {"topic": "help"})["example"]
        assert srv.call(tool, own[key[:-1]], own["data"]).ok, (tool, own)
    workspaces = srv.call("memory_review", "help", {"topic": "workspaces"})  # a view named as a general topic
    assert workspaces["example"]["view"] == "workspaces" and "Isolation" in workspaces["about"]
    unknown = srv.call("memory_review", "help", {"topic": "nope"})
    named = unknown.error["message"].split("topics: ", 1)[1].split(", ")
    assert unknown.code == "invalid_input" and "workspaces" in named
    assert len(named) == len(set(named)), named  # "workspaces" is a view and a topic: listed once


def test_data_may_arrive_as_a_json_string(srv: LedgerServer) -> None:
    r = srv.memory("remember", '{"content": "Sent as a JSON string by a sloppy client"}')
    assert r.ok
    assert srv.memory("read", f'{{"memory_id": {r["memory_id"]}}}').ok


def test_a_conflicting_remember_stays_compact(srv: LedgerServer) -> None:
    srv.memory(
        "remember",
        {
            "content": "The VPN gateway port is 1194",
            "subject": "vpn gateway",
            "claims": [{"subject": "vpn gateway", "attribute": "port", "value": "1194"}],
        },
    )
    r = srv.memory(
        "remember",
        {
            "content": "The VPN gateway port is 443",
            "subject": "vpn gateway",
            "claims": [{"subject": "vpn gateway", "attribute": "port", "value": "443"}],
        },
    )
    assert r.ok and r.body["conflicts"], r.body  # the claim collision is reported
    assert r["conflicts_total"] >= 1 and len(r["conflicts"]) <= 5
    assert "rule_order" not in r["conflicts"][0]["verdict"]
    assert r.size < 700, r.body


def test_as_of_queries_reach_time_travel(srv: LedgerServer) -> None:
    memory_id = srv.memory(
        "remember", {"content": "The office wifi password rotates monthly", "event_time": "2025-01-01T00:00:00Z"}
    )["memory_id"]
    known_then = srv.events()
    srv.memory(
        "update",
        {
            "memory_id": memory_id,
            "content": "The office wifi password rotates weekly",
            "event_time": "2025-06-01T00:00:00Z",
        },
    )
    past = srv.memory("read", {"memory_id": memory_id, "as_of_recorded": known_then})
    assert past["memory"]["content"].endswith("monthly"), past.body
    found = srv.memory("find", {"query": "office wifi password", "as_of_recorded": str(known_then)})
    assert [r["content"] for r in found["results"] if r["memory_id"] == memory_id] == [
        "The office wifi password rotates monthly"
    ]
    now = srv.memory("find", {"query": "office wifi password"})["results"]
    assert [r["content"] for r in now if r["memory_id"] == memory_id] == ["The office wifi password rotates weekly"]


def test_audit_with_since_after_until_is_refused(srv: LedgerServer) -> None:
    """It answered no events, as if the log held none in the range."""
    assert srv.memory("remember", {"content": "The ferry to the island leaves at 7"}).ok
    refused = srv.call("memory_review", "audit", {"since": "2030-01-01", "until": "2020-01-01"})
    assert refused.code == "invalid_input" and refused.error["field"] == "since"
    assert "is after until" in refused.error["message"]
    assert srv.call("memory_review", "audit", {"since": "2020-01-01", "until": "2100-01-01"})["events"]


def test_a_turn_without_its_conversation_is_refused(srv: LedgerServer) -> None:
    """``turn`` alone was stored on the event and never shown again (the CLI refuses --turn
    without --session); the contract pairs it with ``session_id``."""
    refused = srv.memory("remember", {"content": "The ferry leaves at 7", "turn": 3})
    assert refused.code == "invalid_input" and refused.error["field"] == "turn"
    assert "needs session_id" in refused.error["message"]
    assert srv.memory("remember", {"content": "The ferry leaves at 7", "turn": 3, "session_id": "trip"}).ok
