"""Trust labels: how much a memory's source is believed, and what protection it gets."""

from __future__ import annotations

from fact_ledger.ledger.log.events import AUTH_USER

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


def effective_trust(source_type: str, confirmed_via: str) -> int:
    """The trust a memory is ranked and arbitrated by: a ``user_confirmed`` label counts only when
    a person gave it (the user channel); an agent that asserted it is trusted as its own word."""
    if source_type == "user_confirmed" and confirmed_via != AUTH_USER:
        return trust_of("agent_generated")
    return trust_of(source_type)


def default_confidence(source_type: str, confirmed_via: str) -> float:
    """The confidence a write that gives none is stored with: its effective trust on a 0..1
    scale. An agent's ``user_confirmed`` label got 1.0 and so out-ranked the agent's other word
    on confidence, though it ranks as that word in every other respect."""
    return effective_trust(source_type, confirmed_via) / 100


def default_protection(source_type: str, authorization: str = AUTH_USER) -> str:
    """User-confirmed facts are locked the moment they are written — when a person confirmed
    them (the user channel). From the agent channel the label stays, unlocked."""
    return "locked" if source_type == "user_confirmed" and authorization == AUTH_USER else "normal"
