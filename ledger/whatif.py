"""What-if: every claim set's verdict under another rule order or policy, without writing. Pure.

Each unresolved set is ranked again over its current members in the fixed order and in the
asked one; a set is listed when its leader (or whether a person is needed) would differ, with
both verdicts' reasons. With ``auto_settle`` asked, an unresolved set a rule would decide and
that holds no guarded member is listed as one the policy would settle. A settled set is listed
only when a rule settled it (policy, arbitration): then the leader of the asked order is
compared with its winner; what a person chose stands under any order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from fact_ledger.ledger.arbiter import RULE_ORDER, Side, arbitrate_set
from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.ids import typed_key

SHORT_NAMES = {"protection": RULE_ORDER[0], "user_confirmed": RULE_ORDER[0], "locked": RULE_ORDER[0]}


class SetSides(msgspec.Struct, frozen=True, kw_only=True):
    """A claim set as what-if reads it: its current members' arbitration facts."""

    conflict_id: int
    state: str
    subject: str
    attribute: str
    sides: tuple[Side, ...]
    guarded: bool = False  # a member is protected, locked or user_confirmed: no policy settles it
    winner_id: int | None = None  # a settled set's winner
    by_rule: bool = False  # a settled set a rule decided (policy, arbitration)


def rule_order(names: Sequence[str] | str) -> list[str]:
    """The asked order as rule names: every rule of :data:`RULE_ORDER` once (``protection`` is
    short for the first). A comma-separated string is accepted too."""
    items = [n.strip() for n in names.split(",")] if isinstance(names, str) else [str(n).strip() for n in names]
    items = [n for n in items if n]
    order = [SHORT_NAMES.get(typed_key(n), typed_key(n)) for n in items]  # "Event_Time" as typed is event_time
    unknown = [given for given, n in zip(items, order, strict=True) if n not in RULE_ORDER]
    if unknown:
        raise InvalidInput(f"unknown rule {unknown[0]!r}; rules: {', '.join(RULE_ORDER)}", field="rule_order")
    if sorted(order) != sorted(RULE_ORDER):
        raise InvalidInput(
            f"rule_order must name each of the five rules once: {', '.join(RULE_ORDER)}", field="rule_order"
        )
    return order


def _verdict(v: dict[str, Any]) -> dict[str, Any]:
    return {k: v[k] for k in ("leader_id", "manual_review", "rule", "reasons")}


def replay(
    sets: Iterable[SetSides],
    order: Sequence[str],
    *,
    auto_settle: bool = False,
    review_agent_conflicts: bool = False,
) -> tuple[int, list[dict[str, Any]]]:
    """(sets checked, the sets whose leader or settlement would change)."""
    checked, changed = 0, []
    for s in sets:
        if len(s.sides) < 2:
            continue
        checked += 1
        now = arbitrate_set(s.sides, review_agent_conflicts=review_agent_conflicts)
        then = arbitrate_set(s.sides, review_agent_conflicts=review_agent_conflicts, rule_order=order)
        base = {
            "conflict_id": s.conflict_id,
            "state": s.state,
            "claim": {"subject": s.subject, "attribute": s.attribute},
            "now": _verdict(now),
            "whatif": _verdict(then),
        }
        if s.state == "resolved":
            if s.by_rule and then["leader_id"] is not None and then["leader_id"] != s.winner_id:
                changed.append({**base, "change": "settlement", "winner_id": s.winner_id})
            continue
        decides = then["leader_id"] is not None and not then["manual_review"]
        if now["leader_id"] != then["leader_id"] or now["manual_review"] != then["manual_review"]:
            entry = {**base, "change": "leader"}
            if auto_settle and decides and not s.guarded:
                entry["would_settle_for"] = then["leader_id"]
            changed.append(entry)
        elif auto_settle and decides and not s.guarded:
            changed.append({**base, "change": "would_settle", "would_settle_for": then["leader_id"]})
    return checked, changed
