"""``reinforce``, ``promote``, ``working`` and ``sweep``: conversations and the working tier."""

from __future__ import annotations

from typing import Any

import click

from fact_ledger.server.cli.output import ID, CliContext, emit, json_option, out_console
from fact_ledger.server.cli.write_lines import outcome_lines
from fact_ledger.server.schemas.admin import WorkingData

SIGNAL_CHOICES = ("user_affirmed", "tool_succeeded", "user_referenced", "contradicted")


def session_option(func: Any) -> Any:
    return click.option("--session", "session", default=None, metavar="ID", help="The conversation (session_id).")(func)


def turn_needs_session(turn: int | None, session: str | None) -> None:
    """``--turn`` says which turn of the conversation ``--session`` names: alone it named none
    and was dropped without a word (nothing stored, nothing shown). A usage error (exit 64)."""
    if turn is not None and not session:
        raise click.UsageError("--turn needs --session (the conversation the turn belongs to)")


def promoted_lines(r: dict[str, Any]) -> None:
    """What a signal or a promotion did: the score so far, or the long-term memory it became."""
    if r.get("promoted"):
        out_console.print(
            f"#{r['memory_id']} promoted to long-term #{r['promoted_to']} (score {r['score']}, {r['rule']})",
            highlight=False,
        )
        outcome_lines(r)  # a long-term write's: its claim sets, what it retracted or superseded
        return
    needed = r.get("needed", {})
    out_console.print(
        f"#{r['memory_id']} {r['signal']}: score {r['score']}/{needed.get('score')} over "
        f"{r['turns']}/{needed.get('turns')} turns (working)",
        highlight=False,
    )


@click.command()
@click.argument("memory_id", type=ID)
@click.argument("signal", type=click.Choice(SIGNAL_CHOICES))
@click.option("--turn", type=click.IntRange(min=0), required=True, help="The conversation's turn the signal came in.")
@session_option
@json_option
def reinforce(obj: CliContext, memory_id: int, signal: str, turn: int, session: str | None) -> None:
    """Record a signal about a working memory; it is promoted to long-term when the rule holds.

    Example: ledger reinforce 12 tool_succeeded --turn 4 --session conv-a
    """
    from fact_ledger.server.schemas.memory import ReinforceData

    data = ReinforceData.parse({"memory_id": memory_id, "signal": signal, "turn": turn, "session_id": session})
    emit(obj, obj.app.reinforce(**data.to_kwargs()), promoted_lines)


@click.command()
@click.argument("memory_id", type=ID)
@json_option
def promote(obj: CliContext, memory_id: int) -> None:
    """Make a working memory long-term now (it meets claims and conflicts).

    Example: ledger promote 12
    """
    from fact_ledger.ledger.log.events import AUTH_USER

    emit(obj, obj.app.promote(memory_id, authorization=AUTH_USER), promoted_lines)


@click.command()
@click.argument("session")
@json_option
def working(obj: CliContext, session: str) -> None:
    """A conversation's working set, most recently touched first.

    Example: ledger working conv-a
    """

    def human(r: dict[str, Any]) -> None:
        if not r["memories"]:
            out_console.print("[dim]no working memories[/dim]")
        for m in r["memories"]:
            sticky = " sticky" if m.get("sticky") else ""
            turn = f" turn {m['last_turn']}" if m.get("last_turn") is not None else ""
            out_console.print(
                f"[cyan]#{m['memory_id']}[/cyan] score {m.get('score', 0)}{turn}{sticky}: {m['content']}",
                highlight=False,
            )
        out_console.print(f"[dim]{len(r['memories'])} of at most {r['limit']} (sticky ones never evicted)[/dim]")

    data = WorkingData.parse({"session_id": session})  # the tool's rules: one name, non-empty, bounded
    emit(obj, obj.app.working(data.session_id), human)


@click.command()
@click.option("--dry-run", is_flag=True, help="Say what would expire or cool, record nothing.")
@json_option
def sweep(obj: CliContext, dry_run: bool) -> None:
    """The periodic pass: idle conversations' working memories expire, unused memories cool, and
    disagreements the vectors found that are one slot open a claim set.

    Example: ledger sweep --dry-run
    """

    def human(r: dict[str, Any]) -> None:
        expired, cooled = len(r["expired_sessions"]), len(r["cooled"])
        said = (
            f"{expired} idle conversation(s) would expire and {cooled} memory(ies) would cool"
            if r["dry_run"]
            else f"{expired} idle conversation(s) expired and {cooled} memory(ies) cooled"
        )
        out_console.print(said, highlight=False)
        opens = "would open" if r["dry_run"] else "opened"
        for left, right in r.get("meaning_sets", ()):
            out_console.print(f"  {opens} a claim set for #{left} and #{right} (one slot, found by meaning)")

    emit(obj, obj.app.sweep(dry_run=dry_run), human)
