"""Small helpers for SQL text shared by the store and the read models."""

from __future__ import annotations


def marks(count: int) -> str:
    """``?, ?, …`` with ``count`` placeholders, for ``IN (…)`` over a list of parameters."""
    return ", ".join("?" * count)
