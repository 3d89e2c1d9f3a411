"""The conflicts read model's tables and the projector that folds collision events into them.

The questions the layers above ask of these tables are in :mod:`projections.conflicts.queries`."""

from __future__ import annotations

import json
import re
from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.erasure import PLACEHOLDER
from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import (
    AUTH_USER,
    ClaimCollided,
    Confirmed,
    ConflictMemberLeft,
    ConflictReopened,
    ConflictResolved,
    Event,
    JudgmentSubmitted,
    MemoryUnlocked,
    MemoryUpdated,
    SetMember,
)
from fact_ledger.ledger.sql import marks
from fact_ledger.ledger.trust import SOURCE_TRUST
from fact_ledger.projections.memories import memory_id_of, memory_ids_of

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conflicts(
    conflict_id   INTEGER PRIMARY KEY,
    stream_id     TEXT NOT NULL UNIQUE,
    state         TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    key           TEXT NOT NULL,
    subject       TEXT NOT NULL,
    attribute     TEXT NOT NULL,
    member_count  INTEGER NOT NULL,
    verdict       TEXT NOT NULL,
    resolution    TEXT,
    winner_id     INTEGER,
    reason        TEXT NOT NULL,
    opened_at     TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    actor         TEXT NOT NULL,
    last_position INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS conflicts_state ON conflicts(state, conflict_id);
CREATE INDEX IF NOT EXISTS conflicts_key ON conflicts(key, workspace) WHERE state<>'resolved';
CREATE TABLE IF NOT EXISTS conflict_members(
    memory_id   INTEGER NOT NULL,
    conflict_id INTEGER NOT NULL,
    stream_id   TEXT NOT NULL,
    value       TEXT NOT NULL,
    value_norm  TEXT NOT NULL,
    active      INTEGER NOT NULL,
    joined_at   INTEGER NOT NULL,
    left_reason TEXT NOT NULL,
    {member_facts},
    PRIMARY KEY(memory_id, conflict_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS conflict_members_set ON conflict_members(conflict_id, active, joined_at);
CREATE TABLE IF NOT EXISTS conflict_streams(
    position     INTEGER PRIMARY KEY,
    stream_id    TEXT NOT NULL UNIQUE,
    conflict_id  INTEGER NOT NULL,
    pairwise     INTEGER NOT NULL,
    left_id      INTEGER,
    right_id     INTEGER,
    left_value   TEXT NOT NULL,
    right_value  TEXT NOT NULL,
    verdict      TEXT NOT NULL,
    state        TEXT NOT NULL,
    resolution   TEXT,
    winner_id    INTEGER,
    reason       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS conflict_streams_set ON conflict_streams(conflict_id);
CREATE TABLE IF NOT EXISTS judgments(
    judgment_id INTEGER PRIMARY KEY,
    conflict_id INTEGER NOT NULL,
    stream_id   TEXT NOT NULL,
    winner_id   INTEGER,
    rationale   TEXT NOT NULL,
    pins        TEXT NOT NULL,
    actor       TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    pair_id     INTEGER
);
CREATE INDEX IF NOT EXISTS judgments_conflict ON judgments(conflict_id);
"""

COLUMNS = (
    "conflict_id",
    "stream_id",
    "state",
    "workspace",
    "key",
    "subject",
    "attribute",
    "member_count",
    "verdict",
    "resolution",
    "winner_id",
    "reason",
    "opened_at",
    "updated_at",
    "actor",
    "last_position",
)
# Events after which a memory's arbitration facts may differ (the memories projection folds them first).
_FACT_TYPES_OF_EVENTS = (MemoryUpdated, Confirmed, MemoryUnlocked)
_FACT_EVENTS = frozenset(t.__name__ for t in _FACT_TYPES_OF_EVENTS)
PAIR_COLUMNS = (
    "position",
    "conflict_id",
    "pairwise",
    "left_id",
    "right_id",
    "left_value",
    "right_value",
    "verdict",
    "state",
    "resolution",
    "winner_id",
    "reason",
)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class ConflictsProjector:
    name = "conflicts"
    # 2: claim sets (pairwise conflicts of one claim fold into one set); 3: members ranked by index;
    # 4: a judged set re-opens when a member leaves; 5: a join names a set whose label was erased;
    # 6: the members an erasure did not take keep their values (read from their own claims)
    version = 6
    tables = ("conflicts", "conflict_members", "conflict_streams", "judgments")
    handles = frozenset(
        {
            "ClaimCollided",
            "JudgmentSubmitted",
            "ConflictResolved",
            "ConflictReopened",
            "ConflictMemberLeft",
            *_FACT_EVENTS,
        }
    )

    def create(self, conn: apsw.Connection) -> None:
        conn.execute(
            _SCHEMA.format(member_facts=", ".join(f"{c} {_FACT_TYPES.get(c, 'TEXT')} NOT NULL" for c in MEMBER_FACTS))
        )
        conn.execute(_RANK_INDEX)

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute(
            "DROP TABLE IF EXISTS conflicts; DROP TABLE IF EXISTS conflict_members; "
            "DROP TABLE IF EXISTS conflict_streams; DROP TABLE IF EXISTS judgments"
        )

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if isinstance(data, ClaimCollided):
            self._collided(conn, event, data)
            return
        if isinstance(data, _FACT_TYPES_OF_EVENTS):  # the upcast type: a stored old name reads as the new one
            # The memories projection has folded the event: copy the facts it left to the
            # memory's member rows (one row per set it was ever in).
            facts = ", ".join(MEMBER_FACTS)
            conn.execute(
                f"UPDATE conflict_members SET ({facts})=(SELECT {facts} FROM memories "
                "WHERE memory_id=conflict_members.memory_id) WHERE memory_id=?",
                (memory_id_of(conn, data.memory),),
            )  # type: ignore[attr-defined]
            return
        found = conn.execute(
            "SELECT conflict_id, position FROM conflict_streams WHERE stream_id=?", (data.conflict,)
        ).fetchone()  # type: ignore[attr-defined]
        if found is None:  # an event about a conflict this ledger never saw
            return
        cid, pair = found
        if isinstance(data, JudgmentSubmitted):
            pins = {str(memory_id_of(conn, s)): v for s, v in sorted(data.pins.items())}
            conn.execute(
                "INSERT INTO judgments(judgment_id, conflict_id, stream_id, winner_id, rationale, pins, actor, "
                "recorded_at, pair_id) VALUES(?,?,?,?,?,?,?,?,?)",
                (
                    event.position,
                    cid,
                    data.judgment,
                    memory_id_of(conn, data.winner),
                    data.rationale,
                    json.dumps(pins, sort_keys=True),
                    event.actor,
                    event.recorded_at,
                    pair,
                ),
            )
            conn.execute("UPDATE conflict_streams SET state='judged' WHERE position=? AND state<>'resolved'", (pair,))
            self._set(conn, cid, event, state="judged")
        elif isinstance(data, ConflictReopened):
            conn.execute("UPDATE conflict_streams SET state='open' WHERE position=? AND state<>'resolved'", (pair,))
            self._set(conn, cid, event, state="open", resolution=None, winner_id=None, reason=data.reason)
        elif isinstance(data, ConflictMemberLeft):
            self._leave(conn, cid, memory_id_of(conn, data.member), data.reason)
            # a judged set re-opens when a member leaves, as when one joins: its judgment was
            # pinned to the members it had (it may even name the one that left)
            state = conn.execute("SELECT state FROM conflicts WHERE conflict_id=?", (cid,)).fetchone()
            if state is not None and state[0] == "judged":
                conn.execute("UPDATE conflict_streams SET state='open' WHERE position=? AND state='judged'", (pair,))
                self._set(conn, cid, event, state="open", resolution=None, winner_id=None, reason=data.reason)
            else:
                self._set(conn, cid, event)
        elif isinstance(data, ConflictResolved):
            winner = memory_id_of(conn, data.winner)
            if data.pairwise:
                self._settle_pair(conn, cid, pair, event, data, winner)
            else:
                self._set(
                    conn, cid, event, state="resolved", resolution=data.resolution, winner_id=winner, reason=data.reason
                )

    # -- membership ----------------------------------------------------------------------------
    def _collided(self, conn: apsw.Connection, event: StoredEvent, data: ClaimCollided) -> None:
        ids = memory_ids_of(conn, [m.memory for m in data.members])
        members = [(ids.get(m.memory), m) for m in data.members]
        # The first event of its own stream names no stream folded before (a set opened now).
        first = event.stream_version == 1 and data.conflict == event.stream_id
        known = (
            None
            if first
            else conn.execute(
                "SELECT s.conflict_id, c.state, c.key FROM conflict_streams s "
                "LEFT JOIN conflicts c ON c.conflict_id=s.conflict_id WHERE s.stream_id=?",
                (data.conflict,),
            ).fetchone()
        )
        if any(m.value == PLACEHOLDER for _, m in members):  # an erasure cleared this event's values
            data, members = _values_left(conn, data, members, known[2] if known else "")
        cid = known[0] if known else (self._fold_target(conn, data, members) if data.pairwise else None)
        opened = cid is None
        if opened:
            cid = event.position
        if not known:
            left, right = [*members, (None, None), (None, None)][:2]
            conn.execute(
                f"INSERT INTO conflict_streams(stream_id, {', '.join(PAIR_COLUMNS)}) "
                f"VALUES(?, {marks(len(PAIR_COLUMNS))})",
                (
                    data.conflict,
                    event.position,
                    cid,
                    int(data.pairwise),
                    left[0],
                    right[0],
                    left[1].value if left[1] else "",
                    right[1].value if right[1] else "",
                    _json(data.verdict),
                    "open",
                    None,
                    None,
                    "",
                ),
            )
        joining = [
            (memory_id, member.memory, member.value, member.norm or member.value)
            for memory_id, member in members
            if memory_id is not None
        ]
        added = 0
        if joining:  # one statement for every member; changes() counts those that joined
            conn.execute(_JOIN, (cid, event.position, json.dumps(joining)))
            added = conn.changes()
            if added < len(joining):  # a current member named again: its update changed its value
                conn.executemany(
                    _REVALUE, [(value, norm, memory_id, cid, norm) for memory_id, _, value, norm in joining]
                )
        if opened:  # the set's row as this event leaves it, in one statement
            conn.execute(
                f"INSERT INTO conflicts({', '.join(COLUMNS)}) VALUES({marks(len(COLUMNS))})",
                (
                    cid,
                    data.conflict,
                    "open",
                    event.workspace,
                    data.key,
                    data.subject,
                    data.attribute,
                    added,
                    _json(data.verdict),
                    None,
                    None,
                    "",
                    event.recorded_at,
                    event.recorded_at,
                    event.actor,
                    event.position,
                ),
            )
            return
        fields: dict[str, Any] = {}
        if data.key and data.key != PLACEHOLDER:
            fields["key"] = data.key
        if data.subject != PLACEHOLDER:  # the set's label, from a member whose text was not erased
            fields.update(subject=data.subject, attribute=data.attribute)
        if added:  # a judged set re-opens when a member joins
            state = known[1] if known else conn.execute("SELECT state FROM conflicts WHERE conflict_id=?", (cid,)).get
            if state != "open":
                fields.update(state="open", resolution=None, winner_id=None, reason="a member joined")
        self._set(conn, cid, event, member_delta=added, **fields)

    def _fold_target(
        self, conn: apsw.Connection, data: ClaimCollided, members: list[tuple[int | None, Any]]
    ) -> int | None:
        """The unresolved set an old pairwise conflict belongs to: a current member in common,
        holding the same value, for the same attribute."""
        for memory_id, member in members:
            row = conn.execute(
                "SELECT c.conflict_id FROM conflict_members m JOIN conflicts c ON c.conflict_id=m.conflict_id "
                "WHERE m.memory_id=? AND m.active=1 AND m.value=? AND c.attribute=? AND c.state<>'resolved' "
                "ORDER BY c.conflict_id LIMIT 1",
                (memory_id, member.value, data.attribute),
            ).fetchone()
            if row is not None:
                return int(row[0])
        return None

    def _leave(self, conn: apsw.Connection, cid: int, memory_id: int | None, reason: str) -> None:
        changed = conn.execute(
            "UPDATE conflict_members SET active=0, left_reason=? WHERE memory_id=? AND "
            "conflict_id=? AND active=1 RETURNING memory_id",
            (reason, memory_id, cid),
        ).fetchall()
        if changed:
            conn.execute("UPDATE conflicts SET member_count=member_count-1 WHERE conflict_id=?", (cid,))

    def _settle_pair(
        self, conn: apsw.Connection, cid: int, pair: int, event: StoredEvent, data: ConflictResolved, winner: int | None
    ) -> None:
        """An old pairwise resolution: the pair is settled; its members leave the set when they
        have no unresolved pair left in it; the set is settled when under two members remain."""
        conn.execute(
            "UPDATE conflict_streams SET state='resolved', resolution=?, winner_id=?, reason=? WHERE position=?",
            (data.resolution, winner, data.reason, pair),
        )
        left, right = conn.execute(
            "SELECT left_id, right_id FROM conflict_streams WHERE position=?", (pair,)
        ).fetchone()
        for member in (left, right):
            pending = conn.execute(
                "SELECT count(*) FROM conflict_streams WHERE conflict_id=? AND state<>'resolved' "
                "AND (left_id=? OR right_id=?)",
                (cid, member, member),
            ).get
            if not pending:
                self._leave(conn, cid, member, data.resolution)
        if conn.execute("SELECT member_count FROM conflicts WHERE conflict_id=?", (cid,)).get < 2:
            self._set(
                conn, cid, event, state="resolved", resolution=data.resolution, winner_id=winner, reason=data.reason
            )
        else:
            self._set(conn, cid, event)

    def _set(
        self, conn: apsw.Connection, conflict_id: int, event: StoredEvent, member_delta: int = 0, **fields: Any
    ) -> None:
        fields.update(updated_at=event.recorded_at, last_position=event.position)
        assignments = ", ".join([_assignment(k) for k in fields] + ["member_count=member_count+?"])
        conn.execute(
            f"UPDATE conflicts SET {assignments} WHERE conflict_id=?", (*fields.values(), member_delta, conflict_id)
        )


def _values_left(
    conn: apsw.Connection, data: ClaimCollided, members: list[tuple[int | None, SetMember]], set_key: str
) -> tuple[ClaimCollided, list[tuple[int | None, SetMember]]]:
    """A claim set's event as the members it names still state it, once an erasure cleared its
    values: the event is sealed as one, so erasing one member cleared every member's value (and
    the set's key and label). Each member not erased states its value in its own claim under
    the set's key (the event's, else the set's, else the one key the members left share); left
    as the placeholder, a current member read as a value of its own, so a later memory with its
    value joined the set as a new one and settling it superseded the member by its own value."""
    claims: dict[int, dict[str, tuple[str, ...]]] = {}
    for memory_id, _ in members:
        rows = conn.execute(
            "SELECT key_subject, key_attribute, kind, value, value_norm, subject, attribute FROM claims "
            "WHERE memory_id=?",
            (memory_id,),
        ).fetchall()
        if memory_id is not None and rows:
            claims[memory_id] = {"\x1f".join(row[:3]): tuple(row[3:]) for row in rows}
    key = next((k for k in (data.key, set_key) if k and k != PLACEHOLDER), "")
    if not key and claims:
        shared = set.intersection(*(set(held) for held in claims.values()))
        key = next(iter(shared)) if len(shared) == 1 else ""
    if not key:
        return data, members
    restored: list[tuple[int | None, SetMember]] = []
    label = (data.subject, data.attribute)
    for memory_id, m in members:
        held = claims.get(memory_id, {}).get(key) if memory_id is not None else None
        if m.value == PLACEHOLDER and held is not None:
            m = msgspec.structs.replace(m, value=held[0], norm=held[1])
            label = (held[2], held[3]) if label[0] == PLACEHOLDER else label
        restored.append((memory_id, m))
    return msgspec.structs.replace(data, key=key, subject=label[0], attribute=label[1]), restored


def _assignment(column: str) -> str:
    """``column=?``; the label only where erasure left its placeholder (a join does not reword it)."""
    if column in ("subject", "attribute"):
        return f"{column}=CASE WHEN {column}='{PLACEHOLDER}' THEN ? ELSE {column} END"
    return f"{column}=?"


# -- reads -------------------------------------------------------------------------------------
# The order of ``ledger.arbiter.rank_key`` in SQL, so that a set's leader is found by an ORDER BY
# ... LIMIT in SQLite instead of ranking every member in Python on each write (a set of a
# thousand costs a sort in C). tests/test_claim_sets.py checks it orders as rank_key does.
_TRUST_SQL = (
    "CASE m.source_type "
    + " ".join(f"WHEN '{k}' THEN {v}" for k, v in SOURCE_TRUST.items())
    + f" ELSE {SOURCE_TRUST['unknown']} END"
)
_BACKED = f"m.confirmed_via='{AUTH_USER}'"  # a label or lock a person gave (ledger.arbiter.user_backed)
RANK_ORDER_SQL = (
    f"CASE WHEN m.protection='locked' AND {_BACKED} THEN 2 WHEN (m.source_type='user_confirmed' "
    f"AND {_BACKED}) OR m.protection='protected' THEN 1 ELSE 0 END DESC, m.event_time DESC, "
    f"CASE WHEN m.source_type='user_confirmed' AND NOT {_BACKED} THEN {SOURCE_TRUST['agent_generated']} "
    f"ELSE {_TRUST_SQL} END DESC, round(m.confidence, 9) DESC, m.recorded_at DESC, m.memory_id DESC"
)
SIDE_COLUMNS = ("memory_id", "source_type", "protection", "event_time", "confidence", "recorded_at", "confirmed_via")


MEMBER_FACTS = tuple(c for c in SIDE_COLUMNS if c != "memory_id")
_FACT_TYPES = {"confidence": "REAL"}
# The rule order over the member rows' own copy of the facts, as an index: ``ranked_members``
# reads a set's best members off it without joining or sorting the set.
_RANK_INDEX = (
    "CREATE INDEX IF NOT EXISTS conflict_members_rank ON conflict_members(conflict_id, "
    + re.sub(r"\bm\.", "", RANK_ORDER_SQL)
    + ") WHERE active=1"
)

# A current member named again states its value after an update ("Erin" → "Grace" in a set of three):
# the value changes, nothing else (it joined when it joined).
_REVALUE = (
    "UPDATE conflict_members SET value=?, value_norm=? "
    "WHERE memory_id=? AND conflict_id=? AND active=1 AND value_norm IS NOT ?"
)
# A member joins, or joins again after leaving (``changes()`` is 1); a current member stays as it is (0).
_JOIN = (
    "INSERT INTO conflict_members(memory_id, conflict_id, stream_id, value, value_norm, active, joined_at, "
    f"left_reason, {', '.join(MEMBER_FACTS)}) "
    "SELECT j.value->>0, ?1, j.value->>1, j.value->>2, j.value->>3, 1, ?2, '', "
    f"{', '.join('m.' + f for f in MEMBER_FACTS)} FROM json_each(?3) j CROSS JOIN memories m "
    "ON m.memory_id = j.value->>0 WHERE true ON CONFLICT(memory_id, conflict_id) DO UPDATE SET "
    "stream_id=excluded.stream_id, value=excluded.value, value_norm=excluded.value_norm, active=1, "
    "joined_at=excluded.joined_at, left_reason='', "
    + ", ".join(f"{f}=excluded.{f}" for f in MEMBER_FACTS)
    + " WHERE active=0"
)
