"""Confirmations that only an agent asserted: ``user_confirmed`` memories whose confirmation did
not come through a user channel (the doctor warns about them; the overview counts them)."""

from __future__ import annotations

from typing import Any

from fact_ledger.projections import memories as mem


def agent_asserted_confirmations(conn: Any, scope: tuple[str, ...] | None = None) -> int:
    """user_confirmed memories whose confirmation only an agent asserted (no user channel)."""
    return agent_asserted(mem.active_counts(conn, scope))


def agent_asserted(active: list[tuple[str, str, str, int]]) -> int:
    return sum(n for _, source_type, via, n in active if source_type == "user_confirmed" and via != "user_channel")
