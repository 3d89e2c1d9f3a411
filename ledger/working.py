"""The working tier's pure rules: which notes form a conversation's working set, and which of
them answer a query.

A working note is not embedded until it is promoted (no model call on the hot write path, and
nothing provisional in the vector index), so its own conversation recalls it lexically: the set
holds a few dozen notes at most, and a token comparison over them costs microseconds. Tokens are
the folded words of the text and, in Chinese or Japanese, each pair of adjacent characters (one
character alone when a run is a single character).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from fact_ledger.ledger.text import STOP_WORDS, fold

TIERS = ("long", "working")  # where a memory is written: the long-term ledger or the working tier

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(f"[{_CJK}]+|[^\\W_{_CJK}]+")
_CJK_RUN = re.compile(f"^[{_CJK}]+$")


@lru_cache(maxsize=8192)  # a working set's notes are compared with every find of their conversation
def tokens(text: str) -> frozenset[str]:
    """The folded words of ``text`` (stop words left out) and the bigrams of its CJK runs."""
    out: set[str] = set()
    for run in _TOKEN.findall(fold(text)):
        if _CJK_RUN.match(run):
            out.update(run[i : i + 2] for i in range(max(len(run) - 1, 1)))
        elif run not in STOP_WORDS:
            out.add(run)
    return frozenset(out)


def match_score(query: str, text: str) -> float:
    """The share of the query's tokens that ``text`` holds (0 when it holds too few: at least
    half of them, and at least one). An empty query matches everything with 1.0."""
    wanted = tokens(query)
    if not wanted:
        return 1.0 if not query.strip() else 0.0
    shared = len(wanted & tokens(text))
    return shared / len(wanted) if shared >= max(1, math.ceil(len(wanted) / 2)) else 0.0


def select_set(notes: Sequence[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """The working set among a conversation's live notes (``sticky`` and ``touched``, the log
    position of the last write, signal or repeat that touched each): every sticky note, and the
    most recently touched others while the set holds fewer than ``size``; most recent first."""
    sticky = [n for n in notes if n["sticky"]]
    others = sorted((n for n in notes if not n["sticky"]), key=lambda n: n["touched"], reverse=True)
    kept = sticky + others[: max(size - len(sticky), 0)]
    return sorted(kept, key=lambda n: n["touched"], reverse=True)
