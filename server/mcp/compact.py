"""Keep results small: an agent pays for every byte of a tool result in its context window.

``find`` results share a byte budget: a fact of at most 300 characters is always kept whole
(``ledger.sections.shown_whole``: a fact cut mid-value answers nothing), and the budget left is
shared by the longer ones, which become a snippet around the first query word; overlong subjects
and tag lists are cut too (each marked ``truncated: true``; ``read`` has the full memory).
Verdicts embedded in lists (the conflicts a ``remember`` reports, the ``conflicts`` view) drop
the boilerplate an agent has already seen: the fixed ``rule_order`` and the reasons of the rules
that did not decide (a resolved set keeps the line saying how it ended, a judged one its
judgment; ``compare``, ``arbitrate`` and ``conflict_detail`` keep the whole verdict).
``notices`` are merged, de-duplicated and capped at three short items.
Items of every list (find results, conflicts, audit events, history versions, timeline
intervals) leave out what says nothing: null, empty-string and empty-list fields other than the
contract's own (:data:`ALWAYS`), ``rule_order`` inside embedded verdicts (it is fixed
and documented: ``help trust``), the audit's ``event_id`` and payloads' ``content_hash`` (no
tool takes them). Top-level keys always stay, so every response key of the contract is there.
The CLI's ``--json`` keeps everything.
"""

from __future__ import annotations

import json
from typing import Any

from fact_ledger.ledger.sections import shown_whole

FIND_BUDGET_BYTES = 2300  # whole find result; CONTRACT: a 5-result find well under 2,500 bytes
MIN_SNIPPET_BYTES = 160  # a trimmed content keeps at least this much when the budget allows
FLOOR_SNIPPET_BYTES = 48  # ... and never less, even when long subjects and tags eat the budget
MAX_SUBJECT_CHARS = 120  # in find results; read has everything
MAX_TAGS_SHOWN = 10
MAX_TAG_CHARS_SHOWN = 64
MAX_NOTICES = 3
MAX_NOTICE_CHARS = 160


def size(payload: dict[str, Any]) -> int:
    return len(dumps(payload).encode("utf-8"))


def dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)


def compact(
    tool: str,
    name: str,
    result: dict[str, Any],
    *,
    query: str = "",
    notices: list[str] | None = None,
    after: list[str] | None = None,
) -> dict[str, Any]:
    """The result as sent: find trimmed to budget, notices merged (at most 3): ``notices`` (what
    the call itself got wrong: unknown fields, fields beside ``data``) first, then the result's
    own, then ``after`` (work pending whatever was asked)."""
    if tool == "memory" and name == "find" and isinstance(result.get("results"), list):
        result = _compact_find(result, query)
    if (tool, name) in _LISTED_VERDICTS and isinstance(result.get("conflicts"), list):
        result = {**result, "conflicts": [_brief_conflict(c) for c in result["conflicts"]]}
    if (tool, name) == ("memory_review", "notices"):  # here ``notices`` is the answer itself, not advice
        return result
    merged = [*(notices or []), *(result.get("notices") or []), *(after or [])]
    if merged:
        seen: dict[str, None] = {}
        for item in merged:
            text = str(item)
            seen.setdefault(text if len(text) <= MAX_NOTICE_CHARS else text[: MAX_NOTICE_CHARS - 1] + "…")
        result = {**result, "notices": list(seen)[:MAX_NOTICES]}
    elif "notices" in result:
        result = {k: v for k, v in result.items() if k != "notices"}
    return {k: [_lean(item) for item in v] if k in LISTS and isinstance(v, list) else v for k, v in result.items()}


LISTS = ("results", "conflicts", "events", "versions", "intervals")
# The contract's item keys (find results, conflicts, audit events, history versions, timeline
# intervals, verdicts): always sent, even when empty.
ALWAYS = frozenset(
    {
        "memory_id",
        "subject",
        "content",
        "tags",
        "source_type",
        "trust",
        "confidence",
        "protection",
        "status",
        "event_time",
        "recorded_at",
        "version",
        "source_ref",
        "score",
        "conflict_ids",
        "standing",
        "conflict_id",
        "state",
        "members",
        "member_count",
        "leader_id",
        "claim",
        "verdict",
        "other_id",
        "winner_side",
        "winner_id",
        "loser_id",
        "manual_review",
        "reasons",
        "position",
        "type",
        "stream_id",
        "actor",
        "payload",
        "events",
        "valid_from",
        "valid_to",
        "superseded_by",
    }
)
_NEVER = frozenset({"rule_order", "event_id", "content_hash"})


