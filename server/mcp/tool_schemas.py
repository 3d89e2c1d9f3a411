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

_INT_MAX = 2**63 - 1
_RENAMED = {"ge": "minimum", "le": "maximum"}  # pydantic writes these for some annotated bounds


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
        schema = model.model_json_schema()
        schema.pop("description", None)  # the model's docstring speaks to developers
        defs = schema.pop("$defs", {})
        branch = {k: v for k, v in _compact(schema, defs).items() if k != "type"}  # data is the object
        branches.append({"title": "|".join(served), **branch})
    data = {"type": "object", "description": f"fields of the {spec.key}: the branch titled with it", "anyOf": branches}
    return names, data


def _compact(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_compact(n, defs) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _compact(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):  # field names, not schema keywords
            out[key] = {name: _compact(field, defs) for name, field in value.items()}
            continue
        if key == "title" or (key == "default" and value in (None, "", [], {}, False)):
            continue
        if key == "minLength" and value == 1:  # blank text is refused with a clear error anyway
            continue
        if key == "additionalProperties" and value is True:
            continue
        key = _RENAMED.get(key, key)
        if key == "maximum" and value == _INT_MAX:
            continue
        out[key] = _compact(value, defs)
    alternatives = out.get("anyOf")
    if isinstance(alternatives, list):
        kept = [a for a in alternatives if a != {"type": "null"}]
        if len(kept) == 1:
            out = {**{k: v for k, v in out.items() if k != "anyOf"}, **kept[0]}
        else:
            out["anyOf"] = kept
    return out
