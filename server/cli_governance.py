"""CLI commands for governance: conflicts, compare and the governance actions."""

from __future__ import annotations
