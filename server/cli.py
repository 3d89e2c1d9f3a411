"""The ``ledger`` command line. Every command takes ``--db`` and ``--json``.

``--json`` prints one JSON document with the same keys as the MCP results; otherwise output is
for people (rich), with progress bars on long work. Exit codes are one table
(:mod:`server.exit_codes`, printed in docs/cli.md); errors never print a traceback.

Only the default database is created implicitly: an explicit ``--db`` (or ``LEDGER_DB``) path
with no ledger is refused unless the caller runs ``ledger init`` or passes ``--create``.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ledger.dbfiles import MissingDatabase, is_plain_path
from ledger.errors import LedgerError, Unavailable
from server import exit_codes
from server.app import LedgerApp
from server.config import Settings, load_settings

err_console = Console(stderr=True, soft_wrap=True)  # long lines stay whole when piped or grepped
out_console = Console(soft_wrap=True)


class CliContext:
    def __init__(self, db: str | None, as_json: bool, workspace: str | None = None, create: bool = False) -> None:
        self.db = db
        self.as_json = as_json
        self.workspace = workspace
        self.create = create
        self._app: LedgerApp | None = None

    @property
    def settings(self) -> Settings:
        overrides: dict[str, Any] = {"db": self.db}
        if self.workspace is not None:
            overrides["workspace"] = self.workspace
        if self.create:
            overrides["create"] = True
        settings = load_settings(overrides)
        if settings.client == "unknown":  # a person at a terminal
            from dataclasses import replace

            settings = replace(settings, client="cli")
        return settings

    @property
    def app(self) -> LedgerApp:
        if self._app is None:
            settings = self.settings
            if is_plain_path(settings.db) and not Path(settings.db).exists() and not settings.may_create:
                raise Unavailable(str(MissingDatabase(settings.db)), reason="missing")
            self._app = LedgerApp(settings)
        return self._app


class LedgerGroup(click.Group):
    """Click's group with one change: a command line it cannot parse exits 64, not 2, because
    2 means "broken" in the exit-code table."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        return _usage_code(super().make_context, *args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        return _usage_code(super().invoke, ctx)


def _usage_code(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, **kwargs)
    except click.UsageError as exc:
        exc.exit_code = exit_codes.USAGE
        raise


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--db`` and ``--json`` on every command (also accepted before the command name)."""

    @click.option("--db", "db", default=None, help="Database path (else LEDGER_DB, else the default).")
    @click.option("--json", "as_json", is_flag=True, default=False, help="Print one JSON document.")
    @click.pass_context
    @functools.wraps(f)
    def wrapper(ctx: click.Context, db: str | None, as_json: bool, **kwargs: Any) -> Any:
        parent: CliContext = ctx.ensure_object(CliContext)
        obj = CliContext(db or parent.db, as_json or parent.as_json, create=parent.create)
        try:
            return f(obj, **kwargs)
        except LedgerError as exc:
            _fail(obj, exc, code=exit_codes.for_error(exc))

    return wrapper


def _fail(obj: CliContext, exc: LedgerError, *, code: int) -> None:
    if obj.as_json:
        click.echo(json.dumps({"ok": False, "error": exc.to_dict()}, ensure_ascii=False))
    else:
        hint = exc.details.get("did_you_mean")
        suffix = f" (did you mean {hint!r}?)" if hint else ""
        err_console.print(f"[red]error[/red] ({exc.code}): {exc.message}{suffix}")
    sys.exit(code)


def emit(obj: CliContext, result: dict[str, Any], human: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Print the result (JSON or for people), then exit with its code when it is not plain success."""
    _show(obj, result, human)
    code = exit_codes.for_result(result)
    if code:
        sys.exit(code)


def _show(obj: CliContext, result: dict[str, Any], human: Callable[[dict[str, Any]], None] | None) -> None:
    if obj.as_json or human is None:
        click.echo(json.dumps(result, ensure_ascii=False, default=str))
    elif result.get("backup_only"):  # any write, when SQLite refused it: no ids to show yet
        backup = result["backup"]
        out_console.print(f"[yellow]not in the database[/yellow] ({result['reason']}): {len(backup['event_ids'])} "
                          f"event(s) kept in the backup {backup['path']}; they get ids when "
                          "`ledger replay-backup --apply` replays them", highlight=False)
    else:
        human(result)


