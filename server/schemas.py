"""Input validation at the edge (pydantic): every limit of CONTRACT.md, clear field errors.

Each ``*Data`` model validates one action's ``data``; :meth:`EdgeModel.parse` turns pydantic's
errors into one :class:`InvalidInput` naming the field (with ``did_you_mean`` for a misspelt
known field) and :meth:`EdgeModel.to_kwargs` hands the facade plain keyword arguments.
"""

from __future__ import annotations

import difflib
import json
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError, field_validator

from ledger.clock import parse_time
from ledger.errors import InvalidInput

MAX_CONTENT_BYTES = 2 * 1024 * 1024
MAX_SUBJECT_CHARS = 2000
MAX_QUERY_CHARS = 32000
MAX_TAGS = 100
MAX_TAG_CHARS = 256
MAX_METADATA_BYTES = 256 * 1024

SourceType = Literal["user_confirmed", "document_extracted", "agent_generated", "unknown"]
MemoryId = Annotated[StrictInt, Field(ge=1)]
Tag = Annotated[str, Field(min_length=1, max_length=MAX_TAG_CHARS)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class EdgeModel(BaseModel):
    model_config = ConfigDict(extra="allow", str_strip_whitespace=False, frozen=True)
    TIME_FIELDS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def parse(cls, data: Any) -> EdgeModel:
        """Validate ``data``; unknown fields close to a known one are refused with a suggestion."""
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise InvalidInput("data must be an object", field="data")
        known = set(cls.model_fields)
        for key in data:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
                if close:
                    raise InvalidInput(f"unknown field {key!r}", field=key, did_you_mean=close[0])
        clean = {k: v for k, v in data.items() if k in known and v is not None}
        try:
            return cls.model_validate(clean)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or None
            raise InvalidInput(f"{field}: {first['msg']}" if field else first["msg"], field=field) from None

    def ignored_fields(self, data: dict[str, Any]) -> list[str]:
        return sorted(k for k in data if k not in type(self).model_fields)

    def to_kwargs(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in type(self).model_fields if getattr(self, k) is not None}

    @field_validator("*", mode="after")
    @classmethod
    def _times(cls, value: Any, info: Any) -> Any:
        if info.field_name in cls.TIME_FIELDS and value is not None:
            return parse_time(value, field=info.field_name)
        return value


def _check_size(value: str, limit: int, what: str) -> str:
    if len(value.encode("utf-8", "surrogatepass")) > limit:
        raise ValueError(f"{what} exceeds {limit} bytes of UTF-8")
    return value


class ClaimData(BaseModel):
    model_config = ConfigDict(extra="forbid")
    subject: Annotated[str, Field(min_length=1, max_length=MAX_SUBJECT_CHARS)]
    attribute: Annotated[str, Field(min_length=1, max_length=256)]
    value: Annotated[str, Field(min_length=1, max_length=4096)]


class RememberData(EdgeModel):
    TIME_FIELDS: ClassVar[tuple[str, ...]] = ("event_time",)
    content: Annotated[str, Field(min_length=1)]
    subject: Annotated[str, Field(max_length=MAX_SUBJECT_CHARS)] = ""
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] = []
    source_type: SourceType = "agent_generated"
    confidence: Confidence | None = None
    event_time: str | None = None
    workspace: Annotated[str, Field(max_length=256)] | None = None
    source_ref: Annotated[str, Field(max_length=2048)] = ""
    ref_id: MemoryId | None = None
    retracts: StrictBool = False
    claims: Annotated[list[ClaimData], Field(max_length=50)] = []
    metadata: dict[str, Any] = {}

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content must not be blank")
        return _check_size(value, MAX_CONTENT_BYTES, "content")

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            encoded = json.dumps(value, allow_nan=False, ensure_ascii=False)
        except ValueError:
            raise ValueError("metadata must be JSON without NaN or Infinity") from None
        _check_size(encoded, MAX_METADATA_BYTES, "metadata")
        return value

    def to_kwargs(self) -> dict[str, Any]:
        out = super().to_kwargs()
        out["claims"] = [c.model_dump() for c in self.claims]
        return out


class FindData(EdgeModel):
    TIME_FIELDS: ClassVar[tuple[str, ...]] = ("after_time", "before_time", "as_of_event_time")
    query: Annotated[str, Field(max_length=MAX_QUERY_CHARS)] = ""
    limit: Annotated[StrictInt, Field(ge=1, le=50)] = 5
    tags_filter: Annotated[list[Tag], Field(max_length=MAX_TAGS)] = []
    source_type: SourceType | None = None
    workspace: Annotated[str, Field(max_length=256)] | None = None
    after_time: str | None = None
    before_time: str | None = None
    include_inactive: StrictBool = False
    as_of_event_time: str | None = None
    as_of_recorded: str | StrictInt | None = None

    @field_validator("as_of_recorded")
    @classmethod
    def _as_of_recorded(cls, value: str | int | None) -> str | int | None:
        return parse_recorded_point(value)


def parse_recorded_point(value: str | int | None) -> str | int | None:
    """A log position (positive integer, also as digits) or a timestamp."""
    if value is None:
        return None
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a position must be >= 0")
        return value
    if value.strip().isdigit():
        return int(value.strip())
    return parse_time(value, field="as_of_recorded")


class ReadData(EdgeModel):
    TIME_FIELDS: ClassVar[tuple[str, ...]] = ("as_of_event_time",)
    memory_id: MemoryId
    as_of_event_time: str | None = None
    as_of_recorded: str | StrictInt | None = None

    @field_validator("as_of_recorded")
    @classmethod
    def _as_of_recorded(cls, value: str | int | None) -> str | int | None:
        return parse_recorded_point(value)


class UpdateData(EdgeModel):
    TIME_FIELDS: ClassVar[tuple[str, ...]] = ("event_time",)
    memory_id: MemoryId
    expected_version: Annotated[StrictInt, Field(ge=1)] | None = None
    authorized: StrictBool = False
    content: Annotated[str, Field(min_length=1)] | None = None
    subject: Annotated[str, Field(max_length=MAX_SUBJECT_CHARS)] | None = None
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] | None = None
    confidence: Confidence | None = None
    event_time: str | None = None
    metadata: dict[str, Any] | None = None

    @field_validator("content")
    @classmethod
    def _content(cls, value: str | None) -> str | None:
        return None if value is None else RememberData._content(value)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if value is None else RememberData._metadata(value)
