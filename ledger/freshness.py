"""Which of several answers about one fact comes first: the newest statement of it.

Text ranking cannot tell an old value from a new one (both hold the query's words), and its
recency bonus is deliberately too small to outvote the text (a one-year half-life: statements
weeks apart differ by ~0.002). So among the hits a ``find`` looks at, statements about the same
fact are put in event-time order, newest first, inside the places they already hold: the rest of
the ranking does not move, and a hit that is in an unresolved claim set keeps the place its
set's ranking gave it (:func:`ledger.arbiter.leaders_first`). Two hits state the same fact when

* they share a claim key (subject and attribute: one slot, whatever its value), or
* their texts are the same statement with other values: equal once case, punctuation and every
  value-like token (a URL, an e-mail address, a number with its unit or currency: ``8080``,
  ``3pm``, ``$50k``, ``5万``, ``2025-05-01``, ``v1.2``) are masked. A name that merely holds
  digits (``s2``, ``ci-02``, ``sk-o75rh8``) is not a value: it says *which* thing, so
  "service s2" and "service s3" are two facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from fact_ledger.ledger.text import fold

# A number with its unit or currency; a URL or an e-mail address is a whole token (below).
_NUMBER = re.compile(r"(?<![A-Za-z0-9_-])[$€¥£]?v?\d[\d.,:/-]*(?:[a-z%]{1,3}|[万千百亿元块])?(?![A-Za-z0-9_-])")
_TOKEN = re.compile(r"\S+")
_WORD = re.compile(r"[^\W_]+")
_MASK = "0value0"
_MASKED = f" {_MASK} "
MIN_TEMPLATE_WORDS = 3  # "Thanks!" and "Thanks!!" are not one fact: a template needs some words


def template(text: str) -> str:
    """``text`` with its values masked, or "" when too few words are left to name a fact."""
    words = _WORD.findall(_TOKEN.sub(_mask_token, fold(text)))
    if sum(1 for w in words if w != _MASK) < MIN_TEMPLATE_WORDS:
        return ""
    return " ".join(words)


def _mask_token(match: re.Match[str]) -> str:
    """One whitespace-free run with its values masked: the whole run when it is a URL
    (``x://y``) or an e-mail address (``x@y.z``), else each number in it.

    What ``re.sub(r"\\S+://\\S+|\\S+@\\S+\\.\\S+|<number>", …)`` over the whole text did, in
    linear time: that pattern tried both at every character of a run and backtracked over
    the rest of it, so a long run without spaces (Chinese, base64, minified JSON) took
    seconds and a 100k one held a ``find`` for half a minute."""
    token = match.group()
    end = len(token) - 1  # a URL or an address needs a character after its "://" or its last "."
    if token.find("://", 1, end) != -1:
        return _MASKED
    at = token.find("@", 1)
    if at != -1 and token.find(".", at + 2, end) != -1:
        return _MASKED
    return _NUMBER.sub(_MASKED, token)


def newest_first(
    ids: Sequence[int],
    slots: Mapping[int, Iterable[str]],
    event_times: Mapping[int, str],
    *,
    fixed: Iterable[int] = (),
) -> list[int]:
    """``ids`` (best first) with the hits that share a slot in newest-first order, in their places.

    ``slots``: each hit's fact keys (claim keys, statement templates); ``fixed``: hits that keep
    their place (members of an unresolved claim set). Ties in event time keep the given order.
    """
    keep = set(fixed)
    group: dict[int, int] = {}  # hit -> its group's first hit (union of shared keys, in rank order)
    first_with: dict[str, int] = {}
    for memory_id in ids:
        if memory_id in keep:
            continue
        roots = {group[first_with[k]] for k in slots.get(memory_id, ()) if k in first_with}
        root = min(roots, key=ids.index) if roots else memory_id
        for other, its_root in group.items():
            if its_root in roots:
                group[other] = root
        group[memory_id] = root
        for key in slots.get(memory_id, ()):
            first_with.setdefault(key, memory_id)
    members: dict[int, list[int]] = {}
    for memory_id in ids:
        if memory_id in group:
            members.setdefault(group[memory_id], []).append(memory_id)
    out = list(ids)
    for hits in members.values():
        places = [ids.index(h) for h in hits]
        ordered = sorted(hits, key=lambda h: event_times.get(h, ""), reverse=True)  # stable: ties keep rank
        for n, memory_id in enumerate(ordered):
            out[places[n]] = memory_id
    return out
