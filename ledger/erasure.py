"""Erasable fields, their salted seal, and the check that every cleared row is accounted for.

A row whose type carries text a person may need gone (a memory's content, subject, tags,
source_ref, claims, metadata and content hash; a claim set's subject, attribute and values; a
judgment's rationale) is *sealed* when it is appended: the hash chain covers the payload without
those fields plus ``seal = sha256(salt || canonical bytes of the erasable fields)``, and the salt
(16 random bytes) is kept in the row beside them. Erasing the row replaces the erasable values by
placeholders and clears the salt in one statement: the seal, and with it the chain, still
verifies, and the seal cannot be guessed back from a short secret because its salt is gone.

Rows written before sealing existed (``seal`` empty) hash their whole payload as before; they
can only be erased after ``ledger migrate --seal`` re-seals the log (:func:`reseal_rows`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from typing import Any

import msgspec

from fact_ledger.ledger.log.events import Event, MemoryRecorded, WorkingNoted, canonical_json, current_type

PLACEHOLDER = "[erased]"
SETTLED_BY_ERASURE = "erased"  # the reason a claim set records when an erased member leaves it


def _all_but(cls: type[Event], public: tuple[str, ...]) -> tuple[str, ...]:
    """Every field of ``cls`` but the ``public`` ones: a field added to a memory's event (what a
    writer gave, like ``remember``'s ``reason``) is erased with the memory unless it is declared
    public here. The seal's bytes do not depend on this order (canonical JSON sorts keys)."""
    return tuple(f for f in cls.__struct_fields__ if f not in public)


# What a memory's own event keeps after an erasure: ids, trust, links, the conversation's id.
_MEMORY_PUBLIC: tuple[str, ...] = ("memory", "source_type", "confidence", "protection", "ref", "retracts")
_MEMORY_PUBLIC += ("authorization", "session", "turn", "promoted_from")
_NOTE_PUBLIC = ("memory", "session", "source_type", "confidence", "turn", "sticky", "authorization")

# Top-level erasable keys per (current) type; ``members`` of a claim set keep their memory ids,
# only their values go.
ERASABLE: dict[str, tuple[str, ...]] = {
    "MemoryRecorded": _all_but(MemoryRecorded, _MEMORY_PUBLIC),
    "MemoryUpdated": ("content", "subject", "tags", "metadata", "content_hash"),
    "DuplicateSighted": ("source_ref",),
    "Restated": ("content", "source_ref"),  # a restatement's own words (ledger.restatement)
    "ClaimCollided": ("subject", "attribute", "key", "verdict"),
    "JudgmentSubmitted": ("rationale",),
    "WorkingNoted": _all_but(WorkingNoted, _NOTE_PUBLIC),
    "WorkingRevised": ("content", "subject", "tags", "metadata", "content_hash"),
}
_MEMBER_FIELDS = ("value", "norm")


def split(type_: str, payload: str) -> tuple[str, bytes | None]:
    """The payload without its erasable fields (canonical JSON text) and the erasable fields'
    canonical bytes (None when the type or this payload has none)."""
    keys = ERASABLE.get(current_type(type_))
    if not keys:
        return payload, None
    doc: dict[str, Any] = msgspec.json.decode(payload)
    erasable = {k: doc.pop(k) for k in keys if k in doc}
    if "members" in doc and current_type(type_) == "ClaimCollided":  # ids stay public, values not
        members = [dict(m) for m in doc["members"]]
        erasable["members"] = [[m.pop(f, None) for f in _MEMBER_FIELDS] for m in members]
        doc["members"] = members
    if not erasable:
        return payload, None
    return canonical_json(doc).decode(), canonical_json(erasable)


def new_salt() -> str:
    return os.urandom(16).hex()


def seal_of(salt: str, erasable: bytes) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + erasable).hexdigest()


def _placeholder(value: Any) -> Any:
    if isinstance(value, list):
        return []
    return {} if isinstance(value, dict) else PLACEHOLDER


def redact(type_: str, payload: str) -> str:
    """The payload with every erasable value replaced by its placeholder (``[erased]`` for text,
    empty for lists and maps): what an erased row keeps. Its public part is unchanged."""
    keys = ERASABLE.get(current_type(type_))
    if not keys:
        return payload
    doc: dict[str, Any] = msgspec.json.decode(payload)
    for k in keys:
        if k in doc:
            doc[k] = _placeholder(doc[k])
    if "members" in doc and current_type(type_) == "ClaimCollided":
        doc["members"] = [{**m, **{f: PLACEHOLDER for f in _MEMBER_FIELDS if f in m}} for m in doc["members"]]
    return msgspec.json.encode(doc).decode()  # the stored key order, so only the values change


def is_redacted(type_: str, payload: str) -> bool:
    return redact(type_, payload) == payload


class Cleared(msgspec.Struct, frozen=True):
    """A row found erased while verifying: its position, event id and seal."""

    position: int
    event_id: str
    seal: str


def unaccounted(cleared: Iterable[Cleared], covered: dict[str, str]) -> tuple[int, str] | None:
    """The first cleared row no ``Erased`` event names (by event id) with its seal:
    (position, why), else None."""
    for row in sorted(cleared, key=lambda c: c.position):
        named = covered.get(row.event_id)
        if named is None:
            return row.position, f"event at position {row.position} was erased without an Erased event"
        if named != row.seal:
            return row.position, f"event at position {row.position} does not match the digest its Erased event names"
    return None
