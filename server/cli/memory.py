"""``remember``, ``find``, ``read`` and ``history``: the memory commands."""

from __future__ import annotations

from typing import Any

import click

from fact_ledger.ledger.ids import ascii_digits
from fact_ledger.ledger.trust import SOURCE_TYPES
from fact_ledger.projections.workspaces import empty_notice
from fact_ledger.server.cli.model_options import model_options
from fact_ledger.server.cli.output import (
    ID,
    CliContext,
    as_of_line,
    cursor_option,
    emit,
    json_option,
    masked_line,
    next_page_line,
    out_console,
    print_memories,
)
from fact_ledger.server.cli.working import session_option, turn_needs_session
from fact_ledger.server.cli.write_lines import outcome_lines
from fact_ledger.server.console.views import version_changes
from fact_ledger.server.schemas.memory import FindData, ReadData, RememberData

# remember's fields whose CLI form is the command's own (the rest are generated from the model)
_REMEMBER_OWN = (
    "content",
    "source_type",
    "tags",
    "metadata",
    "ref_id",
    "retracts",
    "claims",
    "authorized",
    "session_id",
)


@click.command()
@click.argument("text", required=False)
@click.option("--file", "file", default=None, metavar="FILE", help="Read the content from FILE ('-': stdin).")
@click.option(
    "--source-type",
    default="user_confirmed",
    type=click.Choice(SOURCE_TYPES),
    help="Where the fact comes from (a person at the CLI: user_confirmed).",
)
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--metadata", default=None, metavar="JSON", help="A JSON object stored with the memory.")
@click.option(
    "--retracts",
    "retracts",
    type=ID,
    default=None,
    metavar="ID",
    help='This fact cancels memory ID, which is retired ("cancel the Wednesday meeting").',
)
@session_option
@model_options(RememberData, skip=_REMEMBER_OWN)
@json_option
def remember(
    obj: CliContext,
    text: str | None,
    file: str | None,
    source_type: str,
    tags: tuple[str, ...],
    metadata: str | None,
    retracts: int | None,
    session: str | None,
    **fields: Any,
) -> None:
    """Record a fact (TEXT, '-' for stdin, or --file).

    Every other field of the memory tool's remember is an option of the same name
    (docs/contract.md): --subject, --event-time, --turn, --tier …

    Example: ledger remember "Deploys freeze on Fridays" --subject deploys --tag policy
    Example: git log -1 --format=%B | ledger remember - --subject release
    """
    from fact_ledger.ledger.log.events import AUTH_USER
    from fact_ledger.server.cli.input import content_of, metadata_of

    turn_needs_session(fields.get("turn"), session)
    data = RememberData.parse(
        {
            **fields,
            "content": content_of(text, file),
            "source_type": source_type,
            "tags": list(tags),
            "metadata": metadata_of(metadata),
            "ref_id": retracts,
            "retracts": retracts is not None,
            "session_id": session,
        }
    )
    result = obj.app.remember(**data.to_kwargs(), authorization=AUTH_USER)
    emit(obj, result, _remember_lines)


def _workspace_words(workspace: str) -> str:
    """Where a write went: the workspace the user's agents must share to see it (``workspace``
    in the config file, LEDGER_WORKSPACE or --workspace)."""
    return f'in workspace "{workspace}"' if workspace else 'in the default workspace ("")'


def _remember_lines(r: dict[str, Any]) -> None:
    """The new id, then what the write collided with or resembles: a person at the terminal
    learns at once what an agent reads in the JSON, instead of finding the conflict later."""
    where = _workspace_words(r.get("workspace", ""))
    if r.get("tier") == "working":
        where += f" (working, conversation {r['session_id']})"
        if r.get("evicted"):
            where += f"; evicted {', '.join(f'#{i}' for i in r['evicted'])} from the working set"
    if r.get("duplicate_of"):  # an exact duplicate: no new memory, the sighting is recorded
        out_console.print(f"already remembered as #{r['duplicate_of']} {where} (seen again)", highlight=False)
    elif r.get("restatement_of"):  # the same fact in other words: it confirms the memory that holds it
        out_console.print(
            f"restates #{r['restatement_of']} {where} (stated {r.get('support', 2)} times)", highlight=False
        )
    else:
        out_console.print(f"remembered #{r['memory_id']} {where}", highlight=False)
    masked_line(r)
    outcome_lines(r)


