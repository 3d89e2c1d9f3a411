"""Current memories and their version snapshots.

``memories`` holds one row per memory in its latest state; ``memory_versions`` holds one row
per state change (the basis of ``history`` and of "what did the ledger know at R").
A memory's integer id is the log position of the event that created it: deterministic under
rebuild, and small enough for an agent to quote.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.duplicates import DUPLICATE_STATUS, DuplicateKey
from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import (
    Confirmed,
    DuplicateSighted,
    Erased,
    Event,
    MemoryArchived,
    MemoryRecorded,
    MemoryRetired,
    MemoryUnlocked,
    MemoryUpdated,
    Reinstated,
    Restated,
    Superseded,
    decode_payload,
)
from fact_ledger.ledger.normalize import normalize_text
from fact_ledger.ledger.retention import ARCHIVABLE_STATUSES, ArchiveCandidate
from fact_ledger.ledger.sql import marks
from fact_ledger.ledger.validity import CHAIN_LIMIT, chain_ends, not_before
from fact_ledger.projections.memory_row import JSON_COLUMNS, CurrentMemory
from fact_ledger.projections.rows import typed_row
from fact_ledger.projections.runner import DeferringProjector

COLUMNS = (
    "memory_id",
    "stream_id",
    "subject",
    "subject_norm",
    "content",
    "tags",
    "source_type",
    "confidence",
    "protection",
    "status",
    "event_time",
    "recorded_at",
    "updated_at",
    "version",
    "workspace",
    "source_ref",
    "metadata",
    "content_hash",
    "confirmed_via",
    "derived_from",
    "superseded_by",
    "retired_by",
    "status_reason",
    "valid_to",
    "sightings",
    "last_position",
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories(
    memory_id     INTEGER PRIMARY KEY,
    stream_id     TEXT NOT NULL UNIQUE,
    subject       TEXT NOT NULL,
    subject_norm  TEXT NOT NULL,
    content       TEXT NOT NULL,
    tags          TEXT NOT NULL,
    source_type   TEXT NOT NULL,
    confidence    REAL NOT NULL,
    protection    TEXT NOT NULL,
    status        TEXT NOT NULL,
    event_time    TEXT NOT NULL,
    recorded_at   TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    version       INTEGER NOT NULL,
    workspace     TEXT NOT NULL,
    source_ref    TEXT NOT NULL,
    metadata      TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    confirmed_via TEXT NOT NULL,
    derived_from  INTEGER,
    superseded_by INTEGER,
    retired_by    INTEGER,
    status_reason TEXT NOT NULL,
    valid_to      TEXT,
    sightings     INTEGER NOT NULL,
    last_position INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_versions(
    memory_id   INTEGER NOT NULL,
    version     INTEGER NOT NULL,
    position    INTEGER NOT NULL,
    event_type  TEXT NOT NULL,
    actor       TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    event_time  TEXT NOT NULL,
    content     TEXT NOT NULL,
    subject     TEXT NOT NULL,
    tags        TEXT NOT NULL,
    source_type TEXT NOT NULL,
    confidence  REAL NOT NULL,
    protection  TEXT NOT NULL,
    status      TEXT NOT NULL,
    workspace   TEXT NOT NULL,
    superseded_by INTEGER,
    PRIMARY KEY(memory_id, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memory_restatements(
    memory_id   INTEGER NOT NULL,
    position    INTEGER NOT NULL,
    event_time  TEXT NOT NULL,
    source_type TEXT NOT NULL,
    PRIMARY KEY(memory_id, position)
) WITHOUT ROWID;
"""

