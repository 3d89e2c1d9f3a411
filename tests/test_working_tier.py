"""The working tier, conversations and cold memories on a real ledger (server/app/conversations.py,
projections/conversations.py): what is an event and what is not, and that a rebuild reproduces it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from fact_ledger.ledger import clock
from fact_ledger.ledger.errors import InvalidInput, NotFound
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Policy, Settings, load_settings


def _later(days: int) -> str:
    return clock.format_time(clock.to_datetime(clock.now()) + timedelta(days=days))


def _types(app: LedgerApp, after: int) -> list[str]:
    return [e.type for e in app.store.read(after=after)]


def _ids(answer: dict) -> list[int]:
    return [r["memory_id"] for r in answer["results"]]


def test_a_working_note_takes_no_part_in_claims_search_or_vectors(app: LedgerApp) -> None:
    note = app.remember("The staging API listens on port 8081", subject="staging api", tier="working", session_id="c")
    conn = app.conn
    assert conn.execute("SELECT count(*) FROM memories").get == 0
    assert conn.execute("SELECT count(*) FROM claims").get == 0
    assert conn.execute("SELECT count(*) FROM search_fts").get == 0  # nothing to embed or index
    assert app.status()["vectors"]["pending"] in (0, None)  # None: no model configured here
    assert app.read(note["memory_id"])["memory"]["tier"] == "working"


def test_the_working_tier_survives_a_rebuild_and_verify(app: LedgerApp) -> None:
    for i in range(25):
        app.remember(f"note {i} about the build", tier="working", session_id="c", turn=i, sticky=i == 0)
    app.remember("The deploy needs approval", session_id="c", turn=30)
    before = [m["memory_id"] for m in app.working("c")["memories"]]
    app.rebuild()
    assert [m["memory_id"] for m in app.working("c")["memories"]] == before
    assert app.verify()["projections"] == "consistent"


def test_reinforcing_touches_an_old_note_back_into_the_set(app: LedgerApp) -> None:
    first = app.remember("the oldest note", tier="working", session_id="c", turn=0)["memory_id"]
    for i in range(1, 21):
        app.remember(f"filler {i}", tier="working", session_id="c", turn=i)
    assert first not in [m["memory_id"] for m in app.working("c")["memories"]]
    app.reinforce(first, "user_referenced", session_id="c", turn=21)  # an evicted note referred back to
    assert first in [m["memory_id"] for m in app.working("c")["memories"]]
    revised = app.update(first, content="the oldest note, corrected", turn=22)
    assert revised["tier"] == "working" and revised["version"] == 2


def test_remember_answers_which_note_the_bounded_set_evicted(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), working_set_size=3))
    try:
        ids = [app.remember(f"step {i}", tier="working", session_id="c")["memory_id"] for i in range(3)]
        fourth = app.remember("step 3", tier="working", session_id="c")
        assert fourth["evicted"] == [ids[0]]
        # A set full of sticky notes: a plain note is out of it at once, and the answer said nothing.
        for i in range(3):
            app.remember(f"pinned {i}", tier="working", session_id="d", sticky=True)
        plain = app.remember("a passing thought", tier="working", session_id="d")
        assert plain["in_set"] is False and "full of sticky notes" in plain["notices"][0]
        assert "evicted" not in plain  # no note of the set left it
        assert plain["memory_id"] not in [m["memory_id"] for m in app.working("d")["memories"]]
    finally:
        app.close()


def test_the_default_tier_comes_from_the_settings(tmp_path: Path) -> None:
    settings = load_settings({"db": str(tmp_path / "l.db"), "create": True}, env={"LEDGER_DEFAULT_TIER": "working"})
    assert settings.default_tier == "working"
    app = LedgerApp(settings)
    try:
        assert app.remember("a provisional thought", session_id="c")["tier"] == "working"
        assert app.remember("a lasting fact", session_id="c", tier="long")["tier"] == "long"
    finally:
        app.close()
    with pytest.raises(InvalidInput) as bad:
        load_settings({"db": str(tmp_path / "l.db")}, env={"LEDGER_DEFAULT_TIER": "short"})
    assert bad.value.field == "default_tier"


def test_working_refusals_write_nothing(app: LedgerApp) -> None:
    before = app.store.last_position()
    for kwargs, field in (
        ({"tier": "working"}, "session_id"),
        (
            {"tier": "working", "session_id": "c", "claims": [{"subject": "a", "attribute": "b", "value": "c"}]},
            "claims",
        ),
        ({"sticky": True}, "sticky"),
    ):
        with pytest.raises(InvalidInput) as bad:
            app.remember("x y z", **kwargs)
        assert bad.value.field == field
    long_id = app.remember("a long-term fact")["memory_id"]
    with pytest.raises(InvalidInput):
        app.reinforce(long_id, "user_affirmed", turn=1)
    assert _types(app, before) == ["MemoryRecorded"]


def test_a_conversations_long_term_memories_rank_first_and_session_only_filters(app: LedgerApp) -> None:
    # two notes of no claim set (one value leading another would lead in any conversation)
    elsewhere = app.remember("We talked over the meeting agenda for the requirements review", session_id="a")
    here = app.remember("We talked over the meeting agenda for the UI walkthrough", session_id="b", turn=3)
    assert here["conflicts"] == []
    assert _ids(app.find("meeting agenda", session_id="b"))[0] == here["memory_id"]
    assert _ids(app.find("meeting agenda", session_id="a"))[0] == elsewhere["memory_id"]
    assert _ids(app.find("meeting agenda", session_id="b", session_only=True)) == [here["memory_id"]]
    with pytest.raises(InvalidInput):
        app.find("meeting", session_only=True)


def test_a_working_note_an_agent_labels_user_confirmed_says_so_as_a_long_term_write_does(app: LedgerApp) -> None:
    """The note's answer was silent where a long-term write's says ``agent_asserted``."""
    said = app.remember("x7 is the staging flag", tier="working", session_id="q", source_type="user_confirmed")
    long_term = app.remember("x8 is the staging flag", source_type="user_confirmed")
    for answer in (said, long_term):
        assert answer["authorization"] == "agent_asserted" and "agent_asserted" in answer["notices"][0]
    mine = app.remember(
        "x9 is the staging flag", tier="working", session_id="q", source_type="user_confirmed", authorization=AUTH_USER
    )
    assert "authorization" not in mine and "notices" not in mine


def test_a_conversations_challenger_never_ranks_above_its_leader(app: LedgerApp) -> None:
    """The conversation's own memories come first, but not a value its claim set has moved past:
    the agent in that conversation saw the outdated room first (docs/contract.md, ``find``)."""
    mine = app.remember("Espresso machine is in room 4", session_id="a", turn=1)["memory_id"]
    leader = app.remember("Espresso machine is in room 5")["memory_id"]
    found = app.find("espresso", session_id="a")["results"]
    assert [(r["memory_id"], r["standing"]["role"]) for r in found] == [(leader, "leader"), (mine, "challenger")]


def test_a_conversations_own_memory_keeps_its_own_score(app: LedgerApp) -> None:
    """Ordered first, it was given the score of the best memory below it."""
    for region in ("us-east", "eu-west", "ap-south"):
        app.remember(f"The deploy region for the {region} cluster is {region}")
    mine = app.remember("The deploy pipeline uses GitHub Actions", session_id="s1", turn=1)["memory_id"]
    alone = {r["memory_id"]: r["score"] for r in app.find("deploy region")["results"]}
    ranked = app.find("deploy region", session_id="s1")["results"]
    assert ranked[0]["memory_id"] == mine and ranked[0]["score"] == alone[mine]


def test_idle_conversations_expire_from_the_hot_models_but_stay_in_history(app: LedgerApp) -> None:
    note = app.remember("trying port 8081", tier="working", session_id="idle")["memory_id"]
    fresh = app.remember("trying port 9090", tier="working", session_id="busy")["memory_id"]
    assert app.conversations.sweep(now=_later(3))["expired_sessions"] == []
    swept = app.conversations.sweep(now=_later(8))
    assert sorted(swept["expired_sessions"]) == ["busy", "idle"]
    assert app.working("idle")["memories"] == []
    assert app.read(note)["memory"]["status"] == "expired"
    assert [e["type"] for e in app.history(note)["versions"][0]["events"]] == ["WorkingNoted"]
    assert fresh and "WorkingExpired" in _types(app, 0)
    app.rebuild()
    assert app.working("busy")["memories"] == []  # the pass was an event: a rebuild repeats it


def test_cold_memories_are_found_only_when_asked_or_when_nothing_hot_answers_and_warm_up(app: LedgerApp) -> None:
    old = app.remember("The archive bucket is s3://old-logs")["memory_id"]
    older = app.remember("The backup bucket is s3://older-logs")["memory_id"]
    app.conversations.sweep(now=_later(31))
    hot = app.remember("The current bucket is s3://new-logs")["memory_id"]
    assert app.conn.execute("SELECT count(*) FROM cold_memories").get == 2
    assert _ids(app.find("bucket logs")) == [hot]
    position = app.store.last_position()
    assert _ids(app.find("archive"))[0] == old  # nothing hot answers: the cold one does
    assert _types(app, position) == ["Warmed"]  # and it warms up (one event, not one per read)
    assert set(_ids(app.find("bucket logs"))) == {old, hot}
    assert set(_ids(app.find("bucket logs", include_cold=True))) == {old, older, hot}
    assert app.conn.execute("SELECT count(*) FROM cold_memories").get == 0
    app.rebuild()
    assert app.conn.execute("SELECT count(*) FROM cold_memories").get == 0  # Cooled, then Warmed: replayed


def test_reads_and_finds_of_hot_memories_write_no_event(app: LedgerApp) -> None:
    memory_id = app.remember("The release train leaves on Thursdays")["memory_id"]
    position = app.store.last_position()
    for _ in range(5):
        app.find("release train")
        app.read(memory_id)
    assert app.store.last_position() == position
    app.conversations.flush_uses()
    assert app.conn.execute("SELECT uses FROM memory_use WHERE memory_id=?", (memory_id,)).get == 10


def test_context_neighbours_follow_the_real_conversation_not_the_log_order(app: LedgerApp) -> None:
    from fact_ledger.projections.search.queries import session_neighbours

    a1 = app.remember("We review the requirements today", session_id="a")["memory_id"]
    b1 = app.remember("We walk through the UI today", session_id="b")["memory_id"]
    a2 = app.remember("It starts at ten", session_id="a")["memory_id"]
    loose = app.remember("It starts at eleven")["memory_id"]  # no conversation: guessed from the log
    found = session_neighbours(app.conn, [a1, b1, a2, loose])
    assert found[a2] == (a1, None) and found[a1] == (None, a2)
    assert found[b1] == (None, None)
    assert found[loose][0] == a2  # the guess: the memory logged just before, minutes apart


def test_working_notes_lead_the_pages_and_long_term_pages_on(app: LedgerApp) -> None:
    """More working notes than a page: the rest lead the next page (the first page's two were
    the only ones ever shown, the third never), then the long-term memories, each once."""
    notes = [app.remember(f"deploy note {i}", tier="working", session_id="c", turn=i)["memory_id"] for i in range(3)]
    long_ids = [app.remember(f"deploy fact {i}")["memory_id"] for i in range(3)]
    first = app.find("deploy", session_id="c", limit=2)
    assert [r["tier"] for r in first["results"]] == ["working", "working"] and first["has_more"]
    seen, cursor = [r["memory_id"] for r in first["results"]], first["next_cursor"]
    while cursor:
        page = app.find("deploy", session_id="c", limit=2, cursor=cursor)
        seen += [r["memory_id"] for r in page["results"]]
        cursor = page["next_cursor"]
    assert sorted(seen[:3]) == notes and sorted(seen[3:]) == long_ids  # every memory once, the notes first


def test_a_warm_up_on_a_read_only_ledger_writes_no_backup(app: LedgerApp) -> None:
    old = app.remember("The archive bucket is s3://old-logs")["memory_id"]
    app.conversations.sweep(now=_later(31))
    position = app.store.last_position()
    app.storage.degraded = {"reason": "read_only"}  # as when SQLite refuses writes
    try:
        assert _ids(app.find("archive"))[0] == old
        assert app.pending_backup() is None and app.store.last_position() == position  # nothing, not even a backup
    finally:
        app.storage.degraded = None
    assert _ids(app.find("archive"))[0] == old
    assert _types(app, position) == ["Warmed"]  # the next use warms it


def test_strict_isolation_keeps_another_workspaces_notes_out(tmp_path: Path) -> None:
    from fact_ledger.ledger.errors import ForbiddenWorkspace

    db = str(tmp_path / "l.db")
    mine = LedgerApp(Settings(db=db, workspace="alpha", isolation="strict"))
    theirs = LedgerApp(Settings(db=db, workspace="beta", isolation="strict"))
    try:
        note = theirs.remember("the beta release is on Friday", tier="working", session_id="shared-id")["memory_id"]
        assert mine.working("shared-id")["memories"] == []
        assert mine.find("release Friday", session_id="shared-id")["results"] == []
        for call in (lambda: mine.read(note), lambda: mine.reinforce(note, "user_affirmed", turn=1)):
            with pytest.raises(ForbiddenWorkspace):
                call()
    finally:
        mine.close()
        theirs.close()


def test_update_stores_the_conversation_and_a_working_note_checks_its_version(app: LedgerApp) -> None:
    from fact_ledger.ledger.errors import VersionConflict

    fact = app.remember("The release is on Monday")["memory_id"]
    position = app.store.last_position()
    app.update(fact, content="The release is on Tuesday", session_id="c", turn=7)
    (updated,) = [e for e in app.store.read(after=position) if e.type == "MemoryUpdated"]
    assert (updated.data.session, updated.data.turn) == ("c", 7)
    note = app.remember("maybe Wednesday", tier="working", session_id="c")["memory_id"]
    with pytest.raises(VersionConflict):
        app.update(note, content="maybe Thursday", expected_version=2)
    assert app.update(note, content="maybe Thursday", expected_version=1)["version"] == 2


def test_history_of_a_working_note_tells_its_whole_story_from_its_origin(tmp_path: Path) -> None:
    first = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="cursor", agent_id="a"))
    note = first.remember("the build takes nine minutes", tier="working", session_id="c", turn=0)["memory_id"]
    first.close()
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="claude", agent_id="b"))
    try:
        for turn in range(1, 41):  # repeated by another agent: the origin stays the first agent's
            app.remember("the build takes nine minutes", tier="working", session_id="c", turn=turn)
        version = app.history(note)["versions"][0]
        assert version["actor"] == "cursor:a"
        assert [(e["type"], e["payload"]["turn"]) for e in version["events"]] == [("WorkingNoted", 0)] + [
            ("WorkingRepeated", turn) for turn in range(1, 41)
        ]
        assert [e["position"] for e in version["events"]] == sorted(e["position"] for e in version["events"])
    finally:
        app.close()


def test_an_erased_working_note_is_erased_and_takes_no_more_acts(app: LedgerApp) -> None:
    """After ``erase`` a working note still read ``active``; ``promote`` made a locked long-term
    memory of ``[erased]`` and ``update`` wrote new text into it, undoing the erasure."""
    note = app.remember("Bob's home address is 12 Elm St", tier="working", session_id="s", turn=1)["memory_id"]
    app.erase(note, reason="personal data", authorization=AUTH_USER)
    assert app.read(note)["memory"]["status"] == "erased"
    before = app.store.last_position()
    for act in (
        lambda: app.promote(note, authorization=AUTH_USER),
        lambda: app.update(note, content="revived", session_id="s", turn=2),
        lambda: app.reinforce(note, "user_affirmed", session_id="s", turn=2),
    ):
        with pytest.raises(InvalidInput, match="erased"):
            act()
    assert app.store.last_position() == before
    app.rebuild()
    assert app.read(note)["memory"]["status"] == "erased"


def test_another_conversation_does_not_reach_a_note_by_its_id(app: LedgerApp) -> None:
    """``find`` hid the note from another conversation, but ``read``, ``reinforce`` and
    ``update`` with that conversation's id reached it (docs/governance.md: no other
    conversation sees it)."""
    note = app.remember("Trying port 8081 for the preview", tier="working", session_id="mine", turn=1)["memory_id"]
    before = app.store.last_position()
    for act in (
        lambda: app.read(note, session_id="theirs"),
        lambda: app.reinforce(note, "user_affirmed", session_id="theirs", turn=2),
        lambda: app.update(note, content="Trying port 8082", session_id="theirs", turn=2),
    ):
        with pytest.raises(NotFound, match=f"no memory {note} in conversation 'theirs'"):
            act()  # said of the conversation asked about: it exists, for another one
    assert app.store.last_position() == before
    assert app.read(note, session_id="mine")["memory"]["content"] == "Trying port 8081 for the preview"
    assert app.read(note)["memory"]["status"] == "active"  # a person (no conversation) sees it


def test_reads_at_the_terminal_count_as_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI never wrote the uses its reads counted (the process ended without closing the
    ledger): a memory written 40 days ago and found and read today from the terminal cooled at
    the next sweep."""
    from click.testing import CliRunner

    from fact_ledger.server.cli.main import main

    db = str(tmp_path / "ledger.db")
    real_now, past = clock.now, _later(-40)
    monkeypatch.setattr(clock, "now", lambda: past)
    app = LedgerApp(Settings(db=db, client="test"))
    try:
        for content in ("The cache TTL is 300 seconds", "The queue depth limit is 500", "Nobody asks about this"):
            app.remember(content)
    finally:
        app.close()
    monkeypatch.setattr(clock, "now", real_now)
    runner = CliRunner()
    for args in (["find", "cache TTL"], ["read", "2"]):
        assert runner.invoke(main, ["--db", db, *args]).exit_code == 0
    app = LedgerApp(Settings(db=db, client="test"))
    try:
        assert app.conversations.sweep()["cooled"] == [3]  # only the one nobody used
    finally:
        app.close()


