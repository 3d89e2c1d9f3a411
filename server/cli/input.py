"""CLI input that is more than one argument: content from stdin or a file, ``update`` and ``init``.

Content longer than a shell argument (about 128 KiB on Linux) or produced by another program
comes through ``-`` (stdin) or ``--file``, without its trailing whitespace; a bare ``-`` never
becomes a memory, and neither does blank content. A person at the terminal is the user
channel, so ``update`` on a locked memory needs no extra flag (as for ``remember``, which stores
user_confirmed facts).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.log.dbfiles import no_ledger_yet
from fact_ledger.server.cli.model_options import model_options
from fact_ledger.server.cli.output import ID, CliContext, emit, json_option, masked_line, out_console
from fact_ledger.server.cli.working import session_option, turn_needs_session
from fact_ledger.server.schemas.memory import UpdateData

STDIN = "-"


def content_of(text: str | None, file: str | None, *, required: bool = True) -> str | None:
    """The content from TEXT, ``-`` (stdin) or ``--file`` (exactly one); blank is refused."""
    if text is not None and file is not None:
        raise InvalidInput("give the content as TEXT or --file, not both", field="content")
    if text is None and file is None:
        if required:
            raise InvalidInput("no content: give TEXT, '-' to read stdin, or --file FILE", field="content")
        return None
    # What a pipe or a file ends with (echo's newline, a file's last line break) is how it was
    # carried, not part of the fact: trailing whitespace goes; a TEXT argument is kept as given.
    if file is not None:
        content = _read(file).rstrip()
    elif text == STDIN:
        content = _stdin_text().rstrip()
    else:
        content = text or ""
    if not content.strip():
        source = "stdin" if STDIN in (text, file) else (file or "TEXT")
        # an update (content optional) changes a memory's text: "nothing to remember" was remember's word
        said = "nothing to remember" if required else "a memory's text cannot be blank"
        raise InvalidInput(f"no content in {source}: {said}", field="content")
    return content


def _stdin_text() -> str:
    """Standard input as UTF-8, strictly: the text layer would turn bad bytes into surrogates,
    and the refusal would then name a surrogate the person never typed."""
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("stdin is not UTF-8 text", field="content") from None


def _read(file: str) -> str:
    if file == STDIN:
        return _stdin_text()
    try:
        return Path(file).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{file} is not UTF-8 text", field="file") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {file}: {exc.strerror or exc}", field="file") from None


def metadata_of(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        raise InvalidInput("--metadata must be a JSON object", field="metadata") from None
    except RecursionError:  # thousands of levels: the edge refuses far fewer (MAX_METADATA_DEPTH)
        raise InvalidInput("--metadata nests too deep to read", field="metadata") from None
    if not isinstance(value, dict):
        raise InvalidInput("--metadata must be a JSON object", field="metadata")
    return value


@click.command()
@click.argument("memory_id", type=ID)
@click.argument("text", required=False)
@click.option("--file", "file", default=None, metavar="FILE", help="Read the new content from FILE ('-': stdin).")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeatable).")
@click.option("--metadata", default=None, metavar="JSON", help="Replace the metadata (a JSON object).")
@session_option
@model_options(UpdateData, skip=("memory_id", "content", "tags", "metadata", "session_id", "authorized"))
@json_option
def update(
    obj: CliContext,
    memory_id: int,
    text: str | None,
    file: str | None,
    tags: tuple[str, ...],
    metadata: str | None,
    session: str | None,
    **fields: Any,
) -> None:
    """Change a memory (new version); a change that changes nothing writes nothing.

    Example: ledger update 12 "The staging API listens on port 8081" --expected-version 1
    """
    from fact_ledger.ledger.log.events import AUTH_USER

    if fields.get("turn") is not None and not session and not obj.app.is_working(memory_id):
        turn_needs_session(fields["turn"], session)  # a working note's revision takes its turn alone
    data = UpdateData.parse(
        {
            **fields,
            "memory_id": memory_id,
            "content": content_of(text, file, required=False),
            "tags": list(tags) if tags else None,
            "metadata": metadata_of(metadata),
            "session_id": session,
        }
    )
    result = obj.app.update(**data.to_kwargs(), authorization=AUTH_USER)

    def human(r: dict[str, Any]) -> None:
        if r.get("unchanged"):
            out_console.print(f"#{r['memory_id']} unchanged (still v{r['version']}): nothing written", highlight=False)
        else:
            out_console.print(f"updated #{r['memory_id']} to v{r['version']}", highlight=False)
        masked_line(r)

    emit(obj, result, human)


@click.command()
@json_option
def init(obj: CliContext) -> None:
    """Create a ledger at --db (or LEDGER_DB); an existing ledger is left as it is.

    Example: ledger init --db ~/notes/team.db
    """
    existed = not no_ledger_yet(Path(obj.settings.db))
    obj.create = True
    result = obj.app.status()
    if result.get("degraded"):  # a directory, another file, a corrupt one: never "already a ledger"
        raise obj.app.storage.unreadable()
    emit(
        obj,
        {"ok": True, "db": result["db"], "created": not existed, "events": result["events"]},
        lambda r: out_console.print(
            f"{'created' if r['created'] else 'already a ledger'}: {r['db']} ({r['events']} events)", highlight=False
        ),
    )
