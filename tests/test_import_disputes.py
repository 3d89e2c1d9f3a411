"""An import's memories meet this ledger's claims (``ledger.imported``): a value another ledger
recorded that disagrees with one held here opens a set, as the write of it here would have; a
pair the file already disputed is not disputed again; an import that disagrees with nothing adds
nothing but the file's events."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

from fact_ledger.ledger.errors import Unavailable
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.transfer import export_jsonl, import_jsonl
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Settings


def _ledger(path: Path, **settings: object) -> LedgerApp:
    return LedgerApp(Settings(db=str(path), client="test", **settings))  # type: ignore[arg-type]


def _export(app: LedgerApp, path: Path) -> Path:
    with path.open("wb") as fh:
        export_jsonl(app, fh)
    return path


def _sets(app: LedgerApp) -> list[tuple[str, list[str]]]:
    return [
        (c["state"], sorted(m["content"] for m in app.conflict_detail(c["conflict_id"])["conflict"]["memories"]))
        for c in app.conflicts(state="all")["conflicts"]
    ]


def test_an_imported_value_that_disagrees_opens_a_set_with_the_one_held_here(tmp_path: Path) -> None:
    theirs = _ledger(tmp_path / "theirs.db")
    theirs.remember("The staging API listens on port 9090", event_time="2026-11-20T00:00:00Z")
    theirs.remember("Deploys freeze on Fridays")
    export = _export(theirs, tmp_path / "theirs.jsonl")
    theirs.close()

    ours = _ledger(tmp_path / "ours.db")
    try:
        held = ours.remember("The staging API listens on port 8080", event_time="2026-11-10T00:00:00Z")["memory_id"]
        result = import_jsonl(ours, export)
        assert result["appended"] == 2 and len(result["conflicts"]) == 1
        (conflict_id,) = result["conflicts"]
        assert f"#{conflict_id}" in result["notices"][-1]
        detail = ours.conflict_detail(conflict_id)["conflict"]
        assert sorted(m["content"] for m in detail["memories"]) == [
            "The staging API listens on port 8080",
            "The staging API listens on port 9090",
        ]
        top = ours.find("staging API port", limit=2)["results"]
        assert top[0]["content"].endswith("9090")  # the newer value leads, by the documented rules
        assert {r["memory_id"] for r in top} >= {held}
        before = ours.store.last_position()
        assert "conflicts" not in import_jsonl(ours, export)  # nothing new: nothing decided again
        assert ours.store.last_position() == before
        after_rebuild = _sets(ours)
        ours.rebuild()
        assert _sets(ours) == after_rebuild
        assert ours.verify()["projections"] == "consistent"
    finally:
        ours.close()


def test_a_pair_the_exporting_ledger_settled_is_not_disputed_again(tmp_path: Path) -> None:
    theirs = _ledger(tmp_path / "theirs.db")
    theirs.remember("The staging API listens on port 8080", source_type="agent_generated")
    theirs.remember("The staging API listens on port 9090", source_type="agent_generated")
    (opened,) = theirs.conflicts(state="all")["conflicts"]
    theirs.resolve_conflict(opened["conflict_id"], resolution="keep_all", authorization=AUTH_USER)
    export = _export(theirs, tmp_path / "theirs.jsonl")
    settled = _sets(theirs)
    theirs.close()

    empty = _ledger(tmp_path / "copy.db")
    try:
        result = import_jsonl(empty, export)
        assert "conflicts" not in result
        assert empty.store.last_position() == result["appended"]  # the file's events, nothing more
        assert _sets(empty) == settled
    finally:
        empty.close()

    ours = _ledger(tmp_path / "ours.db")
    try:
        ours.remember("The staging API listens on port 7070", source_type="agent_generated")
        result = import_jsonl(ours, export)
        (conflict_id,) = result["conflicts"]  # the value held here meets both; the settled pair stays settled
        members = sorted(m["content"] for m in ours.conflict_detail(conflict_id)["conflict"]["memories"])
        assert members[0].endswith("7070") and len(members) == 3
        assert ("resolved", [m for m in members if not m.endswith("7070")]) in _sets(ours)
    finally:
        ours.close()


def test_an_import_into_another_workspace_disputes_nothing_there(tmp_path: Path) -> None:
    theirs = _ledger(tmp_path / "theirs.db", workspace="billing")
    theirs.remember("The staging API listens on port 9090")
    export = _export(theirs, tmp_path / "theirs.jsonl")
    theirs.close()
    ours = _ledger(tmp_path / "ours.db", workspace="search")
    try:
        ours.remember("The staging API listens on port 8080")
        assert "conflicts" not in import_jsonl(ours, export)
        assert _sets(ours) == []
    finally:
        ours.close()


def test_the_import_command_says_which_sets_it_opened(tmp_path: Path) -> None:
    theirs, ours = str(tmp_path / "theirs.db"), str(tmp_path / "ours.db")
    runner = CliRunner()
    for db, port in ((theirs, "9090"), (ours, "8080")):
        done = runner.invoke(main, ["--db", db, "--create", "remember", f"The staging API listens on port {port}"])
        assert done.exit_code == 0, done.output
    export = tmp_path / "theirs.jsonl"
    assert runner.invoke(main, ["--db", theirs, "export", "--output", str(export)]).exit_code == 0
    human = runner.invoke(main, ["--db", ours, "import", str(export)])
    assert human.exit_code == 0, human.output
    assert "appended 1" in human.output and "imported memories disagree with ones held here" in human.output
    shown = json.loads(runner.invoke(main, ["--db", ours, "--json", "conflicts"]).output)
    (conflict,) = shown["conflicts"]
    assert f"#{conflict['conflict_id']}" in human.output
    listed = runner.invoke(main, ["--db", ours, "conflict", str(conflict["conflict_id"])])
    assert listed.exit_code == 0 and "9090" in listed.output and "8080" in listed.output


def test_an_import_never_leaves_one_memory_in_two_open_sets_of_one_fact(tmp_path: Path) -> None:
    """The file's open set {9090, 7070} met this ledger's open set {8080, 6060}: the file's
    members joined ours while staying in theirs, two open sets for one fact for good."""
    from tests.conftest import REVIEW

    theirs = _ledger(tmp_path / "theirs.db", policy=REVIEW)
    for port in ("9090", "7070"):
        theirs.remember(f"The staging API listens on port {port}", source_type="agent_generated")
    export = _export(theirs, tmp_path / "theirs.jsonl")
    theirs.close()
    ours = _ledger(tmp_path / "ours.db", policy=REVIEW)
    try:
        for port in ("8080", "6060"):
            ours.remember(f"The staging API listens on port {port}", source_type="agent_generated")
        import_jsonl(ours, export)
        open_sets = ours.conflicts("open")["conflicts"]
        members = [m for c in open_sets for m in c["members"]]
        assert len(members) == len(set(members)) == 4 and len(open_sets) == 2
        before = ours.store.last_position()
        assert "conflicts" not in import_jsonl(ours, export)  # again: nothing new, nothing decided
        assert ours.store.last_position() == before
    finally:
        ours.close()


def test_an_import_whose_deciding_step_failed_decides_when_imported_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disagreements are decided after the events are in: a failure between the two (a busy
    file, a lost connection) left them undecided for good, as the next import appended nothing."""
    theirs = _ledger(tmp_path / "theirs.db")
    theirs.remember("The staging API listens on port 9090")
    export = _export(theirs, tmp_path / "theirs.jsonl")
    theirs.close()
    ours = _ledger(tmp_path / "ours.db")
    try:
        ours.remember("The staging API listens on port 8080")
        real = ours.collisions.dispute_imported

        def busy(streams: list[str]) -> list[int]:
            raise apsw.BusyError("database is locked")

        monkeypatch.setattr(ours.collisions, "dispute_imported", busy)
        with pytest.raises(Unavailable, match="import the file again"):
            import_jsonl(ours, export)
        assert ours.conflicts("open")["conflicts"] == []
        monkeypatch.setattr(ours.collisions, "dispute_imported", real)
        again = import_jsonl(ours, export)
        assert again["appended"] == 0 and len(again["conflicts"]) == 1
    finally:
        ours.close()
