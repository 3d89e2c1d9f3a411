"""The review views' own filters and bounds, each with rows it must keep and rows it must drop:
audit by type, actor (a client, or one agent of it), memory and time; the conflicts page and its
limits; and the governed steps of hindsight and notices refusing without authorisation. The full
mutation run found each of these unchecked (docs/testing.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.errors import ForbiddenWorkspace, InvalidInput, NotFound, Unauthorized
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tests.conftest import REVIEW


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[LedgerApp, LedgerApp]]:
    """Two agents of two clients on one ledger."""

    def app(client: str, agent: str) -> LedgerApp:
        return LedgerApp(
            Settings(
                db=str(tmp_path / "ledger.db"),
                client=client,
                agent_id=agent,
                policy=REVIEW,
                embedding=Embedding(enabled=False),
            )
        )

    first, second = app("alpha-cli", "a1"), app("beta-cli", "b2")
    yield first, second
    first.close()
    second.close()


def _seen(answer: dict) -> list[tuple[str, str, int]]:
    return sorted((e["type"], e["actor"], e["memory_id"]) for e in answer["events"])


def test_audit_keeps_what_each_filter_names(two: tuple[LedgerApp, LedgerApp]) -> None:
    alpha, beta = two
    ferry = alpha.remember("the ferry leaves at noon")["memory_id"]
    bus = beta.remember("the bus leaves at one")["memory_id"]
    alpha.update(ferry, content="the ferry leaves at two")
    everything = _seen(alpha.audit())
    assert everything == sorted(
        [
            ("MemoryRecorded", "alpha-cli:a1", ferry),
            ("MemoryRecorded", "beta-cli:b2", bus),
            ("MemoryUpdated", "alpha-cli:a1", ferry),
        ]
    )
    assert _seen(alpha.audit(type="MemoryUpdated")) == [("MemoryUpdated", "alpha-cli:a1", ferry)]
    assert _seen(alpha.audit(actor="beta-cli")) == [("MemoryRecorded", "beta-cli:b2", bus)]  # the client
    assert _seen(alpha.audit(actor="alpha-cli:a1")) == [e for e in everything if e[1] == "alpha-cli:a1"]
    assert _seen(alpha.audit(actor="alpha-cli:a9")) == []  # another agent of that client
    assert _seen(alpha.audit(memory_id=bus)) == [("MemoryRecorded", "beta-cli:b2", bus)]
    assert _seen(alpha.audit(since="2100-01-01T00:00:00Z")) == []
    assert _seen(alpha.audit(until="2000-01-01T00:00:00Z")) == []
    assert _seen(alpha.audit(since="2000-01-01T00:00:00Z", until="2100-01-01T00:00:00Z")) == everything


def test_the_conflicts_page_and_its_limits(two: tuple[LedgerApp, LedgerApp]) -> None:
    alpha, _ = two
    for i in range(22):
        alpha.remember(f"the port of service s{i} is 80{i:02d}")
        alpha.remember(f"the port of service s{i} is 90{i:02d}")
    page = alpha.conflicts()
    assert len(page["conflicts"]) == 20 and page["has_more"] is True  # the default page
    assert len(alpha.conflicts(limit=200)["conflicts"]) == 22
    for bad in (0, 201):
        with pytest.raises(InvalidInput):
            alpha.conflicts(limit=bad)
    with pytest.raises(InvalidInput):
        alpha.conflicts(state="pending")


def test_the_overview_counts_each_state_zero_included(two: tuple[LedgerApp, LedgerApp]) -> None:
    alpha, _ = two
    assert alpha.overview()["conflicts"] == {"open": 0, "judged": 0, "resolved": 0}
    alpha.remember("the port of service mill is 8001")
    alpha.remember("the port of service mill is 9001")
    overview = alpha.overview()
    assert overview["conflicts"] == {"open": 1, "judged": 0, "resolved": 0} and overview["open_conflicts"] == 1


def _applied_change(app: LedgerApp) -> str:
    """Two sources disagree on a port; the health pass's suggestion applied: its change id."""
    app.remember("the port of service depot is 8001", source_type="document_extracted")
    app.remember("the port of service depot is 9001", source_type="agent_generated")
    [suggestion] = [c["suggestion"]["suggestion_id"] for c in app.health()["clusters"]]
    return str(app.apply_suggestion(suggestion, authorization=AUTH_USER)["change_id"])


def test_undo_needs_authorisation(two: tuple[LedgerApp, LedgerApp]) -> None:
    alpha, _ = two
    change = _applied_change(alpha)
    before = alpha.store.last_position()
    with pytest.raises(Unauthorized):
        alpha.undo(change)
    assert alpha.store.last_position() == before
    undone = alpha.undo(change, authorization=AUTH_USER)
    assert undone["ok"] is True and undone["undoes"] == change


def _strict(tmp_path: Path, workspace: str) -> LedgerApp:
    return LedgerApp(
        Settings(
            db=str(tmp_path / "ledger.db"),
            client="test",
            agent_id=workspace,
            workspace=workspace,
            isolation="strict",
            policy=REVIEW,
            embedding=Embedding(enabled=False),
        )
    )


def test_undo_stays_inside_its_workspace(tmp_path: Path) -> None:
    """Strict isolation: another workspace's agent cannot undo a change it cannot see, nor undo
    what is not a change, nor an undo."""
    alpha, beta = _strict(tmp_path, "alpha"), _strict(tmp_path, "beta")
    try:
        change = _applied_change(alpha)
        before = alpha.store.last_position()
        with pytest.raises(ForbiddenWorkspace):
            beta.undo(change, authorization=AUTH_USER)
        with pytest.raises(NotFound):
            beta.undo("no-such-change", authorization=AUTH_USER)
        with pytest.raises(InvalidInput):
            alpha.undo("  ", authorization=AUTH_USER)
        assert beta.store.last_position() == before
        undo = alpha.undo(change, authorization=AUTH_USER)["change_id"]
        with pytest.raises(InvalidInput, match="is an undo"):
            alpha.undo(undo, authorization=AUTH_USER)
        with pytest.raises(InvalidInput, match="already undone"):
            alpha.undo(change, authorization=AUTH_USER)
    finally:
        alpha.close()
        beta.close()


def test_near_duplicates_of_a_memory_stay_inside_its_workspace(tmp_path: Path) -> None:
    alpha, beta = _strict(tmp_path, "alpha"), _strict(tmp_path, "beta")
    try:
        text = "The staging cluster restarts every night at two in the morning for the backup window"
        first = alpha.remember(text)["memory_id"]
        second = alpha.remember(text + ", weekdays only")["memory_id"]
        alpha.remember("The office plants are watered on fridays")
        near = alpha.near_duplicates_of(first)["near_duplicates"]
        assert [n["memory_id"] for n in near] == [second]  # never itself, never an unrelated one
        assert alpha.near_duplicates_of(first, limit=1)["near_duplicates"] == near
        with pytest.raises(ForbiddenWorkspace):
            beta.near_duplicates_of(first)
        with pytest.raises(NotFound):
            alpha.near_duplicates_of(9999)
    finally:
        alpha.close()
        beta.close()
