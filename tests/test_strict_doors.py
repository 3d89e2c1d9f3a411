"""A door strict isolation left open, found by a user's pass over every view: a memory's timeline
asked for by id."""

from __future__ import annotations

from pathlib import Path

import pytest

from fact_ledger.ledger.errors import ForbiddenWorkspace
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings


@pytest.fixture
def apps(tmp_path: Path):  # type: ignore[no-untyped-def]
    db = str(tmp_path / "ledger.db")
    alpha = LedgerApp(Settings(db=db, workspace="alpha", client="test"))
    kept = alpha.remember("The alpha gateway listens on port 7001")["memory_id"]
    alpha.close()
    beta = LedgerApp(Settings(db=db, workspace="beta", isolation="strict", client="test"))
    yield beta, kept
    beta.close()


def test_a_timeline_by_id_of_another_workspace_is_refused(apps) -> None:  # type: ignore[no-untyped-def]
    """It answered ``ok`` with no intervals, where a missing id is ``not_found``: the answer told
    that the id exists."""
    beta, alphas = apps
    with pytest.raises(ForbiddenWorkspace):
        beta.timeline(memory_id=alphas)
    own = beta.remember("The beta gateway listens on port 7002")["memory_id"]
    assert [i["memory_id"] for i in beta.timeline(memory_id=own)["intervals"]] == [own]


def test_history_of_another_workspace_s_working_note_is_refused(tmp_path: Path) -> None:
    """A working note's history is folded from its own stream: its workspace is checked there too."""
    db = str(tmp_path / "ledger.db")
    alpha = LedgerApp(Settings(db=db, workspace="alpha", client="test"))
    note = alpha.remember("maybe use redis", tier="working", session_id="s1", turn=1)["memory_id"]
    alpha.close()
    beta = LedgerApp(Settings(db=db, workspace="beta", isolation="strict", client="test"))
    try:
        with pytest.raises(ForbiddenWorkspace):
            beta.history(note)
        own = beta.remember("maybe use memcached", tier="working", session_id="s2", turn=1)["memory_id"]
        assert [v["content"] for v in beta.history(own)["versions"]] == ["maybe use memcached"]
    finally:
        beta.close()