@click.command()
@click.argument("query")
@click.option("--tag", "tags", multiple=True, help="Only memories with this tag (repeatable).")
@cursor_option
@session_option
@model_options(FindData, skip=("query", "tags_filter", "cursor", "session_id"))
@json_option
def find(
    obj: CliContext, query: str, tags: tuple[str, ...], cursor: str | None, session: str | None, **fields: Any
) -> None:
    """Search memories (English and Chinese).

    Every other field of the memory tool's find is an option of the same name (docs/contract.md).

    Example: ledger find "staging port" --limit 3
    """
    turn_needs_session(fields.get("turn"), session)
    data = FindData.parse(
        {**fields, "query": query, "tags_filter": list(tags), "cursor": cursor, "session_id": session}
    )

    answer = obj.app.find(**data.to_kwargs())

    def human(r: dict[str, Any]) -> None:
        as_of_line(r)
        _find_hits(r["results"], query)
        empty = answer.get("workspace_empty")  # as typed, not escaped for markup: printed without it
        if empty:  # a mistyped workspace is not "no match": say it, with the name it likely meant
            notice = empty_notice(empty["workspace"], empty["nearest"])
            out_console.print(notice, style="yellow", markup=False, highlight=False)
        next_page_line(r)

    emit(obj, answer, human)


def _find_hits(results: list[dict[str, Any]], query: str) -> None:
    """One header and one short line per hit: a fact of up to 300 characters whole, a longer one
    (or its best section) as a snippet around the query; a conflicted hit says so and who leads.
    ``ledger read ID`` shows everything."""
    from fact_ledger.ledger.sections import snippet

    if not results:
        out_console.print("[dim]no memories found[/dim]")
    terms = query.split()
    for m in results:
        section = m.get("section")
        where = f" §{section['section_id']} {' › '.join(section['heading_path'])}" if section else ""
        ended = f" [dim]until {m['valid_to']}[/dim]" if m.get("valid_to") else ""  # a fact that stopped holding
        _header(m, where + ended + _conflict_mark(m))
        text = (section.get("snippet") if section else None) or m["content"]
        out_console.print(f"  {snippet(text, terms)}", highlight=False)


def _conflict_mark(m: dict[str, Any]) -> str:
    ids = m.get("conflict_ids") or []
    if not ids:
        return ""
    label = "conflict" if len(ids) == 1 else "conflicts"
    standing = m.get("standing") if isinstance(m.get("standing"), dict) else {}
    if standing.get("role") == "leader":
        role = " (leads)"
    elif standing.get("leader_id"):
        role = f" (#{standing['leader_id']} leads)"
    else:
        role = ""
    return f" [yellow]⚠ {label} {', '.join(str(i) for i in ids)}{role}[/yellow]"


def _header(m: dict[str, Any], extra: str = "") -> None:
    working = f" working:{m['session_id']}" if m.get("tier") == "working" else ""
    if m.get("pending"):  # this machine's backed-up write: no id until it replays
        meta = f"pending {m['source_type']} (in the JSONL backup: no id until it replays)"
    else:
        meta = f"#{m['memory_id']} v{m['version']} {m['source_type']} ({m['status']}){working}"
    subject = f" [bold]{m['subject']}[/bold]" if m.get("subject") else ""
    out_console.print(f"[cyan]{meta}[/cyan]{subject}{extra}", highlight=False)


@click.command()
@click.argument("memory_id", type=ID)
@click.option(
    "--sections",
    default=None,
    metavar="catalog|all|ID,ID",
    help="A long memory's sections: the catalog (default), all with their text, or these ids.",
)
@session_option
@model_options(ReadData, skip=("memory_id", "sections", "session_id"))
@json_option
def read(obj: CliContext, memory_id: int, sections: str | None, session: str | None, **fields: Any) -> None:
    """Show one memory with its links (and, for a long one, its sections).

    Every other field of the memory tool's read is an option of the same name (docs/contract.md).

    Example: ledger read 12 --as-of-event-time 2026-07-03
    """
    turn_needs_session(fields.get("turn"), session)
    chosen: str | list[int | str] | None = sections
    if sections is not None and sections not in ("catalog", "all"):
        chosen = [int(p) if ascii_digits(p.strip()) else p for p in sections.split(",")]
    data = ReadData.parse({**fields, "memory_id": memory_id, "sections": chosen, "session_id": session})
    whole = chosen in (None, "catalog")  # asked for sections: they are the text to show
    emit(obj, obj.app.read(**data.to_kwargs()), lambda r: _read_detail(r, whole=whole))


