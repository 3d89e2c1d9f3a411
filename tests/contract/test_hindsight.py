"""docs/contract.md through ``ledger serve`` over stdio: ``memory_review health`` and
``memory_govern apply_suggestion`` / ``undo`` (docs/governance.md "Hindsight")."""

from __future__ import annotations

import pytest

from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow

BUDGETS = [100, 120, 150, 90, 200, 130, 175]
SOURCES = ["agent_generated", "document_extracted", "unknown"]


def remember(srv: LedgerServer, content: str, **data: object) -> int:
    r = srv.memory("remember", {"content": content, **data})
    assert r.ok, r.body
    return int(r["memory_id"])


def test_the_report_ranks_the_budget_first_and_a_suggestion_applies_and_undoes(srv: LedgerServer) -> None:
    budget = [
        remember(
            srv,
            f"The Apollo project budget is ${v}k",
            subject="Apollo project",
            source_type=SOURCES[i % 3],
            event_time=f"2026-0{i + 1}-05T10:00:00Z",
            source_ref=f"minutes-{i}",
        )
        for i, v in enumerate(BUDGETS)
    ]
    port = [remember(srv, f"The staging port is {p}", subject="staging") for p in (8080, 9090)]
    before = srv.events()
    report = srv.call("memory_review", "health", {})
    assert report.ok and srv.events() == before
    first, second = report["clusters"]
    assert first["member_count"] == 7 and sorted(first["members"]) == sorted(budget)
    assert len(first["values"]) == 7 and first["leader_id"] == budget[-1]
    suggestion = first["suggestion"]
    assert suggestion["kind"] == "settle" and suggestion["winner_id"] == budget[-1]
    assert sorted(second["members"]) == sorted(port)

    refused = srv.call("memory_govern", "apply_suggestion", {"suggestion_id": suggestion["suggestion_id"]})
    assert refused.code == "unauthorized" and srv.events() == before
    applied = srv.call(
        "memory_govern", "apply_suggestion", {"suggestion_id": suggestion["suggestion_id"], "authorized": True}
    )
    assert applied.ok, applied.body
    change = applied["change_id"]
    assert applied["conflict"]["state"] == "resolved"
    assert all(srv.memory("read", {"memory_id": m})["memory"]["status"] == "superseded" for m in budget[:-1])
    detail = srv.call("memory_review", "conflict_detail", {"conflict_id": first["conflict_id"]})
    assert detail["conflict"]["state"] == "resolved"

    undone = srv.call("memory_govern", "undo", {"change_id": change, "authorized": True})
    assert undone.ok and undone["undoes"] == change and undone["conflict"]["state"] == "open"
    assert all(srv.memory("read", {"memory_id": m})["memory"]["status"] == "active" for m in budget)
    again = srv.call("memory_review", "health", {"limit": 1})
    assert again["clusters"][0]["member_count"] == 7 and len(again["clusters"]) == 1
    assert [(c["kind"], c["undone_by"]) for c in again["changes"]] == [
        ("undo", None),
        ("apply_suggestion", undone["change_id"]),
    ]
    # History shows the change and its undo as units: each event names its change.
    history = srv.call("memory_review", "history", {"memory_id": budget[0]})
    by_change: dict[str, list[str]] = {}
    for version in history["versions"]:
        for event in version["events"]:
            if "change_id" in event:
                by_change.setdefault(event["change_id"], []).append(event["type"])
    assert sorted(by_change[change]) == ["ChangeRecorded", "Superseded"]
    assert sorted(by_change[undone["change_id"]]) == ["ChangeRecorded", "Reinstated"]
    audit = srv.call("memory_review", "audit", {"type": "ChangeRecorded"})
    assert [e["payload"]["kind"] for e in audit["events"]] == ["undo", "apply_suggestion"]

    stale = srv.call("memory_govern", "undo", {"change_id": change, "authorized": True})
    assert stale.code == "invalid_input"
    missing = srv.call("memory_govern", "undo", {"change_id": "no-such-change", "authorized": True})
    assert missing.code == "not_found"
    bad = srv.call("memory_review", "health", {"limit": 0})
    assert bad.code == "invalid_input"


