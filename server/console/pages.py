"""List and health pages: Overview, Memories, Conflicts, Doctor, Settings.

Every number and row comes from the facade (the same calls the MCP tools make). Lists are
paged: a page asks the facade for at most ``page × PAGE_SIZE`` rows and shows the last
``PAGE_SIZE`` (the facade ranks, so a page is a window on one ranking), up to ``MAX_PAGES``.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from fact_ledger.ledger import clock
from fact_ledger.ledger.errors import InvalidInput, LedgerError
from fact_ledger.ledger.trust import SOURCE_TYPES
from fact_ledger.server.console.web import error_page, ledger, parse_id, render, time_point

PAGE_SIZE = 20
MAX_PAGES = 25


def page_number(request: Request) -> int:
    """The ``page`` parameter: 1 to ``MAX_PAGES`` (a deeper page would ask the facade for too much)."""
    page = parse_id(request.query_params.get("page", "1"), "page")
    if page > MAX_PAGES:
        raise InvalidInput(
            f"page must be a number from 1 to {MAX_PAGES}; narrow the filters to go further", field="page"
        )
    return page


def window(rows: list[Any], page: int, more: bool) -> tuple[list[Any], bool]:
    """The rows of ``page`` out of the first ``page × PAGE_SIZE``, and whether a next page exists."""
    start = (page - 1) * PAGE_SIZE
    return rows[start : start + PAGE_SIZE], (more or len(rows) > start + PAGE_SIZE) and page < MAX_PAGES


async def overview(request: Request) -> Response:
    app = ledger(request)
    try:
        time_point(request)  # a point this page does not show is still checked: a bad one is refused, as elsewhere
        view = app.overview()
        status = app.status()
        head = app.audit(limit=1)["events"]  # the newest event carries the chain's head hash
    except LedgerError as exc:
        return error_page(request, exc)
    last = request.app.state.last_doctor
    checked = next((c for c in last["report"]["checks"] if c["name"] == "hash_chain"), None) if last else None
    return render(
        request,
        "overview.html",
        view=view,
        status=status,
        chain=head[0] if head else None,
        checked=checked,
        checked_at=last["at"] if last else None,
    )


async def memories(request: Request) -> Response:
    q = request.query_params
    query = q.get("q", "")
    filters = {
        "tags_filter": [t.strip() for t in q.get("tags", "").split(",") if t.strip()],
        "source_type": q.get("source_type") or None,
        "workspace": q.get("workspace", "").strip() or None,  # a stray space in the box is no filter
        "include_inactive": q.get("status") == "all",
        # one conversation: its working set and its long-term memories, nothing else
        "session_id": q.get("session", "").strip() or None,
        "session_only": bool(q.get("session", "").strip()),
    }
    try:
        # a value the form never offers is refused, as an agent's would be ("bogus" read as "nothing found")
        if filters["source_type"] not in (None, *SOURCE_TYPES):
            raise InvalidInput(f"source_type must be one of {', '.join(SOURCE_TYPES)}", field="source_type")
        if q.get("status", "") not in ("", "all"):
            raise InvalidInput("status is empty (current memories) or all", field="status")
        tt = time_point(request)
        if filters["session_only"] and tt:
            # the header's time travel keeps the filters: say it in the form's words, not the
            # facade's (``session_only``, a field the person never saw)
            raise InvalidInput(
                f"conversation {filters['session_id']!r} has no past: its working notes are not kept as of a "
                "point. Clear the conversation to search the past, or clear the time-travel point to see it now",
                field="session",
            )
        page = page_number(request)
        found = ledger(request).find(
            query, limit=page * PAGE_SIZE, as_of_recorded=tt.get("as_of"), as_of_event_time=tt.get("at"), **filters
        )
    except LedgerError as exc:
        return error_page(request, exc)
    # This machine's backed-up writes the log does not hold yet answer first, as they do an agent's
    # find; they have no id to link to yet, so they are listed apart (page one)
    listed = [r for r in found["results"] if not r.get("pending")]
    rows, more = window(listed, page, found["has_more"])
    return render(
        request,
        "memories.html",
        pending=[r for r in found["results"] if r.get("pending")] if page == 1 else [],
        rows=rows,
        page=page,
        more=more,
        query=query,
        params={k: q.get(k, "") for k in ("q", "tags", "source_type", "workspace", "status", "session")},
        source_types=SOURCE_TYPES,
        as_of=found.get("as_of"),
        workspace_empty=found.get("workspace_empty"),  # a mistyped workspace is not "no match"
    )


async def conflicts(request: Request) -> Response:
    state = request.query_params.get("state", "open")
    try:
        time_point(request)
        page = page_number(request)
        found = ledger(request).conflicts(state=state, limit=min(page * PAGE_SIZE, 200))
    except LedgerError as exc:
        return error_page(request, exc)
    rows, more = window(found["conflicts"], page, found["has_more"])
    return render(
        request,
        "conflicts.html",
        rows=rows,
        page=page,
        more=more and page * PAGE_SIZE < 200,
        state=state,
        total=found.get("total"),
    )


async def doctor(request: Request) -> Response:
    """The checks run when asked (``?run=1``): recomputing the hash chain reads the whole log, a
    job rather than a page. The last report of this run is kept for the page and the Overview."""
    if request.query_params.get("run"):
        try:
            report = ledger(request).doctor()
        except LedgerError as exc:  # the database cannot be used: the refusal is the answer
            return error_page(request, exc)
        request.app.state.last_doctor = {"report": report, "at": clock.now()}
    return render(request, "doctor.html", last=request.app.state.last_doctor)


async def settings(request: Request) -> Response:
    app = ledger(request)
    values = _flat(asdict(app.settings))  # policy.auto_settle, embedding.enabled, ...: one row each
    values["backup"] = app.settings.backup_path
    sources = request.app.state.sources
    rows = [(key, value, sources.get(key, "default")) for key, value in values.items()]
    return render(request, "settings.html", rows=rows)


def _flat(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings as dotted keys, so that no row shows a whole structure."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
