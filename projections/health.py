"""The state the health report reads (:mod:`ledger.health` computes the report from it).

Every query is a scan of a read model that the report needs whole (unresolved sets and their
current members, status counts, absorbed writes, near-duplicate notices); nothing is written.
"""

from __future__ import annotations

import apsw

from fact_ledger.ledger.arbiter import Side
from fact_ledger.ledger.health import Member, OpenSet
from fact_ledger.ledger.sql import marks
from fact_ledger.projections.claims import SEVERAL_FACTS_SQL, ClaimsProjector
from fact_ledger.projections.conflicts.projector import COLUMNS, SIDE_COLUMNS
from fact_ledger.projections.conflicts.queries import ConflictRow, conflict_row, side_of

# Where the member's current words were first held (an update back to earlier words dates from then)
_SAID_SINCE = (
    "coalesce((SELECT min(v.position) FROM memory_versions v WHERE v.memory_id=m.memory_id "
    "AND v.content IS r.content AND v.subject IS r.subject), 0)"
)
_MEMBERS = (
    f"SELECT m.conflict_id, {', '.join(f'm.{c}' for c in SIDE_COLUMNS)}, m.stream_id, m.value, m.value_norm, "
    f"coalesce(r.source_ref, ''), {SEVERAL_FACTS_SQL.format(memory_id='m.memory_id')}, {_SAID_SINCE} "
    "FROM conflict_members m JOIN conflicts c ON c.conflict_id=m.conflict_id "
    "LEFT JOIN memories r ON r.memory_id=m.memory_id "
    "WHERE m.active=1 AND c.state<>'resolved' {scope} ORDER BY m.conflict_id, m.joined_at, m.memory_id"
)
_SETS = (
    "SELECT conflict_id, stream_id, state, workspace, subject, attribute, updated_at FROM conflicts "
    "WHERE state<>'resolved' {scope} ORDER BY conflict_id"
)


def _scope(scope: tuple[str, ...] | None, column: str) -> tuple[str, tuple[str, ...]]:
    return ("", ()) if scope is None else (f"AND {column} IN ({marks(len(scope))})", scope)


def open_sets(
    conn: apsw.Connection, scope: tuple[str, ...] | None = None, *, conflict_id: int | None = None
) -> list[OpenSet]:
    """Every unresolved claim set with its current members (two or more), oldest first
    (``conflict_id``: that set alone)."""
    where, params = _scope(scope, "c.workspace")
    if conflict_id is not None:
        where, params = f"{where} AND c.conflict_id=?", (*params, conflict_id)
    members: dict[int, list[Member]] = {}
    n = len(SIDE_COLUMNS)
    for row in conn.execute(_MEMBERS.format(scope=where), params):
        side = side_of(row[1 : 1 + n])
        stream, value, norm, ref, several, said_since = row[1 + n :]
        members.setdefault(row[0], []).append(
            Member(
                side=side,
                stream_id=stream,
                value=value,
                value_norm=norm,
                source_ref=ref,
                several=bool(several),
                said_since=said_since,
            )
        )
    where, params = _scope(scope, "workspace")
    if conflict_id is not None:
        where, params = f"{where} AND conflict_id=?", (*params, conflict_id)
    out = []
    for cid, stream, state, workspace, subject, attribute, updated in conn.execute(_SETS.format(scope=where), params):
        held = members.get(cid, [])
        if len(held) >= 2:
            judgment = _standing_judgment(conn, cid) if state == "judged" else None
            out.append(
                OpenSet(
                    conflict_id=cid,
                    stream_id=stream,
                    state=state,
                    workspace=workspace,
                    subject=subject,
                    attribute=attribute,
                    updated_at=updated,
                    members=tuple(held),
                    judgment=judgment,
                    extraction=ClaimsProjector.version,
                )
            )
    return out


def _standing_judgment(conn: apsw.Connection, conflict_id: int) -> tuple[int, int] | None:
    """A judged set's latest judgment: (its id, the member it says should win)."""
    row = conn.execute(
        "SELECT judgment_id, winner_id FROM judgments WHERE conflict_id=? ORDER BY judgment_id DESC LIMIT 1",
        (conflict_id,),
    ).fetchone()
    return None if row is None or row[1] is None else (int(row[0]), int(row[1]))


