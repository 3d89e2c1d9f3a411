"""Governance by the person at the keyboard: confirm, retire, erase, supersede, resolve, judge, unlock.

Each action is two POSTs: the first (from a button on the Memory or Conflict page) renders a
confirmation page that says exactly what will be recorded, with the texts of the memories it
touches; the second (``confirmed=yes``) calls the facade with ``authorization="user_channel"``.
An action that would supersede a fact a person confirmed (locked or ``user_confirmed``) says so
and needs one more tick (``guarded_ok=yes``): without it nothing is recorded. The console's facade stamps client
``console`` on every event. Every POST must carry the run's CSRF token; a refusal writes nothing.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from fact_ledger.ledger.errors import InvalidInput, LedgerError, NotFound, VersionConflict
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.console.detail import conflict_with_members
from fact_ledger.server.console.web import done_redirect, error_page, ledger, parse_id, render
from fact_ledger.server.mcp.routes import TOOLS


@dataclass(frozen=True)
class Action:
    """A console action bound to the operation it runs (server/mcp/routes.py): the route's edge
    model validates the form as it validates an agent's call, and its facade method answers."""

    target: str  # "memory" or "conflict": which id the form names and where to go back
    fields: tuple[str, ...]  # form fields passed on (besides the target id)
    route: tuple[str, str]  # (tool, name) of the operation
    describe: str  # i18n key of the sentence on the confirmation page
    target_field: str = ""  # the operation's name for the target id (default: ``<target>_id``)
    fixed: tuple[tuple[str, Any], ...] = ()  # fields the action sets itself
    required: tuple[str, ...] = ()  # form fields a blank value of which is refused (a retirement's reason)

    def run(self, app: LedgerApp, target: int, values: dict[str, Any]) -> dict[str, Any]:
        """The operation with the person's values, as the user's own act (``user_channel``)."""
        route = TOOLS[self.route[0]].routes[self.route[1]]
        governed = "authorized" in route.model.model_fields
        pins = _pins(values)
        data = {
            self.target_field or self.target + "_id": target,
            **{k: v for k, v in values.items() if not k.startswith("pin_")},
            **dict(self.fixed),
            **({"pins": pins} if pins else {}),
            **({"authorized": True} if governed else {}),
        }
        kwargs = route.model.parse(data).to_kwargs()
        answer: dict[str, Any] = getattr(app, route.method or "")(
            **kwargs, **({"authorization": AUTH_USER} if governed else {})
        )
        return answer


def _pins(form: dict[str, Any]) -> dict[str, int] | None:
    """``pin_<memory_id>=<version>`` fields: the member versions the person was looking at
    (each id and version read as every console number is, :func:`parse_id`)."""
    pins = {
        str(parse_id(k.removeprefix("pin_"), "pins")): parse_id(v, "pins")
        for k, v in form.items()
        if k.startswith("pin_")
    }
    return pins or None


ACTIONS: dict[str, Action] = {
    "confirm": Action("memory", (), ("memory_govern", "confirm"), "action_confirm"),
    "unlock": Action("memory", (), ("memory_govern", "unlock"), "action_unlock"),
    "promote": Action("memory", (), ("memory_govern", "promote"), "action_promote"),
    # docs/console.md: "retire (with a reason)", "erase for good (with a reason ...)": the record
    # of why stays when the memory (or, erased, its text) is gone.
    "retire": Action("memory", ("reason",), ("memory_govern", "retire"), "action_retire", required=("reason",)),
    "erase": Action("memory", ("reason",), ("memory_govern", "erase"), "action_erase", required=("reason",)),
    "supersede": Action(
        "memory", ("winner_id", "reason"), ("memory_govern", "supersede"), "action_supersede", target_field="loser_id"
    ),
    "resolve": Action("conflict", ("winner_id",), ("memory_govern", "resolve_conflict"), "action_resolve"),
    "keep_both": Action(
        "conflict", (), ("memory_govern", "resolve_conflict"), "action_keep_both", fixed=(("resolution", "keep_all"),)
    ),
    "judge": Action("conflict", ("winner_id", "rationale"), ("memory", "judge"), "action_judge"),
}


