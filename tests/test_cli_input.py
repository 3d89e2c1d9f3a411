"""The CLI as a new user meets it: explicit paths are never created by accident, content comes
from stdin or a file, ``update`` exists, and every exit code means one documented thing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fact_ledger.ledger.errors import Unavailable
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli import exit_codes
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Settings
from tests.conftest import REPO, ledger_cli

NO_CREATE = {"LEDGER_CREATE": ""}  # as a user's shell has it


def cli(*args: str, stdin: str | None = None, create: bool = True) -> subprocess.CompletedProcess[str]:
    env = None if create else NO_CREATE
    if stdin is None:
        return ledger_cli(*args, env=env)
    import os

    return subprocess.run(
        [sys.executable, "-m", "fact_ledger.server", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=REPO,
        timeout=60,
    )


def doc(result: subprocess.CompletedProcess[str]) -> dict:
    return json.loads(result.stdout)


# -- an explicit path that holds no ledger ----------------------------------------------------
def test_a_mistyped_path_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    db = tmp_path / "nope" / "dir" / "x.db"
    for args in (("remember", "fact"), ("find", "fact"), ("status",)):
        r = cli("--db", str(db), *args, create=False)
        assert r.returncode == exit_codes.UNAVAILABLE, (args, r.stderr)
        assert f"no ledger at {db}" in r.stderr and "ledger init" in r.stderr
    assert not (tmp_path / "nope").exists()


def test_an_empty_file_is_no_ledger_until_init_makes_one(tmp_path: Path) -> None:
    """``touch x.db`` (or a temporary file's name): SQLite would make a database of it silently."""
    db = tmp_path / "touched.db"
    db.touch()
    for args in (("remember", "fact"), ("find", "fact"), ("status",)):  # as for a path with nothing at it
        r = cli("--db", str(db), *args, create=False)
        assert r.returncode == exit_codes.UNAVAILABLE, (args, r.stderr)
        assert f"no ledger at {db}" in r.stderr
    assert db.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["touched.db"]
    from fact_ledger.server.app.facade import LedgerApp  # what `ledger serve` opens
    from fact_ledger.server.config import Settings

    served = LedgerApp(Settings(db=str(db), create=False))
    try:
        assert served.status()["degraded"]["reason"] == "missing"
        with pytest.raises(Unavailable, match="no ledger at"):
            served.remember("a fact for a touched file")
    finally:
        served.close()
    assert db.stat().st_size == 0
    made = cli("init", "--db", str(db), "--json", create=False)
    assert doc(made) == {"ok": True, "db": str(db), "created": True, "events": 0}
    assert cli("--db", str(db), "remember", "kept", create=False).returncode == 0
    assert doc(cli("init", "--db", str(db), "--json", create=False))["created"] is False


def test_init_or_create_makes_the_ledger_and_init_keeps_an_existing_one(tmp_path: Path) -> None:
    db = tmp_path / "team" / "ledger.db"
    made = cli("init", "--db", str(db), "--json", create=False)
    assert made.returncode == 0 and doc(made) == {"ok": True, "db": str(db), "created": True, "events": 0}
    assert cli("--db", str(db), "remember", "kept", create=False).returncode == 0
    again = cli("init", "--db", str(db), "--json", create=False)
    assert doc(again)["created"] is False and doc(again)["events"] == 1
    other = tmp_path / "other.db"
    assert cli("--create", "--db", str(other), "remember", "fact", create=False).returncode == 0
    assert other.exists()


def test_the_default_path_is_still_created_implicitly(tmp_path: Path) -> None:
    env = {**NO_CREATE, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}
    env.pop("LEDGER_DB", None)
    r = ledger_cli("remember", "first fact on a new machine", env={**env, "LEDGER_DB": ""})
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "data" / "fact-ledger" / "ledger.db").exists()


# -- content from stdin and files --------------------------------------------------------------
def test_remember_reads_stdin_and_files_and_refuses_blank_or_bare_dash(tmp_path: Path) -> None:
    db = str(tmp_path / "l.db")
    piped = cli("--db", db, "--json", "remember", "-", "--subject", "release", stdin="Piped release note\n")
    assert piped.returncode == 0, piped.stderr
    big = tmp_path / "big.txt"
    big.write_text("A long design note. " * 10000)  # 200 KB: more than one shell argument holds
    from_file = cli("--db", db, "--json", "remember", "--file", str(big), "--confidence", "0.7")
    assert from_file.returncode == 0, from_file.stderr
    for args, stdin in (
        (("remember", "-"), ""),
        (("remember", "-"), "  \n"),
        (("remember", "--file", "-"), "-"),
        (("remember", ""), None),
        (("remember", "--file", str(tmp_path / "missing.txt")), None),
        (("remember",), None),
        (("remember", "text", "--file", str(big)), None),
    ):
        bad = cli("--db", db, "--json", *args, stdin=stdin)
        assert bad.returncode == exit_codes.REFUSED and doc(bad)["error"]["code"] == "invalid_input", args
    read = doc(cli("--db", db, "--json", "read", str(doc(piped)["memory_id"])))["memory"]
    assert read["content"] == "Piped release note" and read["subject"] == "release"  # the pipe's newline goes
    long = doc(cli("--db", db, "--json", "read", str(doc(from_file)["memory_id"])))["memory"]
    assert long["content"] == big.read_text().rstrip() and long["confidence"] == 0.7
    assert doc(cli("--db", db, "--json", "status"))["events"] == 2  # the refusals wrote nothing


