"""Real faults on the write path, each followed by a replay that lands every write exactly once.

* another process holds an exclusive lock (``BEGIN EXCLUSIVE``) past a short busy timeout,
  both while we run and while we open a database it is still creating;
* the database file is really unwritable (``chattr +i``, else a ``mode=ro`` URI);
* the disk is full (``PRAGMA max_page_count`` pinned to the current size).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.ledger.errors import Unavailable
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.storage import Storage
from fact_ledger.server.config import Settings, load_settings
from tests.conftest import ledger_cli, lock_holders

LOCKER = """
import sys, apsw
conn = apsw.Connection(sys.argv[1])
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("CREATE TABLE IF NOT EXISTS locker_was_here(x)")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
conn.close()
"""


@pytest.fixture
def locker() -> Iterator[Any]:
    """Start another process that holds the database's write lock until ``release()``."""
    with lock_holders(LOCKER) as holders:
        yield holders.hold, holders.release


def short_timeout(tmp_path: Path) -> Settings:
    return load_settings(
        {
            "db": str(tmp_path / "ledger.db"),
            "backup": str(tmp_path / "backup.jsonl"),
            "client": "fault-test",
            "create": True,
        },
        env={"LEDGER_BUSY_TIMEOUT_MS": "100"},
    )


def assert_replayed_once(app: LedgerApp, results: list[dict[str, Any]], texts: list[str]) -> None:
    """Apply the backup and check that every backed-up write is in the log exactly once."""
    dry = app.replay_backup()
    assert dry["to_apply"] == sum(len(r["backup"]["event_ids"]) for r in results)
    applied = app.replay_backup(dry_run=False, authorization=AUTH_USER)
    assert applied["appended"] == dry["to_apply"] and applied["bad_total"] == 0
    for result in results:
        for event_id in result["backup"]["event_ids"]:
            assert app.conn.execute("SELECT count(*) FROM events WHERE event_id=?", (event_id,)).get == 1
    for text in texts:
        assert app.conn.execute("SELECT count(*) FROM memories WHERE content=?", (text,)).get == 1, text
    assert app.replay_backup(dry_run=False, authorization=AUTH_USER)["appended"] == 0
    assert app.status()["pending_backup"] is None
    assert app.verify()["projections"] == "consistent"


def test_an_exclusive_lock_held_by_another_process(tmp_path: Path, locker) -> None:
    hold, release = locker
    s = short_timeout(tmp_path)
    app = LedgerApp(s)
    kept = app.remember("written before the lock", subject="lock")["memory_id"]
    proc = hold(Path(s.db))
    texts = [f"written while locked {n}" for n in range(3)]
    results = [app.remember(t, subject="lock") for t in texts]
    assert all(r["backup_only"] and r["reason"] == "locked" and "memory_id" not in r for r in results)
    # WAL: reads still work under the other process's write lock.
    assert [r["memory_id"] for r in app.find("written before the lock")["results"]] == [kept]
    assert app.status()["pending_backup"]["events"] == 3 and app.status()["degraded"]["reason"] == "locked"
    # A governance write gets the same treatment without knowing it.
    retired = app.retire(kept, reason="moved", authorization=AUTH_USER)
    assert retired["backup_only"] and "memory_id" not in retired
    results.append(retired)
    release(proc)
    assert_replayed_once(app, results, texts)
    assert app.read(kept)["memory"]["status"] == "retired"
    assert app.remember("written after the lock")["memory_id"] > kept
    app.close()


def test_a_backed_up_update_yields_only_to_a_later_change_of_its_own_fields(tmp_path: Path, locker) -> None:
    """A tag added while the file was locked was refused at replay (and lost) because a later
    write changed the content: only a later change of the same field overtakes it."""
    hold, release = locker
    s = short_timeout(tmp_path)
    app, other = LedgerApp(s), LedgerApp(s)
    memory_id = app.remember("The build server is ci-1")["memory_id"]
    proc = hold(Path(s.db))
    assert app.update(memory_id, tags=["infra"])["backup_only"]
    assert app.update(memory_id, content="The build server is ci-2")["backup_only"]
    release(proc)
    time.sleep(0.01)
    assert other.update(memory_id, content="The build server is ci-3")["version"] == 2  # later, by another process
    app.replay_backup(dry_run=False, authorization=AUTH_USER)
    memory = app.read(memory_id)["memory"]
    assert (memory["content"], memory["tags"]) == ("The build server is ci-3", ["infra"])
    other.close()
    app.close()


