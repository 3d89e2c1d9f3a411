"""A working note's story as ``history`` and ``audit`` tell it (CLI and MCP).

``history`` of a revised note showed one version with its latest text ("maybe use redis" was
gone); ``audit --memory-id`` of a note answered ``not_found``; and the notes' events named what
they touch by stream UUID (``memory``, ``long_term``, ``promoted_from``), which no tool accepts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest
from click.testing import CliRunner, Result
from mcp import Client

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Settings
from fact_ledger.server.mcp.server import build_server

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def cli(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args])


def _revised_note(db: Path) -> None:
    """Note #1 in conversation s1, revised at turn 2, then reinforced at turn 3."""
    assert cli(db, "init").exit_code == 0
    cli(db, "remember", "maybe use redis", "--tier", "working", "--session", "s1", "--turn", "1")
    cli(db, "update", "1", "use memcached", "--turn", "2")
    cli(db, "reinforce", "1", "user_referenced", "--turn", "3")


def test_history_of_a_revised_working_note_lists_every_version(db_path: Path) -> None:
    _revised_note(db_path)
    out = cli(db_path, "history", "1").stdout
    lines = out.splitlines()
    assert lines[0].startswith("v1 ") and lines[0].endswith("[WorkingNoted] (active)"), out
    assert lines[1] == "  maybe use redis"
    v2 = next(i for i, line in enumerate(lines) if line.startswith("v2 "))
    assert lines[v2].endswith("[WorkingRevised, Reinforced] (active)") and lines[v2 + 1] == "  use memcached"
    doc = json.loads(cli(db_path, "--json", "history", "1").stdout)
    first, second = doc["versions"]
    assert (first["content"], second["content"]) == ("maybe use redis", "use memcached")
    assert second["changed_from"] == {"content": "maybe use redis"}
    assert second["recorded_at"] > first["recorded_at"]  # the revision's own time, not the note's
    paged = json.loads(cli(db_path, "--json", "history", "1", "--limit", "1").stdout)
    assert paged["has_more"] and [v["version"] for v in paged["versions"]] == [1]


def test_audit_of_a_working_note_lists_its_events(db_path: Path) -> None:
    _revised_note(db_path)
    result = cli(db_path, "audit", "--memory-id", "1")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if not line.startswith("  ")]
    assert [line.split()[3] for line in lines] == ["Reinforced", "WorkingRevised", "WorkingNoted"]
    assert all(" #1 (event time " in line for line in lines)
    assert not UUID.search(result.stdout)  # the payloads name the note by its id
    assert "error" in cli(db_path, "audit", "--memory-id", "9").output  # no memory 9: still not found


def test_a_promoted_notes_events_name_both_memories_by_id(db_path: Path) -> None:
    _revised_note(db_path)
    cli(db_path, "promote", "1")
    out = cli(db_path, "audit").stdout
    assert not UUID.search(out), out
    assert "long_term_id: 4" in out and "promoted_from_id: 1" in out
    doc = json.loads(cli(db_path, "--json", "history", "1").stdout)
    [promoted] = [e for v in doc["versions"] for e in v["events"] if e["type"] == "Promoted"]
    assert (promoted["payload"]["memory_id"], promoted["payload"]["long_term_id"]) == (1, 4)
    assert not UUID.search(json.dumps([v["events"] for v in doc["versions"]]))


