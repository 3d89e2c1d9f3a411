"""``find`` and ``read`` at their edges, as the facade answers an agent: a cursor is bound to the
``include_cold`` choice of its first page, the working set shares the page with long-term
memories, and a read of an id the ledger never gave out is ``not_found`` (the full mutation run
found these unchecked)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fact_ledger.ledger import clock
from fact_ledger.ledger.errors import InvalidInput, NotFound
from fact_ledger.server.app.facade import LedgerApp


def _later(days: int) -> str:
    return clock.format_time(clock.to_datetime(clock.now()) + timedelta(days=days))


def _ids(answer: dict) -> list[int]:
    return [r["memory_id"] for r in answer["results"]]


def test_a_cursor_keeps_the_include_cold_choice_of_its_first_page(app: LedgerApp) -> None:
    for i in range(4):
        app.remember(f"the ferry timetable for pier {i} changed")
    first = app.find("ferry timetable", limit=2, include_cold=True)
    assert first["has_more"] is True
    second = app.find("ferry timetable", limit=2, include_cold=True, cursor=first["next_cursor"])
    assert set(_ids(second)).isdisjoint(_ids(first))
    with pytest.raises(InvalidInput) as refused:
        app.find("ferry timetable", limit=2, cursor=first["next_cursor"])
    assert refused.value.field == "cursor"


def test_pages_of_an_answer_from_the_cold_go_on_through_the_cold(app: LedgerApp) -> None:
    """With nothing hot answering, page one came from the cold memories (and warmed those it
    showed); page two looked at the hot alone, found only those again, and ended: four of seven
    matches were never shown."""
    relays = [app.remember(f"Zephyr relay number {i} sits in rack {i + 10}")["memory_id"] for i in range(7)]
    app.conversations.sweep(now=_later(60))  # cools them all
    shown, cursor = [], None
    while True:
        page = app.find("zephyr relay", limit=3, cursor=cursor)
        shown += _ids(page)
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(shown) == sorted(relays) and len(shown) == len(set(shown))


def test_cold_memories_stay_out_while_a_hot_one_answers(app: LedgerApp) -> None:
    old = app.remember("the lighthouse lamp was replaced")["memory_id"]
    app.conversations.sweep(now=_later(31))  # cools it
    hot = app.remember("the lighthouse keeper retired")["memory_id"]
    assert _ids(app.find("lighthouse", limit=5)) == [hot]
    assert set(_ids(app.find("lighthouse", limit=5, include_cold=True))) == {old, hot}


def test_working_notes_and_long_term_memories_share_one_page(app: LedgerApp) -> None:
    notes = [
        app.remember(f"draft {i}: the glacier survey plan", tier="working", session_id="s", turn=i)["memory_id"]
        for i in range(2)
    ]
    long_term = [app.remember(f"the glacier survey of year {i} is filed")["memory_id"] for i in range(4)]
    first = app.find("glacier survey", limit=3, session_id="s")
    assert len(first["results"]) == 3
    assert [r.get("tier") for r in first["results"]] == ["working", "working", "long"]
    assert set(_ids(first)[:2]) == set(notes)
    assert first["has_more"] is True
    rest = app.find("glacier survey", limit=3, session_id="s", cursor=first["next_cursor"])
    seen = _ids(first)[2:] + _ids(rest)
    while rest["has_more"]:
        rest = app.find("glacier survey", limit=3, session_id="s", cursor=rest["next_cursor"])
        seen += _ids(rest)
    assert sorted(seen) == sorted(long_term)  # every long-term memory once, no working note again


def test_reading_an_id_the_ledger_never_gave_out_is_not_found(app: LedgerApp) -> None:
    kept = app.remember("the orchard gate is green")["memory_id"]
    with pytest.raises(NotFound) as missing:
        app.read(kept + 1)
    assert missing.value.field == "memory_id"


def test_a_later_page_of_a_wide_find_is_full(app: LedgerApp) -> None:
    ids = [app.remember(f"the tide table entry {i} for the estuary")["memory_id"] for i in range(45)]
    first = app.find("tide table estuary", limit=20)
    second = app.find("tide table estuary", limit=20, cursor=first["next_cursor"])
    third = app.find("tide table estuary", limit=20, cursor=second["next_cursor"])
    assert [len(p["results"]) for p in (first, second, third)] == [20, 20, 5]
    assert sorted(_ids(first) + _ids(second) + _ids(third)) == ids
    assert third["has_more"] is False


def test_of_two_hits_the_one_stating_the_named_slot_answers_first(app: LedgerApp) -> None:
    stated = app.remember("The staging port is 8080 since the migration of the whole cluster last winter")
    repeated = app.remember("staging port notes: staging port docs, staging port wiki")
    # The second repeats the words more often (a higher text score); the first states the value
    # of the slot the query names ("staging port"), which outranks mere repetition.
    assert _ids(app.find("staging port")) == [stated["memory_id"], repeated["memory_id"]]


def test_a_lexical_find_reads_each_read_model_once(app: LedgerApp) -> None:
    for i in range(30):
        app.remember(f"The staging API number {i} listens on port {8000 + i}", subject=f"api {i}")
    app.find("staging port")  # warm: the first find prepares what later ones reuse
    statements: list[str] = []

    def trace(_cursor: object, sql: str, _bindings: object) -> bool:
        statements.append(sql)
        return True

    connections = {id(c): c for c in (app.conn, app.store.conn)}.values()
    for conn in connections:
        conn.exec_trace = trace
    try:
        app.find("staging port")
    finally:
        for conn in connections:
            conn.exec_trace = None
    # The hits' memory rows are read once (their order and the page share them), their claim
    # sets once (standing and conflict ids), and no cold look follows a hot-only search.
    assert sum("SELECT m.memory_id, m.stream_id" in s for s in statements) == 1
    assert sum("conflict_members" in s for s in statements) == 1
    assert not any("cold_memories c" in s for s in statements)
    assert len(statements) <= 12, statements
