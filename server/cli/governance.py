"""CLI commands for governance: conflicts, compare, doctor and the governance actions.

A person at a terminal is the user channel: every governance command here passes
``authorization="user_channel"``, which is what lets a change to a locked memory through and
what makes a confirmation count as a user's (docs/contract.md ``memory_govern``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from fact_ledger.ledger.facts import CONFLICT_LISTINGS
from fact_ledger.ledger.ids import ascii_digits
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.ledger.word_diff import render
from fact_ledger.server.app.set_verdicts import memory_ref
from fact_ledger.server.cli.output import (
    ID,
    CliContext,
    counted,
    cursor_option,
    emit,
    json_option,
    next_page_line,
    out_console,
    output_path,
    pending_backup_line,
    progress_bar,
    relation_word,
)


def _verdict_lines(verdict: dict[str, Any]) -> None:
    """A verdict in words: a pair's (``compare``, ``arbitrate``: ``winner_side``) or a claim set's
    (``decided_by``: who won and by what, as the members stand now)."""
    if "winner_side" not in verdict:
        _set_verdict_lines(verdict)
    elif verdict["winner_side"] is None:
        out_console.print("[yellow]no winner[/yellow]: manual review needed")
    else:
        review = " [yellow](manual review requested)[/yellow]" if verdict["manual_review"] else ""
        out_console.print(
            f"winner: [bold]{verdict['winner_side']}[/bold] #{verdict['winner_id']} "
            f"over #{verdict['loser_id']} by {verdict.get('rule')}{review}",
            highlight=False,
        )
    for reason in verdict["reasons"]:
        out_console.print(f"  - {reason}", highlight=False)


def _set_verdict_lines(verdict: dict[str, Any]) -> None:
    out_console.print(f"verdict: {_set_outcome(verdict)}", highlight=False)


def _set_outcome(verdict: dict[str, Any]) -> str:
    """One phrase: ``#2 won by resolve_conflict``, ``#2 leads by event_time``, ``no leader: ...``."""
    decided_by, rule, winner = verdict.get("decided_by"), verdict.get("rule"), verdict.get("winner_id")
    review = " (manual review requested)" if verdict.get("manual_review") and winner is not None else ""
    judged = verdict.get("judgment")
    judgment = f"; judgment {judged['judgment_id']} says {memory_ref(judged['winner_id'])}" if judged else ""
    if decided_by in (None, "rules"):
        if winner is None:
            return f"no leader: no rule separates the best members, a person should decide{judgment}"
        return f"#{winner} leads by {rule or 'being the only member held here'}{review}{judgment}"
    if decided_by == "keep_all":
        return "all values kept (keep_all)"
    if winner is None:
        return f"settled by {decided_by}, no member won"
    by = f"{decided_by} ({rule})" if rule else decided_by
    return f"#{winner} won by {by}"


def _conflict_line(c: dict[str, Any]) -> None:
    claim = c["claim"]
    out_console.print(
        f"[cyan]conflict {c['conflict_id']}[/cyan] ({c['state']}) {claim['subject']} "
        f"{relation_word(claim)}: {c['member_count']} members, {_set_outcome(c['verdict'])}",
        highlight=False,
    )


def _memory_line(r: dict[str, Any]) -> None:
    out_console.print(
        f"#{r['memory_id']} v{r['version']} {r['status']} {r['source_type']} ({r['protection']})"
        + ("" if r.get("changed", True) else " — unchanged"),
        highlight=False,
    )


@click.command()
@click.argument("left_id", type=ID)
@click.argument("right_id", type=ID)
@json_option
def compare(obj: CliContext, left_id: int, right_id: int) -> None:
    """Arbitrate two memories without writing anything; show their word diff, closeness, each
    one's state path and reference chain.

    Example: ledger compare 12 15
    """
    emit(obj, obj.app.compare(left_id, right_id), _compare_lines)


