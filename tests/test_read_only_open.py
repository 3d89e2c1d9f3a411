"""A ledger whose files can be read but not written at open: a read-only folder, a read-only
mount, a full disk. Every read used to answer "the database cannot be read" (exit 5) from an
empty stand-in, and a read-only mount was named ``cant_open`` ("unable to open database file").
Now the files are opened read-only: reads answer, writes go to the JSONL backup (listed by
``find`` as pending), and ``status`` names the real cause.

Real files and real mounts: root ignores permission bits, so the commands run with the
capabilities that let it drop (``setpriv``); the mounts are tmpfs and need root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.server.cli import exit_codes
from tests.conftest import REPO

ROOT = os.geteuid() == 0
NO_DAC = "--bounding-set=-dac_override,-dac_read_search"
AS_USER = ["setpriv", NO_DAC, "--inh-caps=-dac_override,-dac_read_search", "--"] if ROOT else []
needs_root = pytest.mark.skipif(not ROOT or not shutil.which("mount"), reason="a tmpfs mount needs root")
pytestmark = pytest.mark.skipif(ROOT and not shutil.which("setpriv"), reason="root needs setpriv to drop its powers")


def ledger(db: Path, *args: str, backup: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AS_USER, sys.executable, "-m", "fact_ledger.server", "--db", str(db), "--json", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={**os.environ, "LEDGER_CREATE": "", "LEDGER_BACKUP": str(backup)},
    )


def answer(run: subprocess.CompletedProcess[str], code: int = exit_codes.OK) -> dict:
    assert run.returncode == code, run.stdout + run.stderr
    return json.loads(run.stdout)


def seeded(folder: Path, backup: Path) -> Path:
    """A ledger in ``folder`` with one memory, folded into every read model, closed cleanly (no
    ``-wal`` or ``-shm`` left: a read-only open must do without them)."""
    db = folder / "x.db"
    assert ledger(db, "init", backup=backup).returncode == 0
    answer(ledger(db, "remember", "written while writable", backup=backup))
    answer(ledger(db, "find", "writable", backup=backup))
    return db


def assert_reads_and_backs_up(db: Path, backup: Path, reason: str, cause: str) -> None:
    found = answer(ledger(db, "find", "writable", backup=backup))
    assert [r["content"] for r in found["results"]] == ["written while writable"]
    assert answer(ledger(db, "read", "1", backup=backup))["memory"]["content"] == "written while writable"
    assert answer(ledger(db, "verify", backup=backup))["projections"] == "consistent"
    status = answer(ledger(db, "status", backup=backup), exit_codes.UNAVAILABLE)  # status: degraded
    assert status["memories"] == 1 and status["degraded"]["reason"] == reason
    assert cause in status["degraded"]["message"]
    stored = answer(ledger(db, "remember", "written while stuck", backup=backup), exit_codes.BACKUP_ONLY)
    assert stored["backup_only"] and stored["reason"] == reason
    pending = answer(ledger(db, "find", "stuck", backup=backup))["results"]
    assert [(r["content"], r["pending"]) for r in pending] == [("written while stuck", True)]
    assert answer(ledger(db, "status", backup=backup), exit_codes.UNAVAILABLE)["pending_backup"]["writes"] == 1


def test_a_read_only_folder_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "ledger"
    folder.mkdir()
    db = seeded(folder, tmp_path / "backup.jsonl")
    folder.chmod(0o555)
    try:
        assert_reads_and_backs_up(db, tmp_path / "backup.jsonl", "read_only", f"the folder {folder} cannot be written")
    finally:
        folder.chmod(0o755)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "mnt"
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@needs_root
def test_a_read_only_mount_is_read_and_named(tmpfs: Path, tmp_path: Path) -> None:
    db = seeded(tmpfs, tmp_path / "backup.jsonl")
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    assert_reads_and_backs_up(db, tmp_path / "backup.jsonl", "read_only", f"{tmpfs} is mounted read-only")


@needs_root
def test_a_full_disk_at_open_is_read_and_named(tmpfs: Path, tmp_path: Path) -> None:
    db = seeded(tmpfs, tmp_path / "backup.jsonl")
    filler = os.open(tmpfs / "filler", os.O_WRONLY | os.O_CREAT)
    try:  # fill the disk to its last byte
        while os.write(filler, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(filler)
    assert_reads_and_backs_up(db, tmp_path / "backup.jsonl", "disk_full", f"the disk holding {tmpfs} is full")
