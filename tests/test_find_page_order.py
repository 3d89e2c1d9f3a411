"""Paging through ``find`` shows every match once: pages slice one order that does not move.

Ranked per page over a window sized by the page, the moves ``find`` makes after ranking (a
claim set's leader up to its challenger, the newest statement of a slot first) landed memories on
pages already read: with many statements of a few slots, paging 8 pages of 10 repeated 17 of 80.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

SERVICES = ("billing", "payments", "search", "auth", "ledger", "mail", "cache", "queue")
OWNERS = ("Alice", "Bob", "Carol", "Dan", "Erin")


@pytest.fixture(scope="module")
def slots(tmp_path_factory: pytest.TempPathFactory) -> LedgerApp:
    """300 statements of a few slots (ports and owners of eight services), and notes beside them."""
    db: Path = tmp_path_factory.mktemp("pages") / "ledger.db"
    app = LedgerApp(Settings(db=str(db), client="test"))
    rng = random.Random(3)
    for i in range(300):
        service, kind = rng.choice(SERVICES), rng.random()
        if kind < 0.4:
            text = f"The {service} service listens on port {8000 + rng.randrange(50)}"
        elif kind < 0.7:
            text = f"The {service} service owner is {rng.choice(OWNERS)}"
        else:
            text = f"Note {i}: the {service} service had an incident on day {i}"
        app.remember(text, source_type="agent_generated")
    yield app
    app.close()


def _pages(app: LedgerApp, query: str, limit: int, **filters: object) -> list[list[int]]:
    pages, cursor = [], None
    while True:
        r = app.find(query, limit=limit, cursor=cursor, **filters)
        pages.append([hit["memory_id"] for hit in r["results"]])
        cursor = r["next_cursor"]
        if cursor is None or len(pages) > 60:
            return pages


@pytest.mark.parametrize("query", ["service", "port", "owner", "billing service", "incident"])
@pytest.mark.parametrize("limit", [7, 10])
def test_pages_never_repeat_a_memory(slots: LedgerApp, query: str, limit: int) -> None:
    pages = _pages(slots, query, limit)
    shown = [memory_id for page in pages for memory_id in page]
    assert len(shown) == len(set(shown)), f"{len(shown) - len(set(shown))} repeated"
    assert all(len(page) == limit for page in pages[:-1])
    assert pages[0] == [hit["memory_id"] for hit in slots.find(query, limit=limit)["results"]]  # page one as it was


def test_paging_to_the_end_shows_every_match_of_the_first_pages(slots: LedgerApp) -> None:
    """Nothing a wider look would rank is skipped: what one large page shows, the small pages
    show too (in their own order)."""
    pages = _pages(slots, "owner", 10)
    shown = {memory_id for page in pages for memory_id in page}
    wide = {hit["memory_id"] for hit in slots.find("owner", limit=40)["results"]}
    assert wide <= shown


def test_inactive_memories_page_the_same_way(slots: LedgerApp) -> None:
    shown = [m for page in _pages(slots, "port", 10, include_inactive=True) for m in page]
    assert len(shown) == len(set(shown))


def test_a_write_between_pages_neither_repeats_nor_skips_a_memory(tmp_path: Path) -> None:
    """A write between two pages changes full text's word weights (and a retirement or an edit
    moves a memory): cut by position, the next pages repeated five memories and skipped five."""
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test"))
    try:
        for i in range(100):  # fewer than the ids a cursor carries (paging.MAX_SHOWN)
            app.remember(
                f"Note {i}: the {SERVICES[i % 3]} service had an incident on day {i}", source_type="agent_generated"
            )
        expected = {hit["memory_id"] for hit in app.find("incident", limit=200)["results"]}
        first = app.find("incident", limit=7)
        shown = [hit["memory_id"] for hit in first["results"]]
        for k in range(5):
            app.remember(f"Note new {k}: the billing service had an incident again", source_type="agent_generated")
        app.retire(shown[0], reason="wrong note", authorization=AUTH_USER)
        app.update(shown[1], content="Note edited: the cache service had an incident, later fixed")
        cursor = first["next_cursor"]
        while cursor:
            page = app.find("incident", limit=7, cursor=cursor)
            shown += [hit["memory_id"] for hit in page["results"]]
            cursor = page["next_cursor"]
        assert len(shown) == len(set(shown)), "a memory shown twice"
        assert expected - {shown[0]} <= set(shown), "a memory never shown"
    finally:
        app.close()


def test_the_working_notes_page_on_before_the_long_term_memories(tmp_path: Path) -> None:
    """Eight working notes answering the query: the first page of three showed three, and the
    next pages went on with long-term memories only; five notes were never shown."""
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test"))
    try:
        long_term = {app.remember(f"The billing service fact {i}")["memory_id"] for i in range(10)}
        notes = {
            app.remember(f"working: billing scratch note {i}", tier="working", session_id="sA", turn=i)["memory_id"]
            for i in range(8)
        }
        pages = _pages(app, "billing", 3, session_id="sA")
        shown = [memory_id for page in pages for memory_id in page]
        assert len(shown) == len(set(shown)) and notes | long_term == set(shown)
        assert set(shown[:8]) == notes  # the conversation's notes first
    finally:
        app.close()
