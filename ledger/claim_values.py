"""What counts as a claim's value: a number with its unit, a date or time, a version, an on/off
word or a name, rather than a description; and the value's parsed form.

Precision first (see :mod:`ledger.claims`): a phrase that might be a description is no value."""

from __future__ import annotations

import re

from fact_ledger.ledger.claim_words import (
    DESCRIPTIVE,
    DESCRIPTIVE_SUFFIX,
    EN_VALUE_END,
    EVERY_DAY,
    LEFT_FILLERS,
    LEFT_TRAILERS,
    NAMED,
    NOT_A_VALUE_START,
    OFF_FOR_A_TIME,
    PARTICIPLES,
    STREET_ADDRESS,
    SUFFIXED_VALUES,
    TOKEN_PUNCT,
    TRAILING_TIME,
    VAGUE_START,
    VALUE_NOUN,
    VALUE_PREPOSITIONS,
    ZH_PARTICLES,
    ZH_VALUE_END,
)
from fact_ledger.ledger.normalize import KIND_TEXT, clean_value, leading_value, normalize_text
from fact_ledger.ledger.normalize import normalize_value as _normalize_value


def value_text(raw: str) -> str:
    cut = EN_VALUE_END.search(raw) if raw.isascii() else ZH_VALUE_END.search(raw)
    text = raw[: cut.start()] if cut else raw
    text = TRAILING_TIME.sub("", text.strip().rstrip(" .,;:!?。，；：！？、"))
    return ZH_PARTICLES.sub("", text)


def is_value(kind: str, display: str, relation: str, cased: str, left: str = "") -> bool:
    """Reject descriptions ("is fast", "是稳定的", "is a developer") that are not single values.

    ``cased`` is the clause before case folding: a capitalised word is a name ("is Sterling");
    ``left`` is what the claim is about (folded).
    """
    if kind != KIND_TEXT:
        return True
    text = clean_value(display)
    if not any(ch.isalnum() for ch in text) or len(text) > 80 or normalize_text(display).startswith(NOT_A_VALUE_START):
        return False
    if relation == "is" and OFF_FOR_A_TIME.match(text):
        return False  # "the team lunch is off tonight": one occurrence called off
    words = text.split()
    if text.isascii():
        if len(words) > (8 if relation == "colon" else 5):
            return False
        first = words[0]
        written = _as_written(first, cased)
        if written is not None and written[0].isupper():
            return True
        if relation == "works at":
            return False  # an employer is a name: "joined the book club" is not a job
        if relation in ("is", "colon") and len(words) > 1 and _vague(words):
            return False  # "almost here", "definitely on my to-do list", "both inspiring": a remark
        descriptive = first in DESCRIPTIVE or (
            len(words) == 1
            and bool(DESCRIPTIVE_SUFFIX.search(first))
            and first not in SUFFIXED_VALUES
            and not re.search(r"[\d/._@-]", first)
        )
        passive = relation == "is" and (
            (re.fullmatch(r"[a-z]{3,}(?:ed|ing)", first) is not None and first not in SUFFIXED_VALUES)
            or first in PARTICIPLES
        )
        # "Bob is tall", "Bob is vegetarian": one lowercase word about a named someone is one of
        # many things true of them, not the value of an attribute ("the default branch is main").
        trait = relation == "is" and len(words) == 1 and not re.search(r"[\d/._@]", first) and is_named(left, cased)
        return not (relation in ("is", "colon") and descriptive) and not passive and not trait
    return not text.endswith("的") and len(text) <= 30


def _vague(words: list[str]) -> bool:
    """A lowercase phrase that remarks rather than names a value: it opens with an adverb, a
    quantifier, a wh-word or a preposition, or ends on a description ("blue green", "staging
    server" are values; "truly magical", "one of my favorites", "what makes me smile" are not)."""
    first, last = words[0].strip(TOKEN_PUNCT), words[-1].strip(TOKEN_PUNCT)
    return first in VAGUE_START or first.endswith("ly") or first in DESCRIPTIVE or last in DESCRIPTIVE


def is_named(left: str, cased: str) -> bool:
    """``left`` stands in the clause as a capitalised name with no article ("Bob", "Alice Chen")."""
    if not left:
        return False
    written = _as_written(left, cased)
    # "LOG_LEVEL", "MAX_CONN": a setting's identifier, not a person's name
    return written is not None and "_" not in written and NAMED.fullmatch(written) is not None


_LATIN_RUNS = re.compile(r"[^\s\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+")


def _as_written(phrase: str, cased: str) -> str | None:
    """The first place the clause wrote ``phrase`` (folded words), with its own case: "bob chen" →
    "Bob Chen". Word by word rather than a regex built per phrase, which would be compiled anew
    for nearly every clause. A Latin name written against Chinese ("Alice负责计费服务") is a word
    of its own."""
    want = phrase.split()
    runs = _LATIN_RUNS.findall(cased) if phrase.isascii() else cased.split()
    words = [re.sub(r"['’]s$", "", w.strip(TOKEN_PUNCT)) for w in runs]  # "Dana's" is written "Dana"
    for i in range(len(words) - len(want) + 1):
        if [w.lower() for w in words[i : i + len(want)]] == want:
            return " ".join(words[i : i + len(want)])
    return None


def name_value(display: str) -> str:
    """The canonical form of a value read as a name, whatever it looks like ("Jun 9")."""
    return re.sub(r"(?<=[^\x00-\x7f]) (?=[^\x00-\x7f])", "", clean_value(display))


def parse_value(raw: str, hint: str, *, as_name: bool = False) -> tuple[str, str, str, str] | None:
    """``(display, kind, canonical, qualifier)`` of the value at the start of ``raw``.

    The qualifier is a noun folded into the key ("port 8080") or, for a text value, the
    preposition it came with: "Bob is in Berlin" and "Bob is on vacation" are not one attribute.
    ``as_name``: the attribute is a role one person holds (the on-call engineer, the owner), so
    the value is a name even when it reads as a date or a number ("Jun 9").
    """
    raw = normalize_text(raw)
    preposition = VALUE_PREPOSITIONS.match(raw)
    raw = raw[preposition.end() :] if preposition else raw
    raw = EVERY_DAY.sub("", raw)  # "每天早上9点半" is the time 9:30 (as "9:30am every day" is)
    noun = ""
    if match := VALUE_NOUN.match(raw):
        noun = "port" if "port" in match["noun"] or "端口" in match["noun"] else "version"
        raw = raw[match.end() :]
    typed = None if (as_name and not noun) or STREET_ADDRESS.match(raw) else leading_value(raw, hint=hint + " " + noun)
    if typed is not None:
        kind, canonical, end = typed
        return raw[:end].strip(), kind, canonical, noun
    display = value_text(raw)
    if not display:
        return None
    kind, canonical = (KIND_TEXT, name_value(display)) if as_name else _normalize_value(display, hint=hint)
    if kind == KIND_TEXT and preposition and not noun:
        noun = preposition.group().strip()
    return display, kind, canonical, noun


def strip_left(left: str) -> str:
    """The phrase before a relation without fillers ("note that", "现在") and trailing adverbs."""
    left = LEFT_FILLERS.sub("", left.strip(" \t,，:：-*#>·•"))
    left = LEFT_TRAILERS.sub("", left).strip(" ,，:：-")
    return left.strip(TOKEN_PUNCT + " ")
