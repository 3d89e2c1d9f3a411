"""Nearest neighbours over the vectors read model: binary candidates, exact cosines.

sqlite-vec's ``vec0`` scans every row, and its top-k merge grows with k: at 100k memories a
``bit[384]`` KNN measured 17 ms at k=10 and 177 ms at k=200, ``int8`` 195-370 ms, ``float``
~64 ms. Candidates are therefore taken in process from sign bits (48 bytes a vector for 384
dimensions, 4.8 MB at 100k), by Hamming distance with numpy (~0.8 ms at 100k), and re-scored
with the exact cosine that sqlite-vec's ``vec_distance_cosine`` computes from the plain table of
float32 vectors (~0.3 ms for 50 ids).

The bits are those of each vector minus the model's centre (:mod:`projections.centre`), the
query's likewise: raw signs of a sentence encoder's vectors are nearly the same for every
passage, centred ones split them. For ``find``, a memory with a context vector is ranked by the
mean of its two cosines (its in-context closeness, :class:`_Blends`), which is the query's dot product with the mean of
its two vectors; the index keeps the centred sign bits of that mean (the "blend") in the same
slots as each memory's own bits, so one scan of 48 bytes a memory ranks by what fusion uses,
and the blend itself as centred int8 (388 bytes a memory, 39 MB at 100k; float16 took 768), so a
candidate's closeness is one dot product in process instead of two vector rows read from the
file (the rounding moves a closeness by a few 1e-4; profiled at 100k, 0.4 ms with the filter
statement the nearest still need, against 0.9 ms for the statement that read both vectors and
filtered).

A :class:`BitIndex` mirrors a table per connection; it reads only rows written since it last
looked (a ``seq`` column that every write numbers past any earlier one), drops rows when the
table's count of deletes moved, and starts over when the model changed (the table's
``generation``). The index is a cache: its bits are cut from the stored embeddings; what one
process cut is saved for the next (:mod:`projections.knn_snapshot`), never read as a source.
From 200k memories the in-context scan reads coarse cells of them (:mod:`projections.knn_cells`),
and a scope of a few small workspaces reads those workspaces' rows alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, BinaryIO

import apsw
import msgspec

from fact_ledger.projections import knn_cells, knn_snapshot, vectors

LOAD_BATCH = 4096  # rows read into the index at a time
OVERSAMPLE = 50  # binary candidates re-scored exactly per query (more: better recall, slower)
ROW_BLOCK = 4096  # rows per block of the blends' int8 values (1.6 MB at 384 dimensions)
SNAPSHOT_ARRAYS = frozenset({"ids", "spaces", "bits", "blend_bits", "values", "scales", "with_context"})
BY_OFFSET = frozenset({"values", "scales"})  # read from the snapshot a row at a time, never held ...
HOLD_BLENDS_UP_TO = 128 * 2**20  # ... unless they fit in this many bytes (~330k memories at 384 dimensions)
SNAPSHOT_AFTER = 20_000  # rows read from the tables before the index is saved for the next process


TABLES = {"vectors": "memory_id", "section_vectors": "section_rowid"}  # id column (blends: _Blends)


class BitIndex:
    """The centred sign bits of every vector of one table, as a (words x rows) uint64 matrix,
    with workspace codes; for ``vectors``, on first use, also each memory's blend bits in the
    same slots (:meth:`nearest_in_context`)."""

    def __init__(self, table: str = "vectors") -> None:
        import numpy as np  # the [semantic] extra brings numpy (llama-cpp-python needs it)

        self.np = np
        self.table = table
        self.generation = -1
        self.seq = 0
        self.deleted = 0
        self.words = 0
        self.centre = np.zeros(0, dtype=np.float32)
        self.ids = np.zeros(0, dtype=np.int64)
        self.bits = np.zeros((0, 0), dtype=np.uint64)
        self.spaces = np.zeros(0, dtype=np.int32)
        self.slot = _Slots(np, dense=table == "vectors")
        self.codes: dict[str, int] = {}
        self.blends: _Blends | None = None  # loaded by the first in-context look
        self.stamp: tuple[tuple[str, Any], ...] = ()  # vectors.stamp at the last look
        self._scratch = np.zeros(0, dtype=np.uint64)  # _distances' buffers
        self._counts = np.zeros((0, 0), dtype=np.uint8)
        self.fresh_rows = 0  # rows read from the tables since the snapshot was saved or restored
        self._by_space: dict[int, Any] | None = None  # workspace code -> its slots (_slots_in)

    def refresh(self, conn: apsw.Connection, *, contexts: bool = False) -> None:
        stamp = vectors.stamp(conn)
        if stamp == self.stamp and (self.blends is not None or not contexts):
            return  # nothing was written or deleted since the last look
        self._follow(conn, contexts)
        self.stamp = stamp

    def _follow(self, conn: apsw.Connection, contexts: bool) -> None:
        state = vectors.state(conn)
        if state is None:
            self.__init__(self.table)  # type: ignore[misc]  (no vectors: empty index)
            return
        if state.generation != self.generation:
            self._start(conn, state)
        newest = conn.execute(f"SELECT max(seq) FROM {self.table}").get or 0
        touched = self.np.zeros(0, dtype=self.np.int64)
        if newest > self.seq:
            touched = self._load(
                conn.execute(
                    f"SELECT {TABLES[self.table]}, workspace, embedding FROM {self.table} WHERE seq > ? ORDER BY seq",
                    (self.seq,),
                )
            )
            self.seq = newest
        deleted = vectors.deletions(conn, self.table)
        if deleted != self.deleted:  # sections and contexts are deleted, not only overwritten
            self._forget(conn)
            self.deleted = deleted
        if contexts and self.blends is None:
            self.blends = _Blends(self)
        if self.blends is not None:  # kept in step once loaded, whoever looks
            self.blends.refresh(conn, touched)
            self.blends.lay_out_cells()

    def _start(self, conn: apsw.Connection, state: vectors.State) -> None:
        """Empty, for the vectors of ``state`` (a new model, or a first look)."""
        self.__init__(self.table)  # type: ignore[misc]
        self.generation = state.generation
        self.words = (state.dim + 63) // 64
        self.centre = self.np.frombuffer(vectors.centre(conn), dtype=self.np.float32)
        if len(self.centre) != state.dim:  # no centre stored: the raw signs
            self.centre = self.np.zeros(state.dim, dtype=self.np.float32)

    def restore(self, conn: apsw.Connection) -> bool:
        """Take the index from its snapshot (:mod:`projections.knn_snapshot`) when it was cut from
        these vectors; the next :meth:`refresh` reads only what was written since. False (and
        a snapshot of other vectors deleted) otherwise."""
        np = self.np
        path = knn_snapshot.path_for(conn)
        state, index_id = vectors.state(conn), vectors.meta(conn, "index_id")
        if self.table != "vectors" or path is None or state is None or index_id is None:
            return False
        found = knn_snapshot.load(np, path, by_offset=BY_OFFSET)
        if found is None:
            return False
        header, arrays, file = found
        if not arrays.keys() >= SNAPSHOT_ARRAYS:
            file.close()
            knn_snapshot.discard(path)
            return False
        newest_own, newest_context = conn.execute(
            "SELECT (SELECT coalesce(max(seq), 0) FROM vectors), (SELECT coalesce(max(seq), 0) FROM context_vectors)"
        ).fetchone()
        if (
            (header.index_id, header.generation, header.words) != (index_id, state.generation, (state.dim + 63) // 64)
            or (header.own_deleted, header.context_deleted)
            != (vectors.deletions(conn, "vectors"), vectors.deletions(conn, "context_vectors"))
            or header.own_seq > newest_own
            or header.context_seq > newest_context
        ):
            file.close()
            knn_snapshot.discard(path)
            return False
        self._start(conn, state)
        self.ids, self.spaces = np.array(arrays["ids"]), np.array(arrays["spaces"])
        self.bits = _widen(np, arrays["bits"], self.words, len(self.ids))
        self.slot.assign(self.ids, np.arange(len(self.ids)))
        self.codes = dict(header.codes)
        self.seq, self.deleted = header.own_seq, header.own_deleted
        self.blends = _Blends(self)
        self.blends.bits = _widen(np, arrays["blend_bits"], self.words, len(self.ids))
        self.blends.values.attach(file, arrays["values"], arrays["scales"], header.arrays["scales"][2][0])
        self.blends.with_context = np.array(arrays["with_context"])
        self.blends.seq, self.blends.deleted = header.context_seq, header.context_deleted
        if header.cells_trained:
            self.blends.cells = knn_cells.Cells(
                np, arrays["centroids"], arrays["cell_of"], self.blends.bits, self.spaces, header.cells_trained
            )
        return True

    def save(self, conn: apsw.Connection) -> bool:
        """Write the snapshot for the next process, then read the blends from it as the next
        process will (what the heap held goes back); False when there is nothing to save or it
        could not be written."""
        np = self.np
        path = knn_snapshot.path_for(conn)
        index_id, state = vectors.meta(conn, "index_id"), vectors.state(conn)
        if self.blends is None or path is None or index_id is None or state is None:
            return False
        if state.generation != self.generation:
            return False
        self.fresh_rows = 0  # saved or not, not tried again until as many rows again were read
        try:
            knn_snapshot.save(path, *self._snapshot(index_id))
        except OSError:
            return False
        if self.blends.values.held_whole():
            return True  # small enough that the next process holds them too: kept as they are
        found = knn_snapshot.load(np, path, offsets_only=True)
        if found is not None:  # the blends are read from the file from now on
            header, arrays, file = found
            rows = header.arrays["scales"][2][0]
            self.blends.values.attach(file, arrays["values"], arrays["scales"], rows)
            _give_back_memory()
        return True

    def _snapshot(self, index_id: str) -> tuple[dict[str, Any], dict[str, tuple[Any, Any, list[Any]]]]:
        """The snapshot's header fields and arrays (shape, dtype, chunks) for :meth:`save`."""
        np, blends, n = self.np, self.blends, len(self.ids)
        assert blends is not None
        header: dict[str, Any] = {
            "index_id": index_id,
            "generation": self.generation,
            "own_seq": self.seq,
            "own_deleted": self.deleted,
            "context_seq": blends.seq,
            "context_deleted": blends.deleted,
            "words": self.words,
            "codes": self.codes,
        }
        values, scales = blends.values.chunks(n)
        arrays = {
            "ids": ((n,), self.ids.dtype, [self.ids]),
            "spaces": ((n,), self.spaces.dtype, [self.spaces]),
            "bits": ((self.words, n), self.bits.dtype, [self.bits[w, :n] for w in range(self.words)]),
            "blend_bits": ((self.words, n), self.bits.dtype, [blends.bits[w, :n] for w in range(self.words)]),
            "values": ((len(values) * ROW_BLOCK, blends.values.dim), np.dtype(np.int8), values),
            "scales": ((len(scales) * ROW_BLOCK,), np.dtype(np.float32), scales),
            "with_context": ((n,), np.dtype(bool), [blends.with_context[:n]]),
        }
        if blends.cells is not None:
            header["cells_trained"] = blends.cells.trained_rows
            cell_of = np.full(n, -1, dtype=np.int32)
            cell_of[: min(n, len(blends.cells.cell_of))] = blends.cells.cell_of[:n]
            centroids = blends.cells.centroids
            arrays["centroids"] = (centroids.shape, centroids.dtype, [centroids])
            arrays["cell_of"] = ((n,), cell_of.dtype, [cell_of])
        return header, arrays

    def code(self, embeddings: list[bytes]) -> Any:
        """(words x len(embeddings)) uint64 sign bits of float32 ``embeddings`` minus the centre."""
        return self._signs(_floats(self.np, embeddings) - self.centre)

    def _signs(self, centred: Any) -> Any:
        np = self.np
        packed = np.packbits(centred > 0, axis=1, bitorder="little")
        if packed.shape[1] < self.words * 8:
            packed = np.pad(packed, ((0, 0), (0, self.words * 8 - packed.shape[1])))
        return np.ascontiguousarray(packed).view(np.uint64).T

    def _forget(self, conn: apsw.Connection) -> None:
        """Drop rows deleted since the last look (a memory edited shorter has fewer sections)."""
        np = self.np
        present = {r[0] for r in conn.execute(f"SELECT {TABLES[self.table]} FROM {self.table}")}
        keep = np.array([int(i) in present for i in self.ids], dtype=bool)
        self.ids, self.spaces = self.ids[keep], self.spaces[keep]
        self._by_space = None
        self.bits = _widen(np, self.bits[:, : len(keep)][:, keep], self.words, len(self.ids))
        self.slot = _Slots(np, dense=self.table == "vectors")
        self.slot.assign(self.ids, np.arange(len(self.ids)))
        self.blends = None  # slots moved: loaded again on the next in-context look

    def _load(self, rows: Iterable[tuple[Any, ...]]) -> Any:
        """Store (id, workspace, embedding) rows, a batch at a time (the whole table on first
        load: no list of 100k rows is ever held); new ids get slots at the end. Returns the
        slots written."""
        np = self.np
        touched = []
        rows = iter(rows)
        while batch := list(itertools.islice(rows, LOAD_BATCH)):
            row_ids = np.fromiter((r[0] for r in batch), dtype=np.int64, count=len(batch))
            slots = self.slot.lookup(row_ids)
            new = slots < 0
            if new.any():
                start, count = len(self.ids), int(new.sum())
                slots[new] = np.arange(start, start + count)
                self.ids = np.concatenate([self.ids, row_ids[new]])
                self.spaces = np.concatenate([self.spaces, np.zeros(count, dtype=np.int32)])
                self.bits = _widen(np, self.bits, self.words, start + count)
                self.slot.assign(row_ids[new], slots[new])
            codes = np.fromiter((self.codes.setdefault(r[1], len(self.codes)) for r in batch), np.int32, len(batch))
            if self._by_space is not None:
                if (self.spaces[slots[~new]] != codes[~new]).any():
                    self._by_space = None  # a memory moved to another workspace: sorted again when asked
                else:
                    for code in np.unique(codes[new]).tolist():
                        held = self._by_space.get(code, np.zeros(0, dtype=np.int64))
                        self._by_space[code] = np.concatenate([held, slots[new][codes[new] == code]])
            self.spaces[slots] = codes
            self.bits[:, slots] = self.code([r[2] for r in batch])
            self.fresh_rows += len(batch)
            touched.append(slots)
        return np.concatenate(touched) if touched else np.zeros(0, dtype=np.int64)

    def _distances(self, query: bytes, bits: Any) -> Any:
        """Hamming distance of each row of ``bits`` to the query's centred sign bits.

        Each word's bit counts go to their own row of a byte matrix, summed once at the end
        (0.6 against 1.1 ms for adding each word's counts to a 16-bit total as they come, on
        random bits at 100k rows of 6 words; on a real 100k ledger, hot in a tight loop, both
        took 0.66 ms). The buffers are kept between queries: fresh ones cost page faults at
        this size.
        """
        np = self.np
        n = min(len(self.ids), bits.shape[1])
        q = self.code([query])[:, 0]
        if self._counts.shape != (self.words, n):  # the first query, or a scope of another size (even none)
            self._scratch = np.empty(n, dtype=np.uint64)
            self._counts = np.empty((self.words, n), dtype=np.uint8)
        for w in range(self.words):
            np.bitwise_xor(bits[w, :n], q[w], out=self._scratch)
            np.bitwise_count(self._scratch, out=self._counts[w])
        return self._counts.sum(axis=0, dtype=np.uint16)

    def nearest(
        self,
        query: bytes,
        k: int,
        workspaces: tuple[str, ...] | None = None,
        exclude: frozenset[int] = frozenset(),
    ) -> list[int]:
        """Ids of (about) the ``k`` rows closest to ``query`` (float32 bytes) in Hamming distance,
        in the given workspaces."""
        if not len(self.ids) or k <= 0:
            return []
        return self._closest(self._distances(query, self.bits), k, workspaces, exclude)

    def nearest_in_context(self, query: bytes, k: int, workspaces: tuple[str, ...] | None = None) -> list[int]:
        """Ids of (about) the ``k`` memories whose blend (own vector, or the mean of own and
        context vectors) is closest to ``query``: the sign-bit counterpart of :meth:`closeness_in_context`."""
        assert self.blends is not None, "refresh(conn, contexts=True) first"
        if not len(self.ids) or k <= 0:
            return []
        cells, probed = self.blends.cells, knn_cells.probe_rows(len(self.ids))
        slots = self._slots_in(workspaces)
        if slots is not None and (cells is not None or len(slots) * 4 < len(self.ids)) and len(slots) <= probed:
            # the workspaces' own rows, every one of them: fewer than the cells would read
            return self._closest(self._distances(query, self.blends.bits[:, slots]), k, workspaces, frozenset(), slots)
        if cells is None:
            return self._closest(self._distances(query, self.blends.bits), k, workspaces, frozenset())
        centred = _floats(self.np, [query])[0] - self.centre
        slots, bits, spaces = cells.probe(centred, probed, self.blends.bits, self.spaces)
        return self._closest(self._distances(query, bits), k, workspaces, frozenset(), slots, spaces)

    def _slots_in(self, workspaces: tuple[str, ...] | None) -> Any:
        """The slots of the rows in ``workspaces``, ascending; None when every row is in scope.
        Kept by workspace (``_by_space``, grown as rows arrive) so that a small workspace of a
        large ledger is scanned without reading the others' rows."""
        np = self.np
        if workspaces is None:
            return None
        codes = sorted({self.codes[w] for w in workspaces if w in self.codes})
        if len(codes) == len(self.codes):
            return None
        if self._by_space is None:
            n = len(self.ids)
            order = np.argsort(self.spaces[:n], kind="stable")
            bounds = np.searchsorted(self.spaces[:n][order], np.arange(len(self.codes) + 1))
            self._by_space = {c: order[bounds[c] : bounds[c + 1]] for c in range(len(self.codes))}
        parts = [self._by_space.get(c, np.zeros(0, dtype=np.int64)) for c in codes]
        return np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

    def closeness_in_context(self, query: bytes, ids: Sequence[int]) -> dict[int, float]:
        """In-context closeness (:class:`_Blends`) to ``query`` of each of ``ids`` that has a
        vector (refresh with ``contexts=True`` first)."""
        return self.blends.closeness(query, ids) if self.blends is not None else {}

    def _closest(
        self,
        distance: Any,
        k: int,
        workspaces: tuple[str, ...] | None,
        exclude: frozenset[int],
        slots: Any = None,
        spaces_of: Any = None,
    ) -> list[int]:
        """The ids of the ``k`` smallest distances in scope: of every slot, or of ``slots`` (what
        a scan of part of the index read, with their workspace codes when at hand; nothing is
        excluded from those). Only the chosen slots' ids are looked up: gathering every probed
        slot's id and code from arrays of a million took ~2 ms (a cache miss each)."""
        np = self.np
        n = len(distance)
        spaces = self.spaces if slots is None else spaces_of if spaces_of is not None else self.spaces[slots]
        far = self.words * 64 + 1
        codes = [self.codes[w] for w in workspaces if w in self.codes] if workspaces is not None else []
        if workspaces is not None and len(codes) < len(self.codes):  # else every row is in scope
            allowed = np.zeros(len(self.codes) + 1, dtype=bool)  # a lookup (np.isin sorts: 3x slower)
            allowed[codes] = True
            distance[~allowed[spaces]] = far
        for memory_id in exclude:
            slot = self.slot.get(memory_id)
            if slot is not None:
                distance[slot] = far
        # Small integer distances: a histogram gives the k-th distance without sorting.
        histogram = np.cumsum(np.bincount(distance, minlength=far + 1))
        cutoff = int(np.searchsorted(histogram, min(k, n)))
        chosen = np.flatnonzero(distance <= min(cutoff, far - 1))
        chosen = chosen[np.argsort(distance[chosen], kind="stable")][:k]
        return [int(i) for i in self.ids[chosen if slots is None else slots[chosen]]]


