"""Claim sets (conflicts), their members, judgments and state: open → judged → resolved.

A conflict is a *claim set*: the current memories that hold different values for one claim key.
Its id is the log position of the ``ClaimCollided`` event that opened it (small, deterministic
under rebuild); payloads name it and its members by stream id. ``conflict_members`` holds each
member with the value it holds and whether it is still in the set; ``conflict_streams`` maps
every conflict stream ever opened to the set it belongs to.

Ledgers written before claim sets recorded one pairwise conflict per pair of values
(``pairwise`` events after upcasting). They fold here: a pairwise conflict that shares a current
member holding the same value for the same attribute with an unresolved set joins that set, and
its stream (and its old conflict id) points at the set. A pairwise resolution settles its pair:
a member leaves when none of its pairs in the set is unresolved any more, and the set is settled
when fewer than two members remain. Every old conflict stays listed with its own values, state,
resolution and judgments (``pairs_of``), so nothing an old ledger recorded is lost.

Each member row carries a copy of its memory's arbitration facts (``MEMBER_FACTS``), refreshed
whenever the memory's facts change, and an index orders a set's current members by the rule
order: a set's leader and runner-up are the first two entries of that index, so a write that
joins a set of a thousand reads what a write joining a set of two does.
"""

from __future__ import annotations

import json
import re
from typing import Any

import apsw

from ledger.events import (
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
)
from ledger.sql import marks
from ledger.store import StoredEvent
from ledger.trust import SOURCE_TRUST
from projections.memories import memory_id_of

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

COLUMNS = ("conflict_id", "stream_id", "state", "workspace", "key", "subject", "attribute", "member_count",
           "verdict", "resolution", "winner_id", "reason", "opened_at", "updated_at", "actor", "last_position")
