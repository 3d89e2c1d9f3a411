"""Real subprocesses: concurrent writers, a writer killed mid-stream, a tampered file."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fact_ledger.ledger.log.store import EventStore
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import ledger_cli

WORKERS = Path(__file__).with_name("workers.py")
pytestmark = pytest.mark.slow


def spawn(*args: str, barrier: bool = False) -> subprocess.Popen[str]:
    """A worker process; with ``barrier`` it waits for a go on stdin (see :func:`start_together`)."""
    return subprocess.Popen(
        [sys.executable, str(WORKERS), *args],
        stdin=subprocess.PIPE if barrier else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def start_together(*args: list[str]) -> list[subprocess.Popen[str]]:
    """Spawn workers, wait until every one has opened the database, then let them all go at once."""
    procs = [spawn(*a, barrier=True) for a in args]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline() == "ready\n", p.stderr.read() if p.stderr else ""
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    return procs


def outputs(procs: list[subprocess.Popen[str]]) -> list[list[str]]:
    """Each worker's printed lines (after "ready"), once it has exited cleanly."""
    lines = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err  # no BUSY (or anything else) reached a caller
        lines.append(out.splitlines())
    return lines


def assert_interleaved(owner_by_position: dict[int, int], workers: int) -> None:
    """The workers really wrote at the same time: the log passes from one worker to another again
    and again. One after the other gives ``workers - 1`` switches; measured on 2 cores: 50-190
    idle, 44-162 with a load average of 14."""
    owners = [owner_by_position[p] for p in sorted(owner_by_position)]
    switches = sum(x != y for x, y in itertools.pairwise(owners))
    assert switches >= 4 * workers, (switches, owners)


def test_four_processes_append_without_lost_or_interleaved_positions(db_path: Path) -> None:
    EventStore(db_path).close()  # create the schema once
    procs = start_together(*[["append", str(db_path), str(w), "60"] for w in range(4)])
    batches = []
    first_position: dict[int, int] = {}
    for worker, lines in enumerate(outputs(procs)):
        mine = [[int(x) for x in line.split()] for line in lines]
        first_position.update({b[0]: worker for b in mine})
        batches += mine
    assert len(batches) == 4 * 60
    # The writers really ran at the same time: the log passes from one to another over and over.
    assert_interleaved(first_position, 4)
    for batch in batches:  # a batch is contiguous: nobody interleaved inside it
        assert batch == list(range(batch[0], batch[0] + 3))
    positions = sorted(p for b in batches for p in b)
    assert positions == list(range(1, 4 * 60 * 3 + 1))  # gapless, none lost, none twice
    store = EventStore(db_path)
    assert store.verify_chain() == 720


def test_four_facade_processes_keep_projections_consistent(db_path: Path) -> None:
    LedgerApp(Settings(db=str(db_path))).close()
    procs = start_together(*[["remember", str(db_path), str(w), "40"] for w in range(4)])
    owner: dict[int, int] = {}
    for worker, lines in enumerate(outputs(procs)):
        owner.update({int(x): worker for x in lines})
    assert len(owner) == 160
    assert_interleaved(owner, 4)  # memory ids are handed out in log order
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
