"""Conflicts between memories, their judgments and their state: open → judged → resolved.

A conflict's id is the log position of the ``ClaimCollided`` event that opened it (small,
deterministic under rebuild); payloads name it and its members by stream id. The verdict is
stored as the event recorded it (which rule decided, at that moment); ``conflict_members``
indexes conflicts by memory so a memory view can list its ``conflict_ids`` cheaply.
"""

from __future__ import annotations

import json
from typing import Any

import apsw

from ledger.events import ClaimCollided, ConflictReopened, ConflictResolved, Event, JudgmentSubmitted
from ledger.store import StoredEvent
from projections.memories import memory_id_of

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conflicts(
    conflict_id   INTEGER PRIMARY KEY,
    stream_id     TEXT NOT NULL UNIQUE,
    state         TEXT NOT NULL,
    left_id       INTEGER,
    right_id      INTEGER,
    left_stream   TEXT NOT NULL,
    right_stream  TEXT NOT NULL,
    subject       TEXT NOT NULL,
    attribute     TEXT NOT NULL,
    left_value    TEXT NOT NULL,
    right_value   TEXT NOT NULL,
    verdict       TEXT NOT NULL,
    resolution    TEXT,
    winner_id     INTEGER,
    reason        TEXT NOT NULL,
    opened_at     TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    actor         TEXT NOT NULL,
    last_position INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS conflicts_state ON conflicts(state, conflict_id);
CREATE TABLE IF NOT EXISTS conflict_members(
    memory_id   INTEGER NOT NULL,
    conflict_id INTEGER NOT NULL,
    PRIMARY KEY(memory_id, conflict_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS judgments(
    judgment_id INTEGER PRIMARY KEY,
    conflict_id INTEGER NOT NULL,
    stream_id   TEXT NOT NULL,
    winner_id   INTEGER,
    rationale   TEXT NOT NULL,
    pins        TEXT NOT NULL,
    actor       TEXT NOT NULL,
    recorded_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS judgments_conflict ON judgments(conflict_id);
"""

COLUMNS = ("conflict_id", "stream_id", "state", "left_id", "right_id", "left_stream", "right_stream", "subject",
           "attribute", "left_value", "right_value", "verdict", "resolution", "winner_id", "reason", "opened_at",
           "updated_at", "actor", "last_position")


class ConflictsProjector:
    name = "conflicts"
    version = 1
    tables = ("conflicts", "conflict_members", "judgments")
    handles = frozenset({"ClaimCollided", "JudgmentSubmitted", "ConflictResolved", "ConflictReopened"})

    def create(self, conn: apsw.Connection) -> None:
        conn.execute(_SCHEMA)

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS conflicts; DROP TABLE IF EXISTS conflict_members; "
                     "DROP TABLE IF EXISTS judgments")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if isinstance(data, ClaimCollided):
            self._open(conn, event, data)
            return
        conflict_id = conn.execute("SELECT conflict_id FROM conflicts WHERE stream_id=?",
                                   (data.conflict,)).fetchone()  # type: ignore[attr-defined]
        if conflict_id is None:  # an event about a conflict this ledger never saw
            return
        cid = conflict_id[0]
        if isinstance(data, JudgmentSubmitted):
            pins = {str(memory_id_of(conn, s)): v for s, v in sorted(data.pins.items())}
            conn.execute(
                "INSERT INTO judgments(judgment_id, conflict_id, stream_id, winner_id, rationale, pins, actor, "
                "recorded_at) VALUES(?,?,?,?,?,?,?,?)",
                (event.position, cid, data.judgment, memory_id_of(conn, data.winner), data.rationale,
                 json.dumps(pins, sort_keys=True), event.actor, event.recorded_at))
            self._set(conn, cid, event, state="judged")
        elif isinstance(data, ConflictResolved):
            self._set(conn, cid, event, state="resolved", resolution=data.resolution,
                      winner_id=memory_id_of(conn, data.winner), reason=data.reason)
        elif isinstance(data, ConflictReopened):
            self._set(conn, cid, event, state="open", resolution=None, winner_id=None, reason=data.reason)

    def _open(self, conn: apsw.Connection, event: StoredEvent, data: ClaimCollided) -> None:
        left_id, right_id = memory_id_of(conn, data.left), memory_id_of(conn, data.right)
        conn.execute(
            f"INSERT INTO conflicts({', '.join(COLUMNS)}) VALUES({', '.join('?' * len(COLUMNS))})",
            (event.position, data.conflict, "open", left_id, right_id, data.left, data.right, data.subject,
             data.attribute, data.left_value, data.right_value, json.dumps(data.verdict, sort_keys=True,
                                                                           ensure_ascii=False),
             None, None, "", event.recorded_at, event.recorded_at, event.actor, event.position))
        conn.executemany("INSERT OR IGNORE INTO conflict_members(memory_id, conflict_id) VALUES(?,?)",
                         [(m, event.position) for m in (left_id, right_id) if m is not None])

    def _set(self, conn: apsw.Connection, conflict_id: int, event: StoredEvent, **fields: Any) -> None:
        fields.update(updated_at=event.recorded_at, last_position=event.position)
        assignments = ", ".join(f"{k}=?" for k in fields)
        conn.execute(f"UPDATE conflicts SET {assignments} WHERE conflict_id=?", (*fields.values(), conflict_id))


# -- reads -------------------------------------------------------------------------------------
def load(conn: apsw.Connection, where: str, params: tuple[Any, ...]) -> dict[str, Any] | None:
    row = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM conflicts WHERE {where}", params).fetchone()
    return dict(zip(COLUMNS, row, strict=True)) if row else None


def unresolved_of(conn: apsw.Connection, memory_id: int) -> list[dict[str, Any]]:
    """Open and judged conflicts that ``memory_id`` is a member of, oldest first."""
    cols = ", ".join(f"c.{c}" for c in COLUMNS)
    rows = conn.execute(
        f"SELECT {cols} FROM conflict_members m JOIN conflicts c ON c.conflict_id=m.conflict_id "
        "WHERE m.memory_id=? AND c.state<>'resolved' ORDER BY c.conflict_id", (memory_id,))
    return [dict(zip(COLUMNS, r, strict=True)) for r in rows]


def unresolved_between(conn: apsw.Connection, left_id: int, right_id: int) -> dict[str, Any] | None:
    """The oldest unresolved conflict between two memories (through the member index, no scan)."""
    cols = ", ".join(f"c.{c}" for c in COLUMNS)
    row = conn.execute(
        f"SELECT {cols} FROM conflict_members a JOIN conflict_members b ON b.conflict_id=a.conflict_id "
        "JOIN conflicts c ON c.conflict_id=a.conflict_id WHERE a.memory_id=? AND b.memory_id=? "
        "AND c.state<>'resolved' ORDER BY c.conflict_id LIMIT 1", (left_id, right_id)).fetchone()
    return dict(zip(COLUMNS, row, strict=True)) if row else None


def conflict_ids_of(conn: apsw.Connection, memory_id: int) -> list[int]:
    return [r[0] for r in conn.execute(
        "SELECT c.conflict_id FROM conflict_members m JOIN conflicts c ON c.conflict_id=m.conflict_id "
        "WHERE m.memory_id=? AND c.state<>'resolved' ORDER BY c.conflict_id", (memory_id,))]


def count_by_state(conn: apsw.Connection, workspaces: tuple[str, ...] | None = None) -> dict[str, int]:
    """Conflicts per state; with ``workspaces``, only those whose left member lives there."""
    counts = {"open": 0, "judged": 0, "resolved": 0}
    if workspaces is None:
        rows = conn.execute("SELECT state, count(*) FROM conflicts GROUP BY state")
    else:
        rows = conn.execute(
            "SELECT c.state, count(*) FROM conflicts c JOIN memories m ON m.memory_id = c.left_id "
            f"WHERE m.workspace IN ({', '.join('?' * len(workspaces))}) GROUP BY c.state", workspaces)
    counts.update({s: n for s, n in rows})
    return counts


def judgments_of(conn: apsw.Connection, conflict_id: int) -> list[dict[str, Any]]:
    return [{"judgment_id": jid, "winner_id": winner, "rationale": rationale, "pins": json.loads(pins),
             "actor": actor, "recorded_at": recorded_at}
            for jid, winner, rationale, pins, actor, recorded_at in conn.execute(
                "SELECT judgment_id, winner_id, rationale, pins, actor, recorded_at FROM judgments "
                "WHERE conflict_id=? ORDER BY judgment_id", (conflict_id,))]
