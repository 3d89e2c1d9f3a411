"""Cursor paging (find, conflicts, audit, history, timeline), passable ids in payloads, and lean
list items in MCP replies."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.server.app import paging
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.mcp import compact as mcp_compact
from fact_ledger.server.mcp.server import build_server
from tests.test_mcp_server import body

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def all_pages(
    call: Callable[..., dict[str, Any]], key: str, between: Callable[[], None] = lambda: None, **kwargs: Any
) -> list[dict[str, Any]]:
    """Every item over every page, running ``between`` after each page (a concurrent writer)."""
    items: list[dict[str, Any]] = []
    cursor = None
    for _ in range(100):
        page = call(**kwargs, cursor=cursor)
        items += page[key]
        assert page["has_more"] is (page["next_cursor"] is not None)
        cursor = page["next_cursor"]
        if cursor is None:
            return items
        between()
    raise AssertionError("paging did not end")


@pytest.mark.parametrize("query", ["", "coffee beans", "roaster"])
def test_find_pages_cover_every_match_once_while_others_write(app: LedgerApp, query: str) -> None:
    for i in range(23):
        app.remember(f"coffee beans from roaster {i} for the office", subject=f"coffee {i}")
    expected = [r["memory_id"] for r in app.find(query, limit=50)["results"]]
    assert len(expected) == 23
    writes = iter(range(100))
    seen = all_pages(
        app.find,
        "results",
        lambda: app.remember(f"coffee beans roaster written later {next(writes)}"),
        query=query,
        limit=4,
    )
    assert [r["memory_id"] for r in seen] == expected  # same order, nothing twice, nothing new slipped in
    assert "total_estimate" not in app.find(query, limit=1)  # no count that pretends to know


def test_find_as_of_pages_and_cursors_refuse_other_requests(app: LedgerApp) -> None:
    for i in range(7):
        app.remember(f"deploy note {i}")
    seen = all_pages(app.find, "results", query="deploy", limit=3, as_of_event_time="2999-01-01T00:00:00Z")
    assert len({r["memory_id"] for r in seen}) == len(seen) == 7
    cursor = app.find("deploy", limit=3)["next_cursor"]
    with pytest.raises(InvalidInput, match="different request"):
        app.find("other words", limit=3, cursor=cursor)
    assert app.find("deploy", limit=5, cursor=cursor)["results"]  # the limit may change between pages
    for bad in ("abc", "x" * 600, paging.encode("find", {}, -1)):
        with pytest.raises(InvalidInput) as caught:
            app.find("deploy", cursor=bad)
        assert caught.value.field == "cursor"


def test_conflicts_audit_history_and_timeline_page_with_keysets(app: LedgerApp) -> None:
    for i in range(9):
        app.remember(f"Person{i} lives in Lisbon", subject=f"person{i}")
        app.remember(f"Person{i} lives in Porto", subject=f"person{i}")
    assert app.conflicts(limit=200)["total"] == 9
    opened = iter(range(100))

    def another_conflict() -> None:
        n = next(opened)
        app.remember(f"Late{n} lives in Rome", subject=f"late{n}")
        app.remember(f"Late{n} lives in Oslo", subject=f"late{n}")

    conflicts = all_pages(app.conflicts, "conflicts", another_conflict, limit=2)
    assert [c["conflict_id"] for c in conflicts] == [
        c["conflict_id"]
        for c in app.conflicts(limit=200)["conflicts"]
        if c["conflict_id"] in {x["conflict_id"] for x in conflicts}
    ]
    assert len(conflicts) == 9
    head = app.store.last_position()
    events = all_pages(app.audit, "events", lambda: app.remember("an audit page apart"), limit=7)
    assert [e["position"] for e in events] == list(range(head, 0, -1))
    memory = app.remember("The build server is ci-1", subject="build server")["memory_id"]
    for n in range(2, 8):
        app.update(memory, content=f"The build server is ci-{n}")
    versions = all_pages(app.history, "versions", memory_id=memory, limit=3)
    assert [v["version"] for v in versions] == list(range(1, 8))
    for i in range(5):
        app.remember(f"The cache lives on host {i}", subject="cache host", event_time=f"2024-0{i + 1}-01T00:00:00Z")
    intervals = all_pages(
        app.timeline,
        "intervals",
        lambda: app.remember("cache later", subject="cache host"),
        subject="cache host",
        limit=2,
    )
    assert len(intervals) == 5 and len({i["memory_id"] for i in intervals}) == 5


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_any_cursor_text_is_invalid_input_or_a_page(app: LedgerApp, text: str) -> None:
    try:
        page = app.audit(limit=2, cursor=text or None)
    except InvalidInput as exc:
        assert exc.field == "cursor"
    else:
        assert page["ok"]


def test_history_and_audit_payloads_name_memories_by_ids_the_tools_take(app: LedgerApp) -> None:
    left = app.remember("Bob lives in Paris", subject="bob")["memory_id"]
    right = app.remember("Bob lives in Rome", subject="bob")["memory_id"]
    conflict = app.conflicts()["conflicts"][0]["conflict_id"]
    app.judge(conflict, right, pins={left: 1, right: 1})
    app.supersede(left, right, authorization="agent_asserted")
    for answer in (app.history(left), app.audit(memory_id=left)):
        text = json.dumps(answer.get("versions") or [e["payload"] for e in answer["events"]])
        assert not UUID.search(text), text
    payloads = [e["payload"] for e in app.audit()["events"]]
    judged = next(p for p in payloads if "judgment_id" in p)
    assert judged["conflict_id"] == conflict and judged["pins"] == {str(left): 1, str(right): 1}
    superseded = next(p for p in payloads if "loser_id" in p)
    assert (superseded["loser_id"], superseded["winner_id"]) == (left, right)
    collided = next(e for e in app.audit()["events"] if e["type"] == "ClaimCollided")
    assert collided["conflict_id"] == conflict
    assert [m["memory_id"] for m in collided["payload"]["members"]] == [left, right]
    assert app.read(superseded["winner_id"])["ok"] and app.conflict_detail(collided["conflict_id"])["ok"]


@pytest.mark.anyio
async def test_mcp_lists_are_lean_but_keep_every_contract_key(app: LedgerApp) -> None:
    app.remember("Ana lives in Lisbon", subject="ana")
    app.remember("Ana lives in Porto", subject="ana")
    app.remember("coffee is on floor 2")
    async with Client(build_server(app)) as c:
        find = body(await c.call_tool("memory", {"action": "find", "data": {"query": "coffee", "limit": 1}}))
        conflicts = body(await c.call_tool("memory_review", {"view": "conflicts"}))
        audit = body(await c.call_tool("memory_review", {"view": "audit", "data": {"limit": 50}}))
        paged = body(await c.call_tool("memory", {"action": "find", "data": {"query": "", "limit": 1, "offset": 2}}))
        second = body(
            await c.call_tool(
                "memory", {"action": "find", "data": {"query": "", "limit": 1, "cursor": paged["next_cursor"]}}
            )
        )
        help_text = body(await c.call_tool("memory", {"action": "help", "data": {"topic": "paging"}}))["text"]
    assert {"results", "has_more", "next_cursor"} <= set(find) and find["next_cursor"] is None
    assert {"subject", "tags", "source_ref", "conflict_ids"} <= set(find["results"][0])  # contract keys stay
    assert "resolution" not in conflicts["conflicts"][0] and "reason" not in conflicts["conflicts"][0]  # empty
    verdict = conflicts["conflicts"][0]["verdict"]
    assert "rule_order" not in verdict and {"winner_id", "leader_id", "manual_review"} <= set(verdict)
    assert all("event_id" not in e and "content_hash" not in e["payload"] for e in audit["events"])
    assert paged["notices"] == ["ignored unknown field(s): offset"]
    assert "next_cursor" in help_text
    assert second["results"][0]["memory_id"] != paged["results"][0]["memory_id"]


def test_lean_items_drop_only_empty_non_contract_fields() -> None:
    result = {
        "ok": True,
        "results": [
            {
                "memory_id": 1,
                "subject": "",
                "tags": [],
                "content": "",
                "status": "active",
                "standing": None,
                "conflict_ids": [],
                "note": "",
                "extra": None,
                "more": [],
                "verdict": {"reasons": [], "rule_order": ["a"]},
            }
        ],
        "has_more": False,
        "next_cursor": None,
    }
    lean = mcp_compact.compact("memory", "find", result)
    assert lean == {
        "ok": True,
        "results": [
            {
                "memory_id": 1,
                "subject": "",
                "tags": [],
                "content": "",
                "status": "active",
                "standing": None,
                "conflict_ids": [],
                "verdict": {"reasons": []},
            }
        ],
        "has_more": False,
        "next_cursor": None,
    }
