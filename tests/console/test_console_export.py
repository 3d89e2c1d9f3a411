"""The audit export's download leaves nothing behind in the temporary folder, even when it is refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.console.test_console_start import damaged_ledger


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_refused_export_leaves_no_file_in_the_temporary_folder(tmp_path: Path, fmt: str) -> None:
    """A console on a ledger it cannot read (a damaged file: a path with no ledger is refused at
    start) refuses the export; the file it was writing to had a name in the temporary folder and
    stayed there, one per refused download."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    damaged = damaged_ledger(tmp_path / "damaged.db")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fact_ledger.server", "console", "--no-open", "--port", "0", "--db", str(damaged)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(temporary)},
    )
    assert proc.stdout is not None
    try:
        url = next(line.strip() for line in proc.stdout if "token=" in line)
        base, token = url.split("/?token=")
        port = base.rsplit(":", 1)[1]
        request = urllib.request.Request(
            f"{base}/audit/export.{fmt}", headers={"Cookie": f"ledger_console_{port}={token}"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 409
        assert "the database cannot be read (corrupt)" in refused.value.read().decode()
        assert list(temporary.iterdir()) == []
    finally:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=20)
    assert "Traceback" not in stderr, stderr
