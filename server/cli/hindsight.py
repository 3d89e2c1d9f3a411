"""CLI commands for hindsight: the health report, applying and undoing a suggestion, what-if.

As every governance command, ``apply`` and ``undo`` run as the user channel (a person at a
terminal); ``health`` and ``whatif`` write nothing.
"""

from __future__ import annotations

from typing import Any

import click

from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.cli.output import (
    CliContext,
    counted,
    emit,
    in_command_words,
    json_option,
    out_console,
    relation_word,
)
from fact_ledger.server.schemas.admin import AliasData


@click.command()
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True, help="clusters to list")
@click.option("--record", is_flag=True, help="also record the pass's summary (a point of the trend)")
@json_option
def health(obj: CliContext, limit: int, record: bool) -> None:
    """The memory health report: contradiction clusters with a suggested settlement each,
    duplicates, superseded and stale ratios, recent changes. Writes nothing unless --record.

    Example: ledger health --limit 5
    """
    if record:
        obj.app.record_health()
    emit(obj, obj.app.health(limit), _health_lines)


def _health_lines(r: dict[str, Any]) -> None:
    dup = r["duplicates"]
    out_console.print(
        f"{r['cluster_count']} contradiction cluster(s), {counted(r['open_members'], 'memory', 'memories')} in them, "
        f"{r['needs_person']} need a person"
    )
    for c in r["clusters"]:
        claim = c["claim"]
        out_console.print(
            f"\n[bold]conflict {c['conflict_id']}[/bold] {claim['subject']} · {relation_word(claim)}: "
            f"{counted(c['member_count'], 'memory', 'memories')}, {counted(c['value_count'], 'value')}",
            highlight=False,
        )
        for v in c["values"]:
            lead = " [green]← leader[/green]" if c["leader_id"] in v["memory_ids"] else ""
            ids = ", ".join(f"#{i}" for i in v["memory_ids"])
            out_console.print(f"  {v['value']}  ({ids}; {', '.join(v['sources'])}){lead}", highlight=False)
        s = c["suggestion"]
        said = in_command_words(s["explanation"], c["conflict_id"])  # the command, not the MCP call
        out_console.print(f"  suggestion {s['suggestion_id']}: {said}", highlight=False)
        if s["kind"] == "settle":
            out_console.print(f"  apply with: ledger apply {s['suggestion_id']}", highlight=False)
    out_console.print(
        f"\nduplicates: {dup['absorbed_per_1000_writes']} absorbed per 1,000 writes "
        f"({dup['exact_absorbed']} exact, {dup['restatements_absorbed']} restated); "
        f"{dup['near_group_count']} near-duplicate group(s)",
        highlight=False,
    )
    out_console.print(
        f"superseded/retired share of hot memories: {r['superseded_ratio']:.1%} "
        f"({r['superseded']} superseded, {r['retired']} retired of {r['hot']}); "
        f"stale (cooled): {r['stale']} ({r['stale_ratio']:.1%} of active)",
        highlight=False,
    )
    if r.get("find_latency_ms"):
        f = r["find_latency_ms"]
        out_console.print(
            f"find latency (this process): p50 {f['p50']} ms, p95 {f['p95']} ms over {f['n']}", highlight=False
        )
    for a in r.get("aliases", []):
        out_console.print(
            f"alias? {a['alias']} → {a['canonical']}: {'; '.join(a['reasons'])} "
            f"(ledger alias {a['alias']} {a['canonical']})",
            highlight=False,
        )
    for ch in r["changes"][:5]:
        undone = f", undone by {ch['undone_by']}" if ch["undone_by"] else ""
        out_console.print(
            f"change {ch['change_id']} {ch['kind']} conflict {ch['conflict_id']}{undone}", highlight=False
        )
    if r.get("trend"):
        out_console.print(
            "trend (clusters): " + " ".join(str(p.get("cluster_count", "?")) for p in r["trend"][-12:]), highlight=False
        )
    out_console.print(f"pass: {r['pass_ms']} ms", highlight=False)


