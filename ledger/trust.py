"""Trust labels: how much a memory's source is believed, and what protection it gets."""

from __future__ import annotations

SOURCE_TRUST: dict[str, int] = {
    "user_confirmed": 100,
    "document_extracted": 70,
    "agent_generated": 45,
    "unknown": 10,
}
SOURCE_TYPES = tuple(SOURCE_TRUST)

# Confidence assumed when the caller gives none: the source's trust on a 0..1 scale.
DEFAULT_CONFIDENCE: dict[str, float] = {k: v / 100 for k, v in SOURCE_TRUST.items()}

PROTECTIONS = ("normal", "protected", "locked")
STATUSES = ("active", "superseded", "retired", "archived")


def trust_of(source_type: str) -> int:
    return SOURCE_TRUST.get(source_type, SOURCE_TRUST["unknown"])


def default_protection(source_type: str) -> str:
    """User-confirmed facts are locked the moment they are written."""
    return "locked" if source_type == "user_confirmed" else "normal"