# Events after which a memory's arbitration facts may differ (the memories projection folds them first).
_FACT_TYPES_OF_EVENTS = (MemoryUpdated, Confirmed, MemoryUnlocked)
_FACT_EVENTS = frozenset(t.__name__ for t in _FACT_TYPES_OF_EVENTS)
_PAIR_COLUMNS = ("position", "conflict_id", "pairwise", "left_id", "right_id", "left_value", "right_value",
                 "verdict", "state", "resolution", "winner_id", "reason")


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class ConflictsProjector:
    name = "conflicts"
    version = 3  # 2: claim sets (pairwise conflicts of one claim fold into one set); 3: members ranked by index
    tables = ("conflicts", "conflict_members", "conflict_streams", "judgments")
    handles = frozenset({"ClaimCollided", "JudgmentSubmitted", "ConflictResolved", "ConflictReopened",
                         "ConflictMemberLeft", *_FACT_EVENTS})

    def create(self, conn: apsw.Connection) -> None:
        conn.execute(_SCHEMA.format(member_facts=", ".join(
            f"{c} {_FACT_TYPES.get(c, 'TEXT')} NOT NULL" for c in MEMBER_FACTS)))
        conn.execute(_RANK_INDEX)

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS conflicts; DROP TABLE IF EXISTS conflict_members; "
                     "DROP TABLE IF EXISTS conflict_streams; DROP TABLE IF EXISTS judgments")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if isinstance(data, ClaimCollided):
            self._collided(conn, event, data)
            return
        if isinstance(data, _FACT_TYPES_OF_EVENTS):  # the upcast type: a stored old name reads as the new one
            # The memories projection has folded the event: copy the facts it left to the
            # memory's member rows (one row per set it was ever in).
            facts = ", ".join(MEMBER_FACTS)
            conn.execute(f"UPDATE conflict_members SET ({facts})=(SELECT {facts} FROM memories "
                         "WHERE memory_id=conflict_members.memory_id) WHERE memory_id=?",
                         (memory_id_of(conn, data.memory),))  # type: ignore[attr-defined]
            return
        found = conn.execute("SELECT conflict_id, position FROM conflict_streams WHERE stream_id=?",
                             (data.conflict,)).fetchone()  # type: ignore[attr-defined]
        if found is None:  # an event about a conflict this ledger never saw
            return
        cid, pair = found
        if isinstance(data, JudgmentSubmitted):
            pins = {str(memory_id_of(conn, s)): v for s, v in sorted(data.pins.items())}
            conn.execute(
                "INSERT INTO judgments(judgment_id, conflict_id, stream_id, winner_id, rationale, pins, actor, "
                "recorded_at, pair_id) VALUES(?,?,?,?,?,?,?,?,?)",
                (event.position, cid, data.judgment, memory_id_of(conn, data.winner), data.rationale,
                 json.dumps(pins, sort_keys=True), event.actor, event.recorded_at, pair))
            conn.execute("UPDATE conflict_streams SET state='judged' WHERE position=? AND state<>'resolved'", (pair,))
            self._set(conn, cid, event, state="judged")
        elif isinstance(data, ConflictReopened):
            conn.execute("UPDATE conflict_streams SET state='open' WHERE position=? AND state<>'resolved'", (pair,))
            self._set(conn, cid, event, state="open", resolution=None, winner_id=None, reason=data.reason)
        elif isinstance(data, ConflictMemberLeft):
            self._leave(conn, cid, memory_id_of(conn, data.member), data.reason)
            self._set(conn, cid, event)
        elif isinstance(data, ConflictResolved):
            winner = memory_id_of(conn, data.winner)
            if data.pairwise:
                self._settle_pair(conn, cid, pair, event, data, winner)
            else:
                self._set(conn, cid, event, state="resolved", resolution=data.resolution, winner_id=winner,
                          reason=data.reason)

    # -- membership ----------------------------------------------------------------------------
    def _collided(self, conn: apsw.Connection, event: StoredEvent, data: ClaimCollided) -> None:
        members = [(memory_id_of(conn, m.memory), m) for m in data.members]
        known = conn.execute("SELECT conflict_id FROM conflict_streams WHERE stream_id=?", (data.conflict,)).fetchone()
        cid = known[0] if known else (self._fold_target(conn, data, members) if data.pairwise else None)
        if cid is None:
            cid = event.position
            conn.execute(
                f"INSERT INTO conflicts({', '.join(COLUMNS)}) VALUES({marks(len(COLUMNS))})",
                (cid, data.conflict, "open", event.workspace, data.key, data.subject, data.attribute, 0,
                 _json(data.verdict), None, None, "", event.recorded_at, event.recorded_at, event.actor,
                 event.position))
        if not known:
            left, right = [*members, (None, None), (None, None)][:2]
            conn.execute(
                f"INSERT INTO conflict_streams(stream_id, {', '.join(_PAIR_COLUMNS)}) "
                f"VALUES(?, {marks(len(_PAIR_COLUMNS))})",
                (data.conflict, event.position, cid, int(data.pairwise), left[0], right[0],
                 left[1].value if left[1] else "", right[1].value if right[1] else "", _json(data.verdict), "open",
                 None, None, ""))
        added = 0
        for memory_id, member in members:
            if memory_id is None:
                continue
            before = conn.execute("SELECT active FROM conflict_members WHERE memory_id=? AND conflict_id=?",
                                  (memory_id, cid)).fetchone()
            if before is not None and before[0]:
                continue
            added += 1
            conn.execute(
                "INSERT OR REPLACE INTO conflict_members(memory_id, conflict_id, stream_id, value, value_norm, active, "
                f"joined_at, left_reason, {', '.join(MEMBER_FACTS)}) SELECT ?,?,?,?,?,1,?,'', "
                f"{', '.join(MEMBER_FACTS)} FROM memories WHERE memory_id=?",
                (memory_id, cid, member.memory, member.value, member.norm or member.value, event.position, memory_id))
        fields: dict[str, Any] = {}
        if data.key:
            fields["key"] = data.key
        state = conn.execute("SELECT state FROM conflicts WHERE conflict_id=?", (cid,)).get
        if added and state != "open" and cid != event.position:  # a judged set re-opens when a member joins
            fields.update(state="open", resolution=None, winner_id=None, reason="a member joined")
        self._set(conn, cid, event, member_delta=added, **fields)

    def _fold_target(self, conn: apsw.Connection, data: ClaimCollided,
                     members: list[tuple[int | None, Any]]) -> int | None:
        """The unresolved set an old pairwise conflict belongs to: a current member in common,
        holding the same value, for the same attribute."""
        for memory_id, member in members:
            row = conn.execute(
                "SELECT c.conflict_id FROM conflict_members m JOIN conflicts c ON c.conflict_id=m.conflict_id "
                "WHERE m.memory_id=? AND m.active=1 AND m.value=? AND c.attribute=? AND c.state<>'resolved' "
                "ORDER BY c.conflict_id LIMIT 1", (memory_id, member.value, data.attribute)).fetchone()
            if row is not None:
                return int(row[0])
        return None

    def _leave(self, conn: apsw.Connection, cid: int, memory_id: int | None, reason: str) -> None:
        changed = conn.execute("UPDATE conflict_members SET active=0, left_reason=? WHERE memory_id=? AND "
                               "conflict_id=? AND active=1 RETURNING memory_id", (reason, memory_id, cid)).fetchall()
        if changed:
            conn.execute("UPDATE conflicts SET member_count=member_count-1 WHERE conflict_id=?", (cid,))

    def _settle_pair(self, conn: apsw.Connection, cid: int, pair: int, event: StoredEvent, data: ConflictResolved,
                     winner: int | None) -> None:
        """An old pairwise resolution: the pair is settled; its members leave the set when they
        have no unresolved pair left in it; the set is settled when under two members remain."""
        conn.execute("UPDATE conflict_streams SET state='resolved', resolution=?, winner_id=?, reason=? "
                     "WHERE position=?", (data.resolution, winner, data.reason, pair))
        left, right = conn.execute("SELECT left_id, right_id FROM conflict_streams WHERE position=?",
                                   (pair,)).fetchone()
        for member in (left, right):
            pending = conn.execute(
                "SELECT count(*) FROM conflict_streams WHERE conflict_id=? AND state<>'resolved' "
                "AND (left_id=? OR right_id=?)", (cid, member, member)).get
            if not pending:
                self._leave(conn, cid, member, data.resolution)
        if conn.execute("SELECT member_count FROM conflicts WHERE conflict_id=?", (cid,)).get < 2:
            self._set(conn, cid, event, state="resolved", resolution=data.resolution, winner_id=winner,
                      reason=data.reason)
        else:
            self._set(conn, cid, event)

    def _set(self, conn: apsw.Connection, conflict_id: int, event: StoredEvent, member_delta: int = 0,
             **fields: Any) -> None:
        fields.update(updated_at=event.recorded_at, last_position=event.position)
        assignments = ", ".join([f"{k}=?" for k in fields] + ["member_count=member_count+?"])
        conn.execute(f"UPDATE conflicts SET {assignments} WHERE conflict_id=?",
                     (*fields.values(), member_delta, conflict_id))


