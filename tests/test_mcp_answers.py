"""What an agent gets back in-process: no-op updates write nothing, and an elicitation answer
that does not match the approval form is a refusal (both protocol eras)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest
from mcp import Client

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.mcp.server import build_server
from tests.test_mcp_server import MODES, Answers, body, locked_memory, payloads

pytestmark = pytest.mark.anyio


async def test_an_update_that_changes_nothing_writes_nothing_and_says_so(app: LedgerApp) -> None:
    async with Client(build_server(app)) as c:
        r = body(
            await c.call_tool(
                "memory",
                {
                    "action": "remember",
                    "data": {"content": "The staging API listens on port 8080", "tags": ["infra"], "confidence": 0.5},
                },
            )
        )
        before = app.store.last_position()
        for data in (
            {},
            {"content": "The staging API listens on port 8080"},
            {"tags": ["infra"], "confidence": 0.5, "expected_version": 1},
        ):
            same = body(
                await c.call_tool("memory", {"action": "update", "data": {"memory_id": r["memory_id"], **data}})
            )
            assert same == {"ok": True, "memory_id": r["memory_id"], "version": 1, "unchanged": True}
        assert app.store.last_position() == before
        # A stale version is still a conflict, even when nothing would change.
        stale = body(
            await c.call_tool(
                "memory", {"action": "update", "data": {"memory_id": r["memory_id"], "expected_version": 7}}
            )
        )
        assert stale["error"]["code"] == "version_conflict"
        changed = body(
            await c.call_tool(
                "memory",
                {
                    "action": "update",
                    "data": {
                        "memory_id": r["memory_id"],
                        "content": "The staging API listens on port 8080",
                        "confidence": 0.9,
                    },
                },
            )
        )
        assert changed["version"] == 2 and "unchanged" not in changed
    updates = payloads(Path(app.settings.db), "MemoryUpdated")
    assert len(updates) == 1 and "content" not in updates[0] and updates[0]["confidence"] == 0.9


OFF_FORM = [
    mcp_types.ElicitResult(action="accept", content={"confirm": True}),
    mcp_types.ElicitResult(action="accept", content={"approve": "yes"}),
    mcp_types.ElicitResult(action="accept", content={"approve": True, "also": "delete everything"}),
    mcp_types.ElicitResult(action="accept"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answer", OFF_FORM, ids=["other-field", "string", "extra-field", "no-content"])
async def test_an_answer_off_the_form_is_a_refusal_and_writes_nothing(
    app: LedgerApp, db_path: Path, mode: str, answer: mcp_types.ElicitResult
) -> None:
    answers = Answers(answer)
    async with Client(build_server(app), mode=mode, elicitation_callback=answers) as c:
        memory_id = locked_memory(app)
        before = app.store.last_position()
        result = await c.call_tool(
            "memory",
            {
                "action": "update",
                "data": {"memory_id": memory_id, "content": "The birthday is 5 May", "authorized": True},
            },
        )
        assert len(answers.questions) == 1  # the user was asked
        assert result.is_error
        reply: dict[str, Any] = result.structured_content or {}
        if answer.content is not None or mode == "legacy":  # our shape (an empty accept in the newer
            # era is refused by the SDK before the tool runs: its text error, nothing written)
            assert reply["error"]["code"] == "unauthorized" and "form" in reply["error"]["message"]
            assert "could not ask" not in str(reply)
        assert app.store.last_position() == before
    assert payloads(db_path, "MemoryUpdated") == []
