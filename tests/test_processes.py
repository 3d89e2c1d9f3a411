"""Real subprocesses: concurrent writers, a writer killed mid-stream, a tampered file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ledger.store import EventStore
from server.app import LedgerApp
from server.config import Settings
from tests.conftest import ledger_cli

WORKERS = Path(__file__).with_name("workers.py")
pytestmark = pytest.mark.slow


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WORKERS), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_four_processes_append_without_lost_or_interleaved_positions(db_path: Path) -> None:
    EventStore(db_path).close()  # create the schema once
    procs = [spawn("append", str(db_path), str(w), "60") for w in range(4)]
    batches = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err  # no BUSY (or anything else) reached a caller
        batches += [[int(x) for x in line.split()] for line in out.splitlines()]
    assert len(batches) == 4 * 60
    for batch in batches:  # a batch is contiguous: nobody interleaved inside it
        assert batch == list(range(batch[0], batch[0] + 3))
    positions = sorted(p for b in batches for p in b)
    assert positions == list(range(1, 4 * 60 * 3 + 1))  # gapless, none lost, none twice
    store = EventStore(db_path)
    assert store.verify_chain() == 720


def test_four_facade_processes_keep_projections_consistent(db_path: Path) -> None:
    LedgerApp(Settings(db=str(db_path))).close()
    procs = [spawn("remember", str(db_path), str(w), "40") for w in range(4)]
    ids = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        ids += [int(x) for x in out.split()]
    assert len(set(ids)) == 160
    result = ledger_cli("verify", "--db", str(db_path), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    app = LedgerApp(Settings(db=str(db_path)))
    assert app.status()["memories"] == 160


def test_sigkill_mid_stream_loses_no_acknowledged_write(db_path: Path) -> None:
    proc = spawn("remember-forever", str(db_path))
    acked: list[int] = []
    assert proc.stdout is not None
    while len(acked) < 150:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "worker died"
        acked.append(int(line))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()
    if proc.stderr:
        proc.stderr.close()
    app = LedgerApp(Settings(db=str(db_path)))
    for memory_id in acked:
        assert app.read(memory_id)["memory"]["memory_id"] == memory_id
    app.close()
    result = ledger_cli("verify", "--db", str(db_path), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["chain"] == "intact"


def test_a_byte_edited_in_a_stored_event_fails_verify_naming_the_position(db_path: Path) -> None:
    app = LedgerApp(Settings(db=str(db_path)))
    for i in range(5):
        app.remember(f"ordinary memory {i}")
    target = app.remember("tamper-me: the vault code is 1234")["memory_id"]
    app.remember("another memory after the target")
    app.close()  # last connection: the WAL is checkpointed into the main file
    raw = bytearray(db_path.read_bytes())
    needle = b'"content":"tamper-me: the vault code is 1234"'
    at = raw.find(needle)
    assert at > 0 and raw.find(needle, at + 1) == -1  # only the event payload has this form
    digit = at + len(needle) - 2
    raw[digit] = ord("9")
    db_path.write_bytes(bytes(raw))
    result = ledger_cli("verify", "--db", str(db_path), "--json")
    assert result.returncode == 2, result.stdout + result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["position"] == target
    assert str(target) in error["message"]
