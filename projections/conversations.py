"""Conversations, the working tier and cold memories: read models folded from the log.

- ``conversation_memories``: the conversation (``session_id``) and turn a long-term memory was
  written in, so ``find`` can rank a conversation's memories first and context vectors follow
  the real conversation.
- ``working_memories`` and ``working_signals``: working (session-tier) memories and the
  ``reinforce`` signals they received. A working memory is touched (``touched``: the log
  position) when it is written, repeated, revised or reinforced. The *working set* of a
  conversation is not stored: it is read (:func:`working_set`) as the sticky memories plus the
  most recently touched others up to the configured size, so eviction is a read model over the
  log, never an event, and a changed size needs no rebuild.
- ``cold_memories``: long-term memories a periodic pass cooled (``Cooled``) and that were not
  used since (``Warmed``).

How often a memory is used is deliberately not here (reads write no events): see
``server.app.conversations``.
"""

from __future__ import annotations

import json
from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import (
    Cooled,
    Erased,
    Event,
    MemoryRecorded,
    Promoted,
    Reinforced,
    Warmed,
    WorkingExpired,
    WorkingNoted,
    WorkingRepeated,
    WorkingRevised,
    decode_payload,
)
from fact_ledger.ledger.promotion import Signal
from fact_ledger.ledger.sql import marks
from fact_ledger.projections.memories import Change
from fact_ledger.projections.rows import typed_row
from fact_ledger.projections.runner import DeferringProjector

WORKING = "working"
PROMOTED = "promoted"
EXPIRED = "expired"
ERASED = "erased"