def test_a_promoted_note_has_the_confidence_a_direct_write_of_it_has(app: LedgerApp) -> None:
    """Every promoted note had 0.5: the user's below their direct write's 1.0, an agent's above
    its 0.45 (so it beat the agent's direct writes on the confidence rule)."""
    for source_type in ("agent_generated", "user_confirmed", "document_extracted"):
        direct = app.remember(f"direct {source_type} fact", source_type=source_type)["memory_id"]
        note = app.remember(f"noted {source_type} fact", tier="working", session_id="s", source_type=source_type)
        promoted = app.promote(note["memory_id"], authorization=AUTH_USER)["memory_id"]
        assert app.read(promoted)["memory"]["confidence"] == app.read(direct)["memory"]["confidence"]
    given = app.remember("a note sure of itself", tier="working", session_id="s", confidence=0.9)["memory_id"]
    assert app.read(app.promote(given, authorization=AUTH_USER)["memory_id"])["memory"]["confidence"] == 0.9


def test_an_update_of_a_note_that_changes_nothing_writes_nothing(app: LedgerApp) -> None:
    """The same text sent three times made v2, v3 and v4 of a working note (docs/cli.md: a
    change that changes nothing writes nothing, ``unchanged: true``)."""
    note = app.remember("Trying port 8081", tier="working", session_id="s", turn=1)["memory_id"]
    before = app.store.last_position()
    same = app.update(note, content="Trying port 8081", session_id="s", turn=2)
    assert same["unchanged"] is True and same["version"] == 1 and same["tier"] == "working"
    assert app.store.last_position() == before
    changed = app.update(note, content="Trying port 8082", session_id="s", turn=3)
    assert changed["version"] == 2 and "unchanged" not in changed


