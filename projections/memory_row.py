"""A memory as the read models hand it out: one typed row, current or as the log knew it.

``memories`` (the current state) and the timeline's ``tt_states`` (every state, for as-of
answers) store the same fact in two shapes. Both are read into a :class:`MemoryRow` subclass
(``projections.rows.typed_row``, their JSON columns decoded once), so that every reader gets the
same names and types and one rendering (``server.app.memory_view``) shows either.
``event_time`` is when the fact began to hold (the timeline calls it ``valid_from``).
"""

from __future__ import annotations

from typing import Any

import msgspec


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


JSON_COLUMNS = ("tags", "metadata")  # stored as JSON text by both read models
