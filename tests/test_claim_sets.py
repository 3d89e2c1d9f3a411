"""Claim sets: one conflict per disputed claim, verdicts over N members, compact replies, and the
fold of ledgers written with pairwise conflicts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fact_ledger.ledger.arbiter import Side, arbitrate, arbitrate_set, rank_key
from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import AUTH_USER, Event, JudgmentSubmitted, MemoryRecorded, Superseded
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections.conflicts.projector import MEMBER_FACTS, ConflictsProjector
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from fact_ledger.server.mcp.compact import size

REPO = Path(__file__).resolve().parent.parent
T = "2025-07-0{}T00:00:00Z"


# -- the verdict over N members ------------------------------------------------------------------
_TIMES = st.sampled_from(["2025-01-01T00:00:00.000000Z", "2025-06-01T00:00:00.000000Z"])
_SIDES = st.builds(
    Side,
    memory_id=st.integers(1, 10_000),
    source_type=st.sampled_from(["user_confirmed", "document_extracted", "agent_generated", "unknown"]),
    protection=st.sampled_from(["normal", "protected", "locked"]),
    event_time=_TIMES,
    confidence=st.sampled_from([0.3, 0.5, 0.9]),
    recorded_at=_TIMES,
    confirmed_via=st.sampled_from(["user_channel", "agent_asserted", ""]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_SIDES, min_size=2, max_size=8, unique_by=lambda s: s.memory_id))
def test_the_leader_beats_every_other_member_and_a_tie_at_the_top_names_none(sides: list[Side]) -> None:
    verdict = arbitrate_set(sides, review_agent_conflicts=False)
    leader = verdict["leader_id"]
    if leader is None:
        assert verdict["manual_review"]
        top = [s for s in sides if rank_key(s) == max(rank_key(x) for x in sides)]
        assert len(top) >= 2  # no rule separates the first two
        return
    mine = next(s for s in sides if s.memory_id == leader)
    for other in sides:
        if other is not mine:
            assert arbitrate(mine, other)["winner_id"] == leader  # the pairwise rules, unchanged
    assert verdict["ranking"][0] == leader and sorted(verdict["ranking"]) == sorted(s.memory_id for s in sides)


@settings(max_examples=300, deadline=None)
@given(_SIDES, _SIDES)
def test_rank_key_orders_exactly_as_the_pairwise_verdict(left: Side, right: Side) -> None:
    side = arbitrate(left, right)["winner_side"]
    assert side == (
        "left" if rank_key(left) > rank_key(right) else "right" if rank_key(left) < rank_key(right) else None
    )


@settings(max_examples=100, deadline=None)
@given(st.lists(_SIDES, min_size=1, max_size=12, unique_by=lambda s: s.memory_id))
def test_sql_ranks_members_exactly_as_rank_key(sides: list[Side]) -> None:
    import apsw

    from fact_ledger.projections.conflicts import queries as conflicts_model

    conn = apsw.Connection(":memory:")
    ConflictsProjector().create(conn)  # the member rows and their rank index, as a ledger has them
    facts = MEMBER_FACTS
    for s in sides:
        conn.execute(
            f"INSERT INTO conflict_members(memory_id, conflict_id, stream_id, value, value_norm, active, "
            f"joined_at, left_reason, {', '.join(facts)}) VALUES(?, 1, '', '', '', 1, 0, '', "
            f"{', '.join('?' * len(facts))})",
            (s.memory_id, *(getattr(s, f) for f in facts)),
        )
    ordered = [r.memory_id for r in conflicts_model.ranked_members(conn, 1)]
    assert ordered == arbitrate_set(sides, review_agent_conflicts=False)["ranking"]
    assert [r.memory_id for r in conflicts_model.ranked_members(conn, 1, 2)] == ordered[:2]


# -- writes --------------------------------------------------------------------------------------
def test_a_new_value_joins_the_open_set_with_one_event_and_a_small_reply(app: LedgerApp) -> None:
    for i in range(100):
        app.remember(f"The staging api listens on port {7000 + i}", event_time=T.format(1))
    before = app.store.last_position()
    result = app.remember("The staging api listens on port 9999", event_time=T.format(2))
    assert app.store.last_position() - before == 2
    (conflict,) = result["conflicts"]
    assert conflict["member_count"] == 101 and conflict["leader_id"] == result["memory_id"]
    assert conflict["claim"]["value"] == "9999"
    assert size(result) <= 600
    assert "7000" not in json.dumps(result)  # never the other members' values
    assert app.status()["open_conflicts"] == 1


def _vm_steps(app: LedgerApp, write: Any) -> int:
    """SQLite virtual-machine steps that ``write`` costs: the work, without the clock. Every step
    is counted: the handler counts per statement, so counting in hundreds dropped each short
    statement's steps, and one more statement in a write moved the ratio by several percent."""
    steps = [0]

    def count() -> bool:
        steps[0] += 1
        return False

    app.conn.set_progress_handler(count, 1)
    try:
        write()
    finally:
        app.conn.set_progress_handler(None)
    return steps[0]


