"""The stdio transport, with one thing the SDK's lacks: a request whose JSON holds an escaped
lone UTF-16 surrogate (``"\\ud83d"``) is answered.

JavaScript clients write such escapes when a string was cut in the middle of an emoji (a
UTF-16 code unit is half of one). The SDK's stdio reader hands the line to a JSON parser that
refuses them and drops the line, so the client waits for an answer that never comes. Here the
line is read again by Python's ``json``, which keeps the surrogate, and the request goes on to
its tool, whose edge model refuses the text as for any caller (``invalid_input`` naming the
field; nothing is written). A line that is not JSON at all stays the SDK's business (it names
no id to answer).
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as mcp_types
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError


def reread(item: SessionMessage | Exception) -> SessionMessage | Exception:
    """A message for a line the SDK's parser refused but Python's reads (a lone surrogate); anything else unchanged."""
    if not isinstance(item, ValidationError):
        return item
    errors = item.errors()
    line = errors[0].get("input") if errors and errors[0].get("type") == "json_invalid" else None
    if not isinstance(line, str):
        return item
    try:
        decoded = json.loads(line)
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(decoded, by_name=False))
    except (ValueError, ValidationError, RecursionError):  # not JSON, not JSON-RPC, or nested past reading
        return item


class LenientReads:
    """The SDK's read stream, each item passed through :func:`reread` (its ``ReadStream`` protocol)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    @property
    def last_context(self) -> Any:  # the sender's context, which the SDK's dispatcher restores
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        return reread(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> LenientReads:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        return reread(await self._inner.__anext__())

    async def __aenter__(self) -> LenientReads:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


async def run_stdio(server: MCPServer) -> None:
    """``server.run_stdio_async()``, reading through :class:`LenientReads`."""
    lowlevel = server._lowlevel_server  # what run_stdio_async runs; the SDK offers no other handle
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(LenientReads(read_stream), write_stream, lowlevel.create_initialization_options())