def test_opening_a_database_another_process_is_still_creating(tmp_path: Path, locker, monkeypatch) -> None:
    hold, release = locker
    monkeypatch.setattr(Storage, "REOPEN_INTERVAL_S", 0.0)
    s = short_timeout(tmp_path)
    proc = hold(Path(s.db))
    app = LedgerApp(s)  # cannot create its schema under the lock: starts degraded, does not fail
    assert app.status()["degraded"]["reason"] == "locked"
    results = [app.remember("written during startup")]
    assert results[0]["backup_only"]
    release(proc)
    assert_replayed_once(app, results, ["written during startup"])
    app.close()


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[Settings]:
    """An existing ledger whose file really cannot be written: immutable, else opened read-only."""
    db = tmp_path / "ledger.db"
    backup = str(tmp_path / "backup.jsonl")
    seed = LedgerApp(Settings(db=str(db), backup=backup))
    seed.remember("written while writable")
    seed.close()
    made_immutable = subprocess.run(["chattr", "+i", str(db)], capture_output=True).returncode == 0
    try:
        if made_immutable:
            yield Settings(db=str(db), backup=backup, client="fault-test")
        else:
            yield Settings(db=f"file:{db}?mode=ro", backup=backup, client="fault-test")
    finally:
        if made_immutable:
            subprocess.run(["chattr", "-i", str(db)], check=True)


def test_a_database_file_that_cannot_be_written(unwritable: Settings, tmp_path: Path) -> None:
    app = LedgerApp(unwritable)
    assert app.storage.log.conn.readonly("main")  # the log; the read models beside it stay writable
    assert app.status()["degraded"]["reason"] == "read_only"  # status and doctor agree
    # doctor says so (status and every check said nothing while each write went to the backup)
    (check,) = [c for c in app.doctor()["checks"] if c["name"] == "writable"]
    assert check["severity"] == "warning" and check["message"].startswith("read-only: the log (")
    texts = ["written while read-only", "another read-only write"]
    results = [app.remember(t) for t in texts]
    assert all(r["backup_only"] and r["reason"] == "read_only" for r in results)
    updated = app.update(1, content="an update while read-only")
    assert updated["backup_only"] and "version" not in updated
    results.append(updated)
    assert app.read(1)["memory"]["content"] == "written while writable"  # reads still work
    assert "await replay" in (app.backup_notice() or "")
    app.close()
    if unwritable.db.startswith("file:"):
        writable = Settings(db=str(tmp_path / "ledger.db"), backup=unwritable.backup)
    else:
        subprocess.run(["chattr", "-i", unwritable.db], check=True)
        writable = unwritable
    app = LedgerApp(writable)
    assert_replayed_once(app, results, texts)
    assert app.read(1)["memory"]["content"] == "an update while read-only"
    app.close()


def test_a_full_disk(tmp_path: Path) -> None:
    s = short_timeout(tmp_path)
    app = LedgerApp(s)
    app.remember("written with space left")
    pages = app.conn.execute("PRAGMA page_count").get
    app.conn.execute(f"PRAGMA max_page_count={pages}")  # no page may be added from here on
    texts = [f"written on a full disk {n} " + "z" * 30000 for n in range(2)]
    results = [app.remember(t) for t in texts]
    assert all(r["backup_only"] and r["reason"] == "disk_full" for r in results)
    assert app.status()["events"] == 1
    app.conn.execute("PRAGMA max_page_count=1073741823")  # space was freed
    assert_replayed_once(app, results, texts)
    app.close()


