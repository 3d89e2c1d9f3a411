"""What a write did, after its first line: what it superseded, the claim sets it joined, what it
resembles, retracted or brought back, and its notices. ``remember`` and ``promote`` (a note that
becomes a long-term memory is a long-term write) print the same lines, from the same answer."""

from __future__ import annotations

from typing import Any

from fact_ledger.server.app.writes import CANCELLATION_NOTICE, ENDED_NOTICE
from fact_ledger.server.cli.output import out_console, relation_word


def outcome_lines(r: dict[str, Any]) -> None:
    writer = r.get("promoted_to") or r.get("memory_id")  # a promoted note's: its long-term memory
    superseded = r.get("superseded", [])  # a later value settled its set (policy settle_changes or auto_settle)
    if writer in superseded:  # the writer itself: an older value that arrived late
        leaders = sorted({c["leader_id"] for c in r.get("conflicts", ()) if c.get("leader_id")})
        by = f" by #{', #'.join(map(str, leaders))}" if leaders else ""
        out_console.print(f"  arrived late: superseded on arrival{by}, which states a later value", highlight=False)
    if others := [m for m in superseded if m != writer]:
        out_console.print(f"  supersedes {', '.join(f'#{m}' for m in others)}", highlight=False)
    for c in r.get("conflicts", ()):
        claim, verdict = c["claim"], c["verdict"]
        outcome = (
            "manual review"
            if verdict["winner_id"] is None or verdict["manual_review"]
            else f"#{verdict['winner_id']} leads by {verdict.get('rule')}"
        )
        # the value is this write's own: beside another leader it read as the leader's
        out_console.print(
            f"  [yellow]conflict {c['conflict_id']}[/yellow] ({c['member_count']} members): "
            f"{claim['subject']} {relation_word(claim)}: #{writer} says '{claim['value']}' → {outcome}",
            highlight=False,
        )
    unlisted = r.get("conflicts_total", 0) - len(r.get("conflicts", ()))
    if unlisted > 0:
        out_console.print(f"  and {unlisted} more conflict(s): ledger conflicts")
    if r.get("near_duplicates"):
        similar = ", ".join(f"#{d['memory_id']} ({d['similarity']:.2f})" for d in r["near_duplicates"])
        out_console.print(f"  similar to {similar}", highlight=False)
    if r.get("retracted"):
        out_console.print(f"  retracted {', '.join(f'#{m}' for m in r['retracted'])}", highlight=False)
    if r.get("reinstated"):  # what the retracted memory had replaced holds again
        out_console.print(
            f"  reinstated {', '.join(f'#{m}' for m in r['reinstated'])} (what it had replaced holds again)",
            highlight=False,
        )
    candidates = r.get("retraction_candidates", ())
    if candidates:  # a cancellation or denial that matched, protected or several: none retracted
        out_console.print("  none retracted; name the one it ends with --retracts ID:")
        for c in candidates:
            out_console.print(f"    #{c['memory_id']} {c['content']}", highlight=False)
    # the agent's notice of those candidates (ref_id + retracts) is what the lines above say to a person
    told = {notice.format(n=len(candidates)) for notice in (CANCELLATION_NOTICE, ENDED_NOTICE)} if candidates else set()
    for notice in r.get("notices", ()):  # what the JSON answer tells an agent, told to the person too
        if notice not in told:
            out_console.print(f"  [yellow]{notice}[/yellow]", highlight=False)