def test_joining_a_disputed_claim_costs_the_same_whatever_the_sets_size(app: LedgerApp) -> None:
    def grow_to(n: int) -> None:
        while app.status()["memories"] < n:
            app.remember(f"The staging api listens on port {7000 + app.status()['memories']}", event_time=T.format(1))

    grow_to(100)  # past the candidates a write reads per key (claims.CANDIDATES_PER_KEY)
    small = _vm_steps(app, lambda: app.remember("The staging api listens on port 1", event_time=T.format(2)))
    grow_to(400)
    large = _vm_steps(app, lambda: app.remember("The staging api listens on port 2", event_time=T.format(3)))
    # Before members were ranked by an index and only non-members loaded, the larger set cost
    # several times the smaller one (every member joined, sorted and its memory row read).
    assert large <= small * 1.25, (small, large)
    assert app.conflicts()["conflicts"][0]["member_count"] == 401


def test_a_members_changed_facts_move_the_leader(app: LedgerApp) -> None:
    old = app.remember("The billing api listens on port 7000", event_time=T.format(1))["memory_id"]
    new = app.remember("The billing api listens on port 7001", event_time=T.format(2))["memory_id"]
    cid = app.conflicts()["conflicts"][0]["conflict_id"]
    assert app.conflict_detail(cid)["conflict"]["current_verdict"]["leader_id"] == new
    app.update(old, event_time=T.format(3))  # the older value turns out to be the later fact
    assert app.conflict_detail(cid)["conflict"]["current_verdict"]["leader_id"] == old
    app.confirm(new, authorization=AUTH_USER)  # a person's confirmation beats a later event time
    assert app.conflict_detail(cid)["conflict"]["current_verdict"]["leader_id"] == new
    app.unlock(new, authorization=AUTH_USER)
    verdict = app.conflict_detail(cid)["conflict"]["current_verdict"]
    assert verdict["leader_id"] == new and verdict["rule"] == "user_confirmed/locked protection"
    app.runner.rebuild()  # the member rows' copy of the facts is the same folded from scratch
    assert app.conflict_detail(cid)["conflict"]["current_verdict"] == verdict


def test_conflict_detail_pages_through_members(app: LedgerApp) -> None:
    ids = [app.remember(f"the gateway port is {7000 + i}")["memory_id"] for i in range(7)]
    cid = app.conflicts()["conflicts"][0]["conflict_id"]
    first = app.conflict_detail(cid, limit=3)["conflict"]
    assert [m["memory_id"] for m in first["memories"]] == ids[:3] and first["has_more"]
    rest = app.conflict_detail(cid, limit=3, offset=first["next_offset"])["conflict"]
    last = app.conflict_detail(cid, limit=3, offset=6)["conflict"]
    assert [m["memory_id"] for m in rest["memories"]] == ids[3:6]
    assert [m["memory_id"] for m in last["memories"]] == ids[6:] and not last["has_more"]
    assert first["memories"][0]["value"] == "7000" and first["current_verdict"]["leader_id"] == ids[-1]
    with pytest.raises(InvalidInput):
        app.conflict_detail(cid, limit=0)


