"""The in-process sign-bit index over the vectors read model (:mod:`projections.knn`).

Hand-made vectors whose sign bits are known (no model needed), so that each assertion names
the Hamming distances it rests on: the in-context scan ranks memories by the sum of their own
and their context vector's distance, the index follows context vectors written after the
memory's own, forgets deleted ones, and reads rows written after a delete of the newest row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fact_ledger.projections import knn, vectors
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

DIM = 64
QUERY = [1.0] * DIM


def _flip(count: int) -> list[float]:
    """A unit-ish vector whose first ``count`` signs differ from the query's (Hamming ``count``)."""
    return [-1.0] * count + [1.0] * (DIM - count)


def _blob(values: list[float]) -> bytes:
    import numpy as np

    v = np.asarray(values, dtype=np.float32)
    return (v / np.linalg.norm(v)).tobytes()


@pytest.fixture
def app(tmp_path: Path) -> Any:
    ledger = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(enabled=False)))

    assert vectors.load_vec(ledger.conn)

    def start() -> None:
        vectors.reset(ledger.conn, "hand-made@0", DIM)
        vectors.set_checkpoint(ledger.conn, 0)

    ledger.store.write(start)
    yield ledger
    ledger.close()


def _own(app: LedgerApp, rows: dict[int, list[float]]) -> None:
    app.store.write(lambda: vectors.write(app.conn, [(m, "default", b"k%d" % m, _blob(v)) for m, v in rows.items()]))


def _contexts(app: LedgerApp, rows: dict[int, list[float]], dropped: tuple[int, ...] = ()) -> None:
    app.store.write(
        lambda: vectors.write_contexts(
            app.conn, [(m, "default", b"c%d" % m, _blob(v)) for m, v in rows.items()], list(dropped)
        )
    )


def _in_context_order(app: LedgerApp) -> list[int]:
    bits = app.conn.execute("SELECT vec_quantize_binary(?)", (_blob(QUERY),)).get
    return knn.index_for(app.conn, contexts=True).nearest_in_context(bits, 10)


def test_the_in_context_scan_ranks_by_both_distances(app: LedgerApp) -> None:
    # own distances: 1 -> 0, 2 -> 16, 3 -> 0, 4 -> 64; contexts: 2 -> 0, 3 -> 64.
    _own(app, {1: QUERY, 2: _flip(16), 3: QUERY, 4: _flip(64)})
    _contexts(app, {2: QUERY, 3: _flip(64)})
    # sums: 1 -> 0 + 0 (twice its own), 2 -> 16 + 0, 3 -> 0 + 64, 4 -> 64 + 64
    assert _in_context_order(app) == [1, 2, 3, 4]
    bits = app.conn.execute("SELECT vec_quantize_binary(?)", (_blob(QUERY),)).get
    assert knn.index_for(app.conn).nearest(bits, 10)[:2] == [1, 3]  # own bits alone: 3 ties with 1
    # The exact closeness is the mean of both cosines (memory 3: 1.0 and -1.0).
    ranked = dict(knn.nearest_in_context(app.conn, _blob(QUERY), 10))
    assert ranked[1] == pytest.approx(1.0) and ranked[3] == pytest.approx(0.0, abs=1e-6)


def test_the_index_follows_contexts_written_and_deleted_later(app: LedgerApp) -> None:
    _own(app, {1: _flip(10), 2: _flip(16)})
    assert _in_context_order(app) == [1, 2]  # 10 + 10 < 16 + 16
    _contexts(app, {2: QUERY})
    assert _in_context_order(app) == [2, 1]  # 16 + 0 < 10 + 10
    _contexts(app, {}, dropped=(2,))
    assert _in_context_order(app) == [1, 2]  # memory 2 has no context again
    _own(app, {3: _flip(12)})  # a memory new to the index, without a context
    assert _in_context_order(app) == [1, 3, 2]  # 20 < 24 < 32


def test_a_context_stored_before_its_memorys_own_vector_is_used(app: LedgerApp) -> None:
    _own(app, {1: _flip(10)})
    _contexts(app, {2: QUERY})
    assert _in_context_order(app) == [1]  # memory 2 has no vector of its own yet: not a candidate
    _own(app, {2: _flip(16)})
    assert _in_context_order(app) == [2, 1]  # 16 + 0 < 10 + 10


def test_rows_written_after_the_newest_row_was_deleted_are_read(app: LedgerApp) -> None:
    def sections(rows: list[tuple[int, list[float]]]) -> None:
        app.store.write(
            lambda: vectors.write_sections(
                app.conn, [7], [(rowid, 7, "default", b"s%d" % rowid, _blob(v)) for rowid, v in rows]
            )
        )

    bits = app.conn.execute("SELECT vec_quantize_binary(?)", (_blob(QUERY),)).get
    sections([(70, _flip(40)), (71, _flip(50))])
    assert knn.index_for(app.conn, "section_vectors").nearest(bits, 1) == [70]
    sections([(70, _flip(40)), (71, QUERY)])  # both deleted, written again: new sequence numbers
    assert knn.index_for(app.conn, "section_vectors").nearest(bits, 1) == [71]
