"""CLI commands for time travel, audit and the backup: timeline, audit, archive, replay-backup.

A person at a terminal is the user channel, so ``replay-backup --apply`` passes
``authorization="user_channel"`` (the MCP tool needs ``authorized: true`` for the same thing).
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.markup import escape

from fact_ledger.ledger.log.events import AUTH_USER, current_type
from fact_ledger.ledger.retention import MAX_RETENTION_DAYS
from fact_ledger.server.cli.output import (
    ID,
    CliContext,
    bad_line_details,
    counted,
    cursor_option,
    emit,
    json_option,
    next_page_line,
    out_console,
    progress_bar,
)
from fact_ledger.server.schemas.admin import AuditData


@click.command()
@click.option("--apply", "apply", is_flag=True, help="Append the events (default: dry run, nothing written).")
@click.option(
    "--batch-size", default=500, show_default=True, type=click.IntRange(1, 100_000), help="Events per transaction."
)
@json_option
def replay_backup(obj: CliContext, apply: bool, batch_size: int) -> None:
    """Replay the JSONL backup written while the database was unreachable.

    Each write is decided again against the log as it is now (docs/teams.md); dry run by
    default; idempotent; bad lines are skipped and reported; the file is kept.

    Example: ledger replay-backup && ledger replay-backup --apply
    """
    with progress_bar(obj, "replay") as progress:
        result = obj.app.replay_backup(
            dry_run=not apply, authorization=AUTH_USER if apply else "", progress=progress, batch_size=batch_size
        )

    def human(r: dict[str, Any]) -> None:
        done = f"would append {r['to_apply']}" if r["dry_run"] else f"appended {r['appended']}"
        # None: the database could not be read, so which events it already holds is not known.
        present = "unknown (database unreadable)" if r["already_present"] is None else r["already_present"]
        out_console.print(
            f"{r['path']}: {r['events']} events in {r['commands']} commands; {done}, "
            f"already present {present}, bad lines {r['bad_total']}",
            highlight=False,
        )
        bad_line_details(r)
        if not r["dry_run"] and r["replayed"]:  # each write decided again against the log as it is now
            out_console.print(
                f"replayed {r['replayed']} write(s): {r['as_backed_up']} as backed up, "
                f"{r['decided_anew']} decided anew, {r['refused']} refused",
                highlight=False,
            )
            for refusal in r["refusals"]:
                out_console.print(f"  line {refusal['line']} ({refusal['op']}): {refusal['error']}")
        if r["dry_run"] and r["to_apply"]:
            out_console.print("run again with --apply to append them")

    emit(obj, result, human)


@click.command()
@click.argument("memory_id", required=False, type=ID)
@click.option("--subject", default=None, help="Every memory about this subject instead of one chain.")
@click.option("--as-of-recorded", default=None, help="As the ledger knew it at this time or position.")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 500), help="Intervals per page.")
@cursor_option
@json_option
def timeline(
    obj: CliContext,
    memory_id: int | None,
    subject: str | None,
    as_of_recorded: str | None,
    limit: int,
    cursor: str | None,
) -> None:
    """Validity intervals over event time (a memory's supersession chain, or a subject).

    Example: ledger timeline --subject /api/foo
    """
    result = obj.app.timeline(
        subject=subject, memory_id=memory_id, as_of_recorded=as_of_recorded, limit=limit, cursor=cursor
    )

    def human(r: dict[str, Any]) -> None:
        if not r["intervals"]:  # an empty answer said nothing at all: a person could not tell it ran
            hint = " (a subject is what memories were stored under, --subject; ledger find searches the text)"
            where = f"memory #{memory_id}" if memory_id is not None else f"the subject {subject!r}{hint}"
            out_console.print(f"[dim]no intervals for {escape(where)}[/dim]")
        for i in r["intervals"]:
            until = i["valid_to"] or "…"
            after = f" → #{i['superseded_by']}" if i["superseded_by"] else ""
            out_console.print(
                f"[cyan]#{i['memory_id']}[/cyan] {i['valid_from']} – {until} ({i['status']}{after})", highlight=False
            )
            out_console.print(f"  {i['content']}", highlight=False)
        next_page_line(r)

    emit(obj, result, human)


@click.command()
@click.option("--since", default=None, help="Recorded at or after (ISO 8601).")
@click.option("--until", default=None, help="Recorded at or before (ISO 8601).")
@click.option("--memory-id", default=None, type=ID, help="Events about this memory.")
@click.option("--actor", default=None, help="Events by this actor (client or client:agent).")
@click.option("--type", "type_", default=None, help="Events of this type, e.g. Superseded.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000))
@cursor_option
@json_option
def audit(
    obj: CliContext,
    since: str | None,
    until: str | None,
    memory_id: int | None,
    actor: str | None,
    type_: str | None,
    limit: int,
    cursor: str | None,
) -> None:
    """Who recorded what, when: the event log, newest first, filtered.

    Example: ledger audit --memory-id 12 --limit 20
    """
    data = AuditData.parse(  # the tool's model: an unknown --type is refused
        {
            "since": since,
            "until": until,
            "memory_id": memory_id,
            "actor": actor,
            "type": type_,
            "limit": limit,
            "cursor": cursor,
        }
    )
    result = obj.app.audit(**data.to_kwargs())

    def human(r: dict[str, Any]) -> None:
        if not r["events"]:
            out_console.print("[dim]no events match[/dim]")
        for e in r["events"]:
            about = f" #{e['memory_id']}" if e.get("memory_id") is not None else ""  # which memory it concerns
            out_console.print(
                f"[cyan]{e['position']}[/cyan] {e['recorded_at']} {e['actor'] or '-'} {e['type']}{about} "
                f"(event time {e['event_time']})",
                highlight=False,
            )
            said = _said(e.get("payload") or {}, e["type"])
            if said:
                out_console.print(f"  {said}", highlight=False)
        next_page_line(r)

    emit(obj, result, human)


@click.command()
@click.option("--dry-run", is_flag=True, help="Only count what would be archived.")
@click.option(
    "--older-than-days",
    default=None,
    type=click.IntRange(min=0, max=MAX_RETENTION_DAYS),
    help="Inactive for longer than this (default: retention_days, 90).",
)
@json_option
def archive(obj: CliContext, dry_run: bool, older_than_days: int | None) -> None:
    """Move long-inactive (retired/superseded) memories out of the hot read model; events stay.

    Example: ledger archive --dry-run
    """
    with progress_bar(obj, "archive") as progress:
        result = obj.app.archive(dry_run=dry_run, older_than_days=older_than_days, progress=progress)
    emit(
        obj,
        result,
        lambda r: out_console.print(
            f"{counted(r['candidates'], 'memory', 'memories')} would be archived"
            if r["dry_run"]
            else f"archived {counted(r['archived'], 'memory', 'memories')}"
        ),
    )


_UNSAID = frozenset({"memory_id", "memory", "content_hash"})  # ids and digests the line already names
_SAID_CHARS = 80


def _as_json(value: Any) -> str:
    """``value`` written as JSON reads, its texts as they came: escaped for rich already, so not
    escaped again (json.dumps doubled their backslashes, and "\\[/]" became a tag: a traceback)."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_as_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f'"{k}": {_as_json(v)}' for k, v in value.items()) + "}"
    return json.dumps(value)


