"""What a write decision knows, and the checks every write path shares.

The facade reads the facts inside the write transaction (a memory's version, protection and
status; a claim set's members) and hands them to :mod:`ledger.decide` and :mod:`ledger.govern`;
authorisation, protection and policy are checked here once, so update, retraction, retire,
supersede and arbitrate-apply cannot drift apart. Pure: no IO."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import msgspec

from fact_ledger.ledger.arbiter import Side
from fact_ledger.ledger.claims import Claim
from fact_ledger.ledger.errors import InvalidInput, Locked, Unauthorized, VersionConflict
from fact_ledger.ledger.log.events import (
    AUTH_AGENT,
    AUTH_USER,
    Event,
    MemoryUpdated,
)

Decision = list[tuple[str, Event]]  # (stream_id, event) in append order
NewId = Callable[[], str]
AUTHORIZATIONS = ("", AUTH_AGENT, AUTH_USER)


@dataclass(frozen=True, kw_only=True)
class Policy:
    """Governance policy switches (``policy.*`` in the config): the settings carry this one class.

    A dataclass, so that code holding settings changes a switch with ``dataclasses.replace``.
    """

    locked_requires_user_channel: bool = False
    review_agent_conflicts: bool = False
    auto_settle: bool = False  # ledger.settlement: rule-decided sets settle on write
    settle_changes: bool = True  # ledger.settlement: a value stated later (by the change horizon) settles its set


DEFAULT_POLICY = Policy()


class MemoryFacts(msgspec.Struct, kw_only=True):
    """What a decision needs to know about an existing memory."""

    memory_id: int
    stream_id: str
    version: int
    protection: str
    source_type: str
    status: str
    workspace: str = ""
    subject: str = ""
    event_time: str = ""
    confidence: float = 0.5
    recorded_at: str = ""
    confirmed_via: str = ""

    @classmethod
    def from_row(cls, row: object) -> MemoryFacts:
        """The facts of a read model's memory row (any object with these attributes)."""
        return cls(**{f: getattr(row, f) for f in cls.__struct_fields__})

    def side(self) -> Side:
        return Side(
            memory_id=self.memory_id,
            source_type=self.source_type,
            protection=self.protection,
            event_time=self.event_time,
            confidence=self.confidence,
            recorded_at=self.recorded_at,
            confirmed_via=self.confirmed_via,
        )


# A claim set's states, in the order it moves through them (docs/contract.md), and the filter
# every listing of sets takes (``all``: whatever the state). Spelled once: the edge model, the
# CLI's choice, the listings and the counts read these.
CONFLICT_STATES = ("open", "judged", "resolved")
CONFLICT_LISTINGS = (*CONFLICT_STATES, "all")


class ConflictFacts(msgspec.Struct, kw_only=True):
    """An unresolved claim set: its stream, state, claim key and current members.

    ``values`` maps current members (stream ids) to their normalised values; ``ids`` maps them to
    memory ids. A write that only joins a set needs just the members among its candidates, so
    ``values`` may be partial there; every decision that removes members gets them all.
    """

    conflict_id: int
    stream_id: str
    state: str
    key: str = ""
    values: dict[str, str] = {}
    ids: dict[str, int] = {}

    def disputed(self, without: str = "") -> bool:
        """Whether at least two different values remain (without the member ``without``)."""
        return len({v for s, v in self.values.items() if s != without}) >= 2


class Candidate(msgspec.Struct, kw_only=True):
    """A current claim of another memory that shares a key with one of the writer's claims."""

    other: MemoryFacts
    claim: Claim


# -- shared checks -----------------------------------------------------------------------------
def check_authorized(authorization: str, target: MemoryFacts | None = None) -> None:
    """Governance actions need explicit authorisation, and it says through which channel.

    Without it the answer is ``locked`` when the memory the action would change is protected or
    locked (the reason that matters to the caller), else ``unauthorized``.
    """
    if authorization not in AUTHORIZATIONS:
        raise InvalidInput(f"authorization must be one of {AUTH_AGENT!r} or {AUTH_USER!r}", field="authorized")
    if authorization:
        return
    if target is not None and target.protection != "normal":
        raise Locked(
            f"memory {target.memory_id} is {target.protection}; this change needs authorized: true",
            field="authorized",
            memory_id=target.memory_id,
        )
    raise Unauthorized("this action changes governed state; it needs authorized: true", field="authorized")


def check_writable(
    memory: MemoryFacts, *, expected_version: int | None, authorization: str, policy: Policy = DEFAULT_POLICY
) -> None:
    """Optimistic concurrency, protection and policy checks shared by every change to a memory."""
    if expected_version is not None and expected_version != memory.version:
        raise VersionConflict(
            f"memory {memory.memory_id} is at version {memory.version}, not {expected_version}",
            field="expected_version",
            current_version=memory.version,
        )
    if memory.protection == "normal":
        return
    if not authorization:
        raise Locked(
            f"memory {memory.memory_id} is {memory.protection}; this change needs authorized: true",
            field="authorized",
            memory_id=memory.memory_id,
        )
    if memory.protection == "locked" and policy.locked_requires_user_channel and authorization != AUTH_USER:
        raise Unauthorized(
            f"memory {memory.memory_id} is locked and policy locked_requires_user_channel "
            "accepts changes only through a user channel (the CLI or a user-answered prompt)",
            field="authorized",
            memory_id=memory.memory_id,
        )


def check_current(memory: MemoryFacts, field: str = "memory_id") -> None:
    if memory.status != "active":
        raise InvalidInput(
            f"memory {memory.memory_id} is {memory.status}, no longer current",
            field=field,
            memory_id=memory.memory_id,
            status=memory.status,
        )


# -- update ------------------------------------------------------------------------------------
def facts_after(memory: MemoryFacts, change: MemoryUpdated) -> MemoryFacts:
    """``memory`` as ``change`` leaves it, as decisions see it."""
    relabelled = change.derived_from_confirmed or change.source_type not in (None, "user_confirmed")
    return msgspec.structs.replace(
        memory,
        version=memory.version + 1,
        source_type=change.source_type or memory.source_type,
        protection=change.protection or memory.protection,
        event_time=change.event_time or memory.event_time,
        confidence=change.confidence if change.confidence is not None else memory.confidence,
        confirmed_via="" if relabelled else memory.confirmed_via,
    )
