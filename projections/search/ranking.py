"""Scoring of search candidates: BM25F over the indexed fields, plus the signals FTS5 cannot see.

FTS5's ``bm25()`` ranks one MATCH expression, so the exact-phrase, all-terms and any-term
queries that gather candidates give scores on three different scales. The candidates (a few
dozen) are therefore scored again here, on one scale: BM25F (per-field weights and length
normalisation, https://doi.org/10.1145/1031171.1031181) with the collection statistics FTS5
keeps, then additive signals:

* the exact phrase, and how much of the query's IDF weight a memory covers;
* an identifier of the query (a key, ticket id, path, URL, version, hash, email) held whole:
  the index cuts ``JIRA-123`` into ``jira`` and ``123``, so ``JIRA-123-b`` holds the same
  phrase; the memory whose text holds the identifier bounded by non-identifier characters
  outranks every one holding a longer identifier that starts with it, or a sibling;
* a leading speaker label ("Caroline: ...", the usual form of a conversation turn) counts as
  the memory's subject, so "what did Caroline say" prefers Caroline's own turns;
* session context: memories logged one after another about the same moment are one
  conversation, and an answer rarely repeats its question's words ("How long have you been
  married?" → "5 years already!"), so part of a neighbour's text score flows to a memory;
* source trust and recency, deliberately too small to outvote the text except in near ties.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from fact_ledger.ledger.clock import to_datetime

K1 = 1.2
B = 0.5
FIELD_WEIGHTS = (2.0, 1.0, 1.5)  # subject, body, tags: a subject or tag word says more

PHRASE_BONUS = 1.0  # a verbatim phrase of the memory outranks any partial match
COVERAGE_BONUS = 0.3  # share of the query's IDF weight that the memory contains
AFTER_WEIGHT = 0.3  # share of the previous memory's text score (its answer follows a question)
BEFORE_WEIGHT = 0.1  # share of the next memory's text score
TRUST_BONUS = 0.05
RECENCY_BONUS = 0.03
WORKSPACE_BONUS = 0.2
IDENTIFIER_BONUS = 1.0  # the query's identifier held whole outranks a prefix or sibling match
RECENCY_HALF_LIFE_DAYS = 365.0

# "Name:" or "First Last:" at the start of a memory: who is speaking.
SPEAKER = re.compile(r"^\s*([^\W\d_][\w'’.-]*(?: [^\W\d_][\w'’.-]*){0,2}):\s")

# Identifiers: a run of word characters and joiners, as written in the query.
JOINERS = "-./:@~+#%=_"
_CHUNK = re.compile(r"[^\s\"'`()\[\]{}<>,;!?]+")
_LETTER_DIGIT = re.compile(r"(?=.*\d)(?=.*[^\W\d_])")


@dataclass(frozen=True, slots=True)
class ScoredTerm:
    """A query term as the index sees it: its token (or token prefix) and its IDF."""

    token: str
    prefix: bool
    idf: float


@dataclass(slots=True)
class Candidate:
    memory_id: int
    fields: tuple[list[str], list[str], list[str]]  # tokens of subject, body, tags
    source_trust: int
    event_time: str
    workspace: str
    phrase: bool = False
    identifier: bool = False  # holds one of the query's identifiers whole
    text: float = 0.0  # filled by score_text
    matched: bool = False  # whether it contains any query term
    neighbours: list[int] = field(default_factory=list)


def idf(n_docs: int, df: int) -> float:
    """Lucene's non-negative BM25 IDF: a term in every memory still weighs a little."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def speaker(content: str) -> str:
    match = SPEAKER.match(content)
    return match.group(1) if match else ""


def identifiers(query: str) -> tuple[str, ...]:
    """The query's identifier-like tokens, case-folded: a run with a joiner (``/ @ : _ .``, or
    ``-`` beside a digit: ``JIRA-123`` but not ``self-care``), or of six or more letters and
    digits mixed (a hash). Trailing sentence punctuation is not part of it."""
    out: list[str] = []
    for match in _CHUNK.finditer(query.casefold()):
        chunk = match.group(0).rstrip(".:")
        if len(chunk) < 3 or not any(ch.isalnum() for ch in chunk):
            continue
        joined = any(ch in "/@:_.~" for ch in chunk) or ("-" in chunk and any(ch.isdigit() for ch in chunk))
        if joined or (len(chunk) >= 6 and _LETTER_DIGIT.match(chunk)):
            out.append(chunk)
    return tuple(dict.fromkeys(out))


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def holds_whole(text: str, identifier: str) -> bool:
    """Whether ``text`` (case-folded) holds ``identifier`` bounded on each side by a character
    that cannot continue it: not a word character, nor a joiner followed by one (``1.2.`` ends a
    sentence; ``1.2.3`` continues). A side where the identifier itself starts or ends with a
    joiner (``/v1/users``) is not checked."""
    start = text.find(identifier)
    while start >= 0:
        end = start + len(identifier)
        left = not _word(identifier[0]) or start == 0 or _free(text[start - 1], text[start - 2] if start >= 2 else "")
        right = not _word(identifier[-1]) or end == len(text) or _free(text[end], text[end + 1 : end + 2])
        if left and right:
            return True
        start = text.find(identifier, start + 1)
    return False


