"""Where writes go while the log takes none, worded once (``BackupLog.where_writes_go``).

``status`` and doctor, the CLI's offline warning and the write lock's busy message each wrote the
rule themselves ("writes go to the JSONL backup", "… until it is back", "a write … goes to the
JSONL backup"); they read it from one place now, with the words each said before.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fact_ledger.server.app.backup_log import BackupLog


def test_a_writable_backup_is_where_writes_go_in_each_form(tmp_path: Path) -> None:
    log = BackupLog(tmp_path / "ledger.backup.jsonl")
    assert log.where_writes_go() == "writes go to the JSONL backup"
    assert log.where_writes_go(then=" until it is back") == "writes go to the JSONL backup until it is back"
    assert log.where_writes_go(then=" (then it replays)", one=True) == "goes to the JSONL backup (then it replays)"


def test_a_backup_that_cannot_be_written_refuses_in_each_form(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    log = BackupLog(folder / "ledger.backup.jsonl")
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i needs root (a real read-only folder)")
    try:
        why = f"the JSONL backup {folder / 'ledger.backup.jsonl'} cannot be written either ({folder} is read-only)"
        assert log.why_unwritable() == why
        assert log.where_writes_go() == f"writes are refused: {why}"
        assert log.where_writes_go(then=" until it is back") == f"writes are refused: {why}"
        assert log.where_writes_go(then=" (then it replays)", one=True) == f"is refused, nothing stored: {why}"
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
