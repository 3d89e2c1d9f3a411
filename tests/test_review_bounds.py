"""What the review views and ``ledger doctor`` answer at their edges: each doctor check's
severity, count and words on a clean ledger and on one with findings (a confirmation only an
agent asserted, open and judged conflicts, conflicts whose member is no longer current, a log
that cannot be reached); the field a refusal names for a memory or conflict that does not exist
or that another workspace holds; the near-duplicate limit; the overview's counts; audit by
client and by conflict; the health report under strict isolation; a search filtered by one
workspace name. The full mutation run found each of these unchecked (docs/testing.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.ledger.errors import ForbiddenWorkspace, NotFound
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.projections.search.queries import SearchFilters, search
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tests.conftest import REVIEW


def _app(tmp_path: Path, **extra: Any) -> LedgerApp:
    return LedgerApp(
        Settings(
            db=str(tmp_path / "ledger.db"),
            client="test",
            agent_id="pytest",
            policy=REVIEW,
            embedding=Embedding(enabled=False),
            **extra,
        )
    )


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[LedgerApp]:
    app = _app(tmp_path)
    yield app
    app.close()


def _checks(app: LedgerApp) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in app.doctor()["checks"]}


# -- ledger doctor ------------------------------------------------------------------------------


def test_doctor_on_a_ledger_without_findings(ledger: LedgerApp) -> None:
    ledger.remember("the ferry leaves at noon")
    checks = _checks(ledger)
    assert checks["agent_asserted_confirmations"] == {
        "name": "agent_asserted_confirmations",
        "severity": "ok",
        "message": "every user_confirmed fact was confirmed through a user channel",
    }
    assert checks["open_conflicts"] == {"name": "open_conflicts", "severity": "ok", "message": "no open conflicts"}
    assert checks["conflicts_with_inactive_members"] == {
        "name": "conflicts_with_inactive_members",
        "severity": "ok",
        "message": "every unresolved conflict is between current memories",
    }
    assert checks["read_models_head"]["severity"] == "ok"


def test_doctor_s_integrity_check_holds_after_another_process_merged_the_full_text(tmp_path: Path) -> None:
    """A long-lived process (the console, a server) ran ``quick_check`` on its own connection:
    once other processes had written and merged the full-text segments it had cached, FTS5's
    check called the file corrupt (critical) while ``ledger doctor`` in a new process said ok."""
    console = _app(tmp_path)
    try:
        console.remember("Alpha fact", subject="a")
        assert _checks(console)["integrity"]["severity"] == "ok"
        for i in range(6):
            other = _app(tmp_path)
            other.remember(f"Beta fact number {i} about port 80{i}", subject=f"b{i}")
            other.close()
        other = _app(tmp_path)
        other.update(1, content="Alpha fact revised")
        other.close()
        assert _checks(console)["integrity"] == {
            "name": "integrity",
            "severity": "ok",
            "message": "SQLite quick_check passed",
        }
    finally:
        console.close()


def test_doctor_names_an_erasure_that_could_not_be_finished(ledger: LedgerApp) -> None:
    assert _checks(ledger)["erasures_unfinished"]["severity"] == "ok"
    ledger.conn.execute("INSERT INTO erasures_unfinished VALUES('0190a000-0000-7000-8000-000000000000')")
    check = _checks(ledger)["erasures_unfinished"]
    assert (check["severity"], check["count"]) == ("critical", 1)
    assert check["message"].startswith("1 erased memories may still show their words")


def test_doctor_counts_a_confirmation_only_an_agent_asserted(ledger: LedgerApp) -> None:
    ledger.remember("the CI runner is buildkite", source_type="user_confirmed")
    ledger.remember("the CD runner is argo", source_type="user_confirmed")
    check = _checks(ledger)["agent_asserted_confirmations"]
    assert check == {
        "name": "agent_asserted_confirmations",
        "severity": "warning",
        "count": 2,
        "message": "2 user_confirmed fact(s) were confirmed only by an agent (agent_asserted); "
        "confirm them from the CLI (ledger confirm ID) or retire them",
    }


def _pair(app: LedgerApp, service: str) -> tuple[int, int, int]:
    """Two memories that disagree on a port: their ids and their conflict's."""
    first = app.remember(f"the port of service {service} is 8001")["memory_id"]
    second = app.remember(f"the port of service {service} is 9001")
    return first, second["memory_id"], second["conflicts"][0]["conflict_id"]


