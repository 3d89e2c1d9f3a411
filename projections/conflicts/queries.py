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
from collections.abc import Sequence
from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.arbiter import Side
from fact_ledger.ledger.facts import CONFLICT_STATES, ConflictFacts
from fact_ledger.ledger.sql import marks
from fact_ledger.projections.conflicts.projector import COLUMNS, PAIR_COLUMNS, RANK_ORDER_SQL, SIDE_COLUMNS
from fact_ledger.projections.rows import typed_row


class ConflictRow(msgspec.Struct, frozen=True, kw_only=True):
    """A claim set as the ``conflicts`` read model holds it (its stored verdict decoded once).

    ``key`` is the claim key (empty for a set folded from old pairwise conflicts);
    ``resolution``, ``winner_id`` and ``reason`` say how a resolved set ended.
    """

    conflict_id: int
    stream_id: str
    state: str
    workspace: str
    key: str
    subject: str
    attribute: str
    member_count: int
    verdict: dict[str, Any]
    resolution: str | None
    winner_id: int | None
    reason: str
    opened_at: str
    updated_at: str
    actor: str
    last_position: int


def side_of(values: Sequence[Any]) -> Side:
    """A member's arbitration facts from its ``SIDE_COLUMNS`` values (a row, or a JSON array)."""
    return Side(**dict(zip(SIDE_COLUMNS, values, strict=True)))


def conflict_row(values: tuple[Any, ...]) -> ConflictRow:
    return typed_row(ConflictRow, COLUMNS, values, json=("verdict",))


def ranked_members(conn: apsw.Connection, conflict_id: int, limit: int = -1) -> list[Side]:
    """Current members' arbitration facts, best first by the rule order (``limit`` of them).

    The ORDER BY is the rank index's own expression list, so SQLite walks the index and stops
    after ``limit`` entries: the best two of a set of any size cost two index entries."""
    return [side_of(r) for r in conn.execute(_ranked_sql("?", "?"), (conflict_id, limit))]


def _ranked_sql(conflict_id: str, limit: str) -> str:
    """A set's current members' arbitration facts, best first (``conflict_id`` and ``limit``
    are SQL: a placeholder, or a column of an outer query)."""
    cols = ", ".join(f"m.{c}" for c in SIDE_COLUMNS)
    return (
        f"SELECT {cols} FROM conflict_members m WHERE m.conflict_id={conflict_id} AND m.active=1 "
        f"ORDER BY {RANK_ORDER_SQL} LIMIT {limit}"
    )


# The best two current members of set ``c`` (a JSON array of SIDE_COLUMNS arrays), for a
# statement that reads sets: the leader is decided from them (``ranked_members``).
_BEST_TWO = (
    f"(SELECT json_group_array(json_array({', '.join('b.' + col for col in SIDE_COLUMNS)})) "
    f"FROM ({_ranked_sql('c.conflict_id', '2')}) b)"
)


def _load(conn: apsw.Connection, where: str, params: tuple[Any, ...]) -> ConflictRow | None:
    row = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM conflicts WHERE {where}", params).fetchone()
    return conflict_row(row) if row else None


def by_id(conn: apsw.Connection, conflict_id: int) -> ConflictRow | None:
    return _load(conn, "conflict_id=?", (conflict_id,))


def by_stream(conn: apsw.Connection, stream_id: str) -> ConflictRow | None:
    return _load(conn, "stream_id=?", (stream_id,))


def page(
    conn: apsw.Connection,
    state: str | None,
    *,
    before: int | None,
    limit: int,
    workspaces: tuple[str, ...] | None = None,
) -> tuple[int, list[ConflictRow]]:
    """Sets in ``state`` (all when None): how many there are, and up to ``limit`` of them with
    ids below ``before``, newest first (a keyset page: a set opened meanwhile shifts nothing).
    With ``workspaces`` (strict isolation), the count and the page cover only those."""
    where, params = ("1", ()) if state is None else ("state=?", (state,))
    if workspaces is not None:
        where, params = f"{where} AND workspace IN ({marks(len(workspaces))})", (*params, *workspaces)
    total = int(conn.execute(f"SELECT count(*) FROM conflicts WHERE {where}", params).get)
    if before:
        where, params = f"{where} AND conflict_id < ?", (*params, before)
    rows = [
        conflict_row(r)
        for r in conn.execute(
            f"SELECT {', '.join(COLUMNS)} FROM conflicts WHERE {where} ORDER BY conflict_id DESC LIMIT ?",
            (*params, limit),
        )
    ]
    return total, rows


