"""Full-text search: an FTS5 index over subject, content and tags, queried in bounded steps.

Candidates come from three FTS5 queries — the query as an exact phrase, all of its content
terms, any of its rare terms — and ``projections.search.ranking`` scores their union on one scale.
FTS5's ``bm25()`` walks the whole doclist of every term in the expression to get its IDF, so a
ranked query containing a word found in half the ledger costs tens of milliseconds at 100k
memories. Each term's document frequency is therefore counted first (a doclist walk capped at
``COMMON_CAP``, ~0.1 µs a row, all terms in one statement); only rare terms enter the
``bm25()``-ordered any-term query, and the phrase and all-terms queries (bounded by their rarest
token) are taken newest first without ``bm25()``. Ranking reads each candidate's tokens from the
index's ``tokens`` column (cut once, when the memory was indexed). See docs/search.md.
"""

from __future__ import annotations

from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.clock import to_datetime
from fact_ledger.ledger.text import Query, Term, analyse, fts_all, fts_any, index_text, is_cjk
from fact_ledger.ledger.trust import effective_trust
from fact_ledger.projections.search import ranking
from fact_ledger.projections.search.index import TOKEN_FIELDS, tokens

RARE = 1000  # a term in more memories than this is "common": too costly to bm25-rank alone
COMMON_CAP = 10 * RARE
ANY_BUDGET = 3000  # at most this many postings are bm25-ranked by the any-term query
POOL_MIN = 30  # candidates gathered per FTS query (at least)
POOL_PER_RESULT = 3
FILTER_MARGIN = 1.5  # a query's top is taken this much wider than its pool, then filtered
CONTEXT_TOP = 20  # session neighbours are looked up for this many best text matches
SESSION_GAP_S = 3600.0  # adjacent memories whose event times are this close are one session


class SearchFilters(msgspec.Struct, kw_only=True):
    statuses: tuple[str, ...] = ("active",)
    workspace: str | tuple[str, ...] | None = None  # a tuple: any of these names (workspace aliases)
    source_type: str | None = None
    tags_all: tuple[str, ...] = ()
    after_time: str | None = None
    before_time: str | None = None
    max_memory_id: int | None = None  # a paging bound: memories the ledger held at that position
    session: str | None = None  # only this conversation's memories (``session_only``)
    exclude_cold: bool = False  # leave out cold memories (projections.conversations)

    @property
    def workspaces(self) -> tuple[str, ...] | None:
        """The workspace filter as a tuple of names (None: every workspace)."""
        return (self.workspace,) if isinstance(self.workspace, str) else self.workspace

    def sql(self) -> tuple[str, list[Any]]:
        clauses = [f"m.status IN ({', '.join('?' * len(self.statuses))})"]
        params: list[Any] = list(self.statuses)
        if self.max_memory_id is not None:
            clauses.append("m.memory_id <= ?")
            params.append(self.max_memory_id)
        if self.session is not None:
            clauses.append("m.memory_id IN (SELECT memory_id FROM conversation_memories WHERE session = ?)")
            params.append(self.session)
        if self.exclude_cold:
            clauses.append("m.memory_id NOT IN (SELECT memory_id FROM cold_memories)")
        more, more_params = attribute_clauses(
            row="m",
            time_column="event_time",
            tags_row="m",
            workspaces=self.workspaces,
            source_type=self.source_type,
            after_time=self.after_time,
            before_time=self.before_time,
            tags_all=self.tags_all,
        )
        return " AND ".join(clauses + more), params + more_params


def attribute_clauses(
    *,
    row: str,
    time_column: str,
    tags_row: str,
    workspaces: tuple[str, ...] | None,
    source_type: str | None,
    after_time: str | None,
    before_time: str | None,
    tags_all: tuple[str, ...],
) -> tuple[list[str], list[Any]]:
    """The filters the live and the as-of search share (workspace, source, time range, all tags)."""
    clauses: list[str] = []
    params: list[Any] = []
    if workspaces is not None:
        clauses.append(f"{row}.workspace IN ({', '.join('?' * len(workspaces))})")
        params.extend(workspaces)
    if source_type:
        clauses.append(f"{row}.source_type = ?")
        params.append(source_type)
    if after_time:
        clauses.append(f"{row}.{time_column} >= ?")
        params.append(after_time)
    if before_time:
        clauses.append(f"{row}.{time_column} < ?")  # half-open: [after_time, before_time)
        params.append(before_time)
    for tag in tags_all:
        clauses.append(f"EXISTS (SELECT 1 FROM json_each({tags_row}.tags) WHERE value = ?)")
        params.append(tag)
    return clauses, params


