"""LoCoMo retrieval recall through the facade: R@1/R@5/R@10 overall and by category, as JSON.

With an embedding model (the installed default, or ``--model NAME|PATH``) every question is asked
twice, hybrid and lexical-only, and both figures are printed side by side; ``--grid`` also
scores the fusion methods and weights of docs/search.md on the same candidates (and picks the
weight again in each leave-one-conversation-out fold).

The task is the one in ``shared/data/locomo-dev/README.md``: every turn of a conversation is
remembered as one memory (content "speaker: text" plus the image caption, event_time the
session's date, source_ref the dia_id), then every question (category 5, adversarial, skipped)
is asked with the default ``find`` and a hit is any evidence dia_id among the first k results.
Each conversation gets its own ledger, as each is a separate agent's memory.

The data is CC BY-NC (evaluation only): it is read here and nowhere else, never by unit tests.

    python -m tools.eval.locomo [--data ../shared/data/locomo-dev] [--misses misses.jsonl]
                                [--workdir DIR]   # keep the ledgers (and embeddings) for next time
                                [--model NAME|PATH] [--lexical-only] [--grid]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from fact_ledger.ledger.clock import format_time
from fact_ledger.projections import hybrid
from fact_ledger.projections.search.queries import SearchFilters
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings, load_settings

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo-dev"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10)
_SESSION = re.compile(r"^session_(\d+)$")


def session_time(text: str) -> str:
    """'1:56 pm on 8 May, 2023' → canonical UTC timestamp."""
    return format_time(datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y"))


def turns(conversation: dict[str, Any]) -> list[dict[str, str]]:
    """Every turn in session order as {dia_id, content, event_time}."""
    sessions = sorted((int(m.group(1)), key) for key in conversation if (m := _SESSION.match(key)))
    out = []
    for number, key in sessions:
        when = session_time(conversation[f"session_{number}_date_time"])
        for turn in conversation[key]:
            content = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" [image: {turn['blip_caption']}]"
            out.append({"dia_id": turn["dia_id"], "content": content, "event_time": when})
    return out


def evaluate_conversation(
    conversation: dict[str, Any], workdir: Path, name: str, model: str | None = None, grid: bool = False
) -> dict[str, list[dict[str, Any]]]:
    """Remember every turn (unless ``workdir`` already holds this conversation's ledger), embed
    them when a model is given, then ask every question (lexical, and hybrid with a model)."""
    db = workdir / f"{name}.db"
    fresh = not db.exists()
    lexical = LedgerApp(Settings(db=str(db), client="locomo-eval", embedding=Embedding(enabled=False)))
    semantic = (
        LedgerApp(Settings(db=str(db), client="locomo-eval", embedding=Embedding(model=model))) if model else None
    )
    try:
        # Identical turns are one memory (an exact duplicate), so a result stands for every
        # turn with its content.
        refs: dict[str, set[str]] = defaultdict(set)
        for turn in turns(conversation):
            if fresh:
                lexical.remember(turn["content"], event_time=turn["event_time"], source_ref=turn["dia_id"])
            refs[turn["content"]].add(turn["dia_id"])
        by_id = {
            memory_id: refs.get(content, set())
            for memory_id, content in lexical.conn.execute("SELECT memory_id, content FROM memories")
        }
        if semantic is not None:
            semantic.reembed()
        out: dict[str, list[dict[str, Any]]] = {"lexical": [], "hybrid": [], "pools": []}
        for qa in conversation["qa"]:
            if qa["category"] not in CATEGORIES:
                continue
            evidence = set(qa["evidence"])
            record = {
                "conversation": name,
                "category": qa["category"],
                "question": qa["question"],
                "evidence": sorted(evidence),
            }
            for label, app in (("lexical", lexical), ("hybrid", semantic)):
                if app is None:
                    continue
                found = app.find(qa["question"], limit=max(KS))["results"]
                ranked = [refs.get(r["content"], set()) for r in found]
                rank = next((i + 1 for i, ids in enumerate(ranked) if ids & evidence), None)
                out[label].append({**record, "rank": rank, "top": [sorted(ids) for ids in ranked[:5]]})
            if grid and semantic is not None:
                vector = semantic.semantic._query_vector(semantic.embedding_model(), qa["question"])
                pool = hybrid.candidates(semantic.conn, qa["question"], SearchFilters(), GRID_POOL, vector)
                hits = {i for i in pool.ids if by_id.get(i, set()) & evidence}
                out["pools"].append({**record, "pool": pool, "hits": hits})
        return out
    finally:
        lexical.close()
        if semantic is not None:
            semantic.close()


def recall(records: list[dict[str, Any]]) -> dict[str, float]:
    n = len(records) or 1
    return {f"R@{k}": round(sum(1 for r in records if r["rank"] and r["rank"] <= k) / n, 3) for k in KS}


def summarise(records: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    by_category = {}
    for number, label in CATEGORIES.items():
        subset = [r for r in records if r["category"] == number]
        by_category[f"{number}-{label}"] = {"questions": len(subset), **recall(subset)}
    return {
        "task": "locomo-dev retrieval",
        "questions": len(records),
        "overall": recall(records),
        "by_category": by_category,
        "seconds": round(seconds, 1),
    }


def run(
    data: Path, misses: Path | None = None, workdir: Path | None = None, model: str | None = None, grid: bool = False
) -> dict[str, Any]:
    files = sorted(data.glob("*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo conversations (*.json) under {data}")
    started = time.perf_counter()
    records: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        where = workdir or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        for path in files:
            conversation = json.loads(path.read_text(encoding="utf-8"))
            for label, rows in evaluate_conversation(conversation, where, path.stem, model, grid).items():
                records[label].extend(rows)
    main_label = "hybrid" if model else "lexical"
    if misses is not None:
        with misses.open("w", encoding="utf-8") as out:
            for r in records[main_label]:
                if not r["rank"] or r["rank"] > 5:
                    out.write(json.dumps(r, ensure_ascii=False) + "\n")
    seconds = time.perf_counter() - started
    result = summarise(records[main_label], seconds)
    if model:
        result["model"] = model
        result["lexical_only"] = summarise(records["lexical"], seconds)
        result["side_by_side"] = side_by_side(result, result["lexical_only"])
    if grid and records["pools"]:
        result["grid"] = calibration(records["pools"])
    return result


def side_by_side(hybrid_summary: dict[str, Any], lexical: dict[str, Any]) -> dict[str, str]:
    """One line per category: hybrid R@1/5/10, then lexical-only."""

    def line(h: dict[str, Any], lx: dict[str, Any]) -> str:
        return " ".join(f"{k} {h[k]:.3f}/{lx[k]:.3f}" for k in ("R@1", "R@5", "R@10"))

    rows = {"overall": line(hybrid_summary["overall"], lexical["overall"])}
    for name, h in hybrid_summary["by_category"].items():
        rows[name] = line(h, lexical["by_category"][name])
    return rows


# -- calibration ---------------------------------------------------------------------------------
GRID_POOL = 50
WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))  # weight of the vector score


def _rank_of(order: list[int], hits: set[int]) -> int | None:
    return next((i + 1 for i, memory_id in enumerate(order) if memory_id in hits), None)


def _methods(pool: hybrid.Pool, pool_size: int) -> dict[str, list[int]]:
    """Each method's ranking of one question's candidates (lists cut to ``pool_size``)."""
    text_order = list(pool.text)[:pool_size]
    near = pool.nearest[:pool_size]
    cut = hybrid.Pool(
        ids=list(dict.fromkeys(text_order + near)),
        text={i: pool.text[i] for i in text_order},
        similarity=pool.similarity,
        phrase=pool.phrase & set(text_order),
        nearest=near,
        total=0,
    )
    out = {"text only": text_order, "vectors only": near}
    for w in WEIGHTS:
        out[f"min-max {1 - w:.1f} text + {w:.1f} cosine"] = [i for i, _ in hybrid.fuse(cut, (1 - w, w))]
    rrf: dict[int, float] = defaultdict(float)
    for ranking in (text_order, near):
        for position, memory_id in enumerate(ranking):
            rrf[memory_id] += 1.0 / (60 + position + 1)
    out["RRF k=60"] = sorted(rrf, key=lambda i: (-rrf[i], -i))
    out["text top 50 re-ranked by cosine"] = sorted(text_order, key=lambda i: -pool.similarity.get(i, 0.0))
    return out


def calibration(pools: list[dict[str, Any]]) -> dict[str, Any]:
    """R@1/5/10 of every method and pool size; the vector weight chosen leave-one-conversation-out."""
    table: dict[str, dict[str, float]] = {}
    ranks: dict[tuple[int, str], list[tuple[str, int | None]]] = defaultdict(list)
    for pool_size in (20, 30, 50):
        for item in pools:
            for method, order in _methods(item["pool"], pool_size).items():
                ranks[(pool_size, method)].append((item["conversation"], _rank_of(order, item["hits"])))
        for (size, method), rows in ranks.items():
            if size == pool_size:
                table[f"pool {size}: {method}"] = _recall_of([r for _, r in rows])
    folds = {}
    conversations = sorted({item["conversation"] for item in pools})
    for held in conversations:

        def r5(method: str, keep: bool, held: str = held) -> float:
            rows = [r for c, r in ranks[(GRID_POOL, method)] if (c == held) == keep]
            return _recall_of(rows)["R@5"]

        fused = [m for (size, m) in ranks if size == GRID_POOL and m.startswith("min-max")]
        best = max(fused, key=lambda m: (r5(m, False), m))
        folds[held] = {"chosen": best, "held_out_R@5": r5(best, True)}
    return {"methods": table, "leave_one_conversation_out": folds}


def _recall_of(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {f"R@{k}": round(sum(1 for r in ranks if r and r <= k) / n, 3) for k in KS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of LoCoMo *.json files")
    parser.add_argument("--misses", type=Path, help="write questions missed at R@5 here (JSONL)")
    parser.add_argument(
        "--workdir", type=Path, help="keep the ledgers here and reuse them on the next run (default: a temp dir)"
    )
    parser.add_argument("--model", help="embedding model name or GGUF path (default: the configured one)")
    parser.add_argument("--lexical-only", action="store_true", help="no model: full text only")
    parser.add_argument("--grid", action="store_true", help="also score every fusion method and weight")
    args = parser.parse_args(argv)
    model = None if args.lexical_only else (args.model or load_settings().embedding_model_path)
    json.dump(run(args.data, args.misses, args.workdir, model, args.grid), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
