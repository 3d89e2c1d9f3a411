"""``ledger console`` on a database it cannot use: a path with no ledger is refused before anything
listens (exit 5, nothing created, as every command but ``serve``: docs/cli.md); a ledger that
cannot be used now starts, says why on stderr as ``ledger serve`` does, and every page —
Doctor's checks included — is an error page, never a 500."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import REPO, ledger_cli


def _console(db: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "LEDGER_CREATE"}  # a person's console: no --create
    return subprocess.Popen(
        [sys.executable, "-m", "fact_ledger.server", "console", "--no-open", "--port", "0", "--db", str(db)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "PYTHONUNBUFFERED": "1"},
    )


def test_a_path_with_no_ledger_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    db = tmp_path / "does-not-exist.db"
    proc = _console(db)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 5 and "token=" not in out
    assert f"no ledger at {db}" in err and "ledger init" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def damaged_ledger(db: Path) -> Path:
    """A ledger whose schema page was overwritten: SQLite calls the file malformed (``corrupt``),
    a ledger that cannot be used rather than a path that holds none."""
    ledger_cli("init", "--db", str(db), check=True)
    with db.open("r+b") as fh:
        fh.seek(100)
        fh.write(b"\xff" * 3000)
    return db


def test_a_damaged_ledger_is_served_with_the_reason_and_doctor_is_an_error_page(tmp_path: Path) -> None:
    proc = _console(damaged_ledger(tmp_path / "damaged.db"))
    assert proc.stdout is not None
    url = next((line.strip() for line in iter(proc.stdout.readline, "") if "token=" in line), "")
    if not url:
        _, err = proc.communicate(timeout=20)
        raise AssertionError(f"the console did not start (exit {proc.returncode}): {err}")
    try:
        base, token = url.split("/?token=")
        cookie = {"Cookie": f"ledger_console_{base.rsplit(':', 1)[1]}={token}"}
        for path in ("/doctor?run=1", "/doctor", "/"):
            try:
                urllib.request.urlopen(urllib.request.Request(base + path, headers=cookie), timeout=10)
                status, body = 200, ""
            except urllib.error.HTTPError as exc:
                status, body = exc.code, exc.read().decode()
            if path == "/doctor":  # the page itself, before the checks are asked for
                assert status == 200, path
                continue
            assert status == 409 and re.search(r'id="error"><code>unavailable</code>', body), (path, status)
            assert "corrupt" in body
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert "fact-ledger: database unusable (corrupt)" in err
    assert proc.returncode == 0 and "Traceback" not in err
