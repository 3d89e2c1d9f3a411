"""``compare``'s ``closeness.vector`` (docs/contract.md ``compare``): the cosine of the two stored
vectors when both embed the memories' current texts, null otherwise (no vectors, one missing, or
one left behind by an edit the worker has not embedded yet). Real SQLite, hand-made vectors."""

from __future__ import annotations

import math
from array import array
from pathlib import Path

from fact_ledger.projections import vectors
from fact_ledger.projections.derived import embedding_key
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

MODEL = "hand-made@0"


def _unit(values: list[float]) -> bytes:
    norm = math.sqrt(sum(v * v for v in values))
    return array("f", [v / norm for v in values]).tobytes()


def _store(app: LedgerApp, rows: list[tuple[int, str, bytes]]) -> None:
    def write() -> None:
        vectors.reset(app.conn, MODEL, 4, bytes(16))
        vectors.write(
            app.conn, [(m, "", embedding_key(MODEL, vectors.passage_text(text)), blob) for m, text, blob in rows]
        )

    app.store.write(write)


def test_vector_closeness_is_the_cosine_of_current_vectors(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), client="test", embedding=Embedding(enabled=False)))
    try:
        a = app.remember("The staging API listens on port 8080")["memory_id"]
        b = app.remember("Staging API port: 8080", tags=["infra"])["memory_id"]  # tagged: not a restatement
        assert app.compare(a, b)["closeness"]["vector"] is None  # no vectors stored

        _store(app, [(a, "The staging API listens on port 8080", _unit([1, 1, 0, 0]))])
        assert app.compare(a, b)["closeness"]["vector"] is None  # one side has none

        _store(
            app,
            [
                (a, "The staging API listens on port 8080", _unit([1, 1, 0, 0])),
                (b, "Staging API port: 8080", _unit([1, 0, 0, 0])),
            ],
        )
        closeness = app.compare(a, b)["closeness"]
        assert closeness["vector"] == round(1 / math.sqrt(2), 4)
        assert 0.0 <= closeness["lexical"] < 1.0

        app.update(b, content="Staging API port: 9090", authorization="user_channel")
        assert app.compare(a, b)["closeness"]["vector"] is None  # b's vector embeds its old text
    finally:
        app.close()
