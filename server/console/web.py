"""The console's web helpers: the guard middleware, page rendering and what every handler uses
(the routes are in :mod:`server.console.routes`).

Starlette (already installed with the mcp SDK) routes requests; Jinja2 renders HTML with
autoescaping on. Every handler is ``async`` and calls the facade directly: they all run on the
one event-loop thread, so the single :class:`server.app.facade.LedgerApp` (one connection) is never
shared between threads. Pages are small and bounded (lists are paged), so a call never holds
the loop for long.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from fact_ledger.ledger import clock
from fact_ledger.ledger.errors import LedgerError
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.console.guard import SECURITY_HEADERS, Guard, without_token
from fact_ledger.server.console.i18n import LANGUAGES, translator, value_translator
from fact_ledger.server.console.views import rule_text

LANG_COOKIE = "ledger_console_lang"
TIME_PARAMS = ("as_of", "at")  # as of a recorded position/time; as true at an event time
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


def valid_time_point(tt: dict[str, str]) -> bool:
    """Whether the point names a time (or, for ``as_of``, a log position): the banner says
    "Viewing the past" only then, never above the error an invalid one gets."""
    try:
        for key, value in tt.items():
            if not (key == "as_of" and value.isdigit()):
                clock.parse_time(value, field=key)
    except LedgerError:
        return False
    return True


def link(request: Request, path: str, **params: Any) -> str:
    """A console URL that keeps the current time-travel point (unless a param overrides it)."""
    merged = {**time_params(request), **{k: v for k, v in params.items() if v not in (None, "")}}
    return path + ("?" + urlencode(merged, doseq=True) if merged else "")


def render(request: Request, template: str, code: int = 200, **context: Any) -> HTMLResponse:
    lang = language(request)
    here = request.url.path + ("?" + request.url.query if request.url.query else "")
    tt = time_params(request)
    html = _env.get_template(template).render(
        request=request,
        t=translator(lang),
        tv=value_translator(lang),
        rule_text=rule_text,
        lang=lang,
        tt=tt,
        past=tt if valid_time_point(tt) else {},
        here=here,
        csrf=request.app.state.guard.csrf,
        link=lambda path, **p: link(request, path, **p),
        **context,
    )
    return HTMLResponse(html, status_code=code)


def error_page(request: Request, exc: LedgerError) -> HTMLResponse:
    code = {"not_found": 404, "invalid_input": 400}.get(exc.code, 409)
    return render(request, "error.html", code=code, error=exc.to_dict())


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
