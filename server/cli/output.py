"""What every command shares: the database and output options, the caller's context, printing
(JSON or for people), progress bars and the exit code of a result."""

from __future__ import annotations

import functools
import json
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from fact_ledger.ledger.errors import InvalidInput, LedgerError, Unavailable
from fact_ledger.ledger.ids import MAX_ID, ascii_digits
from fact_ledger.ledger.log.dbfiles import MissingDatabase, is_plain_path, no_ledger_yet
from fact_ledger.server.app import credentials
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli import exit_codes
from fact_ledger.server.config import Settings, load_settings


def counted(n: int, noun: str, plural: str = "") -> str:
    """``1 memory``, ``2 memories``: a count as a person reads it (``plural`` when it is not ``noun`` + s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def masked_line(r: dict[str, Any]) -> None:
    """What a masked write replaced (``secrets_masked`` of a renderer's escaped result): each
    credential's kind, field and span, never its text, and the placeholder stored in its place.
    Only ``--json`` said so, and a person at the terminal took the stored words for what they
    typed."""
    from fact_ledger.server.app.credentials import placeholder

    masked = r.get("secrets_masked") or ()
    if not masked:
        return
    # the fields come escaped for rich (a renderer's result); the placeholder is made here
    each = "; ".join(
        f"{s['kind']} in {s['field']} (characters {s['start']}–{s['end']}), stored as {escape(placeholder(s['kind']))}"
        for s in masked
    )
    said = counted(len(masked), "credential")
    out_console.print(f"  [yellow]masked {said}[/yellow]: {each}", highlight=False)


def relation_word(claim: dict[str, Any]) -> str:
    """A claim's attribute as a person reads it: the bare relation "is" of a Chinese claim is 是
    ("预发环境端口 是: '9090'", not "预发环境端口 is")."""
    attribute = str(claim["attribute"])
    if attribute == "is" and any("\u4e00" <= ch <= "\u9fff" for ch in str(claim["subject"])):
        return "是"
    return attribute


def as_of_line(r: dict[str, Any]) -> None:
    """Which point answered an as-of ``find`` or ``read`` (``as_of`` in ``--json``): a person sees
    that the answer is of the past, and of which past."""
    point = r.get("as_of")
    if not point:
        return
    world = f"true at {point['event_time']}, " if point.get("event_time") else ""
    out_console.print(f"[dim]as of: {world}as the ledger knew it at position {point['recorded_position']}[/dim]")


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
            # a team's log (LEDGER_STORE) is the ledger: the local path then names no file to look for
            local = not settings.shared_log
            if local and is_plain_path(settings.db) and no_ledger_yet(Path(settings.db)) and not settings.may_create:
                raise Unavailable(str(MissingDatabase(settings.db)), reason="missing")
            self._app = LedgerApp(settings)
        return self._app

    def close(self) -> None:
        """Close the ledger the command opened, as a server does when it stops: the uses its
        reads counted are written (a memory in daily use from the terminal does not cool) and
        its writes reach every read model. A failure here changes nothing the command answered."""
        app, self._app = self._app, None
        if app is not None:
            try:
                app.close()
            except Exception as exc:  # the command's answer stands: say why, never a traceback
                err_console.print(f"[yellow]warning[/yellow]: closing the ledger: {escape(str(exc))}", highlight=False)

    def chain_warning(self) -> str | None:
        """Set when the log's hash chain breaks past what the read models hold (see Storage)."""
        return self._app.storage.chain_warning() if self._app is not None else None

    def offline_warning(self) -> str | None:
        """Set while a team's log cannot be reached and answers come from this machine's read
        models (docs/teams.md, "When the server cannot be reached")."""
        storage = self._app.storage if self._app is not None else None
        if storage is None or not storage.offline:
            return None
        goes = storage.backup_log.where_writes_go(then=" until it is back")  # or nowhere: refused
        return f"the log cannot be reached (log_unreachable): answers come from this machine's read models, and {goes}"


def output_path(path: str, field: str) -> Path:
    """A file a command will write, checked before the command does anything: its folder must
    exist and the path must not be a folder (``erase --receipt``, ``export -o``). A refusal
    after the work would lose what the file was for (an erasure cannot be done again)."""
    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        raise InvalidInput(f"cannot write {path}: the folder {folder} does not exist", field=field)
    if target.is_dir():
        raise InvalidInput(f"cannot write {path}: it is a folder", field=field)
    return target


class _Id(click.IntRange):
    """A memory, conflict, judgment or notice id, or a log position: ASCII digits, 1..MAX_ID
    (click's ``int()`` alone takes other scripts' digits and numbers no SQLite row can have)."""

    name = "id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not ascii_digits(value.strip()):
            self.fail(f"{value!r} is not an id (a whole number from 1 to {MAX_ID})", param, ctx)
        return super().convert(value, param, ctx)


ID = _Id(1, MAX_ID)


class _DbPath(click.ParamType):
    """``--db``: a path. An empty one (``--db "$UNSET"``) crashed before the command, or, after
    the command's name, fell back to the default database without a word."""

    name = "path"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("an empty path names no database: give one, or leave --db out (LEDGER_DB, else the default)")
        return value


DB_PATH = _DbPath()


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--db`` and ``--json`` on every command (also accepted before the command name)."""

    @click.option("--db", "db", default=None, type=DB_PATH, help="Database path (else LEDGER_DB, else the default).")
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
        finally:
            obj.close()

    return wrapper


def _fail(obj: CliContext, exc: LedgerError, *, code: int) -> None:
    if obj.as_json:
        click.echo(json.dumps({"ok": False, "error": credentials.scrub(exc).to_dict()}, ensure_ascii=False))
    else:
        say_error(exc)
    sys.exit(code)


# The contract's fields whose option has another name on the command line; any other field is
# ``--field-name`` on the commands that take it.
FIELD_OPTIONS = {"session_id": "--session", "ref_id": "--retracts", "tags": "--tag", "rule_order": "--rules"}
# An MCP action a message tells a person to take, as the command line takes it ({conflict}: the
# error's conflict_id)
_ACTIONS = (
    ("resolve_conflict with a winner_id, or keep_all", "ledger resolve {conflict} --winner ID, or --keep-all"),
    ("resolve_conflict with a winner_id", "ledger resolve {conflict} --winner ID"),
)
_SAID = re.compile(r'\b([a-z][a-z_]*): "([^"]*)"')  # on_secret: "mask", tier: "working"
_SNAKE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")  # session_id, session_only
# A field named beside one already in the command line's words: "give either subject or MEMORY_ID",
# "ALIAS and canonical must be two different names"
_PAIRED = re.compile(r"\b([a-z]+) (or|and) ([A-Z][A-Z_]*\b|--[a-z-]+)|(\b[A-Z][A-Z_]*|--[a-z-]+) (or|and) ([a-z]+)\b")


def in_command_words(text: str, conflict_id: int | None) -> str:
    """An MCP action a text tells a person to take, as the command line takes it."""
    for action, command_line in _ACTIONS:
        text = text.replace(action, command_line.format(conflict=conflict_id if conflict_id is not None else "ID"))
    return text


def cli_message(exc: LedgerError, command: click.Command | None = None) -> str:
    """The error's message in the words of the command line: the service speaks of the MCP
    fields (``pass on_secret: "mask"``, ``needs session_id``), which a person at the terminal
    gives as options (``--on-secret mask``, ``--session``). A field is rewritten only where the
    command (``command``, else the one running) has its option; the MCP and ``--json`` keep the
    message as it is."""
    if command is None:
        ctx = click.get_current_context(silent=True)
        command = ctx.command if ctx is not None else None
    params = command.params if command is not None else []
    options = {o for p in params for o in p.opts}
    arguments = {p.name: p.human_readable_name for p in params if isinstance(p, click.Argument) and p.name}

    def option(field: str) -> str | None:
        field = re.sub(r"\.\d+$", "", field)  # an item of a list field ("tags.0"): the option that gives each
        if field in arguments:  # a positional argument: its name as the usage line shows it (MEMORY_ID)
            return arguments[field]
        name = FIELD_OPTIONS.get(field, "--" + field.replace("_", "-"))
        if name in options:
            return name
        # the field is an argument here under the option's name (``ledger working SESSION``)
        return arguments.get(name.removeprefix("--").replace("-", "_"))

    def paired(m: re.Match[str]) -> str:
        if m[1]:
            return f"{option(m[1]) or m[1]} {m[2]} {m[3]}"
        return f"{m[4]} {m[5]} {option(m[6]) or m[6]}"

    def said(m: re.Match[str]) -> str:
        name = option(m[1])
        return f"{name} {shlex.quote(m[2])}" if name else m[0]

    message = in_command_words(exc.message, exc.details.get("conflict_id"))
    message = _SNAKE.sub(lambda m: option(m[0]) or m[0], _SAID.sub(said, message))
    field = exc.field or ""
    # "sticky applies to …", and a check of the field's value: "subject: at most 2000 characters",
    # "tags.0: at least 1 character(s)" (the field's name as the MCP gives it, not the option's)
    if field and message.startswith((field + " ", field + ":")) and option(field):
        message = f"{option(field)}{message[len(field) :]}"
    for name in exc.names:  # another field named with its value: "is after until (…)"
        if option(name):
            message = re.sub(rf"\b{re.escape(name)}(?= \()", option(name) or name, message)
    return _PAIRED.sub(paired, message)


def say_error(exc: LedgerError) -> None:
    """The error on stderr for a person, the one form every command uses: its kind, its message
    in the command line's words (:func:`cli_message`) and the near miss it names (``ledger
    serve`` and ``ledger console`` printed their own line and dropped the "did you mean" of a
    mistyped config key)."""
    credentials.scrub(exc)  # a message quoting what was typed never repeats a credential in it
    hint = exc.details.get("did_you_mean")
    suffix = f" (did you mean {hint!r}?)" if hint else ""
    # Escaped: a message may quote brackets ('.[semantic]') that rich would read as markup.
    err_console.print(f"[red]error[/red] ({exc.code}): {escape(cli_message(exc) + suffix)}", highlight=False)


def refuse(exc: LedgerError) -> NoReturn:
    """Say the error (:func:`say_error`) and exit with its code: for the commands that take no
    ``--json`` (serve, console)."""
    say_error(exc)
    sys.exit(exit_codes.for_error(exc))


def emit(obj: CliContext, result: dict[str, Any], human: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Print the result (JSON or for people), then exit with its code when it is not plain success.

    A read on a log whose hash chain breaks still answers (from the events before the break),
    and a read while a team's log cannot be reached answers from this machine's read models,
    each with its warning in ``notices`` (JSON) or on stderr (people)."""
    warnings = [w for w in (obj.chain_warning(), None if result.get("backup_only") else obj.offline_warning()) if w]
    if warnings:
        result = {**result, "notices": [*result.get("notices", ()), *warnings]}
    _show(obj, result, human)
    if not obj.as_json:
        for warning in warnings:
            err_console.print(f"[yellow]warning[/yellow]: {escape(warning)}", highlight=False)
    code = exit_codes.for_result(result)
    if code:
        sys.exit(code)