def test_time_travel_says_what_a_conversation_has_no_past_for(app: LedgerApp) -> None:
    """``find --session-only`` with an as-of point answered every conversation's memories (and
    no working note); an as-of ``read`` of a working note said it "was not in the ledger"."""
    note = app.remember("Trying port 8081", tier="working", session_id="x", turn=1)["memory_id"]
    app.remember("Another conversation's port is 9000", session_id="y", turn=1)
    point = app.store.last_position()
    with pytest.raises(InvalidInput, match="no past") as refused:
        app.find("port", session_id="x", session_only=True, as_of_recorded=point)
    assert refused.value.field == "session_only"
    with pytest.raises(NotFound, match="is a working note"):
        app.read(note, as_of_recorded=point)
    with pytest.raises(NotFound, match="is a working note"):  # it said "no memory N"
        app.timeline(memory_id=note)


def test_a_long_term_act_on_a_working_note_says_what_it_is(app: LedgerApp) -> None:
    """``retire``, ``confirm`` and a retraction of a working note answered "no memory N" while
    ``read N`` showed it."""
    note = app.remember("Trying port 8081", tier="working", session_id="s", turn=1)["memory_id"]
    before = app.store.last_position()
    for act in (
        lambda: app.retire(note, reason="wrong", authorization=AUTH_USER),
        lambda: app.confirm(note, authorization=AUTH_USER),
        lambda: app.remember("scrap that", ref_id=note, retracts=True),
    ):
        with pytest.raises(InvalidInput, match="is a working memory"):
            act()
    assert app.store.last_position() == before
    promoted = app.promote(note, authorization=AUTH_USER)["promoted_to"]
    with pytest.raises(InvalidInput, match=f"it was promoted: act on #{promoted}"):
        app.retire(note, reason="wrong", authorization=AUTH_USER)


