"""SIGKILL at random points of the two-file layout: nothing acknowledged is lost, verify passes.

The log (``ledger.db``, ``synchronous=FULL``) commits before the read models
(``ledger.views.db``, ``synchronous=NORMAL``); a process killed anywhere in between leaves the
read models behind the log, which the next open pulls. Each test kills a real process at a
random moment (seeded, so a failure replays) during one kind of write: ``remember``, a full
``rebuild``, a backup ``replay`` and an ``import``; then reopens, reads every acknowledged
write, and runs ``ledger verify`` (hash chain, the read models' copy of the log, and every table
against a fresh fold).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import REPO, ledger_cli

WORKERS = Path(__file__).with_name("workers.py")
ROUNDS = 3


def run_then_kill(args: list[str], delay_s: float) -> int:
    """Start ``args``, SIGKILL it after ``delay_s`` (or let it finish first); its exit status."""
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    time.sleep(delay_s)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    return proc.wait(timeout=30)


def assert_verified(db: Path) -> None:
    result = ledger_cli("verify", "--db", str(db), "--json", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["chain"] == "intact" and report["projections"] == "consistent"


def assert_caught_up(db: Path) -> LedgerApp:
    app = LedgerApp(Settings(db=str(db)))
    status = app.status()
    assert status["log"]["behind"] == 0 and status["degraded"] is None
    assert all(p["lag"] == 0 for p in status["projections"].values())
    return app


@pytest.mark.slow
def test_sigkill_during_remember(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    rng = random.Random(41)
    acked: list[int] = []
    for _ in range(ROUNDS):
        proc = subprocess.Popen(
            [sys.executable, str(WORKERS), "remember-forever", str(db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        wanted = rng.randrange(5, 60)
        for _ in range(wanted):
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else "worker died"
            acked.append(int(line))
        time.sleep(rng.random() * 0.02)  # somewhere inside the next write
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
        app = assert_caught_up(db)
        for memory_id in acked:
            assert app.read(memory_id)["memory"]["memory_id"] == memory_id
        app.close()
    assert_verified(db)


@pytest.fixture
def big_ledger(tmp_path: Path) -> Path:
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    for i in range(600):
        app.remember(f"Service {i % 37} runs on host node-{i} with port {9000 + i}", subject=f"service {i % 37}")
    app.close()
    return db


@pytest.mark.slow
def test_sigkill_during_rebuild(big_ledger: Path) -> None:
    rng = random.Random(43)
    before = LedgerApp(Settings(db=str(big_ledger)))
    expected = before.status()["memories"]
    before.close()
    for _ in range(ROUNDS):
        cmd = [sys.executable, "-m", "fact_ledger.server", "rebuild", "--db", str(big_ledger)]
        run_then_kill(cmd, 0.3 + rng.random() * 1.5)
        app = assert_caught_up(big_ledger)
        assert app.status()["memories"] == expected
        app.close()
    assert_verified(big_ledger)


@pytest.mark.slow
def test_sigkill_during_replay(tmp_path: Path) -> None:
    db, backup = tmp_path / "ledger.db", tmp_path / "ledger.backup.jsonl"
    app = LedgerApp(Settings(db=str(db), backup=str(backup)))
    app.remember("written before the log became read-only")
    app.close()
    app = LedgerApp(Settings(db=f"file:{db}?mode=ro", backup=str(backup)))  # every write is backed up
    texts = [f"backed-up fact {i}: the cache node is cache-{i}" for i in range(300)]
    assert all(app.remember(t)["backup_only"] for t in texts)
    app.close()
    rng = random.Random(47)
    cmd = [sys.executable, "-m", "fact_ledger.server", "replay-backup", "--apply", "--batch-size", "20"]
    cmd += ["--db", str(db)]
    for _ in range(ROUNDS):
        run_then_kill(cmd, 0.4 + rng.random() * 1.0)
        assert_caught_up(db).close()
    done = ledger_cli("replay-backup", "--apply", "--db", str(db), "--json", timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    app = assert_caught_up(db)
    found = {r["content"] for r in app.find("backed-up fact cache node", limit=50)["results"]}
    assert app.status()["memories"] == 1 + len(texts)  # every backed-up write once, none twice
    assert len(found) == 50
    app.close()
    assert_verified(db)


@pytest.mark.slow
def test_sigkill_during_import(big_ledger: Path, tmp_path: Path) -> None:
    export = tmp_path / "export.jsonl"
    assert ledger_cli("export", "-o", str(export), "--db", str(big_ledger), timeout=120).returncode == 0
    target = tmp_path / "copy" / "ledger.db"
    assert ledger_cli("init", "--db", str(target), timeout=60).returncode == 0
    rng = random.Random(53)
    cmd = [sys.executable, "-m", "fact_ledger.server", "import", str(export), "--db", str(target)]
    for _ in range(ROUNDS):
        run_then_kill(cmd, 0.3 + rng.random() * 1.0)
        assert_caught_up(target).close()
    done = ledger_cli("import", str(export), "--db", str(target), "--json", timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    again = tmp_path / "again.jsonl"
    assert ledger_cli("export", "-o", str(again), "--db", str(target), timeout=120).returncode == 0
    assert again.read_bytes() == export.read_bytes()  # every event once, in order, same hashes
    assert_verified(target)
