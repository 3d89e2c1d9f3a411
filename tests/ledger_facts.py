"""What the pure decisions in ``ledger/`` read about a memory, built for tests: one current,
unprotected agent memory unless a test says otherwise."""

from __future__ import annotations

from fact_ledger.ledger.facts import MemoryFacts


def memory_facts(n: int, **kw: object) -> MemoryFacts:
    """Memory ``n`` (stream ``m<n>``, version 1, active, agent_generated), with ``kw`` over it."""
    base: dict[str, object] = {
        "memory_id": n,
        "stream_id": f"m{n}",
        "version": 1,
        "protection": "normal",
        "source_type": "agent_generated",
        "status": "active",
    }
    return MemoryFacts(**{**base, **kw})  # type: ignore[arg-type]
