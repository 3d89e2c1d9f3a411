"""The Memory and Conflict pages: one thing in full, with its history and the governance forms."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from fact_ledger.ledger.errors import LedgerError
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.console.views import known_then, verdict_rows, version_changes
from fact_ledger.server.console.web import error_page, ledger, parse_id, render, time_point

HISTORY_EVENTS = 50
MEMBER_PAGE = 200  # the most members ``conflict_detail`` answers at once


def conflict_with_members(app: LedgerApp, conflict_id: int) -> dict[str, Any]:
    """A claim set's detail with every member, in the order they joined.

    ``conflict_detail`` answers one page of members (``has_more``/``next_offset``); a person who
    chooses a winner or keeps all must see every member, the leader included, so the pages are
    followed to the end (the member versions a judgment pins too)."""
    detail: dict[str, Any] = app.conflict_detail(conflict_id, limit=MEMBER_PAGE)["conflict"]
    while detail.get("has_more"):
        page = app.conflict_detail(conflict_id, limit=MEMBER_PAGE, offset=detail["next_offset"])["conflict"]
        detail["memories"] += page["memories"]
        detail["member_versions"] = {**detail.get("member_versions", {}), **page.get("member_versions", {})}
        detail["has_more"], detail["next_offset"] = page.get("has_more"), page.get("next_offset")
    return detail


async def memory(request: Request) -> Response:
    """All fields (as of the URL's point), every version side by side, links, near-duplicates."""
    app = ledger(request)
    try:
        memory_id = parse_id(request.path_params["memory_id"], "memory_id")
        tt = time_point(request)
        read = app.read(memory_id, as_of_event_time=tt.get("at"), as_of_recorded=tt.get("as_of"))
        history = app.history(memory_id)
        working = read["memory"].get("tier") == "working"  # no near-duplicate probe: not long-term
        near = [] if tt or working else app.near_duplicates_of(memory_id)["near_duplicates"]
    except LedgerError as exc:
        return error_page(request, exc)
    versions = known_then(history["versions"], (read.get("as_of") or {}).get("recorded_position"))
    return render(
        request,
        "memory.html",
        m=read["memory"],
        pending=read.get("pending_changes", []),  # this machine's backed-up changes the log does not hold yet
        versions=version_changes(versions),
        near=near,
        as_of=read.get("as_of"),
        live=not tt,
    )


async def conflict(request: Request) -> Response:
    """Members (a list: a claim set may have many), the verdict rule by rule, judgments, history."""
    app = ledger(request)
    try:
        conflict_id = parse_id(request.path_params["conflict_id"], "conflict_id")
        point = time_point(request)  # the page shows the present, but a bad point is refused as on every page
        detail = conflict_with_members(app, conflict_id)
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
        live=not point,
    )