Preview = dict[str, Any]  # ``items``: (role, memory) pairs the page shows; ``guarded``: ids a person confirmed


def person_confirmed(memory: dict[str, Any]) -> bool:
    return memory.get("protection") == "locked" or memory.get("source_type") == "user_confirmed"


def preview(app: LedgerApp, name: str, target: int, values: dict[str, Any]) -> Preview:
    """What the action touches, as texts (never bare ids), and which of the memories it would
    supersede are facts a person confirmed: those need the person's explicit intent."""
    if name in ("resolve", "keep_both", "judge"):
        detail = conflict_with_members(app, target)
        if detail["state"] == "resolved":  # settled since the page was shown: "Yes" would be refused
            raise InvalidInput(f"conflict {target} is already resolved", field="conflict_id")
        members = [m for m in detail["memories"] if m["in_set"]]
        if name == "keep_both":
            return {"items": [("the_memory", m) for m in members], "guarded": [], "count": len(members)}
        winner = next((m for m in members if m["memory_id"] == values["winner_id"]), None)
        if winner is None:
            raise InvalidInput(f"memory {values['winner_id']} is not a member of conflict {target}", field="winner_id")
        if name == "judge":
            _check_pins(values, members, target)
            return {"items": [("judged_winner", winner)], "guarded": []}
        losers = [m for m in members if m is not winner and m["status"] == "active" and m["value"] != winner["value"]]
        return {
            "items": [("will_win", winner)] + [("will_be_superseded", m) for m in losers],
            "guarded": [m["memory_id"] for m in losers if person_confirmed(m)],
        }
    memory = app.read(target)["memory"]
    _check_tier(name, memory, "memory_id")
    # refused here, before a confirmation page that would offer what "Yes" then refuses
    status = memory.get("status")
    if status == "erased":
        raise InvalidInput(f"memory {target} is erased: nothing of it is left to {name}", field="memory_id")
    if name == "promote" and status == "promoted":
        raise InvalidInput(
            f"#{target} was already promoted: it is long-term memory #{memory.get('promoted_to')}", field="memory_id"
        )
    if name == "supersede":
        if values["winner_id"] == target:
            raise InvalidInput("a memory cannot supersede itself: name another memory as the winner", field="winner_id")
        try:
            winner = app.read(values["winner_id"])["memory"]
        except NotFound as exc:  # the form's field is the winner's, not "Memory id"
            raise NotFound(exc.message, field="winner_id") from None
        _check_tier(name, winner, "winner_id")
        if winner.get("status") != "active":
            raise InvalidInput(
                f"memory {values['winner_id']} is {winner.get('status')}, no longer current", field="winner_id"
            )
        _check_current(name, memory)
        return {
            "items": [("will_win", winner), ("will_be_superseded", memory)],
            "guarded": [target] if person_confirmed(memory) else [],
        }
    _check_current(name, memory)
    return {"items": [("the_memory", memory)], "guarded": []}


def _check_current(name: str, memory: dict[str, Any]) -> None:
    """A memory no longer current (retired, superseded since the page was shown) is refused
    before the confirmation page, as the facade refuses it after "Yes"; erase and promote take
    their own (an erased or promoted one is refused above)."""
    status = memory.get("status")
    if name not in ("promote", "erase") and status != "active":
        raise InvalidInput(f"memory {memory['memory_id']} is {status}, no longer current", field="memory_id")


def shown_token(shown: Preview) -> str:
    """What a confirmation page listed, as its form carries it back: each memory's role, id and
    version ("will_be_superseded:18:1,…"). "Yes" on a page whose list no longer holds (a member
    joined the set, a winner was updated) records nothing and shows the page again."""
    return ",".join(f"{role}:{m['memory_id']}:{m.get('version', '')}" for role, m in shown["items"])


