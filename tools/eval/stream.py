"""Does an agent asking about a fact get its current value? Measured on the generated fact stream.

:mod:`tools.eval.stream_gen` states 151 facts (ports, URLs, versions, budgets, meeting times,
owners, diet and drink preferences, instructions; English and Chinese) over 40 conversations with
restatements, changes, late arrivals and cancellations. Each statement is written with
``remember`` in ingest order (its subject only with ``--subjects``), then one natural question per
fact goes through ``find``. The truth is the generator's: which fact and value each statement
holds, and each fact's current value. Printed (JSON):

* ``accuracy_at_1`` / ``accuracy_at_3``: the fact's current value is the top answer (in the top 3),
  overall, on the facts whose value ``changed``, and on those with a ``late`` arrival; a cancelled
  instruction's current value is its cancellation;
* ``stale_above_current``: of the changed facts, the share where an older value ranks above the
  current one (or is found while the current one is not);
* ``cancelled_leak``: of the cancelled instructions, the share still active in the top 3;
* ``memories_per_fact``: active memories holding a fact's statements, per fact;
* ``facts_multi_active``: the share of facts whose active memories hold more than one value.

    python -m tools.eval.stream [--subjects] [--model NAME|PATH | --lexical-only] [--review-changes] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from fact_ledger.ledger.facts import Policy
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings, load_settings
from tools.eval.stream_gen import CANCELLED, Fact, Statement, generate


def write_stream(app: LedgerApp, statements: list[Statement], subjects: bool) -> dict[int, set[tuple[str, str]]]:
    """Remember every statement; per memory id, the (fact, value) pairs the statements it stands for hold."""
    held: dict[int, set[tuple[str, str]]] = defaultdict(set)
    for s in statements:
        answer = app.remember(
            s.content,
            subject=s.subject if subjects else "",
            source_type=s.source_type,
            event_time=s.event_time,
            source_ref=f"{s.conversation}:{s.fact}",
        )
        held[answer["memory_id"]].add((s.fact, s.value))
    return held


def ask(app: LedgerApp, facts: list[Fact], held: dict[int, set[tuple[str, str]]]) -> list[dict[str, Any]]:
    """One question per fact: the (fact, value) pairs of its top answers, best first."""
    out = []
    for fact in facts:
        found = app.find(fact.question, limit=10)["results"]
        ranked = [
            {
                "memory_id": r["memory_id"],
                "values": sorted(v for f, v in held.get(r["memory_id"], ()) if f == fact.fact_id),
            }
            for r in found
        ]
        out.append({"fact": fact.fact_id, "ranked": ranked})
    return out


def _values_of(held: dict[int, set[tuple[str, str]]], memory_id: int, fact: Fact) -> list[str]:
    return sorted(v for f, v in held.get(memory_id, ()) if f == fact.fact_id)


def _rank_of(ranked: list[dict[str, Any]], wanted: str) -> int | None:
    return next((i for i, r in enumerate(ranked) if wanted in r["values"]), None)


def score(
    facts: list[Fact], answers: list[dict[str, Any]], app: LedgerApp, held: dict[int, set[tuple[str, str]]]
) -> dict[str, Any]:
    by_fact = {a["fact"]: a["ranked"] for a in answers}
    groups: dict[str, list[Fact]] = {
        "overall": facts,
        "changed": [f for f in facts if f.changed],
        "late": [f for f in facts if f.late],
    }
    accuracy: dict[str, dict[str, float]] = {"accuracy_at_1": {}, "accuracy_at_3": {}}
    misses = []
    for name, group in groups.items():
        ranks = [_rank_of(by_fact[f.fact_id], f.current) for f in group]
        accuracy["accuracy_at_1"][name] = round(sum(r == 0 for r in ranks) / len(group), 3)
        accuracy["accuracy_at_3"][name] = round(sum(r is not None and r < 3 for r in ranks) / len(group), 3)
        if name == "overall":
            misses = [
                {"fact": f.fact_id, "question": f.question, "current": f.current, "top": by_fact[f.fact_id][:3]}
                for f, r in zip(group, ranks, strict=True)
                if r != 0
            ]
    stale = 0
    for f in groups["changed"]:
        current = _rank_of(by_fact[f.fact_id], f.current)
        older = [r for v in f.values[:-1] if (r := _rank_of(by_fact[f.fact_id], v)) is not None]
        stale += bool(older) and (current is None or min(older) < current)
    cancelled = [f for f in facts if f.cancelled]
    status = dict(app.conn.execute("SELECT memory_id, status FROM memories").fetchall())
    leak = sum(
        any("active" in r["values"] and status.get(r["memory_id"]) == "active" for r in by_fact[f.fact_id][:3])
        for f in cancelled
    )
    active_values: dict[str, set[str]] = defaultdict(set)
    active_memories: dict[str, int] = defaultdict(int)
    for memory_id, pairs in held.items():
        if status.get(memory_id) != "active":
            continue
        for fact_id in {f for f, _ in pairs}:
            active_memories[fact_id] += 1
            active_values[fact_id].update(v for f, v in pairs if f == fact_id and v != CANCELLED)
    return {
        **accuracy,
        "stale_above_current": round(stale / len(groups["changed"]), 3),
        "cancelled_leak": round(leak / len(cancelled), 3) if cancelled else 0.0,
        "memories_per_fact": round(sum(active_memories.values()) / len(facts), 3),
        "facts_multi_active": round(sum(len(v) > 1 for v in active_values.values()) / len(facts), 3),
        "misses": misses,
    }


def run(
    seed: int = 7,
    subjects: bool = False,
    model: str | None = None,
    workdir: Path | None = None,
    settle_changes: bool = True,
) -> dict[str, Any]:
    facts, statements = generate(seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="stream-eval-") as tmp:
        db = Path(workdir or tmp) / f"stream-{seed}-{'subjects' if subjects else 'bare'}.db"
        embedding = Embedding(model=model) if model else Embedding(enabled=False)
        policy = Policy(settle_changes=settle_changes)
        app = LedgerApp(Settings(db=str(db), client="stream-eval", embedding=embedding, policy=policy))
        try:
            held = write_stream(app, statements, subjects)
            if model:
                app.reembed()
                app.sweep()  # the periodic pass: disagreements found by meaning that are one slot
            result = score(facts, ask(app, facts, held), app, held)
        finally:
            app.close()
    return {
        "facts": len(facts),
        "statements": len(statements),
        "changed": sum(f.changed for f in facts),
        "late": sum(f.late for f in facts),
        "cancelled": sum(f.cancelled for f in facts),
        "subjects": subjects,
        "settle_changes": settle_changes,
        "mode": "hybrid" if model else "lexical",
        **({"model": model} if model else {}),
        **result,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--subjects", action="store_true", help="send each statement's subject (default: none)")
    parser.add_argument("--model", help="embedding model name or GGUF path (default: the configured one)")
    parser.add_argument("--lexical-only", action="store_true", help="no model: full text only")
    parser.add_argument("--misses", action="store_true", help="list the questions whose top answer is not current")
    parser.add_argument("--review-changes", action="store_true", help="policy settle_changes off (sets wait)")
    args = parser.parse_args(argv)
    model = None if args.lexical_only else (args.model or load_settings().embedding_model_path)
    result = run(args.seed, args.subjects, model, settle_changes=not args.review_changes)
    if not args.misses:
        result.pop("misses")
    json.dump(result, sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
