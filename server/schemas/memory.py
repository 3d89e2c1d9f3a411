"""Input validation at the edge (pydantic): every limit of docs/contract.md, clear field errors.

Each ``*Data`` model validates one action's ``data``. :meth:`EdgeModel.parse` turns pydantic's
errors into one :class:`InvalidInput` naming the field; a misspelt known field (``sorce_type``)
is refused with ``did_you_mean`` because silently dropping it would store the wrong fact, while
an unrelated unknown field is harmless, ignored, and listed in :attr:`EdgeModel.ignored` so the
caller can say so once. :meth:`EdgeModel.to_kwargs` hands the facade plain keyword arguments.
Models for the review, governance and repair tools live in :mod:`server.schemas.admin`.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    ValidationError,
    field_validator,
)

from fact_ledger.ledger.clock import parse_time
from fact_ledger.ledger.errors import InvalidInput, closest, quoted
from fact_ledger.ledger.ids import MAX_ID, ascii_digits, is_id, position_in
from fact_ledger.ledger.promotion import SIGNALS
from fact_ledger.ledger.trust import SOURCE_TYPES
from fact_ledger.ledger.working import TIERS
from fact_ledger.server.app.credentials import ON_SECRET as ON_SECRET_CHOICES
from fact_ledger.server.config import MAX_NAME_CHARS

MAX_CONTENT_BYTES = 2 * 1024 * 1024
MAX_SUBJECT_CHARS = 2000
MAX_QUERY_CHARS = 32000
MAX_TAGS = 100
MAX_TAG_CHARS = 256
MAX_METADATA_BYTES = 256 * 1024
# Nesting, whatever the size: a reply nested hundreds deep is refused by JSON encoders and MCP
# clients alike (the memory could be stored, then never read), and walking it overflows the stack.
MAX_METADATA_DEPTH = 32
MAX_REASON_CHARS = 4000


# C0 control characters, DEL and the C1 ones (U+0080–U+009F: U+009B opens a terminal escape as
# ESC [ does), except the ones text uses (tab, line breaks, form feed, NEL: a line break too).
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")


def _paired_surrogates(value: str) -> str:
    """Refuse lone surrogates (valid JSON escapes, invalid text): SQLite could not store them."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text contains an unpaired surrogate (invalid Unicode)") from None
    return value


def _query_text(value: str) -> str:
    """A query is asked, not stored: its control characters separate words like spaces do, so an
    odd query is still answered (and nothing of it reaches a reader raw)."""
    return _CONTROL.sub(" ", _paired_surrogates(value))


def _valid_unicode(value: str) -> str:
    """Refuse lone surrogates, and control characters such as NUL, which no fact holds and every
    reader (a terminal, the console's HTML, a C string) would get raw."""
    _paired_surrogates(value)
    control = _CONTROL.search(value)
    if control is not None:
        raise ValueError(
            f"contains the control character U+{ord(control.group()):04X} at character {control.start() + 1}; "
            "only tab, line breaks and form feed are allowed"
        )
    return value


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number or an id")
    return value


# What pydantic adds to an error's location for a member of a union (``as_of_recorded.str``):
# not a field the caller gave, so a refusal leaves it out.
_UNION_MEMBER = re.compile(r"^(?:str|int|float|bool|none|[a-z][a-z-]*\[.*\])$")
Text = Annotated[str, AfterValidator(_valid_unicode)]
SourceType = Literal[SOURCE_TYPES]  # type: ignore[valid-type]  # the tuple in ledger/trust.py, once
PositiveId = Annotated[StrictInt, BeforeValidator(_no_bool), Field(ge=1, le=MAX_ID)]
MemoryId = PositiveId
Tag = Annotated[Text, Field(min_length=1, max_length=MAX_TAG_CHARS)]
Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS)]


def _finite(value: Any) -> Any:
    """NaN fails every comparison: without this its refusal read "should be >= 0". A number is a
    JSON number: "0.5" as a string is refused as every other numeric field refuses it."""
    value = _no_bool(value)
    if isinstance(value, str):
        raise ValueError("a number between 0 and 1 (a JSON number, not a string)")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("a number between 0 and 1, not NaN or an infinity")
    return value


