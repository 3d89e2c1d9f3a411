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
(float32, L2-normalised), e.g. :class:`projections.runtime.embedding.Embedder`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections import centre, derived, notices, vectors
from fact_ledger.projections.search.queries import session_neighbours
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


class Context(NamedTuple):
    """One memory's context vector to write (``key`` and ``text``) or to drop (both None)."""

    memory_id: int
    workspace: str
    key: bytes | None
    text: str | None


def _contexts_of(conn: Any, ids: list[int], model_id: str) -> dict[int, list[Context]]:
    """The context vectors that changes to ``ids`` make stale, grouped by the changed memory
    that owns the work: each memory's own (its text changed) and that of the memory after it
    in its session (what it follows changed). Contexts whose stored key still matches are left
    out; a memory that no longer has a context (long, or first in its session) is to drop."""
    if not ids:
        return {}
    before: dict[int, int | None] = {}
    owner: dict[int, int] = {}
    for memory_id, (previous, following) in session_neighbours(conn, ids).items():
        before[memory_id] = previous
        owner[memory_id] = memory_id
        if following is not None:
            before.setdefault(following, memory_id)
            owner.setdefault(following, memory_id)
    involved = set(before) | {p for p in before.values() if p is not None}
    info = {
        r[0]: (r[1], r[2], r[3])
        for r in conn.execute(
            "SELECT m.memory_id, m.workspace, m.content, m.status FROM json_each(?) j "
            "CROSS JOIN memories m ON m.memory_id = j.value",
            (json.dumps(sorted(involved)),),
        )
    }
    stored = vectors.context_keys_of(conn, list(before))
    out: dict[int, list[Context]] = {}
    for memory_id in sorted(before):
        workspace, content, status = info[memory_id]
        previous = before[memory_id]
        # An erased memory is never embedded again, in context either: neither its own context
        # nor as the context of the memory after it (its content is the "[erased]" placeholder;
        # the erasure dropped that context, and a rebuild or an edit of the next memory made it
        # again from the placeholder).
        erased = status == "erased" or (previous is not None and info[previous][2] == "erased")
        text = vectors.context_passage(info[previous][1], content) if previous is not None and not erased else None
        key = derived.embedding_key(model_id, text) if text is not None else None
        if stored.get(memory_id) != key:
            out.setdefault(owner[memory_id], []).append(Context(memory_id, workspace, key, text))
    return out


class _Plan(NamedTuple):
    """What one snapshot found to do, shared by the batches that write it."""

    keys: dict[int, bytes]  # memory id -> its passage's cache key
    todo: set[int]  # memories whose own vector is stale
    parts: dict[int, list[tuple[int, str]]]  # memory id -> its sections (rowid, passage)
    section_keys: dict[int, bytes]
    contexts: dict[int, list[Context]]  # changed memory id -> stale context vectors it owns
    cached: dict[bytes, bytes]
    had_vector: set[int]

    def keys_of(self, memory_id: int) -> list[bytes]:
        """Every cache key writing ``memory_id``'s share of the work needs."""
        out = [self.keys[memory_id]] if memory_id in self.todo else []
        out += [self.section_keys[rowid] for rowid, _ in self.parts.get(memory_id, ())]
        return out + [c.key for c in self.contexts.get(memory_id, ()) if c.key is not None]


class Counts(NamedTuple):
    """What a run wrote, in passages: a memory's own text is one and each of its sections one
    more (so a memory with sections counts several), ``embedded + cached`` is the memory and
    section vectors written, neither is ever negative, and a status change (nothing written)
    counts in neither. Context passages are counted apart (``context_embedded``). Before, the
    cached figure was memories looked at less passages embedded, two units: -6 for a memory of
    two long sections, and 1 after a rebuild that took eleven vectors from the cache."""

    embedded: int  # passages the model embedded
    cached: int  # memory and section vectors written from an embedding already made (the cache)
    context_embedded: int  # context passages the model embedded

    def plus(self, other: Counts) -> Counts:
        return Counts(*(a + b for a, b in zip(self, other, strict=True)))


class VecUnavailable(RuntimeError):
    """sqlite-vec cannot be loaded into this connection."""


