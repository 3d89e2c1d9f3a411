"""Governance by the person at the keyboard: confirm, retire, supersede, resolve, judge, unlock.

Each action is two POSTs: the first (from a button on the Memory or Conflict page) renders a
confirmation page that says exactly what will be recorded; the second (``confirmed=yes``) calls
the facade with ``authorization="user_channel"``. The console's facade stamps client
``console`` on every event. Every POST must carry the run's CSRF token; a refusal writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from fact_ledger.ledger.errors import InvalidInput, LedgerError
from fact_ledger.ledger.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.console.web import error_page, ledger, render


@dataclass(frozen=True)
class Action:
    target: str  # "memory" or "conflict": which id the form names and where to go back
    fields: tuple[str, ...]  # form fields passed on (besides the target id)
    run: Callable[[LedgerApp, int, dict[str, Any]], dict[str, Any]]
    describe: str  # i18n key of the sentence on the confirmation page


def _pins(form: dict[str, Any]) -> dict[str, int] | None:
    """``pin_<memory_id>=<version>`` fields: the member versions the person was looking at."""
    pins = {k.removeprefix("pin_"): int(v) for k, v in form.items() if k.startswith("pin_") and str(v).isdigit()}
    return pins or None


ACTIONS: dict[str, Action] = {
    "confirm": Action("memory", (), lambda app, i, f: app.confirm(i, authorization=AUTH_USER), "action_confirm"),
    "unlock": Action("memory", (), lambda app, i, f: app.unlock(i, authorization=AUTH_USER), "action_unlock"),
    "retire": Action(
        "memory",
        ("reason",),
        lambda app, i, f: app.retire(i, reason=f.get("reason", ""), authorization=AUTH_USER),
        "action_retire",
    ),
    "supersede": Action(
        "memory",
        ("winner_id", "reason"),
        lambda app, i, f: app.supersede(i, f["winner_id"], reason=f.get("reason", ""), authorization=AUTH_USER),
        "action_supersede",
    ),
    "resolve": Action(
        "conflict",
        ("winner_id",),
        lambda app, i, f: app.resolve_conflict(i, winner_id=f["winner_id"], authorization=AUTH_USER),
        "action_resolve",
    ),
    "keep_both": Action(
        "conflict",
        (),
        lambda app, i, f: app.resolve_conflict(i, resolution="keep_both", authorization=AUTH_USER),
        "action_keep_both",
    ),
    "judge": Action(
        "conflict",
        ("winner_id", "rationale"),
        lambda app, i, f: app.judge(i, f["winner_id"], rationale=f.get("rationale", ""), pins=_pins(f)),
        "action_judge",
    ),
}


def _number(form: dict[str, Any], name: str) -> int:
    raw = str(form.get(name, "")).strip().lstrip("#")
    if not raw.isdigit() or int(raw) < 1:
        raise InvalidInput(f"{name} must be a positive number", field=name)
    return int(raw)


async def act(request: Request) -> Response:
    form = dict(await request.form())
    if not request.app.state.guard.csrf_ok(form.get("csrf")):
        return PlainTextResponse("missing or wrong CSRF token: nothing was recorded", status_code=403)
    name = request.path_params["action"]
    action = ACTIONS.get(name)
    if action is None:
        return error_page(request, InvalidInput(f"no action {name!r}", field="action"))
    try:
        target = _number(form, action.target + "_id")
        values: dict[str, Any] = {k: str(form.get(k, "")).strip() for k in action.fields}
        if "winner_id" in values:
            values["winner_id"] = _number(form, "winner_id")
        values.update({k: v for k, v in form.items() if k.startswith("pin_")})
        if form.get("confirmed") != "yes":
            hidden = {action.target + "_id": target, **values}
            return render(
                request,
                "confirm.html",
                action=name,
                describe=action.describe,
                target=target,
                values=values,
                hidden=hidden,
                back=f"/{action.target}/{target}",
            )
        action.run(ledger(request), target, values)
    except LedgerError as exc:
        return error_page(request, exc)
    return RedirectResponse(f"/{action.target}/{target}?done={name}", status_code=303)
