"""``changes``: the changes a person applied as units (``ChangeRecorded``) and their undos.

One row per change: what it was (``apply_suggestion`` or ``undo``), the claim set and winner it
settled, the memories it superseded (by stream: an undo reinstates exactly those), and, once
undone, the undo's change id. Folded from the log only, so a rebuild yields the same rows.
"""

from __future__ import annotations

import json
from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import ChangeRecorded, Event
from fact_ledger.projections.memories import memory_id_of
from fact_ledger.projections.rows import typed_row

_SCHEMA = """
CREATE TABLE IF NOT EXISTS changes(
    change_id   TEXT PRIMARY KEY,
    position    INTEGER NOT NULL UNIQUE,
    kind        TEXT NOT NULL,
    suggestion  TEXT NOT NULL,
    conflict    TEXT NOT NULL,
    winner      TEXT,
    superseded  TEXT NOT NULL,
    undoes      TEXT NOT NULL,
    undone_by   TEXT,
    actor       TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    workspace   TEXT NOT NULL
);
"""
COLUMNS = (
    "change_id",
    "position",
    "kind",
    "suggestion",
    "conflict",
    "winner",
    "superseded",
    "undoes",
    "undone_by",
    "actor",
    "recorded_at",
    "workspace",
)


class ChangesProjector:
    name = "changes"
    version = 1
    tables = ("changes",)
    handles = frozenset({"ChangeRecorded"})

    def create(self, conn: apsw.Connection) -> None:
        conn.execute(_SCHEMA)

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS changes")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        assert isinstance(data, ChangeRecorded)
        conn.execute(
            f"INSERT OR IGNORE INTO changes({', '.join(COLUMNS)}) VALUES({', '.join('?' * len(COLUMNS))})",
            (
                data.change,
                event.position,
                data.kind,
                data.suggestion,
                data.conflict,
                data.winner,
                json.dumps(list(data.superseded)),
                data.undoes,
                None,
                event.actor,
                event.recorded_at,
                event.workspace,
            ),
        )
        if data.undoes:
            conn.execute("UPDATE changes SET undone_by=? WHERE change_id=?", (data.change, data.undoes))


class ChangeRow(msgspec.Struct, frozen=True, kw_only=True):
    """A change as ``changes`` holds it: ids are stream ids (``conflict``, ``winner``,
    ``superseded``); ``suggestion`` and ``undoes`` are empty when the change has none."""

    change_id: str
    position: int
    kind: str
    suggestion: str
    conflict: str
    winner: str | None
    superseded: tuple[str, ...]
    undoes: str
    undone_by: str | None
    actor: str
    recorded_at: str
    workspace: str


def _change(values: tuple[Any, ...]) -> ChangeRow:
    return typed_row(ChangeRow, COLUMNS, values, json=("superseded",))


def by_id(conn: apsw.Connection, change_id: str) -> ChangeRow | None:
    row = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM changes WHERE change_id=?", (change_id,)).fetchone()
    return _change(row) if row is not None else None


def recent(conn: apsw.Connection, limit: int, workspaces: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The latest changes, newest first, as views (memory and set ids of this ledger)."""
    where, params = (
        ("", ())
        if workspaces is None
        else (
            f"WHERE workspace IN ({', '.join('?' * len(workspaces))})",
            workspaces,
        )
    )
    rows = conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM changes {where} ORDER BY position DESC LIMIT ?", (*params, limit)
    ).fetchall()
    return [view(conn, _change(r)) for r in rows]


def view(conn: apsw.Connection, row: ChangeRow) -> dict[str, Any]:
    """The change as answers show it: this ledger's memory and set ids instead of streams."""
    cid = conn.execute("SELECT conflict_id FROM conflicts WHERE stream_id=?", (row.conflict,)).fetchone()
    return {
        "change_id": row.change_id,
        "kind": row.kind,
        "position": row.position,
        "suggestion_id": row.suggestion or None,
        "conflict_id": cid[0] if cid else None,
        "winner_id": memory_id_of(conn, row.winner),
        "superseded": [memory_id_of(conn, s) for s in row.superseded],
        "undoes": row.undoes or None,
        "undone_by": row.undone_by,
        "actor": row.actor,
        "recorded_at": row.recorded_at,
    }