def unresolved_memberships(conn: apsw.Connection, memory_ids: list[int]) -> list[tuple[int, int, str, str]]:
    """``(memory_id, conflict_id, subject, attribute)`` for each unresolved set that one of
    ``memory_ids`` is a current member of, oldest set first."""
    if not memory_ids:
        return []
    rows = conn.execute(_memberships_sql("", len(memory_ids)), tuple(memory_ids))
    return [(int(m), int(c), str(subject), str(attribute)) for m, c, subject, attribute in rows]


def _memberships_sql(extra: str, count: int) -> str:
    """``(memory_id, conflict_id, subject, attribute{extra})`` of each unresolved set that one of
    ``count`` memory ids (parameters) is a current member of, oldest set first."""
    return (
        f"SELECT mm.memory_id, c.conflict_id, c.subject, c.attribute{extra} FROM conflict_members mm "
        f"JOIN conflicts c ON c.conflict_id=mm.conflict_id WHERE mm.memory_id IN ({marks(count)}) "
        "AND mm.active=1 AND c.state<>'resolved' ORDER BY c.conflict_id"
    )


def count_unresolved_with_inactive_members(conn: apsw.Connection, workspaces: tuple[str, ...] | None = None) -> int:
    """Unresolved sets with a current member that is no longer active (settlement should have
    ended them; a member that left the set is not one); with ``workspaces``, only sets of those
    workspaces."""
    scope, params = ("", ()) if workspaces is None else (f" AND c.workspace IN ({marks(len(workspaces))})", workspaces)
    return int(
        conn.execute(
            "SELECT count(DISTINCT c.conflict_id) FROM conflicts c "
            "JOIN conflict_members cm ON cm.conflict_id=c.conflict_id JOIN memories m ON m.memory_id=cm.memory_id "
            f"WHERE c.state<>'resolved' AND cm.active=1 AND m.status<>'active'{scope}",
            params,
        ).get
    )


def unresolved_with_inactive_members(
    conn: apsw.Connection, workspaces: tuple[str, ...] | None = None, limit: int = 5
) -> list[tuple[int, int, str]]:
    """``(conflict_id, memory_id, status)`` of the first such sets' members that are no longer
    active (oldest set first), so a finding can name what to look at."""
    scope, params = ("", ()) if workspaces is None else (f" AND c.workspace IN ({marks(len(workspaces))})", workspaces)
    rows = conn.execute(
        "SELECT c.conflict_id, m.memory_id, m.status FROM conflicts c "
        "JOIN conflict_members cm ON cm.conflict_id=c.conflict_id JOIN memories m ON m.memory_id=cm.memory_id "
        f"WHERE c.state<>'resolved' AND cm.active=1 AND m.status<>'active'{scope} "
        "ORDER BY c.conflict_id, m.memory_id LIMIT ?",
        (*params, limit),
    )
    return [(int(cid), int(mid), str(status)) for cid, mid, status in rows]


def set_of(conn: apsw.Connection, conflict_id: int) -> int | None:
    """The set a conflict id names: itself, or the set an old pairwise conflict folded into."""
    row = conn.execute("SELECT conflict_id FROM conflict_streams WHERE position=?", (conflict_id,)).fetchone()
    return int(row[0]) if row else None


def unresolved(conn: apsw.Connection) -> list[ConflictRow]:
    """Every unresolved set, oldest first."""
    rows = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM conflicts WHERE state<>'resolved' ORDER BY conflict_id")
    return [conflict_row(r) for r in rows]


def unresolved_of(conn: apsw.Connection, memory_id: int) -> list[ConflictRow]:
    """Unresolved sets that ``memory_id`` is a current member of, oldest first."""
    cols = ", ".join(f"c.{c}" for c in COLUMNS)
    rows = conn.execute(
        f"SELECT {cols} FROM conflict_members m JOIN conflicts c ON c.conflict_id=m.conflict_id "
        "WHERE m.memory_id=? AND m.active=1 AND c.state<>'resolved' ORDER BY c.conflict_id",
        (memory_id,),
    )
    return [conflict_row(r) for r in rows]


def unresolved_for_key(conn: apsw.Connection, key: str, workspaces: tuple[str, ...]) -> ConflictRow | None:
    return _load(
        conn,
        f"key=? AND workspace IN ({marks(len(workspaces))}) AND state<>'resolved' ORDER BY conflict_id LIMIT 1",
        (key, *workspaces),
    )