def _check_pins(values: dict[str, Any], members: list[dict[str, Any]], conflict_id: int) -> None:
    """A judgment's pins name members at the versions they are at, refused before the
    confirmation page as "Yes" would refuse them after it."""
    versions = {m["memory_id"]: m.get("version") for m in members}
    for key, version in (_pins(values) or {}).items():
        memory_id = int(key)
        if memory_id not in versions:
            raise InvalidInput(f"pins name memory {memory_id}, not a member of conflict {conflict_id}", field="pins")
        if versions[memory_id] != version:
            raise VersionConflict(
                f"memory {memory_id} is at version {versions[memory_id]}, the judgment pinned {version}",
                field="pins",
                memory_id=memory_id,
                current_version=versions[memory_id],
            )


def _check_tier(name: str, memory: dict[str, Any], field: str) -> None:
    """Refuse before the confirmation page what the facade would refuse after it: a working note
    (one conversation's provisional note) is only promoted or erased — the rest of the governance
    of long-term memory answers ``not_found`` for it — and only a working note is promoted."""
    working = memory.get("tier") == "working"
    if name == "promote" and not working:
        raise InvalidInput(f"memory {memory['memory_id']} is not a working note: it is long-term already", field=field)
    if name not in ("promote", "erase") and working:
        raise InvalidInput(
            f"memory {memory['memory_id']} is a working note, not long-term memory: promote it first", field=field
        )


def _number(form: dict[str, Any], name: str) -> int:
    """A form's id (``#12`` as typed from a page is ``12``), read by :func:`parse_id`."""
    return parse_id(str(form.get(name, "")).strip().removeprefix("#"), name)


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
        for field in action.required:
            if not values[field]:
                raise InvalidInput(f"{field} is required to {name} a memory: say why", field=field)
        values.update({k: v for k, v in form.items() if k.startswith("pin_")})
        _pins(values)  # refused before the confirmation page, not after the person said yes
        shown = preview(ledger(request), name, target, values)
        unintended = bool(shown["guarded"]) and form.get("guarded_ok") != "yes"
        # the page said what "Yes" would do; a set that changed since (a member joined) asks again
        changed = form.get("confirmed") == "yes" and "shown" in form and form["shown"] != shown_token(shown)
        if form.get("confirmed") != "yes" or unintended or changed:
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
                hidden={action.target + "_id": target, **values, "shown": shown_token(shown)},
                back=f"/{action.target}/{target}",
                shown=shown,
                refused=unintended and form.get("confirmed") == "yes",
                changed=changed,
            )
        answer = action.run(ledger(request), target, values)
    except LedgerError as exc:
        return error_page(request, exc)
    if name == "erase":  # the receipt: the CLI prints it and writes it to a file; here it is shown and downloadable
        return erased_page(request, target, answer)
    # An act that found the memory already so (unlocking what is not locked) writes nothing: the
    # page says so rather than "Recorded.".
    unchanged = answer.get("changed") is False or answer.get("unchanged") is True
    return done_redirect(f"/{action.target}/{target}?done={name}" + ("&unchanged=1" if unchanged else ""))


def erased_page(request: Request, memory_id: int, answer: dict[str, Any]) -> Response:
    """The erasure's receipt (governance, "The receipt"): what ``ledger verify --receipt FILE``
    checks against the log on any machine of the team. A person who erases in the console keeps
    it as the one who erases at the CLI does: shown, and offered as a file."""
    receipt = answer["receipt"]
    text = json.dumps(receipt, indent=2, ensure_ascii=False)
    return render(
        request,
        "erased.html",
        memory_id=memory_id,
        rows=answer.get("rows", 0),
        receipt=receipt,
        receipt_text=text,
        receipt_href="data:application/json;base64," + base64.b64encode(text.encode()).decode("ascii"),
        notices=answer.get("notices", []),
    )
