"""Small helpers for SQL text shared by the store and the read models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def marks(count: int) -> str:
    """``?, ?, …`` with ``count`` placeholders, for ``IN (…)`` over a list of parameters."""
    return ", ".join("?" * count)


# SQLite refuses a statement with more parameters than this (SQLITE_MAX_VARIABLE_NUMBER's
# default since 3.32 is 32766); a multi-row insert is split below it.
MAX_PARAMETERS = 32766


def insert_rows(conn: Any, head: str, rows: Sequence[Sequence[Any]], tail: str = "") -> None:
    """``head VALUES (…), (…), … tail`` for every row in as few statements as the parameter limit
    allows: one statement where ``executemany`` would run one per row (a write's band keys, its
    projections' checkpoints), so a write's statement count does not grow with its rows."""
    if not rows:
        return
    width = len(rows[0])
    group = "(" + marks(width) + ")"
    step = max(1, MAX_PARAMETERS // width)
    for start in range(0, len(rows), step):
        chunk = rows[start : start + step]
        values = ", ".join([group] * len(chunk))
        conn.execute(f"{head} VALUES {values} {tail}".rstrip(), [v for row in chunk for v in row])
