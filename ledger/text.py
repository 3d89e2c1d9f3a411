"""Search text analysis for English and CJK, shared by the index and the query side.

FTS5's ``unicode61`` keeps a run of CJK characters as one token and ``trigram`` never matches a
term shorter than three characters, yet most Chinese words have one or two. So a CJK run is
written into the index as its overlapping bigrams plus its last character alone
("接口返回" → "接口 口返 返回 回"): every character starts exactly one token, a 2-character
word is one token, a 1-character word is a prefix query (``"返" *``), and a verbatim span of
the text is a contiguous run of index tokens, i.e. an FTS5 phrase. Unigrams for every
character would double the CJK index for nothing the prefix query does not already give.

Latin text is left to ``porter unicode61`` (stemming, case, diacritics), which is why ASCII
text passes through untouched: the tokenizer does the work and the index build stays cheap.

Query text never reaches the FTS5 grammar: a query is cut into word and CJK tokens here and
each is re-emitted as a double-quoted string, so quotes, ``*``, ``NEAR(``, ``AND``/``OR``/
``NOT``, ``^``, ``col:`` filters and parentheses are all plain text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from fact_ledger.ledger.memo import text_cache

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{_CJK}]+")
# A token the way unicode61 cuts one: letters and digits (and CJK runs, cut further below);
# everything else, underscore included, separates.
_TOKEN = re.compile(f"[{_CJK}]+|[^\\W_{_CJK}]+")
# A word of an alphabetic script: starts with a letter that is not CJK (so "8080" is no word).
_ALPHABETIC_WORD = re.compile(f"[^\\W\\d_{_CJK}][^\\W_{_CJK}]*")
_ASCII_LETTER = re.compile("[A-Za-z]")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)

# Query terms longer than this are cut: a pasted page should not become a 2,000-term OR.
MAX_TERMS = 32
MAX_PHRASE_TOKENS = 32

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can could did didn't do does doesn't doing don't down during
    each few for from further had has have having he her here hers herself him himself his how i if
    in into is isn't it it's its itself just let me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself
    yourselves s t also ever kind sort much many way ways thing things likely might must shall whose""".split()
)


def fold(text: str) -> str:
    """NFKC (full-width → ASCII), case folded, zero-width characters removed."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH).casefold()


def is_cjk(text: str) -> bool:
    return bool(_CJK_RUN.search(text))


@text_cache(maxsize=4096)  # a find asks it of every candidate; the same memories come back
def script(text: str) -> str | None:
    """The script most of ``text`` is written in: ``"cjk"`` or ``"alphabetic"`` (words cut by
    spaces: Latin, Cyrillic, Greek, …), or None when neither has two thirds of it (mixed, or no
    letters).

    Two CJK characters count as one word (about the length of a Chinese word); a run of digits
    counts for neither, so "端口是 8080" is CJK and "port 8080" is not. Search uses it to tell a
    memory whose words *cannot* match the query's (written in the other script) from one whose
    words simply do not. ASCII text is answered without a scan."""
    if text.isascii():
        return "alphabetic" if _ASCII_LETTER.search(text) else None
    cjk = sum(map(len, _CJK_RUN.findall(text))) / 2
    words = len(_ALPHABETIC_WORD.findall(text))
    if cjk and cjk >= 2 * words:
        return "cjk"
    if words and words >= 2 * cjk:
        return "alphabetic"
    return None


def _expand_run(match: re.Match[str]) -> str:
    run = match.group(0)
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join([run[i : i + 2] for i in range(len(run) - 1)]) + " " + run[-1] + " "


@text_cache(maxsize=1024)  # the search and timeline projections index the same texts
def index_text(text: str) -> str:
    """The text handed to FTS5: folded, CJK runs expanded to bigrams + their last character."""
    if text.isascii():
        return text
    return _CJK_RUN.sub(_expand_run, fold(text))


@dataclass(frozen=True, slots=True)
class Term:
    """One search term: an FTS5 token, matched as a prefix when it is a lone CJK character."""

    text: str
    prefix: bool = False
    stop: bool = False

    def fts(self) -> str:
        return fts_quote(self.text) + (" *" if self.prefix else "")


@dataclass(frozen=True, slots=True)
class Query:
    """What a query string means to the index."""

    terms: tuple[Term, ...]  # distinct content terms (stop words only when nothing else is left)
    phrase: tuple[str, ...]  # the whole query as contiguous index tokens
    phrase_prefix: bool  # the phrase's last token is a CJK character the text may continue

    def phrase_fts(self) -> str:
        return fts_quote(" ".join(self.phrase)) + (" *" if self.phrase_prefix else "")


def analyse(query: str) -> Query:
    """Terms for AND/OR retrieval and the token sequence for the exact-phrase query."""
    folded = fold(query)
    terms: dict[str, Term] = {}
    stops: dict[str, Term] = {}
    phrase: list[str] = []
    phrase_prefix = False
    end = len(folded.rstrip())
    for match in _TOKEN.finditer(folded):
        token = match.group(0)
        if not _CJK_RUN.fullmatch(token):
            phrase.append(token)
            target = stops if token in STOP_WORDS else terms
            target.setdefault(token, Term(token, stop=target is stops))
            continue
        at_end = match.end() >= end
        if len(token) == 1:
            terms.setdefault(token, Term(token, prefix=True))
            phrase.append(token)
            phrase_prefix = at_end
            continue
        for i in range(len(token) - 1):
            bigram = token[i : i + 2]
            terms.setdefault(bigram, Term(bigram))
            phrase.append(bigram)
        if not at_end:  # the indexed run ends here too, so its last character is a token
            phrase.append(token[-1])
        phrase_prefix = False
    chosen = list(terms.values()) or list(stops.values())
    return Query(
        terms=tuple(chosen[:MAX_TERMS]),
        phrase=tuple(phrase[:MAX_PHRASE_TOKENS]),
        phrase_prefix=phrase_prefix and len(phrase) <= MAX_PHRASE_TOKENS,
    )


def query_terms(query: str, *, keep_stop_words: bool = False) -> list[str]:
    """The distinct terms of a query as plain strings (stop words dropped unless nothing is left)."""
    if not keep_stop_words:
        return [t.text for t in analyse(query).terms]
    return list(dict.fromkeys(analyse(query).phrase))


def fts_quote(term: str) -> str:
    """One FTS5 string literal; embedded quotes doubled (https://sqlite.org/fts5.html#fts5_strings)."""
    return '"' + term.replace('"', '""') + '"'


def fts_query(terms: list[str], op: str) -> str:
    """Plain terms joined by ``op``; a lone CJK character becomes a prefix query (see above)."""
    return f" {op} ".join(Term(t, prefix=len(t) == 1 and is_cjk(t)).fts() for t in terms)


def fts_any(terms: list[Term] | tuple[Term, ...]) -> str:
    return " OR ".join(t.fts() for t in terms)


def fts_all(terms: list[Term] | tuple[Term, ...]) -> str:
    return " AND ".join(t.fts() for t in terms)
