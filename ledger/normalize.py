"""Text and value normalisation shared by duplicate detection, claims and search.

Two memories only conflict when their values *differ after normalisation*, so everything a
person would call "the same value" must map to one form: Unicode NFKC (full-width → half-width),
case, whitespace, zero-width characters, numbers with units (``5万`` = ``50000`` = ``50,000元``,
``30s`` = ``30000ms``), dates and times (``2025年7月1日`` = ``July 1, 2025`` = ``2025-07-01``,
``下午3点`` = ``3pm`` = ``15:00``, ``周三`` = ``Wednesday``), versions (``v2.0`` = ``2``) and
on/off words. A value is normalised into a ``(kind, canonical)`` pair; :func:`same_value`
compares two canonical forms of one kind (a unitless number equals the same number with a unit;
a "when" conflicts only where both sides name the same component). Pure functions, no IO.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from decimal import Decimal, InvalidOperation

from fact_ledger.ledger.normalize_when import CN_DIGITS, parse_when, same_when

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_SPACE = re.compile(r"\s+")

KIND_NUMBER = "number"
KIND_WHEN = "when"
KIND_VERSION = "version"
KIND_BOOL = "bool"
KIND_TEXT = "text"


def normalize_text(text: str) -> str:
    """The comparable form of a string: NFKC, casefolded, no zero-width, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH).casefold()
    return _SPACE.sub(" ", text).strip()


def content_hash(content: str) -> str:
    """Fingerprint of a memory's normalised content (duplicate detection key)."""
    return hashlib.sha256(normalize_text(content).encode()).hexdigest()[:32]


# -- numbers -----------------------------------------------------------------------------------
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
_MULTIPLIERS = {
    "万": Decimal(10_000),
    "亿": Decimal(100_000_000),
    "千": Decimal(1000),
    "百": Decimal(100),
    "k": Decimal(1000),
    "thousand": Decimal(1000),
    "million": Decimal(1_000_000),
    "billion": Decimal(1_000_000_000),
    "w": Decimal(10_000),
}
# unit -> (canonical unit, factor). The default currency (yuan) is unitless, so 5万 = 50,000元.
_UNITS: dict[str, tuple[str, Decimal]] = {}
for _names, _canon, _factor in (
    (("元", "块", "块钱", "人民币", "rmb", "cny", "¥", "yuan"), "", 1),
    (("$", "usd", "美元", "美金", "dollar", "dollars"), "usd", 1),
    (("€", "eur", "euro", "euros", "欧元"), "eur", 1),
    (("£", "gbp", "英镑"), "gbp", 1),
    (("ms", "毫秒", "millisecond", "milliseconds"), "s", Decimal("0.001")),
    (("s", "sec", "secs", "second", "seconds", "秒", "秒钟"), "s", 1),
    (("min", "mins", "minute", "minutes", "分钟"), "s", 60),
    (("h", "hr", "hrs", "hour", "hours", "小时", "个小时"), "s", 3600),
    (("d", "day", "days", "天"), "s", 86400),
    (("%", "percent", "pct", "百分之"), "%", 1),
    (("wk", "wks", "week", "weeks", "个星期"), "s", 604800),
    # months and years in months ("12 months" is "1 year"; a month is no fixed number of seconds)
    (("month", "months", "个月"), "mo", 1),
    (("year", "years", "yr", "yrs"), "mo", 12),
    (("byte", "bytes", "字节"), "b", 1),  # not "b" alone: "desk 4B" is a code, "7B parameters" billions
    (("kb", "kib", "kilobyte", "kilobytes", "kibibyte", "kibibytes", "千字节"), "b", 1024),
    (("mb", "mib", "megabyte", "megabytes", "mebibyte", "mebibytes", "兆字节"), "b", 1024**2),
    (("gb", "gib", "gigabyte", "gigabytes", "gibibyte", "gibibytes", "吉字节"), "b", 1024**3),
    (("tb", "tib", "terabyte", "terabytes", "tebibyte", "tebibytes", "太字节"), "b", 1024**4),
    (("个", "人", "次", "台", "条", "items", "item", "users", "user", "people", "times", "requests"), "count", 1),
):
    for _name in _names:
        _UNITS[_name] = (_canon, Decimal(_factor))

_UNIT_ALT = "|".join(sorted((re.escape(u) for u in _UNITS if u not in "$€£¥"), key=len, reverse=True))
_NUMBER = re.compile(
    r"(?P<cur>[$€£¥])?\s*(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百千万亿]+)"
    r"\s*(?P<mult>万|亿|千|百|k(?![a-z])|w(?![a-z])|thousand|million|billion)?"
    rf"\s*(?P<unit>{_UNIT_ALT})?(?![a-z0-9])"
)


def _cn_number(text: str) -> Decimal | None:
    """Chinese numerals up to the hundred millions: 三千五百 → 3500, 两万 → 20000, 十五 → 15, and
    digits written in a row as a year or a code is: 二〇二五 → 2025."""
    total, section, digit = 0, 0, None
    for ch in text:
        if ch in CN_DIGITS:  # digits in a row are read positionally: 二〇二五 → 2025
            digit = CN_DIGITS[ch] if digit is None else digit * 10 + CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            section += (1 if digit is None else digit) * _CN_UNITS[ch]
            digit = None
        elif ch in _CN_BIG:
            section += digit or 0
            total = (total + section) * _CN_BIG[ch]
            section, digit = 0, None
        else:
            return None
    return Decimal(total + section + (digit or 0))


