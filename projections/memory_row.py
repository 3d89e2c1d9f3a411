"""A memory as the read models hand it out: one typed row, current or as the log knew it.

``memories`` (the current state) and the timeline's ``tt_states`` (every state, for as-of
answers) store the same fact in two shapes. Both are read into a :class:`MemoryRow` subclass,
their JSON columns (``tags``, ``metadata``) decoded once, here, so that every reader gets the
same names and types and one rendering (``server.app.views.memory_view``) shows either.
``event_time`` is when the fact began to hold (the timeline calls it ``valid_from``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import msgspec

_decode_tags = msgspec.json.Decoder(tuple[str, ...]).decode
_decode_metadata = msgspec.json.Decoder(dict[str, Any]).decode


class MemoryRow(msgspec.Struct, frozen=True, kw_only=True):
    """What both the current and the as-of read models know of a memory."""

    memory_id: int
    subject: str
    content: str
    tags: tuple[str, ...]
    source_type: str
    confidence: float
    protection: str
    status: str  # the lifecycle the log recorded (current, or at the as-of point)
    event_time: str
    valid_to: str | None
    recorded_at: str
    version: int
    workspace: str
    source_ref: str
    metadata: dict[str, Any]
    superseded_by: int | None


class CurrentMemory(MemoryRow, frozen=True, kw_only=True):
    """A row of ``memories``: the memory's latest state, with what only the current model keeps."""

    stream_id: str
    subject_norm: str
    updated_at: str
    content_hash: str
    confirmed_via: str
    derived_from: int | None
    retired_by: int | None
    status_reason: str
    sightings: int
    last_position: int


class MemoryState(MemoryRow, frozen=True, kw_only=True):
    """A row of the timeline: one state of a memory and the log positions it was known between.

    ``ended`` is how its validity ended (``retired``, ``superseded``; None while it holds).
    """

    state_id: int
    known_from: int
    known_to: int | None
    ended: str | None
    text_id: int


Row = TypeVar("Row", bound=MemoryRow)


def row_of(cls: type[Row], columns: Sequence[str], values: Sequence[Any], **renamed: str) -> Row:
    """``cls`` from a statement's ``columns`` and ``values``, JSON columns decoded; ``renamed``
    maps a column name to the field it fills (``valid_from="event_time"``)."""
    fields = {renamed.get(c, c): v for c, v in zip(columns, values, strict=True)}
    fields["tags"] = _decode_tags(fields["tags"])
    fields["metadata"] = _decode_metadata(fields["metadata"])
    return cls(**fields)
