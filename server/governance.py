"""Governance on the facade: arbitration, confirmation, retirement, supersession, conflicts."""

from __future__ import annotations


class GovernanceMixin:
    """Mixed into :class:`server.app.LedgerApp`; uses its store, runner and ``_commit``."""
