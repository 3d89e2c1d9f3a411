"""Where the CLI is pointed: a path that is not a ledger, a missing config file, the base install.

Issue 29, points 2-4: each refusal is one clear line with the documented exit code
(docs/cli.md), and nothing is written to the path or beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner, Result

from fact_ledger.server.cli import exit_codes
from fact_ledger.server.cli.main import main
from fact_ledger.server.cli.model import SEMANTIC_INSTALL
from tests.base_install import base_cli
from tests.conftest import REPO, ledger_cli


def cli(*args: str) -> Result:
    """The real CLI in-process (the subprocess form is tested above for what needs one)."""
    return CliRunner().invoke(main, list(args))


def _files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.mark.parametrize("command", [["model", "list"], ["model", "install"]])
def test_model_commands_on_the_base_install_say_to_install_the_semantic_extra(command: list[str]) -> None:
    human = base_cli(*command)
    assert human.returncode == exit_codes.UNAVAILABLE, human.stderr
    assert "Traceback" not in human.stderr
    assert human.stderr.startswith(f"error (unavailable): install the semantic extra first: {SEMANTIC_INSTALL}")
    as_json = base_cli("--json", *command)
    error = json.loads(as_json.stdout)["error"]
    assert as_json.returncode == exit_codes.UNAVAILABLE and error["reason"] == "semantic_extra_missing"
    assert "numpy" in error["missing"]


def test_the_semantic_extra_command_is_the_readmes() -> None:
    assert SEMANTIC_INSTALL in (REPO / "README.md").read_text(encoding="utf-8")


def test_a_missing_config_file_is_named_not_a_traceback(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.toml")
    for result in (
        ledger_cli("status", env={"LEDGER_CONFIG": missing}),
        ledger_cli("serve", "--config", missing),
        ledger_cli("console", "--no-open", "--config", missing),
    ):
        assert result.returncode == exit_codes.REFUSED, result.stderr
        said = f"error (invalid_input): config file {missing} cannot be read: No such file or directory\n"
        assert result.stderr == said
    doc = json.loads(ledger_cli("--json", "find", "x", env={"LEDGER_CONFIG": missing}).stdout)
    assert doc["error"]["field"] == "LEDGER_CONFIG" and missing in doc["error"]["message"]
    assert not (tmp_path / "missing.toml").exists()


def _foreign_sqlite(path: Path) -> Path:
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE photos(id INTEGER PRIMARY KEY, name TEXT)")
    conn.close()
    return path


@pytest.mark.parametrize(
    ("kind", "code", "reason"),
    [
        ("directory", exit_codes.UNAVAILABLE, "cant_open"),
        ("text file", exit_codes.BROKEN, "not_a_ledger"),
        ("another program's SQLite database", exit_codes.BROKEN, "not_a_ledger"),
    ],
)
def test_a_path_that_is_not_a_ledger_is_refused_and_nothing_is_written(
    tmp_path: Path, kind: str, code: int, reason: str
) -> None:
    folder = tmp_path / "here"
    folder.mkdir()
    if kind == "directory":
        target = folder / "notes"
        target.mkdir()
    elif kind == "text file":
        target = folder / "notes.txt"
        target.write_text("my notes, not a ledger\n")
    else:
        target = _foreign_sqlite(folder / "photos.db")
    before = _files(folder), target.read_bytes() if target.is_file() else None
    db = str(target)
    # LEDGER_CREATE is set for the test session: even asked to create, a path with something else is refused.
    status = cli("--db", db, "status")
    assert status.exit_code == code, status.stderr
    assert status.stdout.startswith("degraded since ") and f"({reason}): {db} is not a ledger" in status.stdout
    assert json.loads(cli("--db", db, "--json", "status").stdout)["degraded"]["reason"] == reason
    source, exported, out = tmp_path / "source.db", tmp_path / "source.jsonl", tmp_path / "out.jsonl"
    assert cli("--db", str(source), "remember", "the vpn gateway is 10.0.0.9").exit_code == 0
    assert cli("--db", str(source), "export", "-o", str(exported)).exit_code == 0
    for args in (
        ["remember", "the vpn gateway is 10.0.0.1"],
        ["init"],
        ["find", "vpn"],
        ["doctor"],
        ["import", str(exported)],  # it said "appended 1" and stored nothing
        ["export"],  # it printed nothing and exited 0
        ["export", "-o", str(out)],
        ["export", "--format", "csv"],
    ):
        result = cli("--db", db, *args)
        assert result.exit_code == code, (args, result.stdout, result.stderr)
        assert f"{db} is not a ledger" in result.stderr and "Traceback" not in result.stderr
        assert result.stdout == ""
    assert not out.exists()  # a refused export leaves no empty file
    refused = json.loads(cli("--db", db, "--json", "import", str(exported)).stdout)
    assert refused["ok"] is False and refused["error"]["reason"] == reason
    remember = json.loads(cli("--db", db, "--json", "remember", "x y z").stdout)
    assert remember["ok"] is False and remember["error"]["reason"] == reason
    assert (_files(folder), target.read_bytes() if target.is_file() else None) == before


def test_a_ledger_damaged_past_its_header_still_keeps_writes_in_the_backup(tmp_path: Path) -> None:
    """The line between the two: a file that is an SQLite database by its header was a ledger."""
    db = tmp_path / "ledger.db"
    assert ledger_cli("--db", str(db), "remember", "the vpn gateway is 10.0.0.2").returncode == 0
    raw = bytearray(db.read_bytes())
    raw[100:] = (b"overwritten by accident " * (len(raw) // 24 + 1))[: len(raw) - 100]
    db.write_bytes(bytes(raw))
    result = ledger_cli("--db", str(db), "remember", "the vpn gateway is 10.0.0.1")
    assert result.returncode == exit_codes.BACKUP_ONLY and (tmp_path / "ledger.backup.jsonl").is_file()
    assert ledger_cli("--db", str(db), "status").returncode == exit_codes.BROKEN


def test_an_output_file_in_a_missing_folder_is_refused_before_any_work(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.db")
    assert cli("--db", db, "remember", "the staging token store is vault-2").exit_code == 0
    missing = tmp_path / "nowhere" / "receipt.json"
    erase = cli("--db", db, "erase", "1", "--receipt", str(missing))
    assert erase.exit_code == exit_codes.REFUSED and "Traceback" not in erase.stderr
    assert (
        erase.stderr == f"error (invalid_input): cannot write {missing}: the folder {missing.parent} does not exist\n"
    )
    assert json.loads(cli("--db", db, "--json", "read", "1").stdout)["memory"]["status"] == "active"  # not erased
    for output in (str(tmp_path / "nowhere" / "x.jsonl"), str(tmp_path)):
        export = cli("--db", db, "export", "-o", output)
        assert export.exit_code == exit_codes.REFUSED and export.stderr.startswith(
            f"error (invalid_input): cannot write {output}: "
        )
    done = cli("--db", db, "erase", "1", "--receipt", str(tmp_path / "receipt.json"))
    assert done.exit_code == 0 and done.stdout.startswith("erased #1")
    assert json.loads((tmp_path / "receipt.json").read_text("utf-8"))["kind"] == "fact-ledger erasure receipt"


def test_an_import_into_a_read_only_ledger_is_refused_in_one_line(tmp_path: Path) -> None:
    source, ledger, exported = tmp_path / "source.db", tmp_path / "ledger.db", tmp_path / "source.jsonl"
    assert cli("--db", str(source), "remember", "the build cache holds 4GB").exit_code == 0
    assert cli("--db", str(source), "export", "-o", str(exported)).exit_code == 0
    assert cli("--db", str(ledger), "remember", "the vpn gateway is 10.0.0.1").exit_code == 0
    result = cli("--db", f"file:{ledger}?mode=ro", "import", str(exported))
    assert result.exit_code == exit_codes.UNAVAILABLE and "Traceback" not in result.stderr
    assert result.stderr.startswith("error (unavailable): the database refused the import (read_only); 0 events")
    assert json.loads(cli("--db", str(ledger), "--json", "status").stdout)["events"] == 1


def test_a_retention_period_past_a_century_is_refused_not_a_traceback(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.db")
    assert cli("--db", db, "remember", "the vpn gateway is 10.0.0.1").exit_code == 0
    for days in ("800000", "99999999999999999"):  # a date overflow; an int too large for C
        result = cli("--db", db, "archive", "--dry-run", "--older-than-days", days)
        assert result.exit_code == exit_codes.USAGE and "0<=x<=36500" in result.stderr, result.stderr
    assert cli("--db", db, "archive", "--dry-run", "--older-than-days", "36500").exit_code == 0


def test_a_command_line_click_cannot_parse_is_a_json_error_under_json(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.db")
    for args in (
        ["--json", "--db", db, "remember", "x y z", "--confidence", "-1"],
        ["--db", db, "remember", "x y z", "--confidence", "-1", "--json"],
        ["--json", "no-such-command"],
    ):
        result = cli(*args)
        assert result.exit_code == exit_codes.USAGE, result.output
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "invalid_input" and error["reason"] == "usage" and error["message"]
    human = cli("--db", db, "remember", "x y z", "--confidence", "-1")
    assert human.exit_code == exit_codes.USAGE and "remember [OPTIONS]" in human.stderr and human.stdout == ""


def test_erase_naming_no_target_or_two_is_a_usage_error(tmp_path: Path) -> None:
    """docs/cli.md's exit codes put a command line that names what it acts on wrongly under 64;
    ``erase`` with neither or both of ID and --workspace answered 1."""
    db = str(tmp_path / "ledger.db")
    assert cli("--db", db, "remember", "a fact to keep").exit_code == 0
    for args in ((), ("1", "--workspace", "team")):
        refused = cli("--db", db, "erase", *args, "--reason", "x")
        assert refused.exit_code == exit_codes.USAGE, refused.output
        assert "exactly one of ID or --workspace" in refused.output + refused.stderr
    as_json = cli("--db", db, "--json", "erase", "--reason", "x")
    assert as_json.exit_code == exit_codes.USAGE and json.loads(as_json.stdout)["error"]["code"]


def test_init_of_a_path_ending_in_a_slash_makes_no_file_of_it(tmp_path: Path) -> None:
    """``ledger init --db newdir/`` created a regular file named ``newdir`` and said "created"."""
    target = f"{tmp_path / 'newdir'}/"
    result = cli("init", "--db", target)
    assert result.exit_code == exit_codes.UNAVAILABLE and "names a directory" in result.output
    assert not (tmp_path / "newdir").exists()


def test_a_read_models_file_given_as_the_ledger_is_refused(tmp_path: Path) -> None:
    """--db x.views.db took a write ("remembered #2", exit 0) that the next open of x.db set
    aside with the file: an acknowledged write lost."""
    db = tmp_path / "x.db"
    runner = CliRunner()
    assert runner.invoke(main, ["--db", str(db), "init"]).exit_code == 0
    assert runner.invoke(main, ["--db", str(db), "remember", "Sam owns the queue"]).exit_code == 0
    views = tmp_path / "x.views.db"
    refused = runner.invoke(main, ["--db", str(views), "remember", "Tess owns the cron"])
    assert refused.exit_code != 0 and f"read models of {db}" in refused.output
    found = runner.invoke(main, ["--db", str(db), "--json", "find", "owns"])
    assert [r["content"] for r in json.loads(found.stdout)["results"]] == ["Sam owns the queue"]
    assert not list(tmp_path.glob("*set-aside*"))


@pytest.mark.parametrize("db", [".", "..", "/"])
def test_a_folder_named_by_dots_or_a_slash_is_refused_as_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db: str
) -> None:
    """``--db .``, ``--db /`` (or ``LEDGER_DB=.``) ended in a traceback: the backup's and the read
    models' names are made from the path's last part, which these have none of."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for args in (["status"], ["init"], ["remember", "the vpn gateway is 10.0.0.1"], ["find", "vpn"]):
        result = cli("--db", db, *args)
        said = result.stdout + result.stderr
        assert result.exit_code == exit_codes.UNAVAILABLE and f"{db} is not a ledger" in said, (args, said)
    as_json = json.loads(cli("--db", db, "--json", "status").stdout)
    assert as_json["degraded"]["reason"] == "cant_open"
    monkeypatch.setenv("LEDGER_DB", db)
    assert cli("status").exit_code == exit_codes.UNAVAILABLE
    assert _files(tmp_path) == {"work"} and _files(work) == set()  # nothing written beside it


@pytest.mark.parametrize("where", ["before", "after"])
def test_an_empty_db_path_is_a_usage_error(where: str) -> None:
    """``--db ""`` (a variable that was not set) crashed before the command's name; after it,
    the default database answered (and took writes) without a word."""
    for as_json in ([], ["--json"]):
        args = ["--db", "", *as_json, "remember", "a note"]
        if where == "after":
            args = [*as_json, "remember", "a note", "--db", ""]
        result = cli(*args)
        assert result.exit_code == exit_codes.USAGE, (args, result.output)
        said = result.stdout + result.stderr
        assert "an empty path names no database" in said and "remembered" not in said
        if as_json:
            assert json.loads(result.stdout)["error"]["reason"] == "usage"
