"""``projections.unchanged``: a small read model is read once per write transaction, and never
answered from a kept copy once it may have changed (its projector wrote, the transaction ended,
another connection committed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from fact_ledger.projections import unchanged


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[apsw.Connection]:
    c = apsw.Connection(str(tmp_path / "memo.db"))
    c.execute("PRAGMA journal_mode=WAL").fetchall()
    c.execute("CREATE TABLE t(x INTEGER)")
    yield c
    c.close()


class Reads:
    """``load`` for :func:`unchanged.memo` that counts how often it reads the table."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, conn: apsw.Connection) -> list[int]:
        self.count += 1
        return [r[0] for r in conn.execute("SELECT x FROM t ORDER BY x")]


def test_a_write_transaction_reads_once_until_the_projector_says_it_changed(conn: apsw.Connection) -> None:
    load = Reads()
    conn.execute("BEGIN IMMEDIATE")
    assert unchanged.memo(conn, "t", load) == []
    assert unchanged.memo(conn, "t", load) == []
    assert load.count == 1
    conn.execute("INSERT INTO t VALUES(1)")
    unchanged.changed(conn, "t")
    assert unchanged.memo(conn, "t", load) == [1]
    assert load.count == 2
    unchanged.changed(conn, "other")  # another name leaves this answer kept
    assert unchanged.memo(conn, "t", load) == [1]
    assert load.count == 2
    conn.execute("COMMIT")


def test_a_rolled_back_write_is_not_answered_in_the_next_transaction(conn: apsw.Connection) -> None:
    load = Reads()
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO t VALUES(7)")
    unchanged.changed(conn, "t")
    assert unchanged.memo(conn, "t", load) == [7]
    conn.execute("ROLLBACK")
    conn.execute("BEGIN IMMEDIATE")
    assert unchanged.memo(conn, "t", load) == []
    conn.execute("COMMIT")


def test_another_connections_commit_is_seen_by_the_next_transaction(tmp_path: Path, conn: apsw.Connection) -> None:
    load = Reads()
    conn.execute("BEGIN IMMEDIATE")
    assert unchanged.memo(conn, "t", load) == []
    conn.execute("COMMIT")
    other = apsw.Connection(str(tmp_path / "memo.db"))
    other.execute("INSERT INTO t VALUES(3)")
    other.close()
    conn.execute("BEGIN IMMEDIATE")
    assert unchanged.memo(conn, "t", load) == [3]
    conn.execute("COMMIT")


def test_nothing_is_kept_outside_a_write_transaction(conn: apsw.Connection) -> None:
    load = Reads()
    unchanged.memo(conn, "t", load)
    unchanged.memo(conn, "t", load)
    conn.execute("BEGIN")  # a read transaction: its snapshot may differ from a kept answer
    unchanged.memo(conn, "t", load)
    unchanged.memo(conn, "t", load)
    conn.execute("ROLLBACK")
    assert load.count == 4
