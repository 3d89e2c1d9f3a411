"""One seeded ledger, one ``ledger console`` subprocess and one headless Chromium for the package.

The console runs as the real command (``python -m server console --port 0``) and is stopped with
SIGINT, as Ctrl-C would; its exit status and stderr are checked at teardown. The browser is
Debian's ``chromium`` driven by Playwright (never Playwright's own downloaded browsers).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import REPO
from tests.console.seed import seed

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class Console:
    proc: subprocess.Popen[str]
    url: str  # with the token, as printed
    db: str
    ids: dict[str, Any]

    @property
    def base(self) -> str:
        return self.url.split("/?", 1)[0]

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    def events(self) -> int:
        """The log's length, read through a second facade (another process's view of the file)."""
        app = LedgerApp(Settings(db=self.db, client="test-reader"))
        try:
            return int(app.status()["events"])
        finally:
            app.close()

    def get(self, path: str) -> str:
        """A page as an authenticated client sees it (cookie from the printed token)."""
        cookie = f"ledger_console_{self.port}={self.token}"
        request = urllib.request.Request(self.base + path, headers={"Cookie": cookie})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.read().decode()

    def csrf(self) -> str:
        match = re.search(r'name="csrf" value="([^"]+)"', self.get(f"/memory/{self.ids['budget']}"))
        assert match, "the memory page carries the CSRF token in its forms"
        return match.group(1)


@pytest.fixture(scope="package")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    db = str(tmp_path_factory.mktemp("console") / "ledger.db")
    ids = seed(db)
    proc = subprocess.Popen(
        [sys.executable, "-m", "fact_ledger.server", "console", "--no-open", "--port", "0", "--db", db],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    url = ""
    for _ in range(5):
        line = proc.stdout.readline()
        if "token=" in line:
            url = line.strip()
            break
    assert url.startswith("http://127.0.0.1:"), url
    yield Console(proc, url, db, ids)
    proc.send_signal(signal.SIGINT)  # Ctrl-C
    _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr, stderr


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is needed for the console tests (apt-get install chromium fonts-noto-cjk)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, console: Console) -> Iterator[Any]:
    """A fresh browser context (own cookies) that has opened the printed URL."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    tab.goto(console.url)
    yield tab
    context.close()