# Secondary indexes, kept up to date during a rebuild as well. Built at its end by CREATE INDEX
# they came out with every page full, so each of the next thousands of writes split pages
# (~4.5 pages written per insert instead of 1 at 100k memories); maintained row by row inside
# the rebuild's large page cache they also cost less than the sorts did.
_INDEXES = {
    "memories_dup": "memories(content_hash, workspace, subject_norm) WHERE status='active'",
    "memories_status_time": "memories(status, event_time)",
    # The overview's counts read this index alone, in its order (no row, no sort): 100k memories
    # count in milliseconds instead of reading every row's content.
    "memories_counts": "memories(status, workspace, source_type, confirmed_via)",
    "memories_subject": "memories(subject_norm)",
    "memories_superseded_by": "memories(superseded_by) WHERE superseded_by IS NOT NULL",
    "memories_retired_by": "memories(retired_by) WHERE retired_by IS NOT NULL",  # what a retraction retired
    "memory_versions_position": "memory_versions(position)",
}
_CREATE_INDEXES = "".join(f"CREATE INDEX IF NOT EXISTS {n} ON {on};" for n, on in _INDEXES.items())

# Subjects repeat across memories (a person, a project) and both this projection and the
# timeline normalise each one: keep the recent results (normalize_text is pure).
normalize_subject = lru_cache(maxsize=4096)(normalize_text)

