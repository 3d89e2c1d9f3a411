"""Small read models read once per write transaction, not once per caller.

A write asks for the accepted workspace and entity aliases several times (its workspace, its
scope, its claims' owners, their projection), each a whole-table read. Inside one write
transaction nothing but this connection can change them, and its own changes go through their
projectors, which say so (:func:`changed`). :func:`memo` keeps an answer until then, or until
the transaction ends (SQLite's commit and rollback hooks clear every answer): the next
transaction reads afresh, whatever another process committed in between.

Outside a write transaction nothing is kept: a read transaction's snapshot may be older or newer
than a kept answer.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import apsw

T = TypeVar("T")
WRITING = 2  # SQLITE_TXN_WRITE: this connection holds the file's write lock

_answers: weakref.WeakKeyDictionary[apsw.Connection, dict[str, Any]] = weakref.WeakKeyDictionary()


def memo(conn: apsw.Connection, name: str, load: Callable[[apsw.Connection], T]) -> T:
    """``load(conn)``, read once per write transaction (until :func:`changed` names it). The
    answer is shared: callers must not change it."""
    if conn.txn_state("main") != WRITING:
        return load(conn)
    answers = _answers_of(conn)
    if name not in answers:
        answers[name] = load(conn)
    return answers[name]  # type: ignore[no-any-return]


# The alias tables (workspace_aliases, entity_aliases): a write needs both, so the first to be
# asked for in a write transaction reads both, in one statement.
ALIAS_TABLES = ("workspace_aliases", "entity_aliases")
AliasRows = list[tuple[str, str, bool]]


def alias_rows(conn: apsw.Connection, table: str) -> AliasRows:
    """Every ``(alias, canonical, accepted)`` row of ``table`` (one of :data:`ALIAS_TABLES`) in
    primary-key order, read once per write transaction like :func:`memo` (the projector of
    either table says :func:`changed` with the table's name)."""
    if conn.txn_state("main") != WRITING:
        return _read_aliases(conn, (table,))[table]
    answers = _answers_of(conn)
    if table not in answers:
        answers.update(_read_aliases(conn, tuple(t for t in ALIAS_TABLES if t not in answers)))
    return answers[table]  # type: ignore[no-any-return]


def _read_aliases(conn: apsw.Connection, tables: tuple[str, ...]) -> dict[str, AliasRows]:
    out: dict[str, AliasRows] = {t: [] for t in tables}
    selects = [
        f"SELECT * FROM (SELECT {i}, alias, canonical, accepted FROM {t} ORDER BY alias, canonical)"
        for i, t in enumerate(tables)
    ]
    try:
        for i, alias, canonical, accepted in conn.execute(" UNION ALL ".join(selects)):
            out[tables[i]].append((alias, canonical, bool(accepted)))
    except apsw.SQLError:  # a read model from before one of them (or a brand-new file mid-open)
        if len(tables) > 1:
            return {t: rows for one in tables for t, rows in _read_aliases(conn, (one,)).items()}
    return out


def changed(conn: apsw.Connection, name: str) -> None:
    """The projector of ``name`` wrote (or dropped) it: the next :func:`memo` reads it again."""
    answers = _answers.get(conn)
    if answers:
        answers.pop(name, None)


def _answers_of(conn: apsw.Connection) -> dict[str, Any]:
    answers = _answers.get(conn)
    if answers is None:
        answers = _answers[conn] = {}
        _clear_when_transactions_end(conn)
    return answers


def _clear_when_transactions_end(conn: apsw.Connection) -> None:
    ref = weakref.ref(conn)  # the hooks must not keep the connection alive

    def clear() -> None:
        live = ref()
        if live is not None and live in _answers:
            _answers[live].clear()

    def on_commit() -> bool:
        clear()
        return False  # a true value would turn the commit into a rollback

    conn.set_rollback_hook(clear)
    conn.set_commit_hook(on_commit)
