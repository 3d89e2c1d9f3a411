"""Every filter of ``find`` as an agent passes it (the facade, as the MCP route and the CLI call
it), lexical: source type, event-time range, tags, inactive memories, the page size and its
cursor. Each case holds memories that the filter must keep and ones it must drop, so a filter
that is ignored or inverted fails (the full mutation run found several that nothing checked)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Embedding, Settings
from tests.conftest import REVIEW


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[LedgerApp]:
    app = LedgerApp(
        Settings(db=str(tmp_path / "ledger.db"), client="test", policy=REVIEW, embedding=Embedding(enabled=False))
    )
    yield app
    app.close()


def _ids(answer: dict) -> set[int]:
    return {r["memory_id"] for r in answer["results"]}


def test_source_type_keeps_only_that_source(ledger: LedgerApp) -> None:
    person = ledger.remember("the parcel depot opens at nine", source_type="user_confirmed")["memory_id"]
    agent = ledger.remember("the parcel office closes at five", source_type="agent_generated")["memory_id"]
    document = ledger.remember("the parcel locker is by the door", source_type="document_extracted")["memory_id"]
    assert _ids(ledger.find("parcel", limit=10)) == {person, agent, document}
    assert _ids(ledger.find("parcel", limit=10, source_type="agent_generated")) == {agent}
    assert _ids(ledger.find("parcel", limit=10, source_type="document_extracted")) == {document}


def test_event_time_range_keeps_what_happened_inside_it(ledger: LedgerApp) -> None:
    ids = {
        year: ledger.remember(f"the harbour festival of {year} had lanterns", event_time=f"{year}-06-01T00:00:00Z")[
            "memory_id"
        ]
        for year in (2019, 2021, 2023)
    }
    after = ledger.find("harbour festival", limit=10, after_time="2020-01-01T00:00:00Z")
    assert _ids(after) == {ids[2021], ids[2023]}
    before = ledger.find("harbour festival", limit=10, before_time="2022-01-01T00:00:00Z")
    assert _ids(before) == {ids[2019], ids[2021]}
    both = ledger.find(
        "harbour festival", limit=10, after_time="2020-01-01T00:00:00Z", before_time="2022-01-01T00:00:00Z"
    )
    assert _ids(both) == {ids[2021]}
    # half-open, as the words say: from after_time on, and before (not at) before_time
    edge = "2021-06-01T00:00:00Z"
    assert _ids(ledger.find("harbour festival", limit=10, after_time=edge)) == {ids[2021], ids[2023]}
    assert _ids(ledger.find("harbour festival", limit=10, before_time=edge)) == {ids[2019]}


def test_tags_keep_memories_holding_every_tag(ledger: LedgerApp) -> None:
    both = ledger.remember("the kiln fires on mondays", tags=["pottery", "studio"])["memory_id"]
    one = ledger.remember("the kiln cools on tuesdays", tags=["pottery"])["memory_id"]
    ledger.remember("the kiln key hangs by the sink")
    assert _ids(ledger.find("kiln", limit=10, tags_filter=["pottery"])) == {both, one}
    assert _ids(ledger.find("kiln", limit=10, tags_filter=["pottery", "studio"])) == {both}


def test_inactive_memories_only_when_asked(ledger: LedgerApp) -> None:
    kept = ledger.remember("the glacier trail opens in may")["memory_id"]
    gone = ledger.remember("the glacier hut sells soup")["memory_id"]
    ledger.retire(gone, reason="closed", authorization=AUTH_USER)
    assert _ids(ledger.find("glacier", limit=10)) == {kept}
    everything = ledger.find("glacier", limit=10, include_inactive=True)
    assert _ids(everything) == {kept, gone}
    assert {r["memory_id"]: r["status"] for r in everything["results"]}[gone] == "retired"


def test_a_page_holds_limit_results_and_the_cursor_the_rest(ledger: LedgerApp) -> None:
    ids = [ledger.remember(f"orchard row {i} grows pears of kind {i}")["memory_id"] for i in range(7)]
    first = ledger.find("orchard pears", limit=3)
    assert len(first["results"]) == 3 and first["has_more"] is True and first["next_cursor"]
    seen = _ids(first)
    cursor = first["next_cursor"]
    while cursor:
        page = ledger.find("orchard pears", limit=3, cursor=cursor)
        assert len(page["results"]) <= 3 and not seen & _ids(page)
        seen |= _ids(page)
        cursor = page["next_cursor"]
        assert (cursor is None) == (page["has_more"] is False)
    assert seen == set(ids)
    whole = ledger.find("orchard pears", limit=7)
    assert _ids(whole) == set(ids) and whole["has_more"] is False and whole["next_cursor"] is None
    assert len(ledger.find("orchard pears")["results"]) == 5  # the default page


def test_an_empty_time_range_is_refused_not_answered_with_nothing(ledger: LedgerApp) -> None:
    """``find --after-time`` later than (or at) ``--before-time`` answered "no memories found", as
    if nothing had happened in a range that holds no time: it is refused now, naming both, at the
    terminal as over MCP (``invalid_input`` on ``after_time``)."""
    ledger.remember("The harbour festival is in June", event_time="2021-06-01T00:00:00Z")
    db = ledger.settings.db
    human = CliRunner().invoke(
        main, ["--db", db, "find", "harbour festival", "--after-time", "2022-01-01", "--before-time", "2020-01-01"]
    )
    assert human.exit_code == 1 and "no memories found" not in human.output, human.output
    assert human.stderr.startswith(
        "error (invalid_input): --after-time (2022-01-01T00:00:00.000000Z) is not before --before-time "
        "(2020-01-01T00:00:00.000000Z)"
    ), human.stderr
    said = CliRunner().invoke(
        main, ["--db", db, "--json", "find", "festival", "--after-time", "2021-01-01", "--before-time", "2021-01-01"]
    )
    assert said.exit_code == 1 and json.loads(said.stdout)["error"]["field"] == "after_time"
    kept = CliRunner().invoke(main, ["--db", db, "find", "harbour festival", "--after-time", "2020-01-01"])
    assert kept.exit_code == 0 and "The harbour festival is in June" in kept.stdout
