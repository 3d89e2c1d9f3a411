"""Reading the ledger now: ``find`` (ranked, standing-aware, sections) and ``read`` (one memory).

A service of the facade (:class:`server.app.facade.LedgerApp`); an as-of question goes to the history
service, searching to the semantic layer (``search``) and claim-set standing to the governance
views (``standings``), both passed in as functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from fact_ledger.ledger import clock
from fact_ledger.ledger.arbiter import leaders_first_scored
from fact_ledger.ledger.errors import InvalidInput, NotFound
from fact_ledger.ledger.freshness import newest_first, template
from fact_ledger.ledger.slot_match import slot_scores
from fact_ledger.ledger.trust import STATUSES
from fact_ledger.projections import memories as mem
from fact_ledger.projections.claims import slot_keys
from fact_ledger.projections.conflicts.queries import conflict_ids_of
from fact_ledger.projections.memory_row import CurrentMemory
from fact_ledger.projections.search.queries import Hit, SearchFilters
from fact_ledger.projections.search.ranking import holds_any, identifiers
from fact_ledger.server.app import paging
from fact_ledger.server.app.memory_view import memory_view
from fact_ledger.server.app.sections_view import (
    SectionsRequest,
    matching_section,
    section_count,
    sections_view,
    with_section,
)
from fact_ledger.server.app.storage import Storage
from fact_ledger.server.app.timetravel import History
from fact_ledger.server.app.workspaces import Workspaces
from fact_ledger.server.config import Settings

Search = Callable[
    [str, SearchFilters, int, "tuple[str, ...] | None", "int | None", "int | None"], "tuple[list[Hit], int]"
]
Standings = Callable[[list[int]], "tuple[dict[int, dict[str, Any]], dict[int, list[int]]]"]


def _id_of(item: dict[str, Any] | Hit) -> int:
    """A find page's item: a working note (already a view) or a long-term hit."""
    return int(item["memory_id"]) if isinstance(item, dict) else item.memory_id


def _leaders_first(hits: list[Hit], standing: dict[int, dict[str, Any]]) -> list[Hit]:
    """Hits in ``leaders_first`` order; a leader moved up takes its challenger's score, so
    scores still fall down the list."""
    by_id = {h.memory_id: h for h in hits}
    ranked = leaders_first_scored(
        [(h.memory_id, h.score) for h in hits], {m: s["leader_id"] for m, s in standing.items()}
    )
    return [
        by_id[m] if by_id[m].score == score else msgspec.structs.replace(by_id[m], score=score) for m, score in ranked
    ]


def _leaders_before_challengers(hits: list[Hit], standing: dict[int, dict[str, Any]]) -> list[Hit]:
    """``hits`` in their order, each challenger's leader (when it answers too) moved just before
    it, every hit keeping its own score. The conversation's own memories come first without
    regard to score, so :func:`_leaders_first` (which lifts a leader's score to its challenger's,
    for a list in score order) gave them another memory's score."""
    by_id = {h.memory_id: h for h in hits}
    out: list[Hit] = []
    placed: set[int] = set()
    for hit in hits:
        leader = standing.get(hit.memory_id, {}).get("leader_id")
        if leader in by_id and leader not in placed:
            out.append(by_id[leader])
            placed.add(leader)
        if hit.memory_id not in placed:
            out.append(hit)
            placed.add(hit.memory_id)
    return out


def _current_before_superseded(hits: list[Hit], rows: dict[int, CurrentMemory]) -> list[Hit]:
    """With inactive memories asked for, a superseded memory never stands above the memory that
    (through its chain) replaced it when both answer: a superseded value has no current claims,
    so the newest-first order could not place it, and "Bob's manager is Carol" (superseded) came
    above "Bob now reports to Dan"."""
    head_of: dict[int, int] = {}
    for memory_id, row in rows.items():
        node, seen = row.superseded_by, {memory_id}
        while node is not None and node in rows and node not in seen:  # follow the chain through the hits
            head_of[memory_id] = node
            seen.add(node)
            node = rows[node].superseded_by
    return _leaders_first(hits, {m: {"leader_id": h} for m, h in head_of.items()}) if head_of else hits


