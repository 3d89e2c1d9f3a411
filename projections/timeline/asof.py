"""Point queries over the timeline projection: a memory, a search, a chain, at (position, time).

A point is a log position ``P`` (the recorded axis) and optionally a world time ``T`` (the event
axis). The state a memory had at ``P`` is the one row of ``tt_states`` with
``known_from <= P < known_to``; its status at ``T`` follows from its validity interval
(:func:`status_at`). Every query here is an index lookup or an FTS5 match joined to those rows,
never a replay, so its cost does not grow with the length of the log.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import apsw
import msgspec

from fact_ledger.ledger.normalize import normalize_text
from fact_ledger.ledger.sql import marks
from fact_ledger.ledger.text import fts_query, query_terms
from fact_ledger.projections.memory_row import JSON_COLUMNS, MemoryState
from fact_ledger.projections.rows import typed_row
from fact_ledger.projections.search.queries import attribute_clauses
from fact_ledger.projections.timeline.rows import STATE_COLUMNS, TEXT_COLUMNS

_BM25 = "bm25(tt_fts, 3.0, 1.0, 2.0)"
COMMON = 2000
_SELECT = f"SELECT {', '.join('s.' + c for c in STATE_COLUMNS)}, t.subject, t.content, t.tags, m.recorded_at"
_JOIN = "JOIN tt_texts t ON t.text_id = s.text_id JOIN tt_memories m ON m.memory_id = s.memory_id"


class Point(msgspec.Struct, frozen=True):
    """``position``: the log prefix that is known; ``event_time``: the world time asked about."""

    position: int
    event_time: str | None = None


class Scored(NamedTuple):
    """A state a search found, and its score."""

    state: MemoryState
    score: float


class AsOfFilters(msgspec.Struct, kw_only=True):
    include_inactive: bool = False
    workspaces: tuple[str, ...] | None = None  # any of these stored names (workspace aliases)
    source_type: str | None = None
    tags_all: tuple[str, ...] = ()
    after_time: str | None = None
    before_time: str | None = None


def position_at(conn: apsw.Connection, recorded: str, last_position: int) -> int:
    """The longest log prefix whose events were all recorded at or before ``recorded``.

    Identical to "events recorded ≤ R" while the log's clock moved forward; an event appended
    later with an older stamp (a replayed backup, an import) counts from where it entered the log.
    """
    row = conn.execute("SELECT position FROM tt_marks WHERE hwm > ? ORDER BY hwm LIMIT 1", (recorded,)).fetchone()
    return last_position if row is None else row[0] - 1


def status_at(state: MemoryState, event_time: str | None) -> str | None:
    """Lifecycle at a world time: ``active`` inside the validity interval; None before it began.

    Without a world time it is the lifecycle the log recorded (``archived`` included); with one,
    archiving does not matter: an archived memory is still ``active`` inside its interval.
    """
    if event_time is None:
        return state.status
    if state.event_time > event_time:
        return None
    if state.valid_to is None or state.valid_to > event_time:
        return "active"
    return str(state.ended)


_ROW_COLUMNS = (*STATE_COLUMNS, *TEXT_COLUMNS, "recorded_at")


def _row(row: Any) -> MemoryState:
    return typed_row(
        MemoryState, _ROW_COLUMNS, row[: len(_ROW_COLUMNS)], json=JSON_COLUMNS, renamed={"valid_from": "event_time"}
    )


def state_at(conn: apsw.Connection, memory_id: int, position: int) -> MemoryState | None:
    """The memory's state (with its text) as the log knew it at ``position``; None before it existed."""
    row = conn.execute(
        f"{_SELECT} FROM tt_states s {_JOIN} WHERE s.memory_id=? AND s.known_from<=? "
        "ORDER BY s.known_from DESC LIMIT 1",
        (memory_id, position),
    ).fetchone()
    return _row(row) if row else None


# An erased memory answers no search at any point: its words are gone, and a "[erased]" row
# answers nothing (``read``, ``history`` and ``timeline`` still say that it was erased).
_NOT_ERASED = "NOT EXISTS (SELECT 1 FROM tt_states x WHERE x.memory_id = s.memory_id AND x.status = 'erased')"


def _where(point: Point, filters: AsOfFilters) -> tuple[str, list[Any]]:
    clauses = ["s.known_from <= ?", "(s.known_to IS NULL OR s.known_to > ?)", _NOT_ERASED]
    params: list[Any] = [point.position, point.position]
    if point.event_time is not None:
        clauses.append("s.valid_from <= ?")
        params.append(point.event_time)
        if not filters.include_inactive:
            clauses.append("(s.valid_to IS NULL OR s.valid_to > ?)")
            params.append(point.event_time)
    elif not filters.include_inactive:
        clauses.append("s.status = 'active'")
    more, more_params = attribute_clauses(
        row="s",
        time_column="valid_from",
        tags_row="t",
        workspaces=filters.workspaces,
        source_type=filters.source_type,
        after_time=filters.after_time,
        before_time=filters.before_time,
        tags_all=filters.tags_all,
    )
    clauses += more
    params += more_params
    return " AND ".join(clauses), params


