"""Two texts side by side: a word diff and a lexical closeness (``compare``'s ``diff`` and
``closeness.lexical``).

Tokens are words (runs of letters and digits), single punctuation marks, and single CJK
characters: Chinese has no spaces, and a character is the smallest unit a reader sees change
(备用 → 主用 is one replaced character, not a replaced sentence). The diff runs
:class:`difflib.SequenceMatcher` over the tokens without its junk heuristic (short texts,
repeated words are meaningful), and every run carries the original text it spans on each side,
spacing included, so the runs read as the texts do.
"""

from __future__ import annotations

import difflib
import re
from typing import TypedDict

from fact_ledger.ledger.fingerprint import shingles

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+|[^\\w\\s]", re.UNICODE)
_CJK_CHAR = re.compile(f"[{_CJK}]")
_PUNCT = re.compile(r"[^\w\s]")
OPS = ("equal", "delete", "insert", "replace")


class Run(TypedDict):
    """One stretch of the diff: ``op`` and the text it spans on each side ("" where absent)."""

    op: str
    left: str
    right: str


def tokens(text: str) -> list[tuple[str, int, int]]:
    """``(token, start, end)`` for every word, punctuation mark and CJK character of ``text``."""
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def word_diff(left: str, right: str) -> list[Run]:
    """The runs that turn ``left`` into ``right``, in order; equal texts give one ``equal`` run
    (none when both are empty)."""
    lt, rt = tokens(left), tokens(right)
    matcher = difflib.SequenceMatcher(None, [t[0] for t in lt], [t[0] for t in rt], autojunk=False)
    runs: list[Run] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        runs.append({"op": op, "left": _span(left, lt, i1, i2), "right": _span(right, rt, j1, j2)})
    return runs


def _span(text: str, toks: list[tuple[str, int, int]], start: int, end: int) -> str:
    return text[toks[start][1] : toks[end - 1][2]] if end > start else ""


def render(runs: list[Run]) -> str:
    """The diff inline, as ``git diff --word-diff`` writes it: ``[-old-]{+new+}``."""
    parts: list[str] = []
    for run in runs:
        if run["op"] == "equal":
            parts.append(run["left"])
        else:
            parts.append(
                (f"[-{run['left']}-]" if run["left"] else "") + (f"{{+{run['right']}+}}" if run["right"] else "")
            )
    out = ""
    for part in parts:
        out += part if not out or _joined(out, part) else f" {part}"
    return out


def _joined(before: str, after: str) -> bool:
    """No space between two runs when CJK meets CJK, or before punctuation (through a marker's
    bracket)."""
    last, first = before.rstrip("-+]}")[-1:], after.lstrip("[{-+")[:1]
    return bool(_PUNCT.match(first)) or (bool(_CJK_CHAR.match(last)) and bool(_CJK_CHAR.match(first)))


def lexical_closeness(left: str, right: str) -> float:
    """Jaccard similarity of the two texts' shingles (:func:`ledger.fingerprint.shingles`: CJK
    bigrams, 4-grams elsewhere), 0..1 to three places — what the near-duplicate signature
    estimates, computed exactly."""
    a, b = shingles(left), shingles(right)
    if not a and not b:
        return 1.0
    return round(len(a & b) / len(a | b), 3)
