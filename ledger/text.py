"""Search text analysis for English and CJK, shared by the index and the query side.

SQLite's ``unicode61`` tokenizer keeps a run of CJK characters as one token and ``trigram``
never matches a term shorter than three characters, yet most Chinese words have one or two.
So CJK runs are written into the index as overlapping unigrams and bigrams ("接口返回" →
"接 接口 口 口返 返 返回 回"), and a CJK query becomes its bigrams (or its single character).
Latin text is left to ``porter unicode61`` (stemming, diacritics). Query terms are always
re-quoted, so no user string can reach the FTS5 query syntax.
"""

from __future__ import annotations

import re

from ledger.normalize import normalize_text

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_SPLIT = re.compile(f"([{_CJK}]+)")
_WORD = re.compile(r"[^\W_]+")

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can could did didn't do does doesn't doing don't down during
    each few for from further had has have having he her here hers herself him himself his how i if
    in into is isn't it it's its itself just let me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself
    yourselves s t also ever kind sort much many way ways thing things""".split()
)


def is_cjk(text: str) -> bool:
    return bool(_CJK_RUN.search(text))


def _cjk_index_tokens(run: str) -> list[str]:
    out: list[str] = []
    for i, ch in enumerate(run):
        out.append(ch)
        if i + 1 < len(run):
            out.append(run[i : i + 2])
    return out


def index_text(text: str) -> str:
    """The text handed to FTS5: normalised, with CJK runs expanded to unigrams + bigrams."""
    parts = _SPLIT.split(normalize_text(text))
    out: list[str] = []
    for i, part in enumerate(parts):
        if i % 2:  # odd parts are CJK runs
            out.extend(_cjk_index_tokens(part))
        elif part.strip():
            out.append(part)
    return " ".join(out)


def _cjk_query_tokens(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def query_terms(query: str, *, keep_stop_words: bool = False) -> list[str]:
    """Distinct search terms in query order; English stop words dropped unless nothing is left."""
    parts = _SPLIT.split(normalize_text(query))
    terms: list[str] = []
    stops: list[str] = []
    for i, part in enumerate(parts):
        if i % 2:
            terms.extend(_cjk_query_tokens(part))
            continue
        for word in _WORD.findall(part):
            if not keep_stop_words and word in STOP_WORDS:
                stops.append(word)
            else:
                terms.append(word)
    if not terms:
        terms = stops
    return list(dict.fromkeys(terms))


def fts_quote(term: str) -> str:
    """One FTS5 string literal; embedded quotes doubled (https://sqlite.org/fts5.html#fts5_strings)."""
    return '"' + term.replace('"', '""') + '"'


def fts_query(terms: list[str], op: str) -> str:
    return f" {op} ".join(fts_quote(t) for t in terms)
