"""The overview's counts: equal to a plain count of the rows, and read from an index alone.

The overview is the console's first page; at 100k memories a count that reads every row (and
its content) costs seconds, one that walks the covering index ``memories_counts`` milliseconds.
"""

from __future__ import annotations

from collections import Counter

from fact_ledger.server.app.facade import LedgerApp


def _seed(app: LedgerApp) -> None:
    app.remember("The staging API listens on port 8080", workspace="alpha")
    app.remember("Bob prefers tea", source_type="document_extracted", workspace="beta")
    app.remember("The build uses cache v2", source_type="user_confirmed", workspace="beta")
    gone = app.remember("The office is on floor 3", workspace="alpha")["memory_id"]
    app.retire(gone, reason="moved", authorization="user_channel")


def _plans(app: LedgerApp) -> list[str]:
    """Every query plan line of the statements ``overview`` runs against ``memories``."""
    statements: list[str] = []

    def trace(_cursor, sql: str, _bindings) -> bool:
        if "FROM memories" in sql and not sql.startswith("EXPLAIN"):
            statements.append(sql)
        return True

    app.conn.exec_trace = trace
    try:
        app.overview()
    finally:
        app.conn.exec_trace = None
    assert statements, "overview ran no statement against memories"
    return [row[-1] for sql in statements for row in app.conn.execute("EXPLAIN QUERY PLAN " + sql, ())]


def test_overview_counts_equal_a_plain_count_of_the_rows(app: LedgerApp) -> None:
    _seed(app)
    rows = app.conn.execute("SELECT status, source_type, workspace, confirmed_via FROM memories").fetchall()
    active = [r for r in rows if r[0] == "active"]
    seen = app.overview()
    assert seen["by_status"] == dict(Counter(r[0] for r in rows))
    assert seen["by_source_type"] == dict(Counter(r[1] for r in active))
    assert seen["by_workspace"] == dict(Counter(r[2] for r in active))
    assert seen["by_workspace"] == {"alpha": 1, "beta": 2}
    assert list(seen["by_source_type"]) == sorted(seen["by_source_type"])


def test_overview_counts_walk_an_index_without_reading_rows_or_sorting(app: LedgerApp) -> None:
    _seed(app)
    plans = _plans(app)
    assert all("COVERING INDEX" in line for line in plans), plans
    assert not any("TEMP B-TREE" in line for line in plans), plans