def _slot_named_first(hits: list[Hit], query: str, slots: dict[int, list[str]]) -> list[Hit]:
    """Hits whose claim slot the query names gain :func:`ledger.slot_match.slot_scores`, then
    stand in score order (ties keep their order). ``slots``: the hits' claim keys (``slot_keys``)."""
    if len(hits) < 2 or not query.strip():
        return hits
    keys = {m: [(parts[1], parts[2]) for k in ks if len(parts := k.split("\x1f")) == 3] for m, ks in slots.items()}
    bonus = slot_scores(query, keys)
    if not bonus:
        return hits
    scored = [msgspec.structs.replace(h, score=h.score + bonus.get(h.memory_id, 0.0)) for h in hits]
    return sorted(scored, key=lambda h: -h.score)


def _newest_first(
    rows: dict[int, CurrentMemory],
    hits: list[Hit],
    standing: dict[int, dict[str, Any]],
    claim_slots: dict[int, list[str]],
    query: str = "",
) -> list[Hit]:
    """Hits on one fact outside a claim set in newest-first order, in their places
    (:func:`ledger.freshness.newest_first`); scores still fall down the list. A hit holding one
    of the query's identifiers whole keeps its place: the query named that value itself.
    ``claim_slots``: the hits' claim keys, read once for this and :func:`_slot_named_first`;
    ``rows``: the hits' memory rows, read once for this and the page."""
    if len(hits) < 2:
        return hits
    ids = [h.memory_id for h in hits]
    named = identifiers(query)
    fixed = set(standing) | {m for m, row in rows.items() if named and holds_any(row.content, named)}
    slots = {m: list(keys) for m, keys in claim_slots.items()}
    for memory_id, row in rows.items():
        if shape := template(row.content):
            slots.setdefault(memory_id, []).append(f"{row.workspace}\x1f{row.subject_norm}\x1f{shape}")
    times = {m: row.event_time for m, row in rows.items()}
    order = newest_first(ids, slots, times, fixed=fixed)
    if order == ids:
        return hits
    by_id = {h.memory_id: h for h in hits}
    return [msgspec.structs.replace(by_id[m], score=h.score) for m, h in zip(order, hits, strict=True)]


