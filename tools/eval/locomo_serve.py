"""LoCoMo recall through ``ledger serve`` over MCP, asked while the vectors lag and again once
they have caught up, beside lexical-only recall on the same ledger.

Per dev conversation: every turn is remembered (as :mod:`tools.eval.locomo` does) by a process
with no model, so none has a vector; then ``ledger serve`` starts on that ledger with the
embedding model and its vectors worker begins embedding the backlog. As soon as the model is
loaded, every question goes to the ``find`` action of the ``memory`` tool over stdio, while the
worker is still embedding (the lag at the first and the last question is reported: the whole
pass runs during the lag when the last one is above 0). Then the tool waits for the lag to
reach 0 and asks every question again. Lexical-only recall comes from the same ledger through
the facade with no model (the same ``find``).

    python -m tools.eval.locomo_serve [--data ../shared/data/locomo-dev] [--model NAME|PATH]
                                      [--workdir DIR] [--catch-up-timeout 900]

Prints one JSON object: ``during_lag``, ``caught_up`` and ``lexical_only`` (each R@1/5/10
overall and by category) and per conversation the lag seen at the first and last question.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tools.eval.locomo import CATEGORIES, DEFAULT_DATA, KS, summarise, turns

REPO = Path(__file__).resolve().parents[2]
POLL_S = 0.5


def questions(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    return [qa for qa in conversation["qa"] if qa["category"] in CATEGORIES]


def remember_all(db: Path, conversation: dict[str, Any]) -> dict[int, set[str]]:
    """Every turn remembered with no model (no vectors); memory id -> the dia_ids it stands for
    (identical turns are one memory). By id: over MCP a long result's content is a snippet."""
    refs: dict[str, set[str]] = defaultdict(set)
    app = LedgerApp(Settings(db=str(db), client="locomo-serve", embedding=Embedding(enabled=False)))
    try:
        for turn in turns(conversation):
            app.remember(turn["content"], event_time=turn["event_time"], source_ref=turn["dia_id"])
            refs[turn["content"]].add(turn["dia_id"])
        return {m: refs[content] for m, content in app.conn.execute("SELECT memory_id, content FROM memories")}
    finally:
        app.close()


def record(name: str, qa: dict[str, Any], ids: list[int], refs: dict[int, set[str]]) -> dict[str, Any]:
    evidence = set(qa["evidence"])
    ranked = [refs.get(memory_id, set()) for memory_id in ids]
    rank = next((i + 1 for i, ids in enumerate(ranked) if ids & evidence), None)
    return {"conversation": name, "category": qa["category"], "question": qa["question"], "rank": rank}


def lexical_pass(db: Path, name: str, conversation: dict[str, Any], refs: dict[int, set[str]]) -> list[dict[str, Any]]:
    app = LedgerApp(Settings(db=str(db), client="locomo-serve", embedding=Embedding(enabled=False)))
    try:
        return [
            record(name, qa, [r["memory_id"] for r in app.find(qa["question"], limit=max(KS))["results"]], refs)
            for qa in questions(conversation)
        ]
    finally:
        app.close()


async def _call(session: ClientSession, tool: str, data: dict[str, Any], key: str, name: str) -> dict[str, Any]:
    result = await session.call_tool(tool, {key: name, "data": data})
    payload = result.structured_content or json.loads(result.content[0].text)  # type: ignore[union-attr]
    if not payload.get("ok", False):
        raise RuntimeError(f"{tool} {name}: {payload}")
    return dict(payload)


async def _status(session: ClientSession) -> dict[str, Any]:
    return await _call(session, "memory", {}, "action", "status")


async def serve_passes(
    db: Path, name: str, conversation: dict[str, Any], refs: dict[int, set[str]], model: str | None, timeout: float
) -> dict[str, Any]:
    env = {**os.environ, "LEDGER_CLIENT": "locomo-serve"}
    if model:
        env["LEDGER_EMBEDDING_MODEL"] = model
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "fact_ledger.server", "serve", "--db", str(db)], env=env, cwd=str(REPO)
    )
    out: dict[str, Any] = {}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            deadline = time.monotonic() + timeout
            status = await _status(session)
            while status["search_mode"] != "vector+fts" and time.monotonic() < deadline:
                await anyio.sleep(POLL_S / 5)  # the model loads in the background
                status = await _status(session)
            if status["search_mode"] != "vector+fts":
                raise RuntimeError(f"{name}: the model never loaded: {status}")
            for label in ("during_lag", "caught_up"):
                if label == "caught_up":
                    while status["vectors"]["lag"] > 0 and time.monotonic() < deadline:
                        await anyio.sleep(POLL_S)
                        status = await _status(session)
                    if status["vectors"]["lag"] > 0:
                        raise RuntimeError(f"{name}: vectors still {status['vectors']['lag']} behind")
                lags, records = [status["vectors"]["lag"]], []
                for qa in questions(conversation):
                    ask = {"query": qa["question"], "limit": max(KS)}
                    found = await _call(session, "memory", ask, "action", "find")
                    records.append(record(name, qa, [r["memory_id"] for r in found["results"]], refs))
                status = await _status(session)
                lags.append(status["vectors"]["lag"])
                out[label] = {"records": records, "lag_first_last": lags}
    return out


def run(data: Path, workdir: Path, model: str | None, timeout: float) -> dict[str, Any]:
    files = sorted(data.glob("*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo conversations (*.json) under {data}")
    started = time.perf_counter()
    records: dict[str, list[dict[str, Any]]] = defaultdict(list)
    lags: dict[str, dict[str, list[int]]] = {}
    for path in files:
        conversation = json.loads(path.read_text(encoding="utf-8"))
        db = workdir / f"{path.stem}.db"
        refs = remember_all(db, conversation)
        records["lexical_only"] += lexical_pass(db, path.stem, conversation, refs)
        passes = anyio.run(serve_passes, db, path.stem, conversation, refs, model, timeout)
        lags[path.stem] = {}
        for label, result in passes.items():
            records[label] += result["records"]
            lags[path.stem][label] = result["lag_first_last"]
    seconds = time.perf_counter() - started
    return {
        "task": "locomo-dev retrieval through ledger serve (MCP stdio), during the vectors' lag and after",
        "model": model or "the installed default",
        **{label: summarise(rows, seconds) for label, rows in records.items()},
        "lag_first_last_question": lags,
        "seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--model", default=None, help="model name or GGUF path (default: the installed default)")
    parser.add_argument("--workdir", type=Path, default=None, help="where the ledgers go (default: a temporary dir)")
    parser.add_argument("--catch-up-timeout", type=float, default=900.0, help="seconds to wait for the vectors")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="locomo-serve-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        print(json.dumps(run(args.data, workdir, args.model, args.catch_up_timeout), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
