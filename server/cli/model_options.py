"""CLI options generated from an operation's edge model: one declaration, every entry point.

A field of :class:`~server.schemas.memory.RememberData` is an MCP field, a ``help`` line and a
JSON-schema property (:mod:`server.schemas.describe`); :func:`model_options` makes it a CLI
option too, ``--field-name``, typed from the same schema (a choice, a bounded number, a flag),
its help the field's description. The command hands the values back to the model's ``parse``,
so the CLI validates exactly as an agent's call is validated. Fields whose CLI form differs (the
content as an argument, ``--tag`` repeated, ``--retracts ID``) are declared by the command and
skipped here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click
from pydantic import BaseModel

from fact_ledger.server.schemas.describe import compact_schema

F = TypeVar("F", bound=Callable[..., Any])


class ModelOption(click.Option):
    """An option generated from an edge model's field (``field``): documented in docs/contract.md
    with the operation, and exercised by tests/cli_catalogue.py from the model itself."""

    def __init__(self, *args: Any, field: str, schema: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.field = field
        self.schema = schema


def model_options(model: type[BaseModel], *, skip: Iterable[str] = ()) -> Callable[[F], F]:
    """Add an option for every field of ``model`` not in ``skip``; each arrives as the field's
    own keyword (``None`` when not given, which ``EdgeModel.parse`` treats as absent)."""
    properties: dict[str, Any] = compact_schema(model, described=True).get("properties", {})
    skipped = set(skip)
    times = set(getattr(model, "TIME_FIELDS", ()))

    def decorate(func: F) -> F:
        for name in reversed([n for n in properties if n not in skipped]):
            func = _option(name, properties[name], time=name in times)(func)
        return func

    return decorate


def _option(name: str, prop: dict[str, Any], *, time: bool) -> Callable[[F], F]:
    flag = "--" + name.replace("_", "-")
    said = prop.get("description", "") + (" (ISO 8601)" if time else "")
    help_text = said[:1].upper() + said[1:] + ("." if said and not said.endswith(".") else "")
    shapes: list[dict[str, Any]] = prop.get("anyOf", [prop])
    shape: dict[str, Any] = shapes[0] if len(shapes) == 1 else {"type": "string"}  # a time or a position: given as text
    kind = shape.get("type")
    common: dict[str, Any] = {"cls": ModelOption, "field": name, "schema": prop, "help": help_text}
    if kind == "boolean":
        return click.option(flag, name, is_flag=True, default=None, **common)
    if "enum" in shape:
        return click.option(flag, name, type=click.Choice([str(v) for v in shape["enum"]]), default=None, **common)
    if kind == "integer":
        whole = click.IntRange(min=shape.get("minimum"), max=shape.get("maximum"))
        return click.option(flag, name, type=whole, default=None, **common)
    if kind == "number":
        real = click.FloatRange(min=shape.get("minimum"), max=shape.get("maximum"))
        return click.option(flag, name, type=real, default=None, **common)
    if kind == "string":
        return click.option(flag, name, default=None, **common)
    raise TypeError(f"{name}: a {kind} field needs its own CLI option (declare it and skip it here)")
