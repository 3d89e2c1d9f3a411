"""Memoising pure functions of text without keeping large texts alive.

A write asks several read models for the same derivations of one text (its signature, its
claims, its index form), so those functions are memoised. A plain ``lru_cache`` would keep its
last few hundred arguments and results, and a memory may hold 2 MiB of content: a few hundred
large memories would pin gigabytes. Texts longer than ``max_chars`` are computed every time.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, TypeVar

R = TypeVar("R")


def text_cache(maxsize: int, max_chars: int = 8192) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """``lru_cache(maxsize)`` for calls whose first argument is a string of at most ``max_chars``."""

    def decorate(fn: Callable[..., R]) -> Callable[..., R]:
        cached = lru_cache(maxsize=maxsize)(fn)

        @wraps(fn)
        def call(text: str, *args: Any) -> R:
            return cached(text, *args) if len(text) <= max_chars else fn(text, *args)

        call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        call.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return call

    return decorate
