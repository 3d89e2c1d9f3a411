"""Slots found by meaning (ledger.meaning_slots): with vectors live, two memories close in meaning
that disagree on a value and are about the same subject in other words share a claim set, opened
by the periodic pass (``sweep``) and settled by the write policies; anything else stays a notice.

The tiny test model's cosines mean nothing, so closeness is switched off here (every pair is
close, as in tests/test_notices.py): what is tested is the gate after it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.facts import Policy
from fact_ledger.ledger.meaning_slots import same_slot
from fact_ledger.projections import notices
from fact_ledger.projections.indexer import Indexer
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

EVERY_PAIR_CLOSE = notices.Thresholds(similarity=-1.0, duplicate_similarity=2.0)
SHIPPED = Policy(settle_changes=True)  # tests/conftest.py pins review mode
JAN, APR = "2026-01-10T09:00:00Z", "2026-04-01T08:00:00Z"


@pytest.fixture
def sem(tmp_path: Path, tiny_gguf: Path) -> Iterator[LedgerApp]:
    settings = Settings(
        db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(model=str(tiny_gguf)), policy=SHIPPED
    )
    app = LedgerApp(settings)
    yield app
    app.close()


def index(app: LedgerApp) -> None:
    model = app.embedding_model()
    assert model is not None
    Indexer(app.store, model, thresholds=EVERY_PAIR_CLOSE).run()


def status(app: LedgerApp, memory_id: int) -> str:
    return str(app.read(memory_id)["memory"]["status"])


@pytest.mark.parametrize(
    ("left", "right", "subjects", "same"),
    [
        ("Bob sits by the window on floor 3", "Bob now sits by the window on floor 5", ("bob", "bob"), True),
        ("Bob's office is on floor 3", "Bob's desk is on floor 5", ("bob", "bob"), False),  # another thing of Bob's
        ("The billing API listens on port 8080", "The orders API listens on port 9090", ("", ""), False),
        ("Bob sits by the window on floor 3", "Bob sits by the window on floor 5", ("bob", "carol"), False),
        ("Bob sits by the window on floor 3", "The build takes 3 minutes on the CI runner", ("", ""), False),
        ("The nightly job needs 3 workers to finish", "The nightly job now needs 5 workers to finish", ("", ""), True),
    ],
)
def test_one_slot_needs_one_subject_and_the_same_words_around_the_value(
    left: str, right: str, subjects: tuple[str, str], same: bool
) -> None:
    assert same_slot(*subjects, left, right) is same


def test_the_pass_opens_a_set_and_a_later_value_settles_it(sem: LedgerApp) -> None:
    old = sem.remember("Bob sits by the window on floor 3", subject="Bob", event_time=JAN)["memory_id"]
    new = sem.remember("Bob now sits by the window on floor 5", subject="Bob", event_time=APR)["memory_id"]
    other = sem.remember("Carol sits by the door on floor 5", subject="Carol", event_time=APR)["memory_id"]
    index(sem)
    assert sem.notices()["notices"], "the vectors paired them (closeness switched off)"
    dry = sem.sweep(dry_run=True)
    assert dry["meaning_sets"] == [[old, new]] and status(sem, old) == "active"
    done = sem.sweep()
    assert done["meaning_sets"] == [[old, new]]
    assert status(sem, old) == "superseded" and status(sem, new) == "active" and status(sem, other) == "active"
    assert sem.read(old)["memory"]["superseded_by"] == new
    superseded = [e for v in sem.history(old)["versions"] for e in v["events"] if e["type"] == "Superseded"]
    assert superseded and superseded[0]["payload"]["rule"] == "event_time"
    assert sem.sweep()["meaning_sets"] == []  # once: the set exists (resolved)
    incremental = sem.runner.checksums()
    sem.rebuild()
    assert sem.runner.checksums() == incremental


def test_within_the_horizon_the_set_stays_open_for_a_person(sem: LedgerApp) -> None:
    a = sem.remember("Bob sits by the window on floor 3", subject="Bob", event_time=JAN)["memory_id"]
    b = sem.remember("Bob now sits by the window on floor 5", subject="Bob", event_time=JAN.replace("09:00", "09:10"))
    index(sem)
    assert sem.sweep()["meaning_sets"] == [[a, b["memory_id"]]]
    [conflict] = sem.conflicts()["conflicts"]
    assert conflict["claim"]["attribute"] == "meaning" and status(sem, a) == "active"
    assert sem.sweep()["meaning_sets"] == []  # not opened twice


def test_the_cli_sweep_names_the_sets_it_opens(sem: LedgerApp, tmp_path: Path) -> None:
    """As a person sees it: ``ledger sweep`` over the same ledger (the vectors already indexed)."""
    from tests.conftest import ledger_cli

    a = sem.remember("Bob sits by the window on floor 3", subject="Bob", event_time=JAN)["memory_id"]
    b = sem.remember("Bob now sits by the window on floor 5", subject="Bob", event_time=APR)["memory_id"]
    index(sem)
    db = sem.settings.db
    sem.close()
    env = {"LEDGER_POLICY_SETTLE_CHANGES": "1", "LEDGER_EMBEDDING_ENABLED": "false"}
    shown = ledger_cli("--db", db, "sweep", "--dry-run", env=env, check=True).stdout
    assert f"would open a claim set for #{a} and #{b}" in shown
    done = ledger_cli("--db", db, "sweep", env=env, check=True).stdout
    assert f"opened a claim set for #{a} and #{b}" in done