def test_a_member_that_agrees_again_leaves_and_the_set_dissolves_below_two_values(app: LedgerApp) -> None:
    a = app.remember("the cache port is 7000")["memory_id"]
    b = app.remember("the cache port is 7001")["memory_id"]
    c = app.remember("the cache port is 7002")["memory_id"]
    cid = app.read(a)["memory"]["conflict_ids"][0]
    left = app.update(c, content="the cache is fast")  # no port claim any more: c leaves
    assert left["left"] == [cid] and app.conflict_detail(cid)["conflict"]["member_count"] == 2
    gone = app.update(b, content="the cache port is 7000")  # agrees with a: no two values remain
    assert gone["dissolved"] == [cid]
    detail = app.conflict_detail(cid)["conflict"]
    assert detail["state"] == "resolved" and detail["resolution"] == "dissolved"
    assert app.verify()["ok"]


def test_a_judged_set_reopens_when_a_member_joins(app: LedgerApp) -> None:
    a = app.remember("the cache port is 7000", event_time=T.format(1))["memory_id"]
    b = app.remember("the cache port is 7001", event_time=T.format(2))["memory_id"]
    cid = app.read(a)["memory"]["conflict_ids"][0]
    judged = app.judge(cid, b, rationale="newer")
    assert judged["conflict"]["state"] == "judged"
    pins = app.conflict_detail(cid)["conflict"]["judgments"][0]["pins"]
    assert pins == {str(a): 1, str(b): 1}
    app.remember("the cache port is 7002")
    detail = app.conflict_detail(cid)["conflict"]
    assert detail["state"] == "open" and detail["member_count"] == 3


def test_a_set_of_fifty_is_resolved_in_one_call(app: LedgerApp) -> None:
    ids = [
        app.remember(f"The billing api p95 latency is {100 + i} ms", event_time=T.format(1))["memory_id"]
        for i in range(50)
    ]
    cid = app.read(ids[0])["memory"]["conflict_ids"][0]
    assert app.conflict_detail(cid)["conflict"]["member_count"] == 50
    winner = ids[17]
    result = app.resolve_conflict(cid, winner_id=winner, authorization=AUTH_USER)
    assert result["conflict"]["state"] == "resolved" and result["conflict"]["winner_id"] == winner
    assert sorted(result["superseded"]) == sorted(i for i in ids if i != winner)
    statuses = {i: app.read(i)["memory"]["status"] for i in ids}
    assert statuses[winner] == "active" and {s for i, s in statuses.items() if i != winner} == {"superseded"}
    assert app.status()["open_conflicts"] == 0
    assert app.verify()["ok"]


def test_resolve_refuses_a_winner_outside_the_set_and_keep_all_keeps_everyone(app: LedgerApp) -> None:
    ids = [app.remember(f"the cache port is {7000 + i}")["memory_id"] for i in range(3)]
    outsider = app.remember("the queue port is 9000")["memory_id"]
    cid = app.read(ids[0])["memory"]["conflict_ids"][0]
    with pytest.raises(InvalidInput):
        app.resolve_conflict(cid, winner_id=outsider, authorization=AUTH_USER)
    kept = app.resolve_conflict(cid, resolution="keep_all", authorization=AUTH_USER)
    assert kept["conflict"]["resolution"] == "keep_all" and kept["superseded"] == []
    assert {app.read(i)["memory"]["status"] for i in ids} == {"active"}


def test_arbitrate_and_compare_stay_pairwise_inside_a_set(app: LedgerApp) -> None:
    a = app.remember("the cache port is 7000", event_time=T.format(1))["memory_id"]
    b = app.remember("the cache port is 7001", event_time=T.format(2))["memory_id"]
    c = app.remember("the cache port is 7002", event_time=T.format(3))["memory_id"]
    cid = app.read(a)["memory"]["conflict_ids"][0]
    assert app.compare(a, b)["verdict"]["winner_id"] == b
    applied = app.arbitrate(a, b, apply=True, authorization=AUTH_USER)
    assert applied["applied"] and applied["conflict_id"] == cid and applied["resolved_conflicts"] == []
    detail = app.conflict_detail(cid)["conflict"]
    assert detail["state"] == "open" and sorted(detail["members"]) == [b, c]
    assert app.read(a)["memory"]["status"] == "superseded"


