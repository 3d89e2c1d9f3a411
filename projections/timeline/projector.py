"""Bitemporal states of every memory: the index behind as-of reads, history and timelines.

``memories`` answers "now"; this projection answers "at a point". Each row of ``tt_states`` is
one state of a memory on both axes at once:

* the recorded axis: the state was what the log said from position ``known_from`` up to (not
  including) ``known_to`` (``NULL``: still the latest);
* the event axis: in that state the memory is valid over ``[valid_from, valid_to)`` in world
  time, where ``valid_to`` is the ``event_time`` of the memory that superseded it, or the
  ``event_time`` of its retirement (``ended`` says which), ``NULL`` while open-ended.

A point query is then one indexed lookup per memory instead of a replay. Text versions live
in ``tt_texts`` and in a contentless FTS5 index, so an as-of search finds a memory by the words
it had at that point, not by its current words. ``tt_links`` maps every event to the memories
it mentions (history and audit by memory without a log scan) and ``tt_marks`` keeps the running
maximum of ``recorded_at`` so a timestamp resolves to a log prefix in O(log n). The queries over
these tables live in :mod:`projections.timeline.asof`.

The superseded memory's ``valid_to`` follows its successor: if the winner's ``event_time`` is
later corrected, the loser gets a new state from that position on.
"""

from __future__ import annotations

