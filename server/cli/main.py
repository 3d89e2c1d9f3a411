"""The ``ledger`` group: global options, the exit code of a command line it cannot parse, and
every command, added explicitly (``ledger --help`` lists them)."""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Callable
from typing import Any

import click

from fact_ledger.server.cli import (
    console,
    exit_codes,
    governance,
    hindsight,
    input,
    memory,
    model,
    repair,
    semantic,
    serve,
    time,
    transfer,
    working,
)
from fact_ledger.server.cli.output import DB_PATH, CliContext


class LedgerGroup(click.Group):
    """Click's group with two changes: a command line it cannot parse exits 64, not 2, because
    2 means "broken" in the exit-code table; and with ``--json`` anywhere on it, that refusal is
    a JSON document on stdout like every other error (a script reads one, not click's text)."""

    wants_json = False

    def main(self, args: Any = None, *rest: Any, **kwargs: Any) -> Any:
        self.wants_json = "--json" in (sys.argv[1:] if args is None else list(args))
        return super().main(args, *rest, **kwargs)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        return self._usage_code(super().make_context, *args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        return self._usage_code(super().invoke, ctx)

    def _usage_code(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except click.UsageError as exc:
            exc.exit_code = exit_codes.USAGE
            if self.wants_json:
                refusal = {"code": "invalid_input", "reason": "usage", "message": exc.format_message()}
                exc.show = lambda file=None: click.echo(json.dumps({"ok": False, "error": refusal}))  # type: ignore[method-assign]
            raise


@click.group(cls=LedgerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", "db", default=None, type=DB_PATH, help="Database path (else LEDGER_DB, else the default).")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print one JSON document.")
@click.option(
    "--create",
    is_flag=True,
    default=False,
    help="Create the database at an explicit --db path if it does not exist (see also: init).",
)
@click.version_option(package_name="fact-ledger")
@click.pass_context
def main(ctx: click.Context, db: str | None, as_json: bool, create: bool) -> None:
    """fact-ledger: an event-sourced fact ledger that AI agents share as memory.

    Example: ledger remember "The staging API listens on port 8080" --subject staging
    """
    ctx.obj = CliContext(db, as_json, create=create)


main.add_command(memory.remember)
main.add_command(memory.find)
main.add_command(memory.read)
main.add_command(memory.history)
main.add_command(working.reinforce)
main.add_command(working.promote)
main.add_command(working.working)
main.add_command(working.sweep)
main.add_command(repair.rebuild)
main.add_command(repair.verify)
main.add_command(repair.status)
main.add_command(console.console)
main.add_command(governance.compare)
main.add_command(governance.conflicts)
main.add_command(governance.conflict_detail)
main.add_command(governance.confirm)
main.add_command(governance.unlock)
main.add_command(governance.retire)
main.add_command(governance.erase)
main.add_command(governance.supersede)
main.add_command(governance.resolve)
main.add_command(governance.arbitrate)
main.add_command(governance.judge)
main.add_command(governance.doctor)
main.add_command(governance.review)
main.add_command(hindsight.health)
main.add_command(hindsight.apply_suggestion)
main.add_command(hindsight.undo)
main.add_command(hindsight.alias)
main.add_command(hindsight.whatif)
main.add_command(input.update)
main.add_command(input.init)
main.add_command(model.model)
main.add_command(semantic.reembed)
main.add_command(semantic.notices)
main.add_command(serve.serve)
main.add_command(time.replay_backup)
main.add_command(time.timeline)
main.add_command(time.audit)
main.add_command(time.archive)
main.add_command(transfer.export_cmd)
main.add_command(transfer.import_cmd)
main.add_command(transfer.migrate_cmd)


_EXAMPLE = re.compile(r"(?=Example: )")


def whole_examples(help_text: str) -> str:
    """``help_text`` with each ``Example:`` on a line of its own that click does not rewrap
    (its ``\\b`` marker): rewrapped, a command broke at a hyphen (``--expected-`` / ``version 1``)
    and two examples ran into one line, so neither pasted as written. Words before the first
    example of a paragraph stay a paragraph click wraps."""
    paragraphs: list[str] = []
    for paragraph in inspect.cleandoc(help_text).split("\n\n"):
        if "Example: " not in paragraph or paragraph.startswith("\b"):
            paragraphs.append(paragraph)
            continue
        head, *examples = _EXAMPLE.split(" ".join(paragraph.split()))
        if head.strip():
            paragraphs.append(head.strip())
        paragraphs.append("\b\n" + "\n".join(e.strip() for e in examples))
    return "\n\n".join(paragraphs)


def _keep_examples_whole(command: click.Command) -> None:
    """Every command's help, a group's and its commands' (one place: no docstring needs the marker)."""
    if command.help:
        command.help = whole_examples(command.help)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _keep_examples_whole(sub)


_keep_examples_whole(main)


if __name__ == "__main__":  # python -m fact_ledger.server.cli.main, as python -m fact_ledger.server
    main()
