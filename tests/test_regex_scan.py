"""``ledger.regex_scan``: a search tried only where a match can start, and a match tried only on a
text holding a word every match contains, answer exactly what the pattern's own ``search`` and
``match`` answer (spans, groups, the alternative that matched)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fact_ledger.ledger import claim_words
from fact_ledger.ledger.regex_scan import leftmost_search, match_where_possible


def _same(mine: re.Match[str] | None, theirs: re.Match[str] | None) -> bool:
    if mine is None or theirs is None:
        return mine is theirs
    return (mine.span(), mine.groups(), mine.lastgroup) == (theirs.span(), theirs.groups(), theirs.lastgroup)


# words the claims' patterns are made of, with the look-behinds' neighbours (/, -, CJK) and spaces
_WORDS = st.sampled_from(
    """is was has been now listens on port runs uses costs charges lives in at moved to the api 8080 $20
    starts prefers switched drink tea maybe may 3 if could floor budget version - / = == : ： 改成 是 在
    9点 用 可能 喜欢 喝 咖啡 端口 this island Is MOVED Listens""".split()
)
_TEXTS = st.lists(_WORDS, max_size=14).map(" ".join) | st.text(max_size=30)
_SEARCHED = ("ANY_RELATION", "HEDGED", "TASTE_WORD")
_MATCHED = ("IMPLICIT", "LIKE_EN", "DRINK_EN", "DRINK_ZH")


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_a_scan_finds_what_search_finds(text: str) -> None:
    for name in _SEARCHED:
        pattern = getattr(claim_words, name)
        assert _same(leftmost_search(pattern)(text), pattern.search(text)), (name, text)


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_a_guarded_match_is_the_match(text: str) -> None:
    for name in _MATCHED:
        pattern = getattr(claim_words, name)
        assert _same(match_where_possible(pattern)(text), pattern.match(text)), (name, text)


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        # a look-behind before the words: only positions that pass it start a match
        (r"(?<![\w/-])(?:is|listens on)(?![\w-])", "this island listens on 80", (12, 22)),
        # an optional run of a class before a literal: the match starts at the run
        (r"\s*(?:==|=)\s*", "a  = b", (1, 5)),
        # a group that ignores case finds its words in capitals
        (r"(?i:like|love)", "We LOVE it", (3, 7)),
        # a word that is the start of another ("is", "is running"): the first that matches wins
        (r"(?<!\w)(?:is running|is)\b", "it is running", (3, 13)),
        # an optional word before another: either may start the match
        (r"(?:now\s+)?starts at", "it now starts at 9", (3, 16)),
        # a start that fails inside another start's words: the next try begins one character on
        (r"(?:xy|yz)\d", "xyz1", (1, 4)),
    ],
)
def test_the_start_of_each_alternative_is_read(pattern: str, text: str, found: tuple[int, int]) -> None:
    compiled = re.compile(pattern)
    match = leftmost_search(compiled)(text)
    assert match is not None and match.span() == found == compiled.search(text).span()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "pattern",
    [
        r"a|.b",  # a bare "." starts anywhere
        r"x?y?",  # may match nothing: every position is a start
        r"(?>a)b|c",  # an atomic group
    ],
)
def test_a_pattern_whose_start_cannot_be_read_keeps_its_own_search(pattern: str) -> None:
    compiled = re.compile(pattern)
    assert leftmost_search(compiled) == compiled.search


def test_a_match_with_no_word_it_must_contain_keeps_its_own_match() -> None:
    for pattern in (r"^\w+$", r"(?i)^(.+?) likes (.+)$", r"^(.+?)(?i:likes)"):
        compiled = re.compile(pattern)
        assert match_where_possible(compiled) == compiled.match
    guarded = match_where_possible(re.compile(r"^(?P<who>.+?)\s+(?:prefers|switched to)\s+(?P<what>.+)$"))
    assert guarded("bob prefers tea")["what"] == "tea"  # type: ignore[index]
    assert guarded("bob drinks tea") is None
