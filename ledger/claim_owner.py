"""Who owns a thing, which attributes are roles, and attribute names as a person says them:
the parts of claim extraction (:mod:`ledger.claims`) that read a clause's *attribute* rather
than its value.

Ownership ("X owns Y", "Y is owned by X", "the owner of Y is X", "Y is X's now", "Y 的负责人是 X",
"X 负责 Y", "Y 由 X 负责", "Y 归 X 管") is about the thing: one owner per thing, so the thing is the claim's subject and
the owner its value. Precision first: the owner is one named person or team, the thing one
definite thing; "Bob owns a Tesla" (one of many), "Alice and Bob own …", "no longer owns …",
"张三很负责" say nothing here.
"""

from __future__ import annotations

import re

from fact_ledger.ledger.claim_values import is_named, strip_left, value_text
from fact_ledger.ledger.claim_words import (
    BELONGS_EN,
    BELONGS_ZH,
    LEADING_ARTICLE,
    MANY,
    NEGATED_LEFT,
    NOT_OWNED_START,
    OWNED_EN,
    OWNED_THING,
    OWNED_ZH,
    OWNER_GROUP,
    OWNER_OF_EN,
    OWNER_WORD,
    OWNER_ZH,
    OWNS_EN,
    OWNS_ZH,
    PERSONS,
    PRONOUNS,
    QUESTION_START,
    ROLE_WORDS,
    ROLE_ZH,
    STOP_TOKENS,
    TOKEN_PUNCT,
    hedged,
)
from fact_ledger.ledger.normalize import normalize_text

TRAILING_WHEN = re.compile(
    r"(?:\s+(?:this|next|last)\s+\w+|\s+(?:today|tonight|now|currently)|本周|这周|今天|今晚|现在|目前)+$"
)
_OWNERSHIP = (
    (OWNER_ZH, "x"),
    (OWNED_ZH, ""),
    (BELONGS_ZH, ""),
    (OWNS_ZH, "y"),
    (OWNER_OF_EN, "x"),
    (OWNED_EN, "x"),
    (OWNS_EN, "y"),
    (BELONGS_EN, ""),
)


def owner_of(clause: str, cased: str) -> tuple[str, str] | None:
    """``(thing, owner)`` when the clause says who owns a thing (folded text, without an
    article: ``("billing service", "alice chen")``); ``cased`` is the clause as written."""
    text = normalize_text(clause)
    if OWNER_WORD.search(text) is None or hedged(text) or QUESTION_START.match(text):
        return None
    found = next(
        ((match, tail) for pattern, tail in _OWNERSHIP if (match := pattern.match(text)) is not None),
        None,
    )
    if found is None:
        return None
    match, tail = found  # tail: the part that runs to the clause's end (cut like a value)
    parts = {g: match.groupdict().get(g) or match.groupdict().get(f"{g}2") or "" for g in ("x", "y")}
    x, y = (value_text(parts[g]) if g == tail else strip_left(parts[g]) for g in ("x", "y"))
    if NEGATED_LEFT.search(parts["x"] if tail == "y" else parts["y"]):
        return None  # "Alice no longer owns …", "张三不再负责 …"
    y = re.sub(r"\s+(?:from|since|as of|starting|until|effective)\b.*$", "", y).strip(TOKEN_PUNCT + " ")
    x = LEADING_ARTICLE.sub("", x.strip(TOKEN_PUNCT + " "))
    if not _an_owner(x, cased) or not _an_owned_thing(y, cased):
        return None
    return LEADING_ARTICLE.sub("", y), x


def _an_owner(x: str, cased: str) -> bool:
    """One named person or team: not a pronoun, not several ("Alice and Bob")."""
    if not x or x in PRONOUNS or x in PERSONS or MANY.search(x) or NEGATED_LEFT.search(x):
        return False
    if x.isascii():
        return len(x.split()) <= 4 and (is_named(x, cased) or OWNER_GROUP.search(x) is not None)
    return 2 <= len(x) <= 8 and not any(ch in x for ch in "我你他她它这那谁")


def _an_owned_thing(y: str, cased: str) -> bool:
    """One definite thing ("the billing service", "Apollo", "支付服务"), not one of many ("a Tesla")."""
    if not y or MANY.search(y) or NOT_OWNED_START.match(y) or y in PRONOUNS:
        return False
    if y.isascii():
        return len(y.split()) <= 6 and (OWNED_THING.search(y) is not None or is_named(y, cased))
    return len(y) <= 20 and not y.startswith(("一", "几", "很多", "所有"))


def is_role(left: str, subject: str) -> bool:
    """The attribute names a role one person holds at a time (see ``ROLE_WORDS``): its head, the
    last word once a time is cut ("the on-call engineer", "on-call this week", "值班工程师"), is a
    role; "the on-call rotation" is not one."""
    about = TRAILING_WHEN.sub("", normalize_text(left or subject)).strip(TOKEN_PUNCT + " ")
    if not about:
        return False
    if about.isascii():
        return about.split()[-1].strip(TOKEN_PUNCT) in ROLE_WORDS
    return about.endswith(ROLE_ZH)


def attribute_words(rest: str) -> tuple[str, str]:
    """An attribute as a person names it, and what narrows it: grammar left over from the
    sentence is dropped ("的端口" → "端口", "port of" → "port"), and "budget for q3" is the
    attribute "budget" narrowed to "q3" (which belongs with the subject)."""
    rest = rest.strip(TOKEN_PUNCT + " ").removeprefix("的").removesuffix("的").strip()
    narrower = ""
    if rest.isascii():
        match = re.match(r"^(?P<head>.*?)\s*\b(?:for|during|in)\s+(?P<what>\S.*)$", rest)
        if match is not None:
            rest, narrower = match["head"], LEADING_ARTICLE.sub("", match["what"])
        words = rest.split()
        while words and words[-1] in STOP_TOKENS:
            words.pop()
        while words and words[0] in STOP_TOKENS:
            words.pop(0)
        rest = " ".join(words)
    return rest, narrower
