"""The working tier's bounds as an agent meets them on a real ledger (server/app/conversations.py,
projections/conversations.py, server/app/pending_reads.py): how sticky notes share the bounded set
and in which order it is shown, what a new note and a repeat answer (workspace, version, turns),
how working hits are ranked and scored in ``find``, which working memories ``reinforce`` and
``update`` refuse, that ``history`` of a working note keeps to strict isolation, and which
backed-up writes ``find`` lists as pending (new long-term memories only, in the asked workspace,
newest first). Each case holds what must be kept and what must be dropped, so an ignored bound,
check or filter fails (the mutation run found these unchecked)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from fact_ledger.ledger import clock
from fact_ledger.ledger.errors import ForbiddenWorkspace, InvalidInput, NotFound
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tests.conftest import REVIEW

# A ledger overwritten past SQLite's header: the facade opens degraded and backs every write up.
NOT_A_DB = b"SQLite format 3\x00" + b"this file was a ledger, then overwritten by accident\n" * 200


def _settings(tmp_path: Path, **extra: object) -> Settings:
    return Settings(
        db=str(tmp_path / "ledger.db"),
        backup=str(tmp_path / "backup.jsonl"),
        client="test",
        policy=REVIEW,
        embedding=Embedding(enabled=False),
        **extra,  # type: ignore[arg-type]
    )


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[LedgerApp]:
    """A ledger whose conversations keep working sets of three notes."""
    app = LedgerApp(_settings(tmp_path, working_set_size=3))
    yield app
    app.close()


def _note(app: LedgerApp, content: str, session: str = "c", **kwargs: object) -> int:
    return app.remember(content, tier="working", session_id=session, **kwargs)["memory_id"]


def _set(app: LedgerApp, session: str = "c") -> list[int]:
    return [m["memory_id"] for m in app.working(session)["memories"]]


def _later(days: int) -> str:
    return clock.format_time(clock.to_datetime(clock.now()) + timedelta(days=days))


# -- the bounded set ----------------------------------------------------------------------------


def test_a_sticky_note_takes_one_place_of_the_set_and_the_set_shows_most_recent_first(ledger: LedgerApp) -> None:
    pinned = _note(ledger, "the incident channel is #ops-fire", sticky=True)
    others = [_note(ledger, f"checked host number {i}") for i in range(3)]
    last = ledger.remember("checked host number 3", tier="working", session_id="c")
    # three places: the sticky note and the two most recently touched others
    assert _set(ledger) == [last["memory_id"], others[2], pinned]
    assert last["evicted"] == [others[1]]
    assert ledger.working("c")["limit"] == 3


def test_a_set_full_of_sticky_notes_keeps_no_other_note(ledger: LedgerApp) -> None:
    pinned = [_note(ledger, f"pinned rule {i}", sticky=True) for i in range(3)]
    loose = ledger.remember("a passing thought", tier="working", session_id="c")
    assert loose["memory_id"] not in _set(ledger)
    assert _set(ledger) == pinned[::-1]  # most recently touched first
    assert "evicted" not in loose  # no note of the set left it
    # and a find of the conversation does not bring the note left outside the set back
    assert [r["memory_id"] for r in ledger.find("passing thought", session_id="c")["results"]] == []


# -- what a note and a repeat answer ------------------------------------------------------------


def test_a_note_is_stored_in_the_workspace_it_names(ledger: LedgerApp) -> None:
    answer = ledger.remember("the ops runbook lives in the wiki", tier="working", session_id="c", workspace="ops")
    assert answer["workspace"] == "ops"
    assert ledger.read(answer["memory_id"])["memory"]["workspace"] == "ops"
    mine = ledger.remember("a note of my own workspace", tier="working", session_id="c")
    assert mine["workspace"] == ledger.settings.workspace != "ops"


def test_a_new_note_is_version_one_and_a_repeat_keeps_its_turns(ledger: LedgerApp) -> None:
    first = ledger.remember("the build takes nine minutes", tier="working", session_id="c", turn=4)
    assert (first["version"], first["status"], first["tier"], first["session_id"]) == (1, "active", "working", "c")
    assert "duplicate_of" not in first
    repeat = ledger.remember("the build takes nine minutes", tier="working", session_id="c", turn=9)
    assert repeat["duplicate_of"] == repeat["memory_id"] == first["memory_id"] and repeat["version"] == 1
    memory = ledger.read(first["memory_id"])["memory"]
    assert (memory["turn"], memory["last_turn"]) == (4, 9)  # noted at turn 4, repeated at turn 9
    events = ledger.history(first["memory_id"])["versions"][0]["events"]
    assert [(e["type"], e["payload"]["turn"]) for e in events] == [("WorkingNoted", 4), ("WorkingRepeated", 9)]


# -- working hits in find -----------------------------------------------------------------------


def test_working_hits_rank_by_score_then_recency_and_carry_their_score(ledger: LedgerApp) -> None:
    app = ledger
    full = _note(app, "the staging database runs postgres")  # all three query words: 1.0
    partial = _note(app, "the staging database runs mysql")  # two of three: 0.6667
    _note(app, "lunch is at noon today")  # no word of the query: not a hit
    hits = [r for r in app.find("staging database postgres", session_id="c")["results"] if r["tier"] == "working"]
    assert [(r["memory_id"], r["score"]) for r in hits] == [(full, 1.0), (partial, 0.6667)]


def test_equal_working_hits_show_the_most_recently_touched_first(tmp_path: Path) -> None:
    app = LedgerApp(_settings(tmp_path))
    try:
        older = _note(app, "the staging database runs postgres")
        newer = _note(app, "the staging database runs mysql")
        best = _note(app, "the staging database postgres replica runs mysql")  # all three words, oldest below
        app.reinforce(older, "user_referenced", turn=1)  # touches it: now the most recent
        hits = app.find("staging database postgres", session_id="c")["results"]
        assert [(r["memory_id"], r["score"]) for r in hits] == [(older, 1.0), (best, 1.0), (newer, 0.6667)]
    finally:
        app.close()


# -- refusals of reinforce, promote and update --------------------------------------------------


def test_working_actions_on_a_missing_memory_are_not_found(ledger: LedgerApp) -> None:
    _note(ledger, "something to have a ledger")
    position = ledger.store.last_position()
    for call in (
        lambda: ledger.reinforce(999, "user_affirmed", turn=1),
        lambda: ledger.conversations.promote(999),
    ):
        with pytest.raises(NotFound) as missing:
            call()
        assert missing.value.field == "memory_id" and "999" in missing.value.message
    assert ledger.store.last_position() == position


def test_an_expired_note_takes_no_signal_and_no_revision(ledger: LedgerApp) -> None:
    note = _note(ledger, "trying port 8081", session="idle")
    ledger.conversations.sweep(now=_later(8))
    position = ledger.store.last_position()
    for call in (
        lambda: ledger.reinforce(note, "user_affirmed", turn=2),
        lambda: ledger.update(note, content="trying port 8082", turn=2),
    ):
        with pytest.raises(InvalidInput) as refused:
            call()
        assert refused.value.field == "memory_id" and "expired" in refused.value.message
    assert ledger.store.last_position() == position  # nothing written
    assert ledger.read(note)["memory"]["status"] == "expired"


# -- history of a working note ------------------------------------------------------------------


def test_history_of_a_working_note_is_one_complete_page(ledger: LedgerApp) -> None:
    note = _note(ledger, "the release is on friday", turn=1)
    ledger.reinforce(note, "user_referenced", turn=2)
    answer = ledger.history(note)
    assert (answer["has_more"], answer["next_cursor"]) == (False, None)
    (version,) = answer["versions"]
    assert [e["type"] for e in version["events"]] == ["WorkingNoted", "Reinforced"]
    assert (version["tier"], version["content"]) == ("working", "the release is on friday")


def test_strict_isolation_refuses_the_history_of_another_workspaces_note(tmp_path: Path) -> None:
    db = str(tmp_path / "l.db")
    mine = LedgerApp(Settings(db=db, workspace="alpha", isolation="strict", embedding=Embedding(enabled=False)))
    theirs = LedgerApp(Settings(db=db, workspace="beta", isolation="strict", embedding=Embedding(enabled=False)))
    try:
        note = _note(theirs, "the beta launch code is 4411", session="shared-id")
        assert theirs.history(note)["versions"][0]["content"] == "the beta launch code is 4411"
        with pytest.raises(ForbiddenWorkspace) as refused:
            mine.history(note)
        assert refused.value.field == "memory_id"
    finally:
        mine.close()
        theirs.close()


# -- pending (backed-up, not yet in the log) finds ----------------------------------------------


@pytest.fixture
def pending(tmp_path: Path) -> Iterator[LedgerApp]:
    """A ledger whose backup holds writes made while its file was corrupt (then replaced by a
    fresh one): a working note, a long-term memory in each of the workspaces alpha and beta, and
    two in the caller's own workspace, in that order."""
    (tmp_path / "ledger.db").write_bytes(NOT_A_DB)
    degraded = LedgerApp(_settings(tmp_path))
    writes = [
        degraded.remember("the ferry timetable is being rewritten", tier="working", session_id="c"),
        degraded.remember("the ferry leaves at noon", workspace="alpha"),
        degraded.remember("the ferry leaves at one", workspace="beta"),
        degraded.remember("the ferry leaves at two"),
        degraded.remember("the ferry leaves at three"),
    ]
    degraded.close()
    assert all(w["backup_only"] for w in writes)
    (tmp_path / "ledger.db").unlink()
    app = LedgerApp(_settings(tmp_path))
    yield app
    app.close()


def _pending(answer: dict) -> list[tuple[str, str]]:
    return [(r["content"], r["workspace"]) for r in answer["results"] if r.get("pending")]


def test_find_lists_every_pending_new_memory_newest_first_and_no_working_note(pending: LedgerApp) -> None:
    own = pending.settings.workspace
    answer = pending.find("ferry")
    assert _pending(answer) == [
        ("the ferry leaves at three", own),
        ("the ferry leaves at two", own),
        ("the ferry leaves at one", "beta"),
        ("the ferry leaves at noon", "alpha"),
    ]
    assert answer["pending_results"] == 4
    assert all(r["memory_id"] is None for r in answer["results"])
    assert _pending(pending.find("ferry timetable")) == []  # the backed-up working note is not listed


def test_find_in_a_workspace_lists_only_its_pending_memories(pending: LedgerApp) -> None:
    assert _pending(pending.find("ferry", workspace="alpha")) == [("the ferry leaves at noon", "alpha")]
    assert _pending(pending.find("ferry", workspace="beta")) == [("the ferry leaves at one", "beta")]
    assert _pending(pending.find("ferry", workspace="gamma")) == []