def cursor_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--cursor``: continue a list from the ``next_cursor`` of the previous page."""
    return click.option("--cursor", default=None, metavar="CURSOR",
                        help="Continue from a previous page's next_cursor.")(f)


def next_page_line(r: dict[str, Any]) -> None:
    """For people: how to see the next page, when there is one."""
    if r.get("next_cursor"):
        out_console.print(f"[dim]more: --cursor {r['next_cursor']}[/dim]", highlight=False)


@contextmanager
def progress_bar(obj: CliContext, label: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr (silent under --json)."""
    if obj.as_json or not err_console.is_terminal:
        yield lambda done, total: None
        return
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err_console, transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total or None)


def print_memories(results: list[dict[str, Any]]) -> None:
    if not results:
        out_console.print("[dim]no memories found[/dim]")
    for m in results:
        meta = f"#{m['memory_id']} v{m['version']} {m['source_type']} ({m['status']})"
        subject = f" [bold]{m['subject']}[/bold]" if m.get("subject") else ""
        out_console.print(f"[cyan]{meta}[/cyan]{subject}", highlight=False)
        out_console.print(f"  {m['content']}", markup=False, highlight=False)


@click.group(cls=LedgerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", "db", default=None, help="Database path (else LEDGER_DB, else the default).")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print one JSON document.")
@click.option("--create", is_flag=True, default=False,
              help="Create the database at an explicit --db path if it does not exist (see also: init).")
@click.version_option(package_name="fact-ledger")
@click.pass_context
def main(ctx: click.Context, db: str | None, as_json: bool, create: bool) -> None:
    """fact-ledger: an event-sourced fact ledger that AI agents share as memory.

    Example: ledger remember "The staging API listens on port 8080" --subject staging
    """
    ctx.obj = CliContext(db, as_json, create=create)


@main.command()
@click.argument("text", required=False)
@click.option("--file", "file", default=None, metavar="FILE", help="Read the content from FILE ('-': stdin).")
@click.option("--subject", default="", help="What the memory is about.")
@click.option("--source-type", default="user_confirmed",
              type=click.Choice(["user_confirmed", "document_extracted", "agent_generated", "unknown"]),
              help="Where the fact comes from (a person at the CLI: user_confirmed).")
@click.option("--confidence", type=float, default=None, help="How sure the source is, 0..1.")
@click.option("--event-time", default=None, help="When the fact became true (ISO 8601).")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--workspace", default=None, help="Workspace (else LEDGER_WORKSPACE).")
@click.option("--source-ref", default="", help="Where the fact was found (a URL, a file, a message id).")
@click.option("--metadata", default=None, metavar="JSON", help="A JSON object stored with the memory.")
@click.option("--retracts", "retracts", type=click.IntRange(min=1), default=None, metavar="ID",
              help="This fact cancels memory ID, which is retired (\"cancel the Wednesday meeting\").")
@json_option
def remember(obj: CliContext, text: str | None, file: str | None, subject: str, source_type: str,
             confidence: float | None, event_time: str | None, tags: tuple[str, ...], workspace: str | None,
             source_ref: str, metadata: str | None, retracts: int | None) -> None:
    """Record a fact (TEXT, '-' for stdin, or --file).

    Example: ledger remember "Deploys freeze on Fridays" --subject deploys --tag policy
    Example: git log -1 --format=%B | ledger remember - --subject release
    """
    from ledger.events import AUTH_USER
    from server.cli_input import content_of, metadata_of
    from server.schemas import RememberData

    data = RememberData.parse({"content": content_of(text, file), "subject": subject, "source_type": source_type,
                               "confidence": confidence, "event_time": event_time, "tags": list(tags),
                               "workspace": workspace, "source_ref": source_ref, "metadata": metadata_of(metadata),
                               "ref_id": retracts, "retracts": retracts is not None})
    result = obj.app.remember(**data.to_kwargs(), authorization=AUTH_USER)
    emit(obj, result, _remember_lines)


