"""The console's routes: which handler answers which path, behind the guard middleware.

Kept apart from :mod:`server.console.web` (what every handler uses) so that the handler modules
import the helpers and this module imports the handlers: one direction, no cycle.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.console import actions, detail, hindsight, pages, records
from fact_ledger.server.console.guard import Guard
from fact_ledger.server.console.web import STATIC, GuardMiddleware, favicon, switch_language


def create_app(ledger_app: LedgerApp, guard: Guard, sources: dict[str, str]) -> Starlette:
    """The console for one facade; ``sources`` says where each setting came from."""
    routes = [
        Route("/", pages.overview),
        Route("/memories", pages.memories),
        Route("/memory/{memory_id}", detail.memory),
        Route("/conflicts", pages.conflicts),
        Route("/conflict/{conflict_id}", detail.conflict),
        Route("/health", hindsight.health),
        Route("/health/apply", hindsight.apply, methods=["POST"]),
        Route("/health/undo", hindsight.undo, methods=["POST"]),
        Route("/health/alias", hindsight.alias, methods=["POST"]),
        Route("/timeline", records.timeline),
        Route("/audit", records.audit),
        Route("/audit/export.{fmt:str}", records.export),
        Route("/doctor", pages.doctor),
        Route("/settings", pages.settings),
        Route("/lang/{lang:str}", switch_language),
        Route("/favicon.ico", favicon),
        Route("/act/{action:str}", actions.act, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.ledger = ledger_app
    app.state.guard = guard
    app.state.sources = sources
    app.state.last_doctor = None  # the last Doctor report of this run: {"report", "at"}
    app.add_middleware(GuardMiddleware, guard=guard)
    return app
