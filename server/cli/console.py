"""``ledger console``: the local web console (see :mod:`server.console`)."""

from __future__ import annotations

import sys

import click

from fact_ledger.ledger.errors import LedgerError
from fact_ledger.server.cli.output import DB_PATH, CliContext, err_console, refuse


@click.command()
@click.option(
    "--port",
    default=18876,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port on 127.0.0.1 (0 picks a free one).",
)
@click.option("--no-open", "no_open", is_flag=True, help="Do not open a browser.")
@click.option("--db", "db", default=None, type=DB_PATH, help="Database path (else LEDGER_DB, else the default).")
@click.option("--config", default=None, help="Config file (else LEDGER_CONFIG, else the default config.toml).")
@click.pass_context
def console(ctx: click.Context, port: int, no_open: bool, db: str | None, config: str | None) -> None:
    """Serve the local web console on 127.0.0.1 (the URL it prints carries this run's token).

    Example: ledger console --no-open
    """
    from fact_ledger.server.console.serve import run_console

    parent: CliContext = ctx.ensure_object(CliContext)
    try:
        run_console({"db": db or parent.db, "config": config}, port=port, open_browser=not no_open)
    except LedgerError as exc:
        refuse(exc)
    except OSError as exc:
        err_console.print(f"[red]error[/red]: cannot listen on 127.0.0.1:{port}: {exc.strerror}")
        sys.exit(1)
