"""Cursor paging for list answers (find, conflicts, audit, history, timeline).

A cursor is opaque to agents: its fields ``a~b~f~p~c~s`` joined by ``~`` (empty ones at the end
left out), every character URL-safe (``5~7~30012c470b82~~~2.1.1``: a cursor is read back into
the agent's context, where base64 of JSON cost twice the bytes). It carries

* ``a`` — where the next page starts: the last sort key shown (a conflict id, a log position, a
  version) for lists in a fixed order, or the number of items already shown for ranked lists;
* ``b`` — a log position bound taken when the first page was read: ranked lists (``find``,
  ``timeline``) only consider what the ledger held at that position, so memories written
  between two pages never push earlier results onto a later page or show an item twice;
* ``p`` — for ``find``, the first page's size (what its window and candidate pool were sized
  by): later pages order the same candidates the same way, so the order does not change from
  page to page (``Views._order``; :func:`projections.hybrid.hybrid_search`, ``base``). Left out
  when it is ``a + 1``, as after a first page of long-term memories only (a cursor is read back
  into the agent's context: every byte counts);
* ``c`` — for ``find``, ``1`` when the first page found nothing hot and answered from the cold
  memories: later pages order the cold as it did (its answer warmed them, so a hot-only look
  would find only those again);
* ``s`` — for ``find``, the ids already shown (sorted, as base-36 steps from one to the next):
  a later page shows the first of the order that it has not shown, so a write between pages
  that moves the order (a new memory changes full text's word weights; a retirement or an edit
  moves one) neither repeats a memory nor skips one. Left out past :data:`MAX_SHOWN` ids (the
  page is then cut from the order by position, as without writes);
* ``f`` — a fingerprint of the request (query and filters, not the limit), so a cursor pasted
  into a different request is refused instead of answering something unrelated.

A page answers ``next_cursor`` (``null`` on the last page) and ``has_more``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from fact_ledger.ledger.errors import InvalidInput

MAX_CURSOR_CHARS = 1024
MAX_OFFSET = 10_000  # ranked lists are recomputed per page: deeper than this, narrow the query
MAX_SHOWN = 120  # ids a find cursor carries (base-36 steps: a few characters each)
STANDING_WINDOW = 20  # hits past a page looked at for a claim set's leader that answers the query too


@dataclass(frozen=True)
class Cursor:
    after: Any = None  # last sort key shown, or the offset for ranked lists
    bound: int | None = None  # log position the first page was read at
    first: int | None = None  # the first page's size, for a ranking whose candidates it sized (find)
    cold: bool = False  # the first page answered from the cold memories, nothing hot answering (find)
    shown: frozenset[int] | None = None  # the ids the pages before showed (find), when it carries them


def fingerprint(kind: str, request: dict[str, Any]) -> str:
    """A short hash of the request's meaning (its filters), to tie a cursor to it."""
    body = json.dumps(
        [kind, {k: v for k, v in sorted(request.items()) if k not in ("cursor", "limit")}],
        sort_keys=True,
        default=str,
        ensure_ascii=False,
    )
    return hashlib.sha256(body.encode()).hexdigest()[:12]


def encode(
    kind: str,
    request: dict[str, Any],
    after: int,
    bound: int | None = None,
    first: int | None = None,
    *,
    cold: bool = False,
    shown: frozenset[int] | set[int] | None = None,
) -> str:
    kept = first is not None and first != after + 1
    fields = [
        str(after),
        "" if bound is None else str(bound),
        fingerprint(kind, request),
        str(first) if kept else "",
        "1" if cold else "",
        _pack(shown) if shown and len(shown) <= MAX_SHOWN else "",
    ]
    return "~".join(fields).rstrip("~")


def decode(kind: str, request: dict[str, Any], cursor: str | None) -> Cursor:
    """The cursor's position, or the first page; a foreign or damaged cursor is ``invalid_input``."""
    if not cursor:
        return Cursor()
    try:
        if len(cursor) > MAX_CURSOR_CHARS or not isinstance(cursor, str):
            raise ValueError
        parts = cursor.split("~")
        if not 3 <= len(parts) <= 6:
            raise ValueError
        a, b, mark, p, c, s = parts + [""] * (6 - len(parts))
        after, bound, first = _number(a), _number(b) if b else None, _number(p) if p else None
        if c not in ("", "1"):
            raise ValueError
        shown = _unpack(s) if s else None
    except (ValueError, TypeError):
        raise InvalidInput(
            "cursor is not one this ledger gave out: pass next_cursor as it came", field="cursor"
        ) from None
    if mark != fingerprint(kind, request):
        raise InvalidInput(
            "cursor belongs to a different request: keep the query and filters of the first page", field="cursor"
        )
    if first is not None and not 0 < first <= MAX_OFFSET:
        raise InvalidInput("cursor is damaged", field="cursor")
    return Cursor(after=after, bound=bound, first=first, cold=c == "1", shown=shown)


def _number(text: str) -> int:
    """A whole number a cursor holds (ASCII digits, no sign): anything else is a ``ValueError``."""
    if not text.isascii() or not text.isdigit() or len(text) > 19:
        raise ValueError(text)
    return int(text)


def _pack(ids: frozenset[int] | set[int]) -> str:
    """Sorted ids as base-36 steps ("1a.3.5"): a few characters an id in a cursor."""
    out, last = [], 0
    for memory_id in sorted(ids):
        out.append(_base36(memory_id - last))
        last = memory_id
    return ".".join(out)


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        n, r = divmod(n, 36)
        text = digits[r] + text
        if not n:
            return text


def _unpack(packed: Any) -> frozenset[int]:
    """The ids :func:`_pack` wrote; anything else is a ``ValueError`` (a damaged cursor)."""
    if not isinstance(packed, str) or not packed:
        raise ValueError(packed)
    ids, last = [], 0
    for step in packed.split("."):
        if not step.isascii() or not step.isalnum() or len(step) > 8:
            raise ValueError(step)
        last += int(step, 36)
        ids.append(last)
    if len(ids) > MAX_SHOWN:
        raise ValueError(packed)
    return frozenset(ids)


def offset_of(cursor: Cursor) -> int:
    """The ranked-list offset a cursor carries (0 on the first page)."""
    offset = cursor.after or 0
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
        raise InvalidInput("cursor is damaged", field="cursor")
    return offset


def key_of(cursor: Cursor) -> int | None:
    """The integer sort key a keyset cursor carries (None on the first page)."""
    key = cursor.after
    if key is None:
        return None
    if isinstance(key, bool) or not isinstance(key, int):
        raise InvalidInput("cursor is damaged", field="cursor")
    return key
