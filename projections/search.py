"""Full-text search: an FTS5 index over subject, content and tags with BM25, re-ranked.

Candidates come from an AND query of the terms (every term present) topped up by an OR query
(stop words dropped), so rare multi-word phrases are found at once and natural-language
questions still reach the memories that share their informative words. The candidates are
re-ranked in Python by BM25 plus exact-phrase, subject and tag matches, trust and recency.
"""

from __future__ import annotations

import json
import math
from typing import Any

import apsw
import msgspec

from ledger.clock import to_datetime
from ledger.events import Event, MemoryRemembered, MemoryUpdated
from ledger.normalize import normalize_text
from ledger.store import StoredEvent
from ledger.text import fts_query, index_text, query_terms
from ledger.trust import trust_of
from projections.memories import memory_id_of

_SCHEMA = """
CREATE TABLE IF NOT EXISTS search_docs(
    memory_id INTEGER PRIMARY KEY,
    subject   TEXT NOT NULL,
    body      TEXT NOT NULL,
    tags      TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
    subject, body, tags,
    content='search_docs', content_rowid='memory_id',
    tokenize='porter unicode61 remove_diacritics 2'
);
"""

# Column weights for bm25(): a term in the subject or a tag says more than one in the body.
_BM25 = "bm25(search_fts, 3.0, 1.0, 2.0)"


class SearchProjector:
    name = "search"
    version = 1
    tables = ("search_docs",)
    handles = frozenset({"MemoryRemembered", "MemoryUpdated"})

    def __init__(self) -> None:
        self._bulk = False

    def create(self, conn: apsw.Connection) -> None:
        self._bulk = False
        conn.execute(_SCHEMA)

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS search_fts; DROP TABLE IF EXISTS search_docs")

    def begin_rebuild(self, conn: apsw.Connection) -> None:
        self._bulk = True  # fill search_docs only; one FTS 'rebuild' at the end is ~2.6x faster

    def end_rebuild(self, conn: apsw.Connection) -> None:
        self._bulk = False
        conn.execute("INSERT INTO search_fts(search_fts) VALUES('rebuild')")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if isinstance(data, MemoryRemembered):
            doc = (index_text(data.subject), index_text(data.content), index_text(" ".join(data.tags)))
            self._write(conn, event.position, doc)
        elif isinstance(data, MemoryUpdated) and (
            data.content is not None or data.subject is not None or data.tags is not None
        ):
            memory_id = memory_id_of(conn, data.memory)
            row = conn.execute(
                "SELECT subject, body, tags FROM search_docs WHERE memory_id=?", (memory_id,)
            ).fetchone()
            if row is None:
                return
            doc = (
                index_text(data.subject) if data.subject is not None else row[0],
                index_text(data.content) if data.content is not None else row[1],
                index_text(" ".join(data.tags)) if data.tags is not None else row[2],
            )
            if not self._bulk:
                conn.execute(
                    "INSERT INTO search_fts(search_fts, rowid, subject, body, tags) "
                    "VALUES('delete', ?, ?, ?, ?)",
                    (memory_id, *row),
                )
            conn.execute("DELETE FROM search_docs WHERE memory_id=?", (memory_id,))
            self._write(conn, memory_id, doc)

    def _write(self, conn: apsw.Connection, memory_id: int, doc: tuple[str, str, str]) -> None:
        conn.execute("INSERT INTO search_docs(memory_id, subject, body, tags) VALUES(?,?,?,?)",
                     (memory_id, *doc))
        if not self._bulk:
            conn.execute("INSERT INTO search_fts(rowid, subject, body, tags) VALUES(?,?,?,?)",
                         (memory_id, *doc))


class SearchFilters(msgspec.Struct, kw_only=True):
    statuses: tuple[str, ...] = ("active",)
    workspace: str | tuple[str, ...] | None = None  # a tuple: any of these names (workspace aliases)
    source_type: str | None = None
    tags_all: tuple[str, ...] = ()
    after_time: str | None = None
    before_time: str | None = None

    def sql(self) -> tuple[str, list[Any]]:
        clauses = [f"m.status IN ({', '.join('?' * len(self.statuses))})"]
        params: list[Any] = list(self.statuses)
        if self.workspace is not None:
            names = (self.workspace,) if isinstance(self.workspace, str) else self.workspace
            clauses.append(f"m.workspace IN ({', '.join('?' * len(names))})")
            params.extend(names)
        if self.source_type:
            clauses.append("m.source_type = ?")
            params.append(self.source_type)
        if self.after_time:
            clauses.append("m.event_time >= ?")
            params.append(self.after_time)
        if self.before_time:
            clauses.append("m.event_time <= ?")
            params.append(self.before_time)
        for tag in self.tags_all:
            clauses.append("EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)")
            params.append(tag)
        return " AND ".join(clauses), params


