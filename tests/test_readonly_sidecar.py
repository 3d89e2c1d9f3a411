"""The read-only ``-shm`` trap, as a user without root's power to ignore permission bits.

Opening a read-only database in WAL mode leaves ``DB-shm`` (and ``DB-wal``) read-only beside it;
once the database is writable again every write used to fail with ``read_only`` for ever. Root
ignores permission bits, so under root the commands run with every capability dropped
(``setpriv``), which makes the kernel check the bits as for any user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fact_ledger.ledger.log import dbfiles
from fact_ledger.server.cli import exit_codes
from tests.conftest import REPO

AS_USER = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--"] if os.geteuid() == 0 else []
pytestmark = pytest.mark.skipif(
    os.geteuid() == 0 and not shutil.which("setpriv"), reason="root needs setpriv (util-linux) to drop its capabilities"
)


def as_user(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AS_USER, sys.executable, "-m", "fact_ledger.server", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        env={**os.environ, "LEDGER_CREATE": ""},
    )


def test_a_sidecar_left_read_only_no_longer_blocks_the_replay(tmp_path: Path) -> None:
    db = tmp_path / "ro.db"
    assert as_user("init", "--db", str(db)).returncode == 0
    db.chmod(0o444)
    stuck = as_user("--db", str(db), "remember", "written while the file was read-only")
    assert stuck.returncode == exit_codes.BACKUP_ONLY, stuck.stderr
    shm = Path(f"{db}-shm")
    assert shm.exists() and not shm.stat().st_mode & 0o222  # the trap is set
    db.chmod(0o644)
    replay = as_user("--db", str(db), "--json", "replay-backup", "--apply")
    assert replay.returncode == exit_codes.OK, replay.stdout + replay.stderr
    assert '"appended": 1' in replay.stdout
    found = as_user("--db", str(db), "find", "read-only")
    assert "written while the file was read-only" in found.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_sidecar_of_another_user_is_named_with_what_to_do(tmp_path: Path) -> None:
    db = tmp_path / "ro.db"
    assert as_user("init", "--db", str(db)).returncode == 0
    db.chmod(0o444)
    as_user("--db", str(db), "remember", "x")
    db.chmod(0o644)
    shm = f"{db}-shm"
    os.chown(shm, 65534, 65534)
    stuck = as_user("--db", str(db), "replay-backup", "--apply")
    assert stuck.returncode == exit_codes.UNAVAILABLE
    assert shm in stuck.stderr and "chmod u+w" in stuck.stderr


def test_prepare_refuses_a_missing_database_without_create(tmp_path: Path) -> None:
    with pytest.raises(dbfiles.MissingDatabase, match="ledger init"):
        dbfiles.prepare(str(tmp_path / "a" / "b.db"), create=False)
    assert not (tmp_path / "a").exists()
    dbfiles.prepare(str(tmp_path / "a" / "b.db"), create=True)
    assert (tmp_path / "a").is_dir()
    dbfiles.prepare(":memory:", create=False)  # not a file: nothing to check
