"""Edge models for the ``memory_review``, ``memory_govern`` and ``memory_repair`` tools.

Same rules as :mod:`server.schemas.memory`: strict ids, known enums, ISO timestamps, bounded text.
Governance models carry ``authorized``; the MCP layer turns it into the facade's
``authorization`` string (and may upgrade it to ``user_channel`` after asking the user).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import AfterValidator, Field, StrictBool, StrictInt, StrictStr, WithJsonSchema, model_validator

from fact_ledger.ledger.disagree import NOTICE_KIND_FILTERS, NOTICE_LISTINGS, NOTICE_STATES
from fact_ledger.ledger.errors import InvalidInput, closest, quoted
from fact_ledger.ledger.facts import CONFLICT_LISTINGS
from fact_ledger.ledger.govern import KEEP_RESOLUTIONS
from fact_ledger.ledger.ids import MAX_ID
from fact_ledger.ledger.log.events import EVENT_TYPES, RENAMED, current_type
from fact_ledger.ledger.retention import MAX_RETENTION_DAYS
from fact_ledger.server.schemas.memory import (
    Cursor,
    EdgeModel,
    MemoryId,
    Name,
    PositiveId,
    Reason,
    RecordedPoint,
    SessionId,
    Subject,
)

ConflictState = Literal[CONFLICT_LISTINGS]  # type: ignore[valid-type]  # ledger/facts.py, once


def _event_type(value: str) -> str:
    """A type the log writes; a renamed type's old name still filters (it finds the same rows
    as the current one) but is not offered: the list named ``MemoryRemembered`` and
    ``MemoryConfirmed``, which nothing writes any more, beside the types that are written."""
    if value in EVENT_TYPES or value in RENAMED:
        return value
    raise InvalidInput(
        f"type: {quoted(value, 60)} is not an event type; the log writes {', '.join(EVENT_TYPES)}",
        field="type",
        did_you_mean=current_type(close) if (close := closest(value, [*EVENT_TYPES, *RENAMED])) else None,
    )


EventType = Annotated[
    StrictStr, AfterValidator(_event_type), WithJsonSchema({"type": "string", "enum": list(EVENT_TYPES)})
]


class _Pair(EdgeModel):
    """Two different memories."""

    left_id: MemoryId
    right_id: MemoryId

    @model_validator(mode="after")
    def _different(self) -> Self:
        if self.left_id == self.right_id:
            raise InvalidInput("left_id and right_id must be different memories", field="right_id")
        return self


# -- memory_review ------------------------------------------------------------------------------
class HistoryData(EdgeModel):
    memory_id: MemoryId
    limit: Annotated[StrictInt, Field(ge=1, le=200)] = 50
    cursor: Cursor | None = None


class ConflictsData(EdgeModel):
    state: ConflictState = "open"
    limit: Annotated[StrictInt, Field(ge=1, le=200)] = 20
    cursor: Cursor | None = None


class NoticesData(EdgeModel):
    state: Literal[NOTICE_LISTINGS] = "open"  # type: ignore[valid-type]  # ledger/disagree.py, once
    kind: Literal[NOTICE_KIND_FILTERS] | None = None  # type: ignore[valid-type]
    limit: Annotated[StrictInt, Field(ge=1, le=200)] = 20
    cursor: PositiveId | None = None


class ConflictDetailData(EdgeModel):
    conflict_id: PositiveId
    limit: Annotated[StrictInt, Field(ge=1, le=200)] = 20
    offset: Annotated[StrictInt, Field(ge=0, le=MAX_ID)] = 0  # past any set: SQLite's integers end there


class CompareData(_Pair):
    pass


class AuditData(EdgeModel):
    TIME_FIELDS: ClassVar[tuple[str, ...]] = ("since", "until")
    since: str | None = None
    until: str | None = None
    memory_id: MemoryId | None = None
    actor: Name | None = None
    type: EventType | None = Field(None, description="event type")
    limit: Annotated[StrictInt, Field(ge=1, le=1000)] = 100
    cursor: Cursor | None = None


class TimelineData(EdgeModel):
    subject: Annotated[Subject, Field(min_length=1)] | None = Field(None, description="or memory_id")
    memory_id: MemoryId | None = None
    as_of_recorded: RecordedPoint | None = Field(None, description="time or log position")
    limit: Annotated[StrictInt, Field(ge=1, le=500)] | None = None
    cursor: Cursor | None = None

    @model_validator(mode="after")
    def _one_key(self) -> Self:
        if self.subject is None and self.memory_id is None:
            raise InvalidInput("give subject or memory_id", field="memory_id")
        return self


# -- memory_govern ------------------------------------------------------------------------------
class _Governed(EdgeModel):
    authorized: StrictBool = False


class ArbitrateData(_Governed):
    left_id: MemoryId
    right_id: MemoryId
    mark_conflict: StrictBool = False
    apply: StrictBool = False

    @model_validator(mode="after")
    def _different(self) -> Self:
        if self.left_id == self.right_id:
            raise InvalidInput("left_id and right_id must be different memories", field="right_id")
        return self


class ConfirmData(_Governed):
    memory_id: MemoryId


class UnlockData(_Governed):
    memory_id: MemoryId


class RetireData(_Governed):
    memory_id: MemoryId
    reason: Reason = ""


class EraseData(_Governed):
    """One memory (``memory_id``) or every memory of a workspace, erased for good."""

    memory_id: MemoryId | None = Field(None, description="or workspace")
    workspace: Name | None = Field(None, description='or memory_id; "" is the default workspace')
    reason: Reason = ""

    @model_validator(mode="after")
    def _one_target(self) -> Self:
        if (self.memory_id is None) == (self.workspace is None):
            raise InvalidInput("give memory_id or workspace (one of them)", field="memory_id")
        return self


class SupersedeData(_Governed):
    loser_id: MemoryId
    winner_id: MemoryId
    reason: Reason = ""

    @model_validator(mode="after")
    def _different(self) -> Self:
        if self.loser_id == self.winner_id:
            raise InvalidInput("loser_id and winner_id must be different memories", field="winner_id")
        return self


class ResolveConflictData(_Governed):
    conflict_id: PositiveId
    winner_id: MemoryId | None = Field(None, description="the others are superseded")
    resolution: Literal[KEEP_RESOLUTIONS] | None = Field(  # type: ignore[valid-type]  # ledger/govern.py
        None, description="instead of winner_id"
    )

    @model_validator(mode="after")
    def _one_outcome(self) -> Self:
        if (self.winner_id is None) == (self.resolution is None):
            raise InvalidInput('give winner_id or resolution: "keep_all" (exactly one)', field="winner_id")
        return self


class ReviewNoticeData(_Governed):
    notice_id: PositiveId
    state: Literal[NOTICE_STATES]  # type: ignore[valid-type]
    reason: Reason = ""


class ReembedData(EdgeModel):
    rebuild: StrictBool = Field(False, description="start over from the embedding cache")


class AliasData(_Governed):
    alias: Annotated[Name, Field(min_length=1)]
    canonical: Annotated[Name, Field(min_length=1)]


class HealthData(EdgeModel):
    limit: Annotated[StrictInt, Field(ge=1, le=200)] = 10


class WhatifData(EdgeModel):
    rule_order: Annotated[list[Annotated[Name, Field(min_length=1)]], Field(min_length=1, max_length=5)] | None = Field(
        None, description="the five rules, reordered"
    )
    auto_settle: StrictBool = False


class ApplySuggestionData(_Governed):
    suggestion_id: Annotated[Name, Field(min_length=1)]


class UndoData(_Governed):
    change_id: Annotated[Name, Field(min_length=1)]


# -- memory_repair ------------------------------------------------------------------------------
class RebuildData(EdgeModel):
    projection: Annotated[Name, Field(min_length=1, max_length=64)] | None = None


class WorkingData(EdgeModel):
    session_id: SessionId


class SweepData(EdgeModel):
    dry_run: StrictBool = False


class ReplayBackupData(_Governed):
    dry_run: StrictBool = Field(True, description="authorized: true to apply")


class ArchiveData(EdgeModel):
    dry_run: StrictBool = False
    older_than_days: Annotated[StrictInt, Field(ge=0, le=MAX_RETENTION_DAYS)] | None = Field(
        None, description="default: the retention period"
    )


def memory_ids(data: EdgeModel) -> list[int]:
    """The memory ids a governance request touches (for the locked-memory check)."""
    fields: dict[str, Any] = data.model_dump()
    return [
        v
        for k, v in fields.items()
        if k in ("memory_id", "left_id", "right_id", "loser_id", "winner_id") and isinstance(v, int)
    ]