import functools
import json
import types
import typing
from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import (
    EVENT_TYPES,
    Confirmed,
    Erased,
    Event,
    MemoryArchived,
    MemoryRecorded,
    MemoryRetired,
    MemoryUnlocked,
    MemoryUpdated,
    Reinstated,
    Superseded,
    current_type,
    stream_refs,
)
from fact_ledger.ledger.sql import insert_rows
from fact_ledger.ledger.validity import CHAIN_LIMIT, chain_ends, not_before
from fact_ledger.projections.runner import DeferredRows
from fact_ledger.projections.search.index import SearchProjector, compact, tune_for_small_writes
from fact_ledger.projections.timeline.rows import (
    INSERTS,
    LINKS_HEAD,
    STATE_COLUMNS,
    Rebuild,
    creation_rows,
    insert_state,
    json_text,
    new_text,
    next_ids,
    write_rows,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tt_memories(
    memory_id   INTEGER PRIMARY KEY,
    stream_id   TEXT NOT NULL UNIQUE,
    recorded_at TEXT NOT NULL,
    version     INTEGER NOT NULL,
    state_id    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tt_states(
    state_id      INTEGER PRIMARY KEY,
    memory_id     INTEGER NOT NULL,
    known_from    INTEGER NOT NULL,
    known_to      INTEGER,
    version       INTEGER NOT NULL,
    valid_from    TEXT NOT NULL,
    valid_to      TEXT,
    status        TEXT NOT NULL,
    ended         TEXT,
    superseded_by INTEGER,
    text_id       INTEGER NOT NULL,
    source_type   TEXT NOT NULL,
    confidence    REAL NOT NULL,
    protection    TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    source_ref    TEXT NOT NULL,
    metadata      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tt_states_memory ON tt_states(memory_id, known_from);
CREATE INDEX IF NOT EXISTS tt_states_text ON tt_states(text_id);
CREATE INDEX IF NOT EXISTS tt_states_valid_from ON tt_states(valid_from, memory_id);
CREATE INDEX IF NOT EXISTS tt_states_superseded_by ON tt_states(superseded_by)
    WHERE superseded_by IS NOT NULL;
CREATE TABLE IF NOT EXISTS tt_texts(
    text_id      INTEGER PRIMARY KEY,
    position     INTEGER NOT NULL,
    memory_id    INTEGER NOT NULL,
    subject      TEXT NOT NULL,
    subject_norm TEXT NOT NULL,
    content      TEXT NOT NULL,
    tags         TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tt_texts_subject ON tt_texts(subject_norm);
CREATE INDEX IF NOT EXISTS tt_texts_position ON tt_texts(position);
CREATE VIRTUAL TABLE IF NOT EXISTS tt_fts USING fts5(
    subject, body, tags, content='', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS tt_links(
    memory_id INTEGER NOT NULL,
    position  INTEGER NOT NULL,
    role      TEXT NOT NULL,
    PRIMARY KEY(memory_id, position, role)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tt_marks(
    hwm      TEXT PRIMARY KEY,
    position INTEGER NOT NULL
) WITHOUT ROWID;
"""


class TimelineProjector:
    """Folds every event type: memory events into states, every event into links and marks."""

    name = "timeline"
    # tt_fts is written with ledger.text.index_text, like the search index: when the search
    # projection's version moves (its text analysis changed), this one is rebuilt as well.
    # 100 + the search version; 200 +: a superseded memory ends where the next value of its
    # chain took over (a value that arrives late, _retime_chain); 300 +: a claim set's members
    # are linked (history and audit by memory show the collisions a memory took part in), an
    # erasure is a version that ends the memory (history said "active" where read said "erased");
    # 400 +: an end before the start is an empty interval (ledger.validity.not_before)
    version = 400 + SearchProjector.version
    tables = ("tt_memories", "tt_states", "tt_texts", "tt_links", "tt_marks")
    handles = frozenset(EVENT_TYPES)
    after_commit = True  # no write decides on it; it reads only its own tables and the event

    def create(self, conn: apsw.Connection) -> None:
        self._bulk = None
        conn.execute(_SCHEMA)
        tune_for_small_writes(conn, "tt_fts")

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute(
            "DROP TABLE IF EXISTS tt_fts; DROP TABLE IF EXISTS tt_memories; DROP TABLE IF EXISTS tt_states;"
            "DROP TABLE IF EXISTS tt_texts; DROP TABLE IF EXISTS tt_links; DROP TABLE IF EXISTS tt_marks"
        )

    def __init__(self) -> None:
        self._bulk: Rebuild | None = None

    deferrable = frozenset({"MemoryRecorded"})  # a creation reads nothing (ids come from ``Rebuild``)

    def cancel_rebuild(self) -> None:
        self._bulk = None

    def begin_rebuild(self, conn: apsw.Connection) -> None:
        # Indexes stay and are kept up to date (see projections.memories._INDEXES for why).
        self._bulk = Rebuild()

    def flush(self, conn: apsw.Connection) -> None:
        if self._bulk is not None:
            self._bulk.flush(conn)

    def end_rebuild(self, conn: apsw.Connection) -> None:
        self.flush(conn)
        self._bulk = None
        compact(conn, "tt_fts")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        bulk = self._bulk
        if bulk is None:
            _mark(conn, event)
        elif bulk.hwm is None or event.recorded_at > bulk.hwm:
            bulk.rows.add(INSERTS["tt_marks"], (event.recorded_at, event.position))
            bulk.hwm = event.recorded_at
        if isinstance(data, MemoryRecorded):
            if bulk is None:
                _create(conn, event, data)
            else:
                bulk.create(conn, event, data)
        elif isinstance(data, MemoryUpdated):
            _update(conn, event, data)
        elif isinstance(data, Confirmed):
            confirmed: dict[str, Any] = {"source_type": "user_confirmed", "protection": "locked"}
            if data.confidence is not None:
                confirmed["confidence"] = data.confidence
            _change(conn, event, data.memory, confirmed)
        elif isinstance(data, MemoryUnlocked):
            _change(conn, event, data.memory, {"protection": "normal"})
        elif isinstance(data, MemoryRetired):
            _change(conn, event, data.memory, {"status": "retired", "ended": "retired", "valid_to": event.event_time})
        elif isinstance(data, Superseded):
            winner = _current(conn, data.winner)
            _change(
                conn,
                event,
                data.loser,
                {
                    "status": "superseded",
                    "ended": "superseded",
                    "superseded_by": winner["memory_id"] if winner else None,
                    "valid_to": winner["valid_from"] if winner else event.event_time,
                },
            )
            if winner is not None:
                _retime_chain(conn, event, winner["memory_id"])
        elif isinstance(data, Reinstated):
            before = _current(conn, data.memory)
            _change(
                conn, event, data.memory, {"status": "active", "ended": None, "superseded_by": None, "valid_to": None}
            )
            if before is not None and before["superseded_by"] is not None:  # its old chain goes on without it
                _retime_chain(conn, event, before["superseded_by"])
        elif isinstance(data, MemoryArchived):
            _change(conn, event, data.memory, {"status": "archived"})
        elif isinstance(data, Erased):  # as the memories read model says it: a version that ends it
            current = _current(conn, data.memory)
            ends = {"ended": "erased", "valid_to": event.event_time} if current and current["valid_to"] is None else {}
            _change(conn, event, data.memory, {"status": "erased", **ends})
        if bulk is None:
            _link(conn, event, data)
        else:
            deferred = bulk.rows if current_type(event.type) in self.deferrable else None
            _link(conn, event, data, bulk.memory_ids, deferred)


def _mark(conn: apsw.Connection, event: StoredEvent) -> None:
    """Record where the running maximum of ``recorded_at`` rises (see :func:`position_at`).

    Two statements, not one ``INSERT … SELECT … WHERE NOT EXISTS``: a statement that reads the
    table it writes opens a statement journal, and SQLite then asks every virtual table in the
    transaction for a savepoint, on which FTS5 writes out the terms it holds in memory. Folded
    after the full-text index, every event flushed a small segment of it: half the time of an
    after-commit fold went there."""
    top = conn.execute("SELECT hwm FROM tt_marks ORDER BY hwm DESC LIMIT 1").fetchone()
    if top is None or event.recorded_at > top[0]:
        conn.execute(INSERTS["tt_marks"], (event.recorded_at, event.position))


def _memory_of(conn: apsw.Connection, stream_id: str) -> int | None:
    row = conn.execute("SELECT memory_id FROM tt_memories WHERE stream_id=?", (stream_id,)).fetchone()
    return row[0] if row else None


def _current(conn: apsw.Connection, stream_id: str) -> dict[str, Any] | None:
    row = conn.execute(
        f"SELECT {', '.join('s.' + c for c in STATE_COLUMNS)} FROM tt_memories m "
        "JOIN tt_states s ON s.state_id = m.state_id WHERE m.stream_id=?",
        (stream_id,),
    ).fetchone()
    return dict(zip(STATE_COLUMNS, row, strict=True)) if row else None


def _create(conn: apsw.Connection, event: StoredEvent, data: MemoryRecorded) -> None:
    write_rows(conn, creation_rows(event, data, *next_ids(conn)))


def _change(
    conn: apsw.Connection,
    event: StoredEvent,
    stream_id: str,
    changes: dict[str, Any],
    *,
    bump: bool = True,
    text: tuple[str, str, list[str]] | None = None,
) -> dict[str, Any] | None:
    """Close the memory's current state at this position and open the changed one."""
    current = _current(conn, stream_id)
    if current is None:  # an event about a memory this ledger never saw: nothing to fold
        return None
    state = {**current, **changes, "known_from": event.position, "known_to": None}
    if state["valid_to"] is not None:
        state["valid_to"] = not_before(state["valid_from"], state["valid_to"])
    if bump:
        state["version"] = current["version"] + 1
    if text is not None:
        state["text_id"] = new_text(conn, event.position, current["memory_id"], *text)
    if current["known_from"] == event.position:  # a second change by the same event: amend it
        conn.execute("DELETE FROM tt_states WHERE state_id=?", (current["state_id"],))
    else:
        conn.execute("UPDATE tt_states SET known_to=? WHERE state_id=?", (event.position, current["state_id"]))
    state_id = insert_state(conn, state)
    conn.execute(
        "UPDATE tt_memories SET state_id=?, version=? WHERE memory_id=?",
        (state_id, state["version"], current["memory_id"]),
    )
    return state


def _update(conn: apsw.Connection, event: StoredEvent, data: MemoryUpdated) -> None:
    changes: dict[str, Any] = {}
    for field in ("confidence", "source_type", "protection"):
        if getattr(data, field) is not None:
            changes[field] = getattr(data, field)
    if data.event_time is not None:
        changes["valid_from"] = data.event_time
    if data.metadata is not None:
        changes["metadata"] = json_text(data.metadata)
    text = None
    if data.content is not None or data.subject is not None or data.tags is not None:
        current = _current(conn, data.memory)
        if current is None:
            return
        old = conn.execute(
            "SELECT subject, content, tags FROM tt_texts WHERE text_id=?", (current["text_id"],)
        ).fetchone()
        text = (
            data.subject if data.subject is not None else old[0],
            data.content if data.content is not None else old[1],
            list(data.tags) if data.tags is not None else json.loads(old[2]),
        )
    state = _change(conn, event, data.memory, changes, text=text)
    if state is not None and data.event_time is not None:
        _follow_winner(conn, event, state["memory_id"], data.event_time)


def _follow_winner(conn: apsw.Connection, event: StoredEvent, winner_id: int, event_time: str) -> None:
    """Memories this one superseded now end at its corrected event time (or at a later value's
    start, :func:`_retime_chain`)."""
    del event_time  # the winner's state already holds it
    _retime_chain(conn, event, winner_id)


def _retime_chain(conn: apsw.Connection, event: StoredEvent, memory_id: int) -> None:
    """Each superseded memory of ``memory_id``'s supersession chain ends where the next value of
    the chain took over (:func:`ledger.validity.chain_ends`: a value that arrived late). Each
    change is a new state on the recorded axis at this event, so "what did the ledger know at R"
    answers as it did."""
    head, seen = memory_id, {memory_id}
    while True:  # up to the memory that is not superseded
        row = conn.execute(
            "SELECT s.superseded_by FROM tt_memories m JOIN tt_states s ON s.state_id = m.state_id "
            "WHERE m.memory_id=? AND s.ended='superseded'",
            (head,),
        ).fetchone()
        if row is None or row[0] is None or row[0] in seen:
            break
        head = row[0]
        seen.add(head)
    members = conn.execute(
        "WITH RECURSIVE chain(id) AS (SELECT ? UNION "
        "SELECT s.memory_id FROM chain JOIN tt_states s ON s.superseded_by = chain.id AND s.known_to IS NULL "
        f"AND s.ended = 'superseded' LIMIT {CHAIN_LIMIT}) "
        "SELECT m.memory_id, m.stream_id, s.valid_from, s.valid_to, s.superseded_by FROM chain "
        "JOIN tt_memories m ON m.memory_id = chain.id JOIN tt_states s ON s.state_id = m.state_id",
        (head,),
    ).fetchall()
    head_from = next((row[2] for row in members if row[0] == head), None)
    if head_from is None:
        return
    losers = [row for row in members if row[0] != head]
    ends = chain_ends(head, head_from, ((m, since, winner) for m, _s, since, _t, winner in losers))
    for memory, stream_id, _since, valid_to, _winner in losers:
        if ends[memory] != valid_to:
            _change(conn, event, stream_id, {"valid_to": ends[memory]}, bump=False)


def _link(
    conn: apsw.Connection,
    event: StoredEvent,
    data: Event,
    memory_ids: dict[str, int] | None = None,
    deferred: DeferredRows | None = None,
) -> None:
    """Index the event under every memory it names (its stream, and ids inside its payload).

    During a rebuild ``memory_ids`` (every row of ``tt_memories`` so far, stream_id ->
    memory_id) spares the lookups, and a deferrable event's links go to ``deferred``.
    """
    lookup = functools.partial(_memory_of, conn) if memory_ids is None else memory_ids.get
    roles: dict[int, str] = {}
    memory_id = lookup(event.stream_id)
    if memory_id is not None:
        roles[memory_id] = "stream"
    for field in _id_fields(type(data)):
        raw = getattr(data, field)
        if isinstance(raw, str) and len(raw) != 36:  # most fields: text that cannot be an id
            continue
        for value in stream_refs(raw):
            if value != event.stream_id:
                other = lookup(value)
                if other is not None and other not in roles:
                    roles[other] = field
    links = [(m, event.position, role) for m, role in roles.items()]
    if deferred is not None:
        deferred.add(INSERTS["tt_links"], *links)
    else:
        insert_rows(conn, LINKS_HEAD, links)


@functools.cache
def _id_fields(kind: type[Event]) -> tuple[str, ...]:
    """The fields of an event type whose values can name a memory: a string, or a list, tuple
    or dict keyed by strings (a float, a flag, a turn or a list of claim specs never does).
    Looked up once per type: a rebuild links every event, and most fields are not ids."""
    return tuple(f.name for f in msgspec.structs.fields(kind) if _may_hold_id(f.type))


def _may_hold_id(annotation: Any) -> bool:
    if annotation is str or annotation is Any:
        return True
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_may_hold_id(a) for a in args)
    # a container: its items (a dict: its keys) are what stream_refs looks at; an item may be a struct
    # that names a memory (a claim set's members)
    return (
        typing.get_origin(annotation) in (list, tuple, dict)
        and bool(args)
        and (args[0] in (str, Any) or _names_memory(args[0]))
    )


def _names_memory(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, msgspec.Struct) and "memory" in kind.__struct_fields__
