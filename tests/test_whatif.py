"""What-if (docs/governance.md "What-if"): every set's verdict under another rule order, listing
exactly the sets whose leader or settlement would change; nothing is written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.arbiter import RULE_ORDER
from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.ledger.whatif import rule_order
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import REVIEW

SWAPPED = ["protection", "source_type", "event_time", "confidence", "ingest_time"]


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[LedgerApp]:
    app = LedgerApp(Settings(db=str(tmp_path / "w.db"), client="test", agent_id="pytest", policy=REVIEW))
    yield app
    app.close()


def dispute(app: LedgerApp, name: str, first: tuple[str, str], second: tuple[str, str]) -> tuple[int, int, int]:
    """Two values of ``name``'s port: (source, event time) each; the second opens the set."""
    a = app.remember(content=f"The {name} port is 7001", subject=name, source_type=first[0], event_time=first[1])[
        "memory_id"
    ]
    b = app.remember(content=f"The {name} port is 7002", subject=name, source_type=second[0], event_time=second[1])
    return a, b["memory_id"], b["conflicts"][0]["conflict_id"]


def test_swapping_event_time_and_source_type_lists_exactly_the_sets_whose_leader_changes(ledger: LedgerApp) -> None:
    older_doc, newer_agent, flips = dispute(
        ledger, "alpha", ("document_extracted", "2026-01-01"), ("agent_generated", "2026-02-01")
    )
    dispute(ledger, "beta", ("document_extracted", "2026-01-01"), ("document_extracted", "2026-02-01"))
    dispute(ledger, "gamma", ("agent_generated", "2026-01-01"), ("document_extracted", "2026-02-01"))
    before = ledger.store.last_position()
    answer = ledger.whatif(SWAPPED)
    assert ledger.store.last_position() == before  # nothing written
    assert answer["rule_order"][1:3] == ["source_type", "event_time"] and answer["sets_checked"] == 3
    (changed,) = answer["changed"]
    assert changed["conflict_id"] == flips and changed["change"] == "leader"
    assert changed["now"]["leader_id"] == newer_agent and changed["now"]["rule"] == "event_time"
    assert changed["whatif"]["leader_id"] == older_doc and changed["whatif"]["rule"] == "source_type"
    assert any("source_type" in r for r in changed["whatif"]["reasons"])
    assert answer["unchanged"] == 2
    assert ledger.whatif(RULE_ORDER)["changed"] == []  # the fixed order changes nothing


def test_auto_settle_lists_what_the_policy_would_settle_and_a_settled_set_by_rules(ledger: LedgerApp) -> None:
    _, _, open_set = dispute(ledger, "delta", ("agent_generated", "2026-01-01"), ("agent_generated", "2026-02-01"))
    settled = ledger.whatif(RULE_ORDER, auto_settle=True)["changed"]
    assert [(c["conflict_id"], c["change"]) for c in settled] == [(open_set, "would_settle")]
    a, b, arbitrated = dispute(ledger, "eps", ("document_extracted", "2026-01-01"), ("agent_generated", "2026-02-01"))
    ledger.arbitrate(a, b, apply=True, authorization=AUTH_USER)  # event_time: b wins, a superseded
    listed = {c["conflict_id"]: c for c in ledger.whatif(SWAPPED)["changed"]}
    assert listed[arbitrated]["change"] == "settlement" and listed[arbitrated]["winner_id"] == b
    assert listed[arbitrated]["whatif"]["leader_id"] == a


def test_a_bad_rule_order_is_refused() -> None:
    assert rule_order("protection, source_type, event_time, confidence, ingest_time")[0] == RULE_ORDER[0]
    for bad in (["event_time"], ["event_time", "event_time", "source_type", "confidence", "ingest_time"], ["nope"]):
        with pytest.raises(InvalidInput):
            rule_order(bad)
