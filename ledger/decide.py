"""Command → events decisions for writes: pure functions, state comes in as arguments.

The facade reads what a decision needs inside the write transaction (the duplicate, the
retraction target, the current claims with the same keys, the target's version and conflicts)
and hands it here; nothing in this module touches IO. Governance actions live in
:mod:`ledger.govern`; the checks every path shares (authorisation, protection, policy) live here
so that update, retraction, retire, supersede and arbitrate-apply cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from fact_ledger.ledger.arbiter import arbitrate_set, portable
from fact_ledger.ledger.claims import Claim, collides
from fact_ledger.ledger.errors import InvalidInput, Locked
from fact_ledger.ledger.facts import (
    AUTHORIZATIONS,
    DEFAULT_POLICY,
    Candidate,
    ConflictFacts,
    Decision,
    MemoryFacts,
    NewId,
    Policy,
    check_current,
    check_writable,
    facts_after,
)
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.events import (
    AUTH_AGENT,
    AUTH_USER,
    ClaimCollided,
    ClaimSpec,
    ConflictMemberLeft,
    ConflictReopened,
    ConflictResolved,
    DuplicateSighted,
    MemoryRecorded,
    MemoryRetired,
    MemoryUpdated,
    Reinstated,
    Restated,
    SetMember,
    Superseded,
)
from fact_ledger.ledger.normalize import content_hash
from fact_ledger.ledger.trust import default_confidence, default_protection


class RememberCommand(msgspec.Struct, kw_only=True):
    content: str
    subject: str = ""
    tags: tuple[str, ...] = ()
    source_type: str = "agent_generated"
    confidence: float | None = None
    event_time: str
    workspace: str = ""
    source_ref: str = ""
    ref_id: int | None = None
    retracts: bool = False
    claims: tuple[ClaimSpec, ...] = ()
    metadata: dict[str, Any] = {}
    authorization: str = ""
    matched: bool = False  # the target was found by a cancellation's words (ledger.cancellation), not named
    ends: bool = False  # the target was found by a denial of its value (ledger.negation): it ended
    recorded: dict[str, Any] = {}  # the fields no rule reads, recorded on the new memory's event as given

    @classmethod
    def of(cls, given: Mapping[str, Any], **decided: Any) -> RememberCommand:
        """The command from a write's fields (``remember``'s edge model, passed through): the ones
        a rule reads become the command's own; each other one is recorded on ``MemoryRecorded``
        as given, so a field added to the edge model and the event reaches the log with no code in
        between. A field the event cannot hold is a mistake in the code, not the caller's."""
        own = {f for f in cls.__struct_fields__ if f != "recorded"}
        recorded = {k: v for k, v in given.items() if k not in own}
        dropped = sorted(set(recorded) - set(MemoryRecorded.__struct_fields__))
        if dropped:
            raise TypeError(f"remember fields with no place on MemoryRecorded: {', '.join(dropped)}")
        fields = written_fields({k: v for k, v in given.items() if k in own} | decided)
        fields["claims"] = tuple(c if isinstance(c, ClaimSpec) else ClaimSpec(**c) for c in fields.get("claims") or ())
        return cls(**fields, recorded=recorded)


