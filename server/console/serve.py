"""``ledger console``: bind 127.0.0.1, print the URL with this run's token, serve until Ctrl-C."""

from __future__ import annotations

import socket
import sys
import webbrowser
from dataclasses import replace
from typing import Any

import uvicorn

from fact_ledger.ledger.errors import Unavailable
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings, load_settings, settings_sources
from fact_ledger.server.console.guard import Guard
from fact_ledger.server.console.routes import create_app
from fact_ledger.server.process import freeze_start_up

CLIENT = "console"  # every event the console records names it


def bind(port: int) -> socket.socket:
    """A listening socket on the loopback address only (port 0 picks a free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError:
        sock.close()  # the caller says why in one line; the socket must not leak
        raise
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def open_ledger(settings: Settings) -> LedgerApp:
    """The facade the console serves, or a refusal when the path holds no ledger.

    As every command but ``serve`` does (docs/cli.md, "A database is created only where you
    asked for one"), a path with no ledger, a directory or another program's file is refused
    before anything listens: a console on it could only answer each page with an error. A
    ledger that cannot be used right now (locked, read-only, a team log out of reach) is
    served; :func:`start_lines` says why it is unusable, as ``ledger serve`` does."""
    ledger_app = LedgerApp(settings)
    degraded = ledger_app.degraded
    if degraded and ledger_app.storage.not_a_ledger:
        ledger_app.close()
        raise Unavailable(degraded["message"], reason=degraded["reason"])
    return ledger_app


def start_lines(ledger_app: LedgerApp) -> list[str]:
    """What the console says on stderr when it starts: why the database is unusable, if it is
    (the same line as ``ledger serve``'s, server/mcp/server.py)."""
    degraded = ledger_app.degraded
    if not degraded:
        return []
    return [f"fact-ledger: database unusable ({degraded['reason']}): {degraded['message']}"]


def run_console(overrides: dict[str, Any], *, port: int, open_browser: bool) -> None:
    settings = replace(load_settings(overrides), client=CLIENT)
    sources = {**settings_sources(overrides), "client": "process"}  # set here, whatever the config says
    ledger_app = open_ledger(settings)
    try:
        sock = bind(port)
    except OSError:
        ledger_app.close()
        raise
    guard = Guard(port=sock.getsockname()[1])
    app = create_app(ledger_app, guard, sources)
    url = guard.url()
    for line in start_lines(ledger_app):
        print(line, file=sys.stderr, flush=True)
    # the log as ledger serve names it: a team's URL without its password, not the unused default path
    print(f"ledger console for {ledger_app.storage.log_location()}\n  {url}\nPress Ctrl-C to stop.", flush=True)
    if open_browser:
        webbrowser.open(url)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False))
    freeze_start_up()
    try:
        server.run(sockets=[sock])  # Ctrl-C / SIGTERM: uvicorn finishes the open requests first
    except KeyboardInterrupt:  # uvicorn re-raises the signal once it has shut down: that is a clean stop
        pass
    finally:
        ledger_app.close()
        sock.close()
        print("console stopped", file=sys.stderr, flush=True)
