"""One rendering of a memory, whichever read model it came from: the current one (``find``,
``read``, the governance views) or the timeline (the same answers as of a point)."""

from __future__ import annotations

from typing import Any

from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.ledger.trust import effective_trust
from fact_ledger.projections.memory_row import MemoryRow


def memory_view(
    row: MemoryRow,
    *,
    conflict_ids: list[int],
    score: float | None = None,
    status: str | None = None,
    detail: bool = False,
) -> dict[str, Any]:
    """A memory as every answer shows it, current or as of a point (``find``, ``read``, the
    governance views): ``conflict_ids`` are the unresolved conflicts it is in
    (:func:`projections.conflicts.queries.unresolved_memberships`), ``status`` its lifecycle at
    an as-of world time when that differs from the recorded one, ``detail`` adds what ``read``
    shows beyond ``find`` (a result carries ``valid_to`` only once its fact has ended)."""
    view: dict[str, Any] = {
        "memory_id": row.memory_id,
        "subject": row.subject,
        "content": row.content,
        "tags": list(row.tags),
        "source_type": row.source_type,
        # the trust arbitration and ranking use: an agent's "user_confirmed" is its own word's
        # (a row of the time-travel states does not keep who confirmed: its label's trust)
        "trust": effective_trust(row.source_type, getattr(row, "confirmed_via", AUTH_USER)),
        "confidence": row.confidence,
        "protection": row.protection,
        "status": row.status if status is None else status,
        "event_time": row.event_time,
        "recorded_at": row.recorded_at,
        "version": row.version,
        "source_ref": row.source_ref,
        "conflict_ids": conflict_ids,
    }
    if score is not None:
        view["score"] = score
    if detail:
        view.update(metadata=row.metadata, superseded_by=row.superseded_by, workspace=row.workspace)
    if detail or row.valid_to is not None:  # a result says so when its fact stopped holding
        view["valid_to"] = row.valid_to
    return view
