"""Shared fixtures: real SQLite files under tmp_path, a facade on them, the ledger CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest
from hypothesis import Phase, settings

from fact_ledger.ledger.facts import Policy
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tools.pg_cluster import Cluster, running_cluster

REPO = Path(__file__).resolve().parent.parent

# ``--hypothesis-profile=mutation`` (python -m tools.mutation): a failing example is reported as
# found, not shrunk — the mutation check needs to know *that* a test fails, fast.
settings.register_profile("mutation", phases=(Phase.explicit, Phase.reuse, Phase.generate))
# Tests make fresh ledgers at explicit paths all the time, as ``ledger init`` would; the tests
# of the refusal itself (tests/test_cli_input.py) run without this.
os.environ["LEDGER_CREATE"] = "1"
# Most tests drive claim sets through their review (open, judged, arbitrated) with event times
# days apart: they pin the policy that leaves a later value's set open, in this process (the
# default of ``Policy``) and in the ``ledger`` processes they start (the environment).
# tests/test_restatements.py runs the shipped default (settle_changes on) explicitly, and in a
# subprocess without this variable.
os.environ["LEDGER_POLICY_SETTLE_CHANGES"] = "0"
assert Policy.__init__.__kwdefaults__ is not None
Policy.__init__.__kwdefaults__["settle_changes"] = False
REVIEW = Policy(settle_changes=False)

_USER_DIRS: list[str] = []  # made by pytest_configure, removed by pytest_unconfigure


def pytest_configure(config: pytest.Config) -> None:
    """Keep the user data dir (installed models, the default db) and the user config dir (the
    default config.toml) out of tests: fresh ones per run.

    Without this, a developer who ran ``ledger model install`` would have every test load that
    model through the default configuration.
    """
    import tempfile

    os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="ledger-test-data-")
    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="ledger-test-config-")  # no default config.toml
    _USER_DIRS.extend((os.environ["XDG_DATA_HOME"], os.environ["XDG_CONFIG_HOME"]))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the run's user dirs: every pytest process (each mutant's run too) makes two."""
    import shutil

    while _USER_DIRS:
        shutil.rmtree(_USER_DIRS.pop(), ignore_errors=True)


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT embedding model (GGUF, ~80 KB) written once per session; see tests/tiny_model.py."""
    from tests.tiny_model import write_tiny_gguf

    return write_tiny_gguf(tmp_path_factory.mktemp("model") / "tiny-e5.gguf")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """A real PostgreSQL server for the session (tests/pg_cluster.py); each test takes a fresh database."""
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.db"


@pytest.fixture
def app(db_path: Path) -> Iterator[LedgerApp]:
    ledger = LedgerApp(Settings(db=str(db_path), client="test", agent_id="pytest", policy=REVIEW))
    yield ledger
    ledger.close()


@pytest.fixture
def sem(tmp_path: Path, tiny_gguf: Path) -> Iterator[LedgerApp]:
    """A facade with the tiny embedding model (its vectors carry no meaning; tests/tiny_model.py)."""
    ledger = LedgerApp(
        Settings(db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(model=str(tiny_gguf)))
    )
    yield ledger
    ledger.close()


def ledger_cli(
    *args: str, env: dict[str, str] | None = None, check: bool = False, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the real ``ledger`` console entry point in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "fact_ledger.server", *args],
        capture_output=True,
        text=True,
        env=full_env,
        check=check,
        timeout=timeout,
        cwd=REPO,
    )


@contextmanager
def statements_run(conn: apsw.Connection) -> Iterator[list[str]]:
    """Every SQL statement ``conn`` runs inside the block, in order (APSW's exec trace)."""
    ran: list[str] = []

    def trace(_cursor: object, sql: str, _bindings: object) -> bool:
        ran.append(sql)
        return True

    conn.exec_trace = trace
    try:
        yield ran
    finally:
        conn.exec_trace = None


class LockHolders:
    """Other processes, each holding a database's write lock (``script`` run with its path: it
    prints ``locked`` once it holds the lock, and lets go when its stdin closes). Any still
    holding at :meth:`close` let go then, or are killed."""

    def __init__(self, script: str) -> None:
        self.script = script
        self.procs: list[subprocess.Popen[str]] = []

    def hold(self, path: Path) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", self.script, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        return proc

    def release(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0

    def close(self) -> None:
        for proc in self.procs:
            if proc.stdin is not None:
                proc.stdin.close()  # let go, as release does
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


@contextmanager
def lock_holders(script: str) -> Iterator[LockHolders]:
    holders = LockHolders(script)
    try:
        yield holders
    finally:
        holders.close()
