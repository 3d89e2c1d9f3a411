"""FTS5 indexes written inline are set up so that no single small write pays for a large merge."""

from __future__ import annotations

from server.app import LedgerApp


def _segments(app: LedgerApp, table: str) -> int:
    return int(app.conn.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0])


def test_fts_indexes_merge_only_in_small_steps_and_are_compacted_by_a_rebuild(app: LedgerApp) -> None:
    for i in range(40):
        app.remember(f"fact number {i} about topic{i}", source_type="agent_generated")
    for table in ("search_fts", "tt_fts"):
        automerge = app.conn.execute(f"SELECT v FROM {table}_config WHERE k='automerge'").fetchone()
        assert automerge == (0,), table  # automerge merges 64 x levels pages in one COMMIT
        crisis = app.conn.execute(f"SELECT v FROM {table}_config WHERE k='crisismerge'").fetchone()
        assert crisis == (8,), table  # small steps: ~40 pages every 64 writes, not ~130 every 256
    assert _segments(app, "search_fts") > 1  # one small segment per write until a crisis merge
    assert _segments(app, "tt_fts") == 0  # a new memory's text is current: only the search index has it
    for memory_id in (3, 5):
        app.update(memory_id, content=f"fact {memory_id} was corrected")
    assert _segments(app, "tt_fts") >= 1  # the replaced texts moved to the history index
    app.rebuild()
    for table in ("search_fts", "tt_fts"):
        assert _segments(app, table) == 1, table  # the bulk sits in one top-level segment after 'optimize'
    found = app.find("topic7")["results"]
    assert [r["content"] for r in found] == ["fact number 7 about topic7"]  # still searchable
    old = app.find("topic3", as_of_recorded=40)["results"]
    assert [r["content"] for r in old] == ["fact number 3 about topic3"]  # found by its replaced words
