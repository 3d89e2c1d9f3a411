"""docs/contract.md "Transport": a write SQLite refuses is answered ``backup_only`` through MCP, and
every later answer carries one notice until the backup is replayed."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow


def test_a_locked_database_answers_backup_only_then_replays(server_factory: Callable[..., LedgerServer]) -> None:
    srv = server_factory("locked", env={"LEDGER_BUSY_TIMEOUT_MS": "100"})
    srv.memory("remember", {"content": "written before the lock"})
    holder = apsw.Connection(str(srv.db))
    holder.setbusytimeout(5000)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        r = srv.memory("remember", {"content": "written while the database is locked"})
        assert r.ok and r["backup_only"] is True and "memory_id" not in r.body
        assert r["backup"]["event_ids"]
        later = srv.memory("find", {"query": "locked"})
        assert any("await replay" in n for n in later["notices"]), later.body
        assert len(later["notices"]) == 1  # said once per answer, not repeated
        before = srv.events()
        dry = srv.call("memory_repair", "replay_backup")
        assert dry.ok and srv.events() == before
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # the lock is gone: the server replays its backup by itself, before the next call (no write needed)
    replayed = srv.memory("find", {"query": "locked"})
    assert any("1 backed-up write(s) replayed" in n for n in replayed["notices"]), replayed.body
    applied = srv.call("memory_repair", "replay_backup", {"dry_run": False, "authorized": True})
    assert applied.ok and applied["appended"] == 0  # nothing left to land by hand
    assert srv.memory("remember", {"content": "written after the lock"}).body.get("memory_id")
    after = srv.memory("find", {"query": "locked"}).body
    assert "notices" not in after, after.get("notices")  # nothing pending, the database is fine again
    found = srv.memory("find", {"query": "written while the database is locked"})["results"]
    assert found and found[0]["content"] == "written while the database is locked"


def test_status_says_busy_while_another_process_holds_the_write_lock(
    server_factory: Callable[..., LedgerServer],
) -> None:
    """The MCP ``status`` answer said nothing while another connection held the write lock (each
    write then waits and goes to the backup); it names the locked file in ``busy`` now."""
    srv = server_factory("busy")
    srv.memory("remember", {"content": "written before the lock"})
    assert srv.memory("status")["busy"] is None
    holder = apsw.Connection(str(srv.db))
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        busy = srv.memory("status")["busy"]
        assert busy["files"] == [str(srv.db)], busy
        assert busy["message"].startswith(f"another process has held the write lock on the log ({srv.db})")
        assert "then it replays" in busy["message"]  # ledger serve replays by itself
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert srv.memory("status")["busy"] is None


def test_a_locked_database_with_a_backup_that_cannot_be_written_refuses_writes_and_says_so(
    server_factory: Callable[..., LedgerServer], tmp_path: Path
) -> None:
    """The log locked by another process and the JSONL backup's folder read-only: each write was
    refused (``unavailable``, nothing stored), but every later answer told the agent "writes go
    to the JSONL backup", and ``status`` that a write waiting for the lock went there. Both say
    writes are refused now."""
    folder = tmp_path / "backups"
    folder.mkdir()
    backup = folder / "ledger.backup.jsonl"
    srv = server_factory("refused", env={"LEDGER_BUSY_TIMEOUT_MS": "100", "LEDGER_BACKUP": str(backup)})
    srv.memory("remember", {"content": "written before the lock"})
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i needs root (a real read-only folder)")
    holder = apsw.Connection(str(srv.db))
    holder.setbusytimeout(5000)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        busy = srv.memory("status")["busy"]
        assert f"then is refused, nothing stored: the JSONL backup {backup} cannot be written" in busy["message"]
        r = srv.memory("remember", {"content": "written while the database is locked"})
        assert r.code == "unavailable" and "nothing was stored" in r.error["message"], r.body
        later = srv.memory("find", {"query": "written"})
        assert later.ok, later.body
        said = " ".join(later.body.get("notices", []))
        assert "writes are refused, nothing is stored: the JSONL backup cannot be written either" in said, said
        assert "writes go to the JSONL backup" not in said and "await replay" not in said
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    assert not backup.exists()  # nothing half-written
    assert srv.memory("remember", {"content": "written after the lock"}).body.get("memory_id")
