"""The timeline's rows: how a memory's states and text versions are written, inline and in bulk
during a rebuild (:class:`Rebuild`). The fold that decides which rows an event adds is
:mod:`projections.timeline.projector`."""

from __future__ import annotations

from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import (
    MemoryRecorded,
)
from fact_ledger.ledger.sql import marks
from fact_ledger.ledger.text import index_text
from fact_ledger.projections.memories import normalize_subject
from fact_ledger.projections.runner import DeferredRows

STATE_COLUMNS = (
    "state_id",
    "memory_id",
    "known_from",
    "known_to",
    "version",
    "valid_from",
    "valid_to",
    "status",
    "ended",
    "superseded_by",
    "text_id",
    "source_type",
    "confidence",
    "protection",
    "workspace",
    "source_ref",
    "metadata",
)
TEXT_COLUMNS = ("subject", "content", "tags")
_encode = msgspec.json.Encoder(order="deterministic").encode


LINKS_HEAD = "INSERT OR IGNORE INTO tt_links(memory_id, position, role)"
INSERTS = {
    "tt_marks": "INSERT INTO tt_marks(hwm, position) VALUES(?, ?)",
    "tt_texts": "INSERT INTO tt_texts(text_id, position, memory_id, subject, subject_norm, content, tags) "
    "VALUES(?,?,?,?,?,?,?)",
    "tt_fts": "INSERT INTO tt_fts(rowid, subject, body, tags) VALUES(?,?,?,?)",
    "tt_states": f"INSERT INTO tt_states({', '.join(STATE_COLUMNS)}) VALUES({marks(len(STATE_COLUMNS))})",
    "tt_memories": "INSERT INTO tt_memories(memory_id, stream_id, recorded_at, version, state_id) VALUES(?,?,?,?,?)",
    "tt_links": f"{LINKS_HEAD} VALUES(?,?,?)",
}


class Rebuild:
    """What a rebuild keeps in memory instead of asking the tables on every event.

    Creations are folded into ``rows`` with text and state ids counted here (the next ids after
    what the tables hold, as the inline path takes them).
    """

    def __init__(self) -> None:
        self.hwm: str | None = None  # the highest recorded_at so far (the last tt_marks row)
        self.memory_ids: dict[str, int] = {}  # tt_memories: stream_id -> memory_id
        self.rows = DeferredRows()
        self.next_ids: tuple[int, int] | None = None  # (text_id, state_id) the next rows get

    def create(self, conn: apsw.Connection, event: StoredEvent, data: MemoryRecorded) -> None:
        if self.next_ids is None:  # rows written by the inline path since the last flush
            self.next_ids = next_ids(conn)
        text_id, state_id = self.next_ids
        self.next_ids = (text_id + 1, state_id + 1)
        for table, row in creation_rows(event, data, text_id, state_id).items():
            self.rows.add(INSERTS[table], row)
        self.memory_ids[data.memory] = event.position

    def flush(self, conn: apsw.Connection) -> None:
        self.rows.flush(conn)
        self.next_ids = None


def next_id(conn: apsw.Connection, table: str, column: str) -> int:
    return conn.execute(f"SELECT coalesce(max({column}), 0) + 1 FROM {table}").fetchone()[0]


def next_ids(conn: apsw.Connection) -> tuple[int, int]:
    """The next text id and state id, in one statement."""
    text_id, state_id = conn.execute(
        "SELECT (SELECT coalesce(max(text_id), 0) + 1 FROM tt_texts), "
        "(SELECT coalesce(max(state_id), 0) + 1 FROM tt_states)"
    ).fetchone()
    return text_id, state_id


# -- fold helpers ----------------------------------------------------------------------------
def json_text(value: Any) -> str:
    """Canonical JSON text (sorted keys, UTF-8): equal values give equal bytes on every fold."""
    return _encode(value).decode()


def _text_rows(
    text_id: int, position: int, memory_id: int, subject: str, content: str, tags: list[str]
) -> dict[str, tuple[Any, ...]]:
    """A text version's rows; ids grow with the log, so texts known at P are exactly ids <= a bound."""
    return {
        "tt_texts": (text_id, position, memory_id, subject, normalize_subject(subject), content, json_text(tags)),
        "tt_fts": (text_id, index_text(subject), index_text(content), index_text(" ".join(tags))),
    }


def creation_rows(event: StoredEvent, data: MemoryRecorded, text_id: int, state_id: int) -> dict[str, tuple[Any, ...]]:
    """The rows a new memory adds (its links and mark aside), with the text and state ids given."""
    memory_id = event.position
    first_state = (
        state_id,
        memory_id,
        event.position,
        None,
        1,
        event.event_time,
        None,
        "active",
        None,
        None,
        text_id,
        data.source_type,
        data.confidence,
        data.protection,
        event.workspace,
        data.source_ref,
        json_text(data.metadata),
    )  # in STATE_COLUMNS order
    return {
        **_text_rows(text_id, event.position, memory_id, data.subject, data.content, list(data.tags)),
        "tt_states": first_state,
        "tt_memories": (memory_id, data.memory, event.recorded_at, 1, state_id),
    }


def write_rows(conn: apsw.Connection, rows: dict[str, tuple[Any, ...]]) -> None:
    for table, row in rows.items():
        conn.execute(INSERTS[table], row)


def new_text(conn: apsw.Connection, position: int, memory_id: int, subject: str, content: str, tags: list[str]) -> int:
    text_id = next_id(conn, "tt_texts", "text_id")
    write_rows(conn, _text_rows(text_id, position, memory_id, subject, content, tags))
    return text_id


def insert_state(conn: apsw.Connection, state: dict[str, Any]) -> int:
    state_id = next_id(conn, "tt_states", "state_id")
    conn.execute(INSERTS["tt_states"], (state_id, *(state[c] for c in STATE_COLUMNS[1:])))
    return state_id