Confidence = Annotated[float, BeforeValidator(_finite), Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Subject = Annotated[Text, Field(max_length=MAX_SUBJECT_CHARS)]
Name = Annotated[Text, Field(max_length=MAX_NAME_CHARS)]
Reason = Annotated[Text, Field(max_length=MAX_REASON_CHARS)]
Cursor = Annotated[str, Field(min_length=1, max_length=512)]  # next_cursor of the previous page, as it came
OnSecret = Literal[ON_SECRET_CHOICES]  # type: ignore[valid-type]  # refused (default) or masked: server/app/credentials.py


def blank(value: str) -> bool:
    """Whether a text shows nothing: only spaces and line breaks, and the invisible format
    characters (zero-width space U+200B, the byte-order mark U+FEFF, …) that ``str.strip`` keeps.
    "\u200b" read as content made a memory with no visible words, and every later invisible
    text was absorbed as its duplicate."""
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in value)


def _not_blank(value: str) -> str:
    if blank(value):
        raise ValueError("must not be blank")
    return value


# a client's conversation id: "   " names no conversation (it was a working set of its own)
SessionId = Annotated[Text, Field(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(_not_blank)]
Turn = Annotated[StrictInt, BeforeValidator(_no_bool), Field(ge=0, le=MAX_ID)]  # the client's turn counter
Tier = Literal[TIERS]  # type: ignore[valid-type]  # ledger/working.py, once
Signal = Literal[SIGNALS]  # type: ignore[valid-type]  # ledger/promotion.py, once
ON_SECRET = "a credential in the write is refused, or stored as [secret:<kind>]"


class EdgeModel(BaseModel):
    """Base of every action's data: known fields validated, unknown ones triaged."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False, frozen=True)
    TIME_FIELDS: ClassVar[tuple[str, ...]] = ()
    _ignored: list[str] = PrivateAttr(default_factory=list)

    @classmethod
    def parse(cls, data: Any) -> Self:
        """Validate ``data``; unknown fields close to a known one are refused with a suggestion."""
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise InvalidInput("data must be an object", field="data")
        known = set(cls.model_fields)
        ignored = []
        for key in data:
            if key in known:
                continue
            close = closest(str(key).lower(), known)
            if close:
                raise InvalidInput(f"unknown field {key!r}", field=str(key), did_you_mean=close)
            ignored.append(str(key))
        clean = {k: v for k, v in data.items() if k in known and v is not None}
        try:
            model = cls.model_validate(clean)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"] if not _UNION_MEMBER.match(str(p))) or None
            message = _length_message(first) or first["msg"].removeprefix("Value error, ")
            raise InvalidInput(f"{field}: {message}" if field else message, field=field) from None
        model._ignored = sorted(ignored)
        return model

    @property
    def ignored(self) -> list[str]:
        """Unknown fields that were ignored (harmless: not close to any known field)."""
        return list(self._ignored)

    def to_kwargs(self) -> dict[str, Any]:
        """Facade keywords. ``authorized`` is not one: the caller turns it into ``authorization``."""
        return {
            k: getattr(self, k) for k in type(self).model_fields if k != "authorized" and getattr(self, k) is not None
        }

    @field_validator("*", mode="after")
    @classmethod
    def _times(cls, value: Any, info: Any) -> Any:
        if info.field_name in cls.TIME_FIELDS and value is not None:
            return parse_time(value, field=info.field_name)
        return value


def _length_message(error: Any) -> str | None:
    """A text's length in characters: a constraint after a validator (``Text``) makes pydantic
    speak of "items", which is right for lists only."""
    value, ctx = error.get("input"), error.get("ctx") or {}
    if not isinstance(value, str) or error["type"] not in ("too_long", "too_short"):
        return None
    if error["type"] == "too_long":
        return f"at most {ctx.get('max_length')} characters, not {len(value)}"
    return f"at least {ctx.get('min_length')} character(s), not {len(value)}"


class Empty(EdgeModel):
    """An action without data (``status``, ``overview``, ``verify`` …)."""


def _check_size(value: str, limit: int, what: str) -> str:
    if len(value.encode("utf-8", "surrogatepass")) > limit:
        raise ValueError(f"{what} exceeds {limit} bytes of UTF-8")
    return value


def _check_content(value: str) -> str:
    if blank(value):
        raise ValueError("content must not be blank (it holds no visible character)")
    if value.strip() == "-":  # the shell's "read stdin" marker, never a fact
        raise ValueError("content '-' is the stdin marker, not a fact (the CLI reads stdin with `remember -`)")
    return _check_size(value, MAX_CONTENT_BYTES, "content")


def _nesting(value: Any) -> int:
    """How deep objects and arrays nest in ``value`` (a JSON value), walked without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth + 1)
            if deepest > MAX_METADATA_DEPTH:
                return deepest
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _check_metadata(value: dict[str, Any]) -> dict[str, Any]:
    if _nesting(value) > MAX_METADATA_DEPTH:
        raise ValueError(f"metadata nests deeper than {MAX_METADATA_DEPTH} levels of objects and arrays")
    try:
        encoded = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except ValueError:
        raise ValueError("metadata must be JSON without NaN or Infinity") from None
    _valid_unicode(encoded)
    _check_size(encoded, MAX_METADATA_BYTES, "metadata")
    return value


