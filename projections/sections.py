"""Sections of long memories: a read model keyed by memory and version, with its own full text.

A memory longer than the threshold is cut by ``ledger.sections.split_sections``; each section is
a row (memory, ordinal, the content version it was cut from, heading path, span in the content)
indexed in ``section_fts``. ``find`` uses it to answer with the section that matches instead of
a whole document, and ``read`` to return a catalog or chosen sections. An update that changes
the content replaces the memory's sections; the memory itself (the event) is never altered.

A section's FTS rowid is ``memory_id * 2**20 + ordinal`` (a 2 MiB memory has fewer than 2**20
sections), so rows and index are the same whether built write by write or by a rebuild, and one
memory's sections are one rowid range.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import apsw

from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import Event, MemoryRecorded, MemoryUpdated
from fact_ledger.ledger.sections import DEFAULT_THRESHOLD, split_sections
from fact_ledger.ledger.text import Query, analyse, fts_all, index_text
from fact_ledger.projections.memories import memory_id_of
from fact_ledger.projections.runner import DeferringProjector
from fact_ledger.projections.search.index import compact, tune_for_small_writes

ROWID_SHIFT = 20
_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sections(
    section_rowid INTEGER PRIMARY KEY,
    memory_id     INTEGER NOT NULL,
    ordinal       INTEGER NOT NULL,
    version       INTEGER NOT NULL,
    heading_path  TEXT NOT NULL,
    start         INTEGER NOT NULL,
    end           INTEGER NOT NULL,
    heading       TEXT NOT NULL,
    body          TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS section_fts USING fts5(
    heading, body,
    content='sections', content_rowid='section_rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
"""
_INSERT = (
    "INSERT INTO sections(section_rowid, memory_id, ordinal, version, heading_path, start, end, heading, body) "
    "VALUES(?,?,?,?,?,?,?,?,?)"
)


def section_rowid(memory_id: int, ordinal: int) -> int:
    return (memory_id << ROWID_SHIFT) + ordinal


def _rows(memory_id: int, version: int, content: str, threshold: int) -> list[tuple[Any, ...]]:
    return [
        (
            section_rowid(memory_id, s.ordinal),
            memory_id,
            s.ordinal,
            version,
            json.dumps(list(s.heading_path), ensure_ascii=False),
            s.start,
            s.end,
            index_text(" ".join(s.heading_path)),
            index_text(content[s.start : s.end]),
        )
        for s in split_sections(content, threshold)
    ]


class SectionsProjector(DeferringProjector):
    """Sections of memories longer than ``threshold`` characters (a setting: a changed value is a
    new projection version, so the runner rebuilds the sections once)."""

    name = "sections"
    tables = ("sections",)
    handles = frozenset({"MemoryRecorded", "MemoryUpdated"})
    deferrable = frozenset({"MemoryRecorded"})

    def __init__(self, threshold: int = DEFAULT_THRESHOLD) -> None:
        if not 0 < threshold < 10**7:
            raise ValueError("the section threshold must be between 1 and 9,999,999 characters")
        self.threshold = threshold
        self.version = _VERSION * 10**7 + threshold

    def create(self, conn: apsw.Connection) -> None:
        self._pending = None
        conn.execute(_SCHEMA)
        tune_for_small_writes(conn, "section_fts")

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS section_fts; DROP TABLE IF EXISTS sections")

    def end_rebuild(self, conn: apsw.Connection) -> None:
        super().end_rebuild(conn)
        conn.execute("INSERT INTO section_fts(section_fts) VALUES('rebuild')")
        compact(conn, "section_fts")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if isinstance(data, MemoryRecorded):
            if len(data.content) <= self.threshold:
                return
            rows = _rows(event.position, 1, data.content, self.threshold)
            if self._pending is not None:
                self._pending.add(_INSERT, *rows)
            else:
                self._insert(conn, rows)
        elif isinstance(data, MemoryUpdated) and data.content is not None:
            memory_id = memory_id_of(conn, data.memory)
            if memory_id is None:
                return
            self._delete(conn, memory_id)
            version = conn.execute("SELECT version FROM memories WHERE memory_id=?", (memory_id,)).get
            self._insert(conn, _rows(memory_id, version, data.content, self.threshold))

    def _insert(self, conn: apsw.Connection, rows: list[tuple[Any, ...]]) -> None:
        conn.executemany(_INSERT, rows)
        if self._pending is None:
            conn.executemany(
                "INSERT INTO section_fts(rowid, heading, body) VALUES(?,?,?)", [(r[0], r[7], r[8]) for r in rows]
            )

    def _delete(self, conn: apsw.Connection, memory_id: int) -> None:
        low, high = section_rowid(memory_id, 0), section_rowid(memory_id + 1, 0)
        if self._pending is None:
            conn.execute(
                "INSERT INTO section_fts(section_fts, rowid, heading, body) "
                "SELECT 'delete', section_rowid, heading, body FROM sections "
                "WHERE section_rowid >= ? AND section_rowid < ?",
                (low, high),
            )
        conn.execute("DELETE FROM sections WHERE section_rowid >= ? AND section_rowid < ?", (low, high))


# -- queries ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class SectionInfo:
    section_id: int
    version: int
    heading_path: list[str]
    start: int
    end: int


def catalog(conn: apsw.Connection, memory_id: int) -> list[SectionInfo]:
    low, high = section_rowid(memory_id, 0), section_rowid(memory_id + 1, 0)
    return [
        SectionInfo(ordinal, version, json.loads(path), start, end)
        for ordinal, version, path, start, end in conn.execute(
            "SELECT ordinal, version, heading_path, start, end FROM sections "
            "WHERE section_rowid >= ? AND section_rowid < ? ORDER BY section_rowid",
            (low, high),
        )
    ]


def best_local_section(conn: apsw.Connection, memory_id: int, query: str | Query) -> SectionInfo | None:
    """The section of ``memory_id`` that holds every term of ``query``, best by bm25; None when
    no single section does (the match is spread over the document) or the memory has none."""
    parsed = analyse(query) if isinstance(query, str) else query
    if not parsed.terms:
        return None
    low, high = section_rowid(memory_id, 0), section_rowid(memory_id + 1, 0)
    row = conn.execute(
        "SELECT rowid FROM section_fts WHERE section_fts MATCH ? AND rowid >= ? AND rowid < ? "
        "ORDER BY bm25(section_fts) LIMIT 1",
        (fts_all(list(parsed.terms)), low, high),
    ).fetchone()
    if row is None:
        return None
    ordinal, version, path, start, end = conn.execute(
        "SELECT ordinal, version, heading_path, start, end FROM sections WHERE section_rowid=?", (row[0],)
    ).fetchone()
    return SectionInfo(ordinal, version, json.loads(path), start, end)
