"""Restatements: the same fact said again in other words or another format confirms the memory
that holds it instead of piling up beside it. A pure decision.

"The billing API listens on port 8080", "Port for the billing API: 8080" and "billing API 端口号为
8080" are one fact with one value. Stored three times, every answer carries three copies and each
copy competes with the next change of the value; absorbed, the memory records who said it again,
when and from which source (a ``Restated`` event: its support count and last-stated time), and
history keeps every original statement.

A statement restates an active memory when

* every clause of it states a claim and it holds no word beyond its claims' subjects, attributes,
  values and the words that relate them (:data:`RELATION_WORDS`): a statement that says anything
  more is stored, so nothing it says is lost; it carries no tags, metadata or explicit claims of
  its own, and it names no other memory (``ref_id``);
* that memory, in the writer's workspace, holds a claim with the same key and the same
  normalised value for **each** of the statement's claims (``5万元`` and ``50000元``, ``v2.3`` and
  ``2.3`` are the same value);
* the memory is not a member of an unresolved claim set (there the statement's own event time
  must take part in the ranking: it is stored and joins the set), and the statement is not a
  person's confirmation (that locks a memory: ``Confirmed``).

Distinct statements that merely share words share no claim key with the same value, so they stay
distinct: only claims decide, never word overlap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fact_ledger.ledger.claims import Claim, key_tokens
from fact_ledger.ledger.facts import MemoryFacts
from fact_ledger.ledger.log.events import AUTH_USER

# Words that only relate a subject to its value ("listens on", "moved to", "改为", "现在是").
RELATION_WORDS = frozenset(
    """is are was were be been being now currently still moved changed switched set updated upgraded
    listens listening runs running served serves reachable located lives live based owned owns own took
    over starts start scheduled on at to in by has have with from of for link address url it and
    does do doesn't not no longer never fine ok okay can usually again
    也 还 是 为 在 改 成 了 现 当 监 听 运 行 跑 号 由 负 责 定 到 调 整 升 级 地 址 链 接 时 间
    不 再 从 来 能 平 最 喜 欢 爱 喝 吃 的""".split()
)


def says_more(content: str, subject: str, claims: Sequence[Claim]) -> bool:
    """``content`` holds a word that is none of its claims' subject, attribute or value words and
    no relation word: it says something the claims do not."""
    covered: set[str] = set(key_tokens(subject))
    for claim in claims:
        covered |= key_tokens(f"{claim.subject} {claim.attribute} {claim.value}")
        covered.update(claim.key_subject.split())
    return bool(key_tokens(content) - covered - RELATION_WORDS)


def restated_memory(
    claims: Sequence[Claim],
    holders: Mapping[tuple[str, str, str], Sequence[MemoryFacts]],
    *,
    clauses: int,
    workspace: str,
    plain: bool = True,
    source_type: str = "agent_generated",
    authorization: str = "",
) -> MemoryFacts | None:
    """The active memory a statement restates (the oldest when several do), or None.

    ``claims``: the statement's; ``holders``: per claim key, the memories whose claim of that key
    has the same normalised value; ``clauses``: how many clauses the statement has; ``plain``: the
    write carries no tags, metadata, explicit claims or ``ref_id``."""
    if not claims or not plain or clauses > len(claims):
        return None
    if source_type == "user_confirmed" and authorization == AUTH_USER:
        return None
    common: dict[int, MemoryFacts] | None = None
    for claim in claims:
        mine = {m.memory_id: m for m in holders.get(claim.key, ()) if m.status == "active" and m.workspace == workspace}
        common = mine if common is None else {k: v for k, v in common.items() if k in mine}
    return common[min(common)] if common else None


__all__ = ["restated_memory"]
