"""Event types: frozen msgspec Structs, one per fact the ledger can record.

Schema evolution follows msgspec's rules: a new field needs a default, a field never changes
type. A breaking change bumps the type's ``V`` and adds ``upcast_vN_vN+1`` to ``UPCASTERS``;
stored bytes are never rewritten, old payloads are upcast on read. A renamed type keeps its old
name in ``RENAMED``: the first step of reading an event is its name (rows written under the old
name stay as they are, the hash chain covers the name).

Memories and conflicts are referred to by their stream id (a UUIDv7 string) inside payloads,
so an exported log can be imported into another ledger without renumbering anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

AUTH_USER = "user_channel"
AUTH_AGENT = "agent_asserted"
AUTH_POLICY = "policy"  # no one asked: the policy auto_settle applied the deciding rule


class Event(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Base for all payloads. ``V`` is the current schema version of the type."""

    V: ClassVar[int] = 1


class ClaimSpec(msgspec.Struct, frozen=True, omit_defaults=True):
    """A claim the writer stated: ``subject``'s ``attribute`` is ``value``."""

    subject: str
    attribute: str
    value: str


class MemoryRecorded(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A new memory. v2: ``tags`` became a list (v1 stored one comma-separated string)."""

    V: ClassVar[int] = 2
    memory: str
    content: str
    subject: str = ""
    tags: tuple[str, ...] = ()
    source_type: str = "agent_generated"
    confidence: float = 0.5
    protection: str = "normal"
    source_ref: str = ""
    ref: str | None = None
    retracts: bool = False
    claims: tuple[ClaimSpec, ...] = ()
    metadata: dict[str, Any] = {}
    content_hash: str = ""
    authorization: str = ""
    session: str = ""  # the client's conversation id (``session_id``), "" when none was given
    turn: int | None = None  # the turn of that conversation the client numbered
    promoted_from: str = ""  # the working memory (stream id) whose promotion recorded this one
    reason: str = ""  # why the writer kept it (remember's reason), as given


class MemoryUpdated(Event, frozen=True, kw_only=True, omit_defaults=True):
    """Changed fields of a memory; absent fields keep their value."""

    memory: str
    content: str | None = None
    subject: str | None = None
    tags: tuple[str, ...] | None = None
    confidence: float | None = None
    metadata: dict[str, Any] | None = None
    source_type: str | None = None
    protection: str | None = None
    content_hash: str | None = None
    event_time: str | None = None
    derived_from_confirmed: bool = False
    authorization: str = ""
    session: str = ""
    turn: int | None = None


class DuplicateSighted(Event, frozen=True, kw_only=True, omit_defaults=True):
    """An exact duplicate was written again: no new memory, the sighting is kept."""

    memory: str
    source_type: str = ""
    source_ref: str = ""


class Restated(Event, frozen=True, kw_only=True, omit_defaults=True):
    """The same fact stated again with the same value (same claim keys, same normalised values)
    in other words or another format: absorbed into the memory that holds it as support instead
    of stored as a new memory (:mod:`ledger.restatement`). ``content`` is the statement as it was
    said; the event's own event time is when the statement says it held."""

    memory: str
    content: str
    source_type: str = ""
    source_ref: str = ""


class Confirmed(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A memory confirmed: it becomes ``user_confirmed`` and locked; ``authorization`` is the
    channel that confirmed it. ``confidence`` is what the confirmation sets (1.0 when a person
    confirmed through the user channel; absent: unchanged, as in events written before it)."""

    memory: str
    authorization: str = AUTH_AGENT
    confidence: float | None = None


class MemoryUnlocked(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A locked or protected memory's protection is back to normal."""

    memory: str
    authorization: str = AUTH_AGENT


class MemoryRetired(Event, frozen=True, kw_only=True, omit_defaults=True):
    """Retired by a governance action or retracted by a later memory (``by``)."""

    memory: str
    reason: str = ""
    by: str | None = None
    authorization: str = ""


class MemoryArchived(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A retired or superseded memory past the retention period leaves the hot read model
    (its events stay: time travel still sees it)."""

    memory: str


class Superseded(Event, frozen=True, kw_only=True, omit_defaults=True):
    """``winner`` replaces ``loser``; ``rule`` is the arbitration rule or the action that decided.
    ``authorization`` is ``policy`` when the policy auto_settle applied the rule on a write."""

    loser: str
    winner: str
    reason: str = ""
    rule: str = ""
    authorization: str = ""
    change: str = ""  # the change (ChangeRecorded) this event is part of, "" when none


class SetMember(msgspec.Struct, frozen=True, omit_defaults=True):
    """A memory in a claim set and the value it holds (``norm``: normalised, what values compare by)."""

    memory: str
    value: str = ""
    norm: str = ""


class ClaimCollided(Event, frozen=True, kw_only=True, omit_defaults=True):
    """Memories disagree on a claim: a claim set opened, or ``joins`` the open set ``conflict``.

    A claim set holds every current memory with a different value for one claim key
    (workspace, subject, attribute); a new value joins the open set with one event, whatever
    its size. ``members`` are the memories this event adds. ``verdict`` (opening only) is the
    ranking at that moment without integer ids. v1 was one pairwise conflict (``left``/``right``
    and their values); it is upcast to two members with ``pairwise`` set, and the conflicts
    projection folds pairwise conflicts of one claim into one set.
    """

    V: ClassVar[int] = 2
    conflict: str
    subject: str
    attribute: str
    members: tuple[SetMember, ...] = ()
    joins: bool = False
    key: str = ""
    pairwise: bool = False
    verdict: dict[str, Any] = {}
    authorization: str = ""


class ConflictMemberLeft(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A member left a claim set that still disputes (retired, superseded, erased, or no longer
    disagrees); a judged set re-opens with it (its judgment was pinned to the members it had)."""

    conflict: str
    member: str
    reason: str = ""
    change: str = ""


class JudgmentSubmitted(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A judgment on a claim set: guidance naming a winner, pinned to every member's version
    (``pins``: stream id -> version). It changes no memory."""

    conflict: str
    judgment: str
    winner: str | None = None
    rationale: str = ""
    pins: dict[str, int] = {}


class ConflictResolved(Event, frozen=True, kw_only=True, omit_defaults=True):
    """The claim set is settled. ``resolution``: winner | keep_both | keep_all | retired |
    superseded (the last other value left) | dissolved (a member's text changed and no two values
    disagree any more) | policy (settled automatically by the deciding rule).

    v1 settled one pairwise conflict; upcast, it carries ``pairwise`` and settles that pair only.
    """

    V: ClassVar[int] = 2
    conflict: str
    winner: str | None = None
    resolution: str = "winner"
    authorization: str = ""
    reason: str = ""
    pairwise: bool = False
    change: str = ""  # the change (ChangeRecorded) this event is part of, "" when none


class ConflictReopened(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A judged conflict is open again: a member changed after the judgment (``reason``), or a
    settled one re-opened by the undo of the change that settled it (``change``)."""

    conflict: str
    reason: str = ""
    change: str = ""


class Reinstated(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A superseded memory is current again: the undo (``change``) of the change that superseded it,
    or a cancellation that retracted the memory that superseded it (no ``change``)."""

    memory: str
    reason: str = ""
    change: str = ""
    authorization: str = ""


class ChangeRecorded(Event, frozen=True, kw_only=True, omit_defaults=True):
    """One change a person applied as a unit (its stream is ``change``, every event of it carries
    the same ``change``): ``kind`` ``apply_suggestion`` settled the claim set ``conflict`` for
    ``winner`` and superseded ``superseded``; ``undo`` reverted the change ``undoes`` by
    compensating events (the superseded reinstated, the set re-opened)."""

    change: str
    kind: str
    suggestion: str = ""
    conflict: str = ""
    winner: str | None = None
    superseded: tuple[str, ...] = ()
    undoes: str = ""
    authorization: str = ""


class WorkspaceAliasSet(Event, frozen=True, kw_only=True, omit_defaults=True):
    """``alias`` is accepted as another name of the workspace ``canonical`` (``accepted=False``:
    rejected, or an accepted alias undone); ``authorization``: the channel that decided it
    (empty in events written before it was recorded)."""

    alias: str
    canonical: str
    accepted: bool = True
    authorization: str = ""


class EntityAliasSet(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A person says ``alias`` names the same person or thing as ``canonical`` (``accepted=False``:
    rejected, or an accepted alias undone). Claims about ``alias`` are keyed as ``canonical``'s
    from then on (:mod:`ledger.entity_alias`); workspace names have ``WorkspaceAliasSet``."""

    alias: str
    canonical: str
    accepted: bool = True
    authorization: str = ""


class HealthChecked(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A health report pass recorded (the scheduled pass of ``ledger serve``, or ``ledger health
    --record``): its summary figures, so the report's trend is a fold of the log. It changes no
    memory and applies nothing."""

    summary: dict[str, Any] = {}


class NoticeReviewed(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A person's answer to a semantic notice about two memories (by stream id):
    ``dismissed`` (not a problem), ``resolved`` (dealt with), or ``open`` again."""

    left: str
    right: str
    state: str = "dismissed"
    reason: str = ""


class WorkingNoted(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A working (session-tier) memory: logged like every write, but outside claims, conflicts,
    notices, vectors and other conversations until it is ``Promoted``. ``sticky`` notes are never
    evicted from their conversation's working set."""

    memory: str
    session: str
    content: str
    subject: str = ""
    tags: tuple[str, ...] = ()
    source_type: str = "agent_generated"
    confidence: float = 0.5
    source_ref: str = ""
    metadata: dict[str, Any] = {}
    content_hash: str = ""
    turn: int | None = None
    sticky: bool = False
    authorization: str = ""  # the channel the note came by: its promotion records the memory with it


class WorkingRepeated(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A working memory written again word for word inside its working set: absorbed, touched."""

    memory: str
    turn: int | None = None


class WorkingRevised(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A working memory's changed fields (``update`` on a working memory); absent fields keep their value."""

    memory: str
    content: str | None = None
    subject: str | None = None
    tags: tuple[str, ...] | None = None
    confidence: float | None = None
    metadata: dict[str, Any] | None = None
    content_hash: str | None = None
    turn: int | None = None


class Reinforced(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A signal about a working memory (``ledger.promotion``): ``user_affirmed``,
    ``tool_succeeded``, ``user_referenced`` or ``contradicted``, in a conversation's turn."""

    memory: str
    signal: str
    session: str = ""
    turn: int | None = None


class PromotionSignal(msgspec.Struct, frozen=True, omit_defaults=True):
    """A signal as the promotion rule counted it."""

    signal: str
    turn: int | None = None
    weight: int = 0


class Promoted(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A working memory became long-term: ``long_term`` is the memory (stream id) recorded for it
    in the same transaction. ``rule`` names what decided (``ledger.promotion``'s rule with its
    weights, or ``user`` for ``memory_govern promote``), ``score`` and ``signals`` what it counted."""

    memory: str
    long_term: str
    score: int = 0
    signals: tuple[PromotionSignal, ...] = ()
    rule: str = ""
    authorization: str = ""


class WorkingExpired(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A conversation idle past the working TTL: its unpromoted working memories leave the hot
    read models (their events stay: ``history`` and ``audit`` still show them)."""

    session: str
    idle_days: int = 0


class Cooled(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A long-term memory unused for ``idle_days`` became cold: kept, found only by explicit queries."""

    memory: str
    idle_days: int = 0


class Warmed(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A cold memory was used again (found on a first page, or read): hot again."""

    memory: str


class ErasedRow(msgspec.Struct, frozen=True):
    """One row an erasure cleared: its position, event id and seal (the salted digest of the
    fields it held; the salt went with them)."""

    position: int
    event_id: str
    seal: str


class Erased(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A memory erased: its content, subject, tags, metadata and claims are gone from ``rows``
    (every row of its own stream and the claim-set rows that held its values), which keep only
    their seals. Who erased it is the row's actor, when its ``recorded_at``; never the content."""

    memory: str
    reason: str = ""
    rows: tuple[ErasedRow, ...] = ()
    authorization: str = ""


class WriteReplayed(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A write kept in a machine's JSONL backup while the log could not take it, decided again
    against the log as it was when it landed. Kept from the backup: the write's identity (its
    first event's id, ``head``), its event time and its actor; decided anew: everything else.
    ``backed_up`` and ``decided`` list the event types of the offline decision and of the one
    that landed; ``outcome`` is ``as_backed_up`` (the same types), ``decided_anew``, ``refused``
    (``reason`` says why; nothing else landed) or ``unchanged`` (nothing left to write)."""

    command: str
    head: str
    op: str = ""
    outcome: str = "as_backed_up"
    backed_up: tuple[str, ...] = ()
    decided: tuple[str, ...] = ()
    backed_up_at: str = ""
    reason: str = ""


EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (
        MemoryRecorded,
        MemoryUpdated,
        DuplicateSighted,
        Restated,
        Confirmed,
        MemoryUnlocked,
        MemoryRetired,
        MemoryArchived,
        Superseded,
        ClaimCollided,
        ConflictMemberLeft,
        JudgmentSubmitted,
        ConflictResolved,
        ConflictReopened,
        Reinstated,
        ChangeRecorded,
        WorkspaceAliasSet,
        EntityAliasSet,
        HealthChecked,
        NoticeReviewed,
        Erased,
        WorkingNoted,
        WorkingRepeated,
        WorkingRevised,
        Reinforced,
        Promoted,
        WorkingExpired,
        Cooled,
        Warmed,
        WriteReplayed,
    )
}


# Old type name -> current one. Stored rows keep the name they were written with.
RENAMED: dict[str, str] = {
    "MemoryRemembered": "MemoryRecorded",
    "MemoryConfirmed": "Confirmed",
}


def current_type(stored: str) -> str:
    """The current name of a stored type name (itself unless the type was renamed)."""
    return RENAMED.get(stored, stored)


def stored_names(name: str) -> tuple[str, ...]:
    """Every name rows of this type may be stored under, current name first (old or new given)."""
    current = current_type(name)
    return (current, *(old for old, new in RENAMED.items() if new == current))


def upcast_memory_recorded_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """``tags`` stored as one comma-separated string becomes a list of the trimmed, non-empty tags."""
    tags = data.get("tags", "")
    if isinstance(tags, str):
        data["tags"] = [t.strip() for t in tags.split(",") if t.strip()]
    return data


def upcast_claim_collided_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    """A pairwise conflict becomes a claim set of its two members, marked ``pairwise`` for the fold."""
    members = [
        {"memory": data.pop(side), "value": data.get(f"{side}_value", ""), "norm": data.get(f"{side}_value", "")}
        for side in ("left", "right")
        if data.get(side)
    ]
    data.pop("left_value", None)
    data.pop("right_value", None)
    return {**data, "members": members, "pairwise": True}


def upcast_conflict_resolved_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "pairwise": True}


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("MemoryRecorded", 1): upcast_memory_recorded_v1_v2,
    ("ClaimCollided", 1): upcast_claim_collided_v1_v2,
    ("ConflictResolved", 1): upcast_conflict_resolved_v1_v2,
}

_encoder = msgspec.json.Encoder(order="deterministic")
_decoders: dict[str, msgspec.json.Decoder[Event]] = {
    name: msgspec.json.Decoder(cls) for name, cls in EVENT_TYPES.items()
}


def encode_payload(event: Event) -> bytes:
    """Canonical bytes: deterministic key order, defaults omitted."""
    return _encoder.encode(event)


def canonical_json(value: Any) -> bytes:
    return _encoder.encode(value)


STREAM_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def stream_refs(value: Any) -> list[str]:
    """The stream ids in one payload field: a UUID-shaped string, or those among a list or tuple
    of them (or of structs that name a ``memory``: a claim set's members) or a dict's keys."""
    items = [getattr(v, "memory", v) for v in value] if isinstance(value, (list, tuple, dict)) else [value]
    return [v for v in items if isinstance(v, str) and len(v) == 36 and STREAM_ID.match(v)]


def named_streams(event: Event) -> set[str]:
    """The memory and claim-set streams an event's payload names (:func:`stream_refs` of each
    field): what depends on those streams existing (a replay, an import)."""
    return {ref for field in event.__struct_fields__ for ref in stream_refs(getattr(event, field))}


def type_name(event: Event) -> str:
    return type(event).__name__


def decode_payload(type_: str, v: int, payload: bytes | str) -> Event:
    """Decode a stored payload: an old type name reads as its current one, then the upcaster
    chain runs from ``v`` to the current version; a version newer than this code knows is
    refused (``ValueError``), never read with its new fields dropped."""
    type_ = current_type(type_)
    cls = EVENT_TYPES.get(type_)
    if cls is None:
        raise ValueError(f"unknown event type {type_!r}")
    if v == cls.V:
        return _decoders[type_].decode(payload)
    if v > cls.V:  # written by a newer fact-ledger: read as this version, its new fields would be lost
        raise ValueError(f"{type_} v{v} is newer than this ledger reads (v{cls.V}): upgrade fact-ledger to read it")
    data = msgspec.json.decode(payload)
    while v < cls.V:
        data = UPCASTERS[(type_, v)](data)
        v += 1
    return msgspec.convert(data, cls)