def _compare_lines(r: dict[str, Any]) -> None:
    """The verdict, then the diff inline, the closeness, each side's state path and its chain."""
    _verdict_lines(r["verdict"])
    out_console.print(f"diff: {render(r['diff'])}", highlight=False)
    closeness = r["closeness"]
    vector = "n/a (vectors not live)" if closeness["vector"] is None else f"{closeness['vector']:.3f}"
    out_console.print(f"closeness: lexical {closeness['lexical']:.3f}, vector {vector}", highlight=False)
    for side in ("left", "right"):
        steps = " -> ".join(_step(s) for s in r["state_path"][side])
        out_console.print(f"{side} path: {steps}", highlight=False)
        chain = r["ref_chain"][side]
        links = "; ".join(f"#{c['of']} {c['relation']} #{c['memory_id']}" for c in chain) or "none"
        out_console.print(f"{side} chain: {links}", highlight=False)


def _step(step: dict[str, Any]) -> str:
    """``retired at 3, 2026-05-01T10:00:00Z (MemoryRetired, by #2, actor cli)``: the status,
    the log position and time, and the event that set it with its rule when a verdict decided."""
    said = [step.get("type", "?")]
    if "by_id" in step:
        said.append(f"by #{step['by_id']}")
    if "rule" in step:
        rule = step["rule"]
        said.append(f"rule {rule if isinstance(rule, str) else '; '.join(map(str, rule))}")
    if step.get("actor"):
        said.append(f"actor {step['actor']}")
    when = f", {step['recorded_at']}" if step.get("recorded_at") else ""
    return f"{step['status']} at {step['position']}{when} ({', '.join(said)})"


@click.command()
@click.option("--state", default="open", show_default=True, type=click.Choice(CONFLICT_LISTINGS))
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 200))
@cursor_option
@json_option
def conflicts(obj: CliContext, state: str, limit: int, cursor: str | None) -> None:
    """List conflicts between memories.

    Example: ledger conflicts --state all --limit 50
    """

    def human(r: dict[str, Any]) -> None:
        if not r["conflicts"]:
            out_console.print(f"[dim]no {state} conflicts[/dim]")
        for c in r["conflicts"]:
            _conflict_line(c)
        next_page_line(r)

    emit(obj, obj.app.conflicts(state=state, limit=limit, cursor=cursor), human)


@click.command(name="conflict")
@click.argument("conflict_id", type=ID)
@json_option
def conflict_detail(obj: CliContext, conflict_id: int) -> None:
    """Show one claim set: its members (first 20), its verdict and its judgments.

    Example: ledger conflict 3
    """

    def human(r: dict[str, Any]) -> None:
        c = r["conflict"]
        _conflict_line(c)
        for m in c["memories"]:
            out_console.print(
                f"  #{m['memory_id']} v{m['version']} {m['source_type']} {m['status']}: ", highlight=False, end=""
            )
            out_console.print(m["content"], highlight=False)
        _verdict_lines(c.get("current_verdict") or c["verdict"])
        for j in c.get("judgments", ()):
            out_console.print(
                f"judgment {j['judgment_id']}: {memory_ref(j['winner_id'])} should win — "
                f"{j['rationale'] or 'no rationale'} ({j['actor']}, {j['recorded_at']})",
                highlight=False,
            )

    emit(obj, obj.app.conflict_detail(conflict_id), human)


@click.command()
@click.argument("memory_id", type=ID)
@json_option
def confirm(obj: CliContext, memory_id: int) -> None:
    """Confirm a memory as a user: it becomes user_confirmed and locked.

    Example: ledger confirm 12
    """
    emit(obj, obj.app.confirm(memory_id, authorization=AUTH_USER), _memory_line)


@click.command()
@click.argument("memory_id", type=ID)
@json_option
def unlock(obj: CliContext, memory_id: int) -> None:
    """Unlock a protected or locked memory so agents may change it again.

    Example: ledger unlock 12
    """
    emit(obj, obj.app.unlock(memory_id, authorization=AUTH_USER), _memory_line)


@click.command()
@click.argument("memory_id", type=ID)
@click.option("--reason", default="", help="Why it is retired.")
@json_option
def retire(obj: CliContext, memory_id: int, reason: str) -> None:
    """Retire a memory (it stays in history, out of default searches).

    Example: ledger retire 12 --reason "service decommissioned"
    """
    emit(obj, obj.app.retire(memory_id, reason=reason, authorization=AUTH_USER), _memory_line)