class Hit(msgspec.Struct):
    memory_id: int
    score: float


_CANDIDATE_COLUMNS = "m.memory_id, m.subject, m.content, m.tags, m.source_type, m.event_time, m.workspace"


def search(
    conn: apsw.Connection,
    query: str,
    filters: SearchFilters,
    limit: int,
    *,
    boost_workspace: str | tuple[str, ...] | None = None,
) -> tuple[list[Hit], int]:
    """Ranked hits (at most ``limit``) and an estimate of how many memories matched."""
    where, params = filters.sql()
    terms = query_terms(query) if query else []
    if not query.strip():
        return _recent(conn, where, params, limit)
    if not terms:
        return _substring(conn, query, where, params, limit)
    pool = max(limit * 4, 40)
    rows: dict[int, tuple[Any, ...]] = {}
    matched_all: set[int] = set()
    for op in ("AND", "OR") if len(terms) > 1 else ("AND",):
        sql = (
            f"SELECT {_CANDIDATE_COLUMNS}, {_BM25} AS r FROM search_fts "
            f"JOIN memories m ON m.memory_id = search_fts.rowid "
            f"WHERE search_fts MATCH ? AND {where} ORDER BY r LIMIT ?"
        )
        for row in conn.execute(sql, (fts_query(terms, op), *params, pool)):
            if row[0] not in rows:
                rows[row[0]] = row
                if op == "AND":
                    matched_all.add(row[0])
        if len(rows) >= pool:
            break
    if not rows:
        return [], 0
    hits = _rerank(query, terms, list(rows.values()), matched_all, boost_workspace)
    return hits[:limit], len(rows)


def _rerank(
    query: str,
    terms: list[str],
    rows: list[tuple[Any, ...]],
    matched_all: set[int],
    boost_workspace: str | tuple[str, ...] | None,
) -> list[Hit]:
    best = max(-r[7] for r in rows) or 1.0
    newest = max(r[5] for r in rows)
    phrase = normalize_text(query)
    hits: list[Hit] = []
    for memory_id, subject, content, tags, source_type, event_time, workspace, bm25 in rows:
        score = -bm25 / best
        if memory_id in matched_all:
            score += 0.3
        if phrase and phrase in normalize_text(content):
            score += 0.5
        subject_norm = normalize_text(subject)
        if subject_norm and any(t in subject_norm for t in terms):
            score += 0.1
        tag_norm = normalize_text(" ".join(json.loads(tags)))
        if tag_norm and any(t in tag_norm for t in terms):
            score += 0.05
        score += 0.05 * trust_of(source_type) / 100
        score += 0.03 * _recency(event_time, newest)
        if boost_workspace is not None and workspace in (
                (boost_workspace,) if isinstance(boost_workspace, str) else boost_workspace):
            score += 0.2
        hits.append(Hit(memory_id, round(score, 6)))
    hits.sort(key=lambda h: (-h.score, -h.memory_id))
    return hits


def _recency(event_time: str, newest: str) -> float:
    """1.0 for the newest candidate, decaying with a one-year half-life (deterministic)."""
    days = (to_datetime(newest) - to_datetime(event_time)).total_seconds() / 86400
    return math.exp(-math.log(2) * max(days, 0.0) / 365)


def _recent(conn: apsw.Connection, where: str, params: list[Any], limit: int) -> tuple[list[Hit], int]:
    rows = conn.execute(
        f"SELECT m.memory_id FROM memories m WHERE {where} ORDER BY m.event_time DESC, m.memory_id DESC "
        "LIMIT ?",
        (*params, limit + 1),
    ).fetchall()
    return [Hit(r[0], 0.0) for r in rows[:limit]], len(rows)


def _substring(
    conn: apsw.Connection, query: str, where: str, params: list[Any], limit: int
) -> tuple[list[Hit], int]:
    """No word characters at all (emoji, punctuation): a plain substring scan, LIKE-escaped."""
    needle = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = conn.execute(
        f"SELECT m.memory_id FROM memories m WHERE {where} AND m.content LIKE ? ESCAPE '\\' "
        "ORDER BY m.event_time DESC LIMIT ?",
        (*params, needle, limit + 1),
    ).fetchall()
    return [Hit(r[0], 0.5) for r in rows[:limit]], len(rows)
