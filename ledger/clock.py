"""Timestamps: one canonical text form so that ordering is a string comparison.

Every stored time is UTC ``YYYY-MM-DDTHH:MM:SS.ffffffZ``; inputs may be any ISO 8601 form
(naive times are taken as UTC), with RFC 3339's lowercase ``t`` and ``z`` as their uppercase
forms. Every time a person or an agent gives goes through ``parse_time``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from fact_ledger.ledger.errors import InvalidInput, quoted


def format_time(dt: datetime) -> str:
    """The canonical text of ``dt``. ``isoformat`` pads every field (``strftime("%Y")`` writes
    the year 5 as ``5``, which sorts after 2026) and takes half of ``strftime``'s time."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def now() -> str:
    return format_time(datetime.now(UTC))


# RFC 3339 (section 5.6) lets the separator and the UTC designator be lowercase; Python's
# ``fromisoformat`` takes neither ``z`` nor, before a ``z``, ``t``.
_RFC3339_CASE = str.maketrans("tz", "TZ")
# ISO 8601's end of a day (``T24:00``): Python has no hour 24, and an instant that is also the next
# day's 00:00 would be stored as that anyway; the refusal says which text to write instead.
_END_OF_DAY = re.compile(r"(\d{4}-?\d{2}-?\d{2})[T ]24(?::?00(?::?00(?:[.,]0+)?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?")


def parse_time(value: str, *, field: str = "time", forms: str | None = None) -> str:
    """Parse an ISO 8601 timestamp (or date) into the canonical form; refuse anything else.

    ``forms`` names what ``field`` takes, for the refusal of a text that is no time at all
    (``as_of_recorded`` also takes a log position)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{field} must be {forms or 'an ISO 8601 timestamp'}", field=field)
    given = value.strip()
    text = given.translate(_RFC3339_CASE)
    if (end_of_day := _END_OF_DAY.fullmatch(text)) and (instead := _next_midnight(end_of_day)) is not None:
        raise InvalidInput(
            f"{field} is {quoted(given)}, the end of a day (24:00), which is not taken: write {instead}", field=field
        )
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        if forms:
            raise InvalidInput(f"{field} is {forms}, not {quoted(given)}", field=field) from None
        raise InvalidInput(f"{field} is not an ISO 8601 timestamp: {quoted(given)}", field=field) from None
    try:  # a time at either end of the calendar can leave it on the way to UTC
        return format_time(dt)
    except OverflowError:
        raise InvalidInput(
            f"{field} is out of range: {quoted(given)} falls outside the years 1 to 9999 in UTC", field=field
        ) from None


def _next_midnight(match: re.Match[str]) -> str | None:
    """The text of the instant ``DATE T24:00`` names (the next day's 00:00, in the same offset) for
    the refusal, or None when DATE is no date (then the text is refused as any other)."""
    try:
        day = datetime.fromisoformat(match[1]).date()
    except ValueError:
        return None
    try:
        return f"the next day's 00:00 ({(day + timedelta(days=1)).isoformat()}T00:00{match[2] or ''}), the same instant"
    except OverflowError:  # 9999-12-31T24:00: its next day leaves the calendar
        return "a time within the years 1 to 9999"


def time_range(
    start: str | None, end: str | None, *, names: tuple[str, str] = ("since", "until"), half_open: bool = False
) -> tuple[str | None, str | None]:
    """``start`` and ``end`` (each optional, named ``names`` as the caller's fields) in canonical
    form. A range that holds no time is refused: ``start`` after ``end`` (both ends inclusive), or
    not before it (``half_open``: [start, end)). An empty answer (no events, an empty export, no
    memories) would read as "nothing happened then"."""
    first, last = names
    start = parse_time(start, field=first) if start else None
    end = parse_time(end, field=last) if end else None
    if start and end and (start >= end if half_open else start > end):  # canonical times sort as times
        said = (
            f"is not before {last} ({end}): the range [{first}, {last})"
            if half_open
            else f"is after {last} ({end}): the range"
        )
        raise InvalidInput(
            f"{first} ({start}) {said} holds no time, so nothing could answer; swap them?", field=first, names=(last,)
        )
    return start, end


# Before this a "fact" is a typo or a way to make it lose every comparison; history that old is
# stated in the content.
EVENT_TIME_FLOOR = "1900-01-01T00:00:00.000000Z"
DEFAULT_SKEW_S = 86_400


def check_event_time(canonical: str, *, now: str, skew_s: float = DEFAULT_SKEW_S, field: str = "event_time") -> None:
    """Refuse a fact's event time beyond now + ``skew_s`` or before the floor.

    The event time decides rule 2 of arbitration: a time in the far future would beat every
    later value forever. A planned event is stated in the content, not as the fact's time.
    """
    if canonical < EVENT_TIME_FLOOR:
        raise InvalidInput(
            f"{field} is before {EVENT_TIME_FLOOR[:10]}: state older history in the content", field=field
        )
    if canonical > format_time(to_datetime(now) + timedelta(seconds=skew_s)):
        raise InvalidInput(
            f"{field} is more than {skew_s:g} s ahead of now: a planned event belongs in the content, "
            "not in the fact's event_time",
            field=field,
        )


def to_datetime(canonical: str) -> datetime:
    return datetime.fromisoformat(canonical)