# -- several writers at once ------------------------------------------------------------------------
_WRITER = """
import sys
sys.path.insert(0, {repo!r})
from server.app.facade import LedgerApp
from server.config import Settings
app = LedgerApp(Settings(db={db!r}, client="w{n}"))
for i in range(8):
    for key in ("alpha", "beta", "gamma"):
        app.remember(f"The {{key}} service port is {{7000 + {n} * 100 + i}}")
app.close()
"""


@pytest.mark.slow
def test_four_processes_contradicting_each_other_build_one_set_per_key(db_path: Path) -> None:
    LedgerApp(Settings(db=str(db_path), client="init")).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER.format(repo=str(REPO), db=str(db_path), n=n)], stderr=subprocess.PIPE
        )
        for n in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    app = LedgerApp(Settings(db=str(db_path), client="check"))
    rows = list(app.conn.execute("SELECT subject, member_count, state FROM conflicts ORDER BY subject"))
    assert [(s.split()[1], n, st_) for s, n, st_ in rows] == [
        ("alpha", 32, "open"),
        ("beta", 32, "open"),
        ("gamma", 32, "open"),
    ]
    assert app.conn.execute("SELECT count(*) FROM events WHERE type='ClaimCollided'").get == 3 * 31
    assert app.verify()["ok"]
    app.close()


# -- ledgers written with pairwise conflicts ----------------------------------------------------------
class ClaimCollided(Event, frozen=True, kw_only=True, omit_defaults=True):
    """The shape a ledger wrote before claim sets: one conflict per pair."""

    V: ClassVar[int] = 1
    conflict: str
    left: str
    right: str
    subject: str
    attribute: str
    left_value: str
    right_value: str
    verdict: dict[str, Any] = {}  # noqa: RUF012 (a msgspec default, copied per instance)


class ConflictResolved(Event, frozen=True, kw_only=True, omit_defaults=True):
    V: ClassVar[int] = 1
    conflict: str
    winner: str | None = None
    resolution: str = "winner"
    reason: str = ""


def _old_ledger(db: Path) -> dict[str, str]:
    """Three values of one port claim (three pairwise conflicts, one judged, one member
    superseded) and a second claim whose single conflict was kept both ways."""
    store = EventStore(str(db))
    s = {n: uuid7() for n in ("m1", "m2", "m3", "m4", "m5", "c12", "c13", "c23", "c45", "j")}
    events: list[tuple[str, Event]] = []
    for n, text in (
        ("m1", "the cache port is 7000"),
        ("m2", "the cache port is 7001"),
        ("m3", "the cache port is 7002"),
        ("m4", "the queue host is alpha"),
        ("m5", "the queue host is beta"),
    ):
        events.append((s[n], MemoryRecorded(memory=s[n], content=text)))
    for c, (left, lv), (right, rv) in (
        ("c12", ("m1", "7000"), ("m2", "7001")),
        ("c13", ("m1", "7000"), ("m3", "7002")),
        ("c23", ("m2", "7001"), ("m3", "7002")),
    ):
        events.append(
            (
                s[c],
                ClaimCollided(
                    conflict=s[c],
                    left=s[left],
                    right=s[right],
                    subject="the cache port",
                    attribute="is",
                    left_value=lv,
                    right_value=rv,
                    verdict={"winner_side": "right", "rule": "ingest_time"},
                ),
            )
        )
    events.append(
        (
            s["c45"],
            ClaimCollided(
                conflict=s["c45"],
                left=s["m4"],
                right=s["m5"],
                subject="the queue host",
                attribute="is",
                left_value="alpha",
                right_value="beta",
            ),
        )
    )
    events += [
        (
            s["c12"],
            JudgmentSubmitted(
                conflict=s["c12"], judgment=s["j"], winner=s["m2"], rationale="newer", pins={s["m1"]: 1, s["m2"]: 1}
            ),
        ),
        (s["m1"], Superseded(loser=s["m1"], winner=s["m3"], reason="old", rule="manual", authorization=AUTH_USER)),
        (s["c12"], ConflictResolved(conflict=s["c12"], winner=s["m2"], resolution="superseded", reason="old")),
        (s["c13"], ConflictResolved(conflict=s["c13"], winner=s["m3"], resolution="winner", reason="old")),
        (s["c45"], ConflictResolved(conflict=s["c45"], resolution="keep_both", reason="keep both")),
    ]
    store.append([NewEvent(data=e, stream_id=stream, event_time="2025-07-01T00:00:00.000000Z") for stream, e in events])
    store.close()
    return s


