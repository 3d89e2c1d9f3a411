"""Search text analysis (ledger/text.py): folding, CJK indexing, query terms, FTS5 quoting.

The properties check the contract between the index side and the query side: whatever span
of a memory someone types back, every term of it exists in the memory's index tokens, the
phrase is a contiguous run of them, and a real FTS5 table with the project's tokenizer finds
the memory by the generated expressions. Hostile text never reaches the FTS5 grammar.
"""

from __future__ import annotations

import re

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fact_ledger.ledger.text import (
    MAX_TERMS,
    STOP_WORDS,
    analyse,
    fold,
    fts_all,
    fts_any,
    fts_query,
    fts_quote,
    index_text,
    query_terms,
)

TOKENIZE = "porter unicode61 remove_diacritics 2"
HOSTILE = [
    '"',
    '""',
    "'",
    "*",
    "a*",
    '"unbalanced',
    "NEAR(a b)",
    "NEAR(",
    "a AND OR NOT b",
    "AND",
    "OR",
    "NOT",
    "^start",
    "subject:x",
    "{subject body}:x",
    "body : y",
    "(a OR b",
    ")",
    "a + b",
    "-x",
    "col:",
    "😀",
    "🔥 fire",
    "\x00",
    "\\",
    "%_",
    "a\nb",
    "\u200b",
    "接口*",
    '接口"返回',
    "0x1F",
    "a" * 5000,
]


def index_tokens(text: str) -> list[str]:
    """The tokens unicode61 cuts from index text (before stemming): runs of letters and digits."""
    return re.findall(r"[^\W_]+", fold(index_text(text)))


def test_fold_normalises_width_case_and_invisible_characters() -> None:
    assert fold("ＡＰＩ\u200b Straße") == "api strasse"
    assert fold("Plain ASCII") == "plain ascii"


def test_cjk_runs_become_bigrams_and_their_last_character() -> None:
    assert index_text("接口返回").split() == ["接口", "口返", "返回", "回"]
    assert index_text("使用Python开发").split() == ["使用", "用", "python", "开发", "发"]
    assert index_text("猫").split() == ["猫"]
    assert index_text("plain English stays as typed") == "plain English stays as typed"


def test_two_character_words_are_one_term_and_one_character_words_a_prefix() -> None:
    assert [(t.text, t.prefix) for t in analyse("接口").terms] == [("接口", False)]
    assert [(t.text, t.prefix) for t in analyse("猫").terms] == [("猫", True)]
    assert analyse("猫").terms[0].fts() == '"猫" *'


def test_phrase_tokens_match_the_index_layout() -> None:
    # Inside the text the run ends, so its last character is a token; at the end of the query
    # the memory may continue the run, so the bigrams alone carry it (or a prefix for one char).
    assert analyse("使用Python").phrase == ("使用", "用", "python")
    assert analyse("口返回").phrase == ("口返", "返回")
    parsed = analyse("Python开")
    assert parsed.phrase == ("python", "开") and parsed.phrase_prefix
    assert parsed.phrase_fts() == '"python 开" *'


def test_stop_and_question_words_are_dropped_unless_nothing_else_is_left() -> None:
    assert query_terms("What did Caroline research?") == ["caroline", "research"]
    assert query_terms("the of") == ["the", "of"]
    assert {"what", "when", "did", "likely"} <= STOP_WORDS


def test_long_queries_are_capped() -> None:
    parsed = analyse(" ".join(f"word{i}" for i in range(200)))
    assert len(parsed.terms) == MAX_TERMS and len(parsed.phrase) <= MAX_TERMS


def test_quoting_doubles_embedded_quotes() -> None:
    assert fts_quote('say "hi"') == '"say ""hi"""'


def test_plain_term_helpers_keep_working_for_other_projections() -> None:
    assert fts_query(["staging", "猫"], "AND") == '"staging" AND "猫" *'
    assert query_terms("the staging port", keep_stop_words=True) == ["the", "staging", "port"]


