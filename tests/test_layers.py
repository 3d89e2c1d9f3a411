"""The layer rules hold (docs/architecture.md): ``lint-imports`` checks the contracts in
pyproject.toml — the ledger imports nothing of the project, projections never import the server,
no package imports tools or tests, and the server's modules import each other without cycles."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINT = str(Path(sys.executable).with_name("lint-imports"))


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LINT, "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_layer_contracts_are_kept() -> None:
    done = _lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "BROKEN" not in done.stdout and "Contracts: 4 kept, 0 broken." in done.stdout


def test_an_upward_import_and_a_cycle_break_the_contracts(tmp_path: Path) -> None:
    """The check can fail: a copy of the packages with the ledger importing the server, and two
    server modules importing each other, breaks exactly those contracts."""
    ignore = shutil.ignore_patterns("__pycache__", "*.db")
    for name in ("ledger", "projections", "server"):  # installed as fact_ledger.*: a namespace here too
        shutil.copytree(REPO / name, tmp_path / "fact_ledger" / name, ignore=ignore)
    for name in ("tests", "tools"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=ignore)
    shutil.copy2(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    package = tmp_path / "fact_ledger"
    (package / "ledger" / "upward.py").write_text("from fact_ledger.server.config import Settings\n")
    (package / "server" / "first.py").write_text("from fact_ledger.server import second\n")
    (package / "server" / "second.py").write_text("def later():\n    from fact_ledger.server import first\n")
    done = _lint(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ledger imports nothing of the project BROKEN" in done.stdout
    assert "no import cycles inside server BROKEN" in done.stdout
    assert "projections import only the ledger KEPT" in done.stdout
