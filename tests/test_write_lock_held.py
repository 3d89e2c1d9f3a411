"""While another process holds a write lock (a long write in a ``ledger serve``, a script):

* ``ledger doctor``'s ``writable`` check said ok ("the log and the read models take writes")
  while every write waited out the busy timeout and went to the JSONL backup. Now it warns
  ``busy`` (exit 1) in the human and the ``--json`` output, naming the locked file, without
  waiting for the lock as a write would.
* a read (``find``, ``read``) answered, then waited out the busy timeout (15 s) at its close to
  write its use counts, and a read of a cooled memory waited as long to warm it: bookkeeping
  that is never worth waiting for. Now they wait for nothing and try again later.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import apsw
import pytest

from fact_ledger.ledger import clock
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import ledger_cli, lock_holders

HOLDER = """
import sys, apsw
conn = apsw.Connection(sys.argv[1])
conn.execute("BEGIN IMMEDIATE")  # a long write transaction, as a server or a script may hold
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
conn.close()
"""


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    db = tmp_path / "ledger.db"
    assert ledger_cli("--db", str(db), "init").returncode == 0
    assert ledger_cli("--db", str(db), "remember", "the billing service listens on port 8080").returncode == 0
    return db


@pytest.fixture
def holding() -> Iterator[object]:
    with lock_holders(HOLDER) as holders:
        yield holders.hold


def _writable(db: Path) -> tuple[int, dict[str, str], str, float]:
    started = time.monotonic()
    doc = ledger_cli("--db", str(db), "--json", "doctor")
    elapsed = time.monotonic() - started
    human = ledger_cli("--db", str(db), "doctor")
    assert human.returncode == doc.returncode, (human.stdout, doc.stdout)
    (check,) = [c for c in json.loads(doc.stdout)["checks"] if c["name"] == "writable"]
    (line,) = [line for line in human.stdout.splitlines() if " writable: " in line]
    return doc.returncode, check, line, elapsed


def test_doctor_warns_while_another_process_holds_the_logs_write_lock(ledger: Path, holding) -> None:
    holding(ledger)
    code, check, line, elapsed = _writable(ledger)
    assert code == 1 and check["severity"] == "warning", check
    assert check["message"].startswith("busy: another process has held the write lock on the log")
    assert str(ledger) in check["message"] and "JSONL backup" in check["message"]
    assert line.split() == ["warning", "writable:", *check["message"].split()]
    # it does not wait as a write does (3 x the 5 s busy timeout): a short look
    assert elapsed < 10, elapsed


def test_doctor_names_the_read_models_file_when_that_is_the_locked_one(ledger: Path, holding) -> None:
    views = ledger.with_name("ledger.views.db")
    assert views.exists()
    holding(views)
    code, check, _line, elapsed = _writable(ledger)
    # the hash chain is checked without taking that lock (it waited 15 s, then was "critical")
    assert code == 1 and elapsed < 10, (code, elapsed)
    assert "the read models' file" in check["message"] and str(views) in check["message"], check
    assert "the log (" not in check["message"]


def test_doctor_says_ok_once_the_lock_is_gone(ledger: Path) -> None:
    code, check, line, _elapsed = _writable(ledger)
    assert check["severity"] == "ok" and line.split()[0] == "ok", check
    assert code == 0


def test_a_read_does_not_wait_for_the_lock_to_count_its_uses(ledger: Path, holding) -> None:
    holding(ledger)
    for args in (["read", "1"], ["find", "billing"]):
        started = time.monotonic()
        r = ledger_cli("--db", str(ledger), *args)
        elapsed = time.monotonic() - started
        assert r.returncode == 0 and "port 8080" in r.stdout, r.stderr
        assert elapsed < 10, (args, elapsed)  # it waited 3 x the 5 s busy timeout after answering


def test_uses_are_still_counted_once_the_lock_is_gone(ledger: Path) -> None:
    assert ledger_cli("--db", str(ledger), "read", "1").returncode == 0
    views = apsw.Connection(str(ledger.with_name("ledger.views.db")))
    try:
        assert views.execute("SELECT uses FROM memory_use WHERE memory_id = 1").get == 1
    finally:
        views.close()


def test_a_cooled_memory_read_under_the_lock_stays_cold_until_it_can_warm(tmp_path: Path, holding) -> None:
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db), busy_timeout_ms=2000))
    try:
        mid = app.remember("the ferry leaves at nine")["memory_id"]
        later = clock.format_time(clock.to_datetime(clock.now()) + timedelta(days=60))
        app.conversations.sweep(now=later)  # cools it
        warmed = "SELECT count(*) FROM events WHERE type = 'Warmed'"
        proc = holding(db)
        started = time.monotonic()
        assert app.read(mid)["memory"]["content"] == "the ferry leaves at nine"
        assert time.monotonic() - started < 3  # a warm-up waited 3 x the busy timeout (6 s)
        assert app.conn.execute(warmed).get == 0
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)
        app.read(mid)
        assert app.conn.execute(warmed).get == 1  # warmed on the next read that could
    finally:
        app.close()


def test_status_says_busy_while_another_process_holds_the_write_lock(ledger: Path, holding) -> None:
    """``ledger status`` said nothing while another process held the log's write lock (doctor
    warned ``busy``, status listed counts as if writes went in): it says ``busy`` now, in the
    human output and ``--json`` (``busy.files``), from the same short look doctor takes."""
    proc = holding(ledger)
    started = time.monotonic()
    human = ledger_cli("--db", str(ledger), "status")
    assert time.monotonic() - started < 10  # a short look, not a write's wait
    assert human.returncode == 0, human.stderr
    (line,) = [line for line in human.stdout.splitlines() if line.startswith("busy: ")]
    assert line.startswith(f"busy: another process has held the write lock on the log ({ledger}) for over 1 s")
    assert "goes to the JSONL backup" in line and "ledger replay-backup --apply" in line
    doc = json.loads(ledger_cli("--db", str(ledger), "--json", "status").stdout)
    assert doc["busy"]["files"] == [str(ledger)] and doc["busy"]["message"] in line
    doctor = json.loads(ledger_cli("--db", str(ledger), "--json", "doctor").stdout)
    (check,) = [c for c in doctor["checks"] if c["name"] == "writable"]
    assert check["message"] == f"busy: {doc['busy']['message']}"  # the two say the same
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)
    free = ledger_cli("--db", str(ledger), "status")
    assert free.returncode == 0 and not [line for line in free.stdout.splitlines() if line.startswith("busy")]
    assert json.loads(ledger_cli("--db", str(ledger), "--json", "status").stdout)["busy"] is None
