"""Dates, weekdays and times in English and Chinese, normalised to one comparable form.

A "when" value is up to three components in a fixed order — a date (``2025-07-01``, or
``--07-01`` without a year), a weekday (``wed``, ``next wed``) and a time of day (``15:00``) —
so ``2025年7月1日下午3点``, ``July 1, 2025 at 3pm`` and ``2025-07-01T15:00`` all read
``2025-07-01 15:00``. Two whens conflict only where both name the same component and it
differs: "the meeting is on Wednesday" and "the meeting is at 3pm" do not contradict each other.
"""

from __future__ import annotations

import re
from datetime import date

_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_EN_WEEKDAYS = {
    name: _WEEKDAYS[i]
    for i, names in enumerate(
        (
            ("monday", "mondays", "mon"),  # "at 10:00 on Mondays": every one of them, the same slot
            ("tuesday", "tuesdays", "tue", "tues"),
            ("wednesday", "wednesdays", "wed"),
            ("thursday", "thursdays", "thu", "thur", "thurs"),
            ("friday", "fridays", "fri"),
            ("saturday", "saturdays", "sat"),
            ("sunday", "sundays", "sun"),
        )
    )
    for name in names
}
_ZH_WEEKDAYS = {"一": "mon", "二": "tue", "三": "wed", "四": "thu", "五": "fri", "六": "sat", "日": "sun", "天": "sun"}
# Chinese digits, shared with the number reading of ledger/normalize.py
CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_SMALL = {**CN_DIGITS, "十": 10}
_N = r"(?:\d{1,2}|[零〇一二两三四五六七八九十]{1,3})"
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WD_ALT = "|".join(sorted(_EN_WEEKDAYS, key=len, reverse=True))

_DATE_PATTERNS = (
    re.compile(r"(?P<y>\d{4})\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]\s*(?P<d>\d{1,2})\s*(?:日|号)?"),
    re.compile(rf"(?:(?P<y>\d{{4}})\s*年\s*)?(?P<m>{_N})\s*月\s*(?P<d>{_N})\s*(?:日|号)"),
    re.compile(rf"(?P<mn>{_MONTH_ALT})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?![\d:])(?:,?\s+(?P<y>\d{{4}}))?"),
    re.compile(rf"(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mn>{_MONTH_ALT})\.?(?:,?\s+(?P<y>\d{{4}}))?"),
)
_WEEKDAY_PATTERNS = (
    re.compile(r"(?P<rel>下|上|本|这)?(?:个)?(?:周|星期|礼拜)(?P<zh>[一二三四五六日天])"),
    re.compile(rf"(?:(?P<rel>next|last|this)\s+)?(?P<en>{_WD_ALT})\b\.?"),
)
_TIME_PATTERNS = (
    re.compile(r"(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}(?:\.\d+)?))?\s*(?P<ap>am|pm|a\.m\.?|p\.m\.?)?(?:z|utc)?"),
    re.compile(r"(?P<h>\d{1,2})\s*(?P<ap>am|pm|a\.m\.?|p\.m\.?)"),
    re.compile(
        rf"(?P<zp>上午|早上|早晨|中午|下午|晚上|傍晚|凌晨)?(?P<h>{_N})\s*(?:点|时)"
        rf"(?:\s*(?P<half>半)|\s*(?P<mi>{_N})\s*分?)?"
    ),
    re.compile(r"(?P<noon>noon|midday|midnight|正午)"),
)
_CONNECTOR = re.compile(r"(?:\s*,\s*|\s+at\s+|\s+on\s+|\s*t(?=\d)|\s+|的|于|在)?")
_TOKEN = re.compile(
    r"(?P<date>\d{4}-\d\d-\d\d|--\d\d-\d\d)|(?P<day>---\d\d)|(?P<wd>(?:next |last |this )?(?:"
    + "|".join(_WEEKDAYS)
    + r"))|(?P<time>\d\d:\d\d(?::\d\d(?:\.\d+)?)?)"
)


