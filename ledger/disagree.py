"""Do two texts that mean nearly the same thing say different things? A deterministic test.

Two memories close in meaning ("the budget is 50k" / "the budget is 80k") are worth a person's
look when something checkable differs between them. A model's closeness alone cannot tell a
paraphrase from a contradiction, so the second half of a semantic notice is this pure test:

* **number**: the numbers mentioned (normalised: ``5万`` = ``50000`` = ``50,000``) differ. Only
  numbers that can be the same quantity are compared: the same unit (or none), and the same
  role, the word they stand after ("port 9001" is no budget of 80000); digits inside an
  identifier (``ci-02``, ``nul-1``, ``db2``) are no number at all;
* **date**: the dates or times mentioned differ;
* **negation**: one side is negated and the other is not (``not``, ``never``, ``n't``, ``不``…);
* **entity**: each side names someone or something (a capitalised word inside a sentence, or
  a CJK quoted name) the other does not.

Each check compares what *both* sides state: a number on one side only is added detail, not
disagreement. Pure functions, no IO.
"""

from __future__ import annotations

import re
from collections import Counter

from fact_ledger.ledger.normalize import normalize_text, parse_number
from fact_ledger.ledger.normalize_when import parse_when

# What a semantic notice can say (docs/contract.md, ``notices``), spelled once: the checks below,
# a near-duplicate (``projections.notices``), the states a person moves a notice through, and the
# listings' filters (``disagreement``: any of the checks; ``all``: any state).
DISAGREEMENTS = ("number", "date", "negation", "entity")
NOTICE_KINDS = (*DISAGREEMENTS, "duplicate")
NOTICE_STATES = ("open", "dismissed", "resolved")
NOTICE_KIND_FILTERS = ("disagreement", *NOTICE_KINDS)
NOTICE_LISTINGS = (*NOTICE_STATES, "all")

_CN_NUMERALS = "零〇一二两三四五六七八九十百千万亿"
NUMBER_START = re.compile(
    rf"(?<![0-9A-Za-z_.])(?<![0-9A-Za-z_][-/])(?:[$€£¥]\s*)?\d|(?<![{_CN_NUMERALS}])[{_CN_NUMERALS}]"
)
IDENTIFIER_TAIL = re.compile(r"[-_/][0-9a-z]")  # "02-b", "1_old": the digits name something
# The role of a number is the last word before it that says what it measures ("port 9001", "the
# budget is 80000", "预算是5万"); verbs, articles and prepositions between say nothing of it.
ROLE_WORD = re.compile(r"[a-z][a-z'-]*|[\u4e00-\u9fff]+")
NOT_A_ROLE = frozenset(
    """a an the is are was were be been being am to of on at in for by from with into about around
    now still currently just only also approximately roughly nearly over under up down than as
    set moved changed raised lowered cut increased decreased reduced bumped updated rescheduled becomes
    became equals equal amounts amount totals total comes reaches reached costs cost runs listens
    listening running uses using returns has have had and or but so our my your their its his her this
    that these those it we they i you he she there here""".split()
)
ZH_CONNECTORS = re.compile(
    r"(?:已|现|也|还|都|将|会|约|大约|大概|达到|改为|改成|调整为|变为|变成|更新为|设为|是|为|了|到|在|的|共|有)+$"
)
WHEN_START = re.compile(r"(?<!\w)(?=\w)|(?<=\W)(?=[\u4e00-\u9fff])")
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"})
WORD = re.compile(r"[a-z]+(?:n't|'t)?")
CJK_NEGATIONS = "不没未无别勿非"
ENTITY = re.compile(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")
SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+)$")
# Capitalised only because they open a sentence: never names.
COMMON_CAPS = frozenset(
    """
i i'm i've i'll i'd a an the our we my your you he she they it its this that these those there here
in on at for and but so yes no not our their his her what when where who why how if then also
yesterday today tomorrow tonight now last next after before since please thanks
""".split()
)


def dates(text: str) -> tuple[list[str], str]:
    """Canonical dates/times mentioned in normalised ``text``, and the text with them removed."""
    found: list[str] = []
    rest: list[str] = []
    pos = 0
    for match in WHEN_START.finditer(text):
        start = match.start()
        if start < pos:
            continue
        hit = parse_when(text[start:])
        if hit is None:
            continue
        value, length = hit
        if not any(ch.isdigit() for ch in text[start : start + length]) and " " not in value:
            continue  # a bare weekday word alone ("monday") is too weak to call a disagreement
        found.append(value)
        rest.append(text[pos:start])
        pos = start + length
    rest.append(text[pos:])
    return found, " ".join(rest)


