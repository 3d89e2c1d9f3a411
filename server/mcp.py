"""The MCP server: thin tools over the application facade (no business logic here).

Every tool takes ``{"action"|"view"|"task": ..., "data": {...}}`` and returns one JSON object
as structured content (and as text). Errors map to ``{"ok": false, "error": {...}}`` with
``isError`` set; no traceback ever reaches the agent.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import mcp.types as mcp_types
from mcp.server import MCPServer

from ledger.errors import InvalidInput, LedgerError
from server.app import LedgerApp
from server.config import Settings
from server.schemas import FindData, ReadData, RememberData, UpdateData

log = logging.getLogger("fact_ledger.mcp")


def _result(payload: dict[str, Any], *, error: bool = False) -> mcp_types.CallToolResult:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)],
        structured_content=payload,
        is_error=error,
    )


def _error(exc: LedgerError) -> mcp_types.CallToolResult:
    return _result({"ok": False, "error": exc.to_dict()}, error=True)


def _memory_actions(app: LedgerApp) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    def update(data: dict[str, Any]) -> dict[str, Any]:
        parsed = UpdateData.parse(data).to_kwargs()
        authorized = parsed.pop("authorized", False)
        return app.update(authorization="agent_asserted" if authorized else "", **parsed)

    return {
        "remember": lambda d: app.remember(**RememberData.parse(d).to_kwargs()),
        "find": lambda d: app.find(**FindData.parse(d).to_kwargs()),
        "read": lambda d: app.read(**ReadData.parse(d).to_kwargs()),
        "update": update,
        "status": lambda d: app.status(),
    }


def build_server(app: LedgerApp) -> MCPServer:
    server = MCPServer(name="fact-ledger", log_level="WARNING",
                       instructions="A shared, trustworthy long-term memory. Start with memory help.")
    actions = _memory_actions(app)

    @server.tool(name="memory", description=(
        "Remember and find facts. action: remember | find | read | update | status. "
        "data: fields of the action, e.g. {\"action\": \"find\", \"data\": {\"query\": \"staging port\"}}."))
    def memory(action: str, data: dict[str, Any] | None = None) -> mcp_types.CallToolResult:
        try:
            handler = actions.get(action)
            if handler is None:
                raise InvalidInput(f"unknown action {action!r}; one of {', '.join(actions)}", field="action")
            return _result(handler(data or {}))
        except LedgerError as exc:
            return _error(exc)
        except Exception as exc:  # never a traceback to an agent
            log.exception("memory %s failed", action)
            return _error(LedgerError(f"internal error: {type(exc).__name__}"))

    return server


def run_server(settings: Settings, *, http: bool = False, port: int = 8765) -> None:
    logging.basicConfig(level=logging.WARNING)
    app = LedgerApp(settings)
    server = build_server(app)
    if http:
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()