def _lean(value: Any) -> Any:
    """A list item without empty fields, fixed boilerplate or ids no tool takes (recursively)."""
    if isinstance(value, list):
        return [_lean(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {k: _lean(v) for k, v in value.items() if k not in _NEVER and (k in ALWAYS or v not in (None, "", [], {}))}


_LISTED_VERDICTS = {("memory", "remember"), ("memory_review", "conflicts")}


def _brief_conflict(conflict: Any) -> Any:
    verdict = conflict.get("verdict") if isinstance(conflict, dict) else None
    if not isinstance(verdict, dict):
        return conflict
    brief = {k: v for k, v in verdict.items() if k != "rule_order"}
    reasons = verdict.get("reasons")
    # What decided: the deciding rule's line, how a resolved set ended, a judged set's judgment.
    keep = {verdict.get("rule"), verdict.get("decided_by"), "judgment"} - {None, "rules"}
    if isinstance(reasons, list) and keep:
        deciding = [r for r in reasons if isinstance(r, str) and r.split(":", 1)[0] in keep]
        brief["reasons"] = deciding or reasons
    return {**conflict, "verdict": brief}


def _compact_find(result: dict[str, Any], query: str) -> dict[str, Any]:
    items = [dict(r) for r in result["results"]]
    for item in items:
        if isinstance(item.get("score"), float):
            item["score"] = round(item["score"], 3)
        subject = item.get("subject")
        if isinstance(subject, str) and len(subject) > MAX_SUBJECT_CHARS:
            item["subject"] = subject[: MAX_SUBJECT_CHARS - 1] + "…"
            item["truncated"] = True
        tags = item.get("tags")
        if isinstance(tags, list) and (
            len(tags) > MAX_TAGS_SHOWN or any(isinstance(t, str) and len(t) > MAX_TAG_CHARS_SHOWN for t in tags)
        ):
            item["tags"] = [
                t[: MAX_TAG_CHARS_SHOWN - 1] + "…" if isinstance(t, str) and len(t) > MAX_TAG_CHARS_SHOWN else t
                for t in tags[:MAX_TAGS_SHOWN]
            ]
            item["truncated"] = True
    out = {**result, "results": items}
    if not items or size(out) <= FIND_BUDGET_BYTES:
        return out
    contents = [str(i.get("content", "")) for i in items]
    lengths = [len(c.encode("utf-8")) for c in contents]
    whole = [shown_whole(c) for c in contents]
    if all(whole):
        return out
    # Worst case: every long content a marked snippet, every short one as it is.
    marked = [i if w else {**i, "content": "……", "truncated": True} for i, w in zip(items, whole, strict=True)]
    fixed = size({**out, "results": marked})
    long = [i for i, w in enumerate(whole) if not w]
    allowance = dict(zip(long, _share([lengths[i] for i in long], FIND_BUDGET_BYTES - fixed), strict=True))
    for n, (item, text, length) in enumerate(zip(items, contents, lengths, strict=True)):
        allowed = allowance.get(n, length)
        if length > allowed:
            item["content"] = snippet(text, query, allowed)
            item["truncated"] = True
    return out


def _share(lengths: list[int], room: int) -> list[int]:
    """Water-filling: short contents keep their length, the rest split what remains equally."""
    allowance = [0] * len(lengths)
    remaining = max(room, 0)
    floor = min(MIN_SNIPPET_BYTES, max(FLOOR_SNIPPET_BYTES, remaining // max(len(lengths), 1)))
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    for n, i in enumerate(order):
        share = remaining // (len(order) - n)
        allowance[i] = min(lengths[i], max(share, floor))
        remaining = max(remaining - allowance[i], 0)
    return allowance


def snippet(text: str, query: str, max_bytes: int) -> str:
    """At most ``max_bytes`` of UTF-8 around the first query word found (else the beginning)."""
    budget = max(max_bytes - 6, 16)  # room for the ellipses
    start = 0
    lowered = text.casefold()
    for word in sorted(query.casefold().split(), key=len, reverse=True):
        at = lowered.find(word) if len(word) >= 2 else -1
        if at >= 0:
            start = at
            break
    near_start = len(text[:start].encode("utf-8")) <= budget // 2  # the beginning shows it anyway
    start = 0 if near_start else max(0, start - budget // 4)
    piece = _cut(text[start:], budget)
    return ("…" if start else "") + piece + ("…" if start + len(piece) < len(text) else "")


def _cut(text: str, max_bytes: int) -> str:
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", "ignore")
