"""Contract tests drive ``ledger serve`` as a real subprocess through the mcp SDK's stdio client.

Spawning a server costs about a second, so each module shares one (``server_factory`` in a
module-scoped fixture). The client runs in a background event loop (an anyio blocking portal),
which keeps the tests themselves plain functions.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.from_thread
import mcp.types as mcp_types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.conftest import REPO, ledger_cli

TOOL_KEYS = {"memory": "action", "memory_review": "view", "memory_govern": "action", "memory_repair": "task"}
ERROR_CODES = {
    "invalid_input",
    "not_found",
    "locked",
    "version_conflict",
    "forbidden_workspace",
    "unauthorized",
    "unavailable",
}

Elicit = Callable[[Any, mcp_types.ElicitRequestParams], Any]


@dataclass
class Reply:
    """One tool result, checked against the contract's envelope on construction."""

    raw: mcp_types.CallToolResult
    body: dict[str, Any]

    @classmethod
    def of(cls, raw: mcp_types.CallToolResult) -> Reply:
        body = raw.structured_content
        assert isinstance(body, dict), raw
        assert len(raw.content) == 1 and raw.content[0].type == "text"
        assert json.loads(raw.content[0].text) == body  # the same JSON as text
        assert isinstance(body.get("ok"), bool)
        assert raw.is_error is (not body["ok"])
        if not body["ok"]:
            error = body["error"]
            assert error["code"] in ERROR_CODES | {"chain_broken"}, body  # never an internal crash
            assert isinstance(error["message"], str) and "Traceback" not in error["message"]
        assert len(body.get("notices", [])) <= 3
        return cls(raw, body)

    @property
    def ok(self) -> bool:
        return bool(self.body["ok"])

    @property
    def code(self) -> str | None:
        return None if self.ok else self.body["error"]["code"]

    @property
    def error(self) -> dict[str, Any]:
        return self.body.get("error", {})

    @property
    def size(self) -> int:
        return len(self.raw.content[0].text.encode("utf-8"))

    def __getitem__(self, key: str) -> Any:
        return self.body[key]


class LedgerServer:
    """A running ``ledger serve`` and a connected stdio client session."""

    def __init__(
        self,
        db: Path,
        *,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
        elicitation: Elicit | None = None,
    ) -> None:
        self.db = db
        self.stderr_path = db.with_suffix(".stderr.log")
        self.params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "fact_ledger.server", "serve", "--db", str(db), *args],
            env={**os.environ, "LEDGER_CLIENT": "contract-test", **(env or {})},
            cwd=str(REPO),
        )
        self.elicitation = elicitation
        self._stack = ExitStack()

    def start(self) -> LedgerServer:
        self.portal = self._stack.enter_context(anyio.from_thread.start_blocking_portal())
        errlog = self._stack.enter_context(open(self.stderr_path, "w"))  # noqa: SIM115
        self.session: ClientSession = self._stack.enter_context(
            self.portal.wrap_async_context_manager(self._connect(errlog))
        )
        return self

    @asynccontextmanager
    async def _connect(self, errlog: Any) -> AsyncIterator[ClientSession]:
        async with (
            stdio_client(self.params, errlog=errlog) as (read, write),
            ClientSession(read, write, elicitation_callback=self.elicitation) as session,
        ):
            await session.initialize()
            yield session

    def close(self) -> None:
        self._stack.close()

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def call(self, tool: str, name: str | None, data: Any = None, **extra: Any) -> Reply:
        arguments: dict[str, Any] = {**extra}
        if name is not None:
            arguments[TOOL_KEYS[tool]] = name
        if data is not None:
            arguments["data"] = data
        return Reply.of(self.portal.call(self.session.call_tool, tool, arguments))

    def memory(self, action: str, data: Any = None) -> Reply:
        return self.call("memory", action, data)

    def events(self) -> int:
        return int(self.memory("status")["events"])

    def confirmed(self, content: str) -> int:
        """A fact the user states at the CLI (the user channel): user_confirmed and locked. Through
        this server the agent could only assert the label, which locks nothing."""
        done = ledger_cli("remember", content, "--db", str(self.db), "--json", check=True)
        return int(json.loads(done.stdout)["memory_id"])

    def list_tools(self) -> list[mcp_types.Tool]:
        return self.portal.call(self.session.list_tools).tools


@pytest.fixture(scope="module")
def server_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., LedgerServer]]:
    """Start servers for a module; all are stopped when the module ends."""
    started: list[LedgerServer] = []

    def start(name: str = "ledger", **kwargs: Any) -> LedgerServer:
        server = LedgerServer(tmp_path_factory.mktemp("mcp") / f"{name}.db", **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        server.close()
        assert "Traceback" not in server.stderr, server.stderr


@pytest.fixture(scope="module")
def srv(server_factory: Callable[..., LedgerServer]) -> LedgerServer:
    """One default server per module (isolation none)."""
    return server_factory()