def test_doctor_adds_open_and_judged_conflicts(ledger: LedgerApp) -> None:
    _pair(ledger, "mill")
    a, b, judged = _pair(ledger, "kiln")
    ledger.judge(judged, b, rationale="the newer config", pins={str(a): 1, str(b): 1})
    assert ledger.overview()["conflicts"] == {"open": 1, "judged": 1, "resolved": 0}
    check = _checks(ledger)["open_conflicts"]
    assert check == {
        "name": "open_conflicts",
        "severity": "info",
        "count": 2,
        "message": "1 open and 1 judged conflict(s) await a decision (ledger conflicts)",
    }


def test_doctor_names_every_conflict_with_a_member_no_longer_current(ledger: LedgerApp) -> None:
    _, mill, mill_set = _pair(ledger, "mill")
    kiln, _, kiln_set = _pair(ledger, "kiln")
    _pair(ledger, "dock")  # both members current: not a finding
    # Settlement ends such a set at once; a ledger written by older code can still hold one.
    ledger.conn.execute("UPDATE memories SET status='retired' WHERE memory_id=?", (mill,))
    ledger.conn.execute("UPDATE memories SET status='superseded' WHERE memory_id=?", (kiln,))
    check = _checks(ledger)["conflicts_with_inactive_members"]
    assert check == {
        "name": "conflicts_with_inactive_members",
        "severity": "warning",
        "count": 2,
        "message": f"2 unresolved conflict(s) involve a memory that is no longer current: "
        f"conflict {mill_set} (#{mill} retired); conflict {kiln_set} (#{kiln} superseded); "
        "settle each (ledger conflict ID, then ledger resolve ID)",
    }


def test_doctor_with_the_log_of_record_unreachable(tmp_path: Path) -> None:
    """A team ledger whose PostgreSQL log cannot be reached: the read models answer, and the
    check that compares them with the log says there is nothing to compare with."""
    local = _app(tmp_path)
    local.remember("the ferry leaves at noon")
    local.close()
    offline = LedgerApp(
        Settings(
            store="postgresql://u@127.0.0.1:1/none?connect_timeout=1",
            views=str(tmp_path / "ledger.db"),
            backup=str(tmp_path / "backup.jsonl"),
            client="test",
            embedding=Embedding(enabled=False),
        )
    )
    try:
        assert offline.storage.offline
        assert _checks(offline)["read_models_head"] == {
            "name": "read_models_head",
            "severity": "info",
            "message": "the log of record cannot be reached: nothing to compare with",
        }
        # The chain cannot be checked during the outage: a warning to follow up, not a finding
        # that the chain is broken (doctor exits 1, not 2).
        chain = _checks(offline)["hash_chain"]
        assert chain["severity"] == "warning"
        assert chain["message"].startswith("the log of record cannot be reached, its chain is not checked")
    finally:
        offline.close()


# -- refusals name the field they are about -----------------------------------------------------


def test_a_missing_memory_is_named_by_the_field_it_came_in(ledger: LedgerApp) -> None:
    kept = ledger.remember("the ferry leaves at noon")["memory_id"]
    with pytest.raises(NotFound) as info:
        ledger.update(9999, content="the ferry leaves at one")
    assert info.value.field == "memory_id"
    with pytest.raises(NotFound) as info:
        ledger.remember("please disregard the ferry note", ref_id=9999, retracts=True)
    assert info.value.field == "ref_id"
    with pytest.raises(NotFound) as info:
        ledger.compare(kept, 9999)
    assert info.value.field == "right_id"
    with pytest.raises(NotFound) as info:
        ledger.compare(9999, kept)
    assert info.value.field == "left_id"
    with pytest.raises(NotFound) as info:
        ledger.conflict_detail(9999)
    assert info.value.field == "conflict_id"


def test_another_workspaces_memory_is_refused_by_the_field_it_came_in(tmp_path: Path) -> None:
    alpha = _app(tmp_path, workspace="alpha", isolation="strict")
    beta = _app(tmp_path, workspace="beta", isolation="strict")
    try:
        theirs = alpha.remember("the ferry leaves at noon")["memory_id"]
        mine = beta.remember("the bus leaves at one")["memory_id"]
        with pytest.raises(ForbiddenWorkspace) as info:
            beta.compare(mine, theirs)
        assert info.value.field == "right_id"
        with pytest.raises(ForbiddenWorkspace) as info:
            beta.compare(theirs, mine)
        assert info.value.field == "left_id"
    finally:
        alpha.close()
        beta.close()


# -- near duplicates and the overview -----------------------------------------------------------


