"""How many of the exact nearest memories the sign-bit scan finds (candidate recall), as JSON.

For every LoCoMo development question (category 5 skipped), the ten memories closest to it by
the closeness fusion uses (a memory's own cosine, or the mean of its own and its context
vector's), exactly, over the memories of all five conversations in one index; then the share of
those ten among the first K candidates of the sign-bit scan, cut as ``find`` cuts them (the
model's centre subtracted, :mod:`projections.centre`) and from the raw signs (the design
before). ``--distractors`` adds every memory of another ledger's read-model file (the bench's
100k ledger, say) to the index, so that the scan has to find them among many.

    python -m tools.eval.candidates --workdir DIR [--distractors VIEWS_DB] [--model NAME|PATH] [--cells SCALE]

DIR is a ``python -m tools.eval.locomo --model … --workdir DIR`` folder: its ledgers hold the
vectors, embedded by the same model. The data is CC BY-NC (evaluation only).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from fact_ledger.projections import knn_cells, vectors
from fact_ledger.projections.runtime.embedding import load_embedder
from fact_ledger.server.config import load_settings
from tools.eval.locomo import DEFAULT_DATA

KS = (20, 50, 100)
TOP = 10


def blends(views: Path) -> tuple[np.ndarray, bytes]:
    """Each memory's blend (own vector, or the mean of own and context vectors) and the centre."""
    conn = apsw.Connection(str(views), flags=apsw.SQLITE_OPEN_READONLY)
    rows = conn.execute(
        "SELECT v.embedding, c.embedding FROM vectors v LEFT JOIN context_vectors c ON c.memory_id = v.memory_id"
    ).fetchall()
    own = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    context = np.frombuffer(b"".join(r[1] or r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return (own + context) / 2, vectors.centre(conn)


def signs(matrix: np.ndarray) -> np.ndarray:
    """Sign bits as rows of uint64 words, little-endian as the index packs them."""
    packed = np.packbits(matrix > 0, axis=-1, bitorder="little")
    return np.ascontiguousarray(packed).view(np.uint64)


def recall(
    memories: np.ndarray, queries: np.ndarray, centre: np.ndarray, cells_scale: float | None = None
) -> dict[str, dict[str, float]]:
    """Candidate recall of each scan; with ``cells_scale``, also of the centred scan over coarse
    cells (:mod:`projections.knn_cells`) whose sizes are scaled by it (0.1 on 100k memories
    reads the share of them that the defaults read at 1M)."""
    codes = {"centred": (signs(memories - centre), signs(queries - centre)), "raw": (signs(memories), signs(queries))}
    found: dict[str, dict[int, list[float]]] = {name: {k: [] for k in KS} for name in codes}
    cells, probe = None, 0
    if cells_scale is not None:
        no_spaces = np.zeros(len(memories), dtype=np.int32)  # one workspace
        cells, probe = _cells(memories - centre, codes["centred"][0].T, no_spaces, cells_scale)
        found["centred, in cells"] = {k: [] for k in KS}
    for i, query in enumerate(queries):
        truth = set(np.argsort(-(memories @ query), kind="stable")[:TOP].tolist())
        for name, (rows, asked) in codes.items():
            order = np.argsort(np.bitwise_count(rows ^ asked[i]).sum(axis=1), kind="stable")
            for k in KS:
                found[name][k].append(len(truth & set(order[:k].tolist())) / TOP)
        if cells is not None:
            rows, asked = codes["centred"]
            slots, _bits, _spaces = cells.probe(query - centre, probe, codes["centred"][0].T, no_spaces)
            order = slots[np.argsort(np.bitwise_count(rows[slots] ^ asked[i]).sum(axis=1), kind="stable")]
            for k in KS:
                found["centred, in cells"][k].append(len(truth & set(order[:k].tolist())) / TOP)
    return {name: {f"K={k}": round(float(np.mean(v)), 3) for k, v in by_k.items()} for name, by_k in found.items()}


def _cells(centred: np.ndarray, bits: np.ndarray, spaces: np.ndarray, scale: float) -> tuple[knn_cells.Cells, int]:
    """Cells over ``centred`` with the index's rules, every size scaled by ``scale``."""
    knn_cells.CELL_ROWS = max(2, round(knn_cells.CELL_ROWS * scale))
    knn_cells.PROBE_ROWS = max(1, round(knn_cells.PROBE_ROWS * scale))
    cells = knn_cells.Cells.train(
        np, lambda slots: centred[slots], lambda: [(np.arange(len(centred)), centred)], len(centred), bits, spaces
    )
    return cells, knn_cells.probe_rows(len(centred))


def run(
    workdir: Path, data: Path, model: str, distractors: Path | None, cells_scale: float | None = None
) -> dict[str, Any]:
    parts, centres = [], set()
    for path in sorted(data.glob("*.json")):
        views = workdir / f"{path.stem}.views.db"
        if not views.exists():
            raise SystemExit(f"no ledger for {path.stem} in {workdir}: run tools.eval.locomo --workdir first")
        matrix, centre = blends(views)
        parts.append(matrix)
        centres.add(centre)
    if distractors is not None:
        matrix, centre = blends(distractors)
        parts.append(matrix)
        centres.add(centre)
    if len(centres) != 1:
        raise SystemExit("the ledgers' vectors come from different models (or versions): rebuild them")
    embedder = load_embedder(model)
    questions = [
        qa["question"]
        for path in sorted(data.glob("*.json"))
        for qa in json.loads(path.read_text(encoding="utf-8"))["qa"]
        if qa.get("category") != 5
    ]
    queries = np.stack(
        [np.frombuffer(embedder.embed_query(vectors.query_text(q)), dtype=np.float32) for q in questions]
    )
    memories = np.concatenate(parts)
    return {
        "memories": len(memories),
        "locomo_memories": sum(len(p) for p in parts[: len(parts) - (distractors is not None)]),
        "questions": len(questions),
        "exact_top": TOP,
        "candidate_recall": recall(memories, queries, np.frombuffer(centres.pop(), dtype=np.float32), cells_scale),
        "cells": None if cells_scale is None else _cells_used(cells_scale, len(memories)),
    }


def _cells_used(scale: float, memories: int) -> dict[str, Any]:
    return {"scale": scale, "cell_rows": knn_cells.CELL_ROWS, "probe_rows": knn_cells.probe_rows(memories)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, required=True, help="a tools.eval.locomo --workdir folder")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of LoCoMo *.json files")
    parser.add_argument("--distractors", type=Path, help="another ledger's read-model file (ledger.views.db)")
    parser.add_argument("--model", help="embedding model name or GGUF path (default: the configured one)")
    parser.add_argument(
        "--cells", type=float, metavar="SCALE", help="also the scan over coarse cells, their sizes scaled by SCALE"
    )
    args = parser.parse_args(argv)
    model = args.model or load_settings().embedding_model_path
    if not model:
        raise SystemExit("no embedding model: install one (ledger model install) or pass --model")
    json.dump(run(args.workdir, args.data, model, args.distractors, args.cells), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