# -- reads -------------------------------------------------------------------------------------
# The order of ``ledger.arbiter.rank_key`` in SQL, so that a set's leader is found by an ORDER BY
# ... LIMIT in SQLite instead of ranking every member in Python on each write (a set of a
# thousand costs a sort in C). tests/test_claim_sets.py checks it orders as rank_key does.
_TRUST_SQL = ("CASE m.source_type " + " ".join(f"WHEN '{k}' THEN {v}" for k, v in SOURCE_TRUST.items())
              + f" ELSE {SOURCE_TRUST['unknown']} END")
_BACKED = f"m.confirmed_via='{AUTH_USER}'"  # a label or lock a person gave (ledger.arbiter.user_backed)
RANK_ORDER_SQL = (f"CASE WHEN m.protection='locked' AND {_BACKED} THEN 2 WHEN (m.source_type='user_confirmed' "
                  f"AND {_BACKED}) OR m.protection='protected' THEN 1 ELSE 0 END DESC, m.event_time DESC, "
                  f"CASE WHEN m.source_type='user_confirmed' AND NOT {_BACKED} THEN {SOURCE_TRUST['agent_generated']} "
                  f"ELSE {_TRUST_SQL} END DESC, round(m.confidence, 9) DESC, m.recorded_at DESC, m.memory_id DESC")