def holds_any(content: str, identifiers: Sequence[str]) -> bool:
    """Whether ``content`` holds any of ``identifiers`` (case-folded) whole."""
    folded = content.casefold()
    return any(holds_whole(folded, identifier) for identifier in identifiers)


def _free(beside: str, beyond: str) -> bool:
    """Whether the character ``beside`` an identifier (and the one ``beyond`` it) end it."""
    if _word(beside):
        return False
    return not (beside in JOINERS and beyond != "" and _word(beyond))


def _tf(tokens: list[str], term: ScoredTerm) -> int:
    if not term.prefix:
        return tokens.count(term.token)
    return sum(1 for token in tokens if token.startswith(term.token))


def bm25f(
    fields: Sequence[list[str]], avg_lengths: Sequence[float], terms: Sequence[ScoredTerm]
) -> tuple[float, float]:
    """(BM25F score, IDF weight of the terms present) of one memory."""
    norms = [
        (tokens, weight / (1.0 - B + B * len(tokens) / max(avg, 1.0)))
        for tokens, weight, avg in zip(fields, FIELD_WEIGHTS, avg_lengths, strict=True)
        if tokens
    ]
    present = set().union(*fields)  # most candidates hold few of the terms: skip the rest at once
    score = matched = 0.0
    for term in terms:
        if not term.prefix and term.token not in present:
            continue
        pseudo_tf = 0.0
        for tokens, norm in norms:
            tf = _tf(tokens, term)
            if tf:
                pseudo_tf += tf * norm
        if pseudo_tf:
            score += term.idf * pseudo_tf / (K1 + pseudo_tf)
            matched += term.idf
    return score, matched


def score_text(
    candidates: Sequence[Candidate], terms: Sequence[ScoredTerm], avg_lengths: Sequence[float], best: float = 0.0
) -> float:
    """Set each candidate's text score (BM25F scaled by ``best``, coverage, phrase); return ``best``."""
    total_idf = sum(t.idf for t in terms) or 1.0
    raw = [bm25f(c.fields, avg_lengths, terms) for c in candidates]
    best = best or max((s for s, _ in raw), default=0.0) or 1.0
    for c, (score, matched) in zip(candidates, raw, strict=True):
        c.matched = matched > 0 or c.phrase
        c.text = score / best + COVERAGE_BONUS * matched / total_idf + (PHRASE_BONUS if c.phrase else 0.0)
    return best


def recency(event_time: str, newest: datetime) -> float:
    """1.0 for the newest candidate, halving every RECENCY_HALF_LIFE_DAYS (deterministic)."""
    days = (newest - to_datetime(event_time)).total_seconds() / 86400
    return math.exp(-math.log(2) * max(days, 0.0) / RECENCY_HALF_LIFE_DAYS)


def rank(
    candidates: Sequence[Candidate],
    context: Mapping[int, tuple[int | None, int | None]],
    *,
    boost_workspace: str | tuple[str, ...] | None = None,
) -> list[tuple[int, float]]:
    """(memory_id, score) best first, ties broken by the newer memory.

    ``context`` maps a memory to its (previous, next) neighbour in the same session.
    """
    if not candidates:
        return []
    text = {c.memory_id: c.text for c in candidates}
    newest = to_datetime(max(c.event_time for c in candidates))
    boosted = (boost_workspace,) if isinstance(boost_workspace, str) else boost_workspace or ()
    out = []
    for c in candidates:
        value = c.text
        before, after = context.get(c.memory_id, (None, None))
        if before is not None:
            value += AFTER_WEIGHT * text.get(before, 0.0)
        if after is not None:
            value += BEFORE_WEIGHT * text.get(after, 0.0)
        value += TRUST_BONUS * c.source_trust / 100 + RECENCY_BONUS * recency(c.event_time, newest)
        if c.workspace in boosted:
            value += WORKSPACE_BONUS
        if c.identifier:
            value += IDENTIFIER_BONUS
        out.append((c.memory_id, round(value, 6)))
    out.sort(key=lambda h: (-h[1], -h[0]))
    return out