class Hit(msgspec.Struct):
    memory_id: int
    score: float
    phrase: bool = False  # contains the query verbatim
    section: int | None = None  # the section (id) of a long memory that matched by meaning
    identifier: bool = False  # holds one of the query's identifiers whole (ranking.identifiers)


# -- index statistics ----------------------------------------------------------------------------
def _varints(blob: bytes) -> list[int]:
    out, i = [], 0
    while i < len(blob):
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def index_totals(conn: apsw.Connection) -> tuple[int, tuple[float, float, float]]:
    """(documents, average tokens per column), read from FTS5's own "averages" record.

    The record (``%_data`` id 1: row count, then tokens per column, as SQLite varints) is part
    of the stable FTS5 file format (https://sqlite.org/src/file/ext/fts5/fts5_index.c).
    """
    return _totals(conn.execute(_TOTALS).get)


_TOTALS = "SELECT block FROM search_fts_data WHERE id=1"


def _totals(blob: bytes | None) -> tuple[int, tuple[float, float, float]]:
    values = _varints(blob) if blob else []
    if len(values) < 4 or values[0] <= 0:
        return 0, (1.0, 1.0, 1.0)
    n = values[0]
    return n, (values[1] / n, values[2] / n, values[3] / n)


# -- search ------------------------------------------------------------------------------------
def search(
    conn: apsw.Connection,
    query: str,
    filters: SearchFilters,
    limit: int,
    *,
    boost_workspace: str | tuple[str, ...] | None = None,
    page: int | None = None,
) -> tuple[list[Hit], int]:
    """Ranked hits (at most ``limit``) and an estimate of how many memories matched.

    ``page``: how many of the hits the caller shows (default: all). The candidate pool is sized
    from it, so hits asked for past the page (``find`` looks a little further for a claim's
    leader) do not triple the candidates every query tokenises and scores.
    """
    where, params = filters.sql()
    if not query.strip():
        return _recent(conn, where, params, limit)
    parsed = analyse(query)
    if not parsed.terms:
        return _substring(conn, query, where, params, limit)
    pool = max(text_pool(page or limit), limit)
    dfs, (n_docs, avg_lengths) = term_statistics(conn, parsed.terms)
    phrase, found = _retrieve(conn, parsed, dfs, where, params, pool)
    if not found:
        return [], 0
    scored = [
        ranking.ScoredTerm(_stem(conn, t), t.prefix, ranking.idf(max(n_docs, df), df))
        for t, df in zip(parsed.terms, dfs, strict=True)
    ]
    idents = ranking.identifiers(query)
    candidates = _candidates(conn, list(found), phrase, "", [], idents)
    best = ranking.score_text(candidates, scored, avg_lengths)
    context = _context(conn, candidates, scored, avg_lengths, best, where, params, idents)
    ranked = ranking.rank(candidates, context, boost_workspace=boost_workspace)
    named = {c.memory_id for c in candidates if c.identifier}
    return [
        Hit(memory_id, score, memory_id in phrase, identifier=memory_id in named) for memory_id, score in ranked[:limit]
    ], len(found)


def text_pool(page: int) -> int:
    """Candidates each full-text query gathers for a page of ``page`` results."""
    return max(page * POOL_PER_RESULT, POOL_MIN)


def _retrieve(
    conn: apsw.Connection, parsed: Query, dfs: list[int], where: str, params: list[Any], pool: int
) -> tuple[set[int], dict[int, None]]:
    """Candidate ids in discovery order, and the ones that contain the exact phrase.

    Only the any-term query over rare terms is ordered by ``bm25()``: FTS5 computes a term's
    IDF by walking its whole doclist, so a ranked query with a common term in it pays for that
    term's every posting. The phrase and the all-terms matches are few (bounded by their
    rarest token) and are taken whole, newest first, for ``ranking`` to order. The three run
    as one statement (:func:`_match_all`).
    """
    terms = list(parsed.terms)
    chosen: list[Term] = []
    budget = ANY_BUDGET
    for df, term in sorted(zip(dfs, terms, strict=True), key=lambda p: p[0]):
        if df > RARE or (chosen and df > budget):
            break
        chosen.append(term)
        budget -= df
    # A memory that holds the phrase holds each of its terms: when no memory holds them all and
    # the phrase contains every term, the phrase query (a walk of every term's doclist) is void.
    gated = len(terms) > 1 and {t.text for t in terms} <= set(parsed.phrase)
    every, phrase_ids, ranked = _match_all(
        conn,
        [
            _Part(fts_all(terms), by_rank=False) if len(terms) > 1 else None,
            _Part(parsed.phrase_fts(), by_rank=False, gated=gated) if len(parsed.phrase) >= 2 else None,
            _Part(fts_any(chosen), by_rank=True) if chosen else None,
        ],
        where,
        params,
        pool,
    )
    found = dict.fromkeys(phrase_ids)
    found.update(dict.fromkeys(every))
    found.update(dict.fromkeys(ranked))
    if not chosen and len(found) < pool:  # every term is common: the newest memories with any of them
        found.update(dict.fromkeys(_match(conn, fts_any(terms), where, params, pool, by_rank=False)))
    return set(phrase_ids), found


