"""The ``ledger`` CLI: every command documented with an example, --json everywhere, exit codes."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from fact_ledger.server.cli.main import main
from tests.conftest import ledger_cli


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_has_an_example_in_its_help(name: str) -> None:
    code, out = run(name, "--help")
    assert code == 0
    assert "Example:" in out, f"`ledger {name} --help` has no example"


def _every_command(group: click.Group, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], click.Command]:
    out: dict[tuple[str, ...], click.Command] = {path: group}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out.update(_every_command(command, (*path, name)))
        else:
            out[(*path, name)] = command
    return out


@pytest.mark.parametrize("path", sorted(_every_command(main)), ids=lambda p: " ".join(p) or "ledger")
def test_every_example_in_a_help_is_one_whole_line(path: tuple[str, ...]) -> None:
    """Rewrapped, ``update --help`` broke its example at ``--expected-`` / ``version 1`` and
    ``remember --help`` ran its two examples into one line: neither pasted as written. Each
    example the docstring gives is one line of the help, however narrow the terminal."""
    command = _every_command(main)[path]
    doc = inspect.getdoc(command.callback) or ""
    examples = [
        example
        for paragraph in doc.split("\n\n")
        for example in re.findall(r"Example: (.*?)(?= Example: |$)", " ".join(paragraph.split()))
    ]
    result = CliRunner().invoke(main, [*path, "--help"], terminal_width=60)
    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.output.splitlines()]
    for example in examples:
        assert f"Example: {example}" in lines, (example, result.output)


def test_remember_find_read_history_round_trip(db_path: Path) -> None:
    db = str(db_path)
    code, out = run(
        "remember",
        "The staging API listens on port 8080",
        "--subject",
        "staging",
        "--tag",
        "infra",
        "--db",
        db,
        "--json",
    )
    assert code == 0
    mid = json.loads(out)["memory_id"]
    code, out = run("find", "staging port", "--db", db, "--json")
    hit = json.loads(out)["results"][0]
    assert hit["memory_id"] == mid and hit["tags"] == ["infra"] and hit["source_type"] == "user_confirmed"
    code, out = run("--db", db, "--json", "read", str(mid))  # global options work too
    assert json.loads(out)["memory"]["subject"] == "staging"
    code, out = run("history", str(mid), "--db", db, "--json")
    assert [v["version"] for v in json.loads(out)["versions"]] == [1]


def test_remember_tells_a_person_what_the_write_collided_with(db_path: Path) -> None:
    db = str(db_path)
    code, out = run("remember", "The staging API listens on port 8080", "--subject", "staging", "--db", db)
    assert code == 0 and out.strip() == 'remembered #1 in the default workspace ("")'
    code, out = run(
        "remember",
        "The staging API listens on port 9090",
        "--subject",
        "staging",
        "--source-type",
        "agent_generated",
        "--db",
        db,
    )
    first, conflict = out.strip().splitlines()  # #1 is in the conflict: not listed again as similar
    assert code == 0 and first.startswith("remembered #")
    # The conflict with its claim and the arbitration's outcome (the user-confirmed fact leads).
    assert "conflict" in conflict and "(2 members)" in conflict and "'9090'" in conflict
    assert "#1 leads by user_confirmed/locked protection" in conflict
    code, out = run("remember", "The staging API listens on port 8080", "--subject", "staging", "--db", db)
    assert code == 0 and out.strip() == 'already remembered as #1 in the default workspace ("") (seen again)'


def test_read_shows_time_tags_and_links(db_path: Path) -> None:
    db = str(db_path)
    run(
        "remember",
        "The staging API listens on port 8080",
        "--subject",
        "staging",
        "--tag",
        "infra",
        "--event-time",
        "2026-01-05T10:00:00Z",
        "--db",
        db,
    )
    run("remember", "The staging API listens on port 9090", "--subject", "staging", "--db", db)
    run("resolve", "3", "--winner", "2", "--db", db)
    code, out = run("read", "1", "--db", db)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("#1 v2 user_confirmed (superseded) staging")
    assert lines[2].startswith("  valid from 2026-01-05T10:00:00.000000Z until ")
    assert "  tags: infra" in lines and "  superseded by #2" in lines
    assert "  superseded: conflict 3 resolved" in lines  # the reason the ledger recorded
    code, out = run("read", "2", "--db", db)
    assert "  supersedes #1" in out.splitlines()


def test_remember_retracts_an_earlier_fact(db_path: Path) -> None:
    db = str(db_path)
    run("remember", "Team meeting on Wednesday at 3pm", "--subject", "team meeting", "--db", db)  # locked
    code, out = run("remember", "Cancel the Wednesday meeting", "--retracts", "1", "--db", db, "--json")
    cancel = json.loads(out)["memory_id"]
    code, out = run("read", "1", "--db", db, "--json")
    memory = json.loads(out)["memory"]
    assert code == 0 and memory["status"] == "retired" and memory["retired_by"] == cancel
    code, out = run("remember", "Cancel nothing", "--retracts", "99", "--db", db, "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "not_found"


def test_errors_are_json_with_a_code_and_exit_1(db_path: Path) -> None:
    code, out = run("read", "999", "--db", str(db_path), "--json")
    assert code == 1
    assert json.loads(out)["error"]["code"] == "not_found"
    code, out = run("remember", "x", "--event-time", "yesterday-ish", "--db", str(db_path), "--json")
    assert code == 1 and json.loads(out)["error"]["field"] == "event_time"


def test_export_import_round_trip_is_idempotent(tmp_path: Path) -> None:
    src, dst, dump = str(tmp_path / "a.db"), str(tmp_path / "b.db"), str(tmp_path / "dump.jsonl")
    for text in ("fact one", "fact two", "事实三"):
        run("remember", text, "--db", src)
    _, out = run("export", "--db", src, "-o", dump, "--json")
    assert json.loads(out)["events"] == 3
    _, out = run("import", dump, "--db", dst, "--json")
    assert json.loads(out)["appended"] == 3
    _, out = run("import", dump, "--db", dst, "--json")
    again = json.loads(out)
    assert again["appended"] == 0 and again["already_present"] == 3
    _code, out = run("find", "事实", "--db", dst, "--json")
    assert json.loads(out)["results"][0]["content"] == "事实三"


def test_rebuild_and_verify_via_the_console_script(db_path: Path) -> None:
    db = str(db_path)
    run("remember", "a fact to rebuild", "--db", db)
    result = ledger_cli("rebuild", "--db", db, "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["events"] == 1
    result = ledger_cli("verify", "--db", db)
    assert result.returncode == 0 and "intact" in result.stdout
    result = ledger_cli("rebuild", "--projection", "nope", "--db", db, "--json")
    error = json.loads(result.stdout)["error"]
    assert result.returncode == 1 and error["field"] == "projection"
    assert error["message"].endswith(", vectors")  # every name --projection takes, vectors too


def test_a_write_to_an_unreadable_database_says_where_it_went(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    db.write_bytes(b"SQLite format 3\x00" + b"a ledger overwritten by accident past its header\n" * 200)
    code, out = run("remember", "the vpn gateway is 10.0.0.1", "--db", str(db))
    backup = tmp_path / "ledger.backup.jsonl"
    assert code == 3 and out.startswith("not in the database (corrupt): 1 event(s) kept in the backup")
    assert str(backup) in out and "ledger replay-backup --apply" in out
    assert len(backup.read_text().splitlines()) == 1
    code, out = run("status", "--db", str(db))
    lines = out.splitlines()
    assert code == 2 and lines[0].startswith("degraded since ") and "(corrupt)" in lines[0]  # docs/cli.md
    assert lines[1] == f"  backup awaiting replay: 1 write (1 event) in {backup} (ledger replay-backup)"
    code, out = run("replay-backup", "--db", str(db))
    assert code == 0 and "would append 1, already present unknown (database unreadable)" in out


def test_status_speaks_plainly_without_json(db_path: Path) -> None:
    run("remember", "counted", "--db", str(db_path))
    doc = json.loads(run("status", "--db", str(db_path), "--json")[1])
    code, out = run("status", "--db", str(db_path))
    assert code == 0 and out.splitlines() == [
        f"{db_path}: 1 event, 1 active memory, 0 open conflicts",
        f"  {len(doc['projections'])} projections up to date; search: {doc['search_mode']}",
    ]


def test_import_names_each_bad_line_and_why(tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"schema": 1, "event": {"stream_id": "s"}}\nnot json\n' + "x\n" * 20)
    code, out = run("import", str(dump), "--db", str(tmp_path / "l.db"))
    lines = out.splitlines()
    assert code == 4 and lines[0] == "appended 0, already present 0, bad lines 22"
    assert lines[1] == "  line 1: bad event: missing field 'type'" and lines[2].startswith("  line 2: not JSON")
    assert len(lines) == 1 + 20 + 1 and lines[-1] == "  and 2 more bad line(s)"


def test_review_speaks_plainly_without_json(db_path: Path) -> None:
    db = str(db_path)
    run("remember", "The staging API listens on port 8080", "--subject", "staging", "--db", db)
    run(
        "remember",
        "The staging API listens on port 9090",
        "--subject",
        "staging",
        "--source-type",
        "agent_generated",
        "--db",
        db,
    )
    run("remember", "Backups run at 02:00", "--workspace", "infra", "--db", db)
    code, out = run("review", "--db", db)
    assert code == 0 and out.splitlines() == [
        "memories: active 3",
        "  active by source: agent_generated 1, user_confirmed 2",
        "  active by workspace: (default) 2, infra 1",
        "conflicts: 1 open, 0 judged, 0 resolved",
    ]


def test_status_reports_counts(db_path: Path) -> None:
    run("remember", "counted", "--db", str(db_path))
    _code, out = run("status", "--db", str(db_path), "--json")
    doc = json.loads(out)
    assert doc["events"] == 1 and doc["memories"] == 1 and doc["search_mode"] in ("fts", "vector+fts")