def written_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` as every write records them, long-term or working: the tags each once in the
    order given (a tuple), no metadata as ``{}``. Only the keys present are touched."""
    out = dict(fields)
    if "tags" in out:
        out["tags"] = tuple(dict.fromkeys(out["tags"] or ()))
    if "metadata" in out:
        out["metadata"] = out["metadata"] or {}
    return out


def set_key(claim: Claim) -> str:
    """The claim key a claim set is filed under (the workspace is the set's own column)."""
    return "\x1f".join(claim.key)


def settle(
    member: str,
    conflicts: Iterable[ConflictFacts],
    *,
    winner: str | None = None,
    resolution: str,
    reason: str,
    authorization: str = "",
) -> Decision:
    """``member`` stopped being current: it leaves each of its unresolved claim sets.

    A set that still holds two different values goes on without it (``ConflictMemberLeft``);
    one that does not is settled, for ``winner`` when it is a remaining member (else for the
    one member left, if only one is). The sets passed in are updated to what the decision
    leaves, so several members settled in one decision see each other's departures.
    """
    decision: Decision = []
    for conflict in conflicts:
        if conflict.state == "resolved" or member not in conflict.values:
            continue
        if conflict.disputed(without=member):
            decision.append(
                (
                    conflict.stream_id,
                    ConflictMemberLeft(conflict=conflict.stream_id, member=member, reason=reason or resolution),
                )
            )
        else:
            rest = [s for s in conflict.values if s != member]
            won = winner if winner in rest else rest[0] if len(rest) == 1 else None
            decision.append(
                (
                    conflict.stream_id,
                    ConflictResolved(
                        conflict=conflict.stream_id,
                        winner=won,
                        resolution="winner" if winner is not None and won == winner else resolution,
                        reason=reason,
                        authorization=authorization,
                    ),
                )
            )
            conflict.state = "resolved"
        conflict.values = {s: v for s, v in conflict.values.items() if s != member}
    return decision


def supersede_losers(
    losers: Iterable[str],
    winner: str,
    *,
    rule: str,
    reason: str,
    authorization: str,
    other_sets: Mapping[str, Sequence[ConflictFacts]],
) -> Decision:
    """``winner`` supersedes each loser, which leaves its other unresolved sets (``other_sets``)."""
    decision: Decision = []
    for loser in losers:
        decision.append(
            (loser, Superseded(loser=loser, winner=winner, reason=reason, rule=rule, authorization=authorization))
        )
        decision += settle(
            loser,
            other_sets.get(loser, ()),
            winner=winner,
            resolution="superseded",
            reason=reason,
            authorization=authorization,
        )
    return decision


def leave_or_dissolve(conflicts: Iterable[ConflictFacts], memory: MemoryFacts) -> Decision:
    """``memory``'s new text no longer disagrees with any member: it leaves, or the set dissolves.

    Left in the set, it would go on showing a value the memory no longer states, and a later
    judgment or resolution would decide a disagreement that no longer exists.
    """
    decision: Decision = []
    for c in conflicts:
        if c.disputed(without=memory.stream_id):
            decision.append(
                (
                    c.stream_id,
                    ConflictMemberLeft(
                        conflict=c.stream_id,
                        member=memory.stream_id,
                        reason=f"member #{memory.memory_id} changed; its claim no longer disagrees",
                    ),
                )
            )
        else:
            decision.append(
                (
                    c.stream_id,
                    ConflictResolved(
                        conflict=c.stream_id,
                        resolution="dissolved",
                        reason=f"member #{memory.memory_id} changed; the claims no longer collide",
                    ),
                )
            )
    return decision


def reopen(conflicts: Iterable[ConflictFacts], memory: MemoryFacts, why: str) -> Decision:
    """A judgment is pinned to every member's version: a member that changes re-opens it."""
    return [
        (c.stream_id, ConflictReopened(conflict=c.stream_id, reason=f"member #{memory.memory_id} {why}"))
        for c in conflicts
        if c.state == "judged"
    ]


def collisions(
    mine: MemoryFacts,
    stream: str,
    claims: Sequence[Claim],
    candidates: Sequence[Candidate],
    *,
    sets: Mapping[str, ConflictFacts],
    skip: frozenset[str],
    policy: Policy,
    new_id: NewId,
) -> Decision:
    """One ``ClaimCollided`` per disputed claim key, whatever the number of older values.

    The writer (and any colliding memory not yet in it) joins the key's unresolved set; without
    one, a set opens with every colliding memory and the writer, its ranking recorded.
    """
    decision: Decision = []
    for claim in claims:
        key = set_key(claim)
        others: dict[str, Candidate] = {}
        for cand in candidates:
            other = cand.other.stream_id
            if other in skip or other == stream or other in others or not collides(claim, cand.claim):
                continue
            others[other] = cand
        if not others:
            continue
        me = SetMember(memory=stream, value=claim.value, norm=claim.value_norm)
        existing = sets.get(key)
        if existing is not None and existing.state != "resolved":
            # the writer joins, or (an update) states a new value in a set it is in already
            joining = [me] if existing.values.get(stream) != claim.value_norm else []
            joining += [_member(c) for s, c in others.items() if s not in existing.values]
            if joining:
                decision.append(
                    (
                        existing.stream_id,
                        ClaimCollided(
                            conflict=existing.stream_id,
                            joins=True,
                            subject=claim.subject,
                            attribute=claim.attribute,
                            key=key,
                            members=tuple(joining),
                        ),
                    )
                )
            continue
        verdict = arbitrate_set(
            [c.other.side() for c in others.values()] + [mine.side()],
            review_agent_conflicts=policy.review_agent_conflicts,
        )
        streams = {c.other.memory_id: s for s, c in others.items()} | {mine.memory_id: stream}
        conflict = new_id()
        decision.append(
            (
                conflict,
                ClaimCollided(
                    conflict=conflict,
                    subject=claim.subject,
                    attribute=claim.attribute,
                    key=key,
                    members=(*(_member(c) for c in others.values()), me),
                    verdict={**portable(verdict), "leader": streams.get(verdict["leader_id"])},
                ),
            )
        )
    return decision


def _member(cand: Candidate) -> SetMember:
    return SetMember(memory=cand.other.stream_id, value=cand.claim.value, norm=cand.claim.value_norm)


# -- remember ----------------------------------------------------------------------------------
def _recorded_authorization(cmd: RememberCommand) -> str:
    """An agent may say "user_confirmed", but the label then records that only the agent said so."""
    return cmd.authorization or (AUTH_AGENT if cmd.source_type == "user_confirmed" else "")


def decide_restatement(cmd: RememberCommand, memory: MemoryFacts) -> Decision:
    """A statement of a fact ``memory`` already holds with the same value (:mod:`ledger.restatement`)."""
    stream = memory.stream_id
    said = Restated(memory=stream, content=cmd.content, source_type=cmd.source_type, source_ref=cmd.source_ref)
    return [(stream, said)]


def writer_facts(cmd: RememberCommand, stream: str, recorded_at: str) -> MemoryFacts:
    """The memory ``remember`` writes, as decisions see it (id 0: it has none before the append)."""
    authorization = _recorded_authorization(cmd)
    return MemoryFacts(
        memory_id=0,
        stream_id=stream,
        version=1,
        protection=default_protection(cmd.source_type, authorization),
        source_type=cmd.source_type,
        status="active",
        workspace=cmd.workspace,
        subject=cmd.subject,
        event_time=cmd.event_time,
        recorded_at=recorded_at,
        confidence=cmd.confidence if cmd.confidence is not None else default_confidence(cmd.source_type, authorization),
        confirmed_via=authorization if cmd.source_type == "user_confirmed" else "",
    )


def decide_sighting(
    cmd: RememberCommand,
    duplicate: MemoryFacts,
    *,
    target: MemoryFacts | None,
    target_conflicts: Sequence[ConflictFacts] = (),
    policy: Policy = DEFAULT_POLICY,
) -> Decision:
    """An exact duplicate seen again (``DuplicateSighted``); a retraction the write carries still
    lands, its target retired *by the duplicate*, which answers as the one that retracted it."""
    decision: Decision = [
        (
            duplicate.stream_id,
            DuplicateSighted(memory=duplicate.stream_id, source_type=cmd.source_type, source_ref=cmd.source_ref),
        )
    ]
    if cmd.retracts and target is not None and target.status == "active":
        decision += _retract(cmd, target, duplicate.stream_id, target_conflicts, policy)
    return decision


def decide_remember(
    cmd: RememberCommand,
    *,
    new_stream: str,
    duplicate: MemoryFacts | None,
    target: MemoryFacts | None,
    claims: Sequence[Claim] = (),
    candidates: Sequence[Candidate] = (),
    target_conflicts: Sequence[ConflictFacts] = (),
    replaced: MemoryFacts | None = None,
    sets: Mapping[str, ConflictFacts] | None = None,
    recorded_at: str = "",
    policy: Policy = DEFAULT_POLICY,
    new_id: NewId = uuid7,
) -> Decision:
    """A new memory (or a sighting of its exact duplicate), its collisions, and a retraction's effect.

    A retraction always lands: an exact duplicate of an existing memory that retracts an active
    target is absorbed into that memory (a sighting) and the target is retired *by that memory*,
    so it answers as the one that retracted both; a retraction that repeats its own target's
    words is recorded as a new memory.
    """
    retiring = cmd.retracts and target is not None and target.status == "active"
    if duplicate is not None and retiring and target is not None and duplicate.stream_id == target.stream_id:
        duplicate = None
    if duplicate is not None:
        return decide_sighting(cmd, duplicate, target=target, target_conflicts=target_conflicts, policy=policy)
    if cmd.authorization not in AUTHORIZATIONS:
        raise InvalidInput("unknown authorization channel", field="authorized")
    if cmd.retracts and target is not None:
        _check_retractable(cmd, target, policy)
    mine = writer_facts(cmd, new_stream, recorded_at)
    decision: Decision = [
        (
            new_stream,
            MemoryRecorded(
                memory=new_stream,
                content=cmd.content,
                subject=cmd.subject,
                tags=cmd.tags,
                source_type=cmd.source_type,
                confidence=mine.confidence,
                protection=mine.protection,
                source_ref=cmd.source_ref,
                ref=target.stream_id if target else None,
                retracts=cmd.retracts,
                claims=cmd.claims,
                metadata=cmd.metadata,
                content_hash=content_hash(cmd.content),
                authorization=_recorded_authorization(cmd),
                **cmd.recorded,
            ),
        )
    ]
    if retiring and target is not None:
        # a pure cancellation (it states no value of its own) brings back the value the target
        # replaced; a fact that ended ("Bob is no longer the owner") brings back nothing
        back = None if claims or cmd.ends else replaced
        decision += _retract(cmd, target, new_stream, target_conflicts, policy, replaced=back)
    skip = frozenset({target.stream_id}) if retiring and target is not None else frozenset()
    decision += collisions(
        mine, new_stream, claims, candidates, sets=sets or {}, skip=skip, policy=policy, new_id=new_id
    )
    return decision


def _check_retractable(cmd: RememberCommand, target: MemoryFacts, policy: Policy) -> None:
    """A locked or protected target is retracted only with the authorisation its protection asks."""
    try:
        check_writable(target, expected_version=None, authorization=cmd.authorization, policy=policy)
    except Locked as exc:
        raise Locked(
            f"memory {target.memory_id} is {target.protection}; retracting it needs authorized: true",
            field="ref_id",
            memory_id=target.memory_id,
        ) from exc


RETRACTED = "retracted"
REINSTATED = "the memory that replaced it was retracted"
RETRACTED_BY_WORDS = "retracted: a cancellation named it by its words"
ENDED = "retracted: a later memory says its value no longer holds"
LEFT_BY_RETRACTION = "retracted by a later memory"  # why a retracted memory left its claim sets


def _retract(
    cmd: RememberCommand,
    target: MemoryFacts,
    by: str,
    target_conflicts: Sequence[ConflictFacts],
    policy: Policy,
    *,
    replaced: MemoryFacts | None = None,
) -> Decision:
    """``target`` retired by the memory ``by``, and out of its unresolved claim sets; ``replaced``
    (the newest memory ``target`` had superseded) is current again: "the move is cancelled"
    leaves the date it moved from, not no date at all."""
    if cmd.authorization not in AUTHORIZATIONS:
        raise InvalidInput("unknown authorization channel", field="authorized")
    _check_retractable(cmd, target, policy)
    reason = ENDED if cmd.ends else RETRACTED_BY_WORDS if cmd.matched else RETRACTED
    retired = MemoryRetired(memory=target.stream_id, reason=reason, by=by, authorization=cmd.authorization)
    back: Decision = []
    if replaced is not None and replaced.status == "superseded":
        back = [
            (
                replaced.stream_id,
                Reinstated(memory=replaced.stream_id, reason=REINSTATED, authorization=cmd.authorization),
            )
        ]
    return [
        (target.stream_id, retired),
        *back,
        *settle(
            target.stream_id,
            target_conflicts,
            resolution="retired",
            reason=LEFT_BY_RETRACTION,
            authorization=cmd.authorization,
        ),
    ]


def effective_changes(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """The requested changes that differ from the memory as it stands (tags compared as a list).

    An update that changes nothing must write nothing: a new version with the same content
    would only make other writers' ``expected_version`` stale.
    """
    return {k: v for k, v in changes.items() if (list(v) if k == "tags" else v) != current.get(k, _MISSING)}


_MISSING = object()


def decide_update(
    memory: MemoryFacts,
    changes: dict[str, Any],
    *,
    expected_version: int | None,
    authorization: str,
    claims: Sequence[Claim] | None = None,
    candidates: Sequence[Candidate] = (),
    conflicts: Sequence[ConflictFacts] = (),
    sets: Mapping[str, ConflictFacts] | None = None,
    policy: Policy = DEFAULT_POLICY,
    new_id: NewId = uuid7,
) -> Decision:
    """An update; an unconfirmed change to a user-confirmed memory stops being user_confirmed.

    ``claims`` are the memory's claims after the change (None when content and subject are
    unchanged): new collisions join or open claim sets (``sets``: the unresolved set of each
    claim key), the memory leaves open sets where it no longer disagrees (a set left without
    two values dissolves), and the memory's judged sets re-open.
    """
    if authorization not in AUTHORIZATIONS:
        raise InvalidInput("unknown authorization channel", field="authorized")
    check_current(memory)  # a superseded or retired memory is history: write a new one instead
    check_writable(memory, expected_version=expected_version, authorization=authorization, policy=policy)
    fields = dict(changes)
    if "content" in fields:
        fields["content_hash"] = content_hash(fields["content"])
    if "tags" in fields:
        fields["tags"] = tuple(fields["tags"])
    # Labels never lie: only a user channel keeps a changed fact user_confirmed.
    downgrade = memory.source_type == "user_confirmed" and authorization != AUTH_USER
    if downgrade:
        fields.update(source_type="agent_generated", protection="protected", derived_from_confirmed=True)
    change = MemoryUpdated(memory=memory.stream_id, authorization=authorization, **fields)
    decision: Decision = [(memory.stream_id, change)]
    if claims is not None:  # the text changed: a member whose disagreement is gone leaves its open sets
        still = frozenset(
            cand.other.stream_id for claim in claims for cand in candidates if collides(claim, cand.claim)
        )
        # Open or judged alike: a judgment of a disagreement that is gone has nothing left to guide
        # (it re-opened with both members stating one value). A judged set that still disagrees
        # re-opens below: a person looks at it again (docs/contract.md).
        gone = [
            c
            for c in conflicts
            if c.state in ("open", "judged") and not any(s in still for s in c.values if s != memory.stream_id)
        ]
        decision += leave_or_dissolve(gone, memory)
        conflicts = [c for c in conflicts if c not in gone]
    decision += reopen(conflicts, memory, "changed")
    if claims:
        decision += collisions(
            facts_after(memory, change),
            memory.stream_id,
            claims,
            candidates,
            sets=sets or {},
            skip=frozenset(),
            policy=policy,
            new_id=new_id,
        )
    return decision
