"""Coarse cells over the memories' blends, so that the in-context scan of a large ledger reads a
part of it, not all of it.

The sign-bit scan reads 48 bytes a memory: ~1.5 ms at 100k memories, but ~12–15 ms at 1M on
this 2-core VM (memory-bound: the floor of reading 48 MB), over the whole budget of a hybrid
``find`` beyond its query embedding. From ``CELLS_FROM`` memories on, the blends are therefore
grouped into cells by spherical k-means (``CELL_ROWS`` memories a cell on average), trained on a
sample of the centred blends; a query scores every cell's centroid (a few hundred dot products)
and the scan reads the members of the best cells until it has covered ``probe_rows`` memories.
A memory whose blend is written after the cells were laid out joins its nearest cell at once
(:meth:`Cells.assign`) and is read by every query until the layout is redone.

The cells decide which memories are *scanned*, never how they rank: the candidates are still
ordered by Hamming distance and re-scored with the exact closeness. What the cells cost in
candidate recall is measured by ``python -m tools.eval.candidates --cells`` (docs/search.md).
"""

from __future__ import annotations

from typing import Any

CELLS_FROM = 200_000  # memories from which the in-context scan reads cells instead of every row
CELL_ROWS = 4096  # memories a cell holds on average when laid out
SAMPLE = 16_384  # blends the centroids are trained on
ROUNDS = 8  # k-means rounds
PROBE_SHARE = 16  # a query reads at least 1/PROBE_SHARE of the memories ...
PROBE_ROWS = 32_768  # ... and at least this many


class Cells:
    """Centroids (unit, centred space), each slot's cell, and the slots in cell order (the
    layout) with the slots assigned since it was made (read by every query)."""

    def __init__(
        self, np: Any, centroids: Any, cell_of: Any, bits: Any, spaces: Any, trained_rows: int | None = None
    ) -> None:
        self.np = np
        self.centroids = np.array(centroids, dtype=np.float32)
        self.cell_of = np.array(cell_of, dtype=np.int32)
        self.trained_rows = len(self.cell_of) if trained_rows is None else trained_rows
        self._lay_out(bits, spaces)

    @classmethod
    def train(cls, np: Any, offsets: Any, slot_rows: Any, rows: int, bits: Any, spaces: Any, seed: int = 0) -> Cells:
        """Cells for ``rows`` slots. ``offsets(slots)`` gives those slots' centred blends (any
        positive scale per row); ``slot_rows`` yields (slots, offsets) for every slot, a block at
        a time, to assign them; ``bits``: the slots' sign bits (words x slots), ``spaces`` their
        workspace codes."""
        rng = np.random.default_rng(seed)
        count = max(2, rows // CELL_ROWS)
        sample = _unit(np, offsets(np.sort(rng.choice(rows, size=min(SAMPLE, rows), replace=False))))
        centroids = sample[rng.choice(len(sample), size=min(count, len(sample)), replace=False)]
        for _ in range(ROUNDS):
            nearest = np.argmax(sample @ centroids.T, axis=1)
            sums = np.zeros_like(centroids)
            np.add.at(sums, nearest, sample)
            empty = ~sums.any(axis=1)
            sums[empty] = sample[rng.choice(len(sample), size=int(empty.sum()))]  # an empty cell starts again
            centroids = _unit(np, sums)
        cell_of = np.zeros(rows, dtype=np.int32)
        for slots, block in slot_rows():
            cell_of[slots] = np.argmax(block @ centroids.T, axis=1)
        return cls(np, centroids, cell_of, bits, spaces)

    def assign(self, slots: Any, offsets: Any, bits: Any, spaces: Any) -> None:
        """Slots whose blend was (re)written: each joins its nearest cell, and is read by every
        query until the layout is redone (when they are a sixteenth of the memories; ``bits``:
        every slot's sign bits and ``spaces`` its workspace code, as now)."""
        np = self.np
        top = int(slots.max(initial=-1)) + 1
        if top > len(self.cell_of):
            self.cell_of = np.concatenate([self.cell_of, np.full(top - len(self.cell_of), -1, dtype=np.int32)])
            self.moved = np.concatenate([self.moved, np.zeros(top - len(self.moved), dtype=bool)])
        self.cell_of[slots] = np.argmax(np.asarray(offsets, dtype=np.float32) @ self.centroids.T, axis=1)
        fresh = slots[~self.moved[slots]]
        self.moved[fresh] = True
        self.tail = np.concatenate([self.tail, fresh])
        if len(self.tail) * PROBE_SHARE > len(self.cell_of):
            self._lay_out(bits, spaces)

    def probe(self, centred_query: Any, rows: int, bits: Any, spaces: Any) -> tuple[Any, Any, Any]:
        """The slots of the best cells for ``centred_query`` (by centroid closeness) until
        ``rows`` memories are covered, and of every slot assigned since the layout; with their
        sign bits (words x slots) and workspace codes, the cells' taken as whole runs of the
        layout's copies, which hold them cell by cell (a gather of each slot's bits from
        ``bits`` took ~6 ms at 1M: a cache miss a slot)."""
        np = self.np
        order = np.argsort(-(self.centroids @ centred_query), kind="stable")
        covered = np.cumsum(self.sizes[order])
        chosen = order[: int(np.searchsorted(covered, rows)) + 1].tolist()
        runs = [(int(self.starts[c]), int(self.starts[c + 1])) for c in chosen]
        slots = np.concatenate([self.members[a:b] for a, b in runs] + [self.tail])
        probed = np.concatenate([self.bits[:, a:b] for a, b in runs] + [bits[:, self.tail]], axis=1)
        codes = np.concatenate([self.spaces[a:b] for a, b in runs] + [spaces[self.tail]])
        laid = len(slots) - len(self.tail)
        stale = self.moved[slots[:laid]]  # written again since the layout: their bits are in the tail's
        if stale.any():
            keep = np.concatenate([~stale, np.ones(len(self.tail), dtype=bool)])
            slots, probed, codes = slots[keep], probed[:, keep], codes[keep]
        return slots, probed, codes

    def _lay_out(self, bits: Any, spaces: Any) -> None:
        np = self.np
        placed = np.flatnonzero(self.cell_of >= 0)
        self.members = placed[np.argsort(self.cell_of[placed], kind="stable")]
        self.bits = np.ascontiguousarray(bits[:, self.members])
        self.spaces = spaces[self.members]
        self.sizes = np.bincount(self.cell_of[placed], minlength=len(self.centroids))
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)])
        self.moved = np.zeros(len(self.cell_of), dtype=bool)
        self.tail = np.zeros(0, dtype=np.int64)


def probe_rows(memories: int) -> int:
    """How many memories one in-context scan reads when the index has cells."""
    return max(PROBE_ROWS, memories // PROBE_SHARE)


def _unit(np: Any, rows: Any) -> Any:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms
