"""docs/contract.md through ``ledger serve`` over stdio: retractions always land (``remember`` with
``ref_id`` + ``retracts``, and a cancellation without one), and ``find`` keeps short facts whole."""

from __future__ import annotations

import pytest

from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow

CANCELLED = "The nightly orders backup is cancelled"


def remember(srv: LedgerServer, content: str, **data: object) -> dict[str, object]:
    r = srv.memory("remember", {"content": content, **data})
    assert r.ok, r.body
    return r.body


def status(srv: LedgerServer, memory_id: object) -> str:
    return str(srv.memory("read", {"memory_id": memory_id})["memory"]["status"])


def test_a_repeated_retraction_text_still_retracts_its_target(srv: LedgerServer) -> None:
    first = remember(srv, "Run the nightly orders backup at 02:00", workspace="backups")["memory_id"]
    second = remember(srv, "Run the nightly orders backup on the replica at 03:00", workspace="backups")["memory_id"]
    cancel = remember(srv, CANCELLED, ref_id=first, retracts=True, workspace="backups")
    assert cancel["retracted"] == [first]
    again = remember(srv, CANCELLED, ref_id=second, retracts=True, workspace="backups")
    assert again["duplicate_of"] == cancel["memory_id"] and again["retracted"] == [second]
    assert status(srv, second) == "retired"
    memory = srv.memory("read", {"memory_id": cancel["memory_id"]})["memory"]
    assert memory["retracts"] == [first, second]


def test_a_cancellation_without_ref_id_finds_its_one_target(srv: LedgerServer) -> None:
    minutes = remember(srv, "Send the minutes to the team after each meeting", workspace="meetings")["memory_id"]
    r = remember(srv, "don't send the minutes", workspace="meetings")
    assert r["retracted"] == [minutes] and status(srv, minutes) == "retired"
    mail = remember(srv, "每天下午五点给客户发邮件", workspace="meetings")["memory_id"]
    zh = remember(srv, "不要发邮件了", workspace="meetings")
    assert zh["retracted"] == [mail]


def test_an_ambiguous_cancellation_answers_with_candidates(srv: LedgerServer) -> None:
    acme = remember(srv, "Send the invoice to Acme every Friday", workspace="billing")["memory_id"]
    globex = remember(srv, "Send the invoice to Globex every Monday", workspace="billing")["memory_id"]
    r = remember(srv, "Stop sending the invoice", workspace="billing")
    assert "retracted" not in r
    assert {c["memory_id"] for c in r["retraction_candidates"]} == {acme, globex}  # type: ignore[attr-defined]
    assert status(srv, acme) == status(srv, globex) == "active"
    unrelated = remember(srv, "The cancel button of the invoice form is grey", workspace="billing")
    assert "retracted" not in unrelated and status(srv, acme) == "active"


def test_a_value_that_no_longer_holds_ends_its_memory_and_find_answers_the_rest(srv: LedgerServer) -> None:
    owner = remember(srv, "Alice owns the billing service", workspace="ops")["memory_id"]
    r = remember(srv, "Alice is no longer the owner of the billing service", workspace="ops")
    assert r["retracted"] == [owner] and "reinstated" not in r and status(srv, owner) == "retired"
    found = srv.memory("find", {"query": "billing service owner", "workspace": "ops"})["results"]
    assert [x["memory_id"] for x in found] == [r["memory_id"]]
    port = remember(srv, "The staging API listens on port 8080", workspace="ops")["memory_id"]
    stopped = remember(srv, "The staging API stopped listening on port 8080 after the migration", workspace="ops")
    assert stopped["retracted"] == [port] and status(srv, port) == "retired"


def test_find_keeps_short_facts_whole(srv: LedgerServer) -> None:
    facts = [f"The VPN portal for region {i} moved to https://vpn{i}.acme.dev/portal" for i in range(10)]
    for fact in facts:
        remember(srv, fact, workspace="vpn", tags=["network", "vpn", "portal"])
    r = srv.memory("find", {"query": "VPN portal moved", "limit": 10, "workspace": "vpn"})
    assert sorted(x["content"] for x in r["results"]) == sorted(facts)
    assert not any(x.get("truncated") for x in r["results"])
