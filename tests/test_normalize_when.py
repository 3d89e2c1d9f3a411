"""Dates, weekdays and times in a claim's value: one moment written differently is one value,
different moments are different values, and what is not a moment stays text.

Pure functions (``normalize_value`` / ``same_value``), no ledger: each case is one reading a
user relies on when two memories are compared for a conflict.
"""

from __future__ import annotations

import pytest

from fact_ledger.ledger.normalize import normalize_value, same_value


def when(text: str) -> str:
    kind, canonical = normalize_value(text)
    assert kind == "when", (text, kind, canonical)
    return canonical


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        # one moment in three languages of writing
        ("2025年7月1日下午3点", "2025-07-01 15:00"),
        ("July 1, 2025 at 3pm", "2025-07-01 15:00"),
        ("2025-07-01T15:00", "2025-07-01 15:00"),
        ("周三下午3点", "wed 15:00"),
        # the last valid month and day of a year
        ("2025-12-31", "2025-12-31"),
        ("十二月三十一日", "--12-31"),
    ],
)
def test_one_moment_written_differently_reads_as_one_value(written: str, canonical: str) -> None:
    assert when(written) == canonical


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("零点", "00:00"),
        ("〇点", "00:00"),
        ("一月一日", "--01-01"),
        ("二月二日", "--02-02"),
        ("两点", "02:00"),
        ("三点", "03:00"),
        ("四点", "04:00"),
        ("五点", "05:00"),
        ("六点", "06:00"),
        ("七点", "07:00"),
        ("八点", "08:00"),
        ("九点", "09:00"),
        ("十点", "10:00"),
        ("十二点", "12:00"),
        ("二十点", "20:00"),
        ("二十三点", "23:00"),
        ("三点半", "03:30"),
        ("三点十五分", "03:15"),
        ("九点四十五分", "09:45"),
    ],
)
def test_chinese_numerals_read_as_their_number(written: str, canonical: str) -> None:
    assert when(written) == canonical
    assert same_value("when", when(written), canonical)


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("9am", "09:00"),
        ("9:00", "09:00"),
        ("9pm", "21:00"),
        ("3 p.m.", "15:00"),  # a value's trailing full stop is trimmed: "3 p.m" still reads
        ("3:30 a.m.", "03:30"),
        ("下午三点", "15:00"),
        ("00:30", "00:30"),
        ("24:00", "24:00"),  # end of day, as opening hours write it
        # twelve o'clock: noon and midnight are two different moments
        ("noon", "12:00"),
        ("正午", "12:00"),
        ("12pm", "12:00"),
        ("midnight", "00:00"),
        ("12am", "00:00"),
        ("凌晨十二点", "00:00"),
        ("晚上十二点", "00:00"),
        # 中午 spans late morning to early afternoon
        ("中午十一点", "11:00"),
        ("中午十二点", "12:00"),
        ("中午一点", "13:00"),
    ],
)
def test_times_of_day_and_their_half_of_the_day(written: str, canonical: str) -> None:
    assert when(written) == canonical


def test_noon_and_midnight_are_different_moments() -> None:
    assert same_value("when", when("noon"), when("midnight")) is False
    assert same_value("when", when("晚上十二点"), when("12pm")) is False
    assert same_value("when", when("晚上十二点"), when("midnight")) is True


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("15:00:00", "15:00"),  # zero seconds add nothing
        ("15:00:01", "15:00:01"),
        ("15:00:30", "15:00:30"),
        ("15:00:30.500", "15:00:30.5"),
    ],
)
def test_seconds_are_kept_only_when_they_say_something(written: str, canonical: str) -> None:
    assert when(written) == canonical


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("下周三", "next wed"),
        ("上周三", "last wed"),
        ("本周三", "wed"),
        ("next wednesday", "next wed"),
        ("last friday", "last fri"),
        ("星期天", "sun"),
    ],
)
def test_relative_weekdays_keep_which_week(written: str, canonical: str) -> None:
    assert when(written) == canonical


@pytest.mark.parametrize(
    "value",
    [
        "2025-13-01",  # no thirteenth month
        "2025-12-32",  # no day 32
        "25:00",
        "10:60",
        "下午两三点",  # "two or three in the afternoon" is a range, not 11:00
        "十二三点",  # "twelve or one o'clock" is a range, not 10:00
        "2025-07-01, 2025-07-08",  # two dates are not the later one
    ],
)
def test_what_is_not_one_moment_stays_text(value: str) -> None:
    assert normalize_value(value)[0] == "text"


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [
        # a date without a year agrees with the same day of any year, not another day
        ("July 1", "2025年7月1日", True),
        ("2025-07-01", "7月1日", True),
        ("July 2", "2025-07-01", False),
        ("2025-07-01", "2026-07-01", False),
        # a full date implies its weekday: 2025-07-01 was a Tuesday
        ("2025-07-01", "Tuesday", True),
        ("Wednesday", "2025-07-01", False),
        ("2025-02-30", "Wednesday", True),  # no such day, so no weekday to contradict
        ("next wed", "last wed", False),
        ("wed", "thu", False),
        ("15:00", "4pm", False),
        ("Wednesday", "3pm", True),  # different parts of a when never conflict
    ],
)
def test_two_whens_conflict_only_where_they_name_the_same_part_differently(left: str, right: str, same: bool) -> None:
    assert same_value("when", when(left), when(right)) is same
    assert same_value("when", when(right), when(left)) is same


@pytest.mark.parametrize(
    ("content", "value"),
    [
        ("The standup is at 10:30 on Mondays", "mon 10:30"),
        ("The standup is at 10:30 on Monday", "mon 10:30"),
        ("The standup is at 10:30 mondays", "mon 10:30"),
        ("The standup is at 3 pm on Fridays", "fri 15:00"),
        ("The standup is at 10:30 in room 4", "10:30"),
    ],
)
def test_a_time_with_a_weekday_after_it_is_that_time(content: str, value: str) -> None:
    """It read as the number 10 ("10:00 on Mondays" and "10:30 on Mondays" were one value, so a
    change within the hour opened no claim set): the time's pattern kept the space after it,
    which the weekday's connector needed, and plural weekdays were no weekday."""
    from fact_ledger.ledger.claims import collides, extract_claims

    (claim,) = extract_claims(content)
    assert (claim.kind, claim.value_norm) == ("when", value), claim
    (earlier,) = extract_claims("The standup is at 10:00 on Mondays")
    assert collides(earlier, claim)


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [
        ("---15", "---22", False),
        ("---15", "---15", True),
        ("--06-03", "---10", False),  # "the launch is on June 3" → "… moved to the 10th"
        ("--06-03", "---03", True),
        ("2026-06-03", "---03", True),
        ("---15 10:00", "---15", True),
        ("---15", "wed", True),  # different parts of a when never conflict
    ],
)
def test_a_day_of_the_month_alone_meets_another_or_a_dates_day(left: str, right: str, same: bool) -> None:
    """ "On the 15th" (``---15``, the claims' canonical day of the month) against "the 22nd" or a
    date: the day is a part of the when, compared where both name it."""
    assert same_value("when", left, right) is same
    assert same_value("when", right, left) is same
