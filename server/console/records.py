"""Timeline and Audit pages, and the audit export download."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import IO, Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from fact_ledger.ledger import clock
from fact_ledger.ledger.errors import InvalidInput, LedgerError
from fact_ledger.ledger.ids import ascii_digits
from fact_ledger.ledger.log.events import EVENT_TYPES, RENAMED, current_type
from fact_ledger.server.console.views import as_true_at, timeline_strip
from fact_ledger.server.console.web import error_page, ledger, parse_id, render, time_point

AUDIT_PAGE = 50
AUDIT_FILTERS = ("type", "actor", "client", "workspace", "since", "until", "memory_id")


async def timeline(request: Request) -> Response:
    """Values over event time for a subject (or a memory's supersession chain) as an SVG strip.

    The facade's timeline answers what the log knew (``as_of``) over all of event time; "as true
    at" (``at``) is applied here, as the facade's as-of reads apply it (:func:`as_true_at`)."""
    target = request.query_params.get("subject", "").strip()
    result: dict[str, Any] = {"intervals": [], "as_of": None}
    try:
        tt = time_point(request)
        at = clock.parse_time(tt["at"], field="as_of_event_time") if tt.get("at") else None
        if target:
            # the digits 0-9 name a memory; anything else is a subject (``٣`` too: never read as 3)
            key = {"memory_id": parse_id(target, "memory_id")} if ascii_digits(target) else {"subject": target}
            result = ledger(request).timeline(**key, as_of_recorded=tt.get("as_of"))
    except LedgerError as exc:
        return error_page(request, exc)
    intervals = result["intervals"]
    if at is not None:
        intervals = as_true_at(intervals, at)
    strip = timeline_strip(intervals, at or clock.now())
    return render(request, "timeline.html", target=target, strip=strip, intervals=intervals, as_of=result["as_of"])


def _audit_filters(request: Request) -> dict[str, Any]:
    q = request.query_params
    filters: dict[str, Any] = {k: v.strip() for k in AUDIT_FILTERS if (v := q.get(k, "")).strip()}
    if "memory_id" in filters:
        filters["memory_id"] = parse_id(filters["memory_id"], "memory_id")
    # a type the form never offers is refused, as an agent's is: "Nothing found." for a typo
    # ("memoryrecorded") read as if the log held no such event
    if "type" in filters and filters["type"] not in EVENT_TYPES and filters["type"] not in RENAMED:
        raise InvalidInput(
            f"type {filters['type']!r} is no event type; choose one from the list (e.g. MemoryRecorded)", field="type"
        )
    return filters


async def audit(request: Request) -> Response:
    """The log newest first, filtered, paged by the facade's cursor. As of a recorded position,
    the log ends there."""
    try:
        tt = time_point(request)
        filters = _audit_filters(request)
        cut = None
        if tt.get("as_of"):
            cut = ledger(request).as_of(as_of_recorded=tt["as_of"])["as_of"]["recorded_position"] + 1
        found = ledger(request).audit(
            **filters, before_position=cut, limit=AUDIT_PAGE, cursor=request.query_params.get("cursor") or None
        )
    except LedgerError as exc:
        return error_page(request, exc)
    span = {k: filters[k] for k in ("since", "until") if k in filters}
    return render(
        request,
        "audit.html",
        events=found["events"],
        filters=filters,
        next_cursor=found.get("next_cursor"),
        fields=AUDIT_FILTERS,
        event_types=sorted(EVENT_TYPES),
        current_type=current_type,
        export_query="?" + urlencode(span) if span else "",
    )


async def export(request: Request) -> Response:
    """The log recorded within [since, until] as JSONL envelopes or CSV (``server.app.transfer``).

    Written to an unnamed temporary file on the event-loop thread (the facade's connection stays
    on one thread), then streamed from it: the file has no name to leave behind, whether the
    export fails half-way or the browser goes away during the download."""
    from fact_ledger.server.app.transfer import export_csv, export_jsonl

    fmt = request.path_params["fmt"]
    if fmt not in ("jsonl", "csv"):
        return error_page(request, InvalidInput("export format is jsonl or csv", field="format"))
    q = request.query_params
    out = tempfile.TemporaryFile()  # noqa: SIM115  # closed by the stream below, or on a refusal
    try:
        since = clock.parse_time(q["since"], field="since") if q.get("since") else None
        until = clock.parse_time(q["until"], field="until") if q.get("until") else None
        (export_jsonl if fmt == "jsonl" else export_csv)(ledger(request), out, since=since, until=until)
    except LedgerError as exc:
        out.close()
        return error_page(request, exc)
    except BaseException:
        out.close()
        raise
    size = out.tell()
    out.seek(0)
    return StreamingResponse(
        _chunks(out),
        media_type="application/x-ndjson" if fmt == "jsonl" else "text/csv",
        headers={
            "Content-Disposition": f'attachment; filename="ledger-audit.{fmt}"',
            "Content-Length": str(size),
        },
    )


def _chunks(out: IO[bytes], size: int = 1 << 16) -> Iterator[bytes]:
    with out:
        while chunk := out.read(size):
            yield chunk
