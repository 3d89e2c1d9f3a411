"""The canonical time text: one fixed-width form, so that ordering is a string comparison."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fact_ledger.ledger.clock import format_time, parse_time
from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli import exit_codes
from fact_ledger.server.schemas.memory import FindData
from tests.conftest import ledger_cli

CANONICAL = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")
# Kept one day inside datetime's range, so that any offset converts to UTC.
MOMENTS = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30))
OFFSETS = st.integers(min_value=-23 * 60, max_value=23 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@given(MOMENTS, MOMENTS, OFFSETS)
def test_canonical_text_has_one_width_and_sorts_as_the_moments_do(a: datetime, b: datetime, zone: timezone) -> None:
    left, right = format_time(a.replace(tzinfo=zone)), format_time(b)
    assert CANONICAL.fullmatch(left) and CANONICAL.fullmatch(right)
    assert (left < right) == (a.replace(tzinfo=zone) < b.replace(tzinfo=UTC))
    assert datetime.fromisoformat(left) == a.replace(tzinfo=zone)  # nothing lost


def test_an_early_year_is_padded_and_sorts_first() -> None:
    early = parse_time("0005-03-01", field="as_of")
    assert early == "0005-03-01T00:00:00.000000Z"
    assert early < parse_time("1900-01-01") < parse_time("2026-12-03T10:00:00+01:00")
    assert parse_time("2026-12-03T10:00:00+01:00") == "2026-12-03T09:00:00.000000Z"


def test_find_as_of_an_early_year_sees_nothing_that_happened_later(app: LedgerApp) -> None:
    app.remember("The staging API listens on port 8080", subject="staging api", event_time="2020-01-01")
    assert app.find("staging", as_of_event_time="0005-01-01")["results"] == []
    assert [r["content"] for r in app.find("staging", as_of_event_time="2021-01-01")["results"]] == [
        "The staging API listens on port 8080"
    ]


@pytest.mark.parametrize("value", ["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+05:00"])
def test_a_time_that_leaves_the_calendar_on_the_way_to_utc_is_refused(value: str) -> None:
    with pytest.raises(InvalidInput, match="before_time is out of range") as refused:
        parse_time(value, field="before_time")
    assert refused.value.field == "before_time"


def test_the_cli_refuses_it_in_words_with_the_refusal_code(db_path: Path) -> None:
    done = ledger_cli("--db", str(db_path), "find", "staging", "--before-time", "9999-12-31T23:00:00-05:00")
    assert done.returncode == exit_codes.REFUSED
    said = done.stderr.strip()  # no traceback, its option, and why
    assert said == (
        "error (invalid_input): --before-time is out of range: '9999-12-31T23:00:00-05:00' falls outside "
        "the years 1 to 9999 in UTC"
    )


def test_the_memory_tool_refuses_it_in_its_error_shape() -> None:
    with pytest.raises(InvalidInput, match="as_of_event_time is out of range"):
        FindData.parse({"query": "staging", "as_of_event_time": "0001-01-01T00:00:00+05:00"})
    # a time as_of_recorded takes, out of range: not "a log position or an ISO 8601 timestamp"
    with pytest.raises(InvalidInput, match="as_of_recorded is out of range: '0001-01-01T00:00:00"):
        FindData.parse({"query": "staging", "as_of_recorded": "0001-01-01T00:00:00+05:00"})


@given(st.datetimes(), OFFSETS)
def test_any_iso_time_is_canonical_or_refused_never_a_crash(moment: datetime, zone: timezone) -> None:
    text = moment.replace(tzinfo=zone).isoformat()
    try:
        canonical = parse_time(text, field="event_time")
    except InvalidInput as refused:
        assert refused.field == "event_time"
        return
    assert CANONICAL.fullmatch(canonical)
    assert datetime.fromisoformat(canonical) == moment.replace(tzinfo=zone)


def test_a_position_of_thousands_of_digits_is_the_end_of_the_log(db_path: Path) -> None:
    """A position past the end is the end (docs/time-travel.md), however many digits it has:
    timeline printed a traceback, find and read answered Python's own limit on integer text."""
    import json

    db = str(db_path)
    ledger_cli("remember", "The build server is ci-3", "--db", db, check=True)
    far = "9" * 5000
    for args in (("find", "build"), ("read", "1"), ("timeline", "1")):
        done = ledger_cli(*args, "--as-of-recorded", far, "--db", db, "--json")
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-500:]
        answer = json.loads(done.stdout)
        assert answer["as_of"]["recorded_position"] == 1, answer
    assert FindData.parse({"query": "build", "as_of_recorded": far}).as_of_recorded >= 2**63 - 1