@click.command()
@click.argument("memory_id", type=ID, required=False)
@click.option("--workspace", default=None, help="Erase every memory of this workspace instead.")
@click.option("--reason", default="", help="Why it is erased (kept in the Erased event).")
@click.option(
    "--receipt", "receipt_path", type=click.Path(dir_okay=False), default=None, help="Write the receipt here."
)
@json_option
def erase(obj: CliContext, memory_id: int | None, workspace: str | None, reason: str, receipt_path: str | None) -> None:
    """Erase a memory (or a workspace) for good: its text leaves the log, the read models, the
    caches and the backup; an Erased event and a receipt stay.

    Example: ledger erase 12 --reason "customer asked" --receipt erase-12.json
    """
    if (memory_id is None) == (workspace is None):  # a command line that names no target, or two
        raise click.UsageError("give exactly one of ID or --workspace NAME")
    receipt_file = output_path(receipt_path, "receipt") if receipt_path else None
    with progress_bar(obj, "seal") as progress:
        result = obj.app.erase(
            memory_id, workspace=workspace, reason=reason, authorization=AUTH_USER, progress=progress
        )
    if receipt_file is not None and result.get("receipt"):
        receipt = json.dumps(result["receipt"], indent=1, ensure_ascii=False) + "\n"
        try:
            receipt_file.write_text(receipt, "utf-8")
        except OSError as exc:  # the erasure is done and cannot be redone: the receipt must not be lost
            result.setdefault("notices", []).append(
                f"the receipt could not be written to {receipt_path} ({exc.strerror or exc}); "
                "it is in this answer: keep it"
            )
            if not obj.as_json:
                out_console.print_json(receipt)

    def human(r: dict[str, Any]) -> None:
        head = r["receipt"]["head"]
        out_console.print(
            f"erased {', '.join(f'#{i}' for i in r['erased'])} ({counted(r['rows'], 'row')} cleared); "
            f"Erased event at position {head['position']}, head {head['hash'][:12]}",
            highlight=False,
        )
        for notice in r.get("notices", []):
            out_console.print(f"[yellow]{notice}[/yellow]", highlight=False)

    emit(obj, result, human)


@click.command()
@click.argument("loser_id", type=ID)
@click.argument("winner_id", type=ID)
@click.option("--reason", default="", help="Why the winner replaces the loser.")
@json_option
def supersede(obj: CliContext, loser_id: int, winner_id: int, reason: str) -> None:
    """Mark LOSER as superseded by WINNER.

    Example: ledger supersede 12 15 --reason "port moved"
    """
    emit(
        obj,
        obj.app.supersede(loser_id, winner_id, reason=reason, authorization=AUTH_USER),
        lambda r: out_console.print(f"#{r['memory_id']} superseded by #{r['superseded_by']}"),
    )


@click.command()
@click.argument("conflict_id", type=ID)
@click.option("--winner", "winner_id", default=None, type=ID, help="The member that wins.")
@click.option(
    "--keep-both",
    "--keep-all",
    "keep_both",
    is_flag=True,
    help="Every member's value stands, however many (they do not really contradict).",
)
@json_option
def resolve(obj: CliContext, conflict_id: int, winner_id: int | None, keep_both: bool) -> None:
    """Resolve a conflict: a winner supersedes every member with another value, or keep all.

    Example: ledger resolve 3 --winner 15
    """
    if (winner_id is None) == (not keep_both):
        raise click.UsageError("give exactly one of --winner ID or --keep-all")
    result = obj.app.resolve_conflict(
        conflict_id, winner_id=winner_id, resolution="keep_all" if keep_both else None, authorization=AUTH_USER
    )
    emit(obj, result, lambda r: _conflict_line(r["conflict"]))


