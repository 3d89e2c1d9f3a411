"""The log as the audit and history views read it: events by filter, and a memory's events.

Events are read straight from the ``events`` table, joined to the timeline's ``tt_links``
(which event touched which memory) so that a memory's events are an index lookup rather than a
scan of the log. Filters arrive as an :class:`AuditQuery`, never as SQL.
"""

from __future__ import annotations

from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.sql import marks

_FIELDS = tuple(StoredEvent.__struct_fields__)
_COLUMNS = ", ".join("e." + c for c in _FIELDS)


class AuditQuery(msgspec.Struct, kw_only=True):
    """Which events an audit page shows; every field left None does not filter."""

    before: int | None = None  # keyset cursor: positions below this
    since: str | None = None  # canonical recorded_at bounds, inclusive
    until: str | None = None
    actor: str | None = None
    client: str | None = None  # an actor "client" or "client:<agent id>"
    workspace: str | None = None
    before_position: int | None = None  # the log ends here (an as-of view)
    types: tuple[str, ...] | None = None  # stored type names
    stream_id: str | None = None
    workspaces: tuple[str, ...] | None = None  # visible workspaces (strict isolation)
    memory_id: int | None = None  # events linked to this memory


def _stored(row: Any) -> StoredEvent:
    return StoredEvent(**dict(zip(_FIELDS, row, strict=True)))


def _where(q: AuditQuery) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for column, op, value in (
        ("e.position", "<", q.before),
        ("e.recorded_at", ">=", q.since),
        ("e.recorded_at", "<=", q.until),
        ("e.workspace", "=", q.workspace),
        ("e.position", "<", q.before_position),
    ):
        if value is not None:
            clauses.append(f"{column} {op} ?")
            params.append(value)
    if q.types is not None:
        clauses.append(f"e.type IN ({marks(len(q.types))})")
        params.extend(q.types)
    # An actor without its agent id ("cursor") is the client: every agent of it ("cursor:agent-2").
    for name, whole in ((q.actor, q.actor is not None and ":" in q.actor), (q.client, False)):
        if name is None:
            continue
        if whole:
            clauses.append("e.actor = ?")
            params.append(name)
        else:
            clauses.append("(e.actor = ? OR e.actor LIKE ? ESCAPE '\\')")
            params.extend([name, name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ":%"])
    if q.stream_id is not None:
        clauses.append("e.stream_id = ?")
        params.append(q.stream_id)
    if q.workspaces is not None:
        clauses.append(f"e.workspace IN ({marks(len(q.workspaces))})")
        params.extend(q.workspaces)
    return " AND ".join(clauses) or "1", params


def audit_events(conn: apsw.Connection, q: AuditQuery, limit: int) -> list[StoredEvent]:
    """Up to ``limit`` matching events, newest first."""
    where, params = _where(q)
    if q.memory_id is not None:
        rows = conn.execute(
            f"SELECT DISTINCT {_COLUMNS} FROM tt_links l JOIN events e ON e.position = l.position "
            f"WHERE l.memory_id = ? AND {where} ORDER BY e.position DESC LIMIT ?",
            (q.memory_id, *params, limit),
        )
    else:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM events e WHERE {where} ORDER BY e.position DESC LIMIT ?", (*params, limit)
        )
    return [_stored(r) for r in rows]


def stream_events(conn: apsw.Connection, stream_id: str) -> list[StoredEvent]:
    """Every event of one stream in its order: a working note's whole story, however often it
    was repeated (the stream's unique (stream_id, stream_version) index serves it)."""
    return [
        _stored(row)
        for row in conn.execute(
            f"SELECT {_COLUMNS} FROM events e WHERE e.stream_id = ? ORDER BY e.stream_version", (stream_id,)
        )
    ]


def memory_events(conn: apsw.Connection, memory_id: int) -> list[tuple[str, StoredEvent]]:
    """``(role, event)`` for every event that touched the memory, in log order."""
    return [
        (role, _stored(row))
        for role, *row in conn.execute(
            f"SELECT l.role, {_COLUMNS} FROM tt_links l JOIN events e ON e.position = l.position "
            "WHERE l.memory_id=? ORDER BY l.position",
            (memory_id,),
        )
    ]


def state_positions(conn: apsw.Connection, memory_id: int) -> list[int]:
    """The log positions at which the memory's recorded state changed, oldest first."""
    return [
        p
        for (p,) in conn.execute("SELECT known_from FROM tt_states WHERE memory_id=? ORDER BY known_from", (memory_id,))
    ]


def stream_owner(conn: apsw.Connection, stream_id: str) -> tuple[str, int] | None:
    """Which memory (long-term or a working note), conflict or judgment a stream belongs to:
    ``(id column, id)``, or None."""
    for table, column in (
        ("memories", "memory_id"),
        ("working_memories", "memory_id"),
        ("conflicts", "conflict_id"),
        ("judgments", "judgment_id"),
    ):
        row = conn.execute(f"SELECT {column} FROM {table} WHERE stream_id=?", (stream_id,)).fetchone()
        if row is not None:
            return column, row[0]
    return None
