"""The semantic routes through a real MCP client (in process): notices, review, reembed, status,
and the one reply notice that says why meaning is off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest
from mcp import Client

from fact_ledger.projections import notices
from fact_ledger.projections.indexer import Indexer
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from fact_ledger.server.mcp.server import build_server

pytestmark = pytest.mark.anyio


def body(result: mcp_types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    assert result.is_error is (not result.structured_content["ok"])
    return result.structured_content


async def test_reembed_status_notices_and_review(tmp_path: Path, tiny_gguf: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), client="test", embedding=Embedding(model=str(tiny_gguf))))
    try:
        async with Client(build_server(app)) as c:
            for text in ("the budget is 50k", "the budget is 80k"):
                body(await c.call_tool("memory", {"action": "remember", "data": {"content": text}}))
            done = body(await c.call_tool("memory_repair", {"task": "reembed", "data": {}}))
            assert done["memories"] == 2 and done["lag"] == 0
            status = body(await c.call_tool("memory", {"action": "status", "data": {}}))
            assert status["search_mode"] == "vector+fts" and status["vectors"]["vectors"] == 2
            model = app.embedding_model()
            assert model is not None
            Indexer(app.store, model, thresholds=notices.Thresholds(-1.0, 2.0)).run(rebuild=True)
            listed = body(await c.call_tool("memory_review", {"view": "notices", "data": {"state": "open"}}))
            [notice] = listed["notices"]
            assert notice["kind"] == "number"
            refused = body(
                await c.call_tool(
                    "memory_govern",
                    {"action": "review_notice", "data": {"notice_id": notice["notice_id"], "state": "dismissed"}},
                )
            )
            assert refused["error"]["code"] == "unauthorized"
            bad = body(await c.call_tool("memory_review", {"view": "notices", "data": {"state": "maybe"}}))
            assert bad["error"]["code"] == "invalid_input"
            reviewed = body(
                await c.call_tool(
                    "memory_govern",
                    {
                        "action": "review_notice",
                        "data": {"notice_id": notice["notice_id"], "state": "dismissed", "authorized": True},
                    },
                )
            )
            assert reviewed["notice"]["state"] == "dismissed"
            assert body(await c.call_tool("memory_review", {"view": "notices", "data": {}}))["notices"] == []
    finally:
        app.close()


async def test_a_broken_model_is_said_once_and_reembed_is_unavailable(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.gguf"
    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), client="test", embedding=Embedding(model=str(missing))))
    try:
        async with Client(build_server(app)) as c:
            first = body(await c.call_tool("memory", {"action": "remember", "data": {"content": "a fact"}}))
            assert first["ok"] and any("semantic search off" in n for n in first.get("notices", []))
            second = body(await c.call_tool("memory", {"action": "remember", "data": {"content": "another"}}))
            assert not any("semantic" in n for n in second.get("notices", []))
            failed = body(await c.call_tool("memory_repair", {"task": "reembed", "data": {}}))
            assert failed["error"]["code"] == "unavailable"
            status = body(await c.call_tool("memory", {"action": "status", "data": {}}))
            assert status["search_mode"] == "fts" and "not found" in status["vectors"]["problem"]
    finally:
        app.close()
