"""CLI commands that move the log in and out: ``export`` (JSONL or CSV), ``import`` (JSONL) and ``migrate``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import msgspec

from fact_ledger.ledger.errors import InvalidInput, Unavailable
from fact_ledger.server.cli.output import (
    CliContext,
    bad_line_details,
    emit,
    json_option,
    out_console,
    output_path,
    progress_bar,
)


@click.command(name="export")
@click.option("--format", "fmt", default="jsonl", type=click.Choice(["jsonl", "csv"]), show_default=True)
@click.option("--since", default=None, help="Only events recorded at or after (ISO 8601).")
@click.option("--until", default=None, help="Only events recorded at or before (ISO 8601).")
@click.option("-o", "--output", "output", default="-", help="Output file (default stdout).")
@click.option(
    "--schema",
    "schema",
    is_flag=True,
    default=False,
    help="Print the JSON Schema of a JSONL export line and exit (no database is opened).",
)
@json_option
def export_cmd(obj: CliContext, fmt: str, since: str | None, until: str | None, output: str, schema: bool) -> None:
    """Export the event log (JSONL envelopes with hashes, or CSV).

    Example: ledger export --format jsonl -o ledger.jsonl; ledger export --schema > export.schema.json
    """
    from fact_ledger.ledger.clock import time_range
    from fact_ledger.server.app.transfer import export_csv, export_jsonl

    if schema:
        from fact_ledger.ledger.log.envelope import export_schema

        _schema_alone(fmt, since, until, output)

        sys.stdout.buffer.write(export_schema())
        sys.stdout.flush()
        return
    since, until = time_range(since, until)
    writer = export_jsonl if fmt == "jsonl" else export_csv
    target = output_path(output, "output") if output != "-" else None
    obj.app.storage.require_log()  # before the file is made: a refused export leaves no empty file
    with progress_bar(obj, "export") as progress:
        if target is None:
            count = writer(obj.app, sys.stdout.buffer, since=since, until=until, progress=progress)
            sys.stdout.flush()
        else:
            try:
                fh = target.open("wb")
            except OSError as exc:
                raise InvalidInput(f"cannot write {output}: {exc.strerror or exc}", field="output") from None
            with fh:
                count = writer(obj.app, fh, since=since, until=until, progress=progress)
    if output != "-":
        emit(
            obj,
            {"ok": True, "events": count, "path": output},
            lambda r: out_console.print(f"exported {r['events']} events to {r['path']}"),
        )


def _schema_alone(fmt: str, since: str | None, until: str | None, output: str) -> None:
    """``--schema`` prints the JSON Schema of a JSONL export line, to stdout: the export's other
    options were ignored without a word (``--format csv --schema`` printed the JSONL schema)."""
    given = [
        option
        for option, said in (
            ("--format csv", fmt == "csv"),
            ("--since", since is not None),
            ("--until", until is not None),
            ("--output", output != "-"),
        )
        if said
    ]
    if given:
        why = [f"--schema prints the JSON Schema of a JSONL export line and takes no {', '.join(given)}"]
        if fmt == "csv":
            why.append("a CSV export has no JSON Schema: its header row names its columns")
        if output != "-":
            why.append("to keep it in a file: ledger export --schema > export.schema.json")
        raise click.UsageError("; ".join(why))


@click.command(name="import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option
def import_cmd(obj: CliContext, file: Path) -> None:
    """Append events from a JSONL export; already present events are skipped.

    Example: ledger import ledger.jsonl
    """
    from fact_ledger.server.app.transfer import import_jsonl

    with progress_bar(obj, "import") as progress:
        result = import_jsonl(obj.app, file, progress=progress)

    def human(r: dict[str, Any]) -> None:
        if not r.get("empty"):  # an empty file's zeros say nothing: its notice says why
            out_console.print(
                f"appended {r['appended']}, already present {r['already_present']}, bad lines {r['bad_total']}",
                highlight=False,
            )
        bad_line_details(r)
        for gap in r.get("gaps", ()):
            out_console.print(
                f"  [yellow]line {gap['line']}[/yellow] does not follow line {gap['after_line']} "
                "(its prev_hash is not that line's hash): events between them are missing from the file",
                highlight=False,
            )
        for notice in r.get("notices", ()):
            out_console.print(f"[yellow]{notice}[/yellow]", highlight=False)

    emit(obj, result, human)


def _opened(url: str, *, create: bool) -> Any:
    """A log to copy from or to; a path that is no ledger (another program's database, a text
    file, a directory) is answered as any command answers it (exit 2, or 5 for a directory),
    not with a traceback."""
    from fact_ledger.ledger.log.copy import open_log
    from fact_ledger.ledger.log.dbfiles import NotALedger

    try:
        return open_log(url, create=create)
    except NotALedger as exc:
        raise Unavailable(str(exc), reason=exc.reason) from None


@click.command(name="migrate")
@click.option(
    "--to", "target", default=None, metavar="URL", help="Where to copy the log: postgresql://… or sqlite:///path."
)
@click.option(
    "--from", "origin", default=None, metavar="URL", help="The log to copy (default: this ledger's database)."
)
@click.option(
    "--seal",
    is_flag=True,
    help="Re-seal a log written before erasure existed (checked first, then chained again), in place.",
)
@json_option
def migrate_cmd(obj: CliContext, target: str | None, origin: str | None, seal: bool) -> None:
    """Copy this ledger's log into another backend, row for row with its hash chain.

    Positions, times and hashes stay as they are, so `ledger verify` passes on both ends and
    `ledger export` gives the same bytes. An interrupted copy resumes; a target that holds other
    events is refused. Example: ledger migrate --to postgresql://ledger@db.internal/team

    --seal instead re-seals this ledger's own log once so that its memories can be erased: the
    old chain is verified, the same events are chained again with sealed rows (new hashes), and
    the read models are rebuilt. Example: ledger migrate --seal
    """
    from fact_ledger.ledger.log.copy import copy_log, display_url, log_location, refuse_same_log

    if seal and target is not None:  # both given: naming them as if neither were read as a typo
        raise click.UsageError("give --to URL (copy the log) or --seal (re-seal it in place), not both")
    if not seal and target is None:
        raise click.UsageError("give --to URL (copy the log) or --seal (re-seal it in place)")
    if seal:
        with progress_bar(obj, "seal") as progress:
            sealed = obj.app.seal(progress)
        emit(
            obj,
            sealed,
            lambda r: out_console.print(f"sealed {r['sealed']} of {r['events']} events", highlight=False),
        )
        return
    assert target is not None

    log_location(target)  # a bad URL is refused before either end is opened
    refuse_same_log(origin or obj.settings.db, target)  # so is the log itself
    source = _opened(origin or obj.settings.db, create=False)
    try:
        log = _opened(target, create=True)
        try:
            with progress_bar(obj, "migrate") as progress:
                total = source.last_position()
                result = copy_log(source, log, progress=lambda done: progress(done, total))
        finally:
            log.close()
    finally:
        source.close()
    emit(
        obj,
        {"ok": True, "to": display_url(target), **msgspec.structs.asdict(result)},
        lambda r: out_console.print(
            f"copied {r['copied']} events ({r['events']} in the target, head {r['head_hash'][:12]})", highlight=False
        ),
    )
