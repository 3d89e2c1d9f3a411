"""``ledger serve``: the MCP server, with its own identity flags (what an MCP client config sets)."""

from __future__ import annotations

import socket
import sys

import click

from fact_ledger.ledger.errors import LedgerError
from fact_ledger.server.cli import exit_codes
from fact_ledger.server.cli.output import DB_PATH, CliContext, err_console, refuse
from fact_ledger.server.config import load_settings


@click.command()
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option("--db", "db", default=None, type=DB_PATH, help="Database path (else LEDGER_DB, else the default).")
@click.option("--workspace", default=None, help="Workspace (else LEDGER_WORKSPACE).")
@click.option("--client", default=None, help="Client name stamped on events (else LEDGER_CLIENT).")
@click.option("--agent-id", default=None, help="Agent id stamped on events (else LEDGER_AGENT_ID).")
@click.option("--isolation", default=None, type=click.Choice(["none", "weak", "strict"]))
@click.option("--config", default=None, help="Config file (else LEDGER_CONFIG, else the default config.toml).")
@click.option("--create", is_flag=True, default=False, help="Create the database at --db if it does not exist.")
@click.pass_context
def serve(
    ctx: click.Context,
    http: bool,
    port: int,
    db: str | None,
    workspace: str | None,
    client: str | None,
    agent_id: str | None,
    isolation: str | None,
    config: str | None,
    create: bool,
) -> None:
    """Run the MCP server (stdio by default). From a terminal it says where it serves, on stderr.

    An explicit database that does not exist is not created (unless --create): the server
    starts, says so on stderr and in status, and refuses writes.

    Example: ledger serve
    """
    from fact_ledger.server.mcp.server import run_server

    parent: CliContext = ctx.ensure_object(CliContext)
    try:
        settings = load_settings(
            {
                "db": db or parent.db,
                "workspace": workspace,
                "client": client,
                "agent_id": agent_id,
                "isolation": isolation,
                "config": config,
                "create": True if create or parent.create else None,
            }
        )
    except LedgerError as exc:
        refuse(exc)
    if http:
        _refuse_a_taken_port(port)
    run_server(settings, http=http, port=port)


def _refuse_a_taken_port(port: int) -> None:
    """Say so in one line (as ``ledger console`` does) instead of the server's traceback from
    inside its task group; the same bind options as uvicorn, so only a real listener refuses."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            err_console.print(f"[red]error[/red]: cannot listen on 127.0.0.1:{port}: {exc.strerror}", highlight=False)
            sys.exit(exit_codes.REFUSED)
