"""Slots found by meaning: two memories close in meaning that disagree on a value share a claim
set when they are about the same subject and say it in other words. A pure decision.

Claim patterns read the wordings they know; an agent has more ("Bob sits by the window on floor
3" / "Bob now sits by the window on floor 5"). With vectors live, the notices pass already pairs
memories close in meaning with a deterministic difference (:mod:`projections.notices`: cosine at
or above the calibrated ``notice_similarity``, and :func:`ledger.disagree.disagreement` finds a
number, a date, a negation or a name that differs). Such a pair is one slot when

* both name the same subject (the agent's ``subject``, normalised), or neither names one; and
* their masked templates differ only in the words that relate a subject to its value ("now",
  "moved to", "is", 改为, 现在 …: :data:`ledger.restatement.RELATION_WORDS`): every other word is
  the same. Any other difference may be another entity ("the billing API" / "the orders API"
  listening on another port), so the pair stays a notice — measured on the fact stream, a looser
  rule (half the words shared) superseded current values of other services.

Then the pair opens a claim set of its own (``attribute: "meaning"``, keyed by the two memories,
so a set a person settled with ``keep_all`` is never opened again), and the write policies apply
to it as to any set (``settle_changes``: a value stated an hour or more later supersedes the
older one). The pass that does this is part of the periodic upkeep (``ledger sweep``, hourly in
``ledger serve``); precision first: a pair that fails any test stays a notice for a person.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fact_ledger.ledger.arbiter import arbitrate_set, portable
from fact_ledger.ledger.claim_words import STOP_TOKENS
from fact_ledger.ledger.facts import ConflictFacts, Decision, MemoryFacts, Policy
from fact_ledger.ledger.freshness import template
from fact_ledger.ledger.log.events import AUTH_POLICY, ClaimCollided, SetMember
from fact_ledger.ledger.restatement import RELATION_WORDS
from fact_ledger.ledger.settlement import settle_by_policy

ATTRIBUTE = "meaning"
_MASK = "0value0"


def same_slot(left_subject: str, right_subject: str, left_content: str, right_content: str) -> bool:
    """The two statements are about one subject and differ only in wording (values masked)."""
    if (left_subject or right_subject) and left_subject != right_subject:
        return False
    mine, theirs = _slot_words(left_content), _slot_words(right_content)
    return bool(mine) and mine == theirs


def _slot_words(content: str) -> frozenset[str]:
    """The words of ``content`` that name what it is about: values masked, and articles and the
    words that only relate a subject to its value ("now", "moved", "is", 改, 现在) left out."""
    return frozenset(template(content).split()) - {_MASK} - STOP_TOKENS - RELATION_WORDS


def set_key(left_stream: str, right_stream: str) -> str:
    """A meaning set's key: its two memories (in a stable order)."""
    return "\x1f".join((ATTRIBUTE, *sorted((left_stream, right_stream))))


def meaning_set(
    left: MemoryFacts,
    right: MemoryFacts,
    values: tuple[str, str],
    *,
    conflict: str,
    subject: str,
    policy: Policy,
    other_sets: Mapping[str, Sequence[ConflictFacts]],
) -> Decision:
    """The events that open the pair's set (and settle it when a write policy decides it)."""
    verdict = arbitrate_set([left.side(), right.side()], review_agent_conflicts=policy.review_agent_conflicts)
    streams = {left.memory_id: left.stream_id, right.memory_id: right.stream_id}
    opened = ClaimCollided(
        conflict=conflict,
        subject=subject,
        attribute=ATTRIBUTE,
        key=set_key(left.stream_id, right.stream_id),
        members=(
            SetMember(memory=left.stream_id, value=values[0], norm=values[0]),
            SetMember(memory=right.stream_id, value=values[1], norm=values[1]),
        ),
        verdict={**portable(verdict), "leader": streams.get(verdict["leader_id"])},
        authorization=AUTH_POLICY,
    )
    decision: Decision = [(conflict, opened)]
    if not (policy.auto_settle or policy.settle_changes):
        return decision
    members = {left.stream_id: left, right.stream_id: right}
    return decision + settle_by_policy(
        decision,
        members=members,
        sets={},
        other_sets=other_sets,
        review_agent_conflicts=policy.review_agent_conflicts,
        changes_only=not policy.auto_settle,
    )


__all__ = ["ATTRIBUTE", "meaning_set", "same_slot", "set_key"]
