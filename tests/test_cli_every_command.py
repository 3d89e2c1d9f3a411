"""Every command and option of docs/cli.md, in human and ``--json`` form, on a seeded ledger with
a conflict in every state: no traceback, only documented exit codes (issue 29, acceptance).

Two runs of one catalogue (tests/cli_catalogue.py): in-process with the semantic extra and a
tiny model (the test extra brings llama-cpp-python), and in a subprocess that cannot import the
semantic extra, as a base install (``pip install .``) has it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from fact_ledger.server.cli import exit_codes
from fact_ledger.server.cli.main import main
from tests.cli_catalogue import CATALOGUE, Outcome, run_all, seed
from tests.conftest import REPO

DOCUMENTED_CODES = {code for code, _, _ in exit_codes.TABLE}
GLOBAL = {"--db", "--json", "--help", "-h"}


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out.update(_commands(command, f"{prefix}{name} "))
        else:
            out[f"{prefix}{name}"] = command
    return out


def _failures(outcomes: list[Outcome]) -> list[str]:
    return [
        f"ledger {' '.join(o.args)} ({o.form}): exit {o.code}, expected {o.expected}\n{o.problem or o.stdout_head}"
        for o in outcomes
        if o.problem or o.code not in o.expected or o.code not in DOCUMENTED_CODES
    ]


def test_the_catalogue_runs_every_command_with_every_option() -> None:
    """What the runs below prove covers docs/cli.md: each command, each of its options."""
    used: dict[str, set[str]] = {}
    for inv in CATALOGUE:
        used.setdefault(inv.command, set()).update(a.split("=")[0] for a in inv.args if a.startswith("--"))
    commands = _commands(main)
    assert set(used) == set(commands)
    for name, command in commands.items():
        options = {max(p.opts, key=len) for p in command.params if isinstance(p, click.Option)} - GLOBAL
        assert options <= used[name], f"ledger {name}: not run with {sorted(options - used[name])}"
    documented = set(re.findall(r"^\| `ledger ([a-z-]+)", (REPO / "docs" / "cli.md").read_text(), re.M))
    assert documented == {name.split()[0] for name in commands}


def test_every_command_with_the_semantic_extra_and_a_model(tmp_path: Path, tiny_gguf: Path) -> None:
    pytest.importorskip("llama_cpp")
    seed(tmp_path / "seed", model=str(tiny_gguf))
    env = {"LEDGER_EMBEDDING_MODEL": str(tiny_gguf)}
    outcomes = run_all(tmp_path / "seed", tmp_path / "work", semantic=True, env=env)
    assert len(outcomes) == 2 * len(CATALOGUE)
    assert not _failures(outcomes), "\n\n".join(_failures(outcomes))


def test_every_command_on_the_base_install(tmp_path: Path) -> None:
    """One subprocess that blocks numpy, llama_cpp, sqlite_vec and gguf, then seeds and runs the
    whole catalogue with the real CLI (a subprocess per command would take minutes)."""
    result = subprocess.run(
        [sys.executable, "-m", "tests.cli_catalogue", str(tmp_path / "seed"), str(tmp_path / "work"), "--base"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    outcomes = [Outcome(**o) for o in json.loads(result.stdout)]
    assert {o.command for o in outcomes} >= {"model list", "model install", "find", "notices", "reembed"}
    assert not _failures(outcomes), "\n\n".join(_failures(outcomes))
    model_list = next(o for o in outcomes if o.command == "model list" and o.form == "json")
    assert model_list.code == exit_codes.UNAVAILABLE and "semantic extra" in model_list.stdout_head
