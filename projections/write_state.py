"""What a write's decision reads, inside its transaction, from the read models a decision needs.

:func:`remember_state` reads ``remember``'s whole :class:`~ledger.remember.RememberState` —
the writer's claims and the claims sharing their keys, the sets of those keys, the memory it may
restate, its near-duplicates and, under a settling policy, what settling reads — so that
:func:`ledger.remember.decide` decides from it alone. ``update`` reads its claims through the
same functions. Every read is bounded by what the write touches, never by history: of a key with
an unresolved set, only the members the writer collides with are loaded.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import apsw

from fact_ledger.ledger import clock
from fact_ledger.ledger.arbiter import arbitrate_set
from fact_ledger.ledger.cancellation import Target
from fact_ledger.ledger.claims import Claim, clause_count, extract_claims, states_several
from fact_ledger.ledger.decide import RememberCommand, effective_changes, set_key
from fact_ledger.ledger.entity_alias import rekey
from fact_ledger.ledger.facts import Candidate, ConflictFacts, MemoryFacts, Policy
from fact_ledger.ledger.imported import ImportedState
from fact_ledger.ledger.negation import denies_only
from fact_ledger.ledger.normalize import same_value
from fact_ledger.ledger.remember import RememberState, absorbed
from fact_ledger.ledger.restatement import restated_memory, says_more
from fact_ledger.ledger.settlement import CHANGE_HORIZON_S, SettleState
from fact_ledger.ledger.update import UpdateState
from fact_ledger.projections import claims as claims_model
from fact_ledger.projections import entity_aliases
from fact_ledger.projections import memories as mem
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.conflicts.queries import ConflictRow
from fact_ledger.projections.memory_row import CurrentMemory

# Per set key: the key's unresolved set (None: none) and which of the key's candidates are its
# current members (memory id -> normalised value), as read earlier in the same transaction.
KnownSets = dict[str, tuple[ConflictRow | None, dict[int, str]]]


def remember_state(
    conn: apsw.Connection,
    cmd: RememberCommand,
    *,
    scope: tuple[str, ...],
    target: MemoryFacts | None,
    cancelling: tuple[Target, ...],
    duplicate: MemoryFacts | None,
    policy: Policy,
) -> RememberState:
    """Everything ``remember``'s decision and reply read, once. ``scope``: the workspaces the
    writer's claims meet (its own and its aliases); ``target``, ``cancelling`` and ``duplicate``
    are read by the caller (they need the caller's isolation check and the full-text index)."""
    target_conflicts: tuple[ConflictFacts, ...] = ()
    replaced = None
    if target is not None and cmd.retracts:  # a retraction: the target's sets, and what it had replaced
        target_conflicts = tuple(conflicts_of(conn, target.memory_id))
        replaced = newest_replaced_by(conn, target.memory_id)
    if duplicate is not None and restated_later_in_a_set(conn, duplicate, cmd.event_time, policy):
        duplicate = None  # stored and joins the set, as a restatement of a disputed value is
    found = {
        "target": target,
        "cancelling": cancelling,
        "duplicate": duplicate,
        "target_conflicts": target_conflicts,
        "replaced": replaced,
    }
    if absorbed(duplicate, cmd, target):
        return RememberState(**found)
    explicit = tuple((c.subject, c.attribute, c.value) for c in cmd.claims)
    known: KnownSets = {}
    claims, candidates = claim_state(conn, cmd.content, cmd.subject, explicit, scope, joining=known)
    restated = restated_memory(
        claims,
        holders(conn, claims, cmd.workspace),
        clauses=clause_count(cmd.content),
        workspace=cmd.workspace,
        plain=not (
            cmd.tags
            or cmd.metadata
            or cmd.claims
            or cmd.ref_id is not None
            or says_more(cmd.content, cmd.subject, claims)
        ),
        source_type=cmd.source_type,
        authorization=cmd.authorization,
    )
    if restated is not None and not disputed(conn, restated.memory_id, claims):
        return RememberState(**found, restated=restated, claims=claims)
    denial = _denied_later(conn, cmd.content, claims, scope, cmd.event_time)
    if denial is not None:
        return RememberState(**found, claims=claims, denied_by=denial, recorded_at=clock.now())
    near = tuple(claims_model.near_duplicates(conn, cmd.content, cmd.workspace))
    sets = claim_sets(conn, claims, candidates, scope, known=known)
    settles = policy.auto_settle or policy.settle_changes  # a write may settle the sets it opens or joins
    return RememberState(
        **found,
        claims=claims,
        candidates=tuple(candidates),
        sets=sets,
        near=near,
        recorded_at=clock.now(),
        settle=settle_state(conn, sets, candidates, claims, cmd.event_time, auto_settle=policy.auto_settle)
        if settles
        else None,
    )


def _denied_later(
    conn: apsw.Connection, content: str, claims: tuple[Claim, ...], scope: tuple[str, ...], event_time: str
) -> MemoryFacts | None:
    """The active denial that ended a value ``claims`` state, said after ``event_time``: only a
    write speaking of the past can arrive before one (a write of now costs no look-up). As when
    the denial comes second, it must say no more than that the value ended ("I think …", "… in
    production", "…, Bob said" end nothing), whichever arrived first."""
    if not claims or clock.to_datetime(event_time) > clock.to_datetime(clock.now()) - _LATE:
        return None
    if states_several(claims):  # a note of several facts: ending it would end the others
        return None
    denial_id = claims_model.denied_later(conn, claims, scope, event_time)
    row = mem.by_id(conn, denial_id) if denial_id is not None else None
    if row is None or row.status != "active" or not any(denies_only(row.content, content, c) for c in claims):
        return None
    return MemoryFacts.from_row(row)


_LATE = timedelta(seconds=5)  # a write's own event time, taken before it waited for the lock


def update_state(
    conn: apsw.Connection,
    row: CurrentMemory,
    requested: dict[str, Any],
    *,
    scope: tuple[str, ...],
    policy: Policy,
) -> UpdateState:
    """Everything ``update``'s decision reads, once: the memory's row (what the change is
    compared with, and the text its claims come from), then, when content or subject change,
    its claims after the change and the claims and sets they meet."""
    memory = MemoryFacts.from_row(row)
    current = {
        "content": row.content,
        "subject": row.subject,
        "confidence": row.confidence,
        "event_time": row.event_time,
        "tags": list(row.tags),
        "metadata": row.metadata,
    }
    changes = effective_changes(current, requested)
    if not changes:
        return UpdateState(memory=memory, changes=changes)
    claims: tuple[Claim, ...] | None = None
    candidates: list[Candidate] = []
    if changes.get("content") is not None or changes.get("subject") is not None:
        claims, candidates = claim_state(
            conn,
            changes.get("content") or row.content,
            changes.get("subject", row.subject),
            _explicit_claims(conn, memory.memory_id),
            scope,
            exclude=memory.memory_id,
        )
    sets = claim_sets(conn, claims, candidates, scope, memory) if claims else {}
    settles = (policy.auto_settle or policy.settle_changes) and bool(claims)
    return UpdateState(
        memory=memory,
        changes=changes,
        claims=claims,
        candidates=tuple(candidates),
        sets=sets,
        conflicts=tuple(conflicts_of(conn, memory.memory_id)),
        settle=settle_state(
            conn,
            sets,
            candidates,
            claims or (),
            changes.get("event_time") or row.event_time,
            auto_settle=policy.auto_settle,
        )
        if settles
        else None,
    )


def imported_state(
    conn: apsw.Connection, row: CurrentMemory, *, scope: tuple[str, ...], policy: Policy
) -> ImportedState:
    """What deciding a memory that came in with an import reads (:mod:`ledger.imported`): its
    claims as the claims projection holds them, the claims and sets they meet, its set partners."""
    memory = MemoryFacts.from_row(row)
    claims, candidates = claim_state(
        conn, row.content, row.subject, _explicit_claims(conn, row.memory_id), scope, exclude=row.memory_id
    )
    if not candidates:
        return ImportedState(memory=memory, claims=claims, candidates=())
    sets = claim_sets(conn, claims, candidates, scope, memory)
    settles = policy.auto_settle or policy.settle_changes
    return ImportedState(
        memory=memory,
        claims=claims,
        candidates=tuple(candidates),
        sets=sets,
        partners=conflicts_model.set_partners(conn, row.memory_id),
        held={c.key: c.stream_id for c in conflicts_of(conn, row.memory_id) if c.key},
        settle=settle_state(conn, sets, candidates, claims, row.event_time, auto_settle=policy.auto_settle)
        if settles
        else None,
    )


def _explicit_claims(conn: apsw.Connection, memory_id: int) -> tuple[tuple[str, str, str], ...]:
    """The claims the memory's writer stated outright (``claims``): they stay when its text is
    read again."""
    return tuple(
        (c.subject, c.attribute, c.value) for c in claims_model.claims_of(conn, memory_id) if c.origin == "explicit"
    )


def conflicts_of(conn: apsw.Connection, memory_id: int) -> list[ConflictFacts]:
    """The unresolved sets ``memory_id`` is a current member of, whole."""
    return [conflicts_model.conflict_facts(conn, r) for r in conflicts_model.unresolved_of(conn, memory_id)]


def claim_state(
    conn: apsw.Connection,
    content: str,
    subject: str,
    explicit: tuple[tuple[str, str, str], ...],
    scope: tuple[str, ...],
    exclude: int | None = None,
    *,
    joining: KnownSets | None = None,
) -> tuple[tuple[Claim, ...], list[Candidate]]:
    """The writer's claims and the current claims of other memories that share their keys.

    ``joining`` (a new memory): of a key's unresolved set, only one member the writer collides
    with is kept (see :func:`outside_sets`), and what was read about each key's set is left in it
    for :func:`claim_sets`."""
    claims = extract_claims(content, subject, explicit)
    aliases = entity_aliases.accepted(conn)
    if aliases:  # keyed as the claims projection keys them (ledger.entity_alias)
        claims = rekey(claims, aliases)
    if not claims:
        return claims, []
    if joining is None:
        found = [hit for ws in scope for hit in claims_model.matching_claims(conn, claims, ws, exclude)]
    else:
        found = outside_sets(conn, claims, scope, joining)
    rows = mem.load_many(conn, sorted({memory_id for memory_id, _ in found}))
    facts = {m: MemoryFacts.from_row(r) for m, r in rows.items() if r.status == "active"}
    return claims, [Candidate(other=facts[m], claim=claim) for m, claim in found if m in facts]


def outside_sets(
    conn: apsw.Connection, claims: tuple[Claim, ...], scope: tuple[str, ...], known: KnownSets
) -> list[tuple[int, Claim]]:
    """The candidates a new memory's decision needs: the current claims of other memories that
    share a key with the writer's (as ``matching_claims`` finds them) and, of a key with an
    unresolved set, only the ones not in it yet and one member the writer collides with (so
    that it joins).

    The set's other members are recorded already; loading them would make every write to a
    disputed claim cost what its history does. Values and membership are read from the key index
    first; whole claims only for the candidates kept. ``known`` keeps, per set key, the set row
    and which of the key's candidates are its members."""
    kept: list[tuple[int, int]] = []
    for claim in claims:
        key = set_key(claim)
        rows = [r for ws in scope for r in claims_model.values_and_members(conn, claim, key, ws, scope)]
        if not rows:
            continue
        row = conflicts_model.unresolved_for_key(conn, key, scope)
        members = {m: norm for m, _, _, norm in rows if norm is not None} if row else {}
        known[key] = (row, members)
        anchor = next(
            ((m, o) for m, o, v, _ in rows if m in members and not same_value(claim.kind, claim.value_norm, v)),
            None,
        )
        kept += [(m, o) for m, o, _, _ in rows if m not in members or (m, o) == anchor]
    full = claims_model.claims_at(conn, sorted(set(kept)))
    return [(m, full[m, o]) for m, o in kept if (m, o) in full]


def holders(
    conn: apsw.Connection, claims: tuple[Claim, ...], workspace: str
) -> dict[tuple[str, str, str], list[MemoryFacts]]:
    """Per claim key, the memories of ``workspace`` whose claim holds the same value (oldest first)."""
    ids = {claim.key: claims_model.holding_value(conn, claim, workspace) for claim in claims}
    rows = mem.load_many(conn, sorted({m for found in ids.values() for m in found}))
    return {key: [MemoryFacts.from_row(rows[m]) for m in found if m in rows] for key, found in ids.items()}


def newest_replaced_by(conn: apsw.Connection, memory_id: int) -> MemoryFacts | None:
    """The newest (by event time) memory ``memory_id`` superseded as another value of one fact
    (the two were in a claim set together) that is still superseded: the value in force before
    it, which a cancellation of it brings back. An instruction a person replaced by another
    (a supersession outside any set) does not come back."""
    row = conn.execute(
        "SELECT m.memory_id FROM memories m WHERE m.superseded_by=? AND m.status='superseded' "
        "AND EXISTS (SELECT 1 FROM conflict_members a JOIN conflict_members b ON b.conflict_id=a.conflict_id "
        "WHERE a.memory_id=m.memory_id AND b.memory_id=?) "
        "ORDER BY m.event_time DESC, m.memory_id DESC LIMIT 1",
        (memory_id, memory_id),
    ).fetchone()
    found = mem.by_id(conn, row[0]) if row else None
    return MemoryFacts.from_row(found) if found is not None else None


def restated_later_in_a_set(conn: apsw.Connection, duplicate: MemoryFacts, event_time: str, policy: Policy) -> bool:
    """A word-for-word repeat, with a later event time, of a memory that does not lead an
    unresolved claim set it is in: absorbed as a sighting, its time took no part in the set's
    ranking, so the value the agent just said again kept losing to one said in between ("8080",
    "9090", "8080" again); said in other words it joined the set and led. It is stored and joins
    too. A repeat of a set's leader stays a sighting: joining would change nothing."""
    if event_time <= duplicate.event_time:
        return False
    return any(
        arbitrate_set(best, review_agent_conflicts=policy.review_agent_conflicts)["leader_id"] != duplicate.memory_id
        for _m, _c, _s, _a, best in conflicts_model.memberships_with_leaders(conn, [duplicate.memory_id])
    )


def disputed(conn: apsw.Connection, memory_id: int, claims: tuple[Claim, ...]) -> bool:
    """``memory_id`` is in an unresolved set of one of ``claims``' keys: a restatement of its
    value must take part in the set's ranking (it is stored and joins)."""
    keys = {set_key(c) for c in claims}
    return any(c.key in keys for c in conflicts_of(conn, memory_id))


def claim_sets(
    conn: apsw.Connection,
    claims: tuple[Claim, ...],
    candidates: list[Candidate],
    scope: tuple[str, ...],
    mine: MemoryFacts | None = None,
    *,
    known: KnownSets | None = None,
) -> dict[str, ConflictFacts]:
    """The unresolved claim set of each disputed key, with which candidates are already in it.

    Only the candidates' (and the writer's) membership is read: joining a set of a thousand costs
    what joining a set of two does. A key in ``known`` (read by :func:`outside_sets` in this
    transaction, for a superset of these candidates) is not read again."""
    streams = {c.other.memory_id: c.other.stream_id for c in candidates}
    if mine is not None:
        streams[mine.memory_id] = mine.stream_id
    sets: dict[str, ConflictFacts] = {}
    for claim in claims:
        ids = [c.other.memory_id for c in candidates if c.claim.key == claim.key]
        if not ids:
            continue
        key = set_key(claim)
        members: dict[int, str] | None = None
        if known is not None and key in known:
            row, members = known[key]
        else:
            row = conflicts_model.unresolved_for_key(conn, key, scope)
        if row is None:
            row, members = conflicts_model.unkeyed_of(conn, ids, claim.attribute), None
        if row is None:
            continue
        if members is not None and mine is None:
            active = {m: members[m] for m in ids if m in members}
        else:
            active = conflicts_model.active_among(
                conn, row.conflict_id, ids + ([mine.memory_id] if mine is not None else [])
            )
        sets[key] = ConflictFacts(
            conflict_id=row.conflict_id,
            stream_id=row.stream_id,
            state=row.state,
            key=key,
            values={streams[m]: v for m, v in active.items()},
            ids={streams[m]: m for m in active},
        )
    return sets


def settle_state(
    conn: apsw.Connection,
    sets: dict[str, ConflictFacts],
    candidates: list[Candidate],
    claims: tuple[Claim, ...],
    event_time: str,
    *,
    auto_settle: bool,
) -> SettleState:
    """What :func:`ledger.settlement.settle_by_policy` needs about the sets a write opens or joins.
    A set with a member no policy may supersede waits for a person (``auto_settle``): its
    members' facts are not read (only their values). Which members state other facts too (the
    writer by its ``claims``; the others read only when a change is possible at all: a member
    that became true a change's horizon apart from the writer, or ``auto_settle``)."""
    full = {
        c.stream_id: conflicts_model.conflict_facts(conn, row)
        for c in sets.values()
        if (row := conflicts_model.by_id(conn, c.conflict_id)) is not None
    }
    settleable = [  # auto_settle leaves a set with a guarded member alone; settle_changes may let it lead
        c for c in full.values() if not (auto_settle and conflicts_model.has_guarded_member(conn, c.conflict_id))
    ]
    facts = {c.other.stream_id: c.other for c in candidates}
    missing = sorted({i for c in settleable for s, i in c.ids.items() if s not in facts})
    facts |= {
        r.stream_id: MemoryFacts.from_row(r) for r in mem.load_many(conn, missing).values() if r.status == "active"
    }
    other_sets = {s: conflicts_of(conn, m.memory_id) for s, m in facts.items() if m.memory_id}
    said = clock.to_datetime(event_time)
    possible = auto_settle or any(
        abs((clock.to_datetime(m.event_time) - said).total_seconds()) >= CHANGE_HORIZON_S for m in facts.values()
    )
    several = claims_model.several_facts(conn, [m.memory_id for m in facts.values()]) if possible else set()
    return SettleState(
        sets=full,
        members=facts,
        other_sets=other_sets,
        several_facts=frozenset(s for s, m in facts.items() if m.memory_id in several),
        writer_several=states_several(claims),
    )