def unkeyed_of(conn: apsw.Connection, memory_ids: list[int], attribute: str) -> ConflictRow | None:
    """An unresolved set folded from old pairwise conflicts (no key recorded) that one of
    ``memory_ids`` is in, for the same attribute: new values of that claim join it."""
    cols = ", ".join(f"c.{c}" for c in COLUMNS)
    row = conn.execute(
        f"SELECT {cols} FROM conflict_members m JOIN conflicts c ON c.conflict_id=m.conflict_id "
        f"WHERE m.memory_id IN ({marks(len(memory_ids))}) AND m.active=1 AND c.key='' AND c.attribute=? "
        "AND c.state<>'resolved' "
        "ORDER BY c.conflict_id LIMIT 1",
        (*memory_ids, attribute),
    ).fetchone()
    return conflict_row(row) if row else None


def unresolved_between(conn: apsw.Connection, left_id: int, right_id: int) -> ConflictRow | None:
    """The oldest unresolved set holding both memories (through the member index, no scan)."""
    cols = ", ".join(f"c.{c}" for c in COLUMNS)
    row = conn.execute(
        f"SELECT {cols} FROM conflict_members a JOIN conflict_members b ON b.conflict_id=a.conflict_id "
        "JOIN conflicts c ON c.conflict_id=a.conflict_id WHERE a.memory_id=? AND b.memory_id=? AND a.active=1 "
        "AND b.active=1 AND c.state<>'resolved' ORDER BY c.conflict_id LIMIT 1",
        (left_id, right_id),
    ).fetchone()
    return conflict_row(row) if row else None


def memberships_with_leaders(
    conn: apsw.Connection, memory_ids: list[int]
) -> list[tuple[int, int, str, str, list[Side]]]:
    """:func:`unresolved_memberships`, each with its set's best two current members (as
    :func:`ranked_members` gives them, ``limit`` 2) read in the same statement: what the set's
    leader is decided from, without one more statement per set."""
    if not memory_ids:
        return []
    rows = conn.execute(_memberships_sql(f", {_BEST_TWO}", len(memory_ids)), tuple(memory_ids))
    return [
        (memory_id, cid, subject, attribute, [side_of(r) for r in json.loads(top)])
        for memory_id, cid, subject, attribute, top in rows
    ]


def reported_sets(
    conn: apsw.Connection, stream_ids: list[str], near: list[int]
) -> dict[str, tuple[ConflictRow, list[Side], list[int]]]:
    """What a write's reply says of the sets its ``ClaimCollided`` events name, in one statement:
    per stream, the set's row, its best two current members (:func:`ranked_members`, ``limit``
    2: the leader is decided from them) and which of ``near`` are current members."""
    if not stream_ids:
        return {}
    cols = ", ".join(f"c.{c}" for c in COLUMNS)
    among = (
        "(SELECT json_group_array(n.memory_id) FROM conflict_members n WHERE n.conflict_id=c.conflict_id "
        "AND +n.active=1 AND n.memory_id IN (SELECT value FROM json_each(?)))"
    )
    rows = conn.execute(
        f"SELECT {cols}, {_BEST_TWO}, {among} FROM conflicts c WHERE c.stream_id IN ({marks(len(stream_ids))})",
        (json.dumps(near), *stream_ids),
    )
    out = {}
    for row in rows:
        record = conflict_row(row[: len(COLUMNS)])
        top, members = row[len(COLUMNS) :]
        out[record.stream_id] = (
            record,
            [side_of(r) for r in json.loads(top)],
            json.loads(members),
        )
    return out


def conflict_ids_of(conn: apsw.Connection, memory_id: int) -> list[int]:
    """The unresolved conflicts the memory is a current member of, oldest first."""
    return [conflict_id for _, conflict_id, _, _ in unresolved_memberships(conn, [memory_id])]


def set_partners(conn: apsw.Connection, memory_id: int) -> frozenset[str]:
    """The streams of every memory that was ever in a set with ``memory_id``, whatever the set's
    state or the member's standing since: a pair that has been disputed once."""
    return frozenset(
        stream
        for (stream,) in conn.execute(
            "SELECT DISTINCT o.stream_id FROM conflict_members m JOIN conflict_members o "
            "ON o.conflict_id = m.conflict_id AND o.memory_id <> m.memory_id WHERE m.memory_id = ?",
            (memory_id,),
        )
    )


def has_guarded_member(conn: apsw.Connection, conflict_id: int) -> bool:
    """Whether a current member is one no policy may supersede (``ledger.settlement.guarded``:
    protected, locked or labelled user_confirmed) — then the set waits for a person, and a write
    that joins it need not read every member's facts."""
    return (
        conn.execute(
            "SELECT 1 FROM conflict_members c JOIN memories m ON m.memory_id=c.memory_id WHERE c.conflict_id=? "
            "AND c.active=1 AND (m.protection<>'normal' OR m.source_type='user_confirmed') LIMIT 1",
            (conflict_id,),
        ).fetchone()
        is not None
    )


