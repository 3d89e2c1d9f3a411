"""The read models hand out typed rows, JSON decoded once: a memory (``projections.memory_row``),
current or as the timeline knew it, and a claim set with its members' arbitration facts
(``projections.conflicts.queries``). A memory is shown by one rendering whether the answer is
current or as of a point (``server.app.memory_view``): the same memory reads the same both ways."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fact_ledger.ledger.arbiter import Side
from fact_ledger.projections import conversations as conv
from fact_ledger.projections import memories as mem
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.memory_row import CurrentMemory, MemoryRow, MemoryState
from fact_ledger.projections.timeline import asof
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

JAN, MAR = "2026-01-10T09:00:00.000000Z", "2026-03-01T12:00:00.000000Z"


@pytest.fixture
def app(tmp_path: Path) -> Any:
    ledger = LedgerApp(Settings(db=str(tmp_path / "rows.db"), client="test"))
    yield ledger
    ledger.close()


def test_both_read_models_give_the_same_typed_row(app: LedgerApp) -> None:
    made = app.remember(
        "The staging API listens on port 8080",
        subject="staging api",
        tags=["ops", "staging"],
        metadata={"ticket": "OPS-7", "owner": "dana"},
        event_time=JAN,
    )["memory_id"]
    app.storage.settle()  # the timeline is folded after the write commits
    current = mem.by_id(app.conn, made)
    state = asof.state_at(app.storage.store.conn, made, app.store.last_position())
    assert isinstance(current, CurrentMemory) and isinstance(state, MemoryState)
    assert current.tags == ("ops", "staging") and current.metadata == {"owner": "dana", "ticket": "OPS-7"}
    shared = MemoryRow.__struct_fields__
    assert {f: getattr(state, f) for f in shared} == {f: getattr(current, f) for f in shared}
    assert state.event_time == JAN and state.known_to is None and state.ended is None


def _without(view: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k not in keys}


def test_find_shows_a_memory_the_same_now_and_as_of_now(app: LedgerApp) -> None:
    old = app.remember("The gateway port is 8000", subject="gateway", tags=["net"], event_time=JAN)["memory_id"]
    new = app.remember("The gateway port is 8001", subject="gateway", event_time=MAR)["memory_id"]
    app.supersede(old, new, authorization="user_channel")
    now = app.find("gateway port", include_inactive=True, limit=10)["results"]
    then = app.find("gateway port", include_inactive=True, limit=10, as_of_recorded=app.store.last_position())[
        "results"
    ]
    assert sorted(r["memory_id"] for r in now) == sorted(r["memory_id"] for r in then) == [old, new]
    by_id = {r["memory_id"]: r for r in then}
    for result in now:  # every field but the score (each read model ranks its own text)
        assert _without(result, "score") == _without(by_id[result["memory_id"]], "score")
    ended = next(r for r in now if r["memory_id"] == old)
    assert ended["status"] == "superseded" and ended["valid_to"] == MAR and ended["tags"] == ["net"]


def test_read_shows_a_memory_the_same_now_and_as_of_now(app: LedgerApp) -> None:
    old = app.remember("The gateway port is 8000", subject="gateway", metadata={"rack": 4}, event_time=JAN)["memory_id"]
    new = app.remember("The gateway port is 8001", subject="gateway", event_time=MAR)["memory_id"]
    app.supersede(old, new, authorization="user_channel")
    last = app.store.last_position()
    for memory_id in (old, new):
        now = app.read(memory_id)["memory"]
        then = app.read(memory_id, as_of_recorded=last)["memory"]
        assert then == {k: now[k] for k in then}  # the as-of answer is the current one, less what only now knows
    assert app.read(old)["memory"]["metadata"] == {"rack": 4} and app.read(new)["memory"]["supersedes"] == [old]


def test_a_claim_set_row_and_its_members_are_typed(app: LedgerApp) -> None:
    first = app.remember("The cache port is 7000", subject="cache")["memory_id"]
    answer = app.remember("The cache port is 7001", subject="cache", source_type="document_extracted")
    (conflict,) = answer["conflicts"]
    row = conflicts_model.by_id(app.conn, conflict["conflict_id"])
    assert isinstance(row, conflicts_model.ConflictRow) and row.state == "open" and row.member_count == 2
    assert isinstance(row.verdict, dict) and (row.subject, row.attribute) == ("cache", "port")
    assert conflicts_model.unresolved_of(app.conn, first) == [row] == conflicts_model.unresolved(app.conn)
    members = conflicts_model.ranked_members(app.conn, row.conflict_id)
    assert all(isinstance(m, Side) for m in members)
    assert [m.memory_id for m in members] == [answer["memory_id"], first]  # the document outranks the agent
    joined = conflicts_model.members_of(app.conn, row.conflict_id)
    assert all(isinstance(m, conflicts_model.Member) and m.active is True for m in joined)
    assert [(m.memory_id, m.value) for m in joined] == [(first, "7000"), (answer["memory_id"], "7001")]


def test_a_working_note_row_is_typed(app: LedgerApp) -> None:
    note = app.remember(
        "Trying port 9000 for now", tags=["net", "net", "ops"], metadata={"try": 1}, session_id="s1", tier="working"
    )["memory_id"]
    row = conv.working_by_id(app.conn, note)
    assert isinstance(row, conv.WorkingNote) and row.session == "s1" and row.state == conv.WORKING
    assert row.tags == ("net", "ops") and row.metadata == {"try": 1} and row.sticky is False
    assert conv.working_set(app.conn, "s1", None, 5) == [row]
    assert app.read(note)["memory"]["tags"] == ["net", "ops"] and app.read(note)["memory"]["metadata"] == {"try": 1}
