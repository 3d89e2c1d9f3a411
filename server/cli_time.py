"""CLI commands for time travel and audit: replay-backup and related tooling."""

from __future__ import annotations