def _show(obj: CliContext, result: dict[str, Any], human: Callable[[dict[str, Any]], None] | None) -> None:
    if obj.as_json or human is None:
        click.echo(json.dumps(result, ensure_ascii=False, default=str))
    elif result.get("backup_only"):  # any write, when SQLite refused it: no ids to show yet
        backup = result["backup"]
        out_console.print(
            f"[yellow]not in the database[/yellow] ({result['reason']}): {len(backup['event_ids'])} "
            f"event(s) kept in the backup {backup['path']}; they get ids when "
            "`ledger replay-backup --apply` replays them",
            highlight=False,
        )
    else:
        human(_escaped(result))


# What rich reads as a tag, with the backslashes before it (rich.markup.escape's own pattern).
# rich's escape also doubles a final backslash, for a text a closing tag follows; at the end of a
# printed line that showed "C:\\tools\\" for "C:\\tools\\", a value that was not the one stored.
_MARKUP = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def _escape_tag(match: re.Match[str]) -> str:
    backslashes, tag = match.groups()
    return f"{backslashes}{backslashes}\\{tag}"


def _escaped(value: Any) -> Any:
    """``value`` with every text escaped for rich markup: a person's renderer interpolates
    subjects, contents and names into markup, where "svc[/]" was a traceback and "[red]x[/red]"
    hid its brackets. Renderers print these texts with markup on, so they read as written."""
    if isinstance(value, str):
        return _MARKUP.sub(_escape_tag, value)  # rich's escape, without doubling a final backslash
    if isinstance(value, dict):  # keys too: a count by workspace is keyed by names
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_escaped(v) for v in value]
    return value


