"""The in-process sign-bit index over the vectors read model (:mod:`projections.knn`).

Hand-made vectors whose centred signs are known (no model needed), so that each assertion names
the Hamming distances it rests on: bits are cut after subtracting the model's centre, the
in-context scan ranks memories by the signs of the mean of their own and context vectors, the
index follows context vectors written after the memory's own, forgets deleted ones, and reads
rows written after a delete of the newest row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fact_ledger.projections import centre, knn, vectors
from fact_ledger.projections.indexer import Indexer
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

DIM = 64
QUERY = [1.0] * DIM


def _flip(count: int, weight: float = 1.0) -> list[float]:
    """A vector whose first ``count`` signs differ from the query's (Hamming ``count``), each of
    them ``weight`` strong."""
    return [-weight] * count + [1.0] * (DIM - count)


def _blob(values: list[float]) -> bytes:
    v = np.asarray(values, dtype=np.float32)
    return (v / np.linalg.norm(v)).tobytes()


def _ledger(tmp_path: Path, model_centre: bytes = bytes(4 * DIM)) -> LedgerApp:
    ledger = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(enabled=False)))
    assert vectors.load_vec(ledger.conn)

    def start() -> None:
        vectors.reset(ledger.conn, "hand-made@0", DIM, model_centre)
        vectors.set_checkpoint(ledger.conn, 0)

    ledger.store.write(start)
    return ledger


@pytest.fixture
def app(tmp_path: Path) -> Any:
    ledger = _ledger(tmp_path)  # a zero centre: the bits are the raw signs
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


def _in_context_order(app: LedgerApp, query: list[float] = QUERY) -> list[int]:
    return knn.index_for(app.conn, contexts=True).nearest_in_context(_blob(query), 10)


def test_the_in_context_scan_ranks_by_the_signs_of_the_mean_of_both_vectors(app: LedgerApp) -> None:
    # Memory 2's own vector disagrees with the query on 16 signs, its context (3x stronger there)
    # agrees: the mean agrees (blend distance 0). Memory 3's context is opposite to the query
    # and stronger than its own vector everywhere: the mean disagrees on all 64 signs.
    _own(app, {1: _flip(8), 2: _flip(16), 3: QUERY, 4: _flip(32)})
    _contexts(app, {2: [3.0] * 16 + [1.0] * 48, 3: _flip(64, weight=1.0)})
    # blends: 1 -> 8 (own alone), 2 -> 0, 3 -> mean of +q and -q is 0: no sign set (64), 4 -> 32
    assert _in_context_order(app) == [2, 1, 4, 3]
    assert knn.index_for(app.conn).nearest(_blob(QUERY), 10)[:2] == [3, 1]  # own bits alone
    # The closeness is the mean of both cosines (memory 3: 1.0 and -1.0), from the int8 blends.
    ranked = knn.index_for(app.conn, contexts=True).closeness_in_context(_blob(QUERY), [1, 2, 3, 4, 99])
    assert ranked[3] == pytest.approx(0.0, abs=1e-3) and ranked[1] == pytest.approx(0.75, abs=1e-3)  # (64 - 16) / 64
    assert 99 not in ranked  # no vector: no closeness


def _cosine(a: list[float], b: list[float]) -> float:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))


def _int8_bound(blend: list[float], query: list[float]) -> float:
    """How far the index's closeness may be from the exact one: each component of the stored
    (centred, here uncentred) blend is rounded by at most half its row's scale, max|x| / 127."""
    x, q = np.asarray(blend, dtype=np.float64), np.asarray(query, dtype=np.float64)
    x, q = x / np.linalg.norm(x), q / np.linalg.norm(q)
    return float(np.abs(q).sum() * np.abs(x).max() / 254) + 1e-6  # + float32 rounding


def _mean(a: list[float], b: list[float]) -> list[float]:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return list((x / np.linalg.norm(x) + y / np.linalg.norm(y)) / 2)


