"""Erase on a real ledger (issue 27, points 1 and 2): the user channel only, by memory or by
workspace, a log written before sealing re-sealed first (on its first erase, or by ``ledger
migrate --seal``), and the claim sets a memory was in explained by ids afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from fact_ledger.ledger.errors import ForbiddenWorkspace, InvalidInput, NotFound, Unauthorized
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import GENESIS_HASH, NewEvent, row_hash
from fact_ledger.ledger.log.events import AUTH_AGENT, AUTH_USER, Erased, MemoryRecorded, Promoted, WorkingNoted
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import ledger_cli

MARKER = "wv-marker-88123-forget"


def _bytes_hold(folder: Path, needle: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file() and needle.encode() in p.read_bytes())


def _old_log(db: Path, contents: list[str]) -> None:
    """A log as written before sealing: every payload hashed whole, no seal, no salt."""
    fresh = EventStore(db.with_name("fresh.db"))
    rows = fresh.append(
        [
            NewEvent(data=MemoryRecorded(memory=s, content=c, subject="old"), stream_id=s, event_time="2026-01-01")
            for c in contents
            for s in [uuid7()]
        ]
    )
    fresh.close()
    legacy, prev = [], GENESIS_HASH
    for row in rows:
        old = msgspec.structs.replace(row, seal="", salt=None, prev_hash=prev, hash="")
        old.hash = row_hash(prev, old)
        legacy.append(old)
        prev = old.hash
    store = EventStore(db)
    store.append_stored(legacy)
    store.close()


def test_only_the_user_channel_erases(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        mid = app.remember(f"Gail's number is {MARKER}", subject="gail")["memory_id"]
        head = app.store.last_position()
        for authorization in ("", AUTH_AGENT):
            with pytest.raises(Unauthorized, match="user's own act"):
                app.erase(mid, reason="x", authorization=authorization)
        with pytest.raises(InvalidInput):
            app.erase(reason="x", authorization=AUTH_USER)  # neither a memory nor a workspace
        with pytest.raises(NotFound):
            app.erase(999, authorization=AUTH_USER)
        assert app.store.last_position() == head
        app.erase(mid, reason="asked", authorization=AUTH_USER)
        with pytest.raises(InvalidInput, match="erased already"):
            app.erase(mid, authorization=AUTH_USER)
        read = app.read(mid)["memory"]
        assert read["status"] == "erased" and read["content"] == "[erased]"
    finally:
        app.close()
    assert _bytes_hold(tmp_path, MARKER) == []


def test_a_credential_in_the_reason_refuses_a_workspace_erase_and_writes_nothing(tmp_path: Path) -> None:
    """The reason stays in the log for good with each Erased event (it is not erased with the
    memories): a credential in it is refused before anything is erased."""
    key = "AKIAIOSFODNN7EXAMPLE"
    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        mid = app.remember(f"Tom's alarm code is {MARKER}", workspace="tom")["memory_id"]
        head = app.store.last_position()
        with pytest.raises(InvalidInput, match="looks like a credential") as refused:
            app.erase(workspace="tom", reason=f"it held {key}", authorization=AUTH_USER)
        assert refused.value.to_dict()["field"] == "reason"
        assert app.store.last_position() == head
        assert app.read(mid)["memory"]["content"] == f"Tom's alarm code is {MARKER}"
    finally:
        app.close()
    assert _bytes_hold(tmp_path, key) == []


def test_a_workspace_erases_whole_and_claim_sets_stay_explained_by_ids(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        kept = app.remember("Ola lives in Oslo", subject="Ola", workspace="home")["memory_id"]
        a = app.remember(f"Ivo lives in {MARKER}", subject="Ivo", workspace="proj")
        b = app.remember("Ivo lives in Quito", subject="Ivo", workspace="proj")
        assert b["conflicts"], b
        conflict = b["conflicts"][0]["conflict_id"]
        out = app.erase(workspace="proj", reason="project closed", authorization=AUTH_USER)
        assert out["erased"] == [a["memory_id"], b["memory_id"]]
        assert [e["memory_id"] for e in out["receipt"]["erasures"]] == out["erased"]
        detail = app.conflict_detail(conflict)
        assert MARKER not in json.dumps(detail) and detail["conflict"]["conflict_id"] == conflict
        assert app.read(kept)["memory"]["content"] == "Ola lives in Oslo"
        assert app.verify()["chain"] == "intact"
    finally:
        app.close()
    assert _bytes_hold(tmp_path, MARKER) == []


def test_an_erased_member_leaves_its_claim_sets_as_a_retired_one_does(tmp_path: Path) -> None:
    """A set of three values goes on without the erased member; a set of two settles for the
    member left. The erased memory stayed a member: offered to judge and resolve, and judged."""
    from tests.conftest import REVIEW

    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), policy=REVIEW))
    try:

        def said(port: int) -> dict[str, object]:
            return app.remember(f"The staging API listens on port {port}", subject="staging api")

        a, b = said(8080), said(9090)
        pair = b["conflicts"][0]["conflict_id"]
        app.erase(a["memory_id"], reason="asked", authorization=AUTH_USER)
        settled = app.conflict_detail(pair)["conflict"]
        assert settled["state"] == "resolved" and settled["winner_id"] == b["memory_id"], settled
        x = app.remember("Ivo lives in Oslo", subject="Ivo")
        y = app.remember("Ivo lives in Quito", subject="Ivo")
        z = app.remember("Ivo lives in Lima", subject="Ivo")
        trio = z["conflicts"][0]["conflict_id"]
        app.erase(y["memory_id"], reason="asked", authorization=AUTH_USER)
        open_set = app.conflict_detail(trio)["conflict"]
        assert open_set["state"] != "resolved"
        assert sorted(open_set["members"]) == sorted([x["memory_id"], z["memory_id"]])
        # its label was the erased opener's words: a later member's join names it again
        assert open_set["claim"] == {"subject": "Ivo", "attribute": "lives in"}, open_set["claim"]
        assert app.conflicts()["conflicts"][0]["claim"] == open_set["claim"]
        app.rebuild()
        assert app.conflict_detail(trio)["conflict"]["claim"] == open_set["claim"]
        with pytest.raises((InvalidInput, NotFound)):
            app.judge(trio, y["memory_id"], rationale="the erased one")
        assert app.verify()["chain"] == "intact"
    finally:
        app.close()


def test_a_set_settled_by_an_erasure_says_erased_and_favours_no_erased_member(tmp_path: Path) -> None:
    """It said "retire: the other value was retired" and "the rules alone favour #2", #2 erased."""
    from tests.conftest import REVIEW

    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), policy=REVIEW))
    try:
        kept = app.remember("Carol's phone is 555-0101", subject="Carol", source_type="agent_generated")
        gone = app.remember("Carol's phone is 555-0199", subject="Carol", event_time="2020-01-01T00:00:00Z")
        pair = gone["conflicts"][0]["conflict_id"]
        app.erase(gone["memory_id"], reason="privacy", authorization=AUTH_USER)
        verdict = app.conflict_detail(pair)["conflict"]["current_verdict"]
        assert (verdict["decided_by"], verdict["winner_id"]) == ("erase", kept["memory_id"])
        # the erased one is the value that left, not the one that stands ("#1 stands (erased)")
        assert verdict["reasons"][0] == f"erase: the last other value left (erased); #{kept['memory_id']} stands"
        assert "rules_favour" not in verdict and not any("favour" in r for r in verdict["reasons"])
        assert verdict["ranking"] == [kept["memory_id"]]  # the erased member is ranked no more
        retired = app.remember("Dan's phone is 555-0102", subject="Dan", source_type="agent_generated")
        left = app.remember("Dan's phone is 555-0198", subject="Dan", event_time="2020-01-01T00:00:00Z")
        app.retire(left["memory_id"], reason="wrong number", authorization=AUTH_USER)
        verdict = app.conflict_detail(left["conflicts"][0]["conflict_id"])["conflict"]["current_verdict"]
        assert (verdict["decided_by"], verdict["winner_id"]) == ("retire", retired["memory_id"])
        assert "rules_favour" not in verdict
    finally:
        app.close()


