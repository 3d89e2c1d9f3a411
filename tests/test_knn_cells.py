"""Coarse cells for the in-context scan of a large index (:mod:`projections.knn_cells`): the scan
reads a share of the memories, still finds what is nearest, follows memories written after the
cells were laid out, keeps the caller's workspaces, and the cells travel in the snapshot.

The thresholds are lowered so that a few thousand hand-made vectors (clusters around random
directions, no model needed) stand for a ledger of a million."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fact_ledger.projections import knn, knn_cells, vectors
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

DIM = 64
CLUSTERS = 60
ROWS = 6000


def _unit(v: Any) -> Any:
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _write(app: LedgerApp, rows: dict[int, Any], workspace: str = "default") -> None:
    app.store.write(
        lambda: vectors.write(
            app.conn, [(m, workspace, b"k%d" % m, _unit(v).astype(np.float32).tobytes()) for m, v in rows.items()]
        )
    )


def _q(v: Any) -> bytes:
    return _unit(v).astype(np.float32).tobytes()


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(knn_cells, "CELLS_FROM", 2000)
    monkeypatch.setattr(knn_cells, "CELL_ROWS", 100)
    monkeypatch.setattr(knn_cells, "PROBE_ROWS", 300)
    monkeypatch.setattr(knn, "SNAPSHOT_AFTER", 10**9)  # saved only where a test asks
    rng = np.random.default_rng(5)
    directions = rng.normal(size=(CLUSTERS, DIM))
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(enabled=False)))
    assert vectors.load_vec(app.conn)
    app.store.write(lambda: vectors.reset(app.conn, "hand-made@0", DIM, bytes(4 * DIM)))
    members = directions[rng.integers(0, CLUSTERS, ROWS)] + rng.normal(size=(ROWS, DIM)) * 0.5
    _write(app, {m + 1: members[m] for m in range(ROWS // 2)})
    _write(app, {m + 1: members[m] for m in range(ROWS // 2, ROWS)}, workspace="other")
    yield app, rng, directions
    app.close()


def _exact(app: LedgerApp, query: bytes, k: int) -> list[int]:
    """The in-context scan over every row (no cells): what the cells must not lose."""
    index = knn.BitIndex()
    index.refresh(app.conn, contexts=True)
    assert index.blends is not None
    index.blends.cells = None
    return index.nearest_in_context(query, k)


def test_the_scan_reads_a_share_of_the_memories_and_finds_the_nearest(ledger: Any) -> None:
    app, rng, directions = ledger
    index = knn.index_for(app.conn, contexts=True)
    cells = index.blends.cells
    assert cells is not None and len(cells.centroids) == ROWS // 100
    found_all = 0
    for direction in directions[:20]:
        query = direction + rng.normal(size=DIM) * 0.3
        centred = _unit(query).astype(np.float32)
        read, bits, spaces = cells.probe(centred, knn_cells.probe_rows(ROWS), index.blends.bits, index.spaces)
        assert np.array_equal(bits, index.blends.bits[:, read])  # each slot's own bits, from the cells' copy
        assert np.array_equal(spaces, index.spaces[read])
        assert 300 <= len(read) < ROWS // 3  # a share, not the ledger
        near = index.nearest_in_context(_q(query), 10)
        found_all += set(near) == set(_exact(app, _q(query), 10))
    assert found_all >= 18  # the nearest sit in the query's cells


def test_memories_written_after_the_layout_are_found(ledger: Any) -> None:
    app, rng, directions = ledger
    index = knn.index_for(app.conn, contexts=True)
    assert index.blends.cells is not None
    target = rng.normal(size=DIM)  # a direction of no cluster
    _write(app, {ROWS + 1: target, 7: -target})  # a new memory, and one embedded again
    index = knn.index_for(app.conn, contexts=True)
    assert index.nearest_in_context(_q(target), 1) == [ROWS + 1]
    assert index.nearest_in_context(_q(-target), 1) == [7]
    near = index.nearest_in_context(_q(directions[0]), 50)
    assert len(near) == len(set(near))  # a moved memory is read once


def test_the_callers_workspaces_hold_inside_the_cells(ledger: Any) -> None:
    app, _rng, directions = ledger
    index = knn.index_for(app.conn, contexts=True)
    for direction in directions[:5]:
        near = index.nearest_in_context(_q(direction), 20, ("other",))
        assert near and all(m > ROWS // 2 for m in near)


def test_cells_are_trained_again_after_the_index_grew_fourfold(ledger: Any) -> None:
    app, rng, directions = ledger
    index = knn.index_for(app.conn, contexts=True)
    assert index.blends.cells.trained_rows == ROWS
    more = 3 * ROWS + 1
    extra = directions[rng.integers(0, CLUSTERS, more)] + rng.normal(size=(more, DIM)) * 0.5
    _write(app, {ROWS + 1 + i: extra[i] for i in range(more)})
    index = knn.index_for(app.conn, contexts=True)
    assert index.blends.cells.trained_rows == 4 * ROWS + 1
    assert len(index.blends.cells.centroids) == (4 * ROWS + 1) // 100


def test_the_snapshot_carries_the_cells(ledger: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app, rng, directions = ledger
    index = knn.index_for(app.conn, contexts=True)
    assert index.save(app.conn)
    other = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(enabled=False)))
    try:
        vectors.load_vec(other.conn)

        def untrained(*_args: Any) -> None:
            raise AssertionError("the cells came with the snapshot: nothing to train")

        monkeypatch.setattr(knn_cells.Cells, "train", untrained)
        restored = knn.index_for(other.conn, contexts=True)
        assert restored.fresh_rows == 0
        assert np.array_equal(restored.blends.cells.centroids, index.blends.cells.centroids)
        assert np.array_equal(restored.blends.cells.cell_of, index.blends.cells.cell_of)
        for direction in directions[:5]:
            query = _q(direction + rng.normal(size=DIM) * 0.3)
            assert restored.nearest_in_context(query, 10) == index.nearest_in_context(query, 10)
    finally:
        other.close()


def test_a_small_workspace_is_scanned_whole_not_through_the_cells(ledger: Any) -> None:
    app, rng, directions = ledger
    tiny = {ROWS + 1 + i: rng.normal(size=DIM) for i in range(120)}  # no cluster's direction
    _write(app, tiny, workspace="tiny")
    index = knn.index_for(app.conn, contexts=True)
    assert index.blends.cells is not None
    for direction in directions[:5]:
        query = _q(direction)
        near = index.nearest_in_context(query, 20, ("tiny",))
        exact = knn.BitIndex()
        exact.refresh(app.conn, contexts=True)
        exact.blends.cells = None
        assert near == exact.nearest_in_context(query, 20, ("tiny",))  # every tiny memory was read
        assert len(near) == 20 and set(near) <= set(tiny)
    _write(app, {ROWS + 500: directions[1]}, workspace="tiny")  # a memory new to the workspace
    index = knn.index_for(app.conn, contexts=True)
    assert index.nearest_in_context(_q(directions[1]), 1, ("tiny",)) == [ROWS + 500]
    _write(app, {ROWS: directions[2]}, workspace="tiny")  # a memory moved in from another workspace
    index = knn.index_for(app.conn, contexts=True)
    assert index.nearest_in_context(_q(directions[2]), 1, ("tiny",)) == [ROWS]