def absorbed(conn: apsw.Connection, scope: tuple[str, ...] | None = None) -> tuple[int, int, int]:
    """(memories stored, exact repeats absorbed, restatements absorbed)."""
    where, params = _scope(scope, "workspace")
    stored, sightings = conn.execute(
        f"SELECT count(*), coalesce(sum(sightings), 0) FROM memories WHERE 1 {where}", params
    ).fetchone()
    where, params = _scope(scope, "m.workspace")
    restated = conn.execute(
        f"SELECT count(*) FROM memory_restatements r JOIN memories m ON m.memory_id=r.memory_id WHERE 1 {where}",
        params,
    ).get
    return int(stored), int(sightings), int(restated or 0)


def near_duplicate_pairs(conn: apsw.Connection, scope: tuple[str, ...] | None = None) -> list[tuple[int, int]]:
    """Open near-duplicate notices between current memories (none when notices were never built)."""
    where, params = _scope(scope, "n.workspace")
    try:
        rows = conn.execute(
            "SELECT n.left_id, n.right_id FROM notices n "
            "JOIN memories l ON l.memory_id=n.left_id AND l.status='active' "
            "JOIN memories r ON r.memory_id=n.right_id AND r.status='active' "
            "LEFT JOIN notice_reviews v ON v.left_id=n.left_id AND v.right_id=n.right_id "
            f"WHERE n.kind='duplicate' AND coalesce(v.state, 'open')='open' {where}",
            params,
        ).fetchall()
    except apsw.SQLError:  # the semantic read models were never built
        return []
    return [(int(a), int(b)) for a, b in rows]


def cold_count(conn: apsw.Connection, scope: tuple[str, ...] | None = None) -> int:
    """Active memories cooled for disuse (not used for the sweep's idle period)."""
    where, params = _scope(scope, "m.workspace")
    try:
        return int(
            conn.execute(
                "SELECT count(*) FROM cold_memories c JOIN memories m ON m.memory_id=c.memory_id "
                f"WHERE m.status='active' {where}",
                params,
            ).get
        )
    except apsw.SQLError:
        return 0


def subject_counts(conn: apsw.Connection, scope: tuple[str, ...] | None = None) -> dict[str, int]:
    """Each subject of the current memories and how many use it."""
    where, params = _scope(scope, "workspace")
    return {
        s: int(n)
        for s, n in conn.execute(
            f"SELECT subject, count(*) FROM memories WHERE status='active' AND subject<>'' {where} GROUP BY subject",
            params,
        )
    }


def claim_values(conn: apsw.Connection, scope: tuple[str, ...] | None = None) -> list[tuple[str, str, str]]:
    """``(subject, attribute, value_norm)`` of every current claim (its memory's subject when it has one)."""
    where, params = _scope(scope, "c.workspace")
    return [
        (s, a, v)
        for s, a, v in conn.execute(
            "SELECT DISTINCT coalesce(nullif(m.subject, ''), c.subject), c.key_attribute || ' ' || "
            "c.attribute, c.value_norm FROM claims c JOIN memories m ON m.memory_id=c.memory_id "
            f"WHERE 1 {where}",
            params,
        )
    ]


def explicit_of(conn: apsw.Connection, memory_id: int) -> tuple[tuple[str, str, str], ...]:
    """The claims the memory's writer stated (as the claims projection keeps them)."""
    return tuple(
        conn.execute(
            "SELECT subject, attribute, value FROM claims WHERE memory_id=? AND origin='explicit' ORDER BY ord",
            (memory_id,),
        )
    )


def every_set(conn: apsw.Connection, scope: tuple[str, ...] | None = None) -> list[tuple[ConflictRow, list[Side]]]:
    """Every claim set's row and its current members' arbitration facts (what-if replays them)."""
    where, params = _scope(scope, "c.workspace")
    sides: dict[int, list[Side]] = {}
    for row in conn.execute(
        f"SELECT m.conflict_id, {', '.join(f'm.{c}' for c in SIDE_COLUMNS)} FROM conflict_members m "
        f"JOIN conflicts c ON c.conflict_id=m.conflict_id WHERE m.active=1 {where} ORDER BY m.conflict_id, m.memory_id",
        params,
    ):
        sides.setdefault(row[0], []).append(side_of(row[1:]))
    where, params = _scope(scope, "workspace")
    rows = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM conflicts WHERE 1 {where} ORDER BY conflict_id", params)
    return [(r, sides.get(r.conflict_id, [])) for r in map(conflict_row, rows)]