def _small(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text.startswith("十") and len(text) > 2:
        return -1  # "十二三" (twelve or thirteen) is a range, not a number
    if text.startswith("十"):
        return 10 + (_CN_SMALL.get(text[1:], 0) if len(text) > 1 else 0)
    if len(text) >= 2 and text[1] == "十":
        return _CN_SMALL[text[0]] * 10 + (_CN_SMALL.get(text[2:], 0) if len(text) > 2 else 0)
    return _CN_SMALL.get(text, -1)


def _date(match: re.Match[str]) -> str | None:
    groups = match.groupdict()
    month = _MONTHS[groups["mn"]] if groups.get("mn") else _small(groups["m"])
    day = _small(groups["d"])
    year = groups.get("y")
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{year}-{month:02d}-{day:02d}" if year else f"--{month:02d}-{day:02d}"


def _weekday(match: re.Match[str]) -> str:
    groups = match.groupdict()
    day = _ZH_WEEKDAYS[groups["zh"]] if groups.get("zh") else _EN_WEEKDAYS[groups["en"]]
    rel = {"下": "next", "上": "last", "next": "next", "last": "last"}.get(groups.get("rel") or "", "")
    return f"{rel} {day}".strip()


def _time(match: re.Match[str]) -> str | None:
    groups = match.groupdict()
    if groups.get("noon"):
        return "00:00" if groups["noon"] == "midnight" else "12:00"
    hour = _small(groups["h"])
    if hour < 0:  # "下午两三点" (two or three) is a range, not an hour
        return None
    minute = 30 if groups.get("half") else (_small(groups["mi"]) if groups.get("mi") else 0)
    ap = (groups.get("ap") or "").replace(".", "")
    zp = groups.get("zp") or ""
    if (ap == "pm" or zp in ("下午", "晚上", "傍晚")) and hour < 12:
        hour += 12
    if (ap == "am" or zp == "凌晨") and hour == 12:
        hour = 0
    if zp == "晚上" and hour == 12:  # twelve in the evening is midnight, not noon
        hour = 0
    if zp == "中午" and hour < 6:
        hour += 12
    if not (0 <= hour <= 24 and 0 <= minute < 60):
        return None
    seconds = groups.get("s")
    if seconds and float(seconds) != 0:
        sec_text = seconds.rstrip("0").rstrip(".") if "." in seconds else seconds
        return f"{hour:02d}:{minute:02d}:{sec_text}"
    return f"{hour:02d}:{minute:02d}"


_KINDS = (("date", _DATE_PATTERNS, _date), ("wd", _WEEKDAY_PATTERNS, _weekday), ("time", _TIME_PATTERNS, _time))


def parse_when(text: str) -> tuple[str, int] | None:
    """``(canonical, end)`` for date/weekday/time components at the start of normalised ``text``."""
    found: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        start = pos
        if found:
            connector = _CONNECTOR.match(text, pos)
            if connector:
                start = connector.end()
        hit = None
        for kind, patterns, convert in _KINDS:
            if kind in found:
                continue
            for pattern in patterns:
                match = pattern.match(text, start)
                if match and match.end() > start:
                    value = convert(match)
                    if value is not None:
                        hit = (kind, value, match.end())
                        break
            if hit:
                break
        if hit is None:
            break
        found[hit[0]] = hit[1]
        pos = len(text[: hit[2]].rstrip())  # a time's pattern takes the spaces where an "am" could follow
    if not found:
        return None
    parts = [found[k] for k in ("date", "wd", "time") if k in found]
    return " ".join(parts), pos


def _components(canonical: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for match in _TOKEN.finditer(canonical):
        kind = match.lastgroup
        if kind:
            out.setdefault(kind, match.group(kind))
    return out


def same_when(left: str, right: str) -> bool:
    """No component named on both sides differs (a full date also implies its weekday, and a date
    its day of the month)."""
    a, b = _components(left), _components(right)
    if "date" in a and "date" in b:
        da, db = a["date"], b["date"]
        partial = da.startswith("--") or db.startswith("--")
        if (da[-5:] != db[-5:]) if partial else (da != db):
            return False
    for one, other in ((a, b), (b, a)):
        if "date" in one and not one["date"].startswith("--") and "wd" in other and " " not in other["wd"]:
            y, m, d = (int(p) for p in one["date"].split("-"))
            try:
                implied = _WEEKDAYS[date(y, m, d).weekday()]
            except ValueError:  # 2025-02-30: no weekday to compare
                continue
            if implied != other["wd"]:
                return False
    if "wd" in a and "wd" in b and a["wd"] != b["wd"]:
        return False
    # a day of the month alone ("---15": "on the 15th") against another or a date's day
    day_a, day_b = (x.get("day", "---" + x["date"][-2:] if "date" in x else None) for x in (a, b))
    if day_a is not None and day_b is not None and day_a != day_b:
        return False
    return not ("time" in a and "time" in b and a["time"] != b["time"])
