"""The advertised input schemas are real JSON Schema, generated from the edge models: what a
client may check before sending is what the server accepts (and refuses)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from mcp import Client

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.mcp.routes import TOOLS
from fact_ledger.server.mcp.server import build_server

pytestmark = pytest.mark.anyio
# Every client reads tools/list at start; tools/bench/reply_size measures it. 12 KiB since the
# conversations and the working tier (session_id, turn, tier, sticky, reinforce, working, promote, sweep);
# 13 KiB since hindsight (health, whatif, apply_suggestion, undo, entity aliases).
TOOLS_LIST_BUDGET = 13 * 1024


async def listed(app: LedgerApp) -> dict[str, dict[str, Any]]:
    async with Client(build_server(app)) as c:
        return {t.name: t.input_schema for t in (await c.list_tools()).tools}


def branch(schema: dict[str, Any], name: str) -> dict[str, Any]:
    found = [b for b in schema["properties"]["data"]["anyOf"] if name in b["title"].split("|")]
    assert len(found) == 1, name
    return found[0]


async def test_every_tool_publishes_a_schema_per_name_from_its_model(app: LedgerApp) -> None:
    schemas = await listed(app)
    size = 0
    for tool, spec in TOOLS.items():
        schema = schemas[tool]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["required"] == [spec.key]
        assert schema["properties"][spec.key]["enum"] == list(spec.routes)
        titles = [n for b in schema["properties"]["data"]["anyOf"] for n in b["title"].split("|")]
        assert sorted(titles) == sorted(spec.routes)  # every name, once
        for name, route in spec.routes.items():
            fields = set(branch(schema, name).get("properties", {}))
            assert fields == set(route.model.model_fields), (tool, name)  # generated: cannot drift
        size += len(json.dumps(schema, separators=(",", ":")))
    assert size < TOOLS_LIST_BUDGET


async def test_the_schema_types_fields_as_the_server_checks_them(app: LedgerApp) -> None:
    memory = (await listed(app))["memory"]
    remember = branch(memory, "remember")
    assert remember["required"] == ["content"]
    assert remember["properties"]["source_type"]["enum"] == [
        "user_confirmed",
        "document_extracted",
        "agent_generated",
        "unknown",
    ]
    assert remember["properties"]["confidence"] == {"minimum": 0.0, "maximum": 1.0, "type": "number"}
    assert branch(memory, "find")["properties"]["limit"] == {
        "default": 5,
        "maximum": 50,
        "minimum": 1,
        "type": "integer",
    }
    claim = remember["properties"]["claims"]["items"]
    assert claim["required"] == ["subject", "attribute", "value"] and claim["additionalProperties"] is False


@pytest.mark.parametrize("tool", sorted(TOOLS))
async def test_examples_pass_and_bad_values_fail_both_the_schema_and_the_server(app: LedgerApp, tool: str) -> None:
    schema = (await listed(app))[tool]
    spec = TOOLS[tool]
    for name, route in spec.routes.items():
        jsonschema.validate(route.example, branch(schema, name))  # the documented example is valid
        route.model.parse(route.example)
    bad = [
        ("remember", {"content": "x", "source_type": "rumour"}),
        ("find", {"limit": 51}),
        ("read", {"memory_id": 0}),
        ("update", {"memory_id": 1, "confidence": 2}),
    ]
    for name, data in bad if tool == "memory" else []:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(data, branch(schema, name))
        with pytest.raises(InvalidInput):
            spec.routes[name].model.parse(data)