@click.command(name="apply")
@click.argument("suggestion_id")
@json_option
def apply_suggestion(obj: CliContext, suggestion_id: str) -> None:
    """Apply a suggestion of the health report as one change; prints its change id.

    Example: ledger apply settle-3-5d1e8b2a2dee
    """
    emit(obj, obj.app.apply_suggestion(suggestion_id, authorization=AUTH_USER), _change_lines)


@click.command()
@click.argument("change_id")
@json_option
def undo(obj: CliContext, change_id: str) -> None:
    """Undo a change in one step (compensating events; nothing is deleted).

    Example: ledger undo 01a23322-1a23-733a-91a0-7caf4567bbf7
    """
    emit(obj, obj.app.undo(change_id, authorization=AUTH_USER), _change_lines)


def _change_lines(r: dict[str, Any]) -> None:
    ch = r["change"]
    ids = ", ".join(f"#{i}" for i in ch["superseded"])
    if ch["kind"] == "undo":
        out_console.print(
            f"change {r['change_id']}: undid {ch['undoes']}; reinstated {ids}; conflict {ch['conflict_id']} "
            f"is {r['conflict']['state'] if r.get('conflict') else 'gone'}",
            highlight=False,
        )
    else:
        out_console.print(
            f"change {r['change_id']}: conflict {ch['conflict_id']} settled for #{ch['winner_id']}; superseded {ids}",
            highlight=False,
        )
        out_console.print(f"undo with: ledger undo {r['change_id']}", highlight=False)


@click.command()
@click.argument("alias")
@click.argument("canonical")
@click.option("--reject", is_flag=True, help="refuse (or undo) the alias instead")
@json_option
def alias(obj: CliContext, alias: str, canonical: str, reject: bool) -> None:
    """Accept an entity alias (ALIAS names the same person or thing as CANONICAL), or --reject it.

    Example: ledger alias 张工 张伟
    """
    data = AliasData.parse({"alias": alias, "canonical": canonical, "authorized": True})  # the tool's limits
    call = obj.app.reject_entity_alias if reject else obj.app.accept_entity_alias
    emit(obj, call(data.alias, data.canonical, authorization=AUTH_USER), _alias_line)


def _alias_line(r: dict[str, Any]) -> None:
    word = "is now an alias of" if r["accepted"] else "is not"
    out_console.print(f"{r['alias']} {word} {r['canonical']} (position {r['position']})", highlight=False)


@click.command()
@click.option("--rules", "rules", default=None, help="the five rules in another order, comma-separated")
@click.option("--auto-settle", is_flag=True, help="also list the sets the policy auto_settle would settle")
@json_option
def whatif(obj: CliContext, rules: str | None, auto_settle: bool) -> None:
    """Replay every claim set under another rule order (or policy) and list the sets whose leader
    or settlement would change. Writes nothing.

    Example: ledger whatif --rules protection,source_type,event_time,confidence,ingest_time
    """
    emit(obj, obj.app.whatif(rules, auto_settle), _whatif_lines)


def _whatif_lines(r: dict[str, Any]) -> None:
    out_console.print(f"rule order: {', '.join(r['rule_order'])}", highlight=False)
    out_console.print(f"{len(r['changed'])} of {r['sets_checked']} claim set(s) would change", highlight=False)
    for c in r["changed"]:
        claim = c["claim"]
        now, then = c["now"], c["whatif"]
        head = f"conflict {c['conflict_id']} ({c['state']}) {claim['subject']} · {claim['attribute']}"
        if c["change"] == "settlement":
            line = f"settled for #{c['winner_id']}; would lead: #{then['leader_id']} by {then['rule']}"
        elif c["change"] == "would_settle":
            line = f"auto_settle would settle it for #{c['would_settle_for']} by {then['rule']}"
        else:
            line = f"leader #{now['leader_id']} by {now['rule']} → #{then['leader_id']} by {then['rule']}"
        out_console.print(f"{head}: {line}", highlight=False)
        for reason in then["reasons"][-1:]:
            out_console.print(f"  {reason}", highlight=False)