def test_update_from_the_cli_with_expected_version_and_fields(tmp_path: Path) -> None:
    db = str(tmp_path / "l.db")
    memory_id = str(doc(cli("--db", db, "--json", "remember", "The staging API listens on port 8080"))["memory_id"])
    same = cli("--db", db, "--json", "update", memory_id, "The staging API listens on port 8080")
    assert doc(same) == {"ok": True, "memory_id": int(memory_id), "version": 1, "unchanged": True}
    changed = cli(
        "--db",
        db,
        "--json",
        "update",
        memory_id,
        "-",
        "--expected-version",
        "1",
        "--confidence",
        "0.4",
        "--tag",
        "infra",
        stdin="The staging API listens on port 8081",
    )
    assert changed.returncode == 0 and doc(changed)["version"] == 2
    stale = cli("--db", db, "--json", "update", memory_id, "--confidence", "0.9", "--expected-version", "1")
    assert stale.returncode == exit_codes.REFUSED and doc(stale)["error"]["code"] == "version_conflict"
    memory = doc(cli("--db", db, "--json", "read", memory_id))["memory"]
    assert (memory["content"], memory["confidence"], memory["tags"], memory["version"]) == (
        "The staging API listens on port 8081",
        0.4,
        ["infra"],
        2,
    )
    human = cli("--db", db, "update", memory_id, "--confidence", "0.4")
    assert human.returncode == 0 and "unchanged" in human.stdout


# -- exit codes --------------------------------------------------------------------------------
def test_exit_codes_a_script_can_trust(tmp_path: Path) -> None:
    db = str(tmp_path / "l.db")
    assert cli("--db", db, "remember", "The office coffee machine is on floor 2").returncode == exit_codes.OK
    csv = tmp_path / "r.csv"
    assert cli("--db", db, "export", "--format", "csv", "-o", str(csv)).returncode == exit_codes.OK
    refused = cli("--db", db, "import", str(csv))
    assert refused.returncode == exit_codes.REFUSED and "export-only" in refused.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert cli("--db", db, "import", str(bad)).returncode == exit_codes.PARTIAL
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"SQLite format 3\x00" + b"a ledger overwritten past its header\n" * 400)
    for command in ("doctor", "verify"):
        broken = cli("--db", str(corrupt), command)
        assert broken.returncode == exit_codes.BROKEN, (command, broken.stderr)
    backed_up = cli("--db", str(corrupt), "remember", "kept somewhere")
    assert backed_up.returncode == exit_codes.BACKUP_ONLY and "backup" in backed_up.stdout
    assert cli("--db", db, "read", "999").returncode == exit_codes.REFUSED
    assert cli("--db", db, "--no-such-option").returncode == exit_codes.USAGE
    assert cli("--db", db, "read").returncode == exit_codes.USAGE
    assert cli("--db", str(tmp_path / "none.db"), "status", create=False).returncode == exit_codes.UNAVAILABLE


def test_the_exit_code_table_has_one_meaning_per_code() -> None:
    codes = [code for code, commands, _ in exit_codes.TABLE if commands != "doctor"]
    assert len(codes) == len(set(codes))
    assert {
        exit_codes.OK,
        exit_codes.REFUSED,
        exit_codes.BROKEN,
        exit_codes.BACKUP_ONLY,
        exit_codes.PARTIAL,
        exit_codes.UNAVAILABLE,
        exit_codes.USAGE,
    } == set(codes)


@pytest.mark.slow
def test_serve_from_a_terminal_says_where_it_serves(tmp_path: Path) -> None:
    import os
    import pty
    import select

    db = tmp_path / "l.db"
    primary, secondary = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "fact_ledger.server", "serve", "--db", str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=secondary,
        cwd=REPO,
    ) as proc:
        os.close(secondary)
        try:
            line = b""
            while b"\n" not in line and select.select([primary], [], [], 30)[0]:
                line += os.read(primary, 1024)
        finally:
            proc.kill()
            os.close(primary)
    assert line.decode().strip() == f"fact-ledger: serving {db} over stdio (Ctrl-C to stop)"


