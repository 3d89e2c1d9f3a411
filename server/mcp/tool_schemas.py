"""The JSON Schema each tool advertises, generated from the edge models that validate its calls.

Generated, not written: :mod:`server.schemas.memory` and :mod:`server.schemas.admin` are what accepts or
refuses a call, so the advertised schema cannot drift from them. Per tool: the name key
(``action``/``view``/``task``) is an enum with a one-line summary of each name, and ``data`` is
an ``anyOf`` of the models' schemas, each branch titled with the names it serves (``"status|help"``
when several share one model). Not a top-level ``oneOf``: several clients refuse combinators at
the top of an input schema, and the branches cannot be exclusive on ``data`` alone (many actions
take no required field).

Kept compact (``tools/list`` is read by every client at start): no titles, no null branches of
optional fields (a ``null`` is treated as absent anyway), no defaults that are empty, no bounds
that only restate the integer range or forbid empty text, ``$defs`` inlined.
"""

from __future__ import annotations

from typing import Any

from fact_ledger.server.mcp.routes import ToolSpec
from fact_ledger.server.schemas.describe import compact_schema


def tool_schemas(spec: ToolSpec) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(name_schema, data_schema)`` for one tool."""
    names = {
        "type": "string",
        "enum": list(spec.routes),
        "description": "required; " + "; ".join(f"{n}: {r.summary}" for n, r in spec.routes.items()),
    }
    groups: dict[type, list[str]] = {}
    for name, route in spec.routes.items():
        groups.setdefault(route.model, []).append(name)
    branches = []
    for model, served in groups.items():
        branch = {k: v for k, v in compact_schema(model, described=False).items() if k != "type"}  # data is the object
        branches.append({"title": "|".join(served), **branch})
    data = {"type": "object", "description": f"fields of the {spec.key}: the branch titled with it", "anyOf": branches}
    return names, data
