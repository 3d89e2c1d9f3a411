"""Hybrid recall: full-text and nearest-neighbour candidates, fused on one scale.

Candidates are the union of the full-text ranking's top hits (:mod:`projections.search.queries`,
every filter applied, as many as its pool for the page shown: 33 for a page of 10) and the
``POOL`` memories nearest the query that pass the same filters, by the closeness fusion uses
(:meth:`knn.BitIndex.closeness_in_context`: one scan over the centred sign bits of each memory's blend). Every
candidate gets its closeness to the query (not only those the nearest list found) from the
blends the index holds in process (centred int8: within 1e-3 of the float32 cosines); both scores
are min-max normalised over the union, and the fused score is ``LEXICAL_WEIGHT × text +
VECTOR_WEIGHT × cosine`` (while the vectors lag, in proportion to the share of text candidates
that have one, :func:`_coverage`). A candidate that holds the query verbatim keeps the full-text
ranking's phrase bonus on top, so exact wording still wins; one that holds the query's
identifier whole (``ranking.identifiers``) keeps its identifier bonus on top too. A candidate
without a vector yet is fused on its text alone (never as "far"); one written in the other
script than the query (a Chinese question, an English memory) is fused on its closeness alone,
since its words cannot match the query's (never as "unrelated"). The weights and the pool
were calibrated on the LoCoMo development conversations (docs/search.md has the table of
methods tried).

Filters reach the vector candidates twice: the workspace scope inside the scan itself (a
strict workspace is never even scored against another's vectors), then every filter — status,
workspace, tags, source type, time range — in SQL on the candidates, exactly as for text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.sql import marks
from fact_ledger.ledger.text import analyse, script
from fact_ledger.projections import derived, knn, vectors
from fact_ledger.projections.search.queries import Hit, SearchFilters, search, text_pool
from fact_ledger.projections.search.ranking import IDENTIFIER_BONUS, WORKSPACE_BONUS
from fact_ledger.projections.sections import ROWID_SHIFT

LEXICAL_WEIGHT = 0.4  # chosen on LoCoMo dev with case-folded passages and queries (docs/search.md)
VECTOR_WEIGHT = 0.6
POOL = 50  # candidates taken from each list
PHRASE_BONUS = 1.0  # a verbatim match of the query stays above every fused score
WIDEN = 4  # when filters reject most vector candidates, scan again this many times wider


def hybrid_search(
    conn: apsw.Connection,
    query: str,
    filters: SearchFilters,
    limit: int,
    query_vector: bytes,
    *,
    boost_workspace: str | tuple[str, ...] | None = None,
    weights: tuple[float, float] = (LEXICAL_WEIGHT, VECTOR_WEIGHT),
    pool: int = POOL,
    page: int | None = None,
    base: int | None = None,
) -> tuple[list[Hit], int]:
    """Ranked hits (at most ``limit``) and an estimate of how many memories matched. A long
    memory whose closest vector is one of its sections' carries that section's id.

    ``base``: on a later page of one ``find``, the first page's ``page``. The candidates, and so
    the min-max normalisation and the whole order, are then the first page's, whatever the page:
    a pool sized by each page normalised over other candidates, the order moved from page to
    page, and paging repeated some memories and skipped others. Past the fused candidates, the
    remaining text matches follow in full-text order (:func:`_past_the_pool`)."""
    if not query.strip() or not analyse(query).terms:  # listing, or a LIKE scan: no meaning to add
        return search(conn, query, filters, limit, boost_workspace=boost_workspace)
    page = page or limit
    base = min(base, page) if base else page
    beyond = limit - page  # the look past the page (a claim set's leader), as on the first page
    pooled = candidates(
        conn, query, filters, max(pool, base + beyond), query_vector, boost_workspace=boost_workspace, page=base
    )
    if not pooled.ids:
        return [], 0
    fused = fuse(pooled, weights, _in_workspaces(conn, pooled.ids, boost_workspace))
    hits = [
        Hit(
            memory_id,
            score,
            memory_id in pooled.phrase,
            pooled.section.get(memory_id),
            identifier=memory_id in pooled.identifier,
        )
        for memory_id, score in fused[:limit]
    ]
    if len(hits) < limit and base < page:
        hits += _past_the_pool(conn, query, filters, limit, page, pooled.ids, hits, boost_workspace)
    return hits[:limit], max(pooled.total, len(pooled.ids))


def _past_the_pool(
    conn: apsw.Connection,
    query: str,
    filters: SearchFilters,
    limit: int,
    page: int,
    pooled: list[int],
    hits: list[Hit],
    boost_workspace: str | tuple[str, ...] | None,
) -> list[Hit]:
    """A page deeper than the first page's candidates reach: the text matches not among them,
    in full-text order (lexical paging's order, which does not move from page to page), after
    every fused candidate; their scores continue down from the last fused one, so the order
    ``find`` builds on (scores fall down the list) holds."""
    seen = set(pooled)
    floor = hits[-1].score if hits else 0.0
    more, _ = search(conn, query, filters, limit, boost_workspace=boost_workspace, page=page)
    rest = [h for h in more if h.memory_id not in seen][: limit - len(hits)]
    return [msgspec.structs.replace(h, score=round(floor - (k + 1) * 1e-6, 6)) for k, h in enumerate(rest)]


class Pool(msgspec.Struct):
    """Both candidate lists and every score fusion needs."""

    ids: list[int]  # the union: text ranking first, then the vector list
    text: dict[int, float]  # full-text score (absent: not a text match)
    similarity: dict[
        int, float
    ]  # exact cosine to the query, for every candidate (its context's or best section's if closer)
    phrase: set[int]
    nearest: list[int]  # the vector list alone, nearest first
    total: int
    section: dict[int, int] = {}  # memory id -> the section whose vector is closer than the whole memory's
    identifier: set[int] = set()  # hold one of the query's identifiers whole
    other_script: set[int] = set()  # written in the other script than the query (text cannot match)


def candidates(
    conn: apsw.Connection,
    query: str,
    filters: SearchFilters,
    pool: int,
    query_vector: bytes,
    *,
    boost_workspace: str | tuple[str, ...] | None = None,
    page: int | None = None,
) -> Pool:
    # Full text's share is sized by the page shown, as in lexical find (33 for a page of 10):
    # its top 50 gave the same LoCoMo recall (docs/search.md) and cost a third more.
    text_limit = text_pool(page) if page else pool
    text_hits, total = search(conn, query, filters, text_limit, boost_workspace=boost_workspace, page=page)
    near, similarity = memories_near(conn, query_vector, filters, pool, also=[h.memory_id for h in text_hits])
    near_sections = vector_candidates(conn, query_vector, filters, pool, table="section_vectors")
    # A long memory is as close as its closest part: its sections join the vector list.
    ranked = sorted(near + [(rowid >> ROWID_SHIFT, s) for rowid, s in near_sections], key=lambda p: -p[1])
    nearest = list(dict.fromkeys(memory_id for memory_id, _ in ranked))[:pool]
    ids = list(dict.fromkeys([h.memory_id for h in text_hits] + nearest))
    section: dict[int, int] = {}
    for memory_id, (rowid, cosine) in knn.section_cosines(conn, query_vector, ids).items():
        if cosine > similarity.get(memory_id, -1.0):
            similarity[memory_id] = cosine
            section[memory_id] = rowid & ((1 << ROWID_SHIFT) - 1)
    if stale := _stale(conn, ids):  # edited since embedded: no vector yet, ranked on its text alone
        text_ids = {h.memory_id for h in text_hits}
        for memory_id in stale:
            similarity.pop(memory_id, None)
            section.pop(memory_id, None)
        nearest = [m for m in nearest if m not in stale]
        ids = [m for m in ids if m in text_ids or m not in stale]
    return Pool(
        ids=ids,
        text={h.memory_id: h.score for h in text_hits},
        similarity=similarity,
        phrase={h.memory_id for h in text_hits if h.phrase},
        nearest=nearest,
        total=total,
        section=section,
        identifier={h.memory_id for h in text_hits if h.identifier},
        other_script=_in_other_script(conn, query, ids),
    )


def _stale(conn: apsw.Connection, ids: list[int]) -> set[int]:
    """The candidates whose stored vector embeds a text they no longer hold (an ``update`` the
    indexer has not reached yet): its key is the embedding cache's key of the text it embedded."""
    state = vectors.state(conn)
    if state is None or not ids:
        return set()
    rows = conn.execute(
        "SELECT v.memory_id, m.content, v.key FROM json_each(?) j JOIN vectors v ON v.memory_id = j.value "
        "JOIN memories m ON m.memory_id = v.memory_id",
        (msgspec.json.encode(ids).decode(),),
    )
    return {
        memory_id
        for memory_id, content, key in rows
        if key != derived.embedding_key(state.model_id, vectors.passage_text(content))
    }


def _in_other_script(conn: apsw.Connection, query: str, ids: list[int]) -> set[int]:
    """The candidates written in the other script than the query: a Chinese memory for an
    English query and back (:func:`ledger.text.script`; a mixed query has no other script)."""
    asked = script(query)
    if asked is None or not ids:
        return set()
    rows = conn.execute(
        "SELECT m.memory_id, substr(m.content, 1, 160) FROM json_each(?) j "
        "CROSS JOIN memories m ON m.memory_id = j.value",
        (msgspec.json.encode(ids).decode(),),
    )
    return {memory_id for memory_id, text in rows if script(text) not in (None, asked)}


def _in_workspaces(conn: apsw.Connection, ids: list[int], boost: str | tuple[str, ...] | None) -> frozenset[int]:
    """The candidates stored in the boosted workspaces (weak isolation: the caller's own)."""
    names = (boost,) if isinstance(boost, str) else boost or ()
    if not names or not ids:
        return frozenset()
    rows = conn.execute(
        f"SELECT m.memory_id FROM json_each(?) j CROSS JOIN memories m ON m.memory_id = j.value "
        f"WHERE m.workspace IN ({marks(len(names))})",
        (msgspec.json.encode(ids).decode(), *names),
    )
    return frozenset(r[0] for r in rows)


def fuse(pool: Pool, weights: tuple[float, float], boosted: frozenset[int] = frozenset()) -> list[tuple[int, float]]:
    """Min-max normalised weighted sum over the union, best first (ties: the newer memory);
    the phrase bonus, and the workspace bonus for ``boosted``, on top."""
    ids = pool.ids
    text_n = _min_max({i: pool.text.get(i, 0.0) for i in ids})
    # Normalised over the candidates that have a vector only: one without (written a moment ago
    # and not embedded yet, or during a reembed) is not "far", it is unknown.
    cos_n = _min_max({i: pool.similarity[i] for i in ids if i in pool.similarity})
    coverage = _coverage(pool)
    bonus = {
        i: PHRASE_BONUS * (i in pool.phrase)
        + IDENTIFIER_BONUS * (i in pool.identifier)
        + WORKSPACE_BONUS * (i in boosted)
        for i in ids
    }
    out = [
        (i, round(_fused(text_n[i], cos_n.get(i), weights, i in pool.other_script, coverage) + bonus.get(i, 0.0), 6))
        for i in ids
    ]
    out.sort(key=lambda h: (-h[1], -h[0]))
    return out


def _coverage(pool: Pool) -> float:
    """The share of the full-text candidates that have a vector (1.0 when there are none).

    While the vectors lag (a burst of writes, a ``reembed``, a model just installed), the
    nearest-neighbour list is drawn from the part of the ledger embedded so far, and its best
    closeness normalises to 1 however far that part is from what the query is about: memories
    the query's words do not touch would push aside text matches that simply have no vector
    yet. So meaning speaks in proportion to how much of the text candidates it has seen: at
    full coverage the fusion is the calibrated one, with none it is full text's order.
    """
    texts = [i for i in pool.ids if i in pool.text]
    return sum(i in pool.similarity for i in texts) / len(texts) if texts else 1.0


def _fused(
    text: float,
    closeness: float | None,
    weights: tuple[float, float],
    other_script: bool = False,
    coverage: float = 1.0,
) -> float:
    """The weighted sum, with what is unknown not counted as bad: a candidate without a vector
    is ranked on its text alone, on the same scale (as if its closeness were as good as its text
    match); one in the other script than the query on its closeness alone (as if its text matched
    as well as its meaning does), unless the words it shares with the query (a name, a number)
    rank it higher still. A candidate with a vector gets the weighted sum in the share
    ``coverage`` (:func:`_coverage`) and its text alone in the rest."""
    whole = weights[0] + weights[1]
    if closeness is None:
        return whole * text
    fused = coverage * (weights[0] * text + weights[1] * closeness) + (1 - coverage) * whole * text
    if other_script:
        return max(fused, whole * closeness)
    return fused


def _min_max(values: dict[int, float]) -> dict[int, float]:
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    span = high - low
    return {k: (v - low) / span if span > 0 else 0.0 for k, v in values.items()}


def memories_near(
    conn: apsw.Connection, query_vector: bytes, filters: SearchFilters, k: int, *, also: Sequence[int] = ()
) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """The ``k`` memories passing every filter that are closest to the query by in-context
    closeness (:meth:`knn.BitIndex.closeness_in_context`), nearest first; and the closeness of
    each of them and of ``also`` (the text candidates, which passed the same filters). One
    statement applies the filters to the nearest; every closeness comes from the index's
    blends, in process."""
    where, params = filters.sql()
    index = knn.index_for(conn, contexts=True)
    want = max(k, knn.OVERSAMPLE)
    known = set(also)
    for _ in range(3):
        found = _in_context_in_scope(index, query_vector, want, filters)
        passed = _passing(conn, [i for i in found if i not in known], where, params)
        scored = index.closeness_in_context(query_vector, [*known, *passed])
        near = sorted(((i, scored[i]) for i in found if i in scored), key=lambda p: (-p[1], -p[0]))
        if len(near) >= k or len(found) < want:  # enough, or nothing more to find
            break
        want *= WIDEN  # the filters rejected many: look wider
    return near[:k], scored


def vector_candidates(
    conn: apsw.Connection, query_vector: bytes, filters: SearchFilters, k: int, *, table: str = "vectors"
) -> list[tuple[int, float]]:
    """The ``k`` nearest vectors of ``table`` (by their own cosine) whose memory passes every
    filter, with their cosines, nearest first: memory ids, or section rowids for
    ``section_vectors``."""
    where, params = filters.sql()
    shift = ROWID_SHIFT if table == "section_vectors" else 0
    want, oversample = k, knn.OVERSAMPLE
    for _ in range(3):
        near = _nearest_in_scope(conn, query_vector, want, filters, oversample=oversample, table=table)
        passed = _passing(conn, list({i >> shift for i, _ in near}), where, params)
        chosen = [(i, s) for i, s in near if i >> shift in passed]
        if len(chosen) >= k or len(near) < want:  # enough, or nothing more to find
            return chosen[:k]
        want = want * WIDEN  # the filters rejected many: look wider
        oversample = oversample * WIDEN
    return chosen[:k]


def _in_context_in_scope(index: knn.BitIndex, query_vector: bytes, want: int, filters: SearchFilters) -> list[int]:
    """The in-context scan over the filters' workspaces only: a strict workspace is never even
    scored against another's vectors (nor can their crowd push its own out of the pool)."""
    return index.nearest_in_context(query_vector, want, filters.workspaces)


def _nearest_in_scope(
    conn: apsw.Connection, query_vector: bytes, want: int, filters: SearchFilters, *, oversample: int, table: str
) -> list[tuple[int, float]]:
    """The per-vector scan over the filters' workspaces only (see :func:`_in_context_in_scope`)."""
    return knn.nearest(conn, query_vector, want, filters.workspaces, oversample=oversample, table=table)


def _passing(conn: apsw.Connection, ids: list[int], where: str, params: list[Any]) -> set[int]:
    if not ids:
        return set()
    return {
        r[0]
        for r in conn.execute(
            f"SELECT m.memory_id FROM json_each(?) j CROSS JOIN memories m ON m.memory_id = j.value WHERE {where}",
            (msgspec.json.encode(ids).decode(), *params),
        )
    }