class Member(msgspec.Struct, frozen=True, kw_only=True):
    """A memory's place in a claim set: the value it holds there (as written and normalised),
    whether it is still in the set, and why it left when it did."""

    memory_id: int
    stream_id: str
    value: str
    value_norm: str
    active: bool
    left_reason: str


_MEMBER_COLUMNS = Member.__struct_fields__


def members_of(
    conn: apsw.Connection, conflict_id: int, *, active: bool = True, limit: int = -1, offset: int = 0
) -> list[Member]:
    """Members in the order they joined (only the current ones unless ``active`` is False)."""
    where = "AND active=1" if active else ""
    rows = conn.execute(
        f"SELECT {', '.join(_MEMBER_COLUMNS)} FROM conflict_members WHERE conflict_id=? {where} "
        "ORDER BY joined_at, memory_id LIMIT ? OFFSET ?",
        (conflict_id, limit, offset),
    )
    return [typed_row(Member, _MEMBER_COLUMNS, r) for r in rows]


def active_among(conn: apsw.Connection, conflict_id: int, memory_ids: list[int]) -> dict[int, str]:
    """Which of ``memory_ids`` are current members of the set (memory id → normalised value).

    One primary-key probe per id (``+active`` keeps SQLite off the set's own indexes, which
    would walk every member of the set)."""
    if not memory_ids:
        return {}
    return {
        m: v
        for m, v in conn.execute(
            f"SELECT memory_id, value_norm FROM conflict_members WHERE conflict_id=? AND +active=1 "
            f"AND memory_id IN ({marks(len(memory_ids))})",
            (conflict_id, *memory_ids),
        )
    }


def pairs_of(conn: apsw.Connection, conflict_id: int) -> list[dict[str, Any]]:
    """The pairwise conflicts an old ledger recorded that folded into this set (none for new sets)."""
    rows = conn.execute(
        f"SELECT {', '.join(PAIR_COLUMNS)} FROM conflict_streams WHERE conflict_id=? AND pairwise=1 ORDER BY position",
        (conflict_id,),
    )
    out = []
    for row in rows:
        item = dict(zip(PAIR_COLUMNS, row, strict=True))
        out.append(
            {
                "conflict_id": item["position"],
                "members": [item["left_id"], item["right_id"]],
                "values": [item["left_value"], item["right_value"]],
                "state": item["state"],
                "resolution": item["resolution"],
                "winner_id": item["winner_id"],
                "reason": item["reason"],
                "verdict": json.loads(item["verdict"]),
            }
        )
    return out


def count_by_state(conn: apsw.Connection, workspaces: tuple[str, ...] | None = None) -> dict[str, int]:
    """Claim sets per state; with ``workspaces``, only those of these workspaces."""
    counts = dict.fromkeys(CONFLICT_STATES, 0)
    if workspaces is None:
        rows = conn.execute("SELECT state, count(*) FROM conflicts GROUP BY state")
    else:
        rows = conn.execute(
            f"SELECT state, count(*) FROM conflicts WHERE workspace IN ({marks(len(workspaces))}) GROUP BY state",
            workspaces,
        )
    counts.update({s: n for s, n in rows})
    return counts


def judgments_of(conn: apsw.Connection, conflict_id: int) -> list[dict[str, Any]]:
    out = []
    for jid, winner, rationale, pins, actor, recorded_at, pair in conn.execute(
        "SELECT judgment_id, winner_id, rationale, pins, actor, recorded_at, pair_id FROM judgments "
        "WHERE conflict_id=? ORDER BY judgment_id",
        (conflict_id,),
    ):
        item = {
            "judgment_id": jid,
            "winner_id": winner,
            "rationale": rationale,
            "pins": json.loads(pins),
            "actor": actor,
            "recorded_at": recorded_at,
        }
        if pair != conflict_id:
            item["pair_conflict_id"] = pair
        out.append(item)
    return out


def conflict_facts(conn: apsw.Connection, row: ConflictRow) -> ConflictFacts:
    """A set as decisions see it, with every current member and its value."""
    members = members_of(conn, row.conflict_id)
    return ConflictFacts(
        conflict_id=row.conflict_id,
        stream_id=row.stream_id,
        state=row.state,
        key=row.key,
        values={m.stream_id: m.value_norm for m in members},
        ids={m.stream_id: m.memory_id for m in members},
    )
