"""Timestamps: one canonical text form so that ordering is a string comparison.

Every stored time is UTC ``YYYY-MM-DDTHH:MM:SS.ffffffZ``; inputs may be any ISO 8601 form
(naive times are taken as UTC).
"""

from __future__ import annotations

from datetime import UTC, datetime

from ledger.errors import InvalidInput


def format_time(dt: datetime) -> str:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now() -> str:
    return format_time(datetime.now(UTC))


def parse_time(value: str, *, field: str = "time") -> str:
    """Parse an ISO 8601 timestamp (or date) into the canonical form; refuse anything else."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be an ISO 8601 timestamp", field=field)
    text = value.strip()
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(f"{field} is not an ISO 8601 timestamp: {text[:40]!r}", field=field) from None
    if not 1 <= dt.year <= 9999:
        raise InvalidInput(f"{field} is out of range", field=field)
    return format_time(dt)


def to_datetime(canonical: str) -> datetime:
    return datetime.fromisoformat(canonical)
