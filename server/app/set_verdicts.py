"""The verdict a claim set shows, computed from its members as they are now and from how it ended.

The verdict stored when a set opened is a snapshot: it names the writer ``#0`` (it had no id
yet), its leader by stream, and it goes stale as soon as a member is confirmed, locked, updated
or a person decides. Every answer (MCP, CLI, console) shows this one instead:

- an unresolved set: the rules over its current members (:func:`ledger.arbiter.arbitrate_set`),
  ``decided_by: "rules"`` when a rule separates the best two; a judged set adds ``judgment``
  (the latest: guidance, no memory changed) and says it in the first reason;
- a resolved set: ``winner_id`` (also ``leader_id``) is the member that won, ``decided_by`` says
  what settled it (``resolve_conflict``, ``policy``, ``arbitrate``, ``supersede``, ``keep_all``,
  ``dissolved``, ``retire``, ``erase``, ...), ``rule`` the arbitration rule when one decided, and the first reason says
  so in words; the rules' comparison of the winner with the strongest other member follows, as
  the members stand now — with a line saying so when the rules alone would favour another.

Every key of docs/contract.md's verdict stays (``winner_id``, ``manual_review``, ``reasons``,
``rule``, ``rule_order``); ``decided_by``, ``judgment`` and ``rules_favour`` are added.
"""

from __future__ import annotations

from typing import Any

from fact_ledger.ledger.arbiter import RULE_ORDER, Side, arbitrate, arbitrate_set
from fact_ledger.ledger.erasure import SETTLED_BY_ERASURE
from fact_ledger.ledger.govern import KEEP_RESOLUTIONS
from fact_ledger.ledger.settlement import CHANGE_REASON, POLICY_REASON
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.conflicts.queries import ConflictRow

ARBITRATION_PREFIX = "arbitration: "


def set_verdict(conn: Any, conflict_id: int, *, review_agent_conflicts: bool, ranking: bool = False) -> dict[str, Any]:
    """The rules over a set's current members. The leader beats every other member exactly when
    it beats the runner-up, so without ``ranking`` only the best two are read (SQL sorts them):
    a set of a thousand costs what a set of two does."""
    return verdict_of(
        conflicts_model.ranked_members(conn, conflict_id, -1 if ranking else 2),
        review_agent_conflicts=review_agent_conflicts,
    )


def verdict_of(members: list[Side], *, review_agent_conflicts: bool) -> dict[str, Any]:
    """The rules over members already read (a set's best two give its leader)."""
    return arbitrate_set(members, review_agent_conflicts=review_agent_conflicts)


def shown_verdict(
    conn: Any, row: ConflictRow, *, review_agent_conflicts: bool, ranking: bool = False
) -> dict[str, Any]:
    """The verdict of the set ``row`` (a ``conflicts`` row) as answers show it; ``ranking`` adds
    every current member, best first (a list reads only the best two)."""
    if row.state == "resolved":
        return _resolved(conn, row, review_agent_conflicts, ranking)
    verdict = set_verdict(conn, row.conflict_id, review_agent_conflicts=review_agent_conflicts, ranking=ranking)
    verdict["decided_by"] = "rules" if verdict["leader_id"] is not None else None
    if row.state == "judged":
        judgments = conflicts_model.judgments_of(conn, row.conflict_id)
        if judgments:
            last = judgments[-1]
            verdict["judgment"] = {k: last[k] for k in ("judgment_id", "winner_id", "rationale")}
            verdict["reasons"] = [
                f"judgment: judgment {last['judgment_id']} says {memory_ref(last['winner_id'])} should win "
                "(guidance: no memory changed)",
                *verdict["reasons"],
            ]
    if not ranking:
        verdict.pop("ranking", None)
    return verdict


def _resolved(conn: Any, row: ConflictRow, review_agent_conflicts: bool, ranking: bool) -> dict[str, Any]:
    winner: int | None = row.winner_id
    decided_by, rule = _settled_by(row)
    verdict: dict[str, Any] = {
        "winner_id": winner,
        "leader_id": winner,
        "manual_review": False,
        "rule": rule,
        "decided_by": decided_by,
        "reasons": [_how(decided_by, rule, row, winner)],
        "rule_order": list(RULE_ORDER),
    }
    sides = conflicts_model.ranked_members(conn, row.conflict_id, -1 if ranking else 2)
    if winner is not None and not ranking and winner not in (s.memory_id for s in sides):
        sides = conflicts_model.ranked_members(conn, row.conflict_id)  # won against the rules
    if decided_by in ("retire", "erase"):  # the other member left: no rules' comparison with a value nobody holds
        sides = [s for s in sides if s.memory_id == winner]
    won = next((s for s in sides if s.memory_id == winner), None)
    best = next((s for s in sides if s.memory_id != winner), None)
    if won is not None and best is not None:
        pair = arbitrate(
            won, best, review_agent_conflicts=review_agent_conflicts, names=(f"#{won.memory_id}", f"#{best.memory_id}")
        )
        verdict["reasons"] += pair["reasons"]
        if pair["winner_side"] == "right":
            verdict["rules_favour"] = best.memory_id
            verdict["reasons"].append(
                f"the rules alone favour #{best.memory_id} ({pair['rule']}); the set was settled for #{winner}"
            )
    if ranking:
        verdict["ranking"] = [s.memory_id for s in sorted(sides, key=lambda s: s is not won)]
    return verdict


def _settled_by(row: ConflictRow) -> tuple[str, str | None]:
    """What ended the set (``decided_by``) and the arbitration rule when one did."""
    resolution, reason = row.resolution or "", row.reason or ""
    if resolution == "policy":
        return "policy", reason.removeprefix(POLICY_REASON).removeprefix(CHANGE_REASON) or None
    if resolution in KEEP_RESOLUTIONS:
        return "keep_all", None
    if resolution == "dissolved":
        return "dissolved", None
    if reason == "resolve_conflict":
        return "resolve_conflict", None
    if reason.startswith(ARBITRATION_PREFIX):
        return "arbitrate", reason.removeprefix(ARBITRATION_PREFIX) or None
    if resolution == "retired":
        return ("erase" if reason == SETTLED_BY_ERASURE else "retire"), None
    return "supersede", None


def _how(decided_by: str, rule: str | None, row: ConflictRow, winner: int | None) -> str:
    """The first reason: who won and by what, in a line."""
    reason = row.reason or ""
    if decided_by == "keep_all":
        return "keep_all: every value stands (a person said the members do not contradict each other)"
    if decided_by == "dissolved":
        return f"dissolved: {reason or 'the members no longer disagree'}"
    if winner is None:
        return f"{decided_by}: {reason or row.resolution}; no member won"
    if decided_by == "resolve_conflict":
        return f"resolve_conflict: #{winner} was chosen; every member with another value was superseded"
    if decided_by == "policy":
        policy = "settle_changes" if reason.startswith(CHANGE_REASON) else "auto_settle"
        return f"policy: {policy} settled the set for #{winner} by {rule}; the other values were superseded"
    if decided_by == "arbitrate":
        return f"arbitrate: #{winner} won by {rule}; the loser was superseded"
    # why the other value left goes beside it: "#2 stands (erased)" read as if the one kept was erased
    said = f" ({reason})" if reason else ""
    return f"{decided_by}: the last other value left{said}; #{winner} stands"


def memory_ref(memory_id: int | None) -> str:
    """A memory an event names, for people: ``#12``, or what it is when this ledger holds no
    memory for it (an import that skipped the line that recorded it)."""
    return f"#{memory_id}" if memory_id is not None else "a memory this ledger does not hold"
