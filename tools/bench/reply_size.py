"""Bytes an agent reads: ``tools/list`` and typical tool results, as one JSON document.

Every tool result costs an agent context window, so this counts the bytes of the JSON text
block of each result (the structured copy is the same JSON) through the in-process MCP client
on a fresh ledger: ``find`` with 50 results over memories about coffee, ``conflicts`` with
seven open conflicts, ``remember`` that collides, ``audit`` and ``history`` of one memory.
``per_result`` divides by the number of items listed.

    python -m tools.bench.reply_size
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from fact_ledger.server.mcp.server import build_server

PLACES = ["Lisbon", "Porto", "Madrid", "Berlin", "Paris", "Rome", "Vienna", "Prague"]


def _coffee(i: int) -> str:
    extra = " It is roasted on Tuesdays and shipped in 250 g bags." * (i % 4)
    return f"Coffee note {i}: the team orders beans from roaster {i % 9} for the office machine.{extra}"


async def measure(db: Path) -> dict[str, Any]:
    app = LedgerApp(Settings(db=str(db), client="bench"))
    try:
        async with Client(build_server(app)) as c:
            listed = await c.list_tools()
            tools_bytes = len(
                json.dumps(
                    listed.model_dump(by_alias=True, exclude_none=True, mode="json")["tools"],
                    separators=(",", ":"),
                    ensure_ascii=False,
                ).encode()
            )

            async def call(tool: str, key: str, name: str, data: dict[str, Any]) -> tuple[int, dict[str, Any]]:
                result = await c.call_tool(tool, {key: name, "data": data})
                return len(result.content[0].text.encode()), result.structured_content or {}

            for i in range(60):
                await call(
                    "memory", "action", "remember", {"content": _coffee(i), "subject": "coffee", "tags": ["office"]}
                )
            first_id = None
            collided = (0, {})
            for n, person in enumerate(["Ana", "Bo", "Cy", "Di", "Ed", "Flo", "Gus"]):
                first = await call(
                    "memory", "action", "remember", {"content": f"{person} lives in {PLACES[n]}", "subject": person}
                )
                first_id = first_id or first[1].get("memory_id")
                collided = await call(
                    "memory", "action", "remember", {"content": f"{person} lives in {PLACES[n + 1]}", "subject": person}
                )
            find = await call("memory", "action", "find", {"query": "coffee", "limit": 50})
            conflicts = await call("memory_review", "view", "conflicts", {"state": "open", "limit": 50})
            audit = await call("memory_review", "view", "audit", {"limit": 50})
            history = await call("memory_review", "view", "history", {"memory_id": first_id})
    finally:
        app.close()

    def per(size_and_body: tuple[int, dict[str, Any]], key: str) -> dict[str, Any]:
        size, body = size_and_body
        items = len(body.get(key) or [])
        return {"bytes": size, "items": items, "per_result": round(size / items, 1) if items else None}

    return {
        "tools_list_bytes": tools_bytes,
        "find_coffee_50": per(find, "results"),
        "conflicts_open": per(conflicts, "conflicts"),
        "audit_50": per(audit, "events"),
        "history": per(history, "versions"),
        "remember_collision": per(collided, "conflicts"),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        report = anyio.run(measure, Path(tmp) / "sizes.db")
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
