"""The Health page: the memory health report, its suggestions applied and changes undone.

Applying and undoing follow the console's governance pattern (:mod:`server.console.actions`):
the first POST renders a confirmation page that says what will be recorded, with the texts of
the memories it touches; the second (``confirmed=yes``) calls the facade as the user channel.
Every POST carries the run's CSRF token; a refusal writes nothing.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from fact_ledger.ledger.errors import InvalidInput, LedgerError, NotFound
from fact_ledger.ledger.ids import typed_key
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.console.actions import person_confirmed
from fact_ledger.server.console.web import done_redirect, error_page, ledger, render


async def health(request: Request) -> Response:
    try:
        report = ledger(request).health(limit=10)
    except LedgerError as exc:
        return error_page(request, exc)
    return render(request, "health.html", report=report, chart=trend_chart(report.get("trend", [])))


def trend_chart(points: list[dict[str, Any]], width: int = 640, height: int = 160) -> dict[str, Any] | None:
    """The trend as an SVG line chart: contradiction clusters (left axis) and the superseded
    share in percent (right axis) per recorded pass, oldest left. None under two points."""
    if len(points) < 2:
        return None
    pad = 28
    step = (width - 2 * pad) / (len(points) - 1)

    def line(values: list[float]) -> str:
        top = max(values) or 1.0
        return " ".join(
            f"{pad + i * step:.1f},{height - pad - (v / top) * (height - 2 * pad):.1f}" for i, v in enumerate(values)
        )

    clusters = [float(p.get("cluster_count", 0)) for p in points]
    superseded = [100 * float(p.get("superseded_ratio", 0.0)) for p in points]
    return {
        "width": width,
        "height": height,
        "clusters": line(clusters),
        "superseded": line(superseded),
        "max_clusters": int(max(clusters)),
        "max_superseded": round(max(superseded), 1),
        "first": points[0]["recorded_at"][:10],
        "last": points[-1]["recorded_at"][:10],
        "count": len(points),
    }


def _texts(request: Request, ids: list[int]) -> list[dict[str, Any]]:
    app = ledger(request)
    return [app.read(i)["memory"] for i in ids]


async def apply(request: Request) -> Response:
    """Apply a suggestion of the health report: a confirmation page says who wins and which
    texts are superseded; a fact a person confirmed among them needs one more tick, as a
    resolve on the conflict page does (``server.console.actions``)."""
    form = dict(await request.form())
    if not request.app.state.guard.csrf_ok(form.get("csrf")):
        return PlainTextResponse("missing or wrong CSRF token: nothing was recorded", status_code=403)
    suggestion_id = typed_key(str(form.get("suggestion_id", "")))  # as the facade reads it: capitals too
    app = ledger(request)
    try:
        cluster = next(
            (c for c in app.health(limit=200)["clusters"] if c["suggestion"]["suggestion_id"] == suggestion_id),
            None,
        )
        if cluster is None:
            # why, as the facade would refuse it: settled already (a second "Yes", the back button,
            # another hand), changed since the report (a member joined, left, was confirmed)
            app.check_suggestion(suggestion_id)
            raise InvalidInput(  # a set past the report's first 200: applied from its own page
                "the suggestion is not among the report's clusters; look at the report again", field="suggestion_id"
            )
        s = cluster["suggestion"]
        if s["kind"] != "settle":
            raise InvalidInput("no rule decides this set: a person chooses on its conflict page", field="suggestion_id")
        losers = _texts(request, s["supersedes"])
        guarded = [m["memory_id"] for m in losers if person_confirmed(m)]
        unintended = bool(guarded) and form.get("guarded_ok") != "yes"
        if form.get("confirmed") != "yes" or unintended:
            items = [("will_win", m) for m in _texts(request, [s["winner_id"]])]
            items += [("will_be_superseded", m) for m in losers]
            return render(
                request,
                "health_confirm.html",
                code=409 if form.get("confirmed") == "yes" else 200,  # asked again: nothing was recorded
                action="apply",
                describe="apply_describe",
                fields={"conflict": cluster["conflict_id"], "winner": s["winner_id"], "n": len(s["supersedes"])},
                hidden={"suggestion_id": suggestion_id},
                items=items,
                guarded=guarded,
                refused=form.get("confirmed") == "yes",
            )
        result = app.apply_suggestion(suggestion_id, authorization=AUTH_USER)
    except LedgerError as exc:
        return error_page(request, exc)
    return done_redirect(f"/health?done=apply&change={result['change']['position']}")


async def undo(request: Request) -> Response:
    form = dict(await request.form())
    if not request.app.state.guard.csrf_ok(form.get("csrf")):
        return PlainTextResponse("missing or wrong CSRF token: nothing was recorded", status_code=403)
    change_id = typed_key(str(form.get("change_id", "")))  # as the facade reads it: capitals too
    app = ledger(request)
    try:
        if form.get("confirmed") != "yes":
            change = next((c for c in app.health(limit=1)["changes"] if c["change_id"] == change_id), None)
            if change is None:
                raise NotFound("no such change among the latest ones", field="change_id")
            app.check_undo(change_id)  # refused as the undo would be: never "will be reinstated" for what cannot be
            memories = _texts(request, [i for i in change["superseded"] if i is not None])
            items = [("will_be_reinstated", m) for m in memories]
            return render(
                request,
                "health_confirm.html",
                action="undo",
                describe="undo_describe",
                fields={"conflict": change["conflict_id"], "position": change["position"], "n": len(items)},
                hidden={"change_id": change_id},
                items=items,
            )
        result = app.undo(change_id, authorization=AUTH_USER)
    except LedgerError as exc:
        return error_page(request, exc)
    return done_redirect(f"/health?done=undo&change={result['change']['position']}")


async def alias(request: Request) -> Response:
    """Accept or reject a proposed entity alias (``decision`` = accept | reject), after a
    confirmation page that says what it changes."""
    form = dict(await request.form())
    if not request.app.state.guard.csrf_ok(form.get("csrf")):
        return PlainTextResponse("missing or wrong CSRF token: nothing was recorded", status_code=403)
    name, canonical = str(form.get("alias", "")).strip(), str(form.get("canonical", "")).strip()
    decision = str(form.get("decision", ""))
    app = ledger(request)
    try:
        if decision not in ("accept", "reject"):
            raise InvalidInput("decision must be accept or reject", field="decision")
        if form.get("confirmed") != "yes":
            return render(
                request,
                "health_confirm.html",
                action="alias",
                describe=f"alias_{decision}_describe",
                fields={"alias": name, "canonical": canonical},
                hidden={"alias": name, "canonical": canonical, "decision": decision},
                items=[],
            )
        call = app.accept_entity_alias if decision == "accept" else app.reject_entity_alias
        call(name, canonical, authorization=AUTH_USER)
    except LedgerError as exc:
        return error_page(request, exc)
    return done_redirect(f"/health?done=alias_{decision}")