class _Part(msgspec.Struct, frozen=True):
    """One FTS5 query of :func:`_match_all`. ``gated``: run only when the first query matched
    anything (before the filters: when it matched nothing, neither can this one)."""

    expression: str
    by_rank: bool
    gated: bool = False


def _match_all(
    conn: apsw.Connection, parts: list[_Part | None], where: str, params: list[Any], pool: int
) -> list[list[int]]:
    """:func:`_match` for several queries in one statement (a None part finds nothing): each
    query's top, filtered, in its own order. A query whose filters threw most of its top away is
    ranked again with the filters inside, as :func:`_match` does, in a statement of its own."""
    wide = int(pool * FILTER_MARGIN)
    ctes, selects, bound, tail = [], [], [], []
    for i, part in enumerate(parts):
        if part is None:
            continue
        order = "bm25(search_fts)" if part.by_rank else "rowid DESC"
        rank = "bm25(search_fts)" if part.by_rank else "-rowid"
        ctes.append(
            f"q{i}(id, r) AS (SELECT rowid, {rank} FROM search_fts WHERE search_fts MATCH ? ORDER BY {order} LIMIT ?)"
        )
        bound += [part.expression, wide]
        gate = " WHERE EXISTS (SELECT 1 FROM q0)" if part.gated and parts[0] is not None else ""
        selects.append(
            f"SELECT {i}, top.id, m.memory_id, top.r FROM q{i} top "
            f"LEFT JOIN memories m ON m.memory_id = top.id AND {where}{gate}"
        )
        tail += params
    tops: list[list[int | None]] = [[] for _ in parts]
    if selects:
        sql = f"WITH {', '.join(ctes)} {' UNION ALL '.join(selects)} ORDER BY 1, 4, 2 DESC"
        for i, _id, memory_id, _r in conn.execute(sql, (*bound, *tail)):
            tops[i].append(memory_id)
    out = []
    for part, top in zip(parts, tops, strict=True):
        ids = [m for m in top if m is not None]
        if part is None or len(ids) >= pool or len(top) < wide:
            out.append(ids[:pool])
        else:
            out.append(_filtered_match(conn, part.expression, where, params, pool, by_rank=part.by_rank))
    return out


def _match(
    conn: apsw.Connection, expression: str, where: str, params: list[Any], pool: int, *, by_rank: bool
) -> list[int]:
    """The best (or newest) ``pool`` matches that pass the filters.

    Ranking first and joining ``memories`` after keeps the join off every match (it triples the
    cost of a common term); only when the filters throw most of the top away is the match
    ranked again with the filters inside. The top and its filter are one statement: the left
    join keeps each of the top's rows (in its order), with NULL for one the filters reject.
    """
    return _match_all(conn, [_Part(expression, by_rank=by_rank)], where, params, pool)[0]


def _filtered_match(
    conn: apsw.Connection, expression: str, where: str, params: list[Any], pool: int, *, by_rank: bool
) -> list[int]:
    order = "bm25(search_fts)" if by_rank else "search_fts.rowid DESC"
    return [
        r[0]
        for r in conn.execute(
            "SELECT search_fts.rowid FROM search_fts JOIN memories m ON m.memory_id = search_fts.rowid "
            f"WHERE search_fts MATCH ? AND {where} ORDER BY {order} LIMIT ?",
            (expression, *params, pool),
        )
    ]


def _json(ids: list[int]) -> str:
    return msgspec.json.encode(ids).decode()


def document_frequencies(conn: apsw.Connection, terms: tuple[Term, ...] | list[Term]) -> list[int]:
    """Each term's document frequency (any status), counted up to COMMON_CAP + 1 in one statement.

    Exact for every term that ``_retrieve`` may rank (at most RARE); the cap bounds the IDF
    error of a common term (its IDF is small either way) without walking a doclist of half the
    ledger.
    """
    if not terms:
        return []
    return term_statistics(conn, terms)[0]