def test_serve_lines_name_the_http_url_and_a_missing_database(tmp_path: Path) -> None:
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings
    from fact_ledger.server.mcp.server import start_lines

    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        assert start_lines(app, http=True, port=8123, terminal=True) == [
            f"fact-ledger: serving {tmp_path / 'l.db'} over streamable HTTP at http://127.0.0.1:8123/mcp "
            "(Ctrl-C to stop)"
        ]
        assert start_lines(app, http=False, port=1, terminal=False) == []  # a client's pipe: silence
    finally:
        app.close()
    missing = LedgerApp(Settings(db=str(tmp_path / "typo.db"), create=False))
    try:
        lines = start_lines(missing, http=False, port=1, terminal=False)
        assert len(lines) == 1 and "database unusable (missing)" in lines[0] and "ledger init" in lines[0]
        assert missing.status()["degraded"]["reason"] == "missing"
        with pytest.raises(Unavailable, match="no ledger at"):
            missing.remember("a fact for a mistyped path")
    finally:
        missing.close()
    assert not (tmp_path / "typo.db").exists() and not (tmp_path / "typo.backup.jsonl").exists()


# -- ids: ASCII digits within SQLite's integer range -----------------------------------------
@pytest.mark.parametrize("given", ["99999999999999999999999", "٣", "²", "1e3"])
@pytest.mark.parametrize("command", [("read",), ("conflict",), ("history",), ("retire", "--reason", "old")])
def test_an_id_past_sqlite_or_in_other_digits_is_a_usage_error(
    tmp_path: Path, command: tuple[str, ...], given: str
) -> None:
    """``conflict 99999999999999999999999`` was a traceback (an overflowing bind), and ``read ٣``
    read memory 3 (``int`` takes other scripts' digits)."""
    r = cli("--db", str(tmp_path / "l.db"), command[0], given, *command[1:])  # refused before the ledger opens
    assert r.returncode == exit_codes.USAGE, r.stderr
    assert "Traceback" not in r.stderr and "is not" in r.stderr, r.stderr


def test_an_as_of_position_in_other_digits_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    assert cli("--db", str(db), "remember", "The staging API listens on port 8080").returncode == 0
    r = cli("--db", str(db), "find", "staging", "--as-of-recorded", "٣", "--json")
    assert r.returncode == exit_codes.REFUSED and doc(r)["error"]["field"] == "as_of_recorded", r.stdout


@pytest.mark.parametrize("server", ["serve", "console"])
def test_the_two_servers_take_no_json_after_their_name(tmp_path: Path, server: str) -> None:
    """docs/cli.md: MCP speaks on stdout, the console prints its address; a usage error, not a hang."""
    r = cli(server, "--json", "--db", str(tmp_path / "l.db"))
    assert r.returncode == exit_codes.USAGE and "No such option '--json'" in r.stdout + r.stderr, r.stderr


def test_the_cli_keeps_the_tools_limits_and_says_what_an_update_refuses(tmp_path: Path) -> None:
    """``working ""`` answered an empty set and ``alias`` took a 300-character name (the tools
    refuse both); a blank ``update`` said "nothing to remember"."""
    db = str(tmp_path / "ledger.db")
    runner = CliRunner()
    assert runner.invoke(main, ["--db", db, "--create", "remember", "a fact"]).exit_code == 0
    empty = runner.invoke(main, ["--db", db, "working", ""])
    assert empty.exit_code == 1 and "SESSION: at least 1 character" in empty.output + empty.stderr
    long = runner.invoke(main, ["--db", db, "alias", "a" * 300, "kubernetes"])
    assert long.exit_code == 1 and "at most 256 characters" in long.output + long.stderr
    blank = runner.invoke(main, ["--db", db, "update", "1", "   "])
    said = blank.output + blank.stderr
    assert blank.exit_code == 1 and "cannot be blank" in said and "nothing to remember" not in said
    app = LedgerApp(Settings(db=db))
    try:
        assert app.store.last_position() == 1  # the one fact: nothing was written
    finally:
        app.close()


