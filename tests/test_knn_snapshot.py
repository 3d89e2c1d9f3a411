"""The nearest-neighbour index saved beside the read models and taken up by the next process
(:mod:`projections.knn_snapshot`): the same answers as an index read from the tables, rows
written since followed, and never a snapshot of other vectors (another start-over, deletes, an
erasure, a damaged file)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fact_ledger.projections import knn, knn_snapshot, vectors
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

DIM = 64
ROWS = 300


def _blob(values: Any) -> bytes:
    v = np.asarray(values, dtype=np.float32)
    return (v / np.linalg.norm(v)).tobytes()


def _open(db: Path) -> LedgerApp:
    app = LedgerApp(Settings(db=str(db), client="test", embedding=Embedding(enabled=False)))
    assert vectors.load_vec(app.conn)
    return app


def _own(app: LedgerApp, rows: dict[int, Any], workspace: str = "default") -> None:
    app.store.write(lambda: vectors.write(app.conn, [(m, workspace, b"k%d" % m, _blob(v)) for m, v in rows.items()]))


def _contexts(app: LedgerApp, rows: dict[int, Any]) -> None:
    app.store.write(
        lambda: vectors.write_contexts(app.conn, [(m, "default", b"c%d" % m, _blob(v)) for m, v in rows.items()], [])
    )


@pytest.fixture
def saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A ledger of ROWS hand-made vectors (a third with a context vector, two workspaces) whose
    index was loaded once (and so saved: the threshold is lowered to this size)."""
    monkeypatch.setattr(knn, "SNAPSHOT_AFTER", 100)
    monkeypatch.setattr(knn, "HOLD_BLENDS_UP_TO", 0)  # the blends read from the file by the row
    rng = np.random.default_rng(11)
    app = _open(tmp_path / "ledger.db")
    centre = (rng.normal(size=DIM) * 0.1).astype(np.float32).tobytes()
    app.store.write(lambda: (vectors.reset(app.conn, "hand-made@0", DIM, centre), vectors.set_checkpoint(app.conn, 0)))
    _own(app, {m: rng.normal(size=DIM) for m in range(1, ROWS // 2)})
    _own(app, {m: rng.normal(size=DIM) for m in range(ROWS // 2, ROWS + 1)}, workspace="other")
    _contexts(app, {m: rng.normal(size=DIM) for m in range(1, ROWS + 1, 3)})
    index = knn.index_for(app.conn, contexts=True)
    assert index.fresh_rows == 0  # saved once loaded
    yield app, rng
    app.close()


def _answers(index: knn.BitIndex, queries: list[bytes]) -> list[Any]:
    """What a find asks of the index: the in-context scan (all, one workspace) and closeness."""
    out = []
    for q in queries:
        near = index.nearest_in_context(q, 20)
        out.append(
            (
                near,
                index.nearest_in_context(q, 20, ("other",)),
                index.nearest(q, 10),
                sorted(index.closeness_in_context(q, list(range(1, ROWS + 1))).items()),
            )
        )
    return out


def _fresh_index(app: LedgerApp) -> knn.BitIndex:
    """An index read from the tables alone, as with no snapshot."""
    index = knn.BitIndex()
    index.refresh(app.conn, contexts=True)
    return index


def test_a_new_connection_takes_the_snapshot_and_answers_as_the_tables_do(saved: Any, tmp_path: Path) -> None:
    app, rng = saved
    path = knn_snapshot.path_for(app.conn)
    assert path is not None and path.exists()
    other = _open(tmp_path / "ledger.db")
    try:
        index = knn.index_for(other.conn, contexts=True)
        assert index.fresh_rows == 0  # not one row read from the tables
        assert all(block is None for block in index.blends.values.blocks)  # in the file, read by the row
        queries = [_blob(rng.normal(size=DIM)) for _ in range(5)]
        assert _answers(index, queries) == _answers(_fresh_index(other), queries)
    finally:
        other.close()


def test_small_blends_are_read_whole(saved: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _app, rng = saved
    monkeypatch.setattr(knn, "HOLD_BLENDS_UP_TO", ROWS * (DIM + 4) * 100)
    other = _open(tmp_path / "ledger.db")
    try:
        index = knn.index_for(other.conn, contexts=True)
        assert index.fresh_rows == 0 and index.blends.values.file is None
        assert all(block is not None for block in index.blends.values.blocks)
        queries = [_blob(rng.normal(size=DIM)) for _ in range(3)]
        assert _answers(index, queries) == _answers(_fresh_index(other), queries)
    finally:
        other.close()


def test_rows_written_after_the_snapshot_are_read_from_the_tables(saved: Any, tmp_path: Path) -> None:
    app, rng = saved
    target = rng.normal(size=DIM)
    _own(app, {ROWS + 1: target, 5: -target})  # a new memory, and one embedded again
    _contexts(app, {7: target})
    other = _open(tmp_path / "ledger.db")
    try:
        index = knn.index_for(other.conn, contexts=True)
        assert index.fresh_rows == 2  # the two own vectors written since
        assert index.nearest_in_context(_blob(target), 1) == [ROWS + 1]
        queries = [_blob(target), _blob(-target), *(_blob(rng.normal(size=DIM)) for _ in range(3))]
        assert _answers(index, queries) == _answers(_fresh_index(other), queries)
    finally:
        other.close()


def test_a_snapshot_of_other_vectors_is_deleted_not_used(saved: Any, tmp_path: Path) -> None:
    app, _rng = saved
    path = knn_snapshot.path_for(app.conn)
    app.store.write(lambda: vectors.set_meta(app.conn, "deleted:vectors", "7"))  # as after a delete
    other = _open(tmp_path / "ledger.db")
    try:
        index = knn.index_for(other.conn, contexts=True)
        assert index.fresh_rows == 0 and path.exists()  # read from the tables, and saved afresh
        found = knn_snapshot.load(np, path)
        assert found is not None and found[0].own_deleted == 7
        found[2].close()
    finally:
        other.close()
    # Vectors started over (a rebuild, another model): another name; the old snapshot goes.
    app.store.write(lambda: vectors.reset(app.conn, "hand-made@0", DIM, bytes(4 * DIM)))
    fresh = knn.BitIndex()
    assert not fresh.restore(app.conn) and not path.exists()


def test_a_damaged_snapshot_is_deleted_and_the_tables_answer(saved: Any, tmp_path: Path) -> None:
    app, rng = saved
    path = knn_snapshot.path_for(app.conn)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # cut short
    assert knn_snapshot.load(np, path) is None and not path.exists()
    path.write_bytes(b"not a snapshot at all")
    other = _open(tmp_path / "ledger.db")
    try:
        index = knn.index_for(other.conn, contexts=True)
        queries = [_blob(rng.normal(size=DIM)) for _ in range(3)]
        assert _answers(index, queries) == _answers(_fresh_index(other), queries)
    finally:
        other.close()


def test_an_erasure_deletes_the_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fact_ledger.projections import forget

    monkeypatch.setattr(knn, "SNAPSHOT_AFTER", 1)
    app = _open(tmp_path / "ledger.db")
    try:
        app.store.write(lambda: vectors.reset(app.conn, "hand-made@0", DIM, bytes(4 * DIM)))
        _own(app, {1: np.ones(DIM), 2: -np.ones(DIM)})
        knn.index_for(app.conn, contexts=True)
        path = knn_snapshot.path_for(app.conn)
        assert path is not None and path.exists()
        app.store.write(lambda: forget.prune_views(app.conn, [1], set()))
        assert not path.exists()
    finally:
        app.close()


def test_another_process_starts_from_the_snapshot(saved: Any, tmp_path: Path) -> None:
    app, rng = saved
    query = rng.normal(size=DIM)
    script = (
        "import json, sys, numpy as np\n"
        "from fact_ledger.projections import knn, vectors\n"
        "from fact_ledger.server.app.facade import LedgerApp\n"
        "from fact_ledger.server.config import Embedding, Settings\n"
        "app = LedgerApp(Settings(db=sys.argv[1], client='test', embedding=Embedding(enabled=False)))\n"
        "vectors.load_vec(app.conn)\n"
        "q = np.asarray(json.loads(sys.argv[2]), dtype=np.float32)\n"
        "index = knn.index_for(app.conn, contexts=True)\n"
        "print(json.dumps([index.fresh_rows, index.nearest_in_context((q / np.linalg.norm(q)).tobytes(), 10)]))\n"
        "app.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "ledger.db"), json.dumps(query.tolist())],
        capture_output=True,
        text=True,
        check=True,
    )
    fresh_rows, nearest = json.loads(done.stdout)
    assert fresh_rows == 0
    assert nearest == _fresh_index(app).nearest_in_context(_blob(query), 10)
