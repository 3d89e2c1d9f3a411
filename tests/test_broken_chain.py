"""A log whose hash chain breaks (issue 29, point 5): reads answer with a warning, doctor runs
every check and names what is wrong, writes are refused with nothing appended.

The ledger is real: five memories through the CLI, then the log file's event 3 is edited in
place (its append-only trigger dropped first), as tampering or a bad restore would leave it.
"""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner, Result

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli import exit_codes
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Settings
from fact_ledger.server.doctor import CHECKS

WARNING = "the log's hash chain is broken at position 3"


def cli(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args])


def _tamper(db: Path, position: int) -> None:
    conn = apsw.Connection(str(db))
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET payload=replace(payload, '800', '900') WHERE position=?", (position,))
    conn.close()


def _log_events(db: Path) -> int:
    conn = apsw.Connection(str(db))
    try:
        return conn.execute("SELECT count(*) FROM events").get
    finally:
        conn.close()


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A log broken at position 3 whose read models must be built again (their file is gone)."""
    db = tmp_path / "ledger.db"
    for n in range(1, 6):
        assert cli(db, "remember", f"service {n} listens on port 800{n}", "--subject", f"service {n}").exit_code == 0
    _tamper(db, 3)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path / 'ledger.views.db'}{suffix}").unlink(missing_ok=True)
    return db


def test_find_answers_from_the_events_before_the_break_with_a_warning(broken: Path) -> None:
    human = cli(broken, "find", "port")
    assert human.exit_code == 0, human.output
    assert "Traceback" not in human.output and "port 8001" in human.stdout and "port 8004" not in human.stdout
    assert human.stderr.startswith(f"warning: {WARNING}")
    doc = json.loads(cli(broken, "--json", "find", "port").stdout)
    assert {r["memory_id"] for r in doc["results"]} == {1, 2}
    assert any(n.startswith(WARNING) for n in doc["notices"])


def test_doctor_runs_every_check_and_names_the_break(broken: Path) -> None:
    result = cli(broken, "--json", "doctor")
    assert result.exit_code == exit_codes.BROKEN
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert len(checks) == len(CHECKS)
    assert checks["hash_chain"]["severity"] == "critical"
    assert "position 3" in checks["hash_chain"]["message"]
    human = cli(broken, "doctor")
    assert human.exit_code == exit_codes.BROKEN and "critical hash_chain: hash chain broken" in human.stdout


def test_doctor_finds_a_log_edited_behind_complete_read_models(tmp_path: Path) -> None:
    """The read models already hold every event: only the log itself can show the edit."""
    db = tmp_path / "ledger.db"
    for n in range(1, 4):
        assert cli(db, "remember", f"service {n} listens on port 800{n}").exit_code == 0
    _tamper(db, 2)
    result = cli(db, "--json", "doctor")
    hash_chain = next(c for c in json.loads(result.stdout)["checks"] if c["name"] == "hash_chain")
    assert result.exit_code == exit_codes.BROKEN and hash_chain["severity"] == "critical"


def test_rebuild_and_status_answer_and_exit_2(broken: Path) -> None:
    rebuilt = cli(broken, "rebuild")
    assert rebuilt.exit_code == exit_codes.BROKEN and "from 2 events" in rebuilt.stdout
    assert WARNING in rebuilt.stderr
    status = cli(broken, "--json", "status")
    assert status.exit_code == exit_codes.BROKEN and json.loads(status.stdout)["events"] == 2


def test_a_write_is_refused_and_nothing_is_appended(broken: Path) -> None:
    result = cli(broken, "--json", "remember", "service 6 listens on port 8006")
    error = json.loads(result.stdout)["error"]
    assert result.exit_code == exit_codes.BROKEN and error["code"] == "chain_broken" and error["position"] == 3
    assert "nothing was written" in error["message"]
    assert _log_events(broken) == 5
    assert not (broken.parent / "ledger.backup.jsonl").exists()


def test_agents_get_the_warning_as_a_notice(broken: Path) -> None:
    app = LedgerApp(Settings(db=str(broken), client="test"))
    try:
        notice = app.backup_notice()
        assert notice is not None and notice.startswith(WARNING)
        assert [r["memory_id"] for r in app.find("service 2 port")["results"]][:1] == [2]
    finally:
        app.close()


def test_a_log_file_with_damaged_pages_is_named_by_verify_and_doctor(tmp_path: Path) -> None:
    """Only the read models' file was checked: a log file whose pages were overwritten passed
    ``verify`` ("intact") and doctor's integrity check, though every write to it then failed."""
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    for n in range(60):
        app.remember(f"fact number {n} about the staging API and the other things that fill pages")
    app.close()
    with db.open("r+b") as f:  # the log's second and third pages: the events table's tree
        f.seek(8192)
        f.write(b"\xde\xad" * 2000)
    result = cli(db, "verify")
    assert result.exit_code == exit_codes.BROKEN and f"the database file {db} is corrupt" in result.output
    result = cli(db, "--json", "doctor")
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert result.exit_code == exit_codes.BROKEN
    assert checks["integrity"]["severity"] == "critical" and str(db) in checks["integrity"]["message"]


def test_read_models_whose_checkpoints_lag_their_rows_are_built_again(tmp_path: Path) -> None:
    """Checkpoints behind the rows they cover (a copied or restored file): the fold on open met
    rows it was about to write, and status, verify, doctor and rebuild itself all failed with a
    traceback (UNIQUE constraint failed: memories.memory_id)."""
    db = tmp_path / "ledger.db"
    for n in range(1, 4):
        assert cli(db, "remember", f"service {n} listens on port 800{n}").exit_code == 0
    conn = apsw.Connection(str(tmp_path / "ledger.views.db"))
    conn.execute("UPDATE projection_checkpoints SET position=0")
    conn.close()
    for command in ("status", "verify", "doctor", "rebuild"):
        result = cli(db, command)
        assert result.exit_code == 0 and result.exception is None, (command, result.output)
    assert "port 8002" in cli(db, "find", "service 2").output
