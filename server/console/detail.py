"""The Memory and Conflict pages: one thing in full, with its history and the governance forms."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from fact_ledger.ledger.errors import LedgerError
from fact_ledger.server.console.views import verdict_rows, version_changes
from fact_ledger.server.console.web import error_page, ledger, render, time_params

HISTORY_EVENTS = 50


async def memory(request: Request) -> Response:
    """All fields (as of the URL's point), every version side by side, links, near-duplicates."""
    memory_id = request.path_params["memory_id"]
    app = ledger(request)
    tt = time_params(request)
    try:
        read = app.read(memory_id, as_of_event_time=tt.get("at"), as_of_recorded=tt.get("as_of"))
        history = app.history(memory_id)
        working = read["memory"].get("tier") == "working"  # no near-duplicate probe: not long-term
        near = [] if tt or working else app.near_duplicates_of(memory_id)["near_duplicates"]
    except LedgerError as exc:
        return error_page(request, exc)
    versions = history["versions"]
    point = (read.get("as_of") or {}).get("recorded_position")
    if point is not None:  # the ledger did not know the later versions yet
        versions = [v for v in versions if v["position"] <= point]
    return render(
        request,
        "memory.html",
        m=read["memory"],
        versions=version_changes(versions),
        near=near,
        as_of=read.get("as_of"),
        live=not tt,
    )


async def conflict(request: Request) -> Response:
    """Members (a list: a claim set may have many), the verdict rule by rule, judgments, history."""
    conflict_id = request.path_params["conflict_id"]
    app = ledger(request)
    try:
        detail = app.conflict_detail(conflict_id)["conflict"]
        events = app.audit(conflict_id=conflict_id, limit=HISTORY_EVENTS)["events"]
    except LedgerError as exc:
        return error_page(request, exc)
    verdict = detail.get("current_verdict") or detail.get("verdict")
    return render(
        request,
        "conflict.html",
        c=detail,
        rules=verdict_rows(verdict),
        verdict=verdict,
        events=list(reversed(events)),
        live=not time_params(request),
    )