class Views:
    """``find`` and ``read`` over the storage seam."""

    def __init__(
        self,
        storage: Storage,
        workspaces: Workspaces,
        history: History,
        *,
        search: Search,
        standings: Standings,
        conversations: Any,  # server.app.conversations.Conversations (it imports this module)
    ) -> None:
        self.storage = storage
        self.workspaces = workspaces
        self.history = history
        self.search = search
        self.standings = standings
        self.conversations = conversations  # the working tier, and the uses that warm memories up

    @property
    def settings(self) -> Settings:
        """The storage's settings: the MCP server swaps them per call (the caller's identity)."""
        return self.storage.settings

    def find(
        self,
        query: str,
        *,
        limit: int,
        tags_filter: list[str] | tuple[str, ...],
        source_type: str | None,
        workspace: str | None,
        after_time: str | None,
        before_time: str | None,
        include_inactive: bool,
        as_of_event_time: str | None,
        as_of_recorded: str | int | None,
        cursor: str | None,
        session_id: str | None,
        session_only: bool,
        include_cold: bool,
    ) -> dict[str, Any]:
        """One page of ``find``; the defaults are the facade's (``LedgerApp.find``), declared once.
        The range's ends are compared as stored (canonical), whoever calls: "…00Z" sorts after
        "…00.000000Z", so an end given otherwise moved the range's edge."""
        after_time, before_time = clock.time_range(
            after_time, before_time, names=("after_time", "before_time"), half_open=True
        )
        request = {
            "query": query,
            **({"session_id": session_id, "session_only": session_only} if session_id else {}),
            **({"include_cold": include_cold} if include_cold else {}),
            "tags_filter": list(tags_filter),
            "source_type": source_type,
            "workspace": workspace,
            "after_time": after_time,
            "before_time": before_time,
            "include_inactive": include_inactive,
            "as_of_event_time": as_of_event_time,
            "as_of_recorded": as_of_recorded,
        }
        page = paging.decode("find", request, cursor)
        offset = paging.offset_of(page)
        if as_of_event_time is not None or as_of_recorded is not None:
            if session_only:  # it answered every conversation's memories, and no working note
                raise InvalidInput(
                    "session_only asks a conversation's working set, which has no past: ask without an as-of point",
                    field="session_only",
                )
            return self.history.find_as_of(
                query,
                limit=limit,
                tags_filter=tags_filter,
                source_type=source_type,
                workspace=workspace,
                after_time=after_time,
                before_time=before_time,
                include_inactive=include_inactive,
                as_of_event_time=as_of_event_time,
                as_of_recorded=as_of_recorded,
                offset=offset,
                bound=page.bound,
                request=request,
            )
        scope, boost = self.workspaces.find_scope(workspace)
        with self.storage.snapshot():
            # A first page needs no bound: its snapshot holds nothing newer. One is read only
            # for a next page's cursor, so later pages ignore what was written since.
            bound = page.bound
            filters = SearchFilters(
                statuses=STATUSES if include_inactive else ("active",),
                workspace=scope,
                source_type=source_type,
                tags_all=tuple(tags_filter),
                after_time=after_time,
                before_time=before_time,
                max_memory_id=bound,
                session=session_id if session_only else None,
                exclude_cold=not include_cold,
            )
            # The conversation's working set answers first: it is the freshest context; long-term
            # results follow it, and the pages go on through both.
            first = cursor is None
            working = self._working(query, session_id, scope)
            # Pages slice one order that does not move from page to page (:meth:`_order`); the
            # cursor carries the first page's size, which sizes every chunk of it.
            first_page = offset + limit + 1 if first else page.first or offset + 1  # paging's ``p``
            hits, rows, standing, member_of, fell_back = self._order(
                query,
                filters,
                boost,
                first_page,
                offset + limit,
                include_inactive=include_inactive,
                session_id=None if session_only else session_id,
                cold=include_cold,
                fell_back=page.cold,
            )
            # A page shows the first of that order it has not shown (the cursor's ``s``): a write
            # between pages moves the order, and a cut by position repeated and skipped memories.
            before = frozenset() if first else page.shown
            order: list[dict[str, Any] | Hit] = [*working, *hits]
            rest = order[offset:] if before is None else [x for x in order if _id_of(x) not in before]
            page_items, more = rest[:limit], len(rest) > limit
            shown_ids = None if before is None else before | {_id_of(x) for x in page_items}
            working = [x for x in page_items if isinstance(x, dict)]
            shown = [x for x in page_items if isinstance(x, Hit)]
            rows = {h.memory_id: rows[h.memory_id] for h in shown if h.memory_id in rows}
            if more and bound is None:
                bound = self.storage.store.last_position()
            threshold = self.settings.section_threshold
            near = {h.memory_id: h.section for h in shown}
            local = {
                i: (section, section_count(self.storage.conn, i))
                for i, row in rows.items()
                if (section := matching_section(self.storage.conn, row, query, threshold, near[i])) is not None
            }
        results = []
        for hit in shown:
            row = rows.get(hit.memory_id)
            if row is not None:
                view = memory_view(row, score=hit.score, conflict_ids=member_of.get(hit.memory_id, []))
                if hit.memory_id in local:
                    section, total = local[hit.memory_id]
                    view = with_section(view, section, query, total)
                if hit.memory_id in standing:
                    view["standing"] = standing[hit.memory_id]
                if session_id:
                    view["tier"] = "long"
                results.append(view)
        if first:  # a use: on a first page (a hot-only search found nothing cold to warm up)
            self.conversations.used([r["memory_id"] for r in results], maybe_cold=include_cold or fell_back)
        return {
            "ok": True,
            "results": working + results,
            "has_more": more,
            "next_cursor": paging.encode(
                "find", request, offset + len(page_items), bound, first_page, cold=fell_back, shown=shown_ids
            )
            if more
            else None,
        }

    def _order(
        self,
        query: str,
        filters: SearchFilters,
        boost: tuple[str, ...] | None,
        first_page: int,
        through: int,
        *,
        include_inactive: bool,
        session_id: str | None,
        cold: bool,
        fell_back: bool = False,
    ) -> tuple[list[Hit], dict[int, CurrentMemory], dict[int, dict[str, Any]], dict[int, list[int]], bool]:
        """``find``'s order, past position ``through`` (one more: whether a next page exists), with
        the rows, standings and sets of its hits, and whether the order fell back to the cold
        (``cold``: they are searched with the hot; ``fell_back``: the first page found nothing hot
        and answered from the cold, which later pages repeat).

        The order is built in chunks that never move. The first is the first page's window
        (``first_page`` hits and the look past it for a claim set's leader), ranked as the first
        page ranked it; each next chunk ranks a window twice as large and keeps, in that order,
        the hits no earlier chunk holds. Ranked per page over a window sized by the page, the
        moves that ranking makes (a claim set's leader up to its challenger, the newest statement
        of a slot first, a leader found only in the wider window) landed memories on pages
        already read: paging repeated some memories and skipped others (63 distinct of 80)."""
        order: list[Hit] = []
        rows: dict[int, CurrentMemory] = {}
        standing: dict[int, dict[str, Any]] = {}
        member_of: dict[int, list[int]] = {}
        window, fell = first_page, fell_back
        while True:
            asked = window + paging.STANDING_WINDOW
            hits = [] if fell else self.search(query, filters, asked, boost, window, first_page)[0]
            if not hits and not cold and (fell or not order):  # nothing hot answers: the cold may
                hits, _ = self.search(
                    query, msgspec.structs.replace(filters, exclude_cold=False), window, boost, window, window
                )
                fell, asked = True, window
            claim_slots = slot_keys(self.storage.conn, [h.memory_id for h in hits]) if len(hits) > 1 else {}
            hits = _slot_named_first(hits, query, claim_slots)
            chunk_standing, chunk_sets = self.standings([h.memory_id for h in hits])
            chunk_rows = mem.by_ids(self.storage.conn, [h.memory_id for h in hits])
            hits = _newest_first(chunk_rows, _leaders_first(hits, chunk_standing), chunk_standing, claim_slots, query)
            if session_id:  # the conversation's own first, yet a challenger never above its leader
                hits = _leaders_before_challengers(self._conversation_first(hits, session_id), chunk_standing)
            if include_inactive:
                hits = _current_before_superseded(hits, chunk_rows)
            held = {h.memory_id for h in order}
            order += [h for h in hits if h.memory_id not in held]
            rows.update(chunk_rows)
            standing.update(chunk_standing)
            member_of.update(chunk_sets)
            if len(order) > through or len(hits) < asked or window >= paging.MAX_OFFSET:
                return order, rows, standing, member_of, fell
            window *= 2

    def _working(self, query: str, session_id: str | None, scope: tuple[str, ...] | None) -> list[dict[str, Any]]:
        """The conversation's working notes that answer the query (they lead the first pages)."""
        if not session_id:
            return []
        return self.conversations.working_hits(query, session_id, scope)

    def _conversation_first(self, hits: list[Hit], session_id: str) -> list[Hit]:
        """The conversation's own long-term memories first, each group in its order."""
        sessions = self.conversations.sessions_of([h.memory_id for h in hits])
        mine = [h for h in hits if sessions.get(h.memory_id, ("",))[0] == session_id]
        return mine + [h for h in hits if sessions.get(h.memory_id, ("",))[0] != session_id]

    def read(
        self,
        memory_id: int,
        *,
        as_of_event_time: str | None = None,
        as_of_recorded: str | int | None = None,
        sections: SectionsRequest = None,
    ) -> dict[str, Any]:
        if as_of_event_time is not None or as_of_recorded is not None:
            return self.history.read_as_of(memory_id, as_of_event_time=as_of_event_time, as_of_recorded=as_of_recorded)
        with self.storage.snapshot():
            row = mem.by_id(self.storage.conn, memory_id)
            if row is None:
                raise NotFound(f"no memory {memory_id}", field="memory_id")
            self.workspaces.check_workspace(row.workspace)
            view = memory_view(row, conflict_ids=conflict_ids_of(self.storage.conn, memory_id), detail=True)
            view["supersedes"] = mem.supersedes(self.storage.conn, memory_id)
            # The other half of a retraction: who retired this memory, and what this one retracted.
            view["retired_by"] = row.retired_by
            view["retracts"] = mem.retracts(self.storage.conn, memory_id)
            view["status_reason"] = row.status_reason
            # Said again in other words (ledger.restatement) or word for word: the fact's support.
            view["support"], last_restated = mem.support(self.storage.conn, memory_id)
            view["last_stated"] = max(row.event_time, last_restated or "")
            view["sections"] = sections_view(self.storage.conn, memory_id, row.content, sections)
        return {"ok": True, "memory": view}
