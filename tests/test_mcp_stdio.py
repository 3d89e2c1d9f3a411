"""The stdio reader's second look at a line the SDK's JSON parser refused (server/mcp/stdio.py).

The whole path, a real server answering such a line, is in
tests/contract/test_bad_input.py::test_raw_json_rpc_with_invalid_unicode_and_nan_is_answered.
"""

from __future__ import annotations

import mcp.types as mcp_types
import pytest
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from fact_ledger.server.mcp.stdio import reread


def refused(line: str) -> ValidationError:
    """What the SDK's stdio reader hands on for ``line`` when its parser refuses it."""
    with pytest.raises(ValidationError) as caught:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    return caught.value


def test_a_lone_surrogate_escape_becomes_the_request_it_names() -> None:
    line = (
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory",'
        '"arguments":{"action":"remember","data":{"content":"cut \\ud83d"}}}}'
    )
    message = reread(refused(line))
    assert isinstance(message, SessionMessage)
    request = message.message
    assert isinstance(request, mcp_types.JSONRPCRequest)
    assert request.id == 7
    assert request.params is not None
    assert request.params["arguments"]["data"]["content"] == "cut \ud83d"  # kept: the tool refuses it


@pytest.mark.parametrize(
    "line",
    [
        "not json at all",
        '{"jsonrpc":"2.0","id":1,"method":"tools/call",',  # cut short
        '{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":NaN-}}',
        '{"id": "\\ud83d"}',  # JSON, with a lone surrogate, but no JSON-RPC message
        '{"jsonrpc":"2.0","id":1,"method":"x","params":' + '{"a":' * 5000 + "1" + "}" * 5001,  # past Python's reach
    ],
)
def test_what_python_cannot_read_either_stays_as_the_sdk_left_it(line: str) -> None:
    error = refused(line)
    assert reread(error) is error


def test_messages_and_other_errors_pass_unchanged() -> None:
    message = SessionMessage(
        mcp_types.jsonrpc_message_adapter.validate_json('{"jsonrpc":"2.0","method":"ping","id":1}')
    )
    assert reread(message) is message
    other = RuntimeError("transport")
    assert reread(other) is other