WORKING_COLUMNS = (
    "memory_id",
    "stream_id",
    "session",
    "workspace",
    "content",
    "subject",
    "tags",
    "source_type",
    "confidence",
    "source_ref",
    "metadata",
    "content_hash",
    "sticky",
    "turn",
    "last_turn",
    "touched",
    "state",
    "promoted_to",
    "version",
    "event_time",
    "recorded_at",
    "updated_at",
    "authorization",
    "valid_to",
    "status_reason",
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversation_memories(
    memory_id INTEGER PRIMARY KEY,
    session   TEXT NOT NULL,
    turn      INTEGER,
    workspace TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS conversation_memories_session ON conversation_memories(session, memory_id);
CREATE TABLE IF NOT EXISTS working_memories(
    memory_id    INTEGER PRIMARY KEY,
    stream_id    TEXT NOT NULL UNIQUE,
    session      TEXT NOT NULL,
    workspace    TEXT NOT NULL,
    content      TEXT NOT NULL,
    subject      TEXT NOT NULL,
    tags         TEXT NOT NULL,
    source_type  TEXT NOT NULL,
    confidence   REAL NOT NULL,
    source_ref   TEXT NOT NULL,
    metadata     TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    sticky       INTEGER NOT NULL,
    turn         INTEGER,
    last_turn    INTEGER,
    touched      INTEGER NOT NULL,
    state        TEXT NOT NULL,
    promoted_to  TEXT,
    version      INTEGER NOT NULL,
    event_time   TEXT NOT NULL,
    recorded_at  TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    authorization TEXT NOT NULL,
    valid_to     TEXT,
    status_reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS working_memories_set ON working_memories(session, state, sticky, touched);
CREATE INDEX IF NOT EXISTS working_memories_promoted ON working_memories(promoted_to) WHERE promoted_to IS NOT NULL;
CREATE TABLE IF NOT EXISTS working_signals(
    memory_id INTEGER NOT NULL,
    position  INTEGER NOT NULL,
    signal    TEXT NOT NULL,
    turn      INTEGER,
    PRIMARY KEY(memory_id, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cold_memories(
    memory_id INTEGER PRIMARY KEY,
    since     INTEGER NOT NULL,
    idle_days INTEGER NOT NULL
);
"""

_INSERT_CONVERSATION = "INSERT INTO conversation_memories(memory_id, session, turn, workspace) VALUES(?,?,?,?)"
_INSERT_WORKING = f"INSERT INTO working_memories({', '.join(WORKING_COLUMNS)}) VALUES({marks(len(WORKING_COLUMNS))})"


def _working_id(conn: apsw.Connection, stream_id: str) -> int | None:
    row = conn.execute("SELECT memory_id FROM working_memories WHERE stream_id=?", (stream_id,)).fetchone()
    return row[0] if row else None


class ConversationsProjector(DeferringProjector):
    name = "conversations"
    # 2: an erased working note is erased (it stayed a working note anyone could promote);
    # 3: its erasure is a version, as a long-term memory's is (read and history agree);
    # 4: it keeps the erasure's time as ``valid_to``, as an erased long-term memory does;
    # 5: and the erasure's reason as ``status_reason``, as an erased long-term memory does
    version = 5
    tables = ("conversation_memories", "working_memories", "working_signals", "cold_memories")
    handles = frozenset(
        {
            "MemoryRecorded",
            "WorkingNoted",
            "WorkingRepeated",
            "WorkingRevised",
            "Reinforced",
            "Promoted",
            "WorkingExpired",
            "Cooled",
            "Warmed",
            "Erased",
        }
    )

    deferrable = frozenset({"MemoryRecorded", "WorkingNoted"})  # creations read nothing

    def create(self, conn: apsw.Connection) -> None:
        self._pending = None
        conn.execute(_SCHEMA)

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("".join(f"DROP TABLE IF EXISTS {t};" for t in self.tables))

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if isinstance(data, MemoryRecorded):
            if data.session:
                self._add(conn, _INSERT_CONVERSATION, (event.position, data.session, data.turn, event.workspace))
        elif isinstance(data, WorkingNoted):
            self._add(conn, _INSERT_WORKING, _note_row(event, data))
        elif isinstance(data, WorkingExpired):
            conn.execute(
                "UPDATE working_memories SET state=?, updated_at=? WHERE session=? AND workspace=? AND state=?",
                (EXPIRED, event.recorded_at, data.session, event.workspace, WORKING),
            )
        elif isinstance(data, Erased):
            conn.execute(
                "UPDATE working_memories SET state=?, updated_at=?, version=version+1, valid_to=?, status_reason=?"
                " WHERE stream_id=?",
                (ERASED, event.recorded_at, event.event_time, data.reason, data.memory),
            )
        elif isinstance(data, Cooled | Warmed):
            memory_id = conn.execute("SELECT memory_id FROM memories WHERE stream_id=?", (data.memory,)).fetchone()
            if memory_id is None:
                return
            if isinstance(data, Cooled):
                conn.execute(
                    "INSERT OR REPLACE INTO cold_memories(memory_id, since, idle_days) VALUES(?,?,?)",
                    (memory_id[0], event.position, data.idle_days),
                )
            else:
                conn.execute("DELETE FROM cold_memories WHERE memory_id=?", (memory_id[0],))
        else:
            _working_change(conn, event, data)

    def _add(self, conn: apsw.Connection, sql: str, values: tuple[Any, ...]) -> None:
        if self._pending is not None:
            self._pending.add(sql, values)
        else:
            conn.execute(sql, values)


def _note_row(event: StoredEvent, data: WorkingNoted) -> tuple[Any, ...]:
    row = {
        "memory_id": event.position,
        "stream_id": data.memory,
        "session": data.session,
        "workspace": event.workspace,
        "content": data.content,
        "subject": data.subject,
        "tags": json.dumps(list(data.tags), ensure_ascii=False),
        "source_type": data.source_type,
        "confidence": data.confidence,
        "source_ref": data.source_ref,
        "metadata": json.dumps(data.metadata, ensure_ascii=False, sort_keys=True),
        "content_hash": data.content_hash,
        "sticky": int(data.sticky),
        "turn": data.turn,
        "last_turn": data.turn,
        "touched": event.position,
        "state": WORKING,
        "promoted_to": None,
        "version": 1,
        "event_time": event.event_time,
        "recorded_at": event.recorded_at,
        "updated_at": event.recorded_at,
        "authorization": data.authorization,
        "valid_to": None,
        "status_reason": "",
    }
    return tuple(row[c] for c in WORKING_COLUMNS)


def _working_change(conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
    """A repeat, a revision, a signal or the promotion of a working memory: each one touches it."""
    stream = getattr(data, "memory", "")
    memory_id = _working_id(conn, stream)
    if memory_id is None:  # an event about a memory this ledger never saw: nothing to fold
        return
    turn = getattr(data, "turn", None)
    changes: dict[str, Any] = {"touched": event.position, "updated_at": event.recorded_at}
    if turn is not None:
        changes["last_turn"] = turn
    if isinstance(data, WorkingRevised):
        for field in ("content", "subject", "confidence", "content_hash"):
            if getattr(data, field) is not None:
                changes[field] = getattr(data, field)
        if data.tags is not None:
            changes["tags"] = json.dumps(list(data.tags), ensure_ascii=False)
        if data.metadata is not None:
            changes["metadata"] = json.dumps(data.metadata, ensure_ascii=False, sort_keys=True)
        conn.execute("UPDATE working_memories SET version=version+1 WHERE memory_id=?", (memory_id,))
    elif isinstance(data, Reinforced):
        conn.execute(
            "INSERT INTO working_signals(memory_id, position, signal, turn) VALUES(?,?,?,?)",
            (memory_id, event.position, data.signal, data.turn),
        )
    elif isinstance(data, Promoted):
        changes.update(state=PROMOTED, promoted_to=data.long_term)
    elif not isinstance(data, WorkingRepeated):
        return
    assignments = ", ".join(f"{c}=?" for c in changes)
    conn.execute(f"UPDATE working_memories SET {assignments} WHERE memory_id=?", (*changes.values(), memory_id))


# -- reads ------------------------------------------------------------------------------------
class WorkingNote(msgspec.Struct, frozen=True, kw_only=True):
    """A working (session-tier) memory as ``working_memories`` holds it, JSON decoded once.

    ``touched``: the log position of its last write, repeat, revision or signal; ``state``:
    ``working``, ``promoted`` (``promoted_to``: the long-term memory's stream) or ``expired``.
    """

    memory_id: int
    stream_id: str
    session: str
    workspace: str
    content: str
    subject: str
    tags: tuple[str, ...]
    source_type: str
    confidence: float
    source_ref: str
    metadata: dict[str, Any]
    content_hash: str
    sticky: bool
    turn: int | None
    last_turn: int | None
    touched: int
    state: str
    promoted_to: str | None
    version: int
    event_time: str
    recorded_at: str
    updated_at: str
    authorization: str
    valid_to: str | None  # an erased note's: the erasure's time, as an erased long-term memory's
    status_reason: str  # an erased note's: the erasure's reason, as an erased long-term memory's


def _note(values: tuple[Any, ...]) -> WorkingNote:
    return typed_row(WorkingNote, WORKING_COLUMNS, values, json=("tags", "metadata"))


def _rows(cursor: Any) -> list[WorkingNote]:
    return [_note(r) for r in cursor]


def working_by_id(conn: apsw.Connection, memory_id: int) -> WorkingNote | None:
    rows = _rows(
        conn.execute(f"SELECT {', '.join(WORKING_COLUMNS)} FROM working_memories WHERE memory_id=?", (memory_id,))
    )
    return rows[0] if rows else None


def working_set(
    conn: apsw.Connection, session: str, workspaces: tuple[str, ...] | None, size: int
) -> list[WorkingNote]:
    """The conversation's working set, most recently touched first: every sticky working memory,
    and the most recently touched others while the set holds fewer than ``size``."""
    where = f"session=? AND state='{WORKING}'"
    params: list[Any] = [session]
    if workspaces is not None:
        where += f" AND workspace IN ({marks(len(workspaces))})"
        params.extend(workspaces)
    cols = ", ".join(WORKING_COLUMNS)
    sticky = _rows(conn.execute(f"SELECT {cols} FROM working_memories WHERE {where} AND sticky=1", params))
    others = _rows(
        conn.execute(
            f"SELECT {cols} FROM working_memories WHERE {where} AND sticky=0 ORDER BY touched DESC LIMIT ?",
            (*params, max(size - len(sticky), 0)),
        )
    )
    return sorted(sticky + others, key=lambda r: r.touched, reverse=True) if sticky else others


_REVISED = ("content", "subject", "tags", "confidence", "metadata")  # what a WorkingRevised may change


def revisions_after(conn: apsw.Connection, stream_id: str, position: int) -> list[Change]:
    """Each revision of a working note made past log ``position`` (oldest first), with the fields
    it changed and its event's own time, as :func:`projections.memories.changes_after` answers
    for a long-term memory: the note is version 1 and each ``WorkingRevised`` the next."""
    rows: list[tuple[Any, ...]] = conn.execute(
        "SELECT position, event_id, event_time, payload, v FROM events WHERE stream_id=? AND type='WorkingRevised' "
        "ORDER BY position",
        (stream_id,),
    ).fetchall()
    out: list[Change] = []
    for version, (at, event_id, event_time, payload, v) in enumerate(rows, start=2):
        if at > position:
            data = decode_payload("WorkingRevised", v, payload)
            changed = frozenset(f for f in _REVISED if getattr(data, f, None) is not None)
            out.append(Change(version, int(at), str(event_id), str(event_time), changed))
    return out


def signals_of(conn: apsw.Connection, memory_id: int) -> list[Signal]:
    """The memory's ``reinforce`` signals in log order."""
    return [
        Signal(signal, turn)
        for signal, turn in conn.execute(
            "SELECT signal, turn FROM working_signals WHERE memory_id=? ORDER BY position", (memory_id,)
        )
    ]


def sessions_of(conn: apsw.Connection, memory_ids: list[int]) -> dict[int, tuple[str, int | None]]:
    """memory id → (conversation, turn) for the long-term memories of ``memory_ids`` that have one."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        "SELECT c.memory_id, c.session, c.turn FROM json_each(?) j "
        "CROSS JOIN conversation_memories c ON c.memory_id = j.value",
        (json.dumps(memory_ids),),
    )
    return {memory_id: (session, turn) for memory_id, session, turn in rows}


def promoted_from(conn: apsw.Connection, long_term_stream: str) -> int | None:
    """The working memory whose promotion recorded this long-term memory, if one did."""
    row = conn.execute("SELECT memory_id FROM working_memories WHERE promoted_to=?", (long_term_stream,)).fetchone()
    return row[0] if row else None


def idle_sessions(conn: apsw.Connection, cutoff: str) -> list[tuple[str, str, str]]:
    """``(session, workspace, last activity)`` of conversations with working memories whose last
    touch was recorded before ``cutoff``."""
    rows = conn.execute(
        "SELECT session, workspace, max(updated_at) AS last FROM working_memories WHERE state=? "
        "GROUP BY session, workspace HAVING last < ? ORDER BY session, workspace",
        (WORKING, cutoff),
    )
    return [(str(session), str(workspace), str(last)) for session, workspace, last in rows]


def cold_ids(conn: apsw.Connection, memory_ids: list[int]) -> set[int]:
    """Which of ``memory_ids`` are cold."""
    if not memory_ids:
        return set()
    return {
        r[0]
        for r in conn.execute(
            "SELECT c.memory_id FROM json_each(?) j CROSS JOIN cold_memories c ON c.memory_id = j.value",
            (json.dumps(memory_ids),),
        )
    }


def count_cold(conn: apsw.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM cold_memories").get)