def _remember_lines(r: dict[str, Any]) -> None:
    """The new id, then what the write collided with or resembles: a person at the terminal
    learns at once what an agent reads in the JSON, instead of finding the conflict later."""
    if r.get("duplicate_of"):  # an exact duplicate: no new memory, the sighting is recorded
        out_console.print(f"already remembered as #{r['duplicate_of']} (seen again)", highlight=False)
    else:
        out_console.print(f"remembered #{r['memory_id']}", highlight=False)
    for c in r.get("conflicts", ()):
        claim, verdict = c["claim"], c["verdict"]
        outcome = ("manual review" if verdict["winner_id"] is None or verdict["manual_review"]
                   else f"#{verdict['winner_id']} leads by {verdict.get('rule')}")
        out_console.print(f"  [yellow]conflict {c['conflict_id']}[/yellow] ({c['member_count']} values): "
                          f"{claim['subject']} {claim['attribute']}: {claim['value']!r} → {outcome}",
                          highlight=False)
    unlisted = r.get("conflicts_total", 0) - len(r.get("conflicts", ()))
    if unlisted > 0:
        out_console.print(f"  and {unlisted} more conflict(s): ledger conflicts")
    if r.get("near_duplicates"):
        similar = ", ".join(f"#{d['memory_id']} ({d['similarity']:.2f})" for d in r["near_duplicates"])
        out_console.print(f"  similar to {similar}", highlight=False)


@main.command()
@click.argument("query")
@click.option("--limit", default=5, show_default=True, type=click.IntRange(1, 50))
@click.option("--include-inactive", is_flag=True, help="Also superseded, retired and archived memories.")
@click.option("--as-of-event-time", default=None, help="What was true in the world at this time.")
@click.option("--as-of-recorded", default=None, help="What the ledger knew at this time or position.")
@cursor_option
@json_option
def find(obj: CliContext, query: str, limit: int, include_inactive: bool,
         as_of_event_time: str | None, as_of_recorded: str | None, cursor: str | None) -> None:
    """Search memories (English and Chinese).

    Example: ledger find "staging port" --limit 3
    """
    from server.schemas import FindData

    data = FindData.parse({"query": query, "limit": limit, "include_inactive": include_inactive,
                           "as_of_event_time": as_of_event_time, "as_of_recorded": as_of_recorded,
                           "cursor": cursor})

    def human(r: dict[str, Any]) -> None:
        print_memories(r["results"])
        next_page_line(r)

    emit(obj, obj.app.find(**data.to_kwargs()), human)


@main.command()
@click.argument("memory_id", type=click.IntRange(min=1))
@click.option("--as-of-event-time", default=None, help="As it stood in the world at this time.")
@click.option("--as-of-recorded", default=None, help="As the ledger knew it at this time or position.")
@click.option("--sections", default=None, metavar="catalog|all|ID,ID",
              help="A long memory's sections: the catalog (default), all with their text, or these ids.")
@json_option
def read(obj: CliContext, memory_id: int, as_of_event_time: str | None, as_of_recorded: str | None,
         sections: str | None) -> None:
    """Show one memory with its links (and, for a long one, its sections).

    Example: ledger read 12 --as-of-event-time 2026-07-03
    """
    from server.schemas import ReadData

    chosen: str | list[int | str] | None = sections
    if sections is not None and sections not in ("catalog", "all"):
        chosen = [int(p) if p.strip().isdigit() else p for p in sections.split(",")]
    data = ReadData.parse({"memory_id": memory_id, "as_of_event_time": as_of_event_time,
                           "as_of_recorded": as_of_recorded, "sections": chosen})
    emit(obj, obj.app.read(**data.to_kwargs()), lambda r: _memory_detail(r["memory"]))


def _memory_detail(m: dict[str, Any]) -> None:
    """One memory with its time, tags and links (what replaced it, what it retracted, conflicts)."""
    print_memories([m])
    until = f" until {m['valid_to']}" if m.get("valid_to") else ""
    lines = [f"valid from {m['event_time']}{until}; recorded {m['recorded_at']}"]
    if m.get("tags"):
        lines.append("tags: " + ", ".join(m["tags"]))
    if m.get("status_reason"):
        lines.append(f"{m['status']}: {m['status_reason']}")
    links = [("superseded by", [m.get("superseded_by")]), ("supersedes", m.get("supersedes", [])),
             ("retired by", [m.get("retired_by")]), ("retracts", m.get("retracts", [])),
             ("conflicts", m.get("conflict_ids", []))]
    lines += [f"{label} " + ", ".join(f"#{i}" for i in ids) for label, ids in links if any(ids)]
    for line in lines:
        out_console.print(f"  [dim]{line}[/dim]", highlight=False)
    for section in m.get("sections", []):
        path = " › ".join(section["heading_path"]) or "(no heading)"
        out_console.print(f"  [cyan]§{section['section_id']}[/cyan] {escape(path)} ({section['chars']} chars)",
                          highlight=False)
        if "text" in section:
            out_console.print(f"    {section['text']}", markup=False, highlight=False)


