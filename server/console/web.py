"""The console's web helpers: the guard middleware, page rendering and what every handler uses
(the routes are in :mod:`server.console.routes`).

Starlette (already installed with the mcp SDK) routes requests; Jinja2 renders HTML with
autoescaping on. Every handler is ``async`` and calls the facade directly: they all run on the
one event-loop thread, so the single :class:`server.app.facade.LedgerApp` (one connection) is never
shared between threads. Pages are small and bounded (lists are paged), so a call never holds
the loop for long.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from fact_ledger.ledger import clock
from fact_ledger.ledger.errors import InvalidInput, LedgerError
from fact_ledger.ledger.ids import MAX_ID, ascii_digits, position_in
from fact_ledger.server.app import credentials
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.console.guard import SECURITY_HEADERS, Guard, without_token
from fact_ledger.server.console.i18n import (
    LANGUAGES,
    check_message_translator,
    reason_translator,
    term_translator,
    translator,
    value_translator,
)
from fact_ledger.server.console.refusals import refusal_translator
from fact_ledger.server.console.views import rule_text

LANG_COOKIE = "ledger_console_lang"
TIME_PARAMS = ("as_of", "at")  # as of a recorded position/time; as true at an event time
TIME_FIELDS = {"as_of": "as_of_recorded", "at": "as_of_event_time"}  # the facade's names, for errors
STATIC = Path(__file__).parent / "static"


class GuardMiddleware:
    """Host, origin and token checks before any handler runs (see :mod:`server.console.guard`)."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        headers = request.headers
        refusal = self.guard.host_refusal(headers.get("host")) or self.guard.origin_refusal(
            headers.get("origin"), headers.get("sec-fetch-site")
        )
        response: Response | None = None
        moved = (
            None
            if refusal
            else self.guard.canonical(headers.get("host"), request.method, scope["path"], request.url.query)
        )
        if refusal:
            response = PlainTextResponse(refusal, status_code=403)
        elif moved:
            response = RedirectResponse(moved, status_code=307)
        elif self.guard.token_ok(request.query_params.get("token")):
            response = RedirectResponse(without_token(request.url.path, request.url.query), status_code=303)
            response.set_cookie(self.guard.cookie_name, self.guard.token, httponly=True, samesite="strict")
        elif not self.guard.token_ok(request.cookies.get(self.guard.cookie_name)):
            response = PlainTextResponse(
                "this browser holds no key for the console: open the URL that `ledger console` printed "
                f"(http://127.0.0.1:{self.guard.port}/?token=…) once; the key is kept in a cookie until the "
                "console stops",
                status_code=403,
            )
        if response is not None:
            response.headers.update(SECURITY_HEADERS)
            await response(scope, receive, send)
            return

        async def secured(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                raw = [(k, v) for k, v in message.get("headers", []) if k.decode().lower() not in SECURITY_HEADERS]
                raw += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": raw}
            await send(message)

        await self.app(scope, receive, secured)


_env = Environment(
    loader=PackageLoader(__name__.rpartition(".")[0], "templates"),
    autoescape=select_autoescape(default=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def ledger(request: Request) -> LedgerApp:
    return request.app.state.ledger


def language(request: Request) -> str:
    lang = request.cookies.get(LANG_COOKIE, "en")
    return lang if lang in LANGUAGES else "en"


def time_params(request: Request) -> dict[str, str]:
    """The time-travel point the URL carries (empty values dropped)."""
    return {k: v for k in TIME_PARAMS if (v := request.query_params.get(k, "").strip())}


def parse_id(raw: object, field: str, *, least: int = 1) -> int:
    """An id or log position from a URL or form, the one way every console parameter is read.

    Only the ASCII digits 0-9 make a number here: ``str.isdigit`` also accepts ``²`` (which
    ``int`` refuses) and ``٣`` (which ``int`` reads as 3, so a person would act on a memory they
    did not type). A value past SQLite's integer range cannot name a row and overflows when it is
    bound, so it is refused here too, as bad input rather than an error of the page."""
    text = "" if raw is None else str(raw).strip()
    digits = text.lstrip("0") or "0"
    if not ascii_digits(text) or len(digits) > len(str(MAX_ID)) or not least <= int(digits) <= MAX_ID:
        raise InvalidInput(f"{field} must be a whole number from {least} to {MAX_ID}, in the digits 0-9", field=field)
    return int(digits)


def end_of_log(request: Request) -> int | None:
    """The position the log ends at when the URL's ``as_of`` names it or one past it, else None.

    The end of the log is the present: its pages said "Viewing the past" above what is the
    current state. A position past the end (however many digits it has) is the end, as MCP and
    the CLI read it, and so is a recorded time at or after the last write's (``2099-01-01``
    too, until a write is recorded past it). The position a later write adds makes the same URL a
    view of the past."""
    value = time_params(request).get("as_of", "")
    app = ledger(request)
    last = app.store.last_position()
    if ascii_digits(value):
        return last if position_in(value) >= last else None
    if not value or value.isdigit():
        return None  # no point, or digits that are no position (refused by time_point)
    try:
        resolved = app.as_of(as_of_recorded=value)["as_of"]["recorded_position"]
    except LedgerError:
        return None  # no time: time_point refuses it
    return last if resolved >= last else None


def time_point(request: Request) -> dict[str, str]:
    """The URL's time-travel point, checked before any page answers with it.

    ``as_of`` is a log position (digits) or a recorded time, ``at`` an event time. A position is
    the ASCII digits 0-9 (the facade would read ``٣`` as 3 and fail on ``²``); the end of the
    log or past it, as a position or a time, is the present (:func:`end_of_log`), so ``as_of``
    is dropped and the page answers as now. The times are parsed as the facade parses them.
    Raises ``InvalidInput`` naming the facade's field."""
    return _point(request)[0]


def checked_time_point(request: Request) -> tuple[dict[str, str], int | None]:
    """The URL's point as the page answers it, and the end of the log when its ``as_of`` names
    that (the present); nothing when it names no valid time: the banner says "Viewing the past"
    only for a point of the past, and neither it nor "the current state" stands above the error
    an invalid point gets."""
    try:
        return _point(request)
    except LedgerError:
        return {}, None


def _point(request: Request) -> tuple[dict[str, str], int | None]:
    """:func:`time_point` and the end of the log it found the URL names (looked up once)."""
    tt = time_params(request)
    for key, value in list(tt.items()):
        if key == "as_of" and value.isdigit():
            if not ascii_digits(value):  # parse_id refuses what is not 0-9, naming the field
                parse_id(value, TIME_FIELDS[key], least=0)
        else:
            clock.parse_time(value, field=TIME_FIELDS[key])
    end = end_of_log(request) if "as_of" in tt else None
    if end is not None:
        del tt["as_of"]
    return tt, end


def link(request: Request, path: str, **params: Any) -> str:
    """A console URL that keeps the current time-travel point (unless a param overrides it)."""
    merged = {**time_params(request), **{k: v for k, v in params.items() if v not in (None, "")}}
    return path + ("?" + urlencode(merged, doseq=True) if merged else "")


DONE_COOKIE = "ledger_console_done"  # the page an action sent the person to, once (see done_redirect)


def _done_mark(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()[:32]


def done_redirect(url: str) -> RedirectResponse:
    """To ``url`` (``?done=…``) after an action recorded something: the page says "Recorded." for
    this visit only. The banner came from the URL alone, so reloading, bookmarking or sharing the
    page told the next reader that something had just been recorded."""
    response = RedirectResponse(url, status_code=303)
    response.set_cookie(DONE_COOKIE, _done_mark(url), max_age=300, httponly=True, samesite="strict")
    return response


def degraded(request: Request) -> dict[str, str] | None:
    """Why the ledger cannot be used right now (``status``'s ``degraded``), or None.

    Read from the one look at the log that ``status`` and doctor take (``Storage.health``), so
    every page agrees with them: a team log out of reach was served from the read models with no
    word of it (events, lag 0) while the start-up line said the database was unusable.
    ``refused`` says why no write lands at all when the JSONL backup cannot be written either
    (the banner said writes went to it while each was refused)."""
    storage = ledger(request).storage
    said = storage.health()["degraded"]
    if said is None:
        return None
    why = storage.backup_log.why_unwritable()
    return {**said, "refused": why} if why else said


def render(request: Request, template: str, code: int = 200, **context: Any) -> HTMLResponse:
    lang = language(request)
    here = request.url.path + ("?" + request.url.query if request.url.query else "")
    marked = request.cookies.get(DONE_COOKIE)
    done = bool(request.query_params.get("done")) and marked == _done_mark(here)
    tt = time_params(request)
    past, present_end = checked_time_point(request)
    html = _env.get_template(template).render(
        request=request,
        t=translator(lang),
        tv=value_translator(lang),
        tn=term_translator(lang),
        tr=reason_translator(lang),
        tc=check_message_translator(lang),
        te=refusal_translator(lang),
        rule_text=rule_text,
        lang=lang,
        tt=tt,
        past=past,
        present_end=present_end,
        here=here,
        csrf=request.app.state.guard.csrf,
        link=lambda path, **p: link(request, path, **p),
        done_shown=done,
        degraded=degraded(request),
        **context,
    )
    response = HTMLResponse(html, status_code=code)
    if marked is not None:  # shown once: a reload or a shared link says nothing was just recorded
        response.delete_cookie(DONE_COOKIE, httponly=True, samesite="strict")
    return response


def error_page(request: Request, exc: LedgerError) -> HTMLResponse:
    code = {"not_found": 404, "invalid_input": 400}.get(exc.code, 409)
    return render(request, "error.html", code=code, error=credentials.scrub(exc).to_dict())


async def switch_language(request: Request) -> Response:
    """``/lang/zh?next=/memories`` remembers the language in a cookie and goes back."""
    lang = request.path_params["lang"]
    target = request.query_params.get("next", "/")
    if not target.startswith("/") or target.startswith("//"):
        target = "/"  # never an open redirect
    response = RedirectResponse(target, status_code=303)
    if lang in LANGUAGES:
        response.set_cookie(LANG_COOKIE, lang, max_age=365 * 86400, samesite="strict")
    return response


async def favicon(request: Request) -> Response:
    """Browsers ask for ``/favicon.ico`` whatever the page says: the console's icon (SVG)."""
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")