def _read_detail(r: dict[str, Any], *, whole: bool) -> None:
    """The memory, then this machine's changes to it that wait in the JSONL backup (the log
    could not take them yet): a person sees why the text is still the old one."""
    as_of_line(r)
    _memory_detail(r["memory"], whole=whole)
    for change in r.get("pending_changes", ()):
        said = change["payload"].get("content")
        what = f": {said}" if isinstance(said, str) else ""
        out_console.print(
            f"  [yellow]pending[/yellow] {change['type']} (in the JSONL backup, not in the log yet){what}",
            highlight=False,
        )


def _memory_detail(m: dict[str, Any], *, whole: bool = True) -> None:
    """One memory with its time, tags and links (what replaced it, what it retracted, conflicts);
    with ``whole`` false (sections asked for) its header without the content, then the sections;
    a short memory has none, so its content is the text to show."""
    if whole or not m.get("sections"):
        print_memories([m])
    else:
        _header(m)
    until = f" until {m['valid_to']}" if m.get("valid_to") else ""
    lines = [f"valid from {m['event_time']}{until}; recorded {m['recorded_at']}"]
    if m.get("tier") == "working":  # a provisional note: where it lives and how far it is from promotion
        sticky = ", sticky" if m.get("sticky") else ""
        lines.append(
            f"working note of conversation {m.get('session_id')}{sticky}; score {m.get('score', 0)} "
            f"(last turn {m.get('last_turn', '-')})"
            + (f"; promoted to #{m['promoted_to']}" if m.get("promoted_to") else "")
        )
    if m.get("tags"):
        lines.append("tags: " + ", ".join(m["tags"]))
    if m.get("status_reason"):
        lines.append(f"{m['status']}: {m['status_reason']}")
    links = [
        ("superseded by", [m.get("superseded_by")]),
        ("supersedes", m.get("supersedes", [])),
        ("retired by", [m.get("retired_by")]),
        ("retracts", m.get("retracts", [])),
        ("conflicts", m.get("conflict_ids", [])),
    ]
    lines += [f"{label} " + ", ".join(f"#{i}" for i in ids) for label, ids in links if any(ids)]
    for line in lines:
        out_console.print(f"  [dim]{line}[/dim]", highlight=False)
    for section in m.get("sections", []):
        path = " › ".join(section["heading_path"]) or "(no heading)"
        out_console.print(f"  [cyan]§{section['section_id']}[/cyan] {path} ({section['chars']} chars)", highlight=False)
        if "text" in section:
            out_console.print(f"    {section['text']}", highlight=False)


# how a person reads a version's changed fields (its text and status are on its own lines)
_CHANGE_LABELS = {
    "event_time": "event time",
    "valid_to": "valid to",
    "source_type": "source",
    "superseded_by": "superseded by",
}


def _change_lines(version: dict[str, Any], before: dict[str, Any] | None) -> list[str]:
    """What ``version`` changed beside its text ("event time A → B"): an update of the event time
    alone showed two identical versions. The first version shown says when it was true."""
    if before is None:
        return [f"event time {version['event_time']}"]
    return [
        f"{_CHANGE_LABELS.get(field, field)} {_shown(before[field])} → {_shown(version[field])}"
        for field in version["changed"]
        if field not in ("content", "status")
    ]


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "(none)"
    return "(none)" if value in ("", None) else str(value)


@click.command()
@click.argument("memory_id", type=ID)
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 200), help="Versions per page.")
@cursor_option
@json_option
def history(obj: CliContext, memory_id: int, limit: int, cursor: str | None) -> None:
    """Every version of a memory and the events behind it.

    Example: ledger history 12
    """

    def human(r: dict[str, Any]) -> None:
        before: dict[str, Any] | None = None
        for v in version_changes(r["versions"]):
            kinds = ", ".join(e["type"] for e in v["events"])
            out_console.print(
                f"[cyan]v{v['version']}[/cyan] {v['recorded_at']} {v['actor']} [{kinds}] ({v['status']})",
                highlight=False,
            )
            out_console.print(f"  {v['content']}", highlight=False)
            if before is None and "changed_from" in v:  # a later page: the version before is not on it
                before = {**v, **v["changed_from"]}
            changed = _change_lines(v, before)
            if changed:
                out_console.print(f"  [dim]{'; '.join(changed)}[/dim]", highlight=False)
            before = v
        next_page_line(r)

    emit(obj, obj.app.history(memory_id, limit=limit, cursor=cursor), human)