def _decimal_text(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def parse_number(text: str, *, whole: bool = True) -> tuple[str, int] | None:
    """``(canonical, length consumed)`` for a number with an optional multiplier and unit."""
    match = _NUMBER.match(text)
    if match is None or (whole and match.end() != len(text)):
        return None
    raw = match["num"]
    if raw[0].isdigit():
        try:
            value = Decimal(raw.replace(",", ""))
        except InvalidOperation:
            return None
    else:
        value_cn = _cn_number(raw)
        if value_cn is None:
            return None
        value = value_cn
    if match["mult"]:
        value *= _MULTIPLIERS[match["mult"]]
    unit_name = match["unit"] or match["cur"] or ""
    canon, factor = _UNITS.get(unit_name, ("", Decimal(1)))
    value *= factor
    return (f"{_decimal_text(value)} {canon}".strip(), match.end())


# -- versions, booleans ------------------------------------------------------------------------
_VERSION = re.compile(r"(?:v|version\s*|版本\s*)?(\d+(?:\.\d+)+|\d+)(?:[-+][0-9a-z.]+)?(?![\d.])")
_EXPLICIT_VERSION = re.compile(r"(?:v|version\s*|版本\s*)\d+(?:\.\d+)*|\d+\.\d+\.\d+")
_BOOL = {
    "true": "true",
    "yes": "true",
    "on": "true",
    "enabled": "true",
    "enable": "true",
    "up": "true",
    "online": "true",
    "active": "true",
    "开启": "true",
    "开": "true",
    "启用": "true",
    "打开": "true",
    "在线": "true",
    "false": "false",
    "no": "false",
    "off": "false",
    "disabled": "false",
    "disable": "false",
    "down": "false",
    "offline": "false",
    "inactive": "false",
    "关闭": "false",
    "关": "false",
    "禁用": "false",
    "停用": "false",
    "离线": "false",
}


def parse_version(text: str, *, whole: bool = True) -> tuple[str, int] | None:
    match = _VERSION.match(text)
    if match is None or (whole and match.end() != len(text)):
        return None
    parts = [str(int(p)) for p in match[1].split(".")]
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts), match.end()


# -- the entry points --------------------------------------------------------------------------
_QUOTES = "\"'`“”‘’「」『』《》"
_TRAIL = " .,;:!?。，；：！？、)]}）】…~"
_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


def clean_value(value: str) -> str:
    """Normalised text of a value without surrounding quotes, brackets or trailing punctuation."""
    text = normalize_text(value).strip(_TRAIL).strip(_QUOTES).strip(_TRAIL)
    return _LEADING_ARTICLE.sub("", text)


def normalize_value(value: str, *, hint: str = "") -> tuple[str, str]:
    """``(kind, canonical)`` of a whole value; ``hint`` (the attribute) marks version fields."""
    text = clean_value(value)
    versionish = "version" in hint or "版本" in hint or _EXPLICIT_VERSION.fullmatch(text) is not None
    if versionish and (parsed := parse_version(text)):
        return KIND_VERSION, parsed[0]
    if text in _BOOL:
        return KIND_BOOL, _BOOL[text]
    if (number := parse_number(text)) is not None:
        return KIND_NUMBER, number[0]
    if (when := parse_when(text)) is not None and when[1] == len(text):
        return KIND_WHEN, when[0]
    return KIND_TEXT, re.sub(r"(?<=[^\x00-\x7f]) (?=[^\x00-\x7f])", "", text)


def leading_value(text: str, *, hint: str = "") -> tuple[str, str, int] | None:
    """A typed value at the start of ``text`` (number, when, version): ``(kind, canonical, end)``.

    Lets "returns 404 for missing ids" or "周三下午3点开会" yield the value without the tail.
    """
    text = normalize_text(text)
    if "version" in hint or "版本" in hint or _EXPLICIT_VERSION.match(text):
        parsed = parse_version(text, whole=False)
        if parsed and _boundary(text, parsed[1]):
            return KIND_VERSION, parsed[0], parsed[1]
    when = parse_when(text)
    if when and _boundary(text, when[1]):
        return KIND_WHEN, when[0], when[1]
    number = parse_number(text, whole=False)
    if number and _boundary(text, number[1]):
        return KIND_NUMBER, number[0], number[1]
    return None


def _boundary(text: str, end: int) -> bool:
    """The typed token ends at a word boundary (or a CJK character follows)."""
    if end >= len(text):
        return True
    nxt = text[end]
    if nxt == "/" and text[end + 1 : end + 2].isalpha():
        return True  # a rate: "$20/month" is $20 as "$20 a month" is
    return not (nxt.isascii() and (nxt.isalnum() or nxt in "._-/"))


def same_value(kind: str, left: str, right: str) -> bool:
    """Whether two canonical values of one kind state the same thing."""
    if left == right:
        return True
    if kind == KIND_NUMBER:
        lnum, _, lunit = left.partition(" ")
        rnum, _, runit = right.partition(" ")
        return lnum == rnum and (not lunit or not runit)
    if kind == KIND_WHEN:
        return same_when(left, right)
    return False