def test_near_duplicates_of_a_memory_keep_to_the_limit(ledger: LedgerApp) -> None:
    text = "The staging cluster restarts every night at two in the morning for the backup window"
    first = ledger.remember(text)["memory_id"]
    others = [ledger.remember(f"{text}, {tail}")["memory_id"] for tail in ("weekdays only", "in summer", "always")]
    every = ledger.near_duplicates_of(first)["near_duplicates"]
    assert sorted(n["memory_id"] for n in every) == sorted(others)
    assert ledger.near_duplicates_of(first, limit=1)["near_duplicates"] == every[:1]
    assert ledger.near_duplicates_of(first, limit=2)["near_duplicates"] == every[:2]


def test_the_overview_counts_by_source_type_and_workspace(ledger: LedgerApp) -> None:
    ledger.remember("the ferry leaves at noon")
    ledger.remember("the bus leaves at one", workspace="travel")
    ledger.remember("the office opens at nine", source_type="document_extracted")
    overview = ledger.overview()
    assert overview["ok"] is True
    assert overview["by_source_type"] == {"agent_generated": 2, "document_extracted": 1}
    assert overview["by_status"]["active"] == 3
    assert sum(overview["by_workspace"].values()) == 3 and overview["by_workspace"]["travel"] == 1


# -- audit by client and conflict, health under strict isolation, search by one workspace ------


def test_audit_by_client_keeps_every_agent_of_it(tmp_path: Path) -> None:
    """``client`` names a client: the events of each of its agents, never another client's."""
    first = _app(tmp_path)  # client "test", agent "pytest"
    second = LedgerApp(
        Settings(db=str(tmp_path / "ledger.db"), client="other", agent_id="o1", embedding=Embedding(enabled=False))
    )
    try:
        mine = first.remember("the ferry leaves at noon")["memory_id"]
        theirs = second.remember("the bus leaves at one")["memory_id"]

        def seen(**query: str) -> list[tuple[str, int]]:
            return [(e["actor"], e["memory_id"]) for e in first.audit(**query)["events"]]

        assert seen(client="test") == [("test:pytest", mine)]
        assert seen(client="test:pytest") == [("test:pytest", mine)]
        assert seen(client="other") == [("other:o1", theirs)]
        assert seen(client="tes") == []
    finally:
        first.close()
        second.close()


def test_audit_of_a_conflict_keeps_only_its_events(ledger: LedgerApp) -> None:
    _, _, mill = _pair(ledger, "mill")
    a, b, kiln = _pair(ledger, "kiln")
    ledger.judge(kiln, b, rationale="the newer config", pins={str(a): 1, str(b): 1})
    assert [(e["type"], e["conflict_id"]) for e in ledger.audit(conflict_id=mill)["events"]] == [
        ("ClaimCollided", mill)
    ]
    assert [(e["type"], e["conflict_id"]) for e in ledger.audit(conflict_id=kiln)["events"]] == [
        ("JudgmentSubmitted", kiln),
        ("ClaimCollided", kiln),
    ]


def test_the_health_report_keeps_to_the_callers_workspace(tmp_path: Path) -> None:
    """Strict isolation: a disagreement in beta, settled there, shows in beta's report only."""
    alpha = _app(tmp_path, workspace="alpha", isolation="strict")
    beta = _app(tmp_path, workspace="beta", isolation="strict")
    try:
        alpha.remember("the ferry leaves at noon")
        beta.remember("the port of service depot is 8001", source_type="document_extracted")
        beta.remember("the port of service depot is 9001", source_type="agent_generated")
        report = beta.health()
        assert report["cluster_count"] == 1
        [suggestion] = [c["suggestion"]["suggestion_id"] for c in report["clusters"]]
        change = beta.apply_suggestion(suggestion, authorization=AUTH_USER)["change_id"]
        assert [c["change_id"] for c in beta.health()["changes"]] == [change]
        theirs = alpha.health()
        assert (theirs["cluster_count"], theirs["clusters"], theirs["changes"]) == (0, [], [])
    finally:
        alpha.close()
        beta.close()


def test_a_search_filtered_by_one_workspace_name(ledger: LedgerApp) -> None:
    """The search projection takes a workspace as one name as well as a tuple of names."""
    alpha = ledger.remember("the ferry leaves at noon", workspace="alpha")["memory_id"]
    beta = ledger.remember("the ferry leaves at one", workspace="beta")["memory_id"]
    for workspace, expected in (("alpha", [alpha]), (("beta",), [beta]), (None, sorted([alpha, beta]))):
        hits, _ = search(ledger.conn, "ferry", SearchFilters(workspace=workspace), 10)
        assert sorted(h.memory_id for h in hits) == expected