@pytest.fixture(scope="module")
def fts() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZE}')")
    return conn


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_reach_the_fts_grammar(fts: apsw.Connection, query: str) -> None:
    parsed = analyse(query)
    expressions = [fts_all(parsed.terms), fts_any(parsed.terms)] if parsed.terms else []
    if len(parsed.phrase) > 1:
        expressions.append(parsed.phrase_fts())
    for expression in expressions:
        fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_gives_valid_fts_expressions(query: str) -> None:
    conn = apsw.Connection(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZE}')")
    parsed = analyse(query)
    for term in parsed.terms:
        conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (term.fts(),)).fetchall()
    if len(parsed.phrase) > 1:
        conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (parsed.phrase_fts(),)).fetchall()


# -- index/query agreement -----------------------------------------------------------------------
_LATIN = st.text(alphabet="abcdefghijklmnopqrstuvwxyzÉéÜü", min_size=1, max_size=8)
_CJK = st.text(alphabet="接口返回数据用户猫的是了", min_size=1, max_size=6)
_SEP = st.sampled_from([" ", ", ", "。", "，", " - ", ""])


def _is_latin(piece: str) -> bool:
    return not re.search(r"[\u4e00-\u9fff]", piece)


@st.composite
def text_and_span(draw: st.DrawFn) -> tuple[str, str]:
    """A mixed English/Chinese text and a verbatim span of it that starts and ends on a token
    boundary (any character boundary inside a CJK run; never inside a Latin word)."""
    pieces = draw(st.lists(st.one_of(_LATIN, _CJK), min_size=1, max_size=12))
    text, cuts = "", {0}
    for i, piece in enumerate(pieces):
        if i:
            sep = draw(_SEP)
            if not sep and _is_latin(pieces[i - 1]) and _is_latin(piece):
                sep = " "  # two Latin words never touch; two CJK runs may merge (still a run)
            text += sep
            cuts.add(len(text))
        start = len(text)
        text += piece
        if not _is_latin(piece):
            cuts.update(range(start, len(text) + 1))
        cuts.add(len(text))
    ordered = sorted(cuts)
    a = draw(st.sampled_from(ordered))
    b = draw(st.sampled_from([c for c in ordered if c > a] or [len(text)]))
    return text, text[a:b]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_and_span())
def test_every_query_term_of_a_span_is_an_index_token(case: tuple[str, str]) -> None:
    text, span = case
    parsed = analyse(span)
    tokens = index_tokens(text)
    for term in parsed.terms:
        if term.prefix:
            assert any(tok.startswith(term.text) for tok in tokens), (term, tokens)
        else:
            assert term.text in tokens, (term, tokens)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_and_span())
def test_the_phrase_of_a_span_is_a_contiguous_run_of_index_tokens(case: tuple[str, str]) -> None:
    text, span = case
    parsed = analyse(span)
    tokens, phrase = index_tokens(text), list(parsed.phrase)
    if not phrase:
        return
    head, last = phrase[:-1], phrase[-1]
    found = any(
        tokens[i : i + len(head)] == head
        and i + len(head) < len(tokens)
        and (tokens[i + len(head)].startswith(last) if parsed.phrase_prefix else tokens[i + len(head)] == last)
        for i in range(len(tokens) - len(phrase) + 1)
    )
    assert found, (span, phrase, tokens)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_and_span())
def test_fts5_finds_the_text_by_its_span(case: tuple[str, str]) -> None:
    text, span = case
    parsed = analyse(span)
    if not parsed.terms:
        return
    conn = apsw.Connection(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZE}')")
    conn.execute("INSERT INTO t(rowid, body) VALUES(1, ?)", (index_text(text),))
    assert conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (fts_all(parsed.terms),)).fetchall() == [(1,)]
    assert conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (parsed.phrase_fts(),)).fetchall() == [(1,)]