def test_entity_aliases_are_proposed_accepted_and_rejected(srv: LedgerServer) -> None:
    remember(srv, "张伟的邮箱是 wei@corp.example", subject="张伟", workspace="people")
    remember(srv, "张伟的办公室是 A-301", subject="张伟", workspace="people")
    remember(srv, "张工的邮箱是 wei@corp.example", subject="张工", workspace="people")
    remember(srv, "张工的办公室是 A-301", subject="张工", workspace="people")
    proposed = srv.call("memory_review", "health", {})["aliases"]
    entry = next(a for a in proposed if a["alias"] == "张工")
    assert entry["canonical"] == "张伟" and len(entry["reasons"]) == 2  # the title, and two shared values
    refused = srv.call("memory_govern", "accept_alias", entry["action"]["data"])
    assert refused.code == "unauthorized"
    accepted = srv.call("memory_govern", entry["action"]["action"], {**entry["action"]["data"], "authorized": True})
    assert accepted.ok and accepted["accepted"] is True and accepted["canonical"] == "张伟"
    wei_phone = remember(srv, "张伟的电话是13812345678", subject="张伟", workspace="people")
    r = srv.memory("remember", {"content": "张工的电话是13987654321", "subject": "张工", "workspace": "people"})
    (conflict,) = r["conflicts"]
    assert conflict["other_id"] == wei_phone  # 张工's number meets 张伟's
    rejected = srv.call("memory_govern", "reject_alias", {"alias": "张工", "canonical": "张伟", "authorized": True})
    assert rejected.ok and rejected["accepted"] is False
    detail = srv.call("memory_review", "conflict_detail", {"conflict_id": conflict["conflict_id"]})["conflict"]
    assert detail["state"] == "resolved" and detail["resolution"] == "dissolved"
    # Workspace aliases keep their own actions.
    ws = srv.call("memory_govern", "accept", {"alias": "ppl", "canonical": "people", "authorized": True})
    assert ws.ok and ws["canonical"] == "people"


def test_whatif_lists_the_sets_whose_leader_changes_and_writes_nothing(srv: LedgerServer) -> None:
    old_doc = remember(
        srv, "The whatif port is 7001", subject="whatif", source_type="document_extracted", event_time="2026-01-01"
    )
    new_agent = remember(srv, "The whatif port is 7002", subject="whatif", event_time="2026-02-01")
    before = srv.events()
    order = ["protection", "source_type", "event_time", "confidence", "ingest_time"]
    r = srv.call("memory_review", "whatif", {"rule_order": order})
    assert r.ok and srv.events() == before
    (changed,) = [c for c in r["changed"] if c["claim"]["subject"] == "whatif"]
    assert changed["now"]["leader_id"] == new_agent and changed["whatif"]["leader_id"] == old_doc
    bad = srv.call("memory_review", "whatif", {"rule_order": ["event_time"]})
    assert bad.code == "invalid_input" and bad.error["field"] == "rule_order"


def test_ids_and_rule_names_typed_in_capitals_name_the_same_things(srv: LedgerServer) -> None:
    """``undo`` took a change id in capitals while ``apply_suggestion`` refused a suggestion id so
    typed ("not a suggestion of the health report") and ``whatif`` an "unknown rule"."""
    old_doc = remember(
        srv, "The capitals port is 7101", subject="capitals", source_type="document_extracted", event_time="2026-01-01"
    )
    new_agent = remember(srv, "The capitals port is 7102", subject="capitals", event_time="2026-02-01")
    order = ["Protection", "SOURCE_TYPE", " Event_Time", "confidence", "Ingest_Time "]
    r = srv.call("memory_review", "whatif", {"rule_order": order})
    assert r.ok, r.body
    (changed,) = [c for c in r["changed"] if c["claim"]["subject"] == "capitals"]
    assert changed["now"]["leader_id"] == new_agent and changed["whatif"]["leader_id"] == old_doc
    bad = srv.call("memory_review", "whatif", {"rule_order": ["Event_Time", "Source", "a", "b", "c"]})
    assert bad.code == "invalid_input" and "unknown rule 'Source'" in bad.error["message"]
    [cluster] = [c for c in srv.call("memory_review", "health", {})["clusters"] if c["claim"]["subject"] == "capitals"]
    typed = f" {cluster['suggestion']['suggestion_id'].upper()} "
    applied = srv.call("memory_govern", "apply_suggestion", {"suggestion_id": typed, "authorized": True})
    assert applied.ok, applied.body
    assert srv.memory("read", {"memory_id": old_doc})["memory"]["status"] == "superseded"
    undone = srv.call("memory_govern", "undo", {"change_id": applied["change_id"].upper(), "authorized": True})
    assert undone.ok and undone["undoes"] == applied["change_id"], undone.body
