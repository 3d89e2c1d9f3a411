"""Hybrid recall's nearest-neighbour scans take the workspace scope inside the scan
(:mod:`projections.hybrid`): a strict workspace is never scored against another's vectors, so a
crowd of closer vectors elsewhere cannot push the caller's own neighbours out of the pool.

Hand-made vectors with known signs (no model needed): forty memories of workspace ``crowd`` lie
one sign from the query, the one memory of workspace ``own`` twenty signs away. The scans' width
(``knn.OVERSAMPLE``) is shrunk to 2 so that three widenings (2, 8, 32) stay inside the crowd: a
scan that ignored the scope would find only crowd vectors, the SQL filter would drop them all,
and ``own`` would come back empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from fact_ledger.projections import hybrid, knn, vectors
from fact_ledger.projections.search.queries import SearchFilters
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

DIM = 64
QUERY = [1.0] * DIM
CROWD = 40


def _blob(values: list[float]) -> bytes:
    v = np.asarray(values, dtype=np.float32)
    return (v / np.linalg.norm(v)).tobytes()


def _flip(count: int) -> list[float]:
    """Hamming distance ``count`` from the query's signs."""
    return [-1.0] * count + [1.0] * (DIM - count)


def _store_hand_made(app: LedgerApp, rows: list[tuple[int, str, bytes, bytes]], mp: pytest.MonkeyPatch) -> None:
    """Store ``rows`` as the ledger's vectors (and contexts), and shrink the scans' width to 2."""

    def write() -> None:
        vectors.reset(app.conn, "hand-made@0", DIM, bytes(4 * DIM))
        vectors.set_checkpoint(app.conn, 0)
        vectors.write(app.conn, rows)
        vectors.write_contexts(app.conn, rows, [])

    app.store.write(write)
    mp.setattr(knn, "OVERSAMPLE", 2)


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LedgerApp, list[int], int]]:
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(enabled=False)))
    assert vectors.load_vec(app.conn)
    crowd = [app.remember(f"crowd note {i}", workspace="crowd")["memory_id"] for i in range(CROWD)]
    own = app.remember("own note", workspace="own")["memory_id"]
    rows = [(m, "crowd", b"k%d" % m, _blob(_flip(1))) for m in crowd] + [(own, "own", b"k-own", _blob(_flip(20)))]

    _store_hand_made(app, rows, monkeypatch)
    yield app, crowd, own
    app.close()


def test_the_in_context_scan_scores_only_the_callers_workspace(ledger: tuple[LedgerApp, list[int], int]) -> None:
    app, crowd, own = ledger
    near, _ = hybrid.memories_near(app.conn, _blob(QUERY), SearchFilters(workspace=("own",)), 1)
    assert [memory_id for memory_id, _ in near] == [own]
    everywhere, _ = hybrid.memories_near(app.conn, _blob(QUERY), SearchFilters(), 1)
    assert len(everywhere) == 1 and everywhere[0][0] in crowd  # the crowd is nearer: only the scope kept it out


def test_the_vector_scan_scores_only_the_callers_workspace(ledger: tuple[LedgerApp, list[int], int]) -> None:
    app, crowd, own = ledger
    near = hybrid.vector_candidates(app.conn, _blob(QUERY), SearchFilters(workspace=("own",)), 1)
    assert [memory_id for memory_id, _ in near] == [own]
    everywhere = hybrid.vector_candidates(app.conn, _blob(QUERY), SearchFilters(), 1)
    assert len(everywhere) == 1 and everywhere[0][0] in crowd
    # Nothing passes (no memory is retired): three widenings (1, 4, 16 of 41), then an empty list.
    assert hybrid.vector_candidates(app.conn, _blob(QUERY), SearchFilters(statuses=("retired",)), 1) == []


@pytest.fixture
def rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LedgerApp, list[int]]]:
    """Seven retired memories nearer the query than two active ones, all in one workspace: the
    SQL filter rejects what the scan finds first, so the scans must widen (2, 8, 32)."""
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(enabled=False)))
    assert vectors.load_vec(app.conn)
    retired = [app.remember(f"retired note {i}", workspace="own")["memory_id"] for i in range(7)]
    for memory_id in retired:
        app.retire(memory_id, reason="old", authorization="user_channel")
    active = [app.remember(f"active note {i}", workspace="own")["memory_id"] for i in range(2)]
    rows = [(m, "own", b"k%d" % m, _blob(_flip(1))) for m in retired]
    rows += [(m, "own", b"k%d" % m, _blob(_flip(20))) for m in active]  # the two are equally near

    _store_hand_made(app, rows, monkeypatch)
    yield app, active
    app.close()


def test_the_scans_widen_past_what_the_filters_reject(rejected: tuple[LedgerApp, list[int]]) -> None:
    app, active = rejected
    own = SearchFilters(workspace=("own",))
    near, _ = hybrid.memories_near(app.conn, _blob(QUERY), own, 2)
    assert [memory_id for memory_id, _ in near] == sorted(active, reverse=True)  # equally near: newer first
    assert [m for m, _ in hybrid.vector_candidates(app.conn, _blob(QUERY), own, 1)] in ([active[0]], [active[1]])
    assert {m for m, _ in hybrid.vector_candidates(app.conn, _blob(QUERY), own, 2)} == set(active)
    # More wanted than can pass: the scans stop after their widenings with what they found.
    assert {m for m, _ in hybrid.vector_candidates(app.conn, _blob(QUERY), own, 5)} == set(active)
    assert {m for m, _ in hybrid.memories_near(app.conn, _blob(QUERY), own, 5)[0]} == set(active)
