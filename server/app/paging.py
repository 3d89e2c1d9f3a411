"""Cursor paging for list answers (find, conflicts, audit, history, timeline).

A cursor is opaque to agents: base64url of a small JSON object. It carries

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
* ``f`` — a fingerprint of the request (query and filters, not the limit), so a cursor pasted
  into a different request is refused instead of answering something unrelated.

A page answers ``next_cursor`` (``null`` on the last page) and ``has_more``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from fact_ledger.ledger.errors import InvalidInput

MAX_CURSOR_CHARS = 512
MAX_OFFSET = 10_000  # ranked lists are recomputed per page: deeper than this, narrow the query
STANDING_WINDOW = 20  # hits past a page looked at for a claim set's leader that answers the query too


@dataclass(frozen=True)
class Cursor:
    after: Any = None  # last sort key shown, or the offset for ranked lists
    bound: int | None = None  # log position the first page was read at
    first: int | None = None  # the first page's size, for a ranking whose candidates it sized (find)
    cold: bool = False  # the first page answered from the cold memories, nothing hot answering (find)


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
    after: Any,
    bound: int | None = None,
    first: int | None = None,
    *,
    cold: bool = False,
) -> str:
    kept = first is not None and not (isinstance(after, int) and first == after + 1)
    body = {"a": after, "b": bound, "f": fingerprint(kind, request), **({"p": first} if kept else {})}
    if cold:
        body["c"] = 1
    raw = json.dumps(body, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(kind: str, request: dict[str, Any], cursor: str | None) -> Cursor:
    """The cursor's position, or the first page; a foreign or damaged cursor is ``invalid_input``."""
    if not cursor:
        return Cursor()
    try:
        if len(cursor) > MAX_CURSOR_CHARS:
            raise ValueError
        body = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        after, bound, mark, first, cold = body["a"], body["b"], body["f"], body.get("p"), body.get("c", 0)
    except (ValueError, TypeError, KeyError):
        raise InvalidInput(
            "cursor is not one this ledger gave out: pass next_cursor as it came", field="cursor"
        ) from None
    if mark != fingerprint(kind, request):
        raise InvalidInput(
            "cursor belongs to a different request: keep the query and filters of the first page", field="cursor"
        )
    if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int) or bound < 0):
        raise InvalidInput("cursor is damaged", field="cursor")
    if first is not None and (isinstance(first, bool) or not isinstance(first, int) or not 0 < first <= MAX_OFFSET):
        raise InvalidInput("cursor is damaged", field="cursor")
    if cold not in (0, 1) or isinstance(cold, bool):
        raise InvalidInput("cursor is damaged", field="cursor")
    return Cursor(after=after, bound=bound, first=first, cold=cold == 1)


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
