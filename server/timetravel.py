"""Time travel and audit on the facade: as-of reads, timelines, audit, backup replay, archive."""

from __future__ import annotations


class TimeTravelMixin:
    """Mixed into :class:`server.app.LedgerApp`; uses its store, runner and ``_commit``."""