def test_an_unwritable_database_that_needs_catching_up_starts_degraded(unwritable: Settings, monkeypatch) -> None:
    """Read models kept in the unwritable log's own file cannot be rebuilt: degraded."""
    from fact_ledger.projections.timeline.projector import TimelineProjector

    monkeypatch.setattr(TimelineProjector, "version", TimelineProjector.version + 1)  # must rebuild: cannot
    one_file = replace(unwritable, views=unwritable.db.removeprefix("file:").split("?")[0])
    app = LedgerApp(one_file)
    assert app.status()["degraded"]["reason"] == "read_only"
    result = app.remember("written while stuck")
    assert result["backup_only"] and app.status()["pending_backup"]["events"] == 1
    app.close()


def test_an_unwritable_log_with_read_models_beside_it_still_answers(unwritable: Settings, monkeypatch) -> None:
    """The read models in their own file are rebuilt from the read-only log; writes are backed up."""
    from fact_ledger.projections.timeline.projector import TimelineProjector

    monkeypatch.setattr(TimelineProjector, "version", TimelineProjector.version + 1)
    app = LedgerApp(unwritable)
    # status names the read-only log before a write fails, as doctor does (it said nothing)
    assert app.status()["degraded"]["reason"] == "read_only"
    assert app.read(1)["memory"]["content"] == "written while writable"
    result = app.remember("written while stuck")
    assert result["backup_only"] and result["reason"] == "read_only"
    app.close()


def _serving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, busy_ms: int) -> tuple[LedgerApp, Path]:
    """A ledger as ``ledger serve`` holds it (its backup replays by itself), one memory written:
    the app and its log's path."""
    monkeypatch.setattr(Storage, "REOPEN_INTERVAL_S", 0.0)
    s = load_settings(
        {"db": str(tmp_path / "ledger.db"), "backup": str(tmp_path / "backup.jsonl"), "create": True},
        env={"LEDGER_BUSY_TIMEOUT_MS": str(busy_ms)},
    )
    app = LedgerApp(s)
    app.storage.auto_replay = True
    app.remember("written before the lock")
    return app, Path(s.db)


def test_serve_replays_a_local_backup_once_the_file_takes_writes_again(tmp_path: Path, locker, monkeypatch) -> None:
    """``ledger serve`` on a local file: while another process holds the lock, reads answer at
    once (no replay attempt waits out the busy timeout) and show the pending write; after the
    next write the file accepts, the backup replays by itself, once."""
    hold, release = locker
    app, db = _serving(tmp_path, monkeypatch, 1500)
    proc = hold(db)
    assert app.remember("written while locked")["backup_only"]
    started = time.monotonic()
    found = app.find("written")["results"]
    assert time.monotonic() - started < 1.0
    assert [r.get("pending") for r in found][:1] == [True]
    release(proc)
    assert isinstance(app.remember("written after the lock")["memory_id"], int)
    assert app.status()["pending_backup"] is None
    notice = app.backup_notice() or ""
    assert "1 backed-up write(s) replayed" in notice
    assert "memory_review audit" in notice  # a tool and view the server has (it said memory_history)
    assert app.conn.execute("SELECT count(*) FROM memories WHERE content='written while locked'").get == 1
    app.close()


def test_serve_replays_once_the_lock_is_gone_without_waiting_for_a_write(tmp_path: Path, locker, monkeypatch) -> None:
    """After the other process let go, ``ledger serve`` kept saying the database was locked and
    held the backed-up write until some agent wrote again (which then landed before it): the
    once-a-second look (``replay_due``) probes the lock and replays at once."""
    hold, release = locker
    app, db = _serving(tmp_path, monkeypatch, 300)
    try:
        proc = hold(db)
        assert app.remember("written while locked")["backup_only"]
        started = time.monotonic()
        app.replay_due()  # still locked: the probe waits for nothing, nothing replays
        assert time.monotonic() - started < 0.25
        assert app.status()["degraded"]["reason"] == "locked"
        release(proc)
        app.replay_due()
        status = app.status()
        assert status["degraded"] is None and status["pending_backup"] is None
        assert "1 backed-up write(s) replayed" in (app.backup_notice() or "")
        rows = app.conn.execute("SELECT memory_id, content FROM memories ORDER BY memory_id").fetchall()
        assert [c for _m, c in rows] == ["written before the lock", "written while locked"]
    finally:
        app.close()


