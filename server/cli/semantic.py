"""``ledger reembed`` and ``ledger notices``: the vectors read model and its notices."""

from __future__ import annotations

from typing import Any

import click

from fact_ledger.ledger.disagree import NOTICE_LISTINGS
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.cli.output import ID, CliContext, counted, emit, json_option, out_console, progress_bar


@click.command()
@click.option("--rebuild", is_flag=True, help="Start over (cached embeddings are reused).")
@json_option
def reembed(obj: CliContext, rebuild: bool) -> None:
    """Fill missing vectors, or move them to the configured model (batched, resumable).

    Example: LEDGER_EMBEDDING_MODEL=multilingual-e5-small ledger reembed
    """
    with progress_bar(obj, "reembed") as progress:
        result = obj.app.reembed(progress, rebuild=rebuild)
    emit(
        obj,
        result,
        lambda r: out_console.print(
            f"vectors for {counted(r['memories'], 'memory', 'memories')} "
            f"({counted(r['embedded'], 'passage')} embedded, {r['cached']} from the cache"
            f"{_contexts(r['context_embedded'])}) "
            f"with {r['model']} in {r['seconds']} s; {r['new_notices']} new notices; lag {r['lag']}",
            highlight=False,
        ),
    )


def _contexts(embedded: int) -> str:
    """The context passages embedded, when there were any (they are counted apart: a memory's
    own passages and its sections are what ``embedded`` and ``cached`` share)."""
    return f", {counted(embedded, 'context passage')} embedded" if embedded else ""


@click.command()
@click.option("--state", default="open", show_default=True, type=click.Choice(NOTICE_LISTINGS))
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 200))
@click.option("--dismiss", "dismiss", type=ID, default=None, help="Dismiss this notice.")
@click.option("--resolve", "resolve", type=ID, default=None, help="Mark this notice resolved.")
@json_option
def notices(obj: CliContext, state: str, limit: int, dismiss: int | None, resolve: int | None) -> None:
    """Semantic notices: memories close in meaning that say different things (advice, not conflicts).

    Example: ledger notices --dismiss 4
    """
    if dismiss and resolve:  # it dismissed the one and said nothing of the other
        raise click.UsageError("give one of --dismiss ID or --resolve ID")
    if dismiss or resolve:
        result = obj.app.review_notice(
            dismiss or resolve or 0, "dismissed" if dismiss else "resolved", authorization=AUTH_USER
        )
        emit(obj, result, lambda r: out_console.print(f"notice {r['notice']['notice_id']}: {r['notice']['state']}"))
        return
    emit(obj, obj.app.notices(state=state, limit=limit), _notice_lines)


def _notice_lines(r: dict[str, Any]) -> None:
    from fact_ledger.projections.notices import summary

    if not r["notices"]:
        out_console.print("[dim]no notices[/dim]")
    for n in r["notices"]:
        out_console.print(
            f"[cyan]#{n['notice_id']}[/cyan] {n['kind']} ({n['state']}, cosine {n['similarity']}): {summary(n)}",
            highlight=False,
        )
        for side in ("left", "right"):
            out_console.print(f"  #{n[side]['memory_id']} {n[side]['content']}", highlight=False)
