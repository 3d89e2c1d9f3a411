"""Workspace isolation (none / weak / strict) and aliases on the facade."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.errors import ForbiddenWorkspace, InvalidInput, Unauthorized
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

AppFor = Callable[..., LedgerApp]


@pytest.fixture
def app_for(db_path: Path) -> Iterator[AppFor]:
    """Several facades (think: several agents) on one database file."""
    opened: list[LedgerApp] = []

    def make(workspace: str = "", isolation: str = "none", agent: str = "a") -> LedgerApp:
        app = LedgerApp(
            Settings(db=str(db_path), client="test", agent_id=agent, workspace=workspace, isolation=isolation)
        )
        opened.append(app)
        return app

    yield make
    for app in opened:
        app.close()


def ids(result: dict) -> list[int]:
    return [r["memory_id"] for r in result["results"]]


def test_strict_filters_find_and_refuses_other_workspaces(app_for: AppFor) -> None:
    alpha, beta = app_for("alpha", "strict"), app_for("beta", "strict")
    mine = alpha.remember("the deploy port is 7000")["memory_id"]
    theirs = beta.remember("the deploy port is 9000")["memory_id"]
    assert ids(alpha.find("deploy port")) == [mine]
    assert ids(beta.find("deploy port")) == [theirs]
    assert alpha.read(mine)["memory"]["workspace"] == "alpha"
    assert [v["version"] for v in alpha.history(mine)["versions"]] == [1]  # its own: answered
    for call in (
        lambda: alpha.read(theirs),
        lambda: alpha.history(theirs),
        lambda: alpha.update(theirs, content="hijacked"),
    ):
        with pytest.raises(ForbiddenWorkspace) as info:
            call()
        assert info.value.code == "forbidden_workspace" and info.value.field == "memory_id"
    with pytest.raises(ForbiddenWorkspace) as info:
        alpha.find("deploy", workspace="beta")
    assert info.value.field == "workspace"
    with pytest.raises(ForbiddenWorkspace):
        alpha.remember("planted", workspace="beta")
    assert beta.read(theirs)["memory"]["content"] == "the deploy port is 9000"  # untouched


def test_strict_isolation_holds_for_time_travel_too(app_for: AppFor) -> None:
    """As-of find filters to the caller's workspace and as-of read refuses another's memory,
    on both time axes, exactly like the present-tense calls."""
    alpha, beta = app_for("alpha", "strict"), app_for("beta", "strict")
    mine = alpha.remember("the deploy port is 7000", event_time="2025-07-01T00:00:00Z")["memory_id"]
    theirs = beta.remember("the deploy port is 9000", event_time="2025-07-01T00:00:00Z")["memory_id"]
    head = alpha.store.last_position()
    points = [
        {"as_of_recorded": head},
        {"as_of_event_time": "2025-08-01T00:00:00Z"},
        {"as_of_recorded": head, "as_of_event_time": "2025-08-01T00:00:00Z"},
    ]
    for point in points:
        assert ids(alpha.find("deploy port", **point)) == [mine], point
        assert ids(beta.find("deploy port", **point)) == [theirs], point
        assert ids(alpha.find("deploy port", include_inactive=True, **point)) == [mine], point
        found = alpha.read(mine, **point)
        assert found["ok"] is True and found["memory"]["workspace"] == "alpha"
        assert alpha.find("deploy port", **point)["ok"] is True
        with pytest.raises(ForbiddenWorkspace) as info:
            alpha.read(theirs, **point)
        assert info.value.code == "forbidden_workspace" and info.value.field == "memory_id"
        with pytest.raises(ForbiddenWorkspace) as info:
            alpha.find("deploy", workspace="beta", **point)
        assert info.value.field == "workspace"
    # none: the same as-of search sees both workspaces (the filter above is isolation's, not the data's)
    assert set(ids(app_for("alpha", "none").find("deploy port", as_of_recorded=head))) == {mine, theirs}


def test_strict_lists_only_the_callers_workspace_its_aliases_and_suggestions(app_for: AppFor) -> None:
    for workspace, note in (
        ("alpha", "a1"),
        ("alpha", "a2"),
        ("Alpha", "a3"),
        ("beta", "b1"),
        ("beta", "b2"),
        ("Beta", "b3"),
        ("team-x", "x1"),
    ):
        app_for(workspace).remember(f"note {note}")
    app_for("beta").accept_alias("team-x", "beta", authorization=AUTH_USER)
    everything = app_for("alpha").workspaces()  # isolation none: every workspace
    assert {w["name"] for w in everything["workspaces"]} == {"alpha", "Alpha", "beta", "Beta", "team-x"}
    alpha = app_for("alpha", "strict").workspaces()
    assert alpha["ok"] is True
    assert [w["name"] for w in alpha["workspaces"]] == ["alpha"]
    assert alpha["aliases"] == [] and alpha["suggestions"] == [{"alias": "Alpha", "canonical": "alpha"}]
    beta = app_for("beta", "strict").workspaces()
    assert sorted(w["name"] for w in beta["workspaces"]) == ["beta", "team-x"]
    assert beta["aliases"] == [{"alias": "team-x", "canonical": "beta"}]
    assert beta["suggestions"] == [{"alias": "Beta", "canonical": "beta"}]


def test_weak_boosts_the_callers_workspace_and_none_ignores_it(app_for: AppFor) -> None:
    writer_b = app_for("beta")
    writer_a = app_for("alpha")
    b = writer_b.remember("staging database host is db-b")["memory_id"]
    a = writer_a.remember("staging database host is db-a")["memory_id"]
    assert ids(app_for("alpha", "weak").find("staging database host"))[0] == a
    assert ids(app_for("beta", "weak").find("staging database host"))[0] == b
    assert set(ids(app_for("alpha", "none").find("staging database host"))) == {a, b}
    head = writer_a.store.last_position()  # the same ranking when searching the past
    assert ids(app_for("alpha", "weak").find("staging database host", as_of_recorded=head))[0] == a
    assert ids(app_for("beta", "weak").find("staging database host", as_of_recorded=head))[0] == b
    assert ids(app_for("", "none").find("staging database host", workspace="alpha")) == [a]


def test_an_accepted_alias_joins_two_names(app_for: AppFor) -> None:
    loose = app_for("Fact Ledger")
    old = loose.remember("the ledger uses APSW")["memory_id"]
    canonical = app_for("fact-ledger")
    new = canonical.remember("the ledger hashes every event")["memory_id"]
    listing = canonical.workspaces()
    assert {"alias": "Fact Ledger", "canonical": "fact-ledger"} in listing["suggestions"] or {
        "alias": "fact-ledger",
        "canonical": "Fact Ledger",
    } in listing["suggestions"]

    with pytest.raises(Unauthorized):
        canonical.accept_alias("Fact Ledger", "fact-ledger")
    result = canonical.accept_alias("Fact Ledger", "fact-ledger", authorization=AUTH_USER)
    assert result["canonical"] == "fact-ledger" and result["accepted"] is True
    assert canonical.workspaces()["suggestions"] == []
    assert set(ids(canonical.find("ledger", workspace="fact-ledger"))) == {old, new}
    assert set(ids(canonical.find("ledger", workspace="Fact Ledger"))) == {old, new}
    later = loose.remember("aliases canonicalise names")["memory_id"]
    assert loose.read(later)["memory"]["workspace"] == "fact-ledger"

    strict = app_for("fact-ledger", "strict")
    assert strict.read(old)["memory"]["memory_id"] == old  # same workspace now, under strict isolation
    assert set(ids(strict.find("ledger"))) == {old, new}

    canonical.reject_alias("Fact Ledger", "fact-ledger", authorization=AUTH_USER)
    assert ids(canonical.find("ledger", workspace="fact-ledger")) == [new]
    with pytest.raises(ForbiddenWorkspace):
        strict.read(old)
    assert canonical.workspaces()["suggestions"] == []  # rejected: not suggested again


def test_a_rejected_alias_parts_the_claim_sets_its_workspaces_met_in(app_for: AppFor) -> None:
    """Members that met another workspace's set through the alias stayed in it after the
    rejection and joined their own workspace's next set as well: two open sets for one fact,
    mixing workspaces, with two contradictory health suggestions."""
    app = app_for()
    say = lambda text, workspace: app.remember(text, workspace=workspace)  # noqa: E731
    say("The deploy region is r1", "x"), say("The deploy region is r2", "x")
    r3 = say("The deploy region is r3", "y")["memory_id"]
    app.accept_alias("x", "y", authorization=AUTH_USER)
    r4 = say("The deploy region is r4", "x")["memory_id"]  # stored in y, it joins x's set with r3
    app.reject_alias("x", "y", authorization=AUTH_USER)
    say("The deploy region is r5", "y")
    open_sets = app.conflicts()["conflicts"]
    held = [m for c in open_sets for m in c["members"]]
    assert len(held) == len(set(held)), open_sets  # no memory in two open sets
    for c in open_sets:
        assert len({app.read(m)["memory"]["workspace"] for m in c["members"]}) == 1, c
    assert {r3, r4} <= set(held)
    assert app.read(r3)["memory"]["conflict_ids"] == [next(c["conflict_id"] for c in open_sets if r3 in c["members"])]
    app.rebuild()
    assert app.conflicts()["conflicts"] == open_sets


def test_alias_rules(app_for: AppFor) -> None:
    app = app_for("w")
    with pytest.raises(InvalidInput):
        app.accept_alias("same", "same", authorization=AUTH_USER)
    app.accept_alias("b", "a", authorization=AUTH_USER)
    with pytest.raises(InvalidInput):
        app.accept_alias("a", "b", authorization=AUTH_USER)  # would make a cycle
    app.accept_alias("c", "b", authorization=AUTH_USER)  # chains resolve to the root
    assert app.canonical_workspace("c") == "a"
    assert app.workspace_scope("a") == ("a", "b", "c")
    strict = app_for("a", "strict")
    with pytest.raises(ForbiddenWorkspace):
        strict.accept_alias("x", "elsewhere", authorization=AUTH_USER)


def test_aliases_survive_a_rebuild(app_for: AppFor) -> None:
    app = app_for("w")
    app.accept_alias("old", "new", authorization=AUTH_USER)
    before = app.runner.checksums()
    app.rebuild()
    assert app.runner.checksums() == before
    assert app.canonical_workspace("old") == "new"


def test_strict_overview_counts_only_the_callers_workspace(app_for: AppFor) -> None:
    alpha, beta = app_for("alpha", "strict"), app_for("beta", "strict")
    alpha.remember("the alpha cache ttl is 30s")
    alpha.remember("the alpha cache ttl is 60s")  # a conflict inside alpha
    beta.remember("beta fact one")
    beta.remember("beta fact two")
    beta.remember("beta fact three")
    seen_by_alpha = alpha.overview()
    assert seen_by_alpha["by_workspace"] == {"alpha": 2}
    assert seen_by_alpha["by_status"] == {"active": 2}
    assert seen_by_alpha["open_conflicts"] == 1
    seen_by_beta = beta.overview()
    assert seen_by_beta["by_workspace"] == {"beta": 3} and seen_by_beta["open_conflicts"] == 0
    everyone = app_for("", "none").overview()
    assert everyone["by_workspace"] == {"alpha": 2, "beta": 3}


def test_a_workspace_typed_with_spaces_around_it_is_the_one_a_write_stores_in(app_for: AppFor) -> None:
    """A write stores "billing " as "billing"; a find in " billing " found nothing. A name typed
    without spaces is looked up as it is, with no scan (docs/contract.md, find)."""
    app = app_for()
    stored = app.remember("invoices go out on the 3rd", workspace="billing ")
    assert stored["workspace"] == "billing"
    assert ids(app.find("invoices", workspace=" billing ")) == [stored["memory_id"]]
    assert ids(app.find("invoices", workspace="billing")) == [stored["memory_id"]]
    assert ids(app.find("invoices", workspace="billing-eu")) == []
