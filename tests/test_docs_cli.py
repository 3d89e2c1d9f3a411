"""docs/cli.md documents every command with each of its options, and the exit-code table the
code uses (sqlite-utils' habit: a test fails when a command goes undocumented); README's
command-line examples run as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from fact_ledger.server.cli import exit_codes
from fact_ledger.server.cli.main import main
from fact_ledger.server.cli.model_options import ModelOption
from tests.cli_catalogue import NOT_JSON
from tests.conftest import REPO

DOC = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
CONTRACT = (REPO / "docs" / "contract.md").read_text(encoding="utf-8")
GLOBAL = {"--db", "--json", "--help", "-h"}


def _row(command: str) -> str:
    rows = [line for line in DOC.splitlines() if re.match(rf"\| `ledger {re.escape(command)}[ `]", line)]
    assert len(rows) == 1, f"ledger {command} needs exactly one row in docs/cli.md"
    return rows[0]


@pytest.mark.parametrize("command", sorted(main.commands))
def test_every_command_and_option_is_documented(command: str) -> None:
    """A command's own options are in its row; the options generated from an operation's edge
    model (server/cli/model_options.py) are that operation's fields, documented once in
    docs/contract.md, and the row says so."""
    row = _row(command)
    params = [p for p in main.commands[command].params if isinstance(p, click.Option)]
    own = {max(p.opts, key=len) for p in params if not isinstance(p, ModelOption)}
    generated = [p for p in params if isinstance(p, ModelOption)]
    documented = set(re.findall(r"`(--[a-z-]+)`", row))
    assert own - GLOBAL <= documented, command
    assert documented - GLOBAL <= own | {max(p.opts, key=len) for p in generated}, command  # none that is gone
    if generated:
        assert "each other field" in row and "docs/contract.md" in row, command
        contract = [line for line in CONTRACT.splitlines() if line.startswith(f"| `{command}` |")]
        assert len(contract) == 1, command
        assert {p.field for p in generated} <= set(re.findall(r"`([a-z_]+)`", contract[0])), command
        assert all(max(p.opts, key=len) == "--" + p.field.replace("_", "-") for p in generated)


def test_the_exit_code_table_is_the_one_the_code_uses() -> None:
    section = DOC.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    documented = [(int(r[0].strip("| ")), r[1].strip(), r[2].strip(" |")) for r in rows]
    assert documented == exit_codes.TABLE


def test_the_readme_command_line_examples_run_in_order_as_their_comments_say(tmp_path: Path) -> None:
    """README's "Use it from the command line" blocks, each line run by bash as a person types
    it, in order, on a fresh home (the default database, the shipped defaults): every command
    succeeds and every ``# remembered #N`` comment names the id the command printed. The note
    was #7 while the comment said #5, so the README's ``reinforce 5`` and ``promote 5`` failed."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it from the command line", 1)[1].split("\n## ", 1)[0]
    lines = [line for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S) for line in block.splitlines()]
    assert len(lines) > 15 and any(line.startswith("ledger promote") for line in lines)
    shim = tmp_path / "bin" / "ledger"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m fact_ledger.server "$@"\n')
    shim.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEDGER_", "XDG_"))}
    env.update(HOME=str(home), PATH=f"{shim.parent}{os.pathsep}{env.get('PATH', '')}")
    for line in lines:
        ran = subprocess.run(["bash", "-c", line], cwd=home, env=env, capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, (line, ran.stdout, ran.stderr)
        said = re.search(r"# remembered (#\d+)", line)
        if said:
            assert f"remembered {said[1]} " in ran.stdout, (line, ran.stdout)


def test_the_commands_whose_json_is_not_one_document_are_the_ones_the_docs_name(tmp_path: Path) -> None:
    """docs/cli.md promised one JSON document from every command but the two servers, while
    ``ledger --json export`` prints its ``--format`` (JSONL or CSV): the docs name it now."""
    opening = DOC.split("\n## ", 1)[0]
    assert "`ledger export` without `--output` writes the export itself" in opening
    assert set(re.findall(r"`ledger ([a-z]+)`", opening)) == NOT_JSON
    db = tmp_path / "l.db"
    runner = CliRunner()
    assert runner.invoke(main, ["--db", str(db), "init"]).exit_code == 0
    runner.invoke(main, ["--db", str(db), "remember", "the vpn is up"])
    lines = runner.invoke(main, ["--db", str(db), "--json", "export"]).stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["event"]["type"] == "MemoryRecorded"  # JSONL, one event a line
    csv = runner.invoke(main, ["--db", str(db), "--json", "export", "--format", "csv"]).stdout
    assert csv.splitlines()[0].startswith("position,")
    to_file = runner.invoke(main, ["--db", str(db), "--json", "export", "--output", str(tmp_path / "e.jsonl")])
    assert json.loads(to_file.stdout) == {"ok": True, "events": 1, "path": str(tmp_path / "e.jsonl")}