def test_erasing_one_member_leaves_the_others_their_values(tmp_path: Path) -> None:
    """The set's event is sealed as one: erasing Alice cleared Bob's value in it too, so a later
    "Bob" joined as a value of its own and settling the set superseded Bob by Bob."""
    from tests.conftest import REVIEW
    from tests.test_retractions import assert_rebuild_reproduces

    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), policy=REVIEW))
    try:
        said = {
            name: app.remember(f"The billing owner is {name}", source_type="agent_generated")["memory_id"]
            for name in ("Alice", "Bob", "Carol")
        }
        cid = app.conflicts()["conflicts"][0]["conflict_id"]
        label = app.conflict_detail(cid)["conflict"]["claim"]
        app.erase(said["Alice"], reason="asked", authorization=AUTH_USER)
        detail = app.conflict_detail(cid)["conflict"]
        values = {m["memory_id"]: m.get("value") for m in detail["memories"] if m["memory_id"] != said["Alice"]}
        assert values == {said["Bob"]: "bob", said["Carol"]: "carol"} and detail["claim"] == label
        again = app.remember("The billing owner is Bob", source_type="agent_generated")
        [cluster] = app.health()["clusters"]
        assert cluster["value_count"] == 2 and {v["value"] for v in cluster["values"]} == {"bob", "carol"}, cluster
        applied = app.apply_suggestion(cluster["suggestion"]["suggestion_id"], authorization=AUTH_USER)
        assert status_of(app, said["Bob"]) == "active" and status_of(app, said["Carol"]) == "superseded", applied
        assert again["memory_id"] in (applied["conflict"]["winner_id"], said["Bob"])
        assert_rebuild_reproduces(app)
    finally:
        app.close()