def _said(payload: dict[str, Any], event_type: str = "") -> str:
    """What an event recorded, as a person reads it: each field given (``subject: deploys ·
    reason: …``), long values cut; every field of an event shows, including one added later.
    An erasure's cleared rows are said as their count and positions (``--json`` has each row)."""
    parts = []
    if current_type(event_type) == "Erased" and isinstance(payload.get("rows"), list):
        payload = dict(payload)
        parts.append(_erasure(payload.pop("rows"), payload.get("memory_id")))
    for key, value in payload.items():
        if key in _UNSAID or value in (None, "", [], {}, False):
            continue
        text = value if isinstance(value, str) else _as_json(value)
        parts.append(f"{key}: {text if len(text) <= _SAID_CHARS else text[: _SAID_CHARS - 1] + '…'}")
    return " · ".join(parts)


_POSITIONS_SAID = 5


def _erasure(rows: list[Any], memory_id: Any) -> str:
    """``erased #4: 2 rows cleared (positions 3, 4)``: which memory and how much of the log its
    erasure cleared. Each row's event id and seal (a UUID and a digest, cut at 80 characters in
    the middle of the first row) tell a person nothing; ``verify`` checks them."""
    positions = [r["position"] for r in rows if isinstance(r, dict) and "position" in r]
    shown = ", ".join(str(p) for p in positions[:_POSITIONS_SAID])
    if len(positions) > _POSITIONS_SAID:
        shown += f" and {len(positions) - _POSITIONS_SAID} more"
    which = f"erased #{memory_id}: " if memory_id is not None else "erased: "
    where = f" ({'position' if len(positions) == 1 else 'positions'} {shown})" if positions else ""
    return f"{which}{counted(len(rows), 'row')} cleared{where}"
