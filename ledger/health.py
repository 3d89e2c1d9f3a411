"""The memory health report (hindsight): a read-only pass over the whole memory. Pure functions.

The ledger decides at write time; this pass looks back. Over the state the projections hold
(:mod:`projections.health` reads it) it

- **clusters contradictions**: every unresolved claim set is one cluster — its values, which
  memories and which sources hold each, the arbiter's leader with its reasons — ranked by size,
  then by the latest change (a set used or joined lately first);
- proposes a **settlement** per cluster: the rules' winner (every member holding another value
  would be superseded), or ``needs_person`` when no rule separates the best two. A suggestion
  is named by a ``suggestion_id`` derived from the set and its members' values, so an id goes
  stale by itself as soon as the set changes, and nothing is stored to apply it later;
- measures **duplicates** (exact repeats and restatements absorbed per 1,000 writes, open
  near-duplicate notices) and the **ratios** the guide monitors (superseded/retired share of
  the hot memories, memories cooled for disuse).

Nothing here writes: a suggestion is applied only by a person (``memory_govern
apply_suggestion``), as one change that ``undo`` reverts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from fact_ledger.ledger.arbiter import Side, arbitrate_set

DEFAULT_CLUSTERS = 10
SUGGESTION_PREFIX = "settle-"


class Member(msgspec.Struct, frozen=True, kw_only=True):
    """A current member of a claim set, with what the report shows of it."""

    side: Side
    stream_id: str
    value: str
    value_norm: str
    source_ref: str = ""
    several: bool = False  # it states other facts too: superseding it would retire them
    # the log position from which the memory has said what it says now: its value changes only
    # with its words (an update), and a supersession undone leaves it as it was
    said_since: int = 0


class OpenSet(msgspec.Struct, frozen=True, kw_only=True):
    """An unresolved claim set as the report reads it."""

    conflict_id: int
    stream_id: str
    state: str
    workspace: str
    subject: str
    attribute: str
    updated_at: str
    members: tuple[Member, ...]
    judgment: tuple[int, int] | None = None  # a judged set: (judgment id, the member it says should win)
    extraction: int = 0  # the version of claim extraction that read the members' values


def suggestion_id(
    conflict_id: int, members: Sequence[Member], judgment: tuple[int, int] | None = None, extraction: int = 0
) -> str:
    """A name for the set's settlement as the set stands: its id and a digest of every member's
    stream, the position its words date from and everything arbitration reads of it (trust, lock, times, confidence, who
    vouched), and of the claim extraction that read their values. Any member joining, leaving,
    changing its value (new words) or its standing yields another id: an id that outlived a
    confirmation would apply another winner than the one it was shown with.

    No value goes into the digest. An applied suggestion's id stays in the log for good, and
    everything else the digest covers stays public after an erasure: a digest of the values would
    let anyone confirm an erased value that has few possibilities (a yes/no, a short number) by
    trying each."""
    digest = hashlib.sha256(f"extraction {extraction}\x1e".encode())
    if judgment is not None:  # a person's judgment since the report: the suggestion shown is stale
        digest.update(f"judgment {judgment[0]}\x1e".encode())
    for m in sorted(members, key=lambda m: m.stream_id):
        digest.update(f"{m.stream_id}\x1f{m.said_since}\x1f".encode() + msgspec.json.encode(m.side) + b"\x1e")
    return f"{SUGGESTION_PREFIX}{conflict_id}-{digest.hexdigest()[:12]}"


def conflict_of_suggestion(suggestion: str) -> int | None:
    """The claim set a suggestion id names (None: not a settlement suggestion)."""
    head, _, rest = suggestion.partition(SUGGESTION_PREFIX)
    number, _, digest = rest.partition("-")
    if head or not number.isdigit() or len(digest) != 12:
        return None
    return int(number)


def settlement(open_set: OpenSet, *, review_agent_conflicts: bool = False) -> dict[str, Any]:
    """The proposed settlement of one set: the rules' winner and the members it would supersede,
    or ``needs_person`` (no winner) when no rule decides."""
    verdict = arbitrate_set([m.side for m in open_set.members], review_agent_conflicts=review_agent_conflicts)
    leader = verdict["leader_id"]
    by_id = {m.side.memory_id: m for m in open_set.members}
    out: dict[str, Any] = {
        "suggestion_id": suggestion_id(open_set.conflict_id, open_set.members, open_set.judgment, open_set.extraction),
        "conflict_id": open_set.conflict_id,
        "leader_id": leader,  # the rules' leader, as every other answer names it (also when a person decides)
        "rule": verdict["rule"],
        "reasons": verdict["reasons"],
    }
    judged = open_set.judgment
    if judged is not None and leader is not None and judged[1] != leader:
        return {
            **out,
            "kind": "needs_person",
            "winner_id": None,
            "value": None,
            "supersedes": [],
            "reasons": [*verdict["reasons"], f"judgment {judged[0]} says #{judged[1]} should win"],
            "explanation": f"judgment {judged[0]} says #{judged[1]} should win where the rules favour #{leader}: "
            "a person decides (resolve_conflict with a winner_id, or keep_all)",
        }
    if judged is not None:
        out["reasons"] = [*verdict["reasons"], f"judgment {judged[0]} agrees"]
    if leader is None or verdict["manual_review"]:
        return {
            **out,
            "kind": "needs_person",
            "winner_id": None,
            "value": None,
            "supersedes": [],
            "explanation": (
                "no rule decides between the leading values: a person should choose"
                if leader is None
                else f"the rules favour #{leader}, but the review_agent_conflicts policy leaves a "
                "disagreement between agents to a person"
            )
            + " (resolve_conflict with a winner_id, or keep_all)",
        }
    win = by_id[leader]
    losers = [m.side.memory_id for m in open_set.members if m.value_norm != win.value_norm]
    whole = sorted(m for m in losers if by_id[m].several)
    if whole:  # as no policy does, the report never proposes retiring facts that did not change
        return {
            **out,
            "kind": "needs_person",
            "winner_id": None,
            "value": None,
            "supersedes": [],
            "explanation": f"#{leader} ({win.value}) leads by {verdict['rule']}, but "
            + ", ".join(f"#{m}" for m in whole)
            + " states other facts too: superseding it would retire them; update it to what still "
            "holds, or resolve the set by hand (resolve_conflict with a winner_id, or keep_all)",
        }
    return {
        **out,
        "kind": "settle",
        "winner_id": leader,
        "value": win.value,
        "supersedes": sorted(losers),
        "explanation": f"#{leader} ({win.value}) wins by {verdict['rule']}; "
        f"{len(losers)} member(s) holding another value would be superseded",
    }


def cluster(open_set: OpenSet, *, review_agent_conflicts: bool = False) -> dict[str, Any]:
    """One contradiction cluster: the set's values (with the memories and sources that hold
    each), its leader and reasons, and the proposed settlement."""
    groups: dict[str, dict[str, Any]] = {}
    for m in open_set.members:
        group = groups.setdefault(m.value_norm, {"value": m.value, "memory_ids": [], "sources": []})
        group["memory_ids"].append(m.side.memory_id)
        if m.side.source_type not in group["sources"]:
            group["sources"].append(m.side.source_type)
        if m.source_ref and m.source_ref not in group.setdefault("source_refs", []):
            group["source_refs"].append(m.source_ref)
    suggestion = settlement(open_set, review_agent_conflicts=review_agent_conflicts)
    values = sorted(groups.values(), key=lambda g: (-len(g["memory_ids"]), g["value"]))
    return {
        "conflict_id": open_set.conflict_id,
        "state": open_set.state,
        "workspace": open_set.workspace,
        "claim": {"subject": open_set.subject, "attribute": open_set.attribute},
        "members": sorted(m.side.memory_id for m in open_set.members),
        "member_count": len(open_set.members),
        "values": values,
        "value_count": len(values),
        "leader_id": suggestion["leader_id"],
        "reasons": suggestion["reasons"],
        "updated_at": open_set.updated_at,
        "suggestion": suggestion,
    }


def rank(clusters: Sequence[dict[str, Any]], limit: int = DEFAULT_CLUSTERS) -> list[dict[str, Any]]:
    """The top ``limit`` clusters: most members first, then most values, then the latest change."""
    ordered = sorted(clusters, key=lambda c: (c["member_count"], c["value_count"], c["updated_at"]), reverse=True)
    return list(ordered[:limit])


def ratios(status_counts: Mapping[str, int], *, cold: int) -> dict[str, Any]:
    """The shares the guide monitors, over the hot memories (every status but archived/erased)."""
    hot = sum(n for s, n in status_counts.items() if s not in ("archived", "erased"))
    superseded = status_counts.get("superseded", 0)
    retired = status_counts.get("retired", 0)
    active = status_counts.get("active", 0)
    return {
        "hot": hot,
        "active": active,
        "superseded": superseded,
        "retired": retired,
        "superseded_ratio": _share(superseded + retired, hot),
        "stale": cold,
        "stale_ratio": _share(cold, active),
    }


def duplicates(
    *, writes: int, sightings: int, restatements: int, near_groups: Sequence[Sequence[int]]
) -> dict[str, Any]:
    """Exact repeats and restatements absorbed, per 1,000 writes (a write that stored a memory
    or was absorbed into one), and the open near-duplicate groups."""
    absorbed = sightings + restatements
    total = writes + absorbed
    return {
        "exact_absorbed": sightings,
        "restatements_absorbed": restatements,
        "absorbed_per_1000_writes": round(1000 * absorbed / total, 1) if total else 0.0,
        "near_groups": [sorted(g) for g in near_groups],
        "near_group_count": len(near_groups),
    }


def latency(samples_ms: Sequence[float]) -> dict[str, Any] | None:
    """p50/p95 of ``find`` latencies (nearest rank), None when there are none."""
    if not samples_ms:
        return None
    ordered = sorted(samples_ms)

    def rank(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, max(0, int(q * len(ordered) + 0.5) - 1))], 2)

    return {"p50": rank(0.5), "p95": rank(0.95), "n": len(ordered)}


def groups(pairs: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Connected groups of memory ids from pairs (near-duplicate notices), smallest id first."""
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    out: dict[int, list[int]] = {}
    for x in list(parent):
        out.setdefault(root(x), []).append(x)
    return sorted((sorted(g) for g in out.values()), key=lambda g: (-len(g), g[0]))


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0