def test_a_signal_that_brings_a_note_back_says_which_it_pushed_out(tmp_path: Path) -> None:
    """``reinforce`` of a note that had left the set touched it back in and evicted another,
    without a word (``remember`` says which note it evicted)."""
    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), working_set_size=2))
    try:
        first, second, third = (
            app.remember(f"step {i}", tier="working", session_id="c", turn=i)["memory_id"] for i in range(3)
        )
        assert first not in [m["memory_id"] for m in app.working("c")["memories"]]
        back = app.reinforce(first, "user_referenced", session_id="c", turn=4)
        assert back["evicted"] == [second]
        assert sorted(m["memory_id"] for m in app.working("c")["memories"]) == [first, third]
        assert "evicted" not in app.reinforce(third, "user_referenced", session_id="c", turn=5)
    finally:
        app.close()


def test_a_promotion_that_a_later_value_settles_says_so(tmp_path: Path) -> None:
    """The answer said the promoted memory "now disagrees" with a set that policy had already
    settled against it, and named no supersession either way."""
    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), policy=Policy(settle_changes=True)))  # a later value leads
    try:
        app.remember("The on-call engineer is Eve", source_type="agent_generated", event_time="2026-03-01T00:00:00Z")
        note = dict(tier="working", session_id="s1", source_type="agent_generated")
        older = app.remember("The on-call engineer is Dan", turn=1, event_time="2026-01-01T00:00:00Z", **note)
        answer = app.promote(older["memory_id"])
        assert answer["status"] == "superseded" and answer["superseded"] == [answer["promoted_to"]]
        assert "superseded on arrival" in answer["notices"][0] and "disagrees" not in " ".join(answer["notices"])
        newer = app.remember("The on-call engineer is Finn", turn=2, event_time="2026-06-01T00:00:00Z", **note)
        answer = app.promote(newer["memory_id"])
        assert answer["status"] == "active" and answer["superseded"] == [1]
        assert (
            answer["notices"][0] == f"promoted to long-term #{answer['promoted_to']}: a later value, it supersedes #1"
        )
    finally:
        app.close()


def test_a_long_term_field_in_an_update_of_a_working_note_is_refused(app: LedgerApp) -> None:
    """``update --event-time`` of a working note answered "unchanged" (or changed the text alone):
    the time the caller asked for was dropped without a word."""
    note = app.remember("The cache ttl is 30", tier="working", session_id="s1", turn=1)["memory_id"]
    head = app.store.last_position()
    for change in (
        {"event_time": "2020-01-01T00:00:00Z"},
        {"content": "The cache ttl is 60", "source_type": "unknown"},
    ):
        with pytest.raises(InvalidInput) as refused:
            app.update(note, session_id="s1", turn=2, **change)
        assert refused.value.field in change and "working note" in refused.value.message
    assert app.store.last_position() == head
    assert app.update(note, session_id="s1", turn=2, content="The cache ttl is 60")["version"] == 2
