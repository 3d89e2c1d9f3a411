"""Shared fixtures: real SQLite files under tmp_path, a facade on them, the ledger CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.app import LedgerApp
from server.config import Settings

REPO = Path(__file__).resolve().parent.parent
# Tests make fresh ledgers at explicit paths all the time, as ``ledger init`` would; the tests
# of the refusal itself (tests/test_cli_input.py) run without this.
os.environ["LEDGER_CREATE"] = "1"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.db"


@pytest.fixture
def app(db_path: Path) -> Iterator[LedgerApp]:
    ledger = LedgerApp(Settings(db=str(db_path), client="test", agent_id="pytest"))
    yield ledger
    ledger.close()


def ledger_cli(*args: str, env: dict[str, str] | None = None, check: bool = False,
               timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real ``ledger`` console entry point in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "server", *args], capture_output=True, text=True, env=full_env,
        check=check, timeout=timeout, cwd=REPO,
    )