def test_the_blends_closeness_follows_rewritten_own_and_context_vectors(app: LedgerApp) -> None:
    rng = np.random.default_rng(3)
    rows = {m: list(rng.normal(size=DIM)) for m in range(1, 40)}
    query = list(rng.normal(size=DIM))
    _own(app, rows)
    index = knn.index_for(app.conn, contexts=True)
    got = index.closeness_in_context(_blob(query), list(rows))
    for m, v in rows.items():
        assert got[m] == pytest.approx(_cosine(v, query), abs=_int8_bound(v, query))
    exact = [abs(got[m] - _cosine(v, query)) for m, v in rows.items()]
    assert 0 < max(exact) < 5e-3  # rounded (int8), yet close
    # A memory embedded again, and a context vector written after the memory's own.
    rows[5] = list(rng.normal(size=DIM))
    _own(app, {5: rows[5]})
    context = list(rng.normal(size=DIM))
    _contexts(app, {7: context})
    index = knn.index_for(app.conn, contexts=True)
    got = index.closeness_in_context(_blob(query), [5, 7])
    blend = _mean(rows[7], context)
    assert got[5] == pytest.approx(_cosine(rows[5], query), abs=_int8_bound(rows[5], query))
    assert got[7] == pytest.approx(
        (_cosine(rows[7], query) + _cosine(context, query)) / 2, abs=_int8_bound(blend, query)
    )
    # Past one block of rows: slots in a second block are read from it.
    many = {m: list(rng.normal(size=DIM)) for m in range(100, 100 + knn.ROW_BLOCK + 10)}
    _own(app, many)
    far = max(many)
    index = knn.index_for(app.conn, contexts=True)
    got = index.closeness_in_context(_blob(query), [far, 7])
    assert got[far] == pytest.approx(_cosine(many[far], query), abs=_int8_bound(many[far], query))
    assert got[7] == pytest.approx(
        (_cosine(rows[7], query) + _cosine(context, query)) / 2, abs=_int8_bound(blend, query)
    )
    # Each blend costs its dimension in bytes and a float32 scale: half of float16's 2 x DIM.
    assert index.blends is not None and index.blends.values.bytes_per_row == DIM + 4
    held = sum(values.nbytes + scales.nbytes for values, scales in index.blends.values.blocks)
    assert held == len(index.blends.values.blocks) * knn.ROW_BLOCK * (DIM + 4)


def test_bits_are_cut_after_subtracting_the_models_centre(tmp_path: Path) -> None:
    # Every vector shares a large common component: their raw signs are all the same.
    common = np.full(DIM, 5.0)
    a = common + np.r_[np.ones(32), -np.ones(32)]
    b = common + np.r_[-np.ones(32), np.ones(32)]
    query = list(common + np.r_[-np.ones(32), np.ones(32)] * 0.5)
    ledger = _ledger(tmp_path, (common / np.linalg.norm(a)).astype(np.float32).tobytes())
    try:
        _own(ledger, {1: list(a), 2: list(b)})
        assert knn.index_for(ledger.conn).nearest(_blob(query), 1) == [2]  # raw signs: a tie, slot order gives 1
        assert _in_context_order(ledger, query) == [2, 1]
    finally:
        ledger.close()


def test_the_index_follows_contexts_written_and_deleted_later(app: LedgerApp) -> None:
    _own(app, {1: _flip(10), 2: _flip(16)})
    assert _in_context_order(app) == [1, 2]  # 10 < 16
    _contexts(app, {2: QUERY})  # the mean of flip(16) and the query has no sign on 16 dims
    _contexts(app, {2: [3.0] * 16 + [1.0] * 48})
    assert _in_context_order(app) == [2, 1]  # 0 < 10
    _contexts(app, {}, dropped=(2,))
    assert _in_context_order(app) == [1, 2]  # memory 2 has no context again
    _own(app, {3: _flip(12)})  # a memory new to the index, without a context
    assert _in_context_order(app) == [1, 3, 2]  # 10 < 12 < 16
    _own(app, {1: _flip(20)})  # an own vector written again
    assert _in_context_order(app) == [3, 2, 1]


def test_a_context_stored_before_its_memorys_own_vector_is_used(app: LedgerApp) -> None:
    _own(app, {1: _flip(10)})
    _contexts(app, {2: [3.0] * 16 + [1.0] * 48})
    assert _in_context_order(app) == [1]  # memory 2 has no vector of its own yet: not a candidate
    _own(app, {2: _flip(16)})
    assert _in_context_order(app) == [2, 1]  # 0 < 10