_INSERT_MEMORY = f"INSERT INTO memories({', '.join(COLUMNS)}) VALUES({marks(len(COLUMNS))})"
_INSERT_VERSION = (
    "INSERT INTO memory_versions(memory_id, version, position, event_type, actor, recorded_at, event_time, "
    "content, subject, tags, source_type, confidence, protection, status, workspace, superseded_by) "
    "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)

_STATE_EVENTS = (
    MemoryUpdated,
    Confirmed,
    MemoryUnlocked,
    MemoryRetired,
    MemoryArchived,
    Superseded,
    Reinstated,
    Erased,
)


def memory_ids_of(conn: apsw.Connection, stream_ids: Iterable[str | None]) -> dict[str, int]:
    """:func:`memory_id_of` for several streams in one statement (those with no memory are absent)."""
    wanted = sorted({s for s in stream_ids if s})
    if not wanted:
        return {}
    return dict(
        conn.execute(f"SELECT stream_id, memory_id FROM memories WHERE stream_id IN ({marks(len(wanted))})", wanted)
    )


def memory_id_of(conn: apsw.Connection, stream_id: str | None) -> int | None:
    if not stream_id:
        return None
    row = conn.execute("SELECT memory_id FROM memories WHERE stream_id=?", (stream_id,)).fetchone()
    return row[0] if row else None


def _select(conn: apsw.Connection, where: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM memories WHERE {where}", params
    ).fetchone()
    return row


def _current(values: tuple[Any, ...]) -> CurrentMemory:
    return typed_row(CurrentMemory, COLUMNS, values, json=JSON_COLUMNS)


def _load(conn: apsw.Connection, where: str, params: tuple[Any, ...]) -> CurrentMemory | None:
    row = _select(conn, where, params)
    return _current(row) if row else None


def by_id(conn: apsw.Connection, memory_id: int) -> CurrentMemory | None:
    """The memory's current row, or None."""
    return _load(conn, "memory_id=?", (memory_id,))


def by_ids(conn: apsw.Connection, memory_ids: list[int]) -> dict[int, CurrentMemory]:
    """The current rows of ``memory_ids`` that exist, by id (one statement for a page of results)."""
    rows = conn.execute(
        f"SELECT {', '.join('m.' + c for c in COLUMNS)} FROM json_each(?) j CROSS JOIN memories m "
        "ON m.memory_id = j.value",
        (json.dumps(memory_ids),),
    )
    return {row[0]: _current(row) for row in rows}


def by_stream(conn: apsw.Connection, stream_id: str) -> CurrentMemory | None:
    return _load(conn, "stream_id=?", (stream_id,))


def exact_duplicate(conn: apsw.Connection, key: DuplicateKey) -> CurrentMemory | None:
    """The memory that a new one with ``key`` would repeat (``ledger.duplicates``), or None."""
    return _load(
        conn,
        "content_hash=? AND workspace=? AND subject_norm=? AND status=?",
        (key.content_hash, key.workspace, key.subject_norm, DUPLICATE_STATUS),
    )


class Change(msgspec.Struct, frozen=True):
    """One version of a memory made past a log position: the fields it changed, and when."""

    version: int
    position: int
    event_id: str
    event_time: str
    fields: frozenset[str]


_CHANGED = ("content", "subject", "tags", "source_type", "confidence", "protection", "event_time")


def changes_after(conn: apsw.Connection, memory_id: int, position: int) -> list[Change]:
    """Each version of the memory made past log ``position`` (oldest first), with the fields it
    changed from the version before and its event's own time: what a writer that read the log up
    to there did not see. ``metadata``, which the versions do not keep, is read from the
    version's own ``MemoryUpdated`` (it carries the field exactly when it changed it)."""
    rows: list[tuple[Any, ...]] = conn.execute(
        "SELECT v.version, v.position, e.event_id, e.event_time, e.type, e.v, e.payload, "
        f"{', '.join('v.' + c for c in _CHANGED)} "
        "FROM memory_versions v JOIN events e ON e.position = v.position WHERE v.memory_id=? ORDER BY v.version",
        (memory_id,),
    ).fetchall()
    out: list[Change] = []
    before: list[Any] | None = None
    for version, at, event_id, event_time, type_, v, payload, *values in rows:
        if before is not None and at > position:
            changed = {c for c, old, new in zip(_CHANGED, before, values, strict=True) if old != new}
            data = decode_payload(type_, v, payload)
            if isinstance(data, MemoryUpdated) and data.metadata is not None:
                changed.add("metadata")
            out.append(Change(int(version), int(at), str(event_id), str(event_time), frozenset(changed)))
        before = values
    return out


def supersedes(conn: apsw.Connection, memory_id: int) -> list[int]:
    """The memories that ``memory_id`` superseded, oldest first."""
    return [
        r[0]
        for r in conn.execute("SELECT memory_id FROM memories WHERE superseded_by=? ORDER BY memory_id", (memory_id,))
    ]


def retracts(conn: apsw.Connection, memory_id: int) -> list[int]:
    """The memories that ``memory_id`` retired by retracting them, oldest first."""
    return [
        r[0] for r in conn.execute("SELECT memory_id FROM memories WHERE retired_by=? ORDER BY memory_id", (memory_id,))
    ]


def stream_of(conn: apsw.Connection, memory_id: int) -> str | None:
    stream: str | None = conn.execute("SELECT stream_id FROM memories WHERE memory_id=?", (memory_id,)).get
    return stream


def streams_of(conn: apsw.Connection, memory_ids: list[int]) -> dict[int, str]:
    """memory id → stream id for those of ``memory_ids`` that exist."""
    if not memory_ids:
        return {}
    return dict(
        conn.execute(
            f"SELECT memory_id, stream_id FROM memories WHERE memory_id IN ({marks(len(memory_ids))})",
            tuple(memory_ids),
        )
    )


def count_active(conn: apsw.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM memories WHERE status='active'").get)


_ARCHIVABLE = f"status IN ({marks(len(ARCHIVABLE_STATUSES))}) AND updated_at < ?"


def count_archivable(conn: apsw.Connection, cutoff: str) -> int:
    """How many memories ``ledger.retention`` would archive at ``cutoff``."""
    return int(conn.execute(f"SELECT count(*) FROM memories WHERE {_ARCHIVABLE}", (*ARCHIVABLE_STATUSES, cutoff)).get)


def archivable(conn: apsw.Connection, cutoff: str, *, after: int = 0, limit: int = -1) -> list[ArchiveCandidate]:
    """Archive candidates with ids above ``after``, in id order (``limit`` of them)."""
    return [
        ArchiveCandidate(*r)
        for r in conn.execute(
            f"SELECT memory_id, stream_id, workspace, status, updated_at FROM memories WHERE {_ARCHIVABLE} "
            "AND memory_id > ? ORDER BY memory_id LIMIT ?",
            (*ARCHIVABLE_STATUSES, cutoff, after, limit),
        )
    ]


def load_many(conn: apsw.Connection, memory_ids: list[int]) -> dict[int, CurrentMemory]:
    """Rows of several memories in one query (ids that do not exist are absent)."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM memories WHERE memory_id IN ({marks(len(memory_ids))})", memory_ids
    )
    return {r[0]: _current(r) for r in rows}


def _scope_sql(scope: tuple[str, ...] | None) -> tuple[str, tuple[str, ...]]:
    if scope is None:
        return "", ()
    return f" AND workspace IN ({marks(len(scope))})", scope


def status_counts(conn: apsw.Connection, scope: tuple[str, ...] | None = None) -> dict[str, int]:
    """How many memories are in each status (within ``scope``'s workspaces when given)."""
    where, params = _scope_sql(scope)
    return {
        status: n
        for status, n in conn.execute(
            f"SELECT status, count(*) FROM memories WHERE 1{where} GROUP BY status ORDER BY status", params
        )
    }


def support(conn: apsw.Connection, memory_id: int) -> tuple[int, str | None]:
    """How many times the memory's fact was stated (itself, its exact duplicates and its
    restatements) and the latest event time a restatement or a word-for-word repeat gave it
    (None: never stated again). A repeat's time is its ``DuplicateSighted`` event's, in the log's
    copy beside the read models."""
    row = conn.execute(
        "SELECT m.sightings, max("
        "coalesce((SELECT max(event_time) FROM memory_restatements r WHERE r.memory_id=m.memory_id), ''), "
        "coalesce((SELECT max(e.event_time) FROM events e "
        "WHERE e.stream_id=m.stream_id AND e.type='DuplicateSighted'), '')) "
        "FROM memories m WHERE memory_id=?",
        (memory_id,),
    ).fetchone()
    return (1 + row[0], row[1] or None) if row else (0, None)


def active_counts(conn: apsw.Connection, scope: tuple[str, ...] | None = None) -> list[tuple[str, str, str, int]]:
    """``(workspace, source_type, confirmed_via, count)`` over active memories, one covering-index walk."""
    where, params = _scope_sql(scope)
    rows = conn.execute(
        "SELECT workspace, source_type, confirmed_via, count(*) FROM memories "
        f"WHERE status='active'{where} GROUP BY workspace, source_type, confirmed_via",
        params,
    )
    return [(str(workspace), str(source), str(via), int(n)) for workspace, source, via, n in rows]


class MemoriesProjector(DeferringProjector):
    name = "memories"
    # 2: the memories_retired_by index; 3: restatements (ledger.restatement); 4: a superseded
    # memory ends where the next value of its chain took over (ledger.validity)
    version = 6  # 5: an end before the start is an empty interval (ledger.validity.not_before);
    # 6: an erased memory keeps the end it had
    tables = ("memories", "memory_versions", "memory_restatements")
    handles = frozenset({"MemoryRecorded", "DuplicateSighted", "Restated", *(cls.__name__ for cls in _STATE_EVENTS)})

    deferrable = frozenset({"MemoryRecorded"})  # a creation reads nothing

    def create(self, conn: apsw.Connection) -> None:
        self._pending = None
        conn.execute(_SCHEMA)
        conn.execute(_CREATE_INDEXES)

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute(
            "DROP TABLE IF EXISTS memories; DROP TABLE IF EXISTS memory_versions; "
            "DROP TABLE IF EXISTS memory_restatements"
        )

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if isinstance(data, MemoryRecorded):
            self._insert(conn, event, data)
            return
        stream = data.loser if isinstance(data, Superseded) else data.memory  # type: ignore[attr-defined]
        found = _select(conn, "stream_id=?", (stream,))
        if found is None:  # an event about a memory this ledger never saw: nothing to fold
            return
        row = dict(zip(COLUMNS, found, strict=True))  # the stored values, changed in place by the fold
        if isinstance(data, Restated):
            conn.execute(
                "INSERT INTO memory_restatements(memory_id, position, event_time, source_type) VALUES(?, ?, ?, ?)",
                (row["memory_id"], event.position, event.event_time, data.source_type),
            )
        if isinstance(data, DuplicateSighted | Restated):
            conn.execute(
                "UPDATE memories SET sightings=sightings+1, last_position=? WHERE memory_id=?",
                (event.position, row["memory_id"]),
            )
            return
        was_superseded_by = row["superseded_by"]
        _fold_state(conn, row, event, data)
        if row["valid_to"] is not None:
            row["valid_to"] = not_before(row["event_time"], row["valid_to"])
        row["version"] += 1
        row["updated_at"] = event.recorded_at
        row["last_position"] = event.position
        assignments = ", ".join(f"{c}=?" for c in COLUMNS[1:])
        conn.execute(
            f"UPDATE memories SET {assignments} WHERE memory_id=?",
            (*(row[c] for c in COLUMNS[1:]), row["memory_id"]),
        )
        _snapshot(conn, row, event)
        # The memories a chain superseded end where the next value took over (a winner's corrected
        # time, a value that arrived late, one reinstated), as their time-travel states do
        # (projections/timeline/projector.py ``_retime_chain``).
        if isinstance(data, MemoryUpdated) and data.event_time is not None:
            _retime_chain(conn, row["memory_id"])
        elif isinstance(data, Superseded) and row["superseded_by"] is not None:
            _retime_chain(conn, row["superseded_by"])
        elif isinstance(data, Reinstated) and was_superseded_by is not None:
            _retime_chain(conn, was_superseded_by)

    def _insert(self, conn: apsw.Connection, event: StoredEvent, data: MemoryRecorded) -> None:
        row: dict[str, Any] = {
            "memory_id": event.position,
            "stream_id": data.memory,
            "subject": data.subject,
            "subject_norm": normalize_subject(data.subject) if data.subject else "",
            "content": data.content,
            "tags": _json_list(data.tags),
            "source_type": data.source_type,
            "confidence": data.confidence,
            "protection": data.protection,
            "status": "active",
            "event_time": event.event_time,
            "recorded_at": event.recorded_at,
            "updated_at": event.recorded_at,
            "version": 1,
            "workspace": event.workspace,
            "source_ref": data.source_ref,
            "metadata": _json_object(data.metadata),
            "content_hash": data.content_hash,
            "confirmed_via": data.authorization if data.source_type == "user_confirmed" else "",
            "derived_from": None,
            "superseded_by": None,
            "retired_by": None,
            "status_reason": "",
            "valid_to": None,
            "sightings": 0,
            "last_position": event.position,
        }
        values = tuple(map(row.__getitem__, COLUMNS))
        if self._pending is not None:
            self._pending.add(_INSERT_MEMORY, values)
            self._pending.add(_INSERT_VERSION, _version_row(row, event))
            return
        conn.execute(_INSERT_MEMORY, values)
        _snapshot(conn, row, event)


def _json_list(values: tuple[str, ...]) -> str:
    """``json.dumps(list(values), ensure_ascii=False)``, without the encoder for the usual empty case."""
    return json.dumps(list(values), ensure_ascii=False) if values else "[]"


def _json_object(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if value else "{}"


def _fold_state(conn: apsw.Connection, row: dict[str, Any], event: StoredEvent, data: Event) -> None:
    """Apply one state-changing event to a memory row (in place)."""
    if isinstance(data, MemoryUpdated):
        for field in ("content", "subject", "confidence", "source_type", "protection", "content_hash", "event_time"):
            value = getattr(data, field)
            if value is not None:
                row[field] = value
        if data.tags is not None:
            row["tags"] = json.dumps(list(data.tags), ensure_ascii=False)
        if data.metadata is not None:
            row["metadata"] = json.dumps(data.metadata, ensure_ascii=False, sort_keys=True)
        row["subject_norm"] = normalize_subject(row["subject"])
        if data.derived_from_confirmed:
            row["derived_from"] = row["memory_id"]
            row["confirmed_via"] = ""
        elif data.source_type is not None and data.source_type != "user_confirmed":
            row["confirmed_via"] = ""
    elif isinstance(data, Confirmed):
        row.update(source_type="user_confirmed", protection="locked", confirmed_via=data.authorization)
        if data.confidence is not None:
            row["confidence"] = data.confidence
    elif isinstance(data, MemoryUnlocked):
        row["protection"] = "normal"
    elif isinstance(data, MemoryRetired):
        row.update(
            status="retired",
            status_reason=data.reason,
            valid_to=event.event_time,
            retired_by=memory_id_of(conn, data.by),
        )
    elif isinstance(data, Superseded):
        winner = conn.execute("SELECT memory_id, event_time FROM memories WHERE stream_id=?", (data.winner,)).fetchone()
        row.update(
            status="superseded",
            status_reason=data.reason,
            superseded_by=winner[0] if winner else None,
            valid_to=winner[1] if winner else event.event_time,
        )
    elif isinstance(data, Reinstated):  # the undo of a change that superseded it
        row.update(status="active", status_reason="", superseded_by=None, valid_to=None)
    elif isinstance(data, MemoryArchived):
        row["status"] = "archived"
    elif isinstance(data, Erased):  # its rows were cleared: what stays is that it was erased
        # when it stopped being true stays when it did (a supersession, a retraction): an erasure
        # takes its text, not its past
        ended = row.get("valid_to")
        row.update(
            status="erased", status_reason=data.reason, valid_to=ended if ended is not None else event.event_time
        )


# A memory a supersession ended, as the time-travel states' ``ended = 'superseded'``: archived or
# erased later still ended so; retired later ended otherwise (its superseded_by stays, shown).
_SUPERSEDED = "('superseded', 'archived', 'erased')"


def _retime_chain(conn: apsw.Connection, memory_id: int) -> None:
    """Each superseded memory of ``memory_id``'s supersession chain ends where the next value of
    the chain took over (:func:`ledger.validity.chain_ends`)."""
    head, seen = memory_id, {memory_id}
    while True:  # up to the memory that is not superseded
        row = conn.execute(
            f"SELECT superseded_by FROM memories WHERE memory_id=? AND status IN {_SUPERSEDED}", (head,)
        ).fetchone()
        if row is None or row[0] is None or row[0] in seen:
            break
        head = row[0]
        seen.add(head)
    members: list[tuple[int, str, str | None, int | None]] = [
        (int(r[0]), str(r[1]), r[2], r[3])
        for r in conn.execute(
            "WITH RECURSIVE chain(id) AS (SELECT ? UNION SELECT m.memory_id FROM chain "
            f"JOIN memories m ON m.superseded_by = chain.id AND m.status IN {_SUPERSEDED} LIMIT {CHAIN_LIMIT}) "
            "SELECT m.memory_id, m.event_time, m.valid_to, m.superseded_by "
            "FROM chain JOIN memories m ON m.memory_id = chain.id",
            (head,),
        )
    ]
    head_from = next((r[1] for r in members if r[0] == head), None)
    if head_from is None:
        return
    losers = [r for r in members if r[0] != head]
    ends = chain_ends(head, head_from, ((m, since, winner) for m, since, _t, winner in losers))
    changed = [(ends[m], m) for m, _since, valid_to, _w in losers if ends[m] != valid_to]
    if changed:
        conn.executemany("UPDATE memories SET valid_to=? WHERE memory_id=?", changed)


def _version_row(row: dict[str, Any], event: StoredEvent) -> tuple[Any, ...]:
    return (
        row["memory_id"],
        row["version"],
        event.position,
        event.type,
        event.actor,
        event.recorded_at,
        row["event_time"],
        row["content"],
        row["subject"],
        row["tags"],
        row["source_type"],
        row["confidence"],
        row["protection"],
        row["status"],
        row["workspace"],
        row["superseded_by"],
    )


def _snapshot(conn: apsw.Connection, row: dict[str, Any], event: StoredEvent) -> None:
    conn.execute(_INSERT_VERSION, _version_row(row, event))
