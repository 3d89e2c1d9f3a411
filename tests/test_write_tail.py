"""FTS5 indexes written inline are set up so that no single small write pays for a large merge."""

from __future__ import annotations

from fact_ledger.server.app.facade import LedgerApp


def test_fts_indexes_merge_only_in_small_steps_and_are_compacted_by_a_rebuild(app: LedgerApp) -> None:
    for i in range(40):
        app.remember(f"fact number {i} about topic{i}", source_type="agent_generated")
        app.settle()  # as ``ledger serve`` does between calls: one fold, one small segment, per write
    for table in ("search_fts", "tt_fts"):
        automerge = app.conn.execute(f"SELECT v FROM {table}_config WHERE k='automerge'").fetchone()
        assert automerge == (0,), table  # automerge merges 64 x levels pages in one COMMIT
        crisis = app.conn.execute(f"SELECT v FROM {table}_config WHERE k='crisismerge'").fetchone()
        assert crisis == (8,), table  # small steps: ~40 pages every 64 writes, not ~130 every 256
        segments = app.conn.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0]
        assert segments > 1, table  # one small segment per fold until a crisis merge
    app.rebuild()
    for table in ("search_fts", "tt_fts"):
        segments = app.conn.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0]
        assert segments == 1, table  # the bulk sits in one top-level segment after 'optimize'
    found = app.find("topic7")["results"]
    assert [r["content"] for r in found] == ["fact number 7 about topic7"]  # still searchable


def test_one_fold_of_many_writes_leaves_one_segment(app: LedgerApp) -> None:
    """The after-commit fold keeps its terms in memory: 40 writes folded at once flush one
    segment, not one per event (a statement journal inside the fold would flush at every event)."""
    for i in range(40):
        app.remember(f"fact number {i} about topic{i}", source_type="agent_generated")
    for table in ("search_fts", "tt_fts"):
        segments = app.conn.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0]
        assert segments == 1, table
    assert len(app.find("topic7")["results"]) == 1
