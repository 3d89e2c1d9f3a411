"""Issue item 7 over stdio: the user confirms through the client (MCP elicitation).

A client that advertises elicitation is asked for ``confirm`` and for governance on locked
memories; an accepted answer is recorded as ``user_channel``, a refusal is ``unauthorized``
with nothing written. A client without elicitation falls back to ``authorized: true``,
recorded as ``agent_asserted``.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread
import mcp.types as mcp_types
import pytest
from mcp import Client, StdioServerParameters

from fact_ledger.ledger.log.events import AUTH_AGENT, AUTH_USER
from fact_ledger.ledger.log.store import EventStore
from tests.conftest import REPO, ledger_cli
from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow


class User:
    """The person behind the client: answers elicitation from a script, remembers the questions."""

    def __init__(self) -> None:
        self.answers: list[mcp_types.ElicitResult] = []
        self.questions: list[str] = []

    async def __call__(self, ctx: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        self.questions.append(params.message)
        return self.answers.pop(0)

    def will(self, *approve: bool | None) -> None:
        self.answers = [
            mcp_types.ElicitResult(action="decline")
            if a is None
            else mcp_types.ElicitResult(action="accept", content={"approve": a})
            for a in approve
        ]


@pytest.fixture(scope="module")
def user() -> User:
    return User()


@pytest.fixture(scope="module")
def asking(server_factory: Callable[..., LedgerServer], user: User) -> LedgerServer:
    return server_factory("asking", elicitation=user)


def authorizations(db: Path, type_: str) -> list[str]:
    store = EventStore(db)
    try:
        return [json.loads(e.payload).get("authorization", "") for e in store.read() if e.type == type_]
    finally:
        store.close()


def test_changing_a_locked_memory_asks_the_user(asking: LedgerServer, user: User) -> None:
    memory_id = asking.confirmed("My blood type is A+")
    change = {"memory_id": memory_id, "content": "My blood type is A-", "authorized": True}
    user.will(None)
    before = asking.events()
    refused = asking.memory("update", change)
    assert refused.code == "unauthorized" and asking.events() == before
    user.will(True)
    assert asking.memory("update", change).ok
    assert len(user.questions) == 2 and f"#{memory_id}" in user.questions[-1]
    assert authorizations(asking.db, "MemoryUpdated") == [AUTH_USER]


def test_governance_on_locked_memories_and_confirm_ask_first(asking: LedgerServer, user: User) -> None:
    locked = asking.confirmed("Emergency contact: Sam")
    plain = asking.memory("remember", {"content": "Lunch is at noon"})["memory_id"]
    cases = [("retire", {"memory_id": locked, "reason": "moved"}), ("confirm", {"memory_id": plain})]
    for action, data in cases:
        asked = len(user.questions)
        user.will(False)  # the user unticks "approve"
        before = asking.events()
        r = asking.call("memory_govern", action, {**data, "authorized": True})
        assert len(user.questions) == asked + 1, action
        assert r.code == "unauthorized" and asking.events() == before
        user.will(True)
        assert asking.call("memory_govern", action, {**data, "authorized": True}).ok
    user.answers.clear()


def test_nothing_is_asked_for_normal_memories(asking: LedgerServer, user: User) -> None:
    asked = len(user.questions)
    plain = asking.memory("remember", {"content": "The printer is on floor 4"})["memory_id"]
    asking.memory("update", {"memory_id": plain, "content": "The printer is on floor 5", "authorized": True})
    asking.call("memory_govern", "retire", {"memory_id": plain, "authorized": True})
    asking.call("memory_govern", "accept", {"alias": "x-team", "canonical": "x", "authorized": True})
    assert len(user.questions) == asked


def test_a_client_without_elicitation_falls_back_to_agent_asserted(srv: LedgerServer) -> None:
    memory_id = srv.confirmed("Allergic to penicillin")
    assert (
        srv.memory("update", {"memory_id": memory_id, "content": "Allergic to penicillin and latex"}).code == "locked"
    )
    assert srv.memory(
        "update", {"memory_id": memory_id, "content": "Allergic to penicillin and latex", "authorized": True}
    ).ok
    assert authorizations(srv.db, "MemoryUpdated") == [AUTH_AGENT]


@pytest.mark.anyio
async def test_the_2026_protocol_asks_through_input_required(tmp_path: Path) -> None:
    """``mcp.Client`` negotiates the newest protocol over stdio: elicitation rides input_required."""
    user = User()
    user.will(True)
    db = tmp_path / "modern.db"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "fact_ledger.server", "serve", "--db", str(db)],
        env={**os.environ, "LEDGER_CLIENT": "modern"},
        cwd=str(REPO),
    )
    async with Client(params, elicitation_callback=user) as client:
        assert client.session.protocol_version == "2026-07-28"
        stated = await anyio.to_thread.run_sync(
            functools.partial(  # by the user, at the CLI: locked
                ledger_cli, "remember", "Passport number ends in 42", "--db", str(db), "--json", check=True
            )
        )
        memory_id = json.loads(stated.stdout)["memory_id"]
        r = await client.call_tool(
            "memory",
            {
                "action": "update",
                "data": {"memory_id": memory_id, "content": "Passport number ends in 43", "authorized": True},
            },
        )
        assert r.structured_content["ok"] is True, r.structured_content
    assert len(user.questions) == 1
    assert authorizations(db, "MemoryUpdated") == [AUTH_USER]


def test_resolving_a_conflict_with_a_locked_member_asks_first(asking: LedgerServer, user: User) -> None:
    mine = asking.memory(
        "remember",
        {
            "content": "My shoe size is 42",
            "subject": "me",
            "source_type": "user_confirmed",
            "claims": [{"subject": "me", "attribute": "shoe size", "value": "42"}],
        },
    )["memory_id"]
    user.will(True)  # the agent's label locks nothing: the user confirms it when asked
    assert asking.call("memory_govern", "confirm", {"memory_id": mine, "authorized": True}).ok
    guess = asking.memory(
        "remember",
        {
            "content": "The user's shoe size is 44",
            "subject": "me",
            "claims": [{"subject": "me", "attribute": "shoe size", "value": "44"}],
        },
    )
    conflict_id = guess["conflicts"][0]["conflict_id"]
    asked = len(user.questions)
    user.will(True)
    r = asking.call(
        "memory_govern", "resolve_conflict", {"conflict_id": conflict_id, "winner_id": mine, "authorized": True}
    )
    assert r.ok and len(user.questions) == asked + 1 and f"#{mine}" in user.questions[-1]
    assert authorizations(asking.db, "ConflictResolved")[-1] == AUTH_USER
