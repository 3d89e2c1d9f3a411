"""LoCoMo retrieval recall through the facade: R@1/R@5/R@10 overall and by category, as JSON.

The task is the one in ``shared/data/locomo-dev/README.md``: every turn of a conversation is
remembered as one memory (content "speaker: text" plus the image caption, event_time the
session's date, source_ref the dia_id), then every question (category 5, adversarial, skipped)
is asked with the default ``find`` and a hit is any evidence dia_id among the first k results.
Each conversation gets its own ledger, as each is a separate agent's memory.

The data is CC BY-NC (evaluation only): it is read here and nowhere else, never by unit tests.

    python -m tools.eval.locomo [--data ../shared/data/locomo-dev] [--misses misses.jsonl]
                                [--workdir DIR]   # keep the ledgers and skip ingest next time
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

from ledger.clock import format_time
from server.app import LedgerApp
from server.config import Settings

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
    sessions = sorted(
        (int(m.group(1)), key) for key in conversation if (m := _SESSION.match(key))
    )
    out = []
    for number, key in sessions:
        when = session_time(conversation[f"session_{number}_date_time"])
        for turn in conversation[key]:
            content = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" [image: {turn['blip_caption']}]"
            out.append({"dia_id": turn["dia_id"], "content": content, "event_time": when})
    return out


def evaluate_conversation(conversation: dict[str, Any], workdir: Path, name: str) -> list[dict[str, Any]]:
    """Remember every turn (unless ``workdir`` already holds this conversation's ledger), then ask."""
    db = workdir / f"{name}.db"
    fresh = not db.exists()
    app = LedgerApp(Settings(db=str(db), client="locomo-eval"))
    try:
        # Identical turns are one memory (an exact duplicate), so a result stands for every
        # turn with its content.
        refs: dict[str, set[str]] = defaultdict(set)
        for turn in turns(conversation):
            if fresh:
                app.remember(turn["content"], event_time=turn["event_time"], source_ref=turn["dia_id"])
            refs[turn["content"]].add(turn["dia_id"])
        records = []
        for qa in conversation["qa"]:
            if qa["category"] not in CATEGORIES:
                continue
            found = app.find(qa["question"], limit=max(KS))["results"]
            ranked = [refs.get(r["content"], set()) for r in found]
            evidence = set(qa["evidence"])
            rank = next((i + 1 for i, ids in enumerate(ranked) if ids & evidence), None)
            records.append({"conversation": name, "category": qa["category"], "question": qa["question"],
                            "evidence": sorted(evidence), "rank": rank,
                            "top": [sorted(ids) for ids in ranked[:5]]})
        return records
    finally:
        app.close()


def recall(records: list[dict[str, Any]]) -> dict[str, float]:
    n = len(records) or 1
    return {f"R@{k}": round(sum(1 for r in records if r["rank"] and r["rank"] <= k) / n, 3) for k in KS}


def summarise(records: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    by_category = {}
    for number, label in CATEGORIES.items():
        subset = [r for r in records if r["category"] == number]
        by_category[f"{number}-{label}"] = {"questions": len(subset), **recall(subset)}
    return {"task": "locomo-dev retrieval", "questions": len(records), "overall": recall(records),
            "by_category": by_category, "seconds": round(seconds, 1)}


def run(data: Path, misses: Path | None = None, workdir: Path | None = None) -> dict[str, Any]:
    files = sorted(data.glob("*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo conversations (*.json) under {data}")
    started = time.perf_counter()
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        where = workdir or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        for path in files:
            conversation = json.loads(path.read_text(encoding="utf-8"))
            records.extend(evaluate_conversation(conversation, where, path.stem))
    if misses is not None:
        with misses.open("w", encoding="utf-8") as out:
            for r in records:
                if not r["rank"] or r["rank"] > 5:
                    out.write(json.dumps(r, ensure_ascii=False) + "\n")
    return summarise(records, time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of LoCoMo *.json files")
    parser.add_argument("--misses", type=Path, help="write questions missed at R@5 here (JSONL)")
    parser.add_argument("--workdir", type=Path,
                        help="keep the ledgers here and reuse them on the next run (default: a temp dir)")
    args = parser.parse_args(argv)
    json.dump(run(args.data, args.misses, args.workdir), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
