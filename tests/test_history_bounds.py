"""History, timeline and audit at their edges: a page exactly as long as what there is says
nothing more, one shorter says more and its cursor gives the rest; a limit past the bounds is
held to them; a memory or claim set that does not exist is ``not_found``. The full mutation run
found these unchecked (docs/testing.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fact_ledger.ledger.errors import InvalidInput, NotFound
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from tests.conftest import ledger_cli


def _versions(app: LedgerApp, count: int) -> int:
    memory_id = app.remember("the ferry to the island leaves at 7")["memory_id"]
    for hour in range(8, 7 + count):
        app.update(memory_id, content=f"the ferry to the island leaves at {hour}")
    return int(memory_id)


def test_history_pages_at_their_edges(app: LedgerApp) -> None:
    memory_id = _versions(app, 4)
    whole = app.history(memory_id, limit=4)
    assert [v["version"] for v in whole["versions"]] == [1, 2, 3, 4]
    assert whole["ok"] is True and whole["has_more"] is False and whole["next_cursor"] is None
    first = app.history(memory_id, limit=3)
    assert [v["version"] for v in first["versions"]] == [1, 2, 3] and first["has_more"] is True
    rest = app.history(memory_id, limit=3, cursor=first["next_cursor"])
    assert [v["version"] for v in rest["versions"]] == [4] and rest["has_more"] is False
    assert all(len(v["events"]) == 1 for v in whole["versions"])  # each version with the event behind it
    with pytest.raises(NotFound):
        app.history(9999)


def test_timeline_pages_at_their_edges(app: LedgerApp) -> None:
    for port in (8001, 8002, 8003):
        app.remember(f"the port of service kiln is {port}", subject="kiln port")
    whole = app.timeline(subject="kiln port", limit=3)
    assert len(whole["intervals"]) == 3 and whole["has_more"] is False and whole["next_cursor"] is None
    first = app.timeline(subject="kiln port", limit=2)
    assert len(first["intervals"]) == 2 and first["has_more"] is True
    rest = app.timeline(subject="kiln port", limit=2, cursor=first["next_cursor"])
    assert len(rest["intervals"]) == 1 and rest["has_more"] is False
    assert len(app.timeline(subject="kiln port", limit=0)["intervals"]) == 1  # held to at least one
    long = "the kiln port note: " + "x" * 400
    app.remember(long, subject="kiln port")
    shown = app.timeline(subject="kiln port", limit=10)["intervals"]
    assert max(len(i["content"]) for i in shown) == 200 and long[:200] in {i["content"] for i in shown}
    with pytest.raises(NotFound):
        app.timeline(memory_id=9999)


def test_audit_pages_at_their_edges(app: LedgerApp) -> None:
    memory_id = _versions(app, 3)
    everything = app.audit(memory_id=memory_id)
    assert len(everything["events"]) == 3 and everything["has_more"] is False
    exact = app.audit(memory_id=memory_id, limit=3)
    assert len(exact["events"]) == 3 and exact["has_more"] is False and exact["next_cursor"] is None
    first = app.audit(memory_id=memory_id, limit=2)
    assert len(first["events"]) == 2 and first["has_more"] is True
    rest = app.audit(memory_id=memory_id, limit=2, cursor=first["next_cursor"])
    assert len(rest["events"]) == 1 and rest["has_more"] is False
    with pytest.raises(NotFound):
        app.audit(memory_id=9999)
    with pytest.raises(NotFound):
        app.audit(conflict_id=9999)


def test_a_superseded_version_follows_its_successors_corrected_time_in_one_entry(app: LedgerApp) -> None:
    paris = app.remember("Bob lives in Paris", subject="Bob", event_time="2020-01-01T00:00:00Z")["memory_id"]
    moved = app.remember("Bob moved to Berlin last year", subject="Bob", event_time="2023-06-01T00:00:00Z")
    (conflict,) = moved["conflicts"]
    app.resolve_conflict(conflict["conflict_id"], winner_id=moved["memory_id"], authorization=AUTH_USER)
    app.update(moved["memory_id"], event_time="2023-07-01T00:00:00Z")  # Berlin's date corrected
    versions = app.history(paris)["versions"]
    # The correction moves the end of Paris's superseded version; it is no version of its own.
    assert [(v["version"], v["status"], v["valid_to"]) for v in versions] == [
        (1, "active", None),
        (2, "superseded", "2023-07-01T00:00:00.000000Z"),
    ]
    # The current read agrees with history and with the timeline.
    assert app.read(paris)["memory"]["valid_to"] == "2023-07-01T00:00:00.000000Z"
    intervals = app.timeline(subject="Bob")["intervals"]
    assert [(i["memory_id"], i["valid_to"]) for i in intervals] == [
        (paris, "2023-07-01T00:00:00.000000Z"),
        (moved["memory_id"], None),
    ]


def test_audit_refuses_a_since_after_its_until(app: LedgerApp, tmp_path: Path) -> None:
    """``since`` after ``until`` answered no events (an export: an empty file), as if the log held
    none in the range."""
    app.remember("the ferry to the island leaves at 7")
    with pytest.raises(InvalidInput, match=r"since \(2030-01-01T00:00:00.000000Z\) is after until") as refused:
        app.audit(since="2030-01-01", until="2020-01-01")
    assert refused.value.field == "since"
    same = app.audit(since="2020-01-01", until="2020-01-01")  # both ends inclusive: one instant is a range
    assert same["events"] == []
    assert len(app.audit(since="2020-01-01", until="2100-01-01")["events"]) == 1
    db = str(tmp_path / "cli.db")
    ledger_cli("remember", "the ferry leaves at 7", "--db", db, check=True)
    human = ledger_cli("audit", "--since", "2030-01-01", "--until", "2020-01-01", "--db", db)
    # both ends in the command line's words: "is after until (…)" named an option no command has
    said = "error (invalid_input): --since (2030-01-01T00:00:00.000000Z) is after --until (2020"
    assert human.returncode == 1 and human.stderr.startswith(said)
    assert "Traceback" not in human.stderr and human.stdout == ""
    # an export of such a range wrote an empty file, as if nothing was recorded then
    out = tmp_path / "range.jsonl"
    export = ledger_cli("export", "--since", "2030-01-01", "--until", "2020-01-01", "--output", str(out), "--db", db)
    assert export.returncode == 1 and export.stderr.startswith(said) and not out.exists()
