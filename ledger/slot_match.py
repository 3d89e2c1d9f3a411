"""Which hits a question names the slot of: "What port does the inventory API listen on?" asks
about the slot (inventory API, port), not about every memory that shares its words.

Text ranking scores words, and a fact's words are shared by its neighbours: "the staging API
listens on port 5963" holds three of the question's words, "the inventory API port changed to
5152" three too, and "the inventory API version is 2.5.7" two. A claim's key names its slot as a
set of tokens (:func:`ledger.claims.key_tokens`: the subject, and ``port``, ``version``,
``owner`` folded in; 端口 read as ``port``); a question that holds every token of a hit's key
names that hit's slot (a taste's attribute, "吃牛奶" / "eats dairy", names it too). Such a hit
gains :data:`SLOT_BONUS`; a neighbour that shares only the entity or only the attribute gains
nothing (partial credit reordered conversation turns: LoCoMo recall fell), nor does a slot of one
token (a person's name alone).

Question words that name an attribute the way claims do not ("who owns", "几点") are read as the
key's token first (:data:`QUESTION_ALIASES`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from fact_ledger.ledger.claims import key_tokens

SLOT_BONUS = 1.0  # a whole slot named outranks partial matches, as a phrase or an identifier does
MIN_SLOT_TOKENS = 2  # "Caroline" alone names a person, not one of her facts

QUESTION_ALIASES = (
    (re.compile(r"\bown(?:s|ed)?\b|\bin charge of\b|\bresponsible for\b|由谁负责|谁负责"), " owner "),
    (re.compile(r"\bversions?\b|版本"), " version "),
    (re.compile(r"\bdrinks?\b|喝什么|喝啥|饮料"), " drink "),
)


# Relations every slot shares: they name no slot ("is", "uses"); a taste's attribute does ("吃牛奶").
GENERIC_ATTRIBUTES = frozenset(("is", "uses", "returns", "costs", "lives in", "works at"))


def _folded(tokens: Iterable[str]) -> frozenset[str]:
    """English plurals and third persons folded ("eats" is "eat"), so question and claim agree."""
    return frozenset(t[:-1] if len(t) > 3 and t.isascii() and t.endswith("s") else t for t in tokens)


def question_tokens(query: str) -> frozenset[str]:
    """The tokens of ``query`` as claim keys are written."""
    text = query.lower()
    for pattern, replacement in QUESTION_ALIASES:
        text = pattern.sub(replacement, text)
    return _folded(key_tokens(text))


def slot_tokens(key_subject: str, key_attribute: str) -> frozenset[str]:
    """The tokens that name a claim's slot: its key subject's, and its attribute's unless generic."""
    tokens = set(key_subject.split())
    if key_attribute not in GENERIC_ATTRIBUTES:
        tokens |= key_tokens(key_attribute)
    return _folded(tokens)


def slot_bonus(asked: frozenset[str], slots: Iterable[frozenset[str]]) -> float:
    """:data:`SLOT_BONUS` when ``asked`` holds every token of one slot of two tokens or more, else 0."""
    return SLOT_BONUS if any(len(tokens) >= MIN_SLOT_TOKENS and tokens <= asked for tokens in slots) else 0.0


def slot_scores(query: str, keys: Mapping[int, Iterable[tuple[str, str]]]) -> dict[int, float]:
    """Each memory's bonus for ``query`` from its claim keys (``(key_subject, key_attribute)``)."""
    asked = question_tokens(query)
    if not asked:
        return {}
    return {
        memory_id: bonus
        for memory_id, its in keys.items()
        if (bonus := slot_bonus(asked, [slot_tokens(s, a) for s, a in its])) > 0
    }


__all__ = ["SLOT_BONUS", "question_tokens", "slot_bonus", "slot_scores", "slot_tokens"]
