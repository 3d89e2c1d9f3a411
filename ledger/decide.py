"""Command → events decisions: pure functions, state comes in as arguments.

The facade reads what a decision needs inside the write transaction (the duplicate, the
retraction target, the current version) and hands it here; nothing in this module touches IO.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ledger.errors import Locked, VersionConflict
from ledger.events import (
    AUTH_AGENT,
    ClaimSpec,
    DuplicateSighted,
    Event,
    MemoryRemembered,
    MemoryRetired,
    MemoryUpdated,
)
from ledger.normalize import content_hash
from ledger.trust import DEFAULT_CONFIDENCE, default_protection

Decision = list[tuple[str, Event]]  # (stream_id, event) in append order


class RememberCommand(msgspec.Struct, kw_only=True):
    content: str
    subject: str = ""
    tags: tuple[str, ...] = ()
    source_type: str = "agent_generated"
    confidence: float | None = None
    event_time: str
    workspace: str = ""
    source_ref: str = ""
    ref_id: int | None = None
    retracts: bool = False
    claims: tuple[ClaimSpec, ...] = ()
    metadata: dict[str, Any] = {}
    authorization: str = ""


class MemoryFacts(msgspec.Struct, kw_only=True):
    """What a decision needs to know about an existing memory."""

    memory_id: int
    stream_id: str
    version: int
    protection: str
    source_type: str
    status: str
    workspace: str = ""


def decide_remember(
    cmd: RememberCommand,
    *,
    new_stream: str,
    duplicate: MemoryFacts | None,
    target: MemoryFacts | None,
) -> Decision:
    """A new memory, or a sighting of its exact duplicate; a retraction also retires ``target``."""
    if duplicate is not None:
        return [(duplicate.stream_id, DuplicateSighted(
            memory=duplicate.stream_id, source_type=cmd.source_type, source_ref=cmd.source_ref))]
    if cmd.retracts and target is not None and target.protection != "normal" and not cmd.authorization:
        raise Locked(f"memory {target.memory_id} is {target.protection}; retracting it needs authorized: true",
                     field="ref_id")
    confidence = cmd.confidence if cmd.confidence is not None else DEFAULT_CONFIDENCE[cmd.source_type]
    decision: Decision = [(new_stream, MemoryRemembered(
        memory=new_stream,
        content=cmd.content,
        subject=cmd.subject,
        tags=cmd.tags,
        source_type=cmd.source_type,
        confidence=confidence,
        protection=default_protection(cmd.source_type),
        source_ref=cmd.source_ref,
        ref=target.stream_id if target else None,
        retracts=cmd.retracts,
        claims=cmd.claims,
        metadata=cmd.metadata,
        content_hash=content_hash(cmd.content),
        authorization=cmd.authorization or (AUTH_AGENT if cmd.source_type == "user_confirmed" else ""),
    ))]
    if cmd.retracts and target is not None and target.status == "active":
        decision.append((target.stream_id, MemoryRetired(
            memory=target.stream_id, reason="retracted", by=new_stream,
            authorization=cmd.authorization)))
    return decision


def check_writable(memory: MemoryFacts, *, expected_version: int | None, authorization: str) -> None:
    """Optimistic concurrency and protection checks shared by every change to a memory."""
    if expected_version is not None and expected_version != memory.version:
        raise VersionConflict(
            f"memory {memory.memory_id} is at version {memory.version}, not {expected_version}",
            field="expected_version", current_version=memory.version)
    if memory.protection != "normal" and not authorization:
        raise Locked(f"memory {memory.memory_id} is {memory.protection}; this change needs authorized: true",
                     field="authorized")


def decide_update(
    memory: MemoryFacts,
    changes: dict[str, Any],
    *,
    expected_version: int | None,
    authorization: str,
) -> Decision:
    """An update; an agent-asserted change to a user-confirmed memory stops being user_confirmed."""
    check_writable(memory, expected_version=expected_version, authorization=authorization)
    fields = dict(changes)
    if "content" in fields:
        fields["content_hash"] = content_hash(fields["content"])
    if "tags" in fields:
        fields["tags"] = tuple(fields["tags"])
    downgrade = memory.source_type == "user_confirmed" and authorization == AUTH_AGENT
    if downgrade:
        fields.update(source_type="agent_generated", protection="protected", derived_from_confirmed=True)
    return [(memory.stream_id, MemoryUpdated(memory=memory.stream_id, authorization=authorization, **fields))]
