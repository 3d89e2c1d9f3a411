"""How the index's in-process blends lose precision, per way of storing them, on real embeddings.

Reads every memory's own and context vector from the read models of existing ledgers (for
example the LoCoMo ledgers ``tools.eval.locomo_serve --workdir DIR`` leaves behind), forms the
blends exactly as :class:`projections.knn._Blends` does, and stores them three ways: float32
(the reference), float16 (the former layout) and centred int8 (:class:`projections.knn._Int8Rows`).
Every ``--stride``-th memory's own vector is a query against its ledger's blends. Reported per
layout: bytes a row, the closeness error (max and median, against float32), and how many of the
top 10 by closeness stay the top 10.

    python -m tools.bench.blends LEDGER.db [LEDGER.db ...] [--stride 7]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from fact_ledger.projections import knn, vectors

TOP = 10


def blends_of(views: Path) -> tuple[Any, Any]:
    """(blends float32 n x dim, centre) of one ledger's read models."""
    conn = apsw.Connection(str(views), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute(
            "SELECT v.embedding, coalesce(c.embedding, v.embedding) FROM vectors v "
            "LEFT JOIN context_vectors c ON c.memory_id = v.memory_id ORDER BY v.memory_id"
        ).fetchall()
        centre = np.frombuffer(vectors.centre(conn), dtype=np.float32)
    finally:
        conn.close()
    own = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    other = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    if len(centre) != own.shape[1]:
        centre = np.zeros(own.shape[1], dtype=np.float32)
    return (own + other) / 2, centre


def stored(layout: str, blends: Any, centre: Any) -> tuple[Any, int]:
    """The blends as the layout gives them back, and its bytes a row."""
    if layout == "float16":
        return blends.astype(np.float16).astype(np.float32), 2 * blends.shape[1]
    rows = knn._Int8Rows(np, centre)
    slots = np.arange(len(blends))
    rows.put(slots, blends)
    return rows.take(slots), rows.bytes_per_row


def measure(paths: list[Path], stride: int) -> dict[str, Any]:
    errors: dict[str, list[float]] = {"float16": [], "int8_centred": []}
    overlap: dict[str, list[float]] = {"float16": [], "int8_centred": []}
    width: dict[str, int] = {}
    memories = 0
    for path in paths:
        views = path.with_suffix(".views.db") if path.with_suffix(".views.db").exists() else path
        blends, centre = blends_of(views)
        memories += len(blends)
        queries = blends[::stride] / np.linalg.norm(blends[::stride], axis=1, keepdims=True)
        exact = queries @ blends.T
        best = np.argsort(-exact, axis=1)[:, :TOP]
        for layout, label in (("float16", "float16"), ("int8", "int8_centred")):
            approx, width[label] = stored(layout, blends, centre)
            got = queries @ approx.T
            errors[label] += np.abs(got - exact).ravel().tolist()
            top = np.argsort(-got, axis=1)[:, :TOP]
            overlap[label] += [len(set(a) & set(b)) / TOP for a, b in zip(best.tolist(), top.tolist(), strict=True)]
    return {
        "benchmark": "blends",
        "memories": memories,
        "layouts": {
            label: {
                "bytes_per_row": width[label],
                "mb_at_1m": round(width[label] * 1_000_000 / 1e6, 1),
                "max_error": round(float(np.max(errors[label])), 6),
                "median_error": round(float(np.median(errors[label])), 7),
                "top10_overlap": round(float(np.mean(overlap[label])), 4),
            }
            for label in errors
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ledgers", type=Path, nargs="+")
    parser.add_argument("--stride", type=int, default=7, help="every n-th memory's vector is a query")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.ledgers, args.stride), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