def term_statistics(
    conn: apsw.Connection, terms: tuple[Term, ...] | list[Term]
) -> tuple[list[int], tuple[int, tuple[float, float, float]]]:
    """:func:`document_frequencies` and :func:`index_totals` in one statement."""
    count = "(SELECT count(*) FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH ? LIMIT ?))"
    params = [value for t in terms for value in (t.fts(), COMMON_CAP + 1)]
    row = conn.execute("SELECT " + ", ".join([*[count] * len(terms), f"({_TOTALS})"]), params).fetchone()
    return list(row[:-1]), _totals(row[-1])


def _stem(conn: apsw.Connection, term: Term) -> str:
    stemmed = tokens(conn, term.text)
    return stemmed[0] if stemmed else term.text


def _candidates(
    conn: apsw.Connection,
    ids: list[int],
    phrase: set[int],
    where: str,
    params: list[Any],
    identifiers: tuple[str, ...] = (),
) -> list[ranking.Candidate]:
    """Tokenised fields of the memories ``ids`` (speaker labels moved to the subject), and
    whether each holds one of the query's ``identifiers`` whole."""
    if not ids:
        return []
    rows = conn.execute(
        "SELECT d.memory_id, d.tokens, m.content, m.source_type, m.confirmed_via, m.event_time, m.workspace "
        "FROM json_each(?) j CROSS JOIN search_docs d ON d.memory_id = j.value "
        f"CROSS JOIN memories m ON m.memory_id = j.value {'WHERE ' + where if where else ''}",
        (_json(ids), *params),
    )
    out = []
    for memory_id, cut, content, source_type, confirmed_via, event_time, workspace in rows:
        subject, body, tags = cut.split(TOKEN_FIELDS)
        subject_tokens, body_tokens = subject.split(), body.split()
        label = ranking.speaker(content) if not subject_tokens else ""
        if label:
            subject_tokens = tokens(conn, index_text(label))
            body_tokens = body_tokens[len(subject_tokens) :]
        out.append(
            ranking.Candidate(
                memory_id=memory_id,
                fields=(subject_tokens, body_tokens, tags.split()),
                source_trust=effective_trust(source_type, confirmed_via),  # an agent's "user_confirmed" is its word
                event_time=event_time,
                workspace=workspace,
                phrase=memory_id in phrase,
                identifier=bool(identifiers) and ranking.holds_any(content, identifiers),
            )
        )
    return out


def _context(
    conn: apsw.Connection,
    candidates: list[ranking.Candidate],
    terms: list[ranking.ScoredTerm],
    avg_lengths: tuple[float, float, float],
    best: float,
    where: str,
    params: list[Any],
    identifiers: tuple[str, ...] = (),
) -> dict[int, tuple[int | None, int | None]]:
    """Session neighbours of the best text matches, scored and linked both ways.

    A neighbour that contains none of the query's terms is never added as a result: context
    reorders matches, it does not turn a non-match into one.
    """
    top = sorted(candidates, key=lambda c: -c.text)[:CONTEXT_TOP]
    context = session_neighbours(conn, [c.memory_id for c in top])
    known = {c.memory_id for c in candidates}
    extra = list(dict.fromkeys(n for pair in context.values() for n in pair if n is not None and n not in known))
    more = _candidates(conn, extra, set(), where, params, identifiers)
    ranking.score_text(more, terms, avg_lengths, best)
    candidates += [c for c in more if c.matched]
    for memory_id, (before, after) in list(context.items()):
        if after is not None and after not in context:
            context[after] = (memory_id, None)
        if before is not None and before not in context:
            context[before] = (None, memory_id)
    return context


def holding_all(
    conn: apsw.Connection, words: tuple[str, ...], workspaces: tuple[str, ...], limit: int = 50
) -> list[tuple[int, str, str]]:
    """``(memory_id, stream_id, content)`` of the active memories of ``workspaces`` whose content
    holds every one of ``words`` (stemmed as the index stems them), newest first: what a
    cancellation without a ``ref_id`` may be cancelling (``ledger.cancellation``)."""
    if not words or not workspaces:
        return []
    terms = [Term(w, prefix=len(w) == 1 and is_cjk(w)) for w in words]
    return conn.execute(
        "SELECT m.memory_id, m.stream_id, m.content FROM search_fts JOIN memories m ON m.memory_id = search_fts.rowid "
        f"WHERE search_fts MATCH ? AND m.status = 'active' AND m.workspace IN ({', '.join('?' * len(workspaces))}) "
        "ORDER BY search_fts.rowid DESC LIMIT ?",
        (f"body : ({fts_all(terms)})", *workspaces, limit),
    ).fetchall()


