"""Entity aliases (docs/governance.md "Entity aliases"): proposals, claims keyed through an
accepted alias, parting on rejection, rebuilds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.claims import extract_claims
from fact_ledger.ledger.entity_alias import propose, rekey, tokens
from fact_ledger.ledger.errors import InvalidInput, Unauthorized
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import REVIEW


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[LedgerApp]:
    app = LedgerApp(Settings(db=str(tmp_path / "a.db"), client="test", agent_id="pytest", policy=REVIEW))
    yield app
    app.close()


def pairs(found: list[dict[str, object]]) -> set[tuple[object, object]]:
    return {(p["alias"], p["canonical"]) for p in found}


def test_proposals_title_spelling_numeronym_and_shared_values() -> None:
    subjects = {"张工": 2, "张伟": 3, "Jon": 1, "John": 4, "k8s": 1, "kubernetes": 2, "李总": 1, "李明": 1, "李华": 1}
    subjects |= {"billing API": 2, "billing service": 3, "Ann": 1, "Bob": 1}
    values = [
        ("billing API", "is port", "8080"),
        ("billing service", "is port", "8080"),
        ("billing API", "owner", "ana"),
        ("billing service", "owner", "ana"),
        ("Ann", "lives in", "paris"),
        ("Bob", "lives in", "paris"),  # one shared value is not enough
    ]
    found = propose(subjects, values)
    assert pairs(found) == {
        ("张工", "张伟"),
        ("Jon", "John"),
        ("k8s", "kubernetes"),
        ("billing API", "billing service"),
    }  # 李总: two full names with the surname, ambiguous
    assert pairs(propose(subjects, values, decided=[("张伟", "张工"), ("Jon", "John")])) == {
        ("k8s", "kubernetes"),
        ("billing API", "billing service"),
    }


def test_an_alias_rekeys_a_claim_only_where_its_tokens_are() -> None:
    alias = [(tokens("张工"), tokens("张伟"))]
    (claim,) = rekey(extract_claims("张工的电话是13987654321", "张工"), alias)
    (theirs,) = extract_claims("张伟的电话是13812345678", "张伟")
    assert claim.key == theirs.key
    (other,) = rekey(extract_claims("李工的电话是13987654321", "李工"), alias)
    assert other.key != theirs.key


def test_accepted_aliases_meet_and_a_rejection_parts_them_across_rebuilds(ledger: LedgerApp) -> None:
    wei = ledger.remember(content="张伟的电话是13812345678", subject="张伟")["memory_id"]
    gong = ledger.remember(content="张工的电话是13987654321", subject="张工")
    assert gong["conflicts"] == []  # two names, two keys
    proposed = ledger.health()["aliases"]
    assert proposed[0]["alias"] == "张工" and proposed[0]["canonical"] == "张伟"
    assert proposed[0]["action"] == {"action": "accept_alias", "data": {"alias": "张工", "canonical": "张伟"}}
    with pytest.raises(Unauthorized):
        ledger.accept_entity_alias("张工", "张伟")
    accepted = ledger.accept_entity_alias("张工", "张伟", authorization=AUTH_USER)
    assert accepted["accepted"] and accepted["canonical"] == "张伟"
    assert ledger.health()["aliases"] == []  # decided: never proposed again
    third = ledger.remember(content="张伟的电话是13700000000", subject="张伟")
    (joined,) = third["conflicts"]
    assert joined["member_count"] == 3  # both names' numbers meet in one set
    members = {m["memory_id"] for m in ledger.conflict_detail(joined["conflict_id"])["conflict"]["memories"]}
    assert members == {wei, gong["memory_id"], third["memory_id"]}
    before = ledger.runner.checksums()
    ledger.rebuild()
    assert ledger.runner.checksums() == before

    ledger.reject_entity_alias("张工", "张伟", authorization=AUTH_USER)
    detail = ledger.conflict_detail(joined["conflict_id"])["conflict"]
    left = {m["memory_id"]: m["in_set"] for m in detail["memories"]}
    assert left == {wei: True, gong["memory_id"]: False, third["memory_id"]: True} and detail["member_count"] == 2
    later = ledger.remember(content="张工的电话是13600000000", subject="张工")
    assert [c["member_count"] for c in later["conflicts"]] == [2]  # 张工's numbers only
    before = ledger.runner.checksums()
    ledger.rebuild()
    assert ledger.runner.checksums() == before


def test_bad_alias_input_writes_nothing(ledger: LedgerApp) -> None:
    ledger.accept_entity_alias("Jon", "John", authorization=AUTH_USER)
    before = ledger.store.last_position()
    for alias, canonical in (("", "x"), ("John", "John"), ("the", "John"), ("John", "Jon"), ("Jonny", "the")):
        with pytest.raises(InvalidInput):
            ledger.accept_entity_alias(alias, canonical, authorization=AUTH_USER)
    assert ledger.store.last_position() == before
    with pytest.raises(InvalidInput) as nothing:  # it said "'A' and 'B' are already one key"
        ledger.accept_entity_alias("A", "B", authorization=AUTH_USER)
    assert str(nothing.value).startswith("'A' holds no word a claim is keyed by") and nothing.value.field == "alias"
    with pytest.raises(InvalidInput) as empty:  # an alias of nothing was accepted
        ledger.accept_entity_alias("Jonny", "the", authorization=AUTH_USER)
    assert empty.value.field == "canonical"


def test_a_decision_made_already_is_refused_and_writes_nothing(ledger: LedgerApp) -> None:
    """Accepting k8s → kubernetes twice wrote two events (docs/contract.md: ``invalid_input``
    for a pair that is already one key); so did the workspace names' ``accept``."""
    ledger.accept_entity_alias("k8s", "kubernetes", authorization=AUTH_USER)
    ledger.accept_alias("team-x", "beta", authorization=AUTH_USER)
    before = ledger.store.last_position()
    with pytest.raises(InvalidInput, match="already one key"):
        ledger.accept_entity_alias("k8s", "kubernetes", authorization=AUTH_USER)
    with pytest.raises(InvalidInput, match="already one workspace"):
        ledger.accept_alias("team-x", "beta", authorization=AUTH_USER)
    assert ledger.store.last_position() == before
    ledger.reject_entity_alias("k8s", "kubernetes", authorization=AUTH_USER)
    with pytest.raises(InvalidInput, match="already rejected"):
        ledger.reject_entity_alias("k8s", "kubernetes", authorization=AUTH_USER)
    ledger.accept_entity_alias("k8s", "kubernetes", authorization=AUTH_USER)  # a change of mind is a decision
    assert ledger.store.last_position() == before + 2


def test_an_alias_is_accepted_on_a_ledger_opened_again(tmp_path: Path) -> None:
    """The read models exist already on a second open, so no projector is created afresh."""
    settings = Settings(db=str(tmp_path / "again.db"), client="test", agent_id="pytest", policy=REVIEW)
    first = LedgerApp(settings)
    first.remember(content="张伟的电话是13812345678", subject="张伟")
    first.close()
    again = LedgerApp(settings)
    try:
        accepted = again.accept_entity_alias("张工", "张伟", authorization=AUTH_USER)
        assert accepted["accepted"]
        joined = again.remember(content="张工的电话是13987654321", subject="张工")
        assert [c["member_count"] for c in joined["conflicts"]] == [2]  # keyed through the alias
        rejected = again.reject_entity_alias("张工", "张伟", authorization=AUTH_USER)
        assert rejected["accepted"] is False
    finally:
        again.close()