def test_an_old_ledger_with_pairwise_conflicts_folds_into_sets_with_nothing_lost(db_path: Path) -> None:
    s = _old_ledger(db_path)
    app = LedgerApp(Settings(db=str(db_path), client="reader"))
    pos = {r[1]: r[0] for r in app.conn.execute("SELECT min(position), stream_id FROM events GROUP BY stream_id")}
    mid = {
        n: app.conn.execute("SELECT memory_id FROM memories WHERE stream_id=?", (s[n],)).get for n in ("m1", "m2", "m3")
    }
    c12, c13, c23, c45 = (pos[s[n]] for n in ("c12", "c13", "c23", "c45"))
    # one set for the port claim, named by the first pairwise conflict; every old id leads to it
    for old in (c12, c13, c23):
        detail = app.conflict_detail(old)["conflict"]
        assert detail["conflict_id"] == c12
    detail = app.conflict_detail(c13)["conflict"]
    assert detail["requested_id"] == c13
    assert detail["state"] == "judged" and sorted(detail["members"]) == sorted([mid["m2"], mid["m3"]])
    pairs = {p["conflict_id"]: p for p in detail["pairwise"]}
    assert set(pairs) == {c12, c13, c23}
    assert (pairs[c12]["state"], pairs[c12]["resolution"], pairs[c12]["winner_id"]) == (
        "resolved",
        "superseded",
        mid["m2"],
    )
    assert (pairs[c13]["resolution"], pairs[c13]["winner_id"]) == ("winner", mid["m3"])
    assert pairs[c23]["state"] == "open" and pairs[c23]["values"] == ["7001", "7002"]
    (judgment,) = detail["judgments"]
    assert judgment["winner_id"] == mid["m2"] and "pair_conflict_id" not in judgment  # judged c12 itself
    assert judgment["rationale"] == "newer" and judgment["pins"] == {str(mid["m1"]): 1, str(mid["m2"]): 1}
    kept = app.conflict_detail(c45)["conflict"]
    assert (kept["state"], kept["resolution"]) == ("resolved", "keep_both")
    # the stored bytes are untouched; audit reads them upcast: each pair with its two values
    assert app.conn.execute("SELECT count(*) FROM events WHERE type='ClaimCollided' AND v=1").get == 4
    audit = app.audit(type="ClaimCollided")["events"]
    assert sorted(tuple(m["value"] for m in e["payload"]["members"]) for e in audit) == [
        ("7000", "7001"),
        ("7000", "7002"),
        ("7001", "7002"),
        ("alpha", "beta"),
    ]
    assert all(e["payload"]["pairwise"] for e in audit)
    assert app.status()["open_conflicts"] == 0  # the remaining set is judged
    # a new value of the claim joins the folded set with one event
    before = app.store.last_position()
    joined = app.remember("the cache port is 7003")
    assert app.store.last_position() - before == 2
    assert joined["conflicts"][0]["conflict_id"] == c12 and joined["conflicts"][0]["member_count"] == 3
    assert app.conflict_detail(c12)["conflict"]["state"] == "open"  # a member joined a judged set
    assert app.verify()["ok"]
    app.close()