def session_neighbours(conn: apsw.Connection, ids: list[int]) -> dict[int, tuple[int | None, int | None]]:
    """Each memory's previous and next memory in log order, when both belong to one session.

    A memory written with a ``session_id`` has its conversation's previous and next memories
    (``conversation_memories``): the client said which conversation it belongs to. Otherwise
    the session is guessed. One session: logged one right after the other, in the same workspace, with event times at
    most SESSION_GAP_S apart — a conversation logged turn by turn, whether stamped with the
    session's time or with each turn's. Only the adjacent memory is looked at (two primary-key
    seeks): a memory of another workspace in between ends the session.
    """
    try:
        rows = conn.execute(_NEIGHBOURS, (_json(ids),)).fetchall()
    except apsw.SQLError:  # a store without the conversations read model: every session is guessed
        rows = [(*r, None, None, None) for r in conn.execute(_GUESSED_NEIGHBOURS, (_json(ids),))]
    out: dict[int, tuple[int | None, int | None]] = {}
    for memory_id, workspace, event_time, before, after, in_conversation, previous, following in rows:
        if in_conversation:
            out[memory_id] = (previous, following)
        elif workspace is not None:
            out[memory_id] = (_same_session(workspace, event_time, before), _same_session(workspace, event_time, after))
    return out


# Each id's adjacent memories in log order (the guess), in one statement with its conversation's
# adjacent memories where it has one (what the client said): two primary-key seeks each.
_GUESSED = (
    "SELECT c.value, m.workspace, m.event_time, "
    " (SELECT p.memory_id || ' ' || p.workspace || ' ' || p.event_time FROM memories p "
    "  WHERE p.memory_id < c.value ORDER BY p.memory_id DESC LIMIT 1), "
    " (SELECT n.memory_id || ' ' || n.workspace || ' ' || n.event_time FROM memories n "
    "  WHERE n.memory_id > c.value ORDER BY n.memory_id LIMIT 1)"
)
_GUESSED_NEIGHBOURS = f"{_GUESSED} FROM json_each(?) c CROSS JOIN memories m ON m.memory_id = c.value"
_NEIGHBOURS = (
    f"{_GUESSED}, v.memory_id IS NOT NULL, "
    " (SELECT p.memory_id FROM conversation_memories p WHERE p.session = v.session "
    "  AND p.workspace = v.workspace AND p.memory_id < v.memory_id ORDER BY p.memory_id DESC LIMIT 1), "
    " (SELECT n.memory_id FROM conversation_memories n WHERE n.session = v.session "
    "  AND n.workspace = v.workspace AND n.memory_id > v.memory_id ORDER BY n.memory_id LIMIT 1) "
    "FROM json_each(?) c LEFT JOIN memories m ON m.memory_id = c.value "
    "LEFT JOIN conversation_memories v ON v.memory_id = c.value"
)


def _same_session(workspace: str, event_time: str, neighbour: str | None) -> int | None:
    if neighbour is None:
        return None
    memory_id, rest = neighbour.split(" ", 1)
    other_workspace, _, other_time = rest.rpartition(" ")
    if other_workspace != workspace:
        return None
    gap = abs((to_datetime(other_time) - to_datetime(event_time)).total_seconds())
    return int(memory_id) if gap <= SESSION_GAP_S else None


def _recent(conn: apsw.Connection, where: str, params: list[Any], limit: int) -> tuple[list[Hit], int]:
    rows = conn.execute(
        f"SELECT m.memory_id FROM memories m WHERE {where} ORDER BY m.event_time DESC, m.memory_id DESC LIMIT ?",
        (*params, limit + 1),
    ).fetchall()
    return [Hit(r[0], 0.0) for r in rows[:limit]], len(rows)


def _substring(conn: apsw.Connection, query: str, where: str, params: list[Any], limit: int) -> tuple[list[Hit], int]:
    """No word characters at all (emoji, punctuation): a plain substring scan, LIKE-escaped."""
    needle = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = conn.execute(
        f"SELECT m.memory_id FROM memories m WHERE {where} AND m.content LIKE ? ESCAPE '\\' "
        "ORDER BY m.event_time DESC LIMIT ?",
        (*params, needle, limit + 1),
    ).fetchall()
    return [Hit(r[0], 0.5) for r in rows[:limit]], len(rows)
