"""Cross-language recall: English questions about Chinese memories and back, as JSON.

The set (``crosslang_set.json``, written by hand) holds, for single-hop questions of one LoCoMo
development conversation, a Chinese translation of the question and of its one evidence turn.
Two ledgers are built from the conversation (every turn one memory, as in
:mod:`tools.eval.locomo`): the English one, and the same with each evidence turn replaced by its
Chinese translation. Each question is then asked four ways:

- ``zh→en``: the Chinese question, the English memory (English ledger);
- ``en→zh``: the English question, the Chinese memory (mixed ledger);
- ``en→en`` and ``zh→zh``: the same-language controls (English ledger, English question; mixed
  ledger, Chinese question).

For each it reports the mean reciprocal rank of the evidence memory in the first 10 and R@1/R@5:
``find`` as shipped, and, on the same candidates, the fusion with and without the rule that a
memory in the other script than the query is fused on its closeness alone
(``projections.hybrid._fused``): the before/after of that rule in one run. A third ledger holds
ten project facts in English (the set's ``facts``) and ten Chinese ones on neighbouring things,
the English facts asked about in Chinese and in English.

    python -m tools.eval.crosslang [--data ../shared/data/locomo-dev] [--model NAME|PATH]
                                   [--workdir DIR]   # keep the ledgers (and embeddings) for next time
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgspec

from fact_ledger.projections import hybrid
from fact_ledger.projections.search.queries import SearchFilters
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings, load_settings
from tools.eval.locomo import DEFAULT_DATA, turns

SET = Path(__file__).with_name("crosslang_set.json")
LIMIT = 10


def load_set(path: Path = SET) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def build(app: LedgerApp, conversation: dict[str, Any], replace: dict[str, str]) -> dict[str, int]:
    """Remember every turn (``replace``: dia_id → the text that stands for it); dia_id → memory id."""
    out = {}
    for turn in turns(conversation):
        content = replace.get(turn["dia_id"], turn["content"])
        reply = app.remember(content, event_time=turn["event_time"], source_ref=turn["dia_id"])
        out[turn["dia_id"]] = reply.get("restatement_of") or reply.get("duplicate_of") or reply["memory_id"]
    return out


def _reciprocal(order: list[int], target: int) -> float:
    rank = next((i + 1 for i, memory_id in enumerate(order[:LIMIT]) if memory_id == target), None)
    return 1.0 / rank if rank else 0.0


def ask(app: LedgerApp, question: str, target: int) -> dict[str, float]:
    """The evidence's reciprocal rank: find as shipped, and the fusion with and without the
    other-script rule on the same candidates."""
    shipped = [r["memory_id"] for r in app.find(question, limit=LIMIT)["results"]]
    vector = app.semantic._query_vector(app.embedding_model(), question)
    pool = hybrid.candidates(app.conn, question, SearchFilters(), hybrid.POOL, vector, page=LIMIT)
    weights = (hybrid.LEXICAL_WEIGHT, hybrid.VECTOR_WEIGHT)
    without = msgspec.structs.replace(pool, other_script=set())
    return {
        "find": _reciprocal(shipped, target),
        "fused": _reciprocal([i for i, _ in hybrid.fuse(pool, weights)], target),
        "fused_without_rule": _reciprocal([i for i, _ in hybrid.fuse(without, weights)], target),
    }


def summarise(rows: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    n = len(rows) or 1
    out = {}
    for method in ("find", "fused", "fused_without_rule"):
        values = [r[method] for r in rows]
        out[method] = {
            "MRR@10": round(sum(values) / n, 3),
            "R@1": round(sum(v == 1.0 for v in values) / n, 3),
            "R@5": round(sum(v >= 0.2 for v in values) / n, 3),
        }
    return out


def run(data: Path, workdir: Path, model: str) -> dict[str, Any]:
    started = time.monotonic()
    spec = load_set()
    conversation = json.loads((data / f"{spec['conversation']}.json").read_text(encoding="utf-8"))
    items = spec["items"]
    questions_en = {qa["evidence"][0]: qa["question"] for qa in conversation["qa"] if len(qa.get("evidence", [])) == 1}
    results: dict[str, list[dict[str, float]]] = {"zh→en": [], "en→en": [], "en→zh": [], "zh→zh": []}
    for name, replace in (("english", {}), ("mixed", {i["dia_id"]: i["turn_zh"] for i in items})):
        app = LedgerApp(
            Settings(
                db=str(workdir / f"crosslang-{name}.db"), client="crosslang-eval", embedding=Embedding(model=model)
            )
        )
        try:
            ids = build(app, conversation, replace)  # a kept ledger answers each turn as a duplicate
            app.reembed()
            for item in items:
                target = ids[item["dia_id"]]
                english, chinese = questions_en[item["dia_id"]], item["question_zh"]
                if name == "english":
                    results["zh→en"].append(ask(app, chinese, target))
                    results["en→en"].append(ask(app, english, target))
                else:
                    results["en→zh"].append(ask(app, english, target))
                    results["zh→zh"].append(ask(app, chinese, target))
        finally:
            app.close()
    facts = _facts(spec["facts"], spec["distractors_zh"], workdir, model)
    return {
        "set": f"{SET.name}: conversation {spec['conversation']}, {len(items)} questions; {len(spec['facts'])} facts",
        "model": model,
        "directions": {direction: summarise(rows) for direction, rows in results.items()},
        "facts": facts,
        "seconds": round(time.monotonic() - started, 1),
    }


def _facts(facts: list[dict[str, str]], distractors: list[str], workdir: Path, model: str) -> dict[str, Any]:
    """The ten project facts in English among ten Chinese ones on neighbouring things, asked in
    Chinese (``zh→en``) and in English (``en→en``)."""
    app = LedgerApp(
        Settings(db=str(workdir / "crosslang-facts.db"), client="crosslang-eval", embedding=Embedding(model=model))
    )
    try:
        ids = [app.remember(f["fact"])["memory_id"] for f in facts]
        for text in distractors:
            app.remember(text)
        app.reembed()
        rows = {
            direction: [ask(app, f[key], target) for f, target in zip(facts, ids, strict=True)]
            for direction, key in (("zh→en", "question_zh"), ("en→en", "question_en"))
        }
    finally:
        app.close()
    return {direction: summarise(r) for direction, r in rows.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of LoCoMo *.json files")
    parser.add_argument("--model", help="embedding model name or GGUF path (default: the configured one)")
    parser.add_argument(
        "--workdir", type=Path, help="keep the ledgers here for the next run (default: a temporary folder)"
    )
    args = parser.parse_args(argv)
    args.model = args.model or load_settings().embedding_model_path
    if not args.model:
        raise SystemExit("no embedding model: install one (ledger model install) or pass --model")
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        result = run(args.data, args.workdir, args.model)
    else:
        with tempfile.TemporaryDirectory(prefix="crosslang-") as tmp:
            result = run(args.data, Path(tmp), args.model)
    json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
