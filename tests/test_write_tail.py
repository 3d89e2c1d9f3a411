"""FTS5 indexes written inline are set up so that no single small write pays for a large merge."""

from __future__ import annotations

from fact_ledger.server.app.facade import LedgerApp


def test_fts_indexes_merge_only_in_small_steps_and_are_compacted_by_a_rebuild(app: LedgerApp) -> None:
    for i in range(40):
        app.remember(f"fact number {i} about topic{i}", source_type="agent_generated")
    for table in ("search_fts", "tt_fts"):
        automerge = app.conn.execute(f"SELECT v FROM {table}_config WHERE k='automerge'").fetchone()
        assert automerge == (0,), table  # automerge merges 64 x levels pages in one COMMIT
        crisis = app.conn.execute(f"SELECT v FROM {table}_config WHERE k='crisismerge'").fetchone()
        assert crisis == (8,), table  # small steps: ~40 pages every 64 writes, not ~130 every 256
        segments = app.conn.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0]
        assert segments > 1, table  # one small segment per write until a crisis merge
    app.rebuild()
    for table in ("search_fts", "tt_fts"):
        segments = app.conn.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0]
        assert segments == 1, table  # the bulk sits in one top-level segment after 'optimize'
    found = app.find("topic7")["results"]
    assert [r["content"] for r in found] == ["fact number 7 about topic7"]  # still searchable
