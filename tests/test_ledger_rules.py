"""The domain rules that live in ``ledger/``, tested without any other package of the project:
exact duplicates, retention (archiving) and how a reply ranks collisions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fact_ledger.ledger.duplicates import DUPLICATE_STATUS, DuplicateKey, duplicate_key, is_exact_duplicate
from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.log.events import MemoryArchived
from fact_ledger.ledger.normalize import content_hash
from fact_ledger.ledger.reply import MAX_REPORTED, other_side, rank_for_reply
from fact_ledger.ledger.retention import (
    ARCHIVABLE_STATUSES,
    ArchiveCandidate,
    archive_cutoff,
    decide_archive,
    is_archivable,
)
from fact_ledger.ledger.trust import STATUSES

TIMES = st.sampled_from(["2026-01-01T00:00:00.000000Z", "2026-03-01T12:00:00.000000Z", "2026-06-30T23:59:59.999999Z"])


def test_the_rule_modules_import_nothing_outside_ledger() -> None:
    code = (
        "import sys, ledger.duplicates, ledger.retention, ledger.reply, ledger.decide, ledger.govern; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'projections', 'server', 'tools', 'tests'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- exact duplicates ----------------------------------------------------------------------------
def test_a_duplicate_key_hashes_the_content_and_normalises_the_subject() -> None:
    key = duplicate_key("Alice moved to Berlin.", "  ALICE  ", "work")
    assert key == DuplicateKey(content_hash("Alice moved to Berlin."), "work", "alice")


def test_the_same_words_in_another_workspace_or_about_another_subject_are_not_a_duplicate() -> None:
    key = duplicate_key("Alice moved to Berlin.", "Alice", "work")
    assert is_exact_duplicate(key, duplicate_key("Alice moved to Berlin.", "alice", "work"), "active")
    assert not is_exact_duplicate(key, duplicate_key("Alice moved to Berlin.", "Alice", "home"), "active")
    assert not is_exact_duplicate(key, duplicate_key("Alice moved to Berlin.", "Bob", "work"), "active")
    assert not is_exact_duplicate(key, duplicate_key("Alice moved to Paris.", "Alice", "work"), "active")


@given(st.sampled_from(STATUSES), st.text(max_size=30), st.text(max_size=10), st.text(max_size=5))
def test_only_an_active_memory_absorbs_a_repeat(status: str, content: str, subject: str, workspace: str) -> None:
    key = duplicate_key(content, subject, workspace)
    assert is_exact_duplicate(key, key, status) == (status == DUPLICATE_STATUS == "active")


@given(st.text(max_size=30), st.text(max_size=30), st.text(max_size=10), st.text(max_size=10))
def test_two_memories_are_duplicates_exactly_when_their_keys_match(a: str, b: str, sa: str, sb: str) -> None:
    ka, kb = duplicate_key(a, sa, "w"), duplicate_key(b, sb, "w")
    same = content_hash(a) == content_hash(b) and ka.subject_norm == kb.subject_norm
    assert is_exact_duplicate(ka, kb, "active") == same


_WORDS = st.sampled_from(["Alice moved to Berlin.", "alice moved to berlin", "Alice moved to Paris.", "Bob is here"])


@settings(max_examples=25, deadline=None)
@given(
    _WORDS, _WORDS, st.sampled_from(["Alice", " alice ", "Bob", ""]), st.sampled_from(["Alice", "", "BOB"]),
    st.sampled_from(["w", "v"]), st.booleans(),
)  # fmt: skip
def test_the_read_models_lookup_agrees_with_the_rule(
    first: str, second: str, s1: str, s2: str, workspace: str, retired: bool
) -> None:
    """``projections.memories.exact_duplicate`` (the SQL that runs) finds a memory exactly when
    :func:`is_exact_duplicate` says it absorbs the new one (the rule, written plainly)."""
    import tempfile

    from fact_ledger.projections import memories as mem
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings

    with tempfile.TemporaryDirectory() as tmp:
        app = LedgerApp(Settings(db=str(Path(tmp) / "l.db")))
        try:
            memory_id = app.remember(first, subject=s1, workspace="w")["memory_id"]
            if retired:
                app.retire(memory_id, authorization="user_channel")
            row = mem.by_id(app.conn, memory_id)
            assert row is not None
            existing = DuplicateKey(row.content_hash, row.workspace, row.subject_norm)
            new = duplicate_key(second, s2, workspace)
            found = mem.exact_duplicate(app.conn, new)
            assert (found is not None and found.memory_id == memory_id) == is_exact_duplicate(new, existing, row.status)
        finally:
            app.close()


# -- retention -----------------------------------------------------------------------------------
def test_the_cutoff_is_the_retention_period_before_now() -> None:
    assert archive_cutoff("2026-03-31T10:00:00.000000Z", 30) == "2026-03-01T10:00:00.000000Z"
    assert archive_cutoff("2026-03-31T10:00:00.000000Z", 0) == "2026-03-31T10:00:00.000000Z"


def test_a_negative_retention_period_is_refused() -> None:
    with pytest.raises(InvalidInput) as err:
        archive_cutoff("2026-03-31T10:00:00.000000Z", -1)
    assert err.value.field == "older_than_days"


@given(st.sampled_from(STATUSES), TIMES, TIMES)
def test_only_retired_or_superseded_memories_unchanged_since_the_cutoff_are_archivable(
    status: str, updated_at: str, cutoff: str
) -> None:
    assert is_archivable(status, updated_at, cutoff) == (status in ("retired", "superseded") and updated_at < cutoff)


@given(st.lists(st.tuples(st.sampled_from(STATUSES), TIMES), max_size=8), TIMES)
def test_the_archive_decision_rechecks_every_candidate(rows: list[tuple[str, str]], cutoff: str) -> None:
    candidates = [ArchiveCandidate(i, f"s{i}", "w", status, t) for i, (status, t) in enumerate(rows)]
    decision = decide_archive(candidates, cutoff)
    expected = [c.stream_id for c in candidates if c.status in ARCHIVABLE_STATUSES and c.updated_at < cutoff]
    assert [stream for stream, _ in decision] == expected
    assert all(isinstance(e, MemoryArchived) and e.memory == s for s, e in decision)


def test_an_active_memory_is_never_archived_however_old() -> None:
    old = ArchiveCandidate(1, "s1", "w", "active", "2000-01-01T00:00:00.000000Z")
    assert decide_archive([old], "2026-01-01T00:00:00.000000Z") == []


# -- reply ranking -------------------------------------------------------------------------------
def test_the_other_side_is_the_leader_unless_the_writer_leads() -> None:
    assert other_side([7, 3, 9], 7, mine=3) == 7
    assert other_side([3, 7, 9], 3, mine=3) == 7
    assert other_side([3], 3, mine=3) is None
    assert other_side([5, 3], None, mine=3) == 5


def test_sets_where_the_writer_does_not_lead_come_first_then_older_sets() -> None:
    sets = [
        {"conflict_id": 10, "leader_id": 1},
        {"conflict_id": 4, "leader_id": 2},
        {"conflict_id": 8, "leader_id": 2},
        {"conflict_id": 2, "leader_id": 1},
    ]
    shown, total = rank_for_reply(sets, mine=1)
    assert [s["conflict_id"] for s in shown] == [4, 8, 2, 10]
    assert total == 4


@given(st.lists(st.tuples(st.integers(1, 50), st.sampled_from([None, 1, 2, 3])), max_size=12, unique_by=lambda t: t[0]))
def test_a_reply_shows_at_most_five_sets_best_first(rows: list[tuple[int, int | None]]) -> None:
    sets = [{"conflict_id": c, "leader_id": leader} for c, leader in rows]
    shown, total = rank_for_reply(sets, mine=1)
    assert total == len(sets)
    assert len(shown) == min(MAX_REPORTED, len(sets))
    keys = [(s["leader_id"] == 1, s["conflict_id"]) for s in shown]
    assert keys == sorted(keys)
    rest = [(s["leader_id"] == 1, s["conflict_id"]) for s in sets if s not in shown]
    assert all(k < r for k in keys for r in rest)


@settings(max_examples=20, deadline=None)
@given(
    st.sampled_from(["agent_generated", "document_extracted", "user_confirmed", "unknown"]),
    st.sampled_from(["agent_generated", "user_confirmed"]),
    st.sampled_from(["", "user_channel"]),
)  # fmt: skip
def test_the_guarded_member_query_agrees_with_the_rule(first_source: str, second_source: str, channel: str) -> None:
    """``projections.conflicts.queries.has_guarded_member`` (SQL) says a set has a member no policy may
    supersede exactly when :func:`ledger.settlement.guarded` says so of one of its members."""
    import tempfile

    from fact_ledger.ledger.facts import MemoryFacts
    from fact_ledger.ledger.settlement import guarded
    from fact_ledger.projections import memories as mem
    from fact_ledger.projections.conflicts import queries as conflicts_model
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings

    with tempfile.TemporaryDirectory() as tmp:
        app = LedgerApp(Settings(db=str(Path(tmp) / "l.db")))
        try:
            app.remember("The cache port is 7000", source_type=first_source, authorization=channel)
            answer = app.remember("The cache port is 7001", source_type=second_source, authorization=channel)
            (conflict,) = answer["conflicts"]
            members = [MemoryFacts.from_row(mem.by_id(app.conn, m) or {}) for m in (1, answer["memory_id"])]
            assert conflicts_model.has_guarded_member(app.conn, conflict["conflict_id"]) == any(map(guarded, members))
        finally:
            app.close()


def test_the_archivable_query_agrees_with_the_rule(tmp_path: Path) -> None:
    """``projections.memories.archivable`` / ``count_archivable`` (SQL) pick exactly the memories
    :func:`ledger.retention.is_archivable` names, at cutoffs before, between and after their changes."""
    from fact_ledger.projections import memories as mem
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings

    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        kept = app.remember("The cache port is 7000")["memory_id"]
        retired = app.remember("Run the nightly backup")["memory_id"]
        app.retire(retired, authorization="user_channel")
        old = app.remember("The gateway port is 8000")["memory_id"]
        new = app.remember("The gateway port is 8001")["memory_id"]
        app.supersede(old, new, authorization="user_channel")
        rows = [r for r in (mem.by_id(app.conn, m) for m in (kept, retired, old, new)) if r is not None]
        times = sorted(r.updated_at for r in rows)
        for cutoff in ("0000", times[0], times[len(times) // 2], "9999"):
            expected = [r.memory_id for r in rows if is_archivable(r.status, r.updated_at, cutoff)]
            assert [c.memory_id for c in mem.archivable(app.conn, cutoff)] == sorted(expected)
            assert mem.count_archivable(app.conn, cutoff) == len(expected)
        assert [c.memory_id for c in mem.archivable(app.conn, "9999")] == sorted([retired, old])
    finally:
        app.close()