@pytest.mark.anyio
async def test_mcp_audit_and_history_of_a_working_note_show_ids_a_tool_accepts(db_path: Path) -> None:
    app = LedgerApp(Settings(db=str(db_path), client="test", agent_id="pytest"))
    try:
        note = app.remember("maybe use redis", tier="working", session_id="s1", turn=1)["memory_id"]
        app.update(note, content="use memcached", turn=2)
        app.reinforce(note, "user_affirmed", turn=3)
        long_id = app.conversations.promote(note)["promoted_to"]
        async with Client(build_server(app)) as c:
            audit = _body(await c.call_tool("memory_review", {"view": "audit", "data": {"memory_id": note}}))
            history = _body(await c.call_tool("memory_review", {"view": "history", "data": {"memory_id": note}}))
            whole = _body(await c.call_tool("memory_review", {"view": "audit", "data": {}}))
    finally:
        app.close()
    assert [e["type"] for e in audit["events"]] == ["Promoted", "Reinforced", "WorkingRevised", "WorkingNoted"]
    assert all(e["memory_id"] == note == e["payload"]["memory_id"] for e in audit["events"])
    assert audit["events"][0]["payload"]["long_term_id"] == long_id
    [recorded] = [e for e in whole["events"] if e["type"] == "MemoryRecorded"]
    assert recorded["payload"]["promoted_from_id"] == note
    assert [v["content"] for v in history["versions"]] == ["maybe use redis", "use memcached"]
    for answer in (audit, history, whole):
        payloads = [e["payload"] for e in answer.get("events", [])] + [
            e["payload"] for v in answer.get("versions", []) for e in v["events"]
        ]
        assert not UUID.search(json.dumps(payloads)), payloads


def _body(result: mcp_types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict) and result.structured_content["ok"], result
    return result.structured_content


def _statuses(db: Path, memory_id: str) -> list[tuple[str, str]]:
    """(version line's events, status) of each version ``ledger history`` prints."""
    out = cli(db, "history", memory_id).stdout
    return [
        (line.split("[", 1)[1].split("]", 1)[0], line.rsplit("(", 1)[1].rstrip(")"))
        for line in out.splitlines()
        if line.startswith("v")
    ]


def test_an_erased_working_note_ends_its_history_with_an_erased_version_as_a_memory_does(db_path: Path) -> None:
    """An erased note showed one version, ``erased`` from its first event on, where an erased
    long-term memory shows its versions active and the erasure as the last one."""
    assert cli(db_path, "init").exit_code == 0
    cli(db_path, "remember", "the staging port is 8080")  # #1, long-term
    cli(db_path, "remember", "maybe use redis", "--tier", "working", "--session", "s1", "--turn", "1")  # #2
    cli(db_path, "update", "2", "use memcached", "--turn", "2")
    for memory_id in ("1", "2"):
        assert cli(db_path, "erase", memory_id, "--reason", "asked").exit_code == 0
    assert _statuses(db_path, "1") == [("MemoryRecorded", "active"), ("Erased", "erased")]
    assert _statuses(db_path, "2") == [("WorkingNoted", "active"), ("WorkingRevised", "active"), ("Erased", "erased")]
    long_term = json.loads(cli(db_path, "--json", "history", "1").stdout)["versions"]
    note = json.loads(cli(db_path, "--json", "history", "2").stdout)["versions"]
    for versions in (long_term, note):
        last = versions[-1]
        assert [e["type"] for e in last["events"]] == ["Erased"]
        assert last["valid_to"] == last["events"][0]["event_time"] and last["content"] == "[erased]"
        assert last["changed_from"] == {"valid_to": None, "status": "active"}
    read = json.loads(cli(db_path, "--json", "read", "2").stdout)["memory"]
    assert (read["status"], read["version"]) == ("erased", note[-1]["version"])  # read and history agree


def test_read_of_an_erased_working_note_says_until_when_as_a_memory_does(db_path: Path) -> None:
    """``read`` of an erased note had no ``valid_to`` (its human form no "until …"), where an
    erased long-term memory's ``read`` gives the erasure's time and the note's ``history`` did too."""
    assert cli(db_path, "init").exit_code == 0
    cli(db_path, "remember", "the staging port is 8080")  # #1, long-term
    cli(db_path, "remember", "maybe use redis", "--tier", "working", "--session", "s1", "--turn", "1")  # #2
    for memory_id in ("1", "2"):
        assert cli(db_path, "erase", memory_id, "--reason", "asked").exit_code == 0
    for memory_id in ("1", "2"):
        read = json.loads(cli(db_path, "--json", "read", memory_id).stdout)["memory"]
        erasure = json.loads(cli(db_path, "--json", "audit", "--memory-id", memory_id, "--type", "Erased").stdout)
        erased_at = erasure["events"][0]["event_time"]
        assert (read["status"], read["valid_to"]) == ("erased", erased_at), read
        history = json.loads(cli(db_path, "--json", "history", memory_id).stdout)["versions"]
        assert history[-1]["valid_to"] == erased_at  # read and history agree
        said = cli(db_path, "read", memory_id).stdout
        assert f"until {erased_at}; recorded" in said, said