Content = Annotated[Text, AfterValidator(_check_content)]
Metadata = Annotated[dict[str, Any], AfterValidator(_check_metadata)]


class ClaimData(BaseModel):
    model_config = ConfigDict(extra="forbid")
    subject: Annotated[Text, Field(min_length=1, max_length=MAX_SUBJECT_CHARS)]
    attribute: Annotated[Text, Field(min_length=1, max_length=256)]
    value: Annotated[Text, Field(min_length=1, max_length=4096)]


class RememberData(EdgeModel):
    """``remember``: one declaration of its fields. The MCP schema, ``help`` and the CLI's
    options are generated from it; the facade and ``Writes.remember`` pass fields through, and
    the ones the decision does not read are recorded on the event as given."""

    TIME_FIELDS: ClassVar[tuple[str, ...]] = ("event_time",)
    content: Content
    subject: Subject = Field("", description="what the memory is about")
    tags: Tags = []
    source_type: SourceType = "agent_generated"
    confidence: Confidence | None = Field(None, description="how sure the source is")
    event_time: str | None = Field(None, description="when the fact became true")
    workspace: Name | None = Field(None, description="the workspace to write to (else the configured one)")
    source_ref: Annotated[Text, Field(max_length=2048)] = Field(
        "", description="where the fact was found: a URL, a file, a message id"
    )
    ref_id: MemoryId | None = Field(
        None,
        description="with retracts: the memory this one cancels; a cancellation without it "
        "('don't send the minutes') retracts the one instruction it names",
    )
    retracts: StrictBool = False
    claims: Annotated[list[ClaimData], Field(max_length=50)] = []
    metadata: Metadata = {}
    authorized: StrictBool = False
    on_secret: OnSecret = Field("refuse", description=ON_SECRET)
    # the working tier and conversations (docs/contract.md): tier defaults to LEDGER_DEFAULT_TIER
    tier: Tier | None = Field(
        None,
        description="working: a provisional note kept in its conversation's working set until reinforce promotes it",
    )
    session_id: SessionId | None = Field(None, description="the conversation")
    turn: Turn | None = Field(None, description="its turn")
    sticky: StrictBool = Field(False, description="never evicted from the working set")
    reason: Reason = Field("", description="why it is worth remembering, kept with the memory in its audit trail")

    def to_kwargs(self) -> dict[str, Any]:
        out = super().to_kwargs()
        out["claims"] = [c.model_dump() for c in self.claims]
        return out


def parse_recorded_point(value: str | int | None) -> str | int | None:
    """A log position (non-negative integer, also as digits) or a timestamp."""
    if value is None:
        return None
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a position must be >= 0")
        return value
    text = value.strip()
    if ascii_digits(text):
        return position_in(text)
    if text.startswith("-") and ascii_digits(text[1:]):  # a position, negative: not "not an ISO 8601 timestamp"
        raise ValueError("a position must be >= 0")
    # "2.0", "last": neither of the two forms it takes; a time is refused as every time is
    return parse_time(text, field="as_of_recorded", forms=_RECORDED_FORMS)


_RECORDED_FORMS = "a log position (a whole number >= 0) or an ISO 8601 timestamp"


RecordedPoint = Annotated[str | StrictInt, AfterValidator(parse_recorded_point)]


