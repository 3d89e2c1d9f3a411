"""An edge model described from its own schema: one declaration, read by every entry point.

:func:`compact_schema` is the model's JSON schema without what a client need not read (titles,
empty defaults, ``$defs``), the form ``tools/list`` advertises (server/mcp/tool_schemas.py);
:func:`field_line` is the one line of fields ``help`` shows; server/cli/model_options.py makes
CLI options of the same schema. A field added to an edge model is in all three at once.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

_INT_MAX = 2**63 - 1
_LISTED_CHOICES = 8  # a longer enum (the event types) is named by its description in help
_RENAMED = {"ge": "minimum", "le": "maximum"}  # pydantic writes these for some annotated bounds


def compact_schema(model: type[BaseModel], *, described: bool) -> dict[str, Any]:
    """The model's JSON schema, compacted; ``described``: keep each field's description (``help``
    gives them; ``tools/list`` leaves them out to stay small, and points at ``help``)."""
    schema = model.model_json_schema()
    schema.pop("description", None)  # the model's docstring speaks to developers
    defs = schema.pop("$defs", {})
    compact: dict[str, Any] = _compact(schema, defs, described=described)
    return compact


def field_line(model: type[BaseModel], *, governed: bool = False) -> str:
    """One line naming every field of ``model`` the way ``help`` shows it, generated from the model
    (so a field added there is in ``help`` at once): ``name*`` required, ``name[]`` a list,
    ``name{}`` an object, ``lo..hi`` a range, ``(a|b; default; what it means)``, ``ISO`` a time.
    ``governed``: ``authorized`` is required (the route refuses without it)."""
    schema = compact_schema(model, described=True)
    required = set(schema.get("required", ())) | ({"authorized"} if governed else set())
    times = set(getattr(model, "TIME_FIELDS", ()))
    properties: dict[str, Any] = schema.get("properties", {})
    names = sorted(properties, key=lambda n: n == "authorized")  # the governed mark last, as the docs write it
    return ", ".join(_field_words(n, properties[n], n in required, n in times) for n in names)


def _field_words(name: str, prop: dict[str, Any], required: bool, time: bool) -> str:
    shapes = prop.get("anyOf", [prop])
    marks = [_shape_mark(s) for s in shapes if s.get("type") in ("array", "object")]
    words = name + (marks[0] if marks else "")
    words += "*" if required else ""
    notes: list[str] = []
    for shape in shapes:
        if "maximum" in shape:  # a bare lower bound (ids from 1) says nothing worth the words
            words += f" {_number(shape.get('minimum', ''))}..{_number(shape['maximum'])}"
        if "enum" in shape and (len(shape["enum"]) <= _LISTED_CHOICES or not prop.get("description")):
            notes.append("|".join(str(v) for v in shape["enum"]))
    if time:
        words += " ISO"
    if "default" in prop:
        notes.append(_number(prop["default"]))
    if prop.get("description"):
        notes.append(prop["description"])
    return words + (f" ({'; '.join(notes)})" if notes else "")


def _shape_mark(shape: dict[str, Any]) -> str:
    """``[]``, ``[{a,b}]`` for a list of objects, ``{}`` for an object."""
    if shape.get("type") == "object":
        return "{}"
    items = shape.get("items", {})
    return "[{" + ",".join(items["properties"]) + "}]" if "properties" in items else "[]"


def _number(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _compact(node: Any, defs: dict[str, Any], *, described: bool = False) -> Any:
    if isinstance(node, list):
        return [_compact(n, defs, described=described) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _compact(defs[node["$ref"].rsplit("/", 1)[-1]], defs, described=described)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):  # field names, not schema keywords
            out[key] = {name: _compact(field, defs, described=described) for name, field in value.items()}
            continue
        if key == "title" or (key == "default" and value in (None, "", [], {}, False)):
            continue
        if key == "description" and not described:
            continue
        if key == "minLength" and value == 1:  # blank text is refused with a clear error anyway
            continue
        if key == "additionalProperties" and value is True:
            continue
        name = _RENAMED[key] if key in _RENAMED else str(key)
        if name == "maximum" and value == _INT_MAX:
            continue
        out[name] = _compact(value, defs, described=described)
    alternatives = out.get("anyOf")
    if isinstance(alternatives, list):
        kept = [a for a in alternatives if a != {"type": "null"}]
        if len(kept) == 1:
            out = {**{k: v for k, v in out.items() if k != "anyOf"}, **kept[0]}
        else:
            out["anyOf"] = kept
    return out
