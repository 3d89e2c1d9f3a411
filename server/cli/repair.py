"""``rebuild``, ``verify`` and ``status``: the ledger's health and upkeep."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.server.cli import exit_codes
from fact_ledger.server.cli.output import (
    CliContext,
    counted,
    emit,
    json_option,
    out_console,
    pending_backup_line,
    progress_bar,
)


@click.command()
@click.option("--projection", default=None, help="Rebuild only this projection.")
@json_option
def rebuild(obj: CliContext, projection: str | None) -> None:
    """Regenerate projections from the event log.

    Example: ledger rebuild --projection search
    """
    with progress_bar(obj, "rebuild") as progress:
        result = obj.app.rebuild(projection, progress)
    emit(obj, result, lambda r: out_console.print(f"rebuilt {', '.join(r['projections'])} from {r['events']} events"))
    _broken_chain_exit(obj)


def _broken_chain_exit(obj: CliContext) -> None:
    """rebuild and status answer on a log whose chain breaks (with the warning), and exit 2."""
    if obj.chain_warning() is not None:
        sys.exit(exit_codes.BROKEN)


@click.command()
@click.option(
    "--receipt",
    "receipt_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Check an erasure receipt (ledger erase --receipt) against this log instead.",
)
@json_option
def verify(obj: CliContext, receipt_path: str | None) -> None:
    """Recompute the hash chain and check projections (exit 2 names the first bad position).

    With --receipt, check that the log holds the erasure the receipt describes: its Erased
    events, their rows and seals, and the chain through its head.
    Example: ledger verify; ledger verify --receipt erase-12.json
    """
    if receipt_path is not None:
        try:
            receipt = json.loads(Path(receipt_path).read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"cannot read the receipt {receipt_path}: {exc}", field="receipt") from None
        with progress_bar(obj, "verify") as progress:
            result = obj.app.verify_receipt(receipt, progress)
        emit(
            obj,
            result,
            lambda r: out_console.print(f"receipt valid: {r['erasures']} erasure(s) in {r['events']} events"),
        )
        return
    with progress_bar(obj, "verify") as progress:
        result = obj.app.verify(progress)
    emit(obj, result, lambda r: out_console.print(f"intact: {r['events']} events, projections consistent"))


@click.command()
@json_option
def status(obj: CliContext) -> None:
    """Counts, projection lag and search mode.

    Example: ledger status
    """
    emit(obj, obj.app.status(), _status_lines)
    _broken_chain_exit(obj)


def _status_lines(r: dict[str, Any]) -> None:
    if r.get("degraded"):  # the database could not be opened: writes go to the JSONL backup
        d = r["degraded"]
        out_console.print(f"[red]degraded[/red] since {d['since']} ({d['reason']}): {d['message']}", highlight=False)
    else:
        out_console.print(
            f"{r['db']}: {counted(r['events'], 'event')}, "
            f"{counted(r['memories'], 'active memory', 'active memories')}, "
            f"{counted(r['open_conflicts'], 'open conflict')}",
            highlight=False,
        )
        behind = {name: p for name, p in r["projections"].items() if p["lag"]}
        for name, p in behind.items():
            out_console.print(
                f"  [yellow]{name}[/yellow] is {p['lag']} events behind (at position {p['position']})", highlight=False
            )
        if not behind:
            out_console.print(
                f"  {len(r['projections'])} projections up to date; search: {r['search_mode']}", highlight=False
            )
        for line in vectors_lines(r.get("vectors") or {}):
            out_console.print(f"  {line}", highlight=False)
        if r.get("busy"):  # another process's long write: the next write waits, then is backed up
            out_console.print(f"[yellow]busy[/yellow]: {r['busy']['message']}", highlight=False)
    pending_backup_line(r.get("pending_backup"))


def vectors_lines(v: dict[str, Any]) -> list[str]:
    """What is going on with meaning, when a model is configured: loading, failing, or vectors
    still to make (and what makes them)."""
    if not v.get("configured"):
        return []
    lines = []
    if v.get("loading"):
        lines.append("the embedding model is loading; find uses full text until it is ready")
    elif v.get("problem"):
        lines.append(f"semantic search off: {v['problem']}")
    if v.get("pending"):
        lines.append(
            f"vectors pending: {counted(v['pending'], 'memory', 'memories')} "
            f"{'awaits' if v['pending'] == 1 else 'await'} embedding; "
            "they are embedded by a running `ledger serve` or by `ledger reembed`"
        )
    return lines
