"""Workspace names with stray whitespace (issue 29, point 10): a suggestion accepted as it was
made really merges the two names, and no new padded name is recorded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import AUTH_USER, MemoryRecorded
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings


@pytest.fixture
def app(db_path: Path) -> Iterator[LedgerApp]:
    """A ledger whose first memory an older release stored under "Aurora " (events are never
    rewritten, so the padded name stays recorded)."""
    store = EventStore(db_path)
    stream = uuid7()
    event = MemoryRecorded(memory=stream, content="aurora ports are 7000-7100")
    store.append(
        [NewEvent(data=event, stream_id=stream, event_time="2025-01-01T00:00:00.000000Z", workspace="Aurora ")]
    )
    store.close()
    app = LedgerApp(Settings(db=str(db_path), client="test"))
    yield app
    app.close()


@pytest.mark.parametrize("typed", ["Aurora ", "Aurora"])
def test_accepting_the_suggestion_merges_the_padded_name(app: LedgerApp, typed: str) -> None:
    old = 1
    for n in (1, 2):
        app.remember(f"aurora note {n}", workspace="aurora")
    suggestion = {"alias": "Aurora ", "canonical": "aurora"}
    assert app.workspaces()["suggestions"] == [suggestion]
    accepted = app.accept_alias(typed, "aurora", authorization=AUTH_USER)
    assert accepted["alias"] == "Aurora " and accepted["canonical"] == "aurora"
    listing = app.workspaces()
    assert listing["suggestions"] == []
    assert listing["aliases"] == [suggestion]
    assert old in [r["memory_id"] for r in app.find("aurora ports", workspace="aurora")["results"]]
    assert app.overview()["by_workspace"] == {"aurora": 3}  # one row per workspace


def test_a_padded_name_is_stored_without_its_whitespace(app: LedgerApp) -> None:
    written = app.remember("zephyr port is 9000", workspace=" zephyr ")["memory_id"]
    assert app.read(written)["memory"]["workspace"] == "zephyr"
    assert "zephyr" in [w["name"] for w in app.workspaces()["workspaces"]]
    assert " zephyr " not in [w["name"] for w in app.workspaces()["workspaces"]]
