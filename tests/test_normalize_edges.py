"""Value normalisation at its edges: the same fact written differently (Chinese numerals,
multipliers, currencies, time and size units, versions) normalises to one canonical value, and
different facts keep different values. Two memories conflict only when their values differ after
normalisation, so a wrong factor or digit here is a missed conflict or a false one.
Pure functions: input text -> exact ``(kind, canonical)``."""

from __future__ import annotations

import pytest

from fact_ledger.ledger.normalize import content_hash, leading_value, normalize_value, same_value


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        # every Chinese digit reads as its own number
        ("零", "0"),
        ("〇", "0"),
        ("一", "1"),
        ("二", "2"),
        ("两", "2"),
        ("三", "3"),
        ("四", "4"),
        ("五", "5"),
        ("六", "6"),
        ("七", "7"),
        ("八", "8"),
        ("九", "9"),
        # units and sections of Chinese numerals
        ("十", "10"),
        ("十五", "15"),
        ("三百", "300"),
        ("三千五百", "3500"),
        ("十万", "100000"),
        ("三万五千零八", "35008"),
        ("两亿", "200000000"),
        ("一百零五", "105"),
        ("两千零二十", "2020"),
        # digits in a row, as a year or a code is written: each digit keeps its place
        ("二〇二五", "2025"),
        ("一二三", "123"),
        # plain numbers keep their trailing zeros before the point, drop them after it
        ("100", "100"),
        ("1.50", "1.5"),
        # multipliers after Arabic digits
        ("3千", "3000"),
        ("5百", "500"),
        ("2亿", "200000000"),
        ("5k", "5000"),
        ("5w", "50000"),
        ("5 thousand", "5000"),
        ("5 million", "5000000"),
        ("5 billion", "5000000000"),
    ],
)
def test_a_written_number_has_its_exact_value(written: str, canonical: str) -> None:
    assert normalize_value(written) == ("number", canonical)


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("$5", "5 usd"),
        ("5 dollars", "5 usd"),
        ("€5", "5 eur"),
        ("5 euros", "5 eur"),
        ("£5", "5 gbp"),
        ("5 英镑", "5 gbp"),
        ("50%", "50 %"),
        ("50 percent", "50 %"),
        ("5 bytes", "5 b"),
        ("1 kib", "1024 b"),
        ("1 TiB", "1099511627776 b"),
    ],
)
def test_a_value_with_a_unit_keeps_its_amount(written: str, canonical: str) -> None:
    assert normalize_value(written) == ("number", canonical)


@pytest.mark.parametrize(
    "forms",
    [
        ("2 hours", "120 min", "7200s", "2h", "2个小时"),
        ("2 days", "48 hours", "172800 seconds", "2天"),
        ("1 min", "60s", "60000ms", "1分钟"),
        ("2 GB", "2048 MiB", "2097152 kb"),
        ("1 TiB", "1024 GB"),
        ("5块钱", "5元", "5"),
        ("10秒钟", "10 s"),
    ],
)
def test_one_quantity_in_different_units_is_one_value(forms: tuple[str, ...]) -> None:
    values = {normalize_value(f) for f in forms}
    assert len(values) == 1, values
    assert next(iter(values))[0] == "number"


def test_different_amounts_and_units_stay_different() -> None:
    assert normalize_value("2 hours") != normalize_value("2 days")
    assert normalize_value("3 TB") != normalize_value("3 GB")
    assert not same_value("number", normalize_value("5 usd")[1], normalize_value("5 eur")[1])
    # different texts, versions or switches are different, and the answer is a bool
    assert same_value("text", "redis", "postgres") is False
    assert same_value("version", "2", "2.1") is False
    assert same_value("bool", "true", "false") is False


@pytest.mark.parametrize(
    ("value", "hint", "expected"),
    [
        ("v2.0", "", ("version", "2")),
        ("v0.0", "", ("version", "0")),
        ("0", "version", ("version", "0")),  # version 0 stays "0", not empty
        ("1.5.2", "", ("version", "1.5.2")),
        # a version field whose value is more than a version is kept as text
        ("2.0 beta", "version", ("text", "2.0 beta")),
        ("latest", "version", ("text", "latest")),
    ],
)
def test_versions_normalise_only_when_the_whole_value_is_one(value: str, hint: str, expected: tuple[str, str]) -> None:
    assert normalize_value(value, hint=hint) == expected


@pytest.mark.parametrize(
    ("text", "hint", "expected"),
    [
        ("v2.0 released today", "", ("version", "2", 4)),
        ("v2.0.1-beta is out", "", ("version", "2.0.1", 11)),
        ("周三下午3点开会", "", ("when", "wed 15:00", 6)),
        ("404 for missing ids", "", ("number", "404", 3)),
        # a token glued to more of a word is not a value
        ("v2.0abc", "", None),
        ("404/500 errors", "", None),
        ("10_000 rows", "", None),
        ("latest build", "version", None),
    ],
)
def test_leading_value_reads_a_whole_token_at_the_start(
    text: str, hint: str, expected: tuple[str, str, int] | None
) -> None:
    assert leading_value(text, hint=hint) == expected


def test_the_duplicate_key_is_stable_across_spellings_and_releases() -> None:
    # content_hash is stored in MemoryRecorded events and compared with a fresh one: its form
    # must not change between releases, and case/width/spacing must not change it
    key = content_hash("Hello  World")
    assert key == "b94d27b9934d3e08a52e52d7da7dabfa"
    assert content_hash(" ＨＥＬＬＯ world\u200b") == key
