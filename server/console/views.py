"""Pure shaping of facade results for the pages: what changed between versions, the verdict rule
by rule, and the geometry of the timeline strip. No IO; tested directly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fact_ledger.ledger.clock import to_datetime
from fact_ledger.ledger.word_diff import word_diff as diff_runs
from fact_ledger.server.app.timetravel import VERSION_FIELDS


def known_then(versions: list[dict[str, Any]], point: int | None) -> list[dict[str, Any]]:
    """The versions, and each version's events, the ledger held at log position ``point`` (None:
    now). A past view listed under an early version the events that came after it (a retraction,
    a supersession, a settled conflict): the memory's future, on a page of what was known then."""
    if point is None:
        return versions
    return [
        {**v, "events": [e for e in v.get("events", []) if e["position"] <= point]}
        for v in versions
        if v["position"] <= point
    ]


def version_changes(versions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each version with ``changed`` (the fields that differ from the one before) and, when the
    content changed, ``diff``: the words as ``(op, text)`` with op ``same``/``added``/``removed``.
    A page's first version is compared with the one before it through its ``changed_from``."""
    out = []
    previous: dict[str, Any] | None = None
    for version in versions:
        if previous is None and "changed_from" in version:  # a later page: the version before is not on it
            previous = {**version, **version["changed_from"]}
        changed = [] if previous is None else [f for f in VERSION_FIELDS if version.get(f) != previous.get(f)]
        diff: list[tuple[str, str]] = []
        if previous is not None and "content" in changed:
            diff = word_diff(previous["content"], version["content"])
        out.append({**version, "changed": changed, "diff": diff})
        previous = version
    return out


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """``compare``'s word diff (:func:`ledger.word_diff.word_diff`) as the history page shows it:
    ``(op, text)`` with op ``same``/``removed``/``added``."""
    ops: list[tuple[str, str]] = []
    for run in diff_runs(before, after):
        if run["op"] == "equal":
            ops.append(("same", run["left"]))
            continue
        if run["left"]:
            ops.append(("removed", run["left"]))
        if run["right"]:
            ops.append(("added", run["right"]))
    return ops


DECIDES = " — this rule decides"  # the arbiter's mark; the table marks the deciding row itself
_TIE = re.compile(r"^tie \((?P<label>.+) on both sides\)$")
_TIE_PAIR = re.compile(r"^tie \((?P<a>.+) and (?P<b>.+) rank the same\)$")  # two labels, one rank
_RULE_1 = re.compile(r"^the (?P<w>\S+) side is (?P<wl>.+) and the (?P<l>\S+) side is (?P<ll>.+)$")
_COMPARED = re.compile(
    r"^the (?P<w>\S+) side (?:has the newer event_time|comes from the more trusted source|"
    r"has the higher confidence|was ingested later) \((?P<wl>.+) > (?P<ll>.+)\)$"
)
RULE_ORDER_FIRST = "user_confirmed/locked protection"
RULE_KEYS = {
    "user_confirmed/locked protection": "rule_1",
    "event_time": "event_time",
    "source_type": "source_type",
    "confidence": "confidence",
    "ingest_time": "ingest_time",
}


def verdict_rows(verdict: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per rule in the verdict's order: the rule, what it found (``reason``, and its parts
    for the page to say in its language: ``tie`` with ``label``, or ``wins`` with ``w``/``l`` and
    their labels ``wl``/``ll``), and whether it decided."""
    if not verdict:
        return []
    reasons = list(verdict.get("reasons") or [])
    rows = []
    for rule in verdict.get("rule_order") or []:
        found = next((r for r in reasons if r.startswith(rule + ":")), None)
        reason = found.removeprefix(rule + ":").strip().removesuffix(DECIDES) if found else ""
        row: dict[str, Any] = {"rule": rule, "reason": reason, "decides": verdict.get("rule") == rule, "kind": ""}
        if tie := _TIE.match(reason):
            row.update(kind="tie", label=tie["label"])
        elif pair := _TIE_PAIR.match(reason):
            row.update(kind="tie_pair", a=pair["a"], b=pair["b"])
        elif won := (_RULE_1 if rule == RULE_ORDER_FIRST else _COMPARED).match(reason):
            row.update(kind="wins", key=RULE_KEYS.get(rule, ""), **won.groupdict())
        rows.append(row)
    return rows


def rule_text(row: dict[str, Any], t: Callable[..., str], tv: Callable[[object], str]) -> str:
    """What one rule found, in the page's language (the reason as written when its form is unknown)."""
    if row.get("kind") == "tie":
        return t("tie", label=label_text(row["label"], tv))
    if row.get("kind") == "tie_pair":
        return t("tie_pair", a=label_text(row["a"], tv), b=label_text(row["b"], tv))
    if row.get("kind") == "wins" and row.get("key"):
        return t(
            "wins_" + row["key"],
            w=row["w"],
            l=row.get("l", ""),
            wl=label_text(row["wl"], tv),
            ll=label_text(row["ll"], tv),
        )
    return str(row.get("reason") or "—")


def label_text(label: str, tv: Callable[[object], str]) -> str:
    """An arbiter label: a protection or source (``agent_generated (40)``), a time or a number."""
    named = re.match(r"^(?P<name>[a-z_]+(?: \(agent_asserted\))?) \((?P<n>\d+)\)$", label)
    if named:
        return f"{tv(named['name'])} ({named['n']})"
    return tv(label)


@dataclass(frozen=True)
class Bar:
    memory_id: int
    x: float
    width: float
    y: float
    status: str
    open_ended: bool
    label: str
    valid_from: str
    valid_to: str | None
    superseded_by: int | None


@dataclass(frozen=True)
class Strip:
    bars: list[Bar]
    ticks: list[tuple[float, str, str]]  # x, date, text-anchor
    width: float
    height: float
    arrows: list[tuple[float, float, float, float]]  # x1, y1, x2, y2: a supersession


STRIP_WIDTH = 900.0
LABEL_WIDTH = 0.0
ROW = 28.0
TOP = 24.0


def as_true_at(intervals: list[dict[str, Any]], at: str) -> list[dict[str, Any]]:
    """The intervals as they stood at the event time ``at``, by the rule of the facade's as-of
    reads (``projections.timeline.asof.status_at``): a memory that had not begun is left out; one
    whose end lies after ``at`` was active then, with no end yet and no successor (what ended it
    had not happened). The facade's timeline answers over all of event time, so without this a
    past view would show a supersession that came later."""
    point = to_datetime(at)
    out = []
    for interval in intervals:
        if to_datetime(interval["valid_from"]) > point:
            continue
        if interval["valid_to"] is None or to_datetime(interval["valid_to"]) > point:
            interval = {**interval, "status": "active", "ended": None, "valid_to": None, "superseded_by": None}
        out.append(interval)
    return out


def timeline_strip(intervals: list[dict[str, Any]], now: str) -> Strip:
    """Lay out validity intervals on one event-time axis: a row per memory, a bar from
    ``valid_from`` to ``valid_to`` (or to ``now`` when still valid), arrows for supersessions."""
    if not intervals:
        return Strip([], [], STRIP_WIDTH, TOP + ROW, [])
    starts = [to_datetime(i["valid_from"]) for i in intervals]
    ends = [to_datetime(i["valid_to"]) if i["valid_to"] else to_datetime(now) for i in intervals]
    lo, hi = min(starts), max(max(ends), max(starts))
    span = (hi - lo).total_seconds() or 1.0

    def x(t: datetime) -> float:
        return round(LABEL_WIDTH + (t - lo).total_seconds() / span * (STRIP_WIDTH - LABEL_WIDTH - 2), 1)

    bars = []
    rows: dict[int, float] = {}
    for n, (interval, start, end) in enumerate(zip(intervals, starts, ends, strict=True)):
        y = TOP + n * ROW
        rows[interval["memory_id"]] = y
        bars.append(
            Bar(
                memory_id=interval["memory_id"],
                x=x(start),
                width=max(x(end) - x(start), 3.0),
                y=y,
                status=interval.get("ended") or interval["status"],
                open_ended=not interval["valid_to"],
                label=interval.get("content", "")[:80],
                valid_from=interval["valid_from"],
                valid_to=interval["valid_to"],
                superseded_by=interval.get("superseded_by"),
            )
        )
    arrows = [
        (b.x + b.width, b.y + ROW / 3, _start_of(bars, b.superseded_by), rows[b.superseded_by] + ROW / 3)
        for b in bars
        if b.superseded_by in rows
    ]
    ticks = [(x(lo), lo.date().isoformat(), "start"), (x(hi), hi.date().isoformat(), "end")]
    if (hi - lo).days > 2:
        mid = lo + (hi - lo) / 2
        ticks.insert(1, (x(mid), mid.date().isoformat(), "middle"))
    return Strip(bars, ticks, STRIP_WIDTH, TOP + len(bars) * ROW + 8, arrows)


def _start_of(bars: list[Bar], memory_id: int | None) -> float:
    return next(b.x for b in bars if b.memory_id == memory_id)