SIDE_COLUMNS = ("memory_id", "source_type", "protection", "event_time", "confidence", "recorded_at", "confirmed_via")


MEMBER_FACTS = tuple(c for c in SIDE_COLUMNS if c != "memory_id")
_FACT_TYPES = {"confidence": "REAL"}
# The rule order over the member rows' own copy of the facts, as an index: ``ranked_members``
# reads a set's best members off it without joining or sorting the set.
_RANK_INDEX = ("CREATE INDEX IF NOT EXISTS conflict_members_rank ON conflict_members(conflict_id, "
               + re.sub(r"\bm\.", "", RANK_ORDER_SQL) + ") WHERE active=1")


def ranked_members(conn: apsw.Connection, conflict_id: int, limit: int = -1) -> list[dict[str, Any]]:
    """Current members' arbitration facts, best first by the rule order (``limit`` of them).

    The ORDER BY is the rank index's own expression list, so SQLite walks the index and stops
    after ``limit`` entries: the best two of a set of any size cost two index entries."""
    cols = ", ".join(f"m.{c}" for c in SIDE_COLUMNS)
    return [dict(zip(SIDE_COLUMNS, r, strict=True)) for r in conn.execute(
        f"SELECT {cols} FROM conflict_members m WHERE m.conflict_id=? AND m.active=1 "
        f"ORDER BY {RANK_ORDER_SQL} LIMIT ?", (conflict_id, limit))]


def _load(conn: apsw.Connection, where: str, params: tuple[Any, ...]) -> dict[str, Any] | None:
    row = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM conflicts WHERE {where}", params).fetchone()
    return dict(zip(COLUMNS, row, strict=True)) if row else None


def by_id(conn: apsw.Connection, conflict_id: int) -> dict[str, Any] | None:
    return _load(conn, "conflict_id=?", (conflict_id,))


def by_stream(conn: apsw.Connection, stream_id: str) -> dict[str, Any] | None:
    return _load(conn, "stream_id=?", (stream_id,))


def page(conn: apsw.Connection, state: str | None, *, before: int | None,
         limit: int) -> tuple[int, list[dict[str, Any]]]:
    """Sets in ``state`` (all when None): how many there are, and up to ``limit`` of them with
    ids below ``before``, newest first (a keyset page: a set opened meanwhile shifts nothing)."""
    where, params = ("1", ()) if state is None else ("state=?", (state,))
    total = int(conn.execute(f"SELECT count(*) FROM conflicts WHERE {where}", params).get)
    if before:
        where, params = f"{where} AND conflict_id < ?", (*params, before)
    rows = [dict(zip(COLUMNS, r, strict=True)) for r in conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM conflicts WHERE {where} ORDER BY conflict_id DESC LIMIT ?",
        (*params, limit))]
    return total, rows


def unresolved_memberships(conn: apsw.Connection, memory_ids: list[int]) -> list[tuple[int, int, str, str]]:
    """``(memory_id, conflict_id, subject, attribute)`` for each unresolved set that one of
    ``memory_ids`` is a current member of, oldest set first."""
    if not memory_ids:
        return []
    return conn.execute(
        "SELECT m.memory_id, c.conflict_id, c.subject, c.attribute FROM conflict_members m "
        f"JOIN conflicts c ON c.conflict_id=m.conflict_id WHERE m.memory_id IN ({marks(len(memory_ids))}) "
        "AND m.active=1 AND c.state<>'resolved' ORDER BY c.conflict_id", tuple(memory_ids)).fetchall()