class FindData(EdgeModel):
    """``find``: declared once (the CLI's options are generated from it too)."""

    TIME_FIELDS: ClassVar[tuple[str, ...]] = ("after_time", "before_time", "as_of_event_time")
    query: Annotated[str, AfterValidator(_query_text), Field(max_length=MAX_QUERY_CHARS)] = ""
    limit: Annotated[StrictInt, Field(ge=1, le=50)] = Field(5, description="how many results")
    tags_filter: Tags = []
    source_type: SourceType | None = Field(None, description="only memories from this source")
    workspace: Name | None = Field(None, description="only this workspace (else the configured scope)")
    after_time: str | None = Field(None, description="only facts true from this event time on")
    before_time: str | None = Field(None, description="only facts true before (not at) this event time")
    include_inactive: StrictBool = Field(False, description="also superseded, retired and archived memories")
    as_of_event_time: str | None = Field(None, description="what was true in the world at this time")
    as_of_recorded: RecordedPoint | None = Field(None, description="what the ledger knew at this time or log position")
    cursor: Cursor | None = Field(None, description="next_cursor")
    session_id: SessionId | None = Field(None, description="its working set first, then its memories, then the rest")
    turn: Turn | None = Field(None, description="the conversation's turn (a find records nothing)")
    session_only: StrictBool = Field(False, description="only the conversation's memories")
    include_cold: StrictBool = Field(False, description="also memories cooled for disuse")


def _sections_asked(value: Any) -> Any:
    """``sections`` refused with what it may be (the union's first branch alone named only
    'catalog' or 'all'); an empty list names no section."""
    if value is None or value in ("catalog", "all"):
        return value
    if not isinstance(value, list):
        raise ValueError("'catalog', 'all', or a list of section ids")
    if not value:
        raise ValueError("an empty list names no section: give section ids, 'catalog' or 'all'")
    if not all(map(is_id, value)):
        raise ValueError("section ids are positive integers (or give 'catalog' or 'all')")
    return value


class ReadData(EdgeModel):
    """``read``: declared once (the CLI's options are generated from it too)."""

    TIME_FIELDS: ClassVar[tuple[str, ...]] = ("as_of_event_time",)
    memory_id: MemoryId
    as_of_event_time: str | None = Field(None, description="as it stood in the world at this time")
    as_of_recorded: RecordedPoint | None = Field(None, description="as the ledger knew it at this time or log position")
    sections: Annotated[
        Literal["catalog", "all"] | Annotated[list[PositiveId], Field(max_length=1000)] | None,
        BeforeValidator(_sections_asked),
    ] = Field(None, description="a long memory's sections: the catalog (default), all with their text, or [ids]")
    session_id: SessionId | None = None
    turn: Turn | None = Field(None, description="the conversation's turn (a read records nothing)")


class UpdateData(EdgeModel):
    """``update``: declared once, like ``remember`` (its CLI options are generated from it)."""

    TIME_FIELDS: ClassVar[tuple[str, ...]] = ("event_time",)
    memory_id: MemoryId
    expected_version: PositiveId | None = Field(
        None, description="refused (version_conflict) unless the memory is still at this version"
    )
    authorized: StrictBool = False
    content: Content | None = None
    subject: Subject | None = Field(None, description="the new subject")
    tags: Tags | None = None
    confidence: Confidence | None = Field(None, description="the new confidence")
    event_time: str | None = Field(None, description="when the changed fact became true")
    metadata: Metadata | None = None
    on_secret: OnSecret = Field("refuse", description=ON_SECRET)
    session_id: SessionId | None = None
    turn: Turn | None = Field(None, description="the conversation's turn")


class ReinforceData(EdgeModel):
    """A signal about a working memory (``ledger.promotion``); finds and reads are never signals."""

    memory_id: MemoryId
    signal: Signal = Field(
        description="user_affirmed +1, tool_succeeded +2, user_referenced +1; "
        "promoted at 5 over 3 turns, none contradicted since"
    )
    session_id: SessionId | None = None
    turn: Turn


def _check_pins(value: dict[str, int]) -> dict[str, int]:
    for key, version in value.items():
        if not ascii_digits(key) or int(key) < 1:
            raise ValueError(f"pin key {quoted(key, 20)} is not a memory id")
        if version < 1:
            raise ValueError("a pinned version must be >= 1")
    return value


class JudgeData(EdgeModel):
    conflict_id: PositiveId
    winner_id: MemoryId
    rationale: Reason = ""
    pins: Annotated[dict[str, StrictInt], Field(max_length=16), AfterValidator(_check_pins)] = Field(
        {}, description="{memory_id: version} for both sides"
    )

    def to_kwargs(self) -> dict[str, Any]:
        out = super().to_kwargs()
        out["pins"] = {int(k): v for k, v in self.pins.items()}
        return out


class HelpData(EdgeModel):
    topic: Annotated[Text, Field(max_length=64)] | None = None