def test_a_ledger_folded_before_the_column_gets_it_on_its_next_open(db_path: Path) -> None:
    """The read model of a ledger opened by the version before had no place for the time: the new
    projection version rebuilds it once, by itself."""
    assert cli(db_path, "init").exit_code == 0
    cli(db_path, "remember", "maybe use redis", "--tier", "working", "--session", "s1", "--turn", "1")
    assert cli(db_path, "erase", "1").exit_code == 0
    app = LedgerApp(Settings(db=str(db_path)))
    try:  # as version 3 of the read model left it: no column
        app.conn.execute("ALTER TABLE working_memories DROP COLUMN valid_to")
        app.conn.execute("UPDATE projection_checkpoints SET version=3 WHERE name='conversations'")
    finally:
        app.close()
    read = json.loads(cli(db_path, "--json", "read", "1").stdout)["memory"]
    assert read["status"] == "erased" and read["valid_to"], read


def test_read_of_an_erased_working_note_gives_the_erasure_reason_as_a_memory_does(db_path: Path) -> None:
    """``read`` of an erased note had no ``status_reason`` (its human form no "erased: <reason>"
    line), where an erased long-term memory's ``read`` gives the reason the erasure recorded."""
    assert cli(db_path, "init").exit_code == 0
    cli(db_path, "remember", "the staging port is 8080")  # #1, long-term
    cli(db_path, "remember", "maybe use redis", "--tier", "working", "--session", "s1", "--turn", "1")  # #2
    for memory_id in ("1", "2"):
        assert cli(db_path, "erase", memory_id, "--reason", "asked by the user").exit_code == 0
    for memory_id in ("1", "2"):
        read = json.loads(cli(db_path, "--json", "read", memory_id).stdout)["memory"]
        assert (read["status"], read.get("status_reason")) == ("erased", "asked by the user"), read
        said = cli(db_path, "read", memory_id).stdout
        assert "erased: asked by the user" in said, said


def test_a_ledger_folded_before_the_reason_column_gets_it_on_its_next_open(db_path: Path) -> None:
    """The read model as version 4 left it had no place for the erasure's reason: version 5
    rebuilds it once, by itself."""
    assert cli(db_path, "init").exit_code == 0
    cli(db_path, "remember", "maybe use redis", "--tier", "working", "--session", "s1", "--turn", "1")
    assert cli(db_path, "erase", "1", "--reason", "asked").exit_code == 0
    app = LedgerApp(Settings(db=str(db_path)))
    try:
        app.conn.execute("ALTER TABLE working_memories DROP COLUMN status_reason")
        app.conn.execute("UPDATE projection_checkpoints SET version=4 WHERE name='conversations'")
    finally:
        app.close()
    read = json.loads(cli(db_path, "--json", "read", "1").stdout)["memory"]
    assert (read["status"], read.get("status_reason")) == ("erased", "asked"), read


def test_read_of_a_working_note_as_of_a_point_says_it_has_no_past(db_path: Path) -> None:
    """docs/contract.md, ``read``: a working note has no time-travel states; as of a point it is
    ``not_found`` saying so, where a long-term memory answers as of that point."""
    assert cli(db_path, "init").exit_code == 0
    cli(db_path, "remember", "maybe use redis", "--tier", "working", "--session", "s1", "--turn", "1")  # #1
    cli(db_path, "remember", "the staging port is 8080")  # #2, long-term
    note = cli(db_path, "--json", "read", "1", "--as-of-recorded", "2")
    error = json.loads(note.stdout)["error"]
    assert note.exit_code == 1 and error["code"] == "not_found" and "working note" in error["message"], error
    read = json.loads(cli(db_path, "--json", "read", "2", "--as-of-recorded", "2").stdout)
    assert read["memory"]["tier"] == "long" and read["as_of"]["recorded_position"] == 2, read
