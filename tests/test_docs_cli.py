"""docs/cli.md documents every command with each of its options, and the exit-code table the
code uses (sqlite-utils' habit: a test fails when a command goes undocumented)."""

from __future__ import annotations

import re

import click
import pytest

from fact_ledger.server.cli import exit_codes
from fact_ledger.server.cli.main import main
from fact_ledger.server.cli.model_options import ModelOption
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