def cursor_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--cursor``: continue a list from the ``next_cursor`` of the previous page."""
    return click.option(
        "--cursor", default=None, metavar="CURSOR", help="Continue from a previous page's next_cursor."
    )(f)


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
    with Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=err_console, transient=True
    ) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total or None)


def print_memories(results: list[dict[str, Any]]) -> None:
    if not results:
        out_console.print("[dim]no memories found[/dim]")
    for m in results:
        meta = f"#{m['memory_id']} v{m['version']} {m['source_type']} ({m['status']})"
        subject = f" [bold]{m['subject']}[/bold]" if m.get("subject") else ""
        out_console.print(f"[cyan]{meta}[/cyan]{subject}", highlight=False)
        out_console.print(f"  {m['content']}", highlight=False)


def bad_line_details(r: dict[str, Any]) -> None:
    """The skipped lines of an import or a backup replay (the first 20), each with why."""
    for bad in r["bad_lines"]:
        out_console.print(f"  line {bad['line']}: {bad['error']}", highlight=False)
    unlisted = r["bad_total"] - len(r["bad_lines"])
    if unlisted > 0:
        out_console.print(f"  and {unlisted} more bad line(s)", highlight=False)


def _writes(pending: dict[str, Any]) -> str:
    """ "2 writes (3 events)": a write may append several events (a collision, a settlement), and
    the docs count what waits in writes."""
    writes, events = pending.get("writes"), pending["events"]
    if writes is None:
        return f"{events} event(s)"
    return f"{writes} write{'s' if writes != 1 else ''} ({events} event{'s' if events != 1 else ''})"


def pending_backup_line(pending: dict[str, Any] | None) -> None:
    if pending:
        out_console.print(
            f"  [yellow]backup awaiting replay[/yellow]: {_writes(pending)} in "
            f"{pending['path']} (ledger replay-backup)",
            highlight=False,
        )