def find_at(
    conn: apsw.Connection,
    query: str,
    point: Point,
    filters: AsOfFilters,
    limit: int,
    *,
    boost_workspaces: tuple[str, ...] | None = None,
) -> tuple[list[Scored], int]:
    """States matching ``query`` at the point, best first (each with its score), and a match count.

    Like the current-state search: an AND query of the terms, topped up by an OR query, ranked
    by BM25 over the words the memory had at that point (plus 0.3 for matching every term).
    """
    where, params = _where(point, filters)
    terms = query_terms(query) if query else []
    if not query.strip():
        rows = conn.execute(
            f"{_SELECT}, 0.0 FROM tt_states s {_JOIN} WHERE {where} "
            "ORDER BY s.valid_from DESC, s.memory_id DESC LIMIT ?",
            (*params, limit + 1),
        ).fetchall()
        return [_scored(r, 0.0) for r in rows[:limit]], len(rows)
    if not terms:
        needle = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = conn.execute(
            f"{_SELECT}, 0.5 FROM tt_states s {_JOIN} WHERE {where} AND t.content LIKE ? ESCAPE '\\' "
            "ORDER BY s.valid_from DESC LIMIT ?",
            (*params, needle, limit + 1),
        ).fetchall()
        return [_scored(r, 0.5) for r in rows[:limit]], len(rows)
    pool = max(limit * 4, 40)
    # Text versions are numbered in log order: none created after P can match at P.
    bound = conn.execute(
        "SELECT text_id FROM tt_texts WHERE position <= ? ORDER BY position DESC, text_id DESC LIMIT 1",
        (point.position,),
    ).fetchone()
    # bm25() is computed for every row a query matches: a term in thousands of text versions
    # would cost tens of ms. Rare terms drive the ranked queries; when every term is common the
    # newest matching versions are taken instead (like the current-state search).
    rare = [t for t in terms if not _common(conn, t)]
    common = [t for t in terms if t not in rare]
    plans = [(fts_query(terms, "AND"), bool(rare))]
    if len(terms) > 1:
        plans += [(fts_query(rare, "OR"), True)] if rare else []
        plans += [(fts_query(common, "OR"), False)] if common else []
    found: dict[int, tuple[Any, float, bool]] = {}
    for n, (expression, ranked) in enumerate(plans):
        sql = (
            f"{_SELECT}, {_BM25} AS r FROM tt_fts JOIN tt_states s ON s.text_id = tt_fts.rowid {_JOIN} "
            f"WHERE tt_fts MATCH ? AND tt_fts.rowid <= ? AND {where} "
            f"ORDER BY {'r' if ranked else 'tt_fts.rowid DESC'} LIMIT ?"
        )
        for row in conn.execute(sql, (expression, bound[0] if bound else 0, *params, pool)):
            found.setdefault(row[1], (row, row[-1], n == 0))  # row[1]: memory_id
        if len(found) >= pool:
            break
    if not found:
        return [], 0
    best = max(-bm25 for _, bm25, _ in found.values()) or 1.0
    hits = []
    for row, bm25, matched_all in found.values():
        score = -bm25 / best + (0.3 if matched_all else 0.0)
        if boost_workspaces and row[STATE_COLUMNS.index("workspace")] in boost_workspaces:
            score += 0.2
        hits.append(_scored(row, round(score, 6)))
    hits.sort(key=lambda h: (-h.score, -h.state.memory_id))
    return hits[:limit], len(found)


def _common(conn: apsw.Connection, term: str) -> bool:
    """Whether ``term`` is in at least COMMON text versions (a capped doclist walk)."""
    return bool(
        conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM tt_fts WHERE tt_fts MATCH ? LIMIT ?)",
            (fts_query([term], "AND"), COMMON),
        ).get
        >= COMMON
    )


def _scored(row: Any, score: float) -> Scored:
    return Scored(_row(row), score)


def supersedes_at(conn: apsw.Connection, memory_id: int, position: int) -> list[int]:
    """Memories that, at ``position``, were superseded by ``memory_id``."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT memory_id FROM tt_states WHERE superseded_by=? AND known_from<=? "
            "AND (known_to IS NULL OR known_to>?) AND ended='superseded' ORDER BY memory_id",
            (memory_id, position, position),
        )
    ]


def chain_at(conn: apsw.Connection, memory_id: int, position: int, limit: int) -> list[MemoryState]:
    """The memory and everything linked to it by supersession at ``position`` (both directions)."""
    seen: dict[int, MemoryState] = {}
    todo = [memory_id]
    while todo and len(seen) < limit:
        current = todo.pop()
        if current in seen:
            continue
        state = state_at(conn, current, position)
        if state is None:
            continue
        seen[current] = state
        if state.superseded_by is not None and state.ended == "superseded":
            todo.append(state.superseded_by)
        todo.extend(supersedes_at(conn, current, position))
    return sorted(seen.values(), key=lambda s: (s.event_time, s.memory_id))


def subject_at(
    conn: apsw.Connection, subject: str, position: int, limit: int, workspaces: tuple[str, ...] | None = None
) -> list[MemoryState]:
    """Every memory whose subject, at ``position``, normalises to the same text as ``subject``
    (only those stored in ``workspaces`` when given: strict isolation)."""
    scope, params = ("", ()) if workspaces is None else (f"AND s.workspace IN ({marks(len(workspaces))}) ", workspaces)
    rows = conn.execute(
        f"{_SELECT} FROM tt_texts t JOIN tt_states s ON s.text_id = t.text_id "
        "JOIN tt_memories m ON m.memory_id = s.memory_id "
        f"WHERE t.subject_norm = ? AND s.known_from <= ? AND (s.known_to IS NULL OR s.known_to > ?) {scope}"
        "ORDER BY s.valid_from, s.memory_id LIMIT ?",
        (normalize_text(subject), position, position, *params, limit),
    ).fetchall()
    return [_row(r) for r in rows]
