"""A write's answer comes from the state the write produced, read inside its own transaction
(``Storage.commit``'s ``reply``): nothing is read again after the commit, where another writer's
change could already show. APSW's statement trace on both files (the log and the read models)
shows every statement a ``remember`` runs, in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import REVIEW


def _traced(app: LedgerApp, call: Any) -> tuple[Any, list[str]]:
    statements: list[str] = []

    def trace(cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
        statements.append(sql.split(None, 1)[0].upper())
        return True

    connections = {id(c): c for c in (app.storage.conn, app.storage.log.conn, app.storage.store.conn)}
    for conn in connections.values():
        conn.exec_trace = trace
    try:
        return call(), statements
    finally:
        for conn in connections.values():
            conn.exec_trace = None


def _after_last_commit(statements: list[str]) -> list[str]:
    last = max(i for i, s in enumerate(statements) if s in ("COMMIT", "RELEASE", "END"))
    return statements[last + 1 :]


def test_a_remember_reads_nothing_after_its_commit(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", policy=REVIEW))
    try:
        app.remember("The staging API listens on port 8080")
        app.remember("Alice prefers tea")
        reply, statements = _traced(app, lambda: app.remember("The staging API listens on port 9090"))
        assert reply["conflicts_total"] == 1 and reply["conflicts"][0]["member_count"] == 2  # the answer is whole
        assert "COMMIT" in statements
        assert _after_last_commit(statements) == []
        duplicate, statements = _traced(app, lambda: app.remember("Alice prefers tea"))
        assert duplicate["duplicate_of"] == 2
        assert _after_last_commit(statements) == []
    finally:
        app.close()


def test_an_update_reads_nothing_after_its_commit(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", policy=REVIEW))
    try:
        first = app.remember("The staging API listens on port 8080")["memory_id"]
        app.remember("The staging API listens on port 9090")
        reply, statements = _traced(app, lambda: app.update(first, content="The staging API listens on port 9090"))
        assert reply["version"] == 2 and "COMMIT" in statements
        assert _after_last_commit(statements) == []
    finally:
        app.close()
