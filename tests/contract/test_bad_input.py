"""The bad-input table: each answered cleanly, with the database unchanged where it must be.

"Unchanged" is the event count from ``memory status`` before and after: a refused write must
leave no event at all (no partial write), and odd-but-valid searches must write nothing either.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from typing import Any

import pytest

from tests.conftest import REPO
from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow
MIB = 1024 * 1024

# (tool, name, data, expected code, expected field or None)
REFUSED: list[tuple[str, str | None, Any, str, str | None]] = [
    ("memory", "remember", {"content": "x" * (2 * MIB + 1)}, "invalid_input", "content"),
    ("memory", "remember", {"content": "😀" * (MIB // 2 + 1)}, "invalid_input", "content"),  # 4-byte chars
    ("memory", "remember", {"content": ""}, "invalid_input", "content"),
    ("memory", "remember", {}, "invalid_input", "content"),
    ("memory", "remember", {"content": "ok", "subject": "s" * 2001}, "invalid_input", "subject"),
    ("memory", "remember", {"content": "ok", "tags": [f"t{i}" for i in range(101)]}, "invalid_input", "tags"),
    ("memory", "remember", {"content": "ok", "tags": ["t" * 257]}, "invalid_input", "tags.0"),
    ("memory", "remember", {"content": "ok", "metadata": {"b": "m" * (256 * 1024)}}, "invalid_input", "metadata"),
    ("memory", "remember", {"content": "ok", "metadata": "not an object"}, "invalid_input", "metadata"),
    ("memory", "remember", {"content": "ok", "confidence": "NaN"}, "invalid_input", "confidence"),
    ("memory", "remember", {"content": "ok", "confidence": "-Infinity"}, "invalid_input", "confidence"),
    ("memory", "remember", {"content": "ok", "confidence": 7}, "invalid_input", "confidence"),
    ("memory", "remember", {"content": "ok", "confidence": True}, "invalid_input", "confidence"),
    ("memory", "remember", {"content": "ok", "confidence": "0.5"}, "invalid_input", "confidence"),
    ("memory", "remember", {"content": "ok", "confidence": " 1e-1 "}, "invalid_input", "confidence"),
    ("memory", "update", {"memory_id": 1, "confidence": "0.9"}, "invalid_input", "confidence"),
    ("memory", "remember", {"content": "ok", "source_type": "trusted"}, "invalid_input", "source_type"),
    ("memory", "remember", {"content": "ok", "event_time": "last week"}, "invalid_input", "event_time"),
    ("memory", "remember", {"content": "ok", "event_time": "2024-02-30T10:00:00"}, "invalid_input", "event_time"),
    # A fact's time far in the future would win every later comparison; before 1900 it is a typo.
    ("memory", "remember", {"content": "ok", "event_time": "9999-12-31T00:00:00Z"}, "invalid_input", "event_time"),
    ("memory", "remember", {"content": "ok", "event_time": "1899-12-31T23:59:59Z"}, "invalid_input", "event_time"),
    ("memory", "update", {"memory_id": 1, "event_time": "9999-12-31T00:00:00Z"}, "invalid_input", "event_time"),
    ("memory", "remember", {"content": "ok", "sorce_type": "unknown"}, "invalid_input", "sorce_type"),
    ("memory", "remember", {"contnet": "typo"}, "invalid_input", "contnet"),
    ("memory", "remember", {"content": "ok", "ref_id": True}, "invalid_input", "ref_id"),
    ("memory", "remember", {"content": "ok", "claims": [{"subject": "a"}]}, "invalid_input", "claims.0.attribute"),
    ("memory", "read", {"memory_id": True}, "invalid_input", "memory_id"),
    ("memory", "read", {"memory_id": 0}, "invalid_input", "memory_id"),
    ("memory", "read", {"memory_id": -5}, "invalid_input", "memory_id"),
    ("memory", "read", {"memory_id": "1"}, "invalid_input", "memory_id"),
    ("memory", "read", {"memory_id": 1.5}, "invalid_input", "memory_id"),
    ("memory", "read", {"memory_id": 2**70}, "invalid_input", "memory_id"),
    ("memory", "update", {"memory_id": 1, "expected_version": False}, "invalid_input", "expected_version"),
    ("memory", "find", {"query": "q" * 32001}, "invalid_input", "query"),
    ("memory", "find", {"limit": 0}, "invalid_input", "limit"),
    ("memory", "find", {"limit": 51}, "invalid_input", "limit"),
    ("memory", "find", {"source_type": "bogus"}, "invalid_input", "source_type"),
    # an empty time range answered nothing, as if no memory were in it
    ("memory", "find", {"after_time": "2026-06-01", "before_time": "2026-03-01"}, "invalid_input", "after_time"),
    (
        "memory",
        "find",
        {"after_time": "2026-03-01T00:00:00Z", "before_time": "2026-03-01"},
        "invalid_input",
        "after_time",
    ),
    ("memory", "find", {"querry": "typo"}, "invalid_input", "querry"),
    ("memory", "find", {"before_time": "tomorrow"}, "invalid_input", "before_time"),
    ("memory", "find", {"tags_filter": "infra"}, "invalid_input", "tags_filter"),
    ("memory", "judge", {"conflict_id": 1, "winner_id": 2, "pins": {"x": 1}}, "invalid_input", "pins"),
    ("memory", "judge", {"conflict_id": 1}, "invalid_input", "winner_id"),
    ("memory_repair", "archive", {"older_than_days": -1}, "invalid_input", "older_than_days"),
    ("memory", "fnd", {"query": "x"}, "invalid_input", "action"),
    ("memory", None, {"query": "x"}, "invalid_input", "action"),
    ("memory", "find", [1, 2], "invalid_input", "data"),
    ("memory", "find", "not json", "invalid_input", "data"),
    ("memory", "find", 42, "invalid_input", "data"),
    ("memory_review", "conflicts", {"state": "closed"}, "invalid_input", "state"),
    ("memory_review", "audit", {"type": "Nope"}, "invalid_input", "type"),
    ("memory_review", "audit", {"limit": 1001}, "invalid_input", "limit"),
    ("memory_review", "timeline", {}, "invalid_input", "memory_id"),
    ("memory_review", "compare", {"left_id": 1, "right_id": 1}, "invalid_input", "right_id"),
    ("memory_review", "vieww", {}, "invalid_input", "view"),
    ("memory_govern", "resolve_conflict", {"conflict_id": 1, "authorized": True}, "invalid_input", "winner_id"),
    ("memory_govern", "retire", {"memory_id": True, "authorized": True}, "invalid_input", "memory_id"),
    ("memory_govern", "retire", {"memory_id": 1, "authorized": "yes"}, "invalid_input", "authorized"),
    ("memory_govern", "retire", {"memory_id": 1}, "unauthorized", "authorized"),
    ("memory_govern", "accept", {"alias": "a", "canonical": "b"}, "unauthorized", "authorized"),
    ("memory_repair", "replay_backup", {"dry_run": False}, "unauthorized", "authorized"),
    ("memory_repair", "rebuild", {"projection": "nonexistent"}, "invalid_input", "projection"),
    ("memory_repair", "explode", {}, "invalid_input", "task"),
]


@pytest.mark.parametrize(
    ("tool", "name", "data", "code", "field"), REFUSED, ids=[f"{t}-{n}-{i}" for i, (t, n, *_) in enumerate(REFUSED)]
)
def test_refused_cleanly_and_nothing_written(
    srv: LedgerServer, tool: str, name: str | None, data: Any, code: str, field: str | None
) -> None:
    before = srv.events()
    r = srv.call(tool, name, data)
    assert r.code == code, r.body
    assert r.error.get("field") == field, r.body
    assert srv.events() == before


def test_typos_carry_did_you_mean(srv: LedgerServer) -> None:
    assert srv.memory("remember", {"content": "x", "sorce_type": "unknown"}).error["did_you_mean"] == "source_type"
    assert srv.memory("fnd").error["did_you_mean"] == "find"
    assert srv.call("memory_review", "histroy", {"memory_id": 1}).error["did_you_mean"] == "history"


QUERIES = [
    '"foo" OR bar*',
    "'; DROP TABLE events;--",
    "",
    "   ",
    "x" * 5000,
    "word " * 1000,
    "🦄🚀",
    "NEAR(port staging)",
    "content:secret",
    "*",
    "-",
    "(",
    '"',
    "AND OR NOT",
    "\\",
    "%_%",
    "SELECT * FROM memories",
    "端口 是 多少",
    "\x00",
    "a\u200bb",
]


def test_odd_queries_are_answered_and_write_nothing(srv: LedgerServer) -> None:
    srv.memory("remember", {"content": "The unicorn 🦄 deploy port is 7777", "subject": "emoji"})
    srv.memory("remember", {"content": "staging 服务 端口 是 8080"})
    before = srv.events()
    for query in QUERIES:
        r = srv.memory("find", {"query": query})
        assert r.ok, (query, r.body)
        assert isinstance(r["results"], list) and r.size < 2500
    assert srv.events() == before
    assert srv.memory("status")["memories"] >= 2  # DROP TABLE did nothing
    emoji = srv.memory("find", {"query": "🦄"})["results"]
    assert any("7777" in x["content"] for x in emoji)


def test_harmless_unknown_fields_are_ignored_with_one_notice(srv: LedgerServer) -> None:
    r = srv.memory("remember", {"content": "Notice test fact", "mood": "cheerful", "x_trace_id": "abc"})
    assert r.ok and r["notices"] == ["ignored unknown field(s): mood, x_trace_id"]
    assert "notices" not in srv.memory("read", {"memory_id": r["memory_id"]}).body


def test_limits_are_inclusive(srv: LedgerServer) -> None:
    r = srv.memory(
        "remember", {"content": "z" * (2 * MIB), "subject": "s" * 2000, "tags": [f"tag{i}" for i in range(100)]}
    )
    assert r.ok and r.size < 300
    assert srv.memory("find", {"query": "q" * 32000, "limit": 50}).ok
    assert srv.memory("find", {"query": "z", "limit": 3}).size < 2500  # a 2 MiB content trimmed


def test_extra_top_level_arguments_do_not_break_the_call(srv: LedgerServer) -> None:
    r = srv.call("memory", "status", None, verbose=True)
    assert r.ok
    assert r["notices"][0] == "ignored unknown field(s): verbose"  # beside data, and unknown there too


def test_fields_sent_beside_data_are_read_with_a_notice(srv: LedgerServer) -> None:
    """An agent that flattens the call ({"action": "remember", "content": …}) is not told that
    content is missing: the fields are read as if under data, and the answer says where they go."""
    r = srv.call("memory", "remember", None, content="The flattened fact lives on port 4242", subject="flat")
    assert r.ok, r.body
    assert r["notices"] == ["fields go under data; read content, subject from beside it this time"]
    memory = srv.memory("read", {"memory_id": r["memory_id"]})["memory"]
    assert (memory["content"], memory["subject"]) == ("The flattened fact lives on port 4242", "flat")
    # data wins where both say something; what data lacks still comes in
    r = srv.call("memory", "find", {"query": "flattened"}, query="nothing like it", limit=1)
    assert r.ok and [x["memory_id"] for x in r["results"]] == [memory["memory_id"]]
    assert r["notices"] == [
        "fields go under data; read limit from beside it this time",
        "ignored field(s) beside data: query (data says otherwise)",
    ]
    # a field nobody knows, flat, is named once, as one under data is
    r = srv.call("memory", "find", None, query="flattened", mood="x")
    assert r.ok and r["notices"] == [
        "fields go under data; read query from beside it this time",
        "ignored unknown field(s): mood",
    ]
    # data as a JSON string is read first, then what stands beside it joins
    r = srv.call("memory", "remember", json.dumps({"content": "Strings carry data too"}), tags=["flat"])
    assert r.ok and r["notices"] == ["fields go under data; read tags from beside it this time"], r.body
    assert srv.memory("read", {"memory_id": r["memory_id"]})["memory"]["tags"] == ["flat"]
    r = srv.call("memory", "remember", "  ", content="A blank data string holds nothing")
    assert r.ok, r.body
    # a refusal still says where the fields went
    r = srv.call("memory", "remember", json.dumps({"source_type": "agent_generated"}), subject="nothing said")
    assert not r.ok and r.body["error"]["field"] == "content"
    assert r["notices"] == ["fields go under data; read subject from beside it this time"]


def test_raw_json_rpc_with_invalid_unicode_and_nan_is_answered(srv: LedgerServer) -> None:
    """What the SDK client cannot even send: a lone surrogate escape (a JavaScript client's string
    cut inside an emoji), a NaN literal and metadata nested 400 deep. Each is answered: the
    server's stdio reader reads the line the SDK's parser drops (server/mcp/stdio.py)."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    raw = [json.dumps(x) for x in lines]
    raw.append(
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory","arguments":'
        '{"action":"remember","data":{"content":"bad \\ud800 text"}}}}'
    )
    raw.append(
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory","arguments":'
        '{"action":"remember","data":{"content":"nan","confidence":NaN}}}}'
    )
    deep = '{"a":' * 400 + "1" + "}" * 400  # past what the SDK's parser reads, and past the edge's limit
    raw.append(
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory","arguments":'
        '{"action":"remember","data":{"content":"deep","metadata":' + deep + "}}}}"
    )
    raw.append(
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory","arguments":{"action":"status"}}}'
    )
    db = srv.db.with_name("raw.db")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fact_ledger.server", "serve", "--db", str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ},
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    replies: dict[Any, dict[str, Any]] = {}

    def send(line: str, wait_for: int | None) -> None:
        proc.stdin.write(line + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        while wait_for is not None and wait_for not in replies:
            reply = json.loads(lines.get(timeout=30))
            replies[reply.get("id")] = reply

    try:
        send(raw[0], 1)
        send(raw[1], None)
        send(raw[2], 2)
        send(raw[3], 3)
        send(raw[4], 5)
        send(raw[5], 4)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    stderr = proc.stderr.read()
    proc.stderr.close()
    proc.stdout.close()
    assert "Traceback" not in stderr, stderr
    status = replies[4]["result"]["structuredContent"]
    assert status["events"] == 0  # neither odd write stored anything
    nested = replies[5]["result"]["structuredContent"]["error"]
    assert (nested["code"], nested["field"]) == ("invalid_input", "metadata")
    assert "deeper than 32 levels" in nested["message"]
    surrogate = replies[2]["result"]
    assert surrogate["isError"] is True
    assert surrogate["structuredContent"]["error"]["code"] == "invalid_input"
    assert surrogate["structuredContent"]["error"]["field"] == "content"
    assert "unpaired surrogate" in surrogate["structuredContent"]["error"]["message"]
    nan = replies[3]
    if "result" in nan:  # reached the tool: a clean invalid_input
        assert nan["result"]["isError"] is True
        assert nan["result"]["structuredContent"]["error"]["code"] == "invalid_input"
    else:  # refused by the JSON parser: a JSON-RPC error, still no crash
        assert nan["error"]["code"] < 0
