"""How a write's reply ranks the claim sets it opened or joined.

A reply names at most :data:`MAX_REPORTED` sets. The ones where the writer's memory does not
lead come first (its claim is contested and loses for now: the agent should know), then the
older sets before the newer. Each set names one ``other`` memory to look at: the leader when
that is someone else, otherwise the best-ranked member that is not the writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_REPORTED = 5


def other_side(ranking: Sequence[int], leader_id: int | None, mine: int) -> int | None:
    """The member a reply points the writer to: the leader, or the best other member when the writer leads."""
    if leader_id is not None and leader_id != mine:
        return leader_id
    return next((m for m in ranking if m != mine), None)


def rank_for_reply(
    collisions: Sequence[dict[str, Any]], mine: int, limit: int = MAX_REPORTED
) -> tuple[list[dict[str, Any]], int]:
    """The sets to show (each with ``conflict_id`` and ``leader_id``), best first, and how many there were."""
    ordered = sorted(collisions, key=lambda c: (c["leader_id"] == mine, c["conflict_id"]))
    return ordered[:limit], len(ordered)