class _Blends:
    """Each memory's blend, in the slots of its own bits: the mean of its own and its context
    vector, or its own vector alone when it has no context (a short memory in a session,
    :func:`vectors.context_passage`). Kept twice: its centred sign bits (the scan) and its
    centred int8 values (:meth:`closeness`, exact but for their rounding: :class:`_Int8Rows`).

    The query's dot product with the blend is a memory's in-context closeness: the mean of its
    two cosines, not the larger. The context passage is mostly the previous memory, so taking the
    larger of the two ranks a turn by what the turn before it said (LoCoMo development R@1
    0.449 → 0.416); the mean keeps the turn's own meaning and adds what it answers (R@5
    0.718 → 0.732, any share between 0.4 and 0.6 within 0.006; docs/search.md).
    """

    def __init__(self, own: BitIndex) -> None:
        np = own.np
        self.own = own
        self.seq = 0
        self.deleted = -1  # not read yet: the first refresh reads every memory
        self.bits = np.zeros((own.words, 0), dtype=np.uint64)
        self.values = _Int8Rows(np, own.centre)
        self.cells: knn_cells.Cells | None = None  # from knn_cells.CELLS_FROM memories on
        self.with_context = np.zeros(0, dtype=bool)  # by slot: the blend was cut with a context vector

    def closeness(self, query: bytes, ids: Sequence[int]) -> dict[int, float]:
        """In-context closeness of each of ``ids`` that has a vector: the query's dot product
        with its blend (unit own and context vectors: the mean of their cosines)."""
        np = self.own.np
        wanted = np.asarray(ids, dtype=np.int64)
        slots = self.own.slot.lookup(wanted)
        held = slots >= 0
        scores = self.values.take(slots[held]) @ np.frombuffer(query, dtype=np.float32)
        return dict(zip(wanted[held].tolist(), scores.tolist(), strict=True))

    def refresh(self, conn: apsw.Connection, touched: Any) -> None:
        """Follow the context table and the own vectors written in the ``touched`` slots."""
        np, own = self.own.np, self.own
        n = len(own.ids)
        if self.bits.shape[1] < n:
            self.bits = _widen(np, self.bits, own.words, n)
        if len(self.with_context) < n:
            self.with_context = np.concatenate([self.with_context, np.zeros(n - len(self.with_context), dtype=bool)])
        newest = conn.execute("SELECT max(seq) FROM context_vectors").get or 0
        deleted = vectors.deletions(conn, "context_vectors")
        if self.deleted < 0:  # first look: every memory
            self._load(
                conn.execute(
                    "SELECT v.memory_id, v.embedding, c.embedding FROM vectors v "
                    "LEFT JOIN context_vectors c ON c.memory_id = v.memory_id"
                )
            )
            self.deleted, self.seq = deleted, newest
            return
        changed = set(own.ids[touched].tolist())
        if deleted != self.deleted:  # some contexts were deleted: those memories' blends again
            changed.update(self._contexts_lost(conn))
            self.deleted = deleted
        if newest > self.seq:
            rows = conn.execute("SELECT memory_id FROM context_vectors WHERE seq > ?", (self.seq,))
            changed.update(r[0] for r in rows)
            self.seq = newest
        if changed:
            self._load(
                conn.execute(
                    "SELECT v.memory_id, v.embedding, c.embedding FROM json_each(?) j CROSS JOIN vectors v "
                    "ON v.memory_id = j.value LEFT JOIN context_vectors c ON c.memory_id = j.value",
                    (msgspec.json.encode(sorted(changed)).decode(),),
                )
            )

    def _contexts_lost(self, conn: apsw.Connection) -> list[int]:
        """Memories whose blend was cut with a context vector that is gone now: the ids of the
        context table (its seq index covers them: no embedding is read) against the slots
        blended with one (a few hundred ms at 1M memories, where reading every blend again
        took ~15 s)."""
        np, own = self.own.np, self.own
        ids = np.fromiter((r[0] for r in conn.execute("SELECT memory_id FROM context_vectors")), dtype=np.int64)
        slots = own.slot.lookup(ids)
        still = np.zeros(len(self.with_context), dtype=bool)
        still[slots[slots >= 0]] = True
        return own.ids[np.flatnonzero(self.with_context & ~still)].tolist()

    def _load(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Cut the blend bits of (memory_id, own embedding, context embedding or None) rows."""
        np, own = self.own.np, self.own
        rows = iter(rows)
        while batch := list(itertools.islice(rows, LOAD_BATCH)):
            slots = own.slot.lookup(np.fromiter((r[0] for r in batch), dtype=np.int64, count=len(batch)))
            known = slots >= 0
            if not known.any():
                continue
            batch = [r for r, k in zip(batch, known, strict=True) if k]
            mine = _floats(np, [r[1] for r in batch])
            theirs = _floats(np, [r[2] if r[2] is not None else r[1] for r in batch])
            blend = (mine + theirs) / 2
            self.bits[:, slots[known]] = own._signs(blend - own.centre)
            self.values.put(slots[known], blend)
            self.with_context[slots[known]] = [r[2] is not None for r in batch]
            if self.cells is not None:
                self.cells.assign(slots[known], blend - own.centre, self.bits, own.spaces)

    def lay_out_cells(self) -> None:
        """Cells for the in-context scan once the index is large enough (:mod:`knn_cells`), and
        again when it has grown fourfold since they were trained."""
        rows = len(self.own.ids)
        if rows < knn_cells.CELLS_FROM or (self.cells is not None and rows <= 4 * self.cells.trained_rows):
            return
        self.cells = knn_cells.Cells.train(
            self.own.np, self.values.offsets, self.values.offset_blocks(rows), rows, self.bits, self.own.spaces
        )


class _Int8Rows:
    """Centred int8 vectors by slot, in blocks of ``ROW_BLOCK`` rows (growing never copies what
    is held, and a new block's untouched pages cost nothing): each row is stored as its offset
    from the model's centre, scaled per row so that its largest component is ±127, with that
    scale. 388 bytes a row at 384 dimensions, half of float16's 768.

    A sentence encoder's vectors share a large common component (the centre): quantising what
    is left spends the 8 bits on what tells passages apart. A row comes back as
    ``q * scale + centre``; the query's dot product with it is off by at most
    ``sum(|query|) * scale / 2``, measured at 6e-4 at worst on real e5-small vectors (float16
    rows: 5e-5), and the top-10 by closeness kept 98 % of its members (float16: 99.6 %).
    """

    def __init__(self, np: Any, centre: Any) -> None:
        self.np = np
        self.centre = np.asarray(centre, dtype=np.float32)
        self.dim = len(self.centre)
        # (ROW_BLOCK x dim int8, ROW_BLOCK float32 scales), or None: the block is in the file
        self.blocks: list[tuple[Any, Any] | None] = []
        self.file: tuple[int, int, int] | None = None  # the snapshot: (descriptor, values at, scales at)
        self._closer: weakref.finalize | None = None

    @property
    def bytes_per_row(self) -> int:
        return self.dim + 4  # the int8 values and their float32 scale

    def put(self, slots: Any, values: Any) -> None:
        np = self.np
        offsets = np.asarray(values, dtype=np.float32) - self.centre
        scales = np.abs(offsets).max(axis=1, initial=0.0) / 127
        scales[scales == 0] = 1.0  # a row equal to the centre: all zeros, any scale
        quantised = np.rint(offsets / scales[:, None]).astype(np.int8)
        block_of = slots // ROW_BLOCK
        while len(self.blocks) <= int(block_of.max(initial=-1)):
            self.blocks.append((np.zeros((ROW_BLOCK, self.dim), dtype=np.int8), np.ones(ROW_BLOCK, dtype=np.float32)))
        for block in np.unique(block_of).tolist():
            inside = block_of == block
            held = self.blocks[block]
            if held is None:  # a row of the snapshot written again: its block comes into memory
                held = self.blocks[block] = self._read_block(block)
            rows, row_scales = held
            rows[slots[inside] % ROW_BLOCK] = quantised[inside]
            row_scales[slots[inside] % ROW_BLOCK] = scales[inside]

    def attach(self, file: BinaryIO, values_at: int, scales_at: int, rows: int) -> None:
        """Hold every row in the snapshot ``file`` (``rows``, whole blocks, values and scales at
        those offsets), read a row at a time when asked: they cost this process's memory
        nothing (pages in the system's file cache are not its RSS). The file's descriptor is
        kept until the rows are attached elsewhere or this index is gone. Blends of up to
        ``HOLD_BLENDS_UP_TO`` bytes are read whole instead (39 MB at 100k memories): two reads
        a candidate cost ~0.4 ms a ``find`` that memory does not."""
        descriptor = os.dup(file.fileno())
        file.close()
        if self._closer is not None:
            self._closer()
        self._closer = weakref.finalize(self, os.close, descriptor)
        self.file = (descriptor, values_at, scales_at)
        self.blocks = [None] * (rows // ROW_BLOCK)
        if self.held_whole():  # small enough to hold: no read per row
            self.blocks = [self._read_block(number) for number in range(len(self.blocks))]
            self._closer()
            self.file = self._closer = None

    def held_whole(self) -> bool:
        """Whether blends this many (every block) are held in memory rather than read from the
        snapshot by the row (``HOLD_BLENDS_UP_TO``)."""
        return len(self.blocks) * ROW_BLOCK * self.bytes_per_row <= HOLD_BLENDS_UP_TO

    def _read_block(self, number: int) -> tuple[Any, Any]:
        assert self.file is not None
        descriptor, values_at, scales_at = self.file
        np, size = self.np, ROW_BLOCK * self.dim
        values = np.frombuffer(os.pread(descriptor, size, values_at + number * size), dtype=np.int8)
        scales = np.frombuffer(os.pread(descriptor, ROW_BLOCK * 4, scales_at + number * ROW_BLOCK * 4), np.float32)
        return values.reshape(ROW_BLOCK, self.dim).copy(), scales.copy()

    def _row(self, slot: int) -> tuple[Any, float]:
        """One row's int8 values and scale, from memory or from the file."""
        block = self.blocks[slot // ROW_BLOCK]
        if block is not None:
            return block[0][slot % ROW_BLOCK], float(block[1][slot % ROW_BLOCK])
        assert self.file is not None
        descriptor, values_at, scales_at = self.file
        np = self.np
        values = np.frombuffer(os.pread(descriptor, self.dim, values_at + slot * self.dim), dtype=np.int8)
        (scale,) = np.frombuffer(os.pread(descriptor, 4, scales_at + slot * 4), dtype=np.float32)
        return values, float(scale)

    def offsets(self, slots: Any) -> Any:
        """(len(slots) x dim) rows' offsets from the centre, each in its own scale (their
        directions: what the cells are trained on)."""
        np = self.np
        out = np.empty((len(slots), self.dim), dtype=np.float32)
        for i, slot in enumerate(slots.tolist()):
            out[i] = self._row(slot)[0]
        return out

    def _whole(self, number: int) -> tuple[Any, Any]:
        block = self.blocks[number]
        return block if block is not None else self._read_block(number)

    def offset_blocks(self, rows: int) -> Any:
        """A callable yielding (slots, offsets as in :meth:`offsets`) for the first ``rows``
        rows, a block at a time."""

        def blocks() -> Iterator[tuple[Any, Any]]:
            for number in range((rows + ROW_BLOCK - 1) // ROW_BLOCK):
                slots = self.np.arange(number * ROW_BLOCK, min(rows, (number + 1) * ROW_BLOCK))
                yield slots, self._whole(number)[0][: len(slots)].astype(self.np.float32)

        return blocks

    def chunks(self, rows: int) -> tuple[list[Any], list[Any]]:
        """The blocks that hold the first ``rows`` rows: their int8 values and their scales."""
        held = [self._whole(number) for number in range((rows + ROW_BLOCK - 1) // ROW_BLOCK)]
        return [values for values, _ in held], [scales for _, scales in held]

    def take(self, slots: Any) -> Any:
        """(len(slots) x dim) float32 rows."""
        np = self.np
        out = np.empty((len(slots), self.dim), dtype=np.float32)
        for i, slot in enumerate(slots.tolist()):
            values, scale = self._row(slot)
            out[i] = values * scale
        return out + self.centre


class _Slots:
    """Row id -> slot in an index's arrays. Memory ids are dense: an array indexed by id (8 bytes
    a memory; a dict of Python ints costs ~100 and is built again in every process that
    searches); section rowids (memory id << 20) are sparse and few: a dict."""

    def __init__(self, np: Any, *, dense: bool) -> None:
        self.np = np
        self.by_id = np.full(0, -1, dtype=np.int64) if dense else None
        self.sparse: dict[int, int] = {}

    def lookup(self, row_ids: Any) -> Any:
        """The slot of each id, -1 for ids without one."""
        np = self.np
        if self.by_id is None:
            return np.fromiter((self.sparse.get(int(i), -1) for i in row_ids), dtype=np.int64, count=len(row_ids))
        inside = row_ids < len(self.by_id)
        slots = np.full(len(row_ids), -1, dtype=np.int64)
        slots[inside] = self.by_id[row_ids[inside]]
        return slots

    def assign(self, row_ids: Any, slots: Any) -> None:
        np = self.np
        if self.by_id is None:
            self.sparse.update(zip(row_ids.tolist(), slots.tolist(), strict=True))
            return
        top = int(row_ids.max(initial=-1)) + 1
        if top > len(self.by_id):  # grow by half again at least: ids arrive in increasing order
            wider = np.full(max(top, len(self.by_id) * 3 // 2), -1, dtype=np.int64)
            wider[: len(self.by_id)] = self.by_id
            self.by_id = wider
        self.by_id[row_ids] = slots

    def get(self, row_id: int) -> int | None:
        if self.by_id is None:
            return self.sparse.get(row_id)
        slot = int(self.by_id[row_id]) if 0 <= row_id < len(self.by_id) else -1
        return slot if slot >= 0 else None

    def __getitem__(self, row_id: int) -> int:
        slot = self.get(row_id)
        if slot is None:
            raise KeyError(row_id)
        return slot


def _give_back_memory() -> None:
    """Hand the heap's free pages back to the system (glibc's ``malloc_trim``): the blends just
    went to the file, but the allocator keeps what a process once held (at 1M memories the
    server stayed at 947 MB after loading from the tables, against 461 MB starting from the
    snapshot). Nothing elsewhere."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _floats(np: Any, embeddings: list[bytes]) -> Any:
    """(len(embeddings) x dim) float32 matrix of stored embeddings."""
    return np.frombuffer(b"".join(embeddings), dtype=np.float32).reshape(len(embeddings), -1)


def _widen(np: Any, bits: Any, words: int, columns: int) -> Any:
    """``bits`` with room for ``columns`` rows (its rows first): the same array when it has,
    else a copy in this process's memory with a quarter more room, so that rows arriving a
    batch at a time copy the matrix a few times, not once a batch (48 MB at 1M memories)."""
    if bits.shape[1] >= columns:
        return bits
    wider = np.zeros((words, columns + columns // 4), dtype=np.uint64)
    if bits.size:
        wider[:, : bits.shape[1]] = bits
    return wider


_indexes: weakref.WeakKeyDictionary[apsw.Connection, dict[str, BitIndex]] = weakref.WeakKeyDictionary()


def index_for(conn: apsw.Connection, table: str = "vectors", *, contexts: bool = False) -> BitIndex:
    """The index of ``table`` for ``conn``, up to date: on first use taken from its snapshot
    when there is one of these vectors, and saved for the next process once it has read
    ``SNAPSHOT_AFTER`` rows (or a tenth of the index, if more) from the tables."""
    indexes = _indexes.setdefault(conn, {})
    index = indexes.get(table)
    if index is None:
        index = indexes[table] = BitIndex(table)
        if contexts:
            index.restore(conn)
    index.refresh(conn, contexts=contexts)
    if contexts and index.fresh_rows >= max(SNAPSHOT_AFTER, len(index.ids) // 10):
        index.save(conn)
    return index


def held(conn: apsw.Connection) -> int:
    """How many memories the in-process index for ``conn`` holds ready for hybrid ``find`` (0:
    not loaded yet; the first ``find`` or a warm-up loads it)."""
    index = _indexes.get(conn, {}).get("vectors")
    return len(index.ids) if index is not None and index.blends is not None else 0


def cosines(
    conn: apsw.Connection, query: bytes, ids: list[int], *, max_seq: int | None = None, table: str = "vectors"
) -> dict[int, float]:
    """Exact cosine similarity of ``query`` to each stored vector among ``ids`` (written up to
    ``max_seq`` when given)."""
    if not ids:
        return {}
    column = TABLES[table]
    rows = conn.execute(
        f"SELECT v.{column}, 1.0 - vec_distance_cosine(v.embedding, ?) FROM json_each(?) j "
        f"CROSS JOIN {table} v ON v.{column} = j.value WHERE v.seq <= ?",
        (query, msgspec.json.encode(ids).decode(), max_seq if max_seq is not None else 2**62),
    )
    return {row_id: float(similarity) for row_id, similarity in rows}


def section_cosines(conn: apsw.Connection, query: bytes, memory_ids: list[int]) -> dict[int, tuple[int, float]]:
    """For each of ``memory_ids`` that has section vectors: its closest section (rowid) and cosine."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        "SELECT v.memory_id, v.section_rowid, 1.0 - vec_distance_cosine(v.embedding, ?) FROM json_each(?) j "
        "CROSS JOIN section_vectors v ON v.memory_id = j.value",
        (query, msgspec.json.encode(memory_ids).decode()),
    )
    best: dict[int, tuple[int, float]] = {}
    for memory_id, rowid, similarity in rows:
        if memory_id not in best or similarity > best[memory_id][1]:
            best[memory_id] = (rowid, float(similarity))
    return best


def nearest(
    conn: apsw.Connection,
    query: bytes,
    k: int,
    workspaces: tuple[str, ...] | None = None,
    *,
    exclude: frozenset[int] = frozenset(),
    oversample: int = OVERSAMPLE,
    max_seq: int | None = None,
    table: str = "vectors",
) -> list[tuple[int, float]]:
    """The ``k`` stored vectors of ``table`` closest to ``query`` (float32 bytes) by exact cosine,
    best first, as (id, cosine): memory ids, or section rowids for ``section_vectors``."""
    candidates = index_for(conn, table).nearest(query, max(k, oversample), workspaces, exclude)
    scored = cosines(conn, query, candidates, max_seq=max_seq, table=table)
    return sorted(scored.items(), key=lambda p: (-p[1], -p[0]))[:k]
