"""A read model's row as its msgspec Struct: the one way every read model types what it reads.

A statement's values are named by its columns, JSON text columns are decoded once here, and
``msgspec.convert`` checks every value against the Struct's field types, taking what SQLite
cannot store as such (an INTEGER 0/1 for a bool, a JSON array for a tuple) for what it means.
A row whose stored value has the wrong type is an error here, not a surprise in a caller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import msgspec

Row = TypeVar("Row", bound=msgspec.Struct)


def typed_row(
    cls: type[Row],
    columns: Sequence[str],
    values: Sequence[Any],
    *,
    json: Sequence[str] = (),
    renamed: Mapping[str, str] | None = None,
) -> Row:
    """``cls`` from a statement's ``columns`` and ``values``: the ``json`` columns decoded,
    ``renamed`` mapping a column to the field it fills (``{"valid_from": "event_time"}``)."""
    names = renamed or {}
    fields = {names.get(c, c): v for c, v in zip(columns, values, strict=True)}
    for name in json:
        fields[name] = msgspec.json.decode(fields[name])
    return msgspec.convert(fields, cls, strict=False)