def numbers(text: str) -> list[str]:
    """Canonical numbers (with units) mentioned in normalised ``text``."""
    return [value for value, _ in numbers_with_roles(text)]


def numbers_with_roles(text: str) -> list[tuple[str, str]]:
    """``(canonical number, role)`` of each number in normalised ``text`` (see :func:`role`)."""
    found: list[tuple[str, str]] = []
    pos = 0
    for match in NUMBER_START.finditer(text):
        if match.start() < pos:
            continue
        hit = parse_number(text[match.start() :], whole=False)
        if hit is None:
            continue
        end = match.start() + hit[1]
        pos = end
        if IDENTIFIER_TAIL.match(text, end):
            continue  # "02-b": part of a name
        found.append((hit[0], role(text[: match.start()])))
    return found


def role(before: str) -> str:
    """What the number after ``before`` measures: the last word of its clause that is no verb,
    article or preposition (a Chinese run: its last two characters once connectors like 是/为
    are cut), or "" when the clause names none."""
    clause = re.split(r"[,;.!?，。；！？、]", before)[-1]
    words: list[str] = ROLE_WORD.findall(clause)
    for word in reversed(words):
        if word[0] >= "\u4e00":
            word = ZH_CONNECTORS.sub("", word)
            if word:
                return word[-2:]
        elif word not in NOT_A_ROLE:
            return word
    return ""


def _comparable(left: tuple[str, str], right: tuple[str, str]) -> bool:
    """Two numbers that could be the same quantity: no two different units, no two different roles."""
    left_unit, right_unit = left[0].partition(" ")[2], right[0].partition(" ")[2]
    if left_unit and right_unit and left_unit != right_unit:
        return False
    return not (left[1] and right[1] and left[1] != right[1])


def comparable_numbers(left: list[tuple[str, str]], right: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """The numbers of each side that are weighed against the other's: a number is left out when
    the other side states numbers and none of them could be the same quantity (a side with no
    number at all leaves everything in; whether that is a disagreement is the caller's rule)."""
    return (
        [n for n, r in left if not right or any(_comparable((n, r), other) for other in right)],
        [n for n, r in right if not left or any(_comparable((n, r), other) for other in left)],
    )


def negated(text: str) -> bool:
    """An odd number of negations: the statement as a whole is denied."""
    count = sum(1 for w in WORD.findall(text) if w in NEGATIONS or w.endswith(("n't", "'t")))
    count += sum(text.count(ch) for ch in CJK_NEGATIONS)
    return count % 2 == 1


def entities(text: str) -> set[str]:
    """Capitalised names, casefolded (a sentence's first word only when it is no common word)."""
    text = text.strip()
    out: set[str] = set()
    for match in ENTITY.finditer(text):
        words = match.group(0).split()
        if SENTENCE_START.search(text[: match.start()]) and words[0].casefold() in COMMON_CAPS:
            words = words[1:]
        if words and not (len(words) == 1 and words[0].casefold() in COMMON_CAPS):
            out.add(" ".join(words).casefold())
    return out


def disagreement(left: str, right: str) -> dict[str, str] | None:
    """The first checkable difference between two texts (``{"kind", "left", "right"}``), or None."""
    left_norm, right_norm = normalize_text(left), normalize_text(right)
    left_dates, left_rest = dates(left_norm)
    right_dates, right_rest = dates(right_norm)
    if left_dates and right_dates and Counter(left_dates) != Counter(right_dates):
        return {"kind": "date", "left": ", ".join(left_dates), "right": ", ".join(right_dates)}
    left_numbers, right_numbers = numbers_with_roles(left_rest), numbers_with_roles(right_rest)
    left_same, right_same = comparable_numbers(left_numbers, right_numbers)
    if left_numbers and right_numbers and Counter(left_same) != Counter(right_same):
        return {"kind": "number", "left": ", ".join(left_same), "right": ", ".join(right_same)}
    if negated(left_norm) != negated(right_norm):
        return {
            "kind": "negation",
            "left": "negated" if negated(left_norm) else "affirmed",
            "right": "negated" if negated(right_norm) else "affirmed",
        }
    left_names, right_names = entities(left), entities(right)
    if left_names - right_names and right_names - left_names:
        return {
            "kind": "entity",
            "left": ", ".join(sorted(left_names - right_names)),
            "right": ", ".join(sorted(right_names - left_names)),
        }
    return None