def count_unresolved_with_inactive_members(conn: apsw.Connection) -> int:
    """Unresolved sets with a member that is no longer active (settlement should have ended them)."""
    return int(conn.execute(
        "SELECT count(DISTINCT c.conflict_id) FROM conflicts c "
        "JOIN conflict_members cm ON cm.conflict_id=c.conflict_id JOIN memories m ON m.memory_id=cm.memory_id "
        "WHERE c.state<>'resolved' AND m.status<>'active'").get)


def set_of(conn: apsw.Connection, conflict_id: int) -> int | None:
    """The set a conflict id names: itself, or the set an old pairwise conflict folded into."""
    row = conn.execute("SELECT conflict_id FROM conflict_streams WHERE position=?", (conflict_id,)).fetchone()
    return int(row[0]) if row else None


def unresolved_of(conn: apsw.Connection, memory_id: int) -> list[dict[str, Any]]:
    """Unresolved sets that ``memory_id`` is a current member of, oldest first."""
    cols = ", ".join(f"c.{c}" for c in COLUMNS)
    rows = conn.execute(
        f"SELECT {cols} FROM conflict_members m JOIN conflicts c ON c.conflict_id=m.conflict_id "
        "WHERE m.memory_id=? AND m.active=1 AND c.state<>'resolved' ORDER BY c.conflict_id", (memory_id,))
    return [dict(zip(COLUMNS, r, strict=True)) for r in rows]


def unresolved_for_key(conn: apsw.Connection, key: str, workspaces: tuple[str, ...]) -> dict[str, Any] | None:
    return _load(conn, f"key=? AND workspace IN ({marks(len(workspaces))}) AND state<>'resolved' "
                 "ORDER BY conflict_id LIMIT 1", (key, *workspaces))


def unkeyed_of(conn: apsw.Connection, memory_ids: list[int], attribute: str) -> dict[str, Any] | None:
    """An unresolved set folded from old pairwise conflicts (no key recorded) that one of
    ``memory_ids`` is in, for the same attribute: new values of that claim join it."""
    cols = ", ".join(f"c.{c}" for c in COLUMNS)
    row = conn.execute(
        f"SELECT {cols} FROM conflict_members m JOIN conflicts c ON c.conflict_id=m.conflict_id "
        f"WHERE m.memory_id IN ({marks(len(memory_ids))}) AND m.active=1 AND c.key='' AND c.attribute=? "
        "AND c.state<>'resolved' "
        "ORDER BY c.conflict_id LIMIT 1", (*memory_ids, attribute)).fetchone()
    return dict(zip(COLUMNS, row, strict=True)) if row else None


def unresolved_between(conn: apsw.Connection, left_id: int, right_id: int) -> dict[str, Any] | None:
    """The oldest unresolved set holding both memories (through the member index, no scan)."""
    cols = ", ".join(f"c.{c}" for c in COLUMNS)
    row = conn.execute(
        f"SELECT {cols} FROM conflict_members a JOIN conflict_members b ON b.conflict_id=a.conflict_id "
        "JOIN conflicts c ON c.conflict_id=a.conflict_id WHERE a.memory_id=? AND b.memory_id=? AND a.active=1 "
        "AND b.active=1 AND c.state<>'resolved' ORDER BY c.conflict_id LIMIT 1", (left_id, right_id)).fetchone()
    return dict(zip(COLUMNS, row, strict=True)) if row else None


def conflict_ids_of(conn: apsw.Connection, memory_id: int) -> list[int]:
    return [r[0] for r in conn.execute(
        "SELECT c.conflict_id FROM conflict_members m JOIN conflicts c ON c.conflict_id=m.conflict_id "
        "WHERE m.memory_id=? AND m.active=1 AND c.state<>'resolved' ORDER BY c.conflict_id", (memory_id,))]