def test_a_look_without_contexts_keeps_the_blends_in_step(app: LedgerApp) -> None:
    _own(app, {1: _flip(10), 2: _flip(16)})
    assert _in_context_order(app) == [1, 2]
    _own(app, {2: QUERY})
    knn.index_for(app.conn)  # another caller (notices) reads the new own vector first
    assert _in_context_order(app) == [2, 1]


def test_rows_written_after_the_newest_row_was_deleted_are_read(app: LedgerApp) -> None:
    def sections(rows: list[tuple[int, list[float]]]) -> None:
        app.store.write(
            lambda: vectors.write_sections(
                app.conn, [7], [(rowid, 7, "default", b"s%d" % rowid, _blob(v)) for rowid, v in rows]
            )
        )

    sections([(70, _flip(40)), (71, _flip(50))])
    assert knn.index_for(app.conn, "section_vectors").nearest(_blob(QUERY), 1) == [70]
    sections([(70, _flip(40)), (71, QUERY)])  # both deleted, written again: new sequence numbers
    assert knn.index_for(app.conn, "section_vectors").nearest(_blob(QUERY), 1) == [71]


def test_the_centre_is_the_mean_of_the_models_reference_passages(tmp_path: Path, tiny_gguf: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(model=str(tiny_gguf))))
    try:
        model = app.embedding_model()
        assert model is not None
        app.remember("the budget is 50k")
        app.reembed()
        stored = vectors.centre(app.conn)
        passages = model.embed_passages([vectors.passage_text(p) for p in centre.REFERENCE_PASSAGES])
        expected = np.mean([np.frombuffer(p, dtype=np.float32) for p in passages], axis=0)
        assert np.frombuffer(stored, dtype=np.float32) == pytest.approx(expected, abs=1e-6)
        assert np.abs(expected).max() > 0  # a real centre, not the zero of a ledger without one
        checksum = vectors.content_checksum(app.conn)
        Indexer(app.store, model).run(rebuild=True)  # from the cache: the same centre
        assert vectors.centre(app.conn) == stored
        assert vectors.content_checksum(app.conn) == checksum
    finally:
        app.close()


def test_a_look_when_nothing_changed_costs_one_statement(app: LedgerApp) -> None:
    _own(app, {1: _flip(10), 2: _flip(16)})
    _contexts(app, {2: QUERY})
    knn.index_for(app.conn, contexts=True)
    statements: list[str] = []
    app.conn.exec_trace = lambda _cursor, sql, _bindings: statements.append(sql) or True
    try:
        knn.index_for(app.conn, contexts=True)
        knn.index_for(app.conn)
        assert len(statements) == 2  # the stamp, once per look
        _contexts(app, {1: QUERY})  # a write moves the stamp: the next look reads it
        statements.clear()
        assert _in_context_order(app)[0] == 1
        assert len(statements) > 1
    finally:
        app.conn.exec_trace = None


def test_the_scan_leaves_out_excluded_ids_and_ignores_ids_it_does_not_hold(app: LedgerApp) -> None:
    _own(app, {1: _flip(1), 2: _flip(2), 3: _flip(3)})
    index = knn.index_for(app.conn)
    assert index.nearest(_blob(QUERY), 2) == [1, 2]
    assert index.nearest(_blob(QUERY), 2, exclude=frozenset({1})) == [2, 3]
    # An id without a vector (not embedded yet) changes nothing for the others.
    assert index.nearest(_blob(QUERY), 2, exclude=frozenset({1, 99})) == [2, 3]
    assert index.nearest(_blob(QUERY), 3, exclude=frozenset({99})) == [1, 2, 3]


def test_a_deleted_context_reads_the_blends_of_its_memories_only(app: LedgerApp) -> None:
    _own(app, {1: _flip(10), 2: _flip(16), 3: _flip(20)})
    _contexts(app, {2: [3.0] * 16 + [1.0] * 48, 3: QUERY})
    assert _in_context_order(app)[0] == 2
    statements: list[str] = []
    app.conn.exec_trace = lambda _cursor, sql, _bindings: statements.append(sql) or True
    try:
        _contexts(app, {}, dropped=(2,))
        assert _in_context_order(app) == [1, 2, 3]  # 2: its own vector again (16); 3: the mean has no sign on 20
    finally:
        app.conn.exec_trace = None
    reads = [s for s in statements if "embedding" in s]
    assert reads and all("json_each" in s for s in reads)  # the dropped memory's rows, not every memory's
