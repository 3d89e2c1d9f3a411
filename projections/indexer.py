"""Feeding the vectors read model after commit: embed outside any transaction, write briefly.

One step of :class:`Indexer`:

1. in a read snapshot, take the memories changed after the vectors' checkpoint (oldest change
   first) and drop those whose stored vector already matches their text (a status change);
2. look their passages up in the derived cache; embed the missing ones with the model, holding
   no lock at all;
3. in one short write transaction, store the new cache entries, upsert the vectors and move the
   checkpoint to the last change covered.

A second stage then looks, for each vector written since its own mark, for nearest neighbours
that make a semantic notice (:mod:`projections.notices`). It runs after the vectors, so a
rebuild from cached embeddings is not slowed by it, and it writes its rows and mark in one
short transaction as well.

Two indexers on one file (the server's worker and ``ledger reembed``) do the same work twice at
worst: the writes are idempotent upserts and a checkpoint never moves back. The model belongs
to the caller: an object with ``model_id``, ``dim`` and ``embed_passages(texts) -> [bytes]``
(float32, L2-normalised), e.g. :class:`projections.embedding.Embedder`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, Protocol

from fact_ledger.ledger.store import EventStore
from fact_ledger.projections import derived, notices, vectors
from fact_ledger.projections.sections import ROWID_SHIFT

Progress = Callable[[int, int], None]
EMBED_BATCH = 16  # passages embedded between two commits (bounds the work lost to a crash)
SCAN = 2000  # changed memories read per snapshot
NOTICE_BATCH = 256


class PassageEmbedder(Protocol):
    model_id: str
    dim: int

    def embed_passages(self, texts: list[str]) -> list[bytes]: ...


def _sections_of(conn: Any, contents: dict[int, str]) -> dict[int, list[tuple[int, str]]]:
    """Each long memory's sections as (section rowid, passage text), from the sections read
    model (folded in the same transaction as the memory, so it matches the content read)."""
    if not contents:
        return {}
    out: dict[int, list[tuple[int, str]]] = {}
    rows = conn.execute(
        "SELECT s.section_rowid, s.memory_id, s.heading_path, s.start, s.end FROM json_each(?) j "
        "CROSS JOIN sections s ON s.section_rowid >= j.value << ? AND s.section_rowid < (j.value + 1) << ? "
        "ORDER BY s.section_rowid",
        (json.dumps(list(contents)), ROWID_SHIFT, ROWID_SHIFT),
    )
    for rowid, memory_id, path, start, end in rows:
        out.setdefault(memory_id, []).append(
            (rowid, vectors.section_passage(contents[memory_id], json.loads(path), start, end))
        )
    return out


class VecUnavailable(RuntimeError):
    """sqlite-vec cannot be loaded into this connection."""


class Indexer:
    def __init__(
        self,
        store: EventStore,
        embedder: PassageEmbedder,
        *,
        batch: int = EMBED_BATCH,
        thresholds: notices.Thresholds | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.batch = batch
        self.thresholds = thresholds or notices.Thresholds()
        if not vectors.load_vec(store.conn):
            raise VecUnavailable(vectors.vec_problem() or "sqlite-vec unavailable")

    @property
    def conn(self) -> Any:
        return self.store.conn

    # -- bookkeeping -------------------------------------------------------------------------
    def prepare(self, *, rebuild: bool = False) -> None:
        """Make the tables hold this model's vectors: start over on a new model (or on request)."""
        model_id, dim = self.embedder.model_id, self.embedder.dim

        def work() -> None:
            if rebuild or not vectors.current(self.conn, model_id, dim):
                vectors.reset(self.conn, model_id, dim)
                notices.drop(self.conn)
            notices.create(self.conn)

        with self.store.snapshot():
            current = vectors.current(self.conn, model_id, dim)
        if rebuild or not current:
            self.store.write(work)

    def lag(self) -> int:
        """Log positions the vectors are behind (0: every memory has its vector)."""
        with self.store.snapshot():
            return self.store.last_position() - vectors.checkpoint(self.conn)

    def pending(self) -> int:
        with self.store.snapshot():
            return self.conn.execute(
                "SELECT count(*) FROM memories WHERE last_position > ?", (vectors.checkpoint(self.conn),)
            ).get

    # -- running -----------------------------------------------------------------------------
    def run(
        self, progress: Progress | None = None, stop: threading.Event | None = None, *, rebuild: bool = False
    ) -> dict[str, int]:
        """Catch the vectors (then the notices) up with the log; resumable at any point."""
        self.prepare(rebuild=rebuild)
        total = self.pending()
        done = embedded = 0
        while stop is None or not stop.is_set():
            seen, fresh = self.step(stop)
            if not seen:
                break
            done, embedded = done + seen, embedded + fresh
            if progress:
                progress(min(done, total), max(total, done))
        found = self.find_notices(stop)
        return {
            "memories": done,
            "embedded": embedded,
            "cached": done - embedded,
            "new_notices": found,
            "lag": self.lag(),
        }

    def step(self, stop: threading.Event | None = None) -> tuple[int, int]:
        """One snapshot's worth of changed memories: (memories covered, passages embedded)."""
        conn = self.conn
        model_id = self.embedder.model_id
        with self.store.snapshot():
            head = self.store.last_position()
            start = vectors.checkpoint(conn)
            if start >= head:
                return 0, 0
            rows = vectors.changed(conn, start, SCAN)
            keys = {r[0]: derived.embedding_key(model_id, vectors.passage_text(r[2])) for r in rows}
            stored = vectors.keys_of(conn, list(keys))
            todo = [r for r in rows if stored.get(r[0]) != keys[r[0]]]
            parts = _sections_of(conn, {r[0]: r[2] for r in todo})
            section_keys = {
                rowid: derived.embedding_key(model_id, text) for items in parts.values() for rowid, text in items
            }
            wanted = [keys[r[0]] for r in todo] + list(section_keys.values())
            cached = derived.cached_values(conn, wanted)
        complete = len(rows) < SCAN  # everything up to ``head`` is in ``rows``
        if not rows:
            self.store.write(lambda: vectors.set_checkpoint(conn, head))
            return 0, 0
        embedded = 0
        chunk: list[tuple[int, str, str, int]] = []
        uncached = 0
        todo_ids = {r[0] for r in todo}
        for i, row in enumerate(rows):
            if row[0] in todo_ids:
                chunk.append(row)
                uncached += keys[row[0]] not in cached
                uncached += sum(section_keys[rowid] not in cached for rowid, _ in parts.get(row[0], ()))
            last = i == len(rows) - 1
            boundary = last or rows[i + 1][3] != row[3]
            if boundary and (last or uncached >= self.batch):
                mark = head if last and complete else row[3]
                embedded += self._flush(chunk, keys, parts, section_keys, cached, set(stored), mark)
                chunk, uncached = [], 0
                if stop is not None and stop.is_set():
                    return i + 1, embedded
        return len(rows), embedded

    def _flush(
        self,
        chunk: list[tuple[int, str, str, int]],
        keys: dict[int, bytes],
        parts: dict[int, list[tuple[int, str]]],
        section_keys: dict[int, bytes],
        cached: dict[bytes, bytes],
        had_vector: set[int],
        mark: int,
    ) -> int:
        passages = [(keys[r[0]], vectors.passage_text(r[2])) for r in chunk]
        passages += [(section_keys[rowid], text) for r in chunk for rowid, text in parts.get(r[0], ())]
        texts = list(dict.fromkeys(text for key, text in passages if key not in cached))
        fresh: dict[bytes, bytes] = {}
        if texts:  # the model runs here, outside any transaction
            for text, blob in zip(texts, self.embedder.embed_passages(texts), strict=True):
                fresh[derived.embedding_key(self.embedder.model_id, text)] = blob
        found = {**cached, **fresh}
        rows = [
            (memory_id, workspace, keys[memory_id], found[keys[memory_id]])
            for memory_id, workspace, _content, _pos in chunk
        ]
        section_rows = [
            (rowid, memory_id, workspace, section_keys[rowid], found[section_keys[rowid]])
            for memory_id, workspace, _content, _pos in chunk
            for rowid, _ in parts.get(memory_id, ())
        ]

        def work() -> None:
            derived.store(self.conn, sorted(fresh.items()))
            vectors.write(self.conn, rows)
            vectors.write_sections(self.conn, [r[0] for r in chunk], section_rows)
            notices.write(self.conn, [r[0] for r in chunk if r[0] in had_vector], [])
            vectors.set_checkpoint(self.conn, mark)

        self.store.write(work)
        return len(fresh)

    # -- notices -----------------------------------------------------------------------------
    def find_notices(self, stop: threading.Event | None = None) -> int:
        """Look for semantic notices around every vector written since the last look."""
        conn = self.conn
        found = 0
        while stop is None or not stop.is_set():
            with self.store.snapshot():
                mark = int(
                    conn.execute("SELECT coalesce((SELECT value FROM vectors_meta WHERE name='notices_seq'), 0)").get
                )
                rows = conn.execute(
                    "SELECT v.memory_id, v.workspace, m.content, v.embedding, v.seq FROM vectors v "
                    "JOIN memories m ON m.memory_id = v.memory_id WHERE v.seq > ? ORDER BY v.seq LIMIT ?",
                    (mark, NOTICE_BATCH),
                ).fetchall()
                if not rows:
                    return found
                items = [(r[0], r[1], r[2], bytes(r[3])) for r in rows]
                # Neighbours among the vectors already looked at (and the batch itself).
                detected = notices.detect(conn, items, self.thresholds, before_seq=mark)
            last = rows[-1][4]

            def work(detected: list[tuple[Any, ...]] = detected, last: int = last) -> None:
                notices.write(self.conn, [], detected)
                self.conn.execute(
                    "INSERT OR REPLACE INTO vectors_meta(name, value) VALUES('notices_seq', ?)", (str(last),)
                )

            self.store.write(work)
            found += len(detected)
        return found