def test_a_read_answers_when_the_fold_before_it_hits_a_full_disk(tmp_path: Path) -> None:
    """The fold of the after-commit read models ahead of a read writes; on a full disk it used
    to fail the read itself ("unavailable … nothing was stored" for ``status`` and ``find``)."""
    s = short_timeout(tmp_path)
    app = LedgerApp(s)
    kept = app.remember("written with space left")["memory_id"]
    app.find("written")  # folds it into full text
    app.remember("folded later " + "words to index " * 2000)  # full text trails until the next read
    assert app.storage.runner.pending
    views = app.storage.conn  # not app.conn: that folds first
    views.execute(f"PRAGMA max_page_count={views.execute('PRAGMA page_count').get}")
    status = app.status()
    assert status["ok"] and status["degraded"]["reason"] == "disk_full" and status["memories"] == 2
    assert [r["memory_id"] for r in app.find("written with space left")["results"]] == [kept]
    assert app.read(kept)["memory"]["content"] == "written with space left"
    retired = app.retire(kept, reason="moved", authorization=AUTH_USER)  # a write of such a call: backed up
    assert retired["backup_only"] and retired["reason"] == "disk_full"
    with pytest.raises(Unavailable) as behind:  # it said chain_broken: "search_docs differs … rebuild"
        app.verify()
    assert "intact" in behind.value.message and "behind" in behind.value.message
    views.execute("PRAGMA max_page_count=1073741823")  # space was freed
    assert_replayed_once(app, [retired], [])
    assert app.read(kept)["memory"]["status"] == "retired"
    app.close()


def test_a_file_that_becomes_writable_again_is_written_again(tmp_path: Path) -> None:
    """SQLite opened a file it could not write read-only without a word; nothing tried again, so
    a ``ledger serve`` started then sent every write to the backup for its whole life."""
    db = tmp_path / "ledger.db"
    backup = str(tmp_path / "backup.jsonl")
    seed = LedgerApp(Settings(db=str(db), backup=backup))
    seed.remember("written while writable")
    seed.close()
    if subprocess.run(["chattr", "+i", str(db)], capture_output=True).returncode != 0:
        pytest.skip("no chattr here: a file root cannot write is out of reach")
    try:
        app = LedgerApp(Settings(db=str(db), backup=backup, client="fault-test"))
        assert app.storage.read_only and app.status()["degraded"]["reason"] == "read_only"
        stuck = app.remember("written while stuck")
        assert stuck["backup_only"]
        app.storage.maybe_reopen(force=True)  # still immutable: stays read-only, nothing lost
        assert app.storage.read_only
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=True)
    app.storage.maybe_reopen(force=True)
    assert not app.storage.read_only and app.status()["degraded"] is None
    assert_replayed_once(app, [stuck], ["written while stuck"])
    assert app.remember("written after")["status"] == "active"
    app.close()


def test_a_folder_that_cannot_be_written_with_its_backup_in_it_says_writes_are_refused(tmp_path: Path) -> None:
    """A ledger in a read-only folder, its backup beside it: doctor and the note on stderr said
    "every write goes to the JSONL backup" while each write was refused, nothing stored."""
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "ledger.db"
    assert ledger_cli("--db", str(db), "remember", "written while writable").returncode == 0
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i needs root (a real read-only folder)")
    try:
        doctor = ledger_cli("--db", str(db), "--json", "doctor")
        (check,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "writable"]
        assert check["severity"] == "warning" and "every write is refused" in check["message"], check
        assert f"the JSONL backup {folder / 'ledger.backup.jsonl'} cannot be written" in check["message"]
        assert "goes to the JSONL backup" not in check["message"]
        assert "writes are refused" in doctor.stderr and "writes go to the JSONL backup" not in doctor.stderr
        write = ledger_cli("--db", str(db), "remember", "written while read-only")
        assert write.returncode == 5 and "nothing was stored" in write.stderr  # as doctor said
        # with the backup elsewhere, writes do go there, and doctor says so
        elsewhere = {"LEDGER_BACKUP": str(tmp_path / "backup.jsonl")}
        doctor = ledger_cli("--db", str(db), "--json", "doctor", env=elsewhere)
        (check,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "writable"]
        assert "every write goes to the JSONL backup" in check["message"], check
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