NOTICES_BASIS = "notices_basis"  # vectors_meta: the checksum of the vectors the kept notices were found on


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
        with self.store.snapshot():
            current = vectors.current(self.conn, model_id, dim)
            named = vectors.meta(self.conn, "index_id") is not None
        if current and not rebuild:
            if not named:  # vectors stored before the index's snapshot had a name for them
                self.store.write(lambda: vectors.ensure_index_id(self.conn))
            return
        centre_of_model, fresh = self._centre()

        def work() -> None:
            same_model = vectors.current(self.conn, model_id, dim)
            if rebuild or not same_model:
                # The same model rebuilt: its notices stay until the vectors are back, then
                # they are kept if the vectors came back the same (find_notices), else redone.
                basis = vectors.own_checksum(self.conn) if same_model and self._notices_complete() else None
                derived.store(self.conn, sorted(fresh.items()))
                vectors.reset(self.conn, model_id, dim, centre_of_model)
                if basis is None:
                    notices.drop(self.conn)
                else:
                    vectors.set_meta(self.conn, NOTICES_BASIS, basis)
            notices.create(self.conn)

        self.store.write(work)

    def _centre(self) -> tuple[bytes, dict[bytes, bytes]]:
        """The model's centre (:mod:`projections.centre`) and the reference embeddings the cache
        lacked (embedded here, outside any transaction, for the caller to store)."""
        model_id = self.embedder.model_id
        texts = [vectors.passage_text(p) for p in centre.REFERENCE_PASSAGES]
        keys = [derived.embedding_key(model_id, t) for t in texts]
        with self.store.snapshot():
            cached = derived.cached_values(self.conn, keys)
        missing = [t for t, k in zip(texts, keys, strict=True) if k not in cached]
        embedded = self.embedder.embed_passages(missing) if missing else []
        fresh = {derived.embedding_key(model_id, t): blob for t, blob in zip(missing, embedded, strict=True)}
        found = {**cached, **fresh}
        return centre.mean([found[k] for k in keys], self.embedder.dim), fresh

    def lag(self) -> int:
        """Log positions the vectors are behind (0: every memory has its vector)."""
        with self.store.snapshot():
            return self.store.last_position() - vectors.checkpoint(self.conn)

    def to_look_at(self) -> int:
        """The memories a run reads (changed after the vectors' checkpoint, not erased): the
        total its progress counts to; most of those whose text did not change embed nothing."""
        with self.store.snapshot():
            return self.conn.execute(
                "SELECT count(*) FROM memories WHERE last_position > ? AND status <> 'erased'",
                (vectors.checkpoint(self.conn),),
            ).get

    # -- running -----------------------------------------------------------------------------
    def run(
        self,
        progress: Progress | None = None,
        stop: threading.Event | None = None,
        *,
        rebuild: bool = False,
        notices: bool = True,
    ) -> dict[str, int]:
        """Catch the vectors (then, unless ``notices`` is False, the notices) up with the log;
        resumable at any point. ``find`` uses the vectors as soon as they are caught up."""
        self.prepare(rebuild=rebuild)
        total = self.to_look_at()
        done = 0
        counts = Counts(0, 0, 0)
        while stop is None or not stop.is_set():
            seen, made = self.step(stop)
            if not seen:
                break
            done, counts = done + seen, counts.plus(made)
            if progress:
                progress(min(done, total), max(total, done))
        found = self.find_notices(stop) if notices else 0
        return {
            "memories": done,
            "embedded": counts.embedded,
            "cached": counts.cached,
            "context_embedded": counts.context_embedded,
            "new_notices": found,
            "lag": self.lag(),
        }

    def step(self, stop: threading.Event | None = None) -> tuple[int, Counts]:
        """One snapshot's worth of changed memories: the memories covered, and what was written."""
        conn = self.conn
        model_id = self.embedder.model_id
        with self.store.snapshot():
            head = self.store.last_position()
            start = vectors.checkpoint(conn)
            if start >= head:
                return 0, Counts(0, 0, 0)
            rows = vectors.changed(conn, start, SCAN)
            keys = {r[0]: derived.embedding_key(model_id, vectors.passage_text(r[2])) for r in rows}
            stored = vectors.keys_of(conn, list(keys))
            todo = {r[0] for r in rows if stored.get(r[0]) != keys[r[0]]}
            parts = _sections_of(conn, {r[0]: r[2] for r in rows if r[0] in todo})
            section_keys = {
                rowid: derived.embedding_key(model_id, text) for items in parts.values() for rowid, text in items
            }
            contexts = _contexts_of(conn, [r[0] for r in rows], model_id)
            wanted = [keys[i] for i in todo] + list(section_keys.values())
            wanted += [c.key for items in contexts.values() for c in items if c.key is not None]
            cached = derived.cached_values(conn, wanted)
        complete = len(rows) < SCAN  # everything up to ``head`` is in ``rows``
        if not rows:
            self.store.write(lambda: vectors.set_checkpoint(conn, head))
            return 0, Counts(0, 0, 0)
        plan = _Plan(keys, todo, parts, section_keys, contexts, cached, set(stored))
        made = Counts(0, 0, 0)
        chunk: list[tuple[int, str, str, int]] = []
        uncached = 0
        for i, row in enumerate(rows):
            if row[0] in todo or row[0] in contexts:
                chunk.append(row)
                uncached += sum(key not in cached for key in plan.keys_of(row[0]))
            last = i == len(rows) - 1
            boundary = last or rows[i + 1][3] != row[3]
            if boundary and (last or uncached >= self.batch):
                mark = head if last and complete else row[3]
                made = made.plus(self._flush(chunk, plan, mark))
                chunk, uncached = [], 0
                if stop is not None and stop.is_set():
                    return i + 1, made
        return len(rows), made

    def _flush(self, chunk: list[tuple[int, str, str, int]], plan: _Plan, mark: int) -> Counts:
        own = [r for r in chunk if r[0] in plan.todo]
        passages = [vectors.passage_text(r[2]) for r in own]
        passages += [text for r in own for _, text in plan.parts.get(r[0], ())]
        context_items = [c for r in chunk for c in plan.contexts.get(r[0], ())]
        cached, model_id = plan.cached, self.embedder.model_id
        texts = [t for t in dict.fromkeys(passages) if derived.embedding_key(model_id, t) not in cached]
        context_texts = [
            t
            for t in dict.fromkeys(c.text for c in context_items if c.key is not None and c.key not in cached)
            if t not in texts and t is not None
        ]
        fresh: dict[bytes, bytes] = {}
        if texts or context_texts:  # the model runs here, outside any transaction
            everything = texts + context_texts
            for text, blob in zip(everything, self.embedder.embed_passages(everything), strict=True):
                fresh[derived.embedding_key(model_id, text)] = blob
        found = {**cached, **fresh}
        rows = [
            (memory_id, workspace, plan.keys[memory_id], found[plan.keys[memory_id]])
            for memory_id, workspace, *_ in own
        ]
        section_rows = [
            (rowid, memory_id, workspace, plan.section_keys[rowid], found[plan.section_keys[rowid]])
            for memory_id, workspace, *_ in own
            for rowid, _ in plan.parts.get(memory_id, ())
        ]
        context_rows = [(c.memory_id, c.workspace, c.key, found[c.key]) for c in context_items if c.key is not None]
        dropped = [c.memory_id for c in context_items if c.key is None]

        def work() -> None:
            derived.store(self.conn, sorted(fresh.items()))
            vectors.write(self.conn, rows)
            vectors.write_sections(self.conn, [r[0] for r in own], section_rows)
            vectors.write_contexts(self.conn, context_rows, dropped)
            notices.write(self.conn, [r[0] for r in own if r[0] in plan.had_vector], [])
            vectors.set_checkpoint(self.conn, mark)

        self.store.write(work)
        written = len(rows) + len(section_rows)  # every text embedded here is one of them
        return Counts(embedded=len(texts), cached=written - len(texts), context_embedded=len(context_texts))

    # -- notices -----------------------------------------------------------------------------
    def find_notices(self, stop: threading.Event | None = None) -> int:
        """Look for semantic notices around every vector written since the last look."""
        conn = self.conn
        if not self._settle_rebuilt_notices():
            return 0
        found = 0
        while stop is None or not stop.is_set():
            with self.store.snapshot():
                mark = int(vectors.meta(conn, "notices_seq") or 0)
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
                vectors.set_meta(self.conn, "notices_seq", str(last))

            self.store.write(work)
            found += len(detected)
        return found

    def _notices_complete(self) -> bool:
        """Every vector has been looked at for notices (a half-done look is not worth keeping)."""
        seen = int(vectors.meta(self.conn, "notices_seq") or 0)
        return seen >= vectors.last_seq(self.conn)

    def _settle_rebuilt_notices(self) -> bool:
        """After a rebuild of this model's vectors (:meth:`prepare`): once they have caught up,
        keep the notices when the memories' own vectors came back exactly as they were (a
        rebuild that changed nothing looks at no neighbour again; sections and contexts play no
        part in notices), else drop them to be found afresh. False while the
        vectors still lag: the notices wait for them."""
        with self.store.snapshot():
            basis = vectors.meta(self.conn, NOTICES_BASIS)
            if basis is None:
                return True
            if self.store.last_position() > vectors.checkpoint(self.conn):
                return False
            same = vectors.own_checksum(self.conn) == basis

        def work() -> None:
            if same:  # every vector was looked at already, against the same others
                vectors.set_meta(self.conn, "notices_seq", str(vectors.last_seq(self.conn)))
            else:
                notices.drop(self.conn)
                notices.create(self.conn)
                vectors.set_meta(self.conn, "notices_seq", "0")
            vectors.set_meta(self.conn, NOTICES_BASIS, None)

        self.store.write(work)
        return True
