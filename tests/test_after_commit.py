"""Full text and the timeline fold after a write commits (``after_commit`` projectors,
projections/runner.py): a write's transaction holds only what decisions read, and every read
still sees every write the log holds — this process's, another's, one whose process died
before it folded them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.projections.timeline.projector import TimelineProjector, _mark
from fact_ledger.server.app import storage as storage_module
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import REPO

AFTER = ("search", "timeline")


def checkpoints(app: LedgerApp) -> dict[str, int]:
    """The projections' checkpoints as the file holds them (the storage's runner: no settle)."""
    return app.storage.runner.checkpoints()


def ids(answer: dict) -> list[int]:
    return [m["memory_id"] for m in answer["results"]]


def test_a_write_leaves_full_text_and_the_timeline_to_the_next_read(app: LedgerApp) -> None:
    written = app.remember("The staging API listens on port 8080", subject="staging api")["memory_id"]
    held = checkpoints(app)
    assert held["memories"] == held["claims"] == held["conflicts"] == written  # decided on: inline
    assert all(held[name] < written for name in AFTER)
    assert app.storage.runner.pending == 1
    # The next read folds them first: the write is found, its history is there.
    assert ids(app.find("staging port")) == [written]
    assert all(checkpoints(app)[name] == written for name in AFTER)
    assert app.storage.runner.pending == 0
    assert [v["version"] for v in app.history(written)["versions"]] == [1]


def test_the_hot_writes_and_the_notices_leave_them_trailing(app: LedgerApp) -> None:
    first = app.remember("Deploys freeze on Fridays")["memory_id"]
    second = app.remember("The on-call engineer this week is Dana")["memory_id"]
    app.update(first, content="Deploys freeze on Thursdays", expected_version=1)
    app.backup_notice()
    assert app.storage.runner.pending == 3 and checkpoints(app)["search"] < second
    assert ids(app.find("Thursdays")) == [first]  # a read settles all three


def test_a_long_run_of_writes_folds_by_itself(app: LedgerApp, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage_module, "SETTLE_EVERY", 3)
    written = [app.remember(f"note {i} about the ferry")["memory_id"] for i in range(3)]
    assert app.storage.runner.pending == 0
    assert checkpoints(app)["search"] == checkpoints(app)["timeline"] == written[-1]


def _stored(position: int, recorded_at: str) -> StoredEvent:
    return StoredEvent(
        position=position, event_id=f"e{position}", stream_id="s", stream_version=position, type="MemoryRecorded",
        v=1, payload="{}", event_time=recorded_at, recorded_at=recorded_at, actor="", workspace="",
        idempotency_key=None, prev_hash="", hash="",
    )  # fmt: skip


def test_the_timeline_s_mark_leaves_the_full_text_terms_in_memory(tmp_path: Path) -> None:
    """FTS5 keeps a transaction's new terms in memory and writes them out as a segment at the
    commit, unless a statement asks it for a savepoint first (one that reads the table it
    writes opens a statement journal). The timeline's running ``recorded_at`` maximum was one
    ``INSERT … SELECT … WHERE NOT EXISTS``: folded after the full-text index, every event
    wrote a small segment of it and merged it again (half an after-commit fold's time)."""
    conn = apsw.Connection(str(tmp_path / "t.db"))
    TimelineProjector().create(conn)
    conn.execute("BEGIN IMMEDIATE")
    blocks = conn.execute("SELECT count(*) FROM tt_fts_data").get
    for position in range(1, 21):
        conn.execute(
            "INSERT INTO tt_fts(rowid, subject, body, tags) VALUES(?, '', ?, '')", (position, f"ferry {position}")
        )
        recorded = f"2026-01-01T00:00:{position:02d}.000000Z"
        _mark(conn, _stored(position, recorded))
        assert conn.execute("SELECT count(*) FROM tt_fts_data").get == blocks  # nothing written out yet
    conn.execute("COMMIT")
    assert conn.execute("SELECT count(*) FROM tt_marks").get == 20
    assert conn.execute("SELECT count(*) FROM tt_fts_data").get > blocks  # the one segment, at the commit


def test_another_open_ledger_reads_a_write_its_writer_has_not_folded(db_path: Path) -> None:
    reader = LedgerApp(Settings(db=str(db_path)))
    writer = LedgerApp(Settings(db=str(db_path)))
    try:
        assert reader.find("ferry")["results"] == []
        written = writer.remember("The ferry leaves at noon")["memory_id"]
        assert writer.storage.runner.pending == 1  # the writer has not folded it
        assert ids(reader.find("ferry")) == [written]  # the reader found the lag and folded it
        assert reader.storage.runner.pending == 0 and checkpoints(reader)["timeline"] == written
    finally:
        writer.close()
        reader.close()


def test_a_writer_killed_before_it_folds_loses_nothing(db_path: Path) -> None:
    script = (
        "import os, sys\n"
        "from fact_ledger.server.app.facade import LedgerApp\n"
        "from fact_ledger.server.config import Settings\n"
        "app = LedgerApp(Settings(db=sys.argv[1]))\n"
        "print(app.remember('The ferry leaves at noon')['memory_id'], flush=True)\n"
        "os._exit(0)  # no close, no settle\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(db_path)], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    written = int(done.stdout)
    app = LedgerApp(Settings(db=str(db_path)))
    try:
        assert ids(app.find("ferry")) == [written]
        assert app.runner.differs_from_fresh_fold() == []
    finally:
        app.close()


def test_what_a_write_derived_is_not_cached_once_another_ledger_erased_it(db_path: Path) -> None:
    writer = LedgerApp(Settings(db=str(db_path)))
    other = LedgerApp(Settings(db=str(db_path)))
    try:
        written = writer.remember("The zephyrine gateway listens on port 8080")["memory_id"]
        other.erase(written, reason="asked", authorization=AUTH_USER)
        writer.find("gateway")  # settles what it derived: dropped, an erasure came after it
        values = [bytes(v) for (v,) in writer.storage.conn.execute("SELECT value FROM derived_cache")]
        assert not any(b"zephyrine" in v for v in values)
    finally:
        writer.close()
        other.close()


def test_a_process_knows_its_own_writes_await_the_fold_without_a_statement(app: LedgerApp) -> None:
    app.remember("The ferry leaves at noon")
    ran: list[str] = []
    app.storage.conn.exec_trace = lambda _cursor, sql, _bindings: ran.append(sql) or True
    try:
        assert app.storage.runner.unsettled() and ran == []
    finally:
        app.storage.conn.exec_trace = None


def test_a_fold_stores_what_the_writes_since_the_last_one_derived(app: LedgerApp) -> None:
    def cached() -> int:
        return int(app.storage.conn.execute("SELECT count(*) FROM derived_cache").get)

    before = cached()
    app.remember("The ferry leaves at noon")
    assert cached() == before  # a write's claims and signature wait for the fold
    app.find("ferry")
    assert cached() == before + 2  # its claims and its signature
    app.storage.conn.execute("DELETE FROM derived_cache")
    app.remember("The night train leaves at ten")
    app.find("train")
    assert cached() == 2  # only what the second write derived: the first's were stored once


def test_read_models_at_different_checkpoints_each_fold_what_they_lack(app: LedgerApp) -> None:
    first = app.remember("The ferry leaves at noon")["memory_id"]
    second = app.remember("The night train leaves at ten")["memory_id"]
    app.storage.runner.rebuild(["search"])  # full text at the head, the timeline still behind
    assert checkpoints(app)["search"] == second and checkpoints(app)["timeline"] < first
    assert ids(app.find("ferry")) == [first] and ids(app.find("train")) == [second]
    assert app.runner.differs_from_fresh_fold() == []
