"""``ledger serve`` folds its writes into full text and the timeline between tool calls
(server/mcp/server.py, ``_settle_between_calls``): nobody has to read first."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import apsw

from tests.contract.conftest import LedgerServer


def views_checkpoints(db: Path) -> dict[str, int]:
    """The read models' checkpoints as another process sees the file (read only: it folds nothing)."""
    conn = apsw.Connection(str(db.with_suffix(".views.db")), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return dict(conn.execute("SELECT name, position FROM projection_checkpoints"))
    finally:
        conn.close()


def test_a_write_reaches_full_text_and_the_timeline_without_a_read(
    server_factory: Callable[..., LedgerServer],
) -> None:
    server = server_factory("settles")
    written = server.memory("remember", {"content": "The ferry leaves at noon"})["memory_id"]
    deadline = time.monotonic() + 10
    held = views_checkpoints(server.db)
    while held["search"] < written and time.monotonic() < deadline:
        time.sleep(0.05)
        held = views_checkpoints(server.db)
    assert held["memories"] == held["search"] == held["timeline"] == written