def status_of(app: LedgerApp, memory_id: int) -> str:
    return str(app.read(memory_id)["memory"]["status"])


def test_an_old_log_is_resealed_on_its_first_erase(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    _old_log(db, ["the door code changed", f"Uma's pin is {MARKER}", "lunch is at noon"])
    (tmp_path / "fresh.db").unlink()
    app = LedgerApp(Settings(db=str(db)))
    try:
        seen: list[tuple[int, int]] = []
        out = app.erase(2, reason="asked", authorization=AUTH_USER, progress=lambda d, t: seen.append((d, t)))
        assert out["erased"] == [2] and seen
        rows = list(app.store.read())
        assert all(r.seal for r in rows if r.type == "MemoryRecorded") and app.verify()["chain"] == "intact"
        assert app.read(1)["memory"]["content"] == "the door code changed"
    finally:
        app.close()
    assert _bytes_hold(tmp_path, MARKER) == []


def test_ledger_migrate_seal_reseals_an_old_log_once(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    _old_log(db, ["a fact", "another fact"])
    first = ledger_cli("migrate", "--seal", "--db", str(db), "--json", check=True)
    assert json.loads(first.stdout)["sealed"] == 2
    again = ledger_cli("migrate", "--seal", "--db", str(db), "--json", check=True)
    assert json.loads(again.stdout)["sealed"] == 0
    assert json.loads(ledger_cli("verify", "--db", str(db), "--json", check=True).stdout)["chain"] == "intact"
    both = ledger_cli("migrate", "--seal", "--to", "sqlite:///x.db", "--db", str(db))
    assert both.returncode != 0 and "--seal" in both.stderr


def test_strict_isolation_erases_only_the_callers_own_workspace(tmp_path: Path) -> None:
    db = str(tmp_path / "l.db")
    writer = LedgerApp(Settings(db=db))
    theirs = writer.remember(f"Pia's code is {MARKER}", subject="pia", workspace="other")["memory_id"]
    mine = writer.remember("my own note", subject="me", workspace="mine")["memory_id"]
    writer.close()
    app = LedgerApp(Settings(db=db, isolation="strict", workspace="mine"))
    try:
        head = app.store.last_position()
        with pytest.raises(ForbiddenWorkspace):
            app.erase(theirs, authorization=AUTH_USER)
        with pytest.raises(ForbiddenWorkspace):
            app.erase(workspace="other", authorization=AUTH_USER)
        assert app.store.last_position() == head
        assert app.erase(mine, authorization=AUTH_USER)["erased"] == [mine]
    finally:
        app.close()


def test_an_export_with_an_erasure_imports_to_the_same_log(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    app = LedgerApp(Settings(db=str(db)))
    try:
        app.remember("Ann lives in Oslo", subject="Ann")
        gone = app.remember(f"Ann lives in {MARKER}", subject="Ann")["memory_id"]
        app.remember("the kettle is new")
        app.erase(gone, reason="asked", authorization=AUTH_USER)
    finally:
        app.close()
    exported, again = tmp_path / "out.jsonl", tmp_path / "again.jsonl"
    ledger_cli("export", "-o", str(exported), "--db", str(db), check=True)
    target = tmp_path / "copy" / "l.db"
    ledger_cli("import", str(exported), "--db", str(target), check=True)
    ledger_cli("export", "-o", str(again), "--db", str(target), check=True)
    assert again.read_bytes() == exported.read_bytes() and MARKER.encode() not in exported.read_bytes()
    assert json.loads(ledger_cli("verify", "--db", str(target), "--json", check=True).stdout)["chain"] == "intact"
    bad = exported.read_text().replace('"salt":"', '"salt":"zz', 1)
    (tmp_path / "bad.jsonl").write_text(bad)
    refused = ledger_cli("import", str(tmp_path / "bad.jsonl"), "--db", str(tmp_path / "bad.db"), "--json")
    assert "salt is not 32 hex digits" in refused.stdout + refused.stderr


def test_an_erasure_imported_later_clears_the_copy_a_ledger_already_holds(tmp_path: Path) -> None:
    """A copies its log to B, then erases; B imports the newer export. B holds the memory at
    another position (it had a note of its own first), and must clear it as the Erased event
    names it (by event id): it kept the words and failed ``verify`` with ``chain_broken``."""
    a, b = tmp_path / "a.db", tmp_path / "b" / "b.db"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    ledger_cli("remember", "B's own note, first in its log", "--db", str(b), check=True)
    app = LedgerApp(Settings(db=str(a)))
    try:
        gone = app.remember(f"Carol's phone number is {MARKER}", subject="Carol")["memory_id"]
        app.remember("Deploys freeze on Fridays")
        ledger_cli("export", "-o", str(first), "--db", str(a), check=True)
        ledger_cli("import", str(first), "--db", str(b), check=True)
        assert _bytes_hold(b.parent, MARKER)  # B holds the words
        app.erase(gone, reason="asked", authorization=AUTH_USER)
    finally:
        app.close()
    ledger_cli("export", "-o", str(second), "--db", str(a), check=True)
    human = ledger_cli("import", str(second), "--db", str(b), check=True).stdout
    assert "appended 1, already present 2" in human
    assert "erased here too, as the file's Erased events name them: #2" in human  # B's id, not A's #1
    assert _bytes_hold(b.parent, MARKER) == []
    verified = json.loads(ledger_cli("verify", "--db", str(b), "--json", check=True).stdout)
    assert verified["chain"] == "intact"
    read = json.loads(ledger_cli("read", "2", "--db", str(b), "--json", check=True).stdout)
    assert read["memory"]["status"] == "erased" and MARKER not in json.dumps(read)
    assert json.loads(ledger_cli("find", "phone", "--db", str(b), "--json", check=True).stdout)["results"] == []
    again = json.loads(ledger_cli("import", str(second), "--db", str(b), "--json", check=True).stdout)
    assert again["appended"] == 0 and "erased" not in again  # nothing new: nothing to say


def test_a_semantic_notice_quoting_an_erased_memory_goes(tmp_path: Path) -> None:
    from fact_ledger.projections import notices

    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        left = app.remember("the budget is 50k", subject="budget")["memory_id"]
        right = app.remember(f"the budget is {MARKER}", subject="budget plan")["memory_id"]
        other = app.remember("the budget is 70k", subject="budget memo")["memory_id"]
        notices.create(app.conn)
        app.conn.execute(
            "INSERT INTO notices(left_id, right_id, workspace, similarity, kind, left_value, right_value) "
            "VALUES(?, ?, '', 0.95, 'number', '50000', ?), (?, ?, '', 0.9, 'number', '50000', '70000')",
            (left, right, MARKER, left, other),
        )
        app.erase(right, authorization=AUTH_USER)
        pairs = app.conn.execute("SELECT left_id, right_id FROM notices").fetchall()
        assert pairs == [(left, other)]
    finally:
        app.close()
    assert _bytes_hold(tmp_path, MARKER) == []


def test_a_memory_promoted_from_a_working_note_takes_the_note_with_it(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        note = app.remember(f"Rex's gate code is {MARKER}", session_id="conv", tier="working")["memory_id"]
        promoted = app.promote(note, authorization=AUTH_USER)["promoted_to"]
        out = app.erase(promoted, reason="asked", authorization=AUTH_USER)
        assert out["rows"] >= 2  # the memory's row and the note's
        assert app.verify()["chain"] == "intact"
    finally:
        app.close()
    assert _bytes_hold(tmp_path, MARKER) == []


def test_erasing_a_promoted_note_takes_the_memory_promoted_from_it(tmp_path: Path) -> None:
    """The note's words are the first version of the memory promoted from it: erasing the note
    alone left them there, read and found as before, under an answer that said "erased"."""
    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        kept = app.remember("The lobby door code is 4471", subject="lobby")["memory_id"]
        note = app.remember(f"Rex's gate code is {MARKER}", session_id="conv", tier="working")["memory_id"]
        promoted = app.promote(note, authorization=AUTH_USER)["promoted_to"]
        again = app.remember("The lobby door code is 4471", session_id="conv", tier="working")["memory_id"]
        absorbed = app.promote(again, authorization=AUTH_USER)["promoted_to"]
        assert absorbed == kept  # promoted as an exact repeat: no memory was made from it
        out = app.erase(note, reason="asked", authorization=AUTH_USER)
        assert sorted(out["erased"]) == sorted([note, promoted])
        assert {e["memory_id"] for e in out["receipt"]["erasures"]} == {note, promoted}
        assert app.read(promoted)["memory"]["status"] == "erased"
        assert app.find("Rex gate")["results"] == []
        app.erase(again, reason="asked", authorization=AUTH_USER)  # the memory it repeated was not made from it
        assert app.read(kept)["memory"]["content"] == "The lobby door code is 4471"
        assert app.verify()["chain"] == "intact"
    finally:
        app.close()
    assert _bytes_hold(tmp_path, MARKER) == []


def test_a_workspace_erase_takes_the_memories_recorded_under_its_aliases(tmp_path: Path) -> None:
    """A note written under "proj-a" and the memory promoted from it, once "proj-a" is an alias
    of "proja", are memories of "proja" (found there, shown there): erasing "proja", or even
    "proj-a" by name, erased only what was recorded as "proja" and left both readable and found."""
    for named in ("proja", "proj-a"):
        folder = tmp_path / named
        folder.mkdir()
        app = LedgerApp(Settings(db=str(folder / "l.db")))
        try:
            note = app.remember(f"Rex's gate code is {MARKER}", session_id="conv", tier="working", workspace="proj-a")
            promoted = app.promote(note["memory_id"], authorization=AUTH_USER)["promoted_to"]
            own = app.remember("Ivo lives in Quito", subject="Ivo", workspace="proja")["memory_id"]
            kept = app.remember("Ola lives in Oslo", subject="Ola", workspace="home")["memory_id"]
            app.accept_alias("proj-a", "proja", authorization=AUTH_USER)
            assert app.erasable(workspace=named) == [note["memory_id"], promoted, own]
            out = app.erase(workspace=named, reason="project closed", authorization=AUTH_USER)
            assert out["erased"] == [note["memory_id"], promoted, own]
            assert [e["memory_id"] for e in out["receipt"]["erasures"]] == out["erased"]
            assert {app.read(m)["memory"]["status"] for m in out["erased"]} == {"erased"}
            assert app.find("Rex gate", workspace="proja")["results"] == []
            assert app.read(kept)["memory"]["status"] == "active"
            assert app.verify_receipt(out["receipt"])["receipt"] == "valid"
        finally:
            app.close()
        assert _bytes_hold(folder, MARKER) == []


def promoted_across(db: Path, note_in: str, memory_in: str) -> tuple[int, int]:
    """A log whose working note (in ``note_in``) was promoted into a memory held in ``memory_in``,
    and a memory of "home". A promotion records its memory in the note's workspace, so only a log
    written elsewhere holds a pair in two workspaces. Returns (note id, memory id)."""
    note, memory = uuid7(), uuid7()
    store = EventStore(db)
    rows = store.append(
        [
            NewEvent(
                data=WorkingNoted(memory=note, session="conv", content=f"Rex's gate code is {MARKER}"),
                stream_id=note,
                event_time="2026-01-01",
                workspace=note_in,
            ),
            NewEvent(
                data=MemoryRecorded(memory=memory, content=f"Rex's gate code is {MARKER}", promoted_from=note),
                stream_id=memory,
                event_time="2026-01-01",
                workspace=memory_in,
            ),
            NewEvent(
                data=Promoted(memory=note, long_term=memory, rule="user"),
                stream_id=note,
                event_time="2026-01-01",
                workspace=note_in,
            ),
            NewEvent(
                data=MemoryRecorded(memory=(other := uuid7()), content="Ola lives in Oslo"),
                stream_id=other,
                event_time="2026-01-01",
                workspace="home",
            ),
        ]
    )
    store.close()
    return rows[0].position, rows[1].position


@pytest.mark.parametrize("erased", ["notes", "proj"])
def test_a_workspace_erase_takes_the_note_or_memory_a_promotion_tied_to_it_elsewhere(
    tmp_path: Path, erased: str
) -> None:
    """Erasing the workspace that held only the memory cleared the note's words yet left the
    note reading "promoted"; erasing the note's workspace left the memory (the note's words)
    read and found. Each goes with the other, as erasing either by its id does, named in the
    answer and the receipt (two such pairs: each one)."""
    db = tmp_path / "l.db"
    pairs = [promoted_across(db, note_in="notes", memory_in="proj") for _ in range(2)]
    both = sorted(m for pair in pairs for m in pair)
    note, memory = pairs[0]
    app = LedgerApp(Settings(db=str(db)))
    try:
        assert app.read(note)["memory"]["status"] == "promoted"
        assert sorted(app.erasable(workspace=erased)) == both
        out = app.erase(workspace=erased, reason="asked", authorization=AUTH_USER)
        assert sorted(out["erased"]) == both
        assert sorted(e["memory_id"] for e in out["receipt"]["erasures"]) == both
        assert {app.read(m)["memory"]["status"] for m in both} == {"erased"}
        assert app.find("Rex gate")["results"] == []
        assert app.read(memory + 2)["memory"]["content"] == "Ola lives in Oslo"
        assert app.verify_receipt(out["receipt"])["receipt"] == "valid"
        with pytest.raises(NotFound):  # nothing is left to erase in either
            app.erase(workspace="proj" if erased == "notes" else "notes", authorization=AUTH_USER)
    finally:
        app.close()
    assert _bytes_hold(tmp_path, MARKER) == []


def test_a_workspace_erase_leaves_a_memory_its_note_was_only_promoted_onto(tmp_path: Path) -> None:
    """A note promoted as a repeat of a memory held elsewhere names that memory in its
    ``Promoted`` event, but the memory was not recorded from it: erasing the note's workspace
    leaves it, as erasing the note by its id does."""
    note, kept = uuid7(), uuid7()
    store = EventStore(tmp_path / "l.db")
    rows = store.append(
        [
            NewEvent(
                data=MemoryRecorded(memory=kept, content="The lobby door code is 4471"),
                stream_id=kept,
                event_time="2026-01-01",
                workspace="home",
            ),
            NewEvent(
                data=WorkingNoted(memory=note, session="conv", content="The lobby door code is 4471"),
                stream_id=note,
                event_time="2026-01-01",
                workspace="notes",
            ),
            NewEvent(
                data=Promoted(memory=note, long_term=kept, rule="user"),
                stream_id=note,
                event_time="2026-01-01",
                workspace="notes",
            ),
        ]
    )
    store.close()
    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        assert app.erase(workspace="notes", authorization=AUTH_USER)["erased"] == [rows[1].position]
        assert app.read(rows[0].position)["memory"]["content"] == "The lobby door code is 4471"
    finally:
        app.close()


@pytest.mark.parametrize("gone", ["note", "memory"])
def test_a_workspace_erase_leaves_out_the_half_of_a_promotion_erased_before(tmp_path: Path, gone: str) -> None:
    """A log from before a note and the memory promoted from it went together holds one of them
    erased alone: the workspace's erase takes the other, and writes no second Erased event."""
    db = tmp_path / "l.db"
    note, memory = promoted_across(db, note_in="proj", memory_in="proj")
    store = EventStore(db)
    stream = store.conn.execute("SELECT stream_id FROM events WHERE position=?", (note if gone == "note" else memory,))
    erased_alone = stream.fetchone()[0]
    store.append(
        [
            NewEvent(
                data=Erased(memory=erased_alone, authorization=AUTH_USER),
                stream_id=erased_alone,
                event_time="2026-01-02",
                workspace="proj",
            )
        ]
    )
    store.close()
    app = LedgerApp(Settings(db=str(db)))
    try:
        left = memory if gone == "note" else note
        assert app.erasable(workspace="proj") == [left]
        assert app.erase(workspace="proj", authorization=AUTH_USER)["erased"] == [left]
        assert app.store.conn.execute("SELECT count(*) FROM events WHERE type='Erased'").fetchone()[0] == 2
        assert app.verify()["chain"] == "intact"
    finally:
        app.close()
    if gone == "note":  # a memory erased by a hand-written Erased keeps its own rows: only then
        assert _bytes_hold(tmp_path, MARKER) == []


def test_strict_isolation_refuses_a_workspace_erase_that_would_reach_another_workspace(tmp_path: Path) -> None:
    """As erasing the note by its id is refused when its memory is another workspace's, so is
    erasing the note's workspace: nothing is erased."""
    db = tmp_path / "l.db"
    note, _memory = promoted_across(db, note_in="notes", memory_in="proj")
    app = LedgerApp(Settings(db=str(db), isolation="strict", workspace="notes"))
    try:
        head = app.store.last_position()
        with pytest.raises(ForbiddenWorkspace):
            app.erase(workspace="notes", authorization=AUTH_USER)
        with pytest.raises(ForbiddenWorkspace):
            app.erase(note, authorization=AUTH_USER)
        assert app.store.last_position() == head
    finally:
        app.close()


def test_erase_answers_ok_rewrites_the_backup_and_refuses_an_empty_workspace(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    app = LedgerApp(Settings(db=str(db)))
    try:
        kept = app.remember("the plant needs water on fridays")
        gone = app.remember(f"Tom's alarm code is {MARKER}", workspace="tom")
        stream = app.conn.execute("SELECT stream_id FROM events WHERE position=?", (gone["memory_id"],)).get
        backup = db.with_suffix(".backup.jsonl")  # lines a write kept while the log refused it
        backup.write_text(
            f'{{"event":{{"stream_id":"{stream}","payload":"{MARKER}"}}}}\n{{"event":{{"note":"other"}}}}\n'
        )
        with pytest.raises(NotFound):
            app.erase(workspace="nobody-here", authorization=AUTH_USER)
        out = app.erase(workspace="tom", reason="asked", authorization=AUTH_USER)
        assert out["ok"] is True and out["erased"] == [gone["memory_id"]] and "notices" not in out
        assert backup.read_text() == '{"event":{"note":"other"}}\n'
        assert app.read(kept["memory_id"])["memory"]["status"] == "active"
    finally:
        app.close()
    assert _bytes_hold(tmp_path, MARKER) == []


def test_a_memory_s_reason_is_erased_with_it(tmp_path: Path) -> None:
    """Every field a writer gave a memory is erased with it unless declared public
    (``ledger.erasure``): ``reason``, added after erasure was built, leaves no trace either."""
    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        mid = app.remember("The gate code changes monthly", reason=f"Rex asked: {MARKER}")["memory_id"]
        assert app.erase(mid, reason="asked", authorization=AUTH_USER)["rows"] >= 1
        [event] = [e for e in app.audit(memory_id=mid)["events"] if e["type"] == "MemoryRecorded"]
        assert event["payload"]["reason"] == event["payload"]["content"] == "[erased]"
        assert app.verify()["chain"] == "intact"
    finally:
        app.close()
    assert _bytes_hold(tmp_path, MARKER) == []


def test_history_and_as_of_answers_say_erased_as_read_does(tmp_path: Path) -> None:
    """``read`` said v2 ``erased``; ``history`` showed one version, ``active``, holding the
    ``Erased`` event, and an as-of read after the erasure called the memory active."""
    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        mid = app.remember(f"Gail's number is {MARKER}", subject="gail", event_time="2026-01-01")["memory_id"]
        app.erase(mid, reason="asked", authorization=AUTH_USER)
        read = app.read(mid)["memory"]
        last = app.history(mid)["versions"][-1]
        assert (last["version"], last["status"]) == (read["version"], read["status"]) == (2, "erased")
        assert [e["type"] for e in last["events"]] == ["Erased"]
        after = app.store.last_position()
        assert app.read(mid, as_of_recorded=after)["memory"]["status"] == "erased"
        assert app.read(mid, as_of_recorded=after - 1)["memory"]["status"] == "active"
        app.rebuild()
        assert app.history(mid)["versions"][-1]["status"] == "erased"
    finally:
        app.close()


_ERASE_THEN_DIE = """
import os, signal, sys
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app import erasure
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

def die(*_a, **_k):  # the log has committed the cleared rows and the Erased events: killed here
    os.kill(os.getpid(), signal.SIGKILL)

erasure._forget_read_models = die
app = LedgerApp(Settings(db=sys.argv[1], views=sys.argv[2]))
app.erase(workspace="tom", reason="asked", authorization=AUTH_USER)
"""


@pytest.mark.slow
@pytest.mark.parametrize("one_file", [False, True])
def test_an_erase_killed_after_the_log_committed_is_finished_by_the_next_open(tmp_path: Path, one_file: bool) -> None:
    """A process killed between the log's commit and the read models' fold again left the
    erased words in the read models for good: ``read`` and as-of ``find`` showed them, ``doctor``
    said all was well and a second erase was refused. The next open finishes the erasure."""
    import signal
    import subprocess
    import sys

    db = tmp_path / "l.db"
    settings = Settings(db=str(db), views=str(db) if one_file else "")
    app = LedgerApp(settings)
    try:
        kept = app.remember("the plant needs water on fridays")["memory_id"]
        gone = [app.remember(f"Tom's alarm code {i} is {MARKER}", workspace="tom")["memory_id"] for i in range(3)]
    finally:
        app.close()
    died = subprocess.run(
        [sys.executable, "-c", _ERASE_THEN_DIE, str(db), settings.views], capture_output=True, text=True
    )
    assert died.returncode == -signal.SIGKILL, died.stderr
    raw = EventStore(db.with_name("l.views.db") if not one_file else db)
    try:  # the kill came where it should: the read models folded the Erased events and kept the words
        assert raw.conn.execute("SELECT count(*) FROM erasures_unfinished").get == 3
        assert raw.conn.execute("SELECT count(*) FROM memories WHERE content LIKE ?", (f"%{MARKER}%",)).get == 3
    finally:
        raw.close()
    app = LedgerApp(settings)
    try:
        for mid in gone:
            memory = app.read(mid)["memory"]
            assert (memory["status"], memory["content"]) == ("erased", "[erased]")
        assert app.find(MARKER)["results"] == []
        assert app.read(kept)["memory"]["status"] == "active"
        checks = {c["name"]: c for c in app.doctor()["checks"]}
        assert checks["erasures_unfinished"]["severity"] == "ok", checks["erasures_unfinished"]
        assert app.verify()["chain"] == "intact"
    finally:
        app.close()
    assert _bytes_hold(tmp_path, MARKER) == []


def test_an_erased_memory_answers_no_search_at_any_point(tmp_path: Path) -> None:
    """As of a time it held, ``find`` listed the erased memory as an "[erased]" hit (the current
    ``find`` leaves it out); ``read`` and ``history`` still say it was erased."""
    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        kept = app.remember("The inventory budget is 6000 dollars", event_time="2026-01-05T09:00:00Z")["memory_id"]
        gone = app.remember(f"The inventory badge is {MARKER}", event_time="2026-01-05T09:00:00Z")["memory_id"]
        app.erase(gone, reason="asked", authorization=AUTH_USER)
        for point in ({}, {"as_of_event_time": "2026-02-01T00:00:00Z"}, {"as_of_recorded": gone}):
            for query in ("", "inventory"):
                found = [r["memory_id"] for r in app.find(query, include_inactive=True, **point)["results"]]
                assert found == [kept], (point, query)
        assert app.read(gone)["memory"]["status"] == "erased"
    finally:
        app.close()


def test_an_erased_memory_keeps_when_it_stopped_being_true(tmp_path: Path) -> None:
    """``read`` put the erasure's own time as ``valid_to`` of a memory superseded months before;
    ``history`` and the timeline said the supersession's."""
    from tests.conftest import REVIEW

    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), policy=REVIEW))
    try:
        dan = app.remember(
            "The on-call engineer is Dan", source_type="agent_generated", event_time="2026-01-01T00:00:00Z"
        )
        eve = app.remember(
            "The on-call engineer is Eve", source_type="agent_generated", event_time="2026-03-01T00:00:00Z"
        )
        app.supersede(dan["memory_id"], eve["memory_id"], reason="rotation", authorization=AUTH_USER)
        before = app.read(dan["memory_id"])["memory"]["valid_to"]
        assert before is not None and before.startswith("2026-03-01")
        app.erase(dan["memory_id"], reason="asked", authorization=AUTH_USER)
        assert app.read(dan["memory_id"])["memory"]["valid_to"] == before
        app.rebuild()
        assert app.read(dan["memory_id"])["memory"]["valid_to"] == before
    finally:
        app.close()