def has_guarded_member(conn: apsw.Connection, conflict_id: int) -> bool:
    """Whether a current member is one no policy may supersede (``ledger.settlement.guarded``:
    protected, locked or labelled user_confirmed) — then the set waits for a person, and a write
    that joins it need not read every member's facts."""
    return conn.execute(
        "SELECT 1 FROM conflict_members c JOIN memories m ON m.memory_id=c.memory_id WHERE c.conflict_id=? "
        "AND c.active=1 AND (m.protection<>'normal' OR m.source_type='user_confirmed') LIMIT 1",
        (conflict_id,)).fetchone() is not None


def members_of(conn: apsw.Connection, conflict_id: int, *, active: bool = True, limit: int = -1,
               offset: int = 0) -> list[dict[str, Any]]:
    """Members in the order they joined: ``memory_id, stream_id, value, value_norm, active, left_reason``."""
    cols = ("memory_id", "stream_id", "value", "value_norm", "active", "left_reason")
    where = "AND active=1" if active else ""
    return [dict(zip(cols, r, strict=True)) for r in conn.execute(
        f"SELECT {', '.join(cols)} FROM conflict_members WHERE conflict_id=? {where} "
        "ORDER BY joined_at, memory_id LIMIT ? OFFSET ?", (conflict_id, limit, offset))]


def active_among(conn: apsw.Connection, conflict_id: int, memory_ids: list[int]) -> dict[int, str]:
    """Which of ``memory_ids`` are current members of the set (memory id → normalised value).

    One primary-key probe per id (``+active`` keeps SQLite off the set's own indexes, which
    would walk every member of the set)."""
    if not memory_ids:
        return {}
    return {m: v for m, v in conn.execute(
        f"SELECT memory_id, value_norm FROM conflict_members WHERE conflict_id=? AND +active=1 "
        f"AND memory_id IN ({marks(len(memory_ids))})", (conflict_id, *memory_ids))}


def pairs_of(conn: apsw.Connection, conflict_id: int) -> list[dict[str, Any]]:
    """The pairwise conflicts an old ledger recorded that folded into this set (none for new sets)."""
    rows = conn.execute(f"SELECT {', '.join(_PAIR_COLUMNS)} FROM conflict_streams WHERE conflict_id=? "
                        "AND pairwise=1 ORDER BY position", (conflict_id,))
    out = []
    for row in rows:
        item = dict(zip(_PAIR_COLUMNS, row, strict=True))
        out.append({"conflict_id": item["position"], "members": [item["left_id"], item["right_id"]],
                    "values": [item["left_value"], item["right_value"]], "state": item["state"],
                    "resolution": item["resolution"], "winner_id": item["winner_id"], "reason": item["reason"],
                    "verdict": json.loads(item["verdict"])})
    return out


def count_by_state(conn: apsw.Connection, workspaces: tuple[str, ...] | None = None) -> dict[str, int]:
    """Claim sets per state; with ``workspaces``, only those of these workspaces."""
    counts = {"open": 0, "judged": 0, "resolved": 0}
    if workspaces is None:
        rows = conn.execute("SELECT state, count(*) FROM conflicts GROUP BY state")
    else:
        rows = conn.execute(f"SELECT state, count(*) FROM conflicts WHERE workspace IN "
                            f"({marks(len(workspaces))}) GROUP BY state", workspaces)
    counts.update({s: n for s, n in rows})
    return counts


def judgments_of(conn: apsw.Connection, conflict_id: int) -> list[dict[str, Any]]:
    out = []
    for jid, winner, rationale, pins, actor, recorded_at, pair in conn.execute(
            "SELECT judgment_id, winner_id, rationale, pins, actor, recorded_at, pair_id FROM judgments "
            "WHERE conflict_id=? ORDER BY judgment_id", (conflict_id,)):
        item = {"judgment_id": jid, "winner_id": winner, "rationale": rationale, "pins": json.loads(pins),
                "actor": actor, "recorded_at": recorded_at}
        if pair != conflict_id:
            item["pair_conflict_id"] = pair
        out.append(item)
    return out
