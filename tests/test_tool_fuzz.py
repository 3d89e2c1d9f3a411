"""Random tool calls, in-process through the MCP dispatcher: never an internal error, never a half write.

The contract tests drive the server over stdio with inputs someone thought of; this throws
hypothesis at every tool and route of ``server.mcp.routes`` with field names the route knows
mixed with junk, and values of every JSON type (ids near the ones that exist, blank and odd
strings, NaN, nesting). Whatever comes back must be the contract's envelope with a known error
code; a refused call must leave the log as it was; and at the end a fresh fold of the log must
equal the projections the calls built (``verify``).
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

import anyio.from_thread
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from fact_ledger.server.mcp.dispatch import LedgerTools
from fact_ledger.server.mcp.routes import TOOLS, ToolSpec

ERROR_CODES = {
    "invalid_input",
    "not_found",
    "locked",
    "version_conflict",
    "forbidden_workspace",
    "unauthorized",
    "unavailable",
}

_text = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "\u200b",
            "staging",
            "port 8080",
            "会议",
            "2026-01-01",
            "2026-13-45T99:00",
            "open",
            "all",
            "search",
            "keep_both",
            "1",
            "-1",
            "null",
            "[]",
            "{}",
            '"',
            "*",
            "OR (",
        ]
    ),
    st.text(max_size=12),
)
_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 12), st.integers(), _text, st.floats(allow_nan=True, allow_infinity=True)
)
_json = st.recursive(
    _scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=6,
)


def plausible(annotation: Any) -> st.SearchStrategy[Any]:
    """Values of a field's own type, most of which pass validation, so that calls reach the facade."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return plausible(args[0])
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(plausible(a) for a in args))
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin is list:
        return st.lists(plausible(args[0]) if args else _text, max_size=3)
    if origin is dict:
        return st.dictionaries(_text, st.integers(-1, 12) if args and args[1] is not Any else _scalar, max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return st.fixed_dictionaries({n: plausible(f.annotation) for n, f in annotation.model_fields.items()})
    simple = {bool: st.booleans(), int: st.integers(-1, 12), float: st.floats(0, 1), str: _text, type(None): st.none()}
    return simple.get(annotation, _json)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[ToolSpec, Any, Any]:
    spec = draw(st.sampled_from(list(TOOLS.values())))
    # Mostly real route names (the junk ones are all refused the same way).
    name = draw(st.sampled_from(sorted(spec.routes)) if draw(st.integers(0, 9)) else _scalar)
    route = spec.routes.get(name) if isinstance(name, str) else None
    if route is None or draw(st.integers(0, 4)) == 0:
        return spec, name, draw(st.one_of(st.dictionaries(_text, _json, max_size=4), _json))
    # From the route's own example: some fields dropped, some set to a value of their type (or,
    # now and then, to anything at all), now and then an unknown field.
    fields = route.model.model_fields
    data = dict(route.example)
    for key in draw(st.lists(st.sampled_from(sorted(data)), max_size=2, unique=True)) if data else []:
        del data[key]
    for key in draw(st.lists(st.sampled_from(sorted(fields)), max_size=4, unique=True)) if fields else []:
        data[key] = draw(plausible(fields[key].annotation) if draw(st.integers(0, 5)) else _json)
    if draw(st.integers(0, 5)) == 0:
        data[draw(_text)] = draw(_scalar)
    return spec, name, data


def _events(app: LedgerApp) -> int:
    return app.store.last_position()


def test_no_tool_call_crashes_or_half_writes(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "fuzz.db"), backup=str(tmp_path / "backup.jsonl"), client="fuzz"))
    for text, source in (
        ("The staging API listens on port 8080", "user_confirmed"),
        ("The staging API listens on port 9090", "agent_generated"),
        ("会议改到周三下午三点", "document_extracted"),
    ):
        app.remember(text, subject="staging" if "staging" in text else "会议", source_type=source)
    tools = LedgerTools(app)
    seen: dict[str, int] = {"ok": 0, "refused": 0}
    try:
        with anyio.from_thread.start_blocking_portal() as portal:

            @settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
            @given(calls=st.lists(tool_calls(), min_size=1, max_size=4))
            def run(calls: list[tuple[ToolSpec, Any, Any]]) -> None:
                for spec, name, data in calls:
                    before = _events(app)
                    raw = portal.call(tools.call, spec, name, data, None)
                    body = raw.structured_content
                    assert isinstance(body, dict) and isinstance(body.get("ok"), bool), body
                    assert raw.is_error is (not body["ok"])
                    if body["ok"]:
                        seen["ok"] += 1
                        continue
                    seen["refused"] += 1
                    error = body["error"]
                    assert error["code"] in ERROR_CODES, (spec.name, name, data, error)
                    assert "internal error" not in error["message"], (spec.name, name, data, error)
                    assert _events(app) == before, (spec.name, name, data, error)  # refused: nothing written

            run()
        # Both outcomes were exercised, and what the calls built is what a fresh fold builds.
        assert seen["ok"] > 0 and seen["refused"] > 0, seen
        verdict = app.verify()
        assert verdict["ok"], verdict
    finally:
        app.close()