@pytest.mark.parametrize("depth", [33, 500, 5000])
def test_metadata_nested_past_the_limit_is_refused_without_a_traceback(tmp_path: Path, depth: int) -> None:
    """Nested 500 deep it overflowed the credential scan's recursion (a traceback), 5000 deep the
    JSON reader's; 300 deep it was stored and then no MCP client could read the memory back."""
    db = str(tmp_path / "ledger.db")
    assert ledger_cli("--db", db, "--create", "remember", "a fact").returncode == 0
    nested = '{"a":' * depth + "1" + "}" * depth
    r = ledger_cli("--db", db, "remember", "deep", "--metadata", nested)
    said = r.stdout + r.stderr
    assert r.returncode == exit_codes.REFUSED and "Traceback" not in said, said
    assert "invalid_input" in said and "metadata" in said
    ok = ledger_cli("--db", db, "remember", "deep enough", "--metadata", '{"a":' * 32 + "1" + "}" * 32)
    assert ok.returncode == 0, ok.stderr


def test_a_blank_conversation_id_is_refused_like_an_empty_one(tmp_path: Path) -> None:
    """``--session "   "`` kept a working set under a name of spaces, and ``working "   "`` read it."""
    db = str(tmp_path / "ledger.db")
    runner = CliRunner()
    assert runner.invoke(main, ["--db", db, "--create", "remember", "a fact"]).exit_code == 0
    for args, name in (
        (["working", "   "], "SESSION"),  # an argument: named as the usage line names it
        (["remember", "a note", "--session", "   ", "--tier", "working"], "--session"),
    ):
        r = runner.invoke(main, ["--db", db, *args])
        assert r.exit_code == exit_codes.REFUSED and f"{name}: must not be blank" in r.output + r.stderr, args


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["remember", "a note", "--tag", ""], "--tag: at least 1 character(s)"),
        (["remember", "a note", "--subject", "s" * 2001], "--subject: at most 2000 characters"),
        (["audit", "--type", "Bogus"], "--type: 'Bogus' is not an event type; the log writes"),
        (["read", "1", "--sections", "abc"], "--sections: section ids are positive integers"),
        (["timeline"], "give either --subject or MEMORY_ID"),
        # a blank subject listed every memory stored without one (the MCP refuses it)
        (["timeline", "--subject", ""], "--subject must not be blank"),
        (["timeline", "--subject", "  "], "--subject must not be blank"),
        (["audit", "--actor", ""], "--actor must not be blank"),  # it answered "no events match"
        (["alias", "", "kubernetes"], "ALIAS: at least 1 character(s)"),
        (["alias", "k8s", "k8s"], "ALIAS and CANONICAL must be two different"),
        (["whatif", "--rules", "protection,protection"], "--rules must name each of the five rules once"),
        (["working", ""], "SESSION: at least 1 character(s)"),
    ],
)
def test_a_refused_value_is_named_as_the_command_line_takes_it(tmp_path: Path, args: list[str], said: str) -> None:
    """A check of one field's value named the field as the MCP does ("tags.0: at least 1
    character(s)", "subject: at most 2000 characters", "rule_order must name …", "give either
    subject or memory_id"), not the option or argument a person typed; ``--json`` keeps the
    contract's field name."""
    db = str(tmp_path / "ledger.db")
    runner = CliRunner()
    assert runner.invoke(main, ["--db", db, "--create", "remember", "a fact"]).exit_code == 0
    r = runner.invoke(main, ["--db", db, *args])
    assert r.exit_code == exit_codes.REFUSED and said in r.stderr, (args, r.stderr)
    field = json.loads(runner.invoke(main, ["--db", db, "--json", *args]).stdout)["error"]["field"]
    assert not field.startswith("-") and not field.isupper(), field


def test_notices_refuses_both_dismiss_and_resolve(tmp_path: Path) -> None:
    """``--dismiss 1 --resolve 2`` dismissed notice 1 and said nothing of notice 2."""
    db = str(tmp_path / "ledger.db")
    runner = CliRunner()
    assert runner.invoke(main, ["--db", db, "--create", "remember", "a fact"]).exit_code == 0
    both = ["notices", "--dismiss", "1", "--resolve", "2"]
    human = runner.invoke(main, ["--db", db, *both])
    assert human.exit_code == exit_codes.USAGE and "give one of --dismiss ID or --resolve ID" in human.stderr
    as_json = runner.invoke(main, ["--db", db, "--json", *both])
    assert as_json.exit_code == exit_codes.USAGE and json.loads(as_json.stdout)["error"]["reason"] == "usage"


def test_the_cli_module_runs_as_a_script_too() -> None:
    """``python -m fact_ledger.server.cli.main serve`` (a client configured with the module's
    path) printed nothing and exited 0: the module defined the command and never ran it."""
    r = subprocess.run(
        [sys.executable, "-m", "fact_ledger.server.cli.main", "--help"], capture_output=True, text=True, cwd=REPO
    )
    assert r.returncode == 0 and "Usage:" in r.stdout and "remember" in r.stdout
