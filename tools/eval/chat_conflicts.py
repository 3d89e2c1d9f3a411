"""Conflicts opened by long chat logs: how often claim extraction cries wolf on conversation.

Every turn of each LoCoMo conversation is remembered the way an agent keeps a chat (the text
without its "speaker:" label, the speaker as subject, the session's date as event time), each
conversation in its own ledger. Chat is the hard case for deterministic claims: "this is…",
"that's…", "dance is my stress relief" are everywhere, and almost none of them contradict an
earlier line. The report counts the claims the turns hold (each a chance of a false conflict
later) and the conflicts the writes opened, listed with their claims so a person can judge
which are real; and the memories a turn retracted without naming them (a cancellation's or a
denial's words: "I'm not the one who …"), each a chance of a fact wrongly ended.

The data is CC BY-NC (evaluation only): it is read by ``tools/eval`` and never by unit tests.

    python -m tools.eval.chat_conflicts [--data ../shared/data/locomo-dev]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tools.eval.locomo import DEFAULT_DATA, turns


def conversation_conflicts(
    conversation: dict[str, Any], db: Path
) -> tuple[int, int, list[dict[str, Any]], list[dict[str, Any]]]:
    """(turns remembered, claims they hold, the conflicts they opened, the memories they retracted:
    a cancellation's or a denial's target, found by its words) for one conversation in a fresh
    ledger."""
    app = LedgerApp(Settings(db=str(db), client="chat-conflicts"))
    found: list[dict[str, Any]] = []
    retracted: list[dict[str, Any]] = []
    count = 0
    try:
        for turn in turns(conversation):
            speaker, _, text = turn["content"].partition(": ")
            result = app.remember(text, subject=speaker, event_time=turn["event_time"], source_ref=turn["dia_id"])
            count += 1
            for c in result.get("conflicts", []):
                found.append({"dia_id": turn["dia_id"], "subject": speaker, **c["claim"]})
            for memory_id in result.get("retracted", []):
                ended = app.read(memory_id)["memory"]["content"]
                retracted.append({"dia_id": turn["dia_id"], "subject": speaker, "said": text, "retracted": ended})
        claims = app.conn.execute("SELECT count(*) FROM claims").fetchone()[0]
    finally:
        app.close()
    return count, claims, found, retracted


def run(data: Path) -> dict[str, Any]:
    files = sorted(data.glob("*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo conversations (*.json) under {data}")
    started = time.perf_counter()
    total, claims, conflicts, retractions = 0, 0, [], []
    with tempfile.TemporaryDirectory(prefix="chat-conflicts-") as tmp:
        for path in files:
            count, held, found, retracted = conversation_conflicts(
                json.loads(path.read_text(encoding="utf-8")), Path(tmp) / f"{path.stem}.db"
            )
            total, claims = total + count, claims + held
            conflicts += [{"conversation": path.stem, **c} for c in found]
            retractions += [{"conversation": path.stem, **r} for r in retracted]
    return {
        "turns": total,
        "claims": claims,
        "conflicts": len(conflicts),
        "per_1000_turns": round(1000 * len(conflicts) / max(total, 1), 2),
        "opened": conflicts,
        "retractions": len(retractions),
        "retracted": retractions,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of LoCoMo *.json files")
    args = parser.parse_args(argv)
    json.dump(run(args.data), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