@click.command()
@click.argument("left_id", type=ID)
@click.argument("right_id", type=ID)
@click.option("--mark-conflict", is_flag=True, help="Record the pair as a conflict with the verdict.")
@click.option("--apply", "apply_", is_flag=True, help="Apply the verdict: the loser is superseded.")
@json_option
def arbitrate(obj: CliContext, left_id: int, right_id: int, mark_conflict: bool, apply_: bool) -> None:
    """Arbitrate two memories and optionally record and apply the verdict.

    Example: ledger arbitrate 12 15 --mark-conflict --apply
    """

    def human(r: dict[str, Any]) -> None:
        _verdict_lines(r["verdict"])
        if r.get("conflict_id") is not None:  # the set --mark-conflict recorded, or the one already open
            out_console.print(
                f"[cyan]conflict {r['conflict_id']}[/cyan] holds the pair (ledger conflict {r['conflict_id']})",
                highlight=False,
            )
        if r["applied"]:
            out_console.print(f"applied: #{r['verdict']['loser_id']} superseded by #{r['verdict']['winner_id']}")

    emit(
        obj,
        obj.app.arbitrate(left_id, right_id, mark_conflict=mark_conflict, apply=apply_, authorization=AUTH_USER),
        human,
    )


@click.command()
@click.argument("conflict_id", type=ID)
@click.argument("winner_id", type=ID)
@click.option("--rationale", default="", help="Why this member should win.")
@click.option(
    "--pin",
    "pins",
    multiple=True,
    metavar="ID=VERSION",
    help="The member version the judgment was made on (repeatable).",
)
@json_option
def judge(obj: CliContext, conflict_id: int, winner_id: int, rationale: str, pins: tuple[str, ...]) -> None:
    """Record a judgment on a conflict (guidance; no memory changes).

    Example: ledger judge 3 15 --rationale "newer deploy log" --pin 12=1 --pin 15=1
    """
    parsed: dict[str, int] | None = None
    if pins:
        parsed = {}
        for pin in pins:
            key, _, version = pin.partition("=")
            if not ascii_digits(key) or not ascii_digits(version):
                raise click.BadParameter(f"{pin!r} is not ID=VERSION", param_hint="--pin")
            parsed[key] = int(version)
    result = obj.app.judge(conflict_id, winner_id, rationale=rationale, pins=parsed)
    emit(
        obj,
        result,
        lambda r: out_console.print(
            f"judgment {r['judgment_id']} "
            + ("already says so (nothing recorded)" if r.get("unchanged") else "recorded")
            + f"; conflict {r['conflict']['conflict_id']} is {r['conflict']['state']}"
        ),
    )


@click.command()
@json_option
def doctor(obj: CliContext) -> None:
    """Health checks (exit 0 clean, 1 warnings, 2 critical).

    Example: ledger doctor --json
    """
    from fact_ledger.server.doctor import exit_code

    result = obj.app.doctor()

    def human(r: dict[str, Any]) -> None:
        colours = {"ok": "green", "info": "cyan", "warning": "yellow", "critical": "red"}
        for c in r["checks"]:
            out_console.print(
                f"[{colours[c['severity']]}]{c['severity']:>8}[/] {c['name']}: {c['message']}", highlight=False
            )

    emit(obj, result, human)
    sys.exit(exit_code(result["severity"]))


@click.command()
@json_option
def review(obj: CliContext) -> None:
    """Counts by status, source and workspace; conflicts; agent-only confirmations; pending backup.

    Example: ledger review --json
    """
    emit(obj, obj.app.overview(), _overview_lines)


def _counts(counts: dict[str, int], blank: str = "") -> str:
    return ", ".join(f"{name or blank} {n}" for name, n in counts.items()) or "none"


def _overview_lines(r: dict[str, Any]) -> None:
    out_console.print(f"memories: {_counts(r['by_status'])}", highlight=False)
    out_console.print(f"  active by source: {_counts(r['by_source_type'])}", highlight=False)
    out_console.print(f"  active by workspace: {_counts(r['by_workspace'], '(default)')}", highlight=False)
    c = r["conflicts"]
    out_console.print(f"conflicts: {c['open']} open, {c['judged']} judged, {c['resolved']} resolved", highlight=False)
    if r["agent_asserted_confirmations"]:  # confirmations no person was asked for: worth a look
        out_console.print(
            f"[yellow]{r['agent_asserted_confirmations']} confirmations asserted by agents[/yellow] (no user channel)",
            highlight=False,
        )
    pending_backup_line(r["pending_backup"])
