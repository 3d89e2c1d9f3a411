"""Governance by the person at the keyboard: confirm, retire, erase, supersede, resolve, judge, unlock.

Each action is two POSTs: the first (from a button on the Memory or Conflict page) renders a
confirmation page that says exactly what will be recorded, with the texts of the memories it
touches; the second (``confirmed=yes``) calls the facade with ``authorization="user_channel"``.
An action that would supersede a fact a person confirmed (locked or ``user_confirmed``) says so
and needs one more tick (``guarded_ok=yes``): without it nothing is recorded. The console's facade stamps client
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
    "erase": Action(
        "memory",
        ("reason",),
        lambda app, i, f: app.erase(i, reason=f.get("reason", ""), authorization=AUTH_USER),
        "action_erase",
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


Preview = dict[str, Any]  # ``items``: (role, memory) pairs the page shows; ``guarded``: ids a person confirmed


def _person_confirmed(memory: dict[str, Any]) -> bool:
    return memory.get("protection") == "locked" or memory.get("source_type") == "user_confirmed"


def preview(app: LedgerApp, name: str, target: int, values: dict[str, Any]) -> Preview:
    """What the action touches, as texts (never bare ids), and which of the memories it would
    supersede are facts a person confirmed: those need the person's explicit intent."""
    if name in ("resolve", "keep_both", "judge"):
        members = [m for m in app.conflict_detail(target, limit=200)["conflict"]["memories"] if m["in_set"]]
        if name == "keep_both":
            return {"items": [("the_memory", m) for m in members], "guarded": [], "count": len(members)}
        winner = next((m for m in members if m["memory_id"] == values["winner_id"]), None)
        if winner is None:
            raise InvalidInput(f"memory {values['winner_id']} is not a member of conflict {target}", field="winner_id")
        if name == "judge":
            return {"items": [("judged_winner", winner)], "guarded": []}
        losers = [m for m in members if m is not winner and m["status"] == "active" and m["value"] != winner["value"]]
        return {
            "items": [("will_win", winner)] + [("will_be_superseded", m) for m in losers],
            "guarded": [m["memory_id"] for m in losers if _person_confirmed(m)],
        }
    memory = app.read(target)["memory"]
    if name == "supersede":
        winner = app.read(values["winner_id"])["memory"]
        return {
            "items": [("will_win", winner), ("will_be_superseded", memory)],
            "guarded": [target] if _person_confirmed(memory) else [],
        }
    return {"items": [("the_memory", memory)], "guarded": []}


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
        shown = preview(ledger(request), name, target, values)
        unintended = bool(shown["guarded"]) and form.get("guarded_ok") != "yes"
        if form.get("confirmed") != "yes" or unintended:
            describe = action.describe
            if name == "keep_both" and shown.get("count", 0) > 2:
                describe = "action_keep_all"
            return render(
                request,
                "confirm.html",
                code=409 if form.get("confirmed") == "yes" else 200,  # asked again: nothing was recorded
                action=name,
                describe=describe,
                target=target,
                values=values,
                hidden={action.target + "_id": target, **values},
                back=f"/{action.target}/{target}",
                shown=shown,
                refused=form.get("confirmed") == "yes",
            )
        action.run(ledger(request), target, values)
    except LedgerError as exc:
        return error_page(request, exc)
    return RedirectResponse(f"/{action.target}/{target}?done={name}", status_code=303)
