"""The full-text index: its tables, how it is kept up to date as memories change, and its upkeep.

Each indexed document also keeps its fields' tokens (cut and stemmed by the index's own
tokenizer, space-separated), so ranking a candidate reads them instead of tokenising its text on
every query. The query engine that reads them is :mod:`projections.search.queries`."""

from __future__ import annotations

import weakref

import apsw

from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import Event, MemoryRecorded, MemoryUpdated
from fact_ledger.ledger.text import index_text
from fact_ledger.projections.memories import memory_id_of
from fact_ledger.projections.runner import DeferringProjector

_SCHEMA = """
CREATE TABLE IF NOT EXISTS search_docs(
    memory_id INTEGER PRIMARY KEY,
    subject   TEXT NOT NULL,
    body      TEXT NOT NULL,
    tags      TEXT NOT NULL,
    tokens    TEXT NOT NULL  -- subject, body and tags tokens: space-separated, fields joined by TOKEN_FIELDS
);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
    subject, body, tags,
    content='search_docs', content_rowid='memory_id',
    tokenize='porter unicode61 remove_diacritics 2'
);
"""
_INSERT_DOC = "INSERT INTO search_docs(memory_id, subject, body, tags, tokens) VALUES(?,?,?,?,?)"
_TOKENIZER = ("porter", ["unicode61", "remove_diacritics", "2"])
_tokenizers: weakref.WeakKeyDictionary[apsw.Connection, apsw.FTS5Tokenizer] = weakref.WeakKeyDictionary()


def tokens(conn: apsw.Connection, text: str) -> list[str]:
    """``text`` cut and stemmed exactly as the index does it (the same FTS5 tokenizer)."""
    if not text:
        return []
    tokenizer = _tokenizers.get(conn)
    if tokenizer is None:
        tokenizer = _tokenizers[conn] = conn.fts5_tokenizer(*_TOKENIZER)
    return tokenizer(text.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False, include_colocated=False)


TOKEN_FIELDS = "\n"  # unicode61 separates on whitespace: no token holds a newline or a space


def doc_tokens(conn: apsw.Connection, doc: tuple[str, str, str]) -> str:
    """The ``tokens`` column of one document: what the index's tokenizer makes of each field."""
    return TOKEN_FIELDS.join(" ".join(tokens(conn, text)) for text in doc)


AUTOMERGE = 0  # see tune_for_small_writes
CRISIS_MERGE = 8


def tune_for_small_writes(conn: apsw.Connection, table: str) -> None:
    """Keep FTS5's merge work out of the inline write path's tail latency.

    With automerge on, FTS5 pays its merge debt in lumps: every 64 leaf pages written it merges
    64 x (number of levels) pages inside one COMMIT. One small segment per remember makes that a
    400-700 page commit (20-40 ms) every ~64 writes. With automerge off only crisis merges run:
    ``CRISIS_MERGE`` segments of one level become one of the next. At 8 that is a few pages
    every 8 writes, ~40 pages (< 5 ms) every 64 and a few hundred every 512; at FTS5's default
    of 16 the second step was ~130 pages (6-7 ms) every 256 writes, per index: enough to set the
    p99 of remember. Fewer segments per level also keep queries short. The settings are stored
    in the index's config table, so they hold for every process.
    """
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('automerge', {AUTOMERGE})")
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('crisismerge', {CRISIS_MERGE})")


def compact(conn: apsw.Connection, table: str) -> None:
    """After a bulk build: one segment at the top level, out of reach of the small crisis merges."""
    conn.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")


class SearchProjector(DeferringProjector):
    name = "search"
    version = 5
    tables = ("search_docs",)
    handles = frozenset({"MemoryRecorded", "MemoryUpdated"})
    # No write decides on full text but a cancellation's (server/app/writes.py settles first):
    # folded after commit, from its own table, the event and the memory's fixed id.
    after_commit = True

    deferrable = frozenset({"MemoryRecorded"})  # a creation reads nothing

    @property
    def _bulk(self) -> bool:
        return self._pending is not None

    def create(self, conn: apsw.Connection) -> None:
        self._pending = None
        conn.execute(_SCHEMA)
        tune_for_small_writes(conn, "search_fts")

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS search_fts; DROP TABLE IF EXISTS search_docs")

    def end_rebuild(self, conn: apsw.Connection) -> None:
        # During a rebuild only search_docs is written: one FTS 'rebuild' at the end is ~2.6x
        # faster than indexing row by row.
        super().end_rebuild(conn)
        conn.execute("INSERT INTO search_fts(search_fts) VALUES('rebuild')")
        compact(conn, "search_fts")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if isinstance(data, MemoryRecorded):
            doc = (index_text(data.subject), index_text(data.content), index_text(" ".join(data.tags)))
            if self._pending is not None:
                self._pending.add(_INSERT_DOC, (event.position, *doc, doc_tokens(conn, doc)))
                return
            self._write(conn, event.position, doc)
        elif isinstance(data, MemoryUpdated) and (
            data.content is not None or data.subject is not None or data.tags is not None
        ):
            memory_id = memory_id_of(conn, data.memory)
            row = conn.execute("SELECT subject, body, tags FROM search_docs WHERE memory_id=?", (memory_id,)).fetchone()
            if row is None:
                return
            doc = (
                index_text(data.subject) if data.subject is not None else row[0],
                index_text(data.content) if data.content is not None else row[1],
                index_text(" ".join(data.tags)) if data.tags is not None else row[2],
            )
            if not self._bulk:
                conn.execute(
                    "INSERT INTO search_fts(search_fts, rowid, subject, body, tags) VALUES('delete', ?, ?, ?, ?)",
                    (memory_id, *row),
                )
            conn.execute("DELETE FROM search_docs WHERE memory_id=?", (memory_id,))
            self._write(conn, memory_id, doc)

    def _write(self, conn: apsw.Connection, memory_id: int, doc: tuple[str, str, str]) -> None:
        conn.execute(_INSERT_DOC, (memory_id, *doc, doc_tokens(conn, doc)))
        if not self._bulk:
            conn.execute("INSERT INTO search_fts(rowid, subject, body, tags) VALUES(?,?,?,?)", (memory_id, *doc))
