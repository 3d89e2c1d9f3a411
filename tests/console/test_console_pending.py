"""The Memory page shows this machine's backed-up changes to the memory that the log does not
hold yet, as an agent's ``read`` lists them (``pending_changes``), in both languages, in a real
headless Chromium. The page showed the memory as the log holds it and no word of the change."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import MemoryUpdated
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.console.test_console_start import _console

T0 = "2026-07-01T00:00:00.000000Z"


@pytest.fixture
def pending_console(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A console on a ledger whose backup holds an update of its one memory (as a write refused
    by a locked file leaves it): the printed URL and the memory's id."""
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db), client="test", create=True))
    memory_id = app.remember("The VPN gateway is vpn-2", subject="vpn")["memory_id"]
    stream = app.conn.execute("SELECT stream_id FROM memories WHERE memory_id=?", (memory_id,)).get
    change = MemoryUpdated(memory=stream, content="The VPN gateway is vpn-3", tags=("network",))
    request = {"op": "update", "args": [memory_id], "kwargs": {"content": "The VPN gateway is vpn-3"}}
    app.backup_log.append([NewEvent(data=change, stream_id=stream, event_time=T0)], request)
    changes = app.read(memory_id)["pending_changes"]  # what an agent's read lists
    assert [(c["type"], c["payload"]["content"]) for c in changes] == [("MemoryUpdated", "The VPN gateway is vpn-3")]
    app.close()
    proc = _console(db)
    assert proc.stdout is not None
    url = next((line.strip() for line in iter(proc.stdout.readline, "") if "token=" in line), "")
    try:
        assert url, "the console did not start"
        yield url, memory_id
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 0 and "Traceback" not in err, err


def test_the_memory_page_shows_a_pending_update_in_both_languages(
    browser: Any, pending_console: tuple[str, int]
) -> None:
    url, memory_id = pending_console
    base = url.split("/?", 1)[0]
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.goto(url)
        page.goto(f"{base}/memory/{memory_id}")
        assert page.inner_text("#content") == "The VPN gateway is vpn-2"  # the log's value, as read shows it
        pending = page.locator("#pending-changes")
        assert pending.count() == 1, "the page says nothing of the pending change"
        said = pending.inner_text()
        assert "waiting in this machine's JSONL backup" in said, said
        assert "MemoryUpdated" in said and "The VPN gateway is vpn-3" in said and "network" in said, said
        assert T0 in said
        page.click("#lang-switch")
        said = page.locator("#pending-changes").inner_text()
        assert "本机 JSONL 备份中等待写入日志" in said and "更新" in said, said
        assert "The VPN gateway is vpn-3" in said and "内容" in said, said  # the ledger's text as written
    finally:
        context.close()