@main.command()
@click.argument("memory_id", type=click.IntRange(min=1))
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 200), help="Versions per page.")
@cursor_option
@json_option
def history(obj: CliContext, memory_id: int, limit: int, cursor: str | None) -> None:
    """Every version of a memory and the events behind it.

    Example: ledger history 12
    """

    def human(r: dict[str, Any]) -> None:
        for v in r["versions"]:
            kinds = ", ".join(e["type"] for e in v["events"])
            out_console.print(f"[cyan]v{v['version']}[/cyan] {v['recorded_at']} {v['actor']} [{kinds}] "
                              f"({v['status']})", highlight=False)
            out_console.print(f"  {v['content']}", markup=False, highlight=False)
        next_page_line(r)

    emit(obj, obj.app.history(memory_id, limit=limit, cursor=cursor), human)


@main.command()
@click.option("--projection", default=None, help="Rebuild only this projection.")
@json_option
def rebuild(obj: CliContext, projection: str | None) -> None:
    """Regenerate projections from the event log.

    Example: ledger rebuild --projection search
    """
    with progress_bar(obj, "rebuild") as progress:
        result = obj.app.rebuild(projection, progress)
    emit(obj, result, lambda r: out_console.print(
        f"rebuilt {', '.join(r['projections'])} from {r['events']} events"))


@main.command()
@json_option
def verify(obj: CliContext) -> None:
    """Recompute the hash chain and check projections (exit 2 names the first bad position).

    Example: ledger verify
    """
    with progress_bar(obj, "verify") as progress:
        result = obj.app.verify(progress)
    emit(obj, result, lambda r: out_console.print(f"intact: {r['events']} events, projections consistent"))


def bad_line_details(r: dict[str, Any]) -> None:
    """The skipped lines of an import or a backup replay (the first 20), each with why."""
    for bad in r["bad_lines"]:
        out_console.print(f"  line {bad['line']}: {bad['error']}", markup=False, highlight=False)
    unlisted = r["bad_total"] - len(r["bad_lines"])
    if unlisted > 0:
        out_console.print(f"  and {unlisted} more bad line(s)", highlight=False)


@main.command()
@json_option
def status(obj: CliContext) -> None:
    """Counts, projection lag and search mode.

    Example: ledger status
    """
    emit(obj, obj.app.status(), _status_lines)


def _status_lines(r: dict[str, Any]) -> None:
    if r.get("degraded"):  # the database could not be opened: writes go to the JSONL backup
        d = r["degraded"]
        out_console.print(f"[red]degraded[/red] since {d['since']} ({d['reason']}): {d['message']}",
                          highlight=False)
    else:
        out_console.print(f"{r['db']}: {r['events']} events, {r['memories']} active memories, "
                          f"{r['open_conflicts']} open conflicts", highlight=False)
        behind = {name: p for name, p in r["projections"].items() if p["lag"]}
        for name, p in behind.items():
            out_console.print(f"  [yellow]{name}[/yellow] is {p['lag']} events behind (at position {p['position']})",
                              highlight=False)
        if not behind:
            out_console.print(f"  {len(r['projections'])} projections up to date; search: {r['search_mode']}",
                              highlight=False)
    pending_backup_line(r.get("pending_backup"))


def pending_backup_line(pending: dict[str, Any] | None) -> None:
    if pending:
        out_console.print(f"  [yellow]backup awaiting replay[/yellow]: {pending['events']} events in "
                          f"{pending['path']} (ledger replay-backup)", highlight=False)


def register_extensions() -> None:
    """Command groups owned by other modules register themselves on ``main``."""
    from server import (  # noqa: F401
        cli_console,
        cli_governance,
        cli_input,
        cli_model,
        cli_semantic,
        cli_serve,
        cli_time,
        cli_transfer,
    )


register_extensions()
