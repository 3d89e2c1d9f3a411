"""As-of answers equal a naive fold of the events up to that point (hypothesis, random histories).

The reference below knows nothing of the timeline projection: it replays the log prefix into
plain dicts and judges validity at a world time directly from the docs/time-travel.md definition
(valid from ``event_time`` until the next value of its chain began, or the retirement's effective
time).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fact_ledger.ledger.errors import NotFound
from fact_ledger.ledger.log.chain import NewEvent, StoredEvent
from fact_ledger.ledger.log.events import (
    Confirmed,
    MemoryArchived,
    MemoryRecorded,
    MemoryRetired,
    MemoryUpdated,
    Superseded,
)
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

WORDS = ("alpha", "bravo", "delta", "echo")
DAY = "2026-07-{:02d}T{:02d}:00:00.000000Z"

day = st.builds(lambda d, h: DAY.format(d, h), st.integers(1, 6), st.sampled_from([0, 12]))
idx = st.integers(0, 30)
KINDS = ("remember",) * 4 + ("supersede",) * 3 + ("move_winner",) * 2 + ("update", "retire", "archive", "confirm")
# One op: (kind, word, target, other, world time, whether an update keeps its content).
op = st.tuples(st.sampled_from(KINDS), st.sampled_from(WORDS), idx, idx, day, st.booleans())


def run(app: LedgerApp, ops: list[tuple[Any, ...]]) -> None:
    streams: list[str] = []
    winners: list[str] = []
    for n, (kind, word, i, j, when, keep) in enumerate(ops):
        if kind == "remember":
            mid = app.remember(f"{word} note {n}", subject="topic", event_time=when)["memory_id"]
            streams.append(app.conn.execute("SELECT stream_id FROM memories WHERE memory_id=?", (mid,)).get)
            continue
        if not streams:
            continue
        target = streams[i % len(streams)]
        event_time = DAY.format(1, 0)
        if kind == "update":
            data: Any = MemoryUpdated(
                memory=target, content=None if keep else f"{word} note {n}", event_time=None if keep and j % 2 else when
            )
        elif kind == "move_winner":  # correct the world time of a memory that superseded another
            target = winners[i % len(winners)] if winners else target
            data = MemoryUpdated(memory=target, event_time=when)
        elif kind == "supersede":
            winner = streams[j % len(streams)]
            if winner == target:
                continue
            data = Superseded(loser=target, winner=winner, rule="event_time")
            winners.append(winner)
        elif kind == "retire":
            data, event_time = MemoryRetired(memory=target, reason="r"), when
        elif kind == "archive":
            data = MemoryArchived(memory=target)
        else:
            data = Confirmed(memory=target)
        app.store.write(
            lambda d=data, s=target, t=event_time: app.runner.append([NewEvent(data=d, stream_id=s, event_time=t)])
        )


def reference_fold(events: list[StoredEvent]) -> dict[str, dict[str, Any]]:
    """Replay the events into plain dicts. A loser ends where its winner begins, and each time a
    supersession or a corrected event time touches a chain (the memories that reach one current
    memory through their winners), every loser of it ends where the next value in force began
    (docs/time-travel.md, "Validity": a value that arrived late)."""
    mem: dict[str, dict[str, Any]] = {}
    for e in events:
        d = e.data
        if isinstance(d, MemoryRecorded):
            mem[d.memory] = {
                "memory_id": e.position,
                "content": d.content,
                "valid_from": e.event_time,
                "valid_to": None,
                "status": "active",
                "ended": None,
                "winner": None,
                "version": 1,
                "source_type": d.source_type,
                "protection": d.protection,
            }
            continue
        m = mem.get(d.loser if isinstance(d, Superseded) else d.memory)  # type: ignore[attr-defined]
        if m is None:
            continue
        m["version"] += 1
        if isinstance(d, MemoryUpdated):
            m["content"] = d.content if d.content is not None else m["content"]
            m["valid_from"] = d.event_time or m["valid_from"]
            if d.event_time:
                _retime(mem, d.memory)
        elif isinstance(d, Confirmed):
            m.update(source_type="user_confirmed", protection="locked")
        elif isinstance(d, MemoryRetired):
            m.update(status="retired", ended="retired", valid_to=e.event_time)
        elif isinstance(d, Superseded):
            winner = mem.get(d.winner)
            m.update(
                status="superseded",
                ended="superseded",
                winner=d.winner if winner else None,
                valid_to=winner["valid_from"] if winner else e.event_time,
            )
            if winner:
                _retime(mem, d.winner)
        elif isinstance(d, MemoryArchived):
            m["status"] = "archived"
        if m["valid_to"] is not None:  # never an end before the start: an empty interval
            m["valid_to"] = max(m["valid_from"], m["valid_to"])
    for m in mem.values():
        m["superseded_by"] = mem[m["winner"]]["memory_id"] if m["winner"] else None
    return {str(m["memory_id"]): m for m in mem.values()}


def _retime(mem: dict[str, dict[str, Any]], stream: str) -> None:
    head, seen = stream, {stream}
    while mem[head]["ended"] == "superseded" and mem[head]["winner"] and mem[head]["winner"] not in seen:
        head = mem[head]["winner"]
        seen.add(head)
    chain, frontier = [], [head]
    while frontier:  # every superseded memory whose winners lead to the head
        below = [
            s
            for s, x in mem.items()
            if x["ended"] == "superseded" and x["winner"] in frontier and s not in chain and s != head
        ]
        chain += below
        frontier = below
    start = {s: mem[s]["valid_from"] for s in [head, *chain]}
    in_force = sorted([start[head], *(start[s] for s in chain if start[mem[s]["winner"]] > start[s])])
    for s in chain:
        mine, winners = start[s], start[mem[s]["winner"]]
        later = [v for v in in_force if v > mine] if winners > mine else []
        mem[s]["valid_to"] = max(mine, min(winners, later[0]) if later else winners)


def reference_status(m: dict[str, Any], at: str | None) -> str | None:
    if at is None:
        return str(m["status"])
    if m["valid_from"] > at:
        return None
    if m["valid_to"] is None or m["valid_to"] > at:
        return "active"
    return str(m["ended"])


def check_point(app: LedgerApp, events: list[StoredEvent], position: int, at: str | None) -> None:
    ref = reference_fold([e for e in events if e.position <= position])
    ever = [e.position for e in events if e.type == "MemoryRecorded"]
    for memory_id in ever:
        m = ref.get(str(memory_id))
        expected = reference_status(m, at) if m else None
        if expected is None:
            with pytest.raises(NotFound):
                app.read(memory_id, as_of_recorded=position, as_of_event_time=at)
            continue
        got = app.read(memory_id, as_of_recorded=position, as_of_event_time=at)["memory"]
        assert m is not None
        want = {
            "status": expected,
            "content": m["content"],
            "event_time": m["valid_from"],
            "valid_to": m["valid_to"],
            "version": m["version"],
            "superseded_by": m["superseded_by"],
            "source_type": m["source_type"],
            "protection": m["protection"],
        }
        assert {k: got[k] for k in want} == want, (memory_id, position, at)
    for include_inactive in (False, True):
        for word in ("", WORDS[0], WORDS[1]):
            found = app.find(
                word, limit=50, include_inactive=include_inactive, as_of_recorded=position, as_of_event_time=at
            )
            got_set = {(r["memory_id"], r["status"]) for r in found["results"]}
            want_set = set()
            for m in ref.values():
                status = reference_status(m, at)
                if status is None or (status != "active" and not include_inactive):
                    continue
                if word == "" or word in m["content"].split():
                    want_set.add((m["memory_id"], status))
            assert got_set == want_set, (word, include_inactive, position, at)
            if word == "":
                order = [r["memory_id"] for r in found["results"]]
                assert order == [
                    m for _, m in sorted(((r["event_time"], r["memory_id"]) for r in found["results"]), reverse=True)
                ]


def boundaries(events: list[StoredEvent]) -> list[str | None]:
    """Every world time the history mentions: validity starts and ends sit exactly on them."""
    times = {e.event_time for e in events} | {
        e.data.event_time
        for e in events  # type: ignore[attr-defined]
        if isinstance(e.data, MemoryUpdated) and e.data.event_time
    }
    return [None, *sorted(times)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(op, min_size=3, max_size=18),
    times=st.lists(st.one_of(st.none(), day), min_size=1, max_size=2),
    pick=st.integers(0, 18),
)
def test_as_of_answers_match_a_naive_fold(ops: list[tuple[Any, ...]], times: list[str | None], pick: int) -> None:
    app = LedgerApp(Settings(db=":memory:", client="prop"))
    try:
        run(app, ops)
        events = list(app.store.read())
        for position in range(0, len(events) + 1):
            for at in times:
                check_point(app, events, position, at)
        for position in {len(events), pick % (len(events) + 1)}:  # world-time boundaries, exactly
            for at in boundaries(events):
                check_point(app, events, position, at)
        if events:  # a timestamp point is the prefix recorded by then
            middle = events[len(events) // 2]
            prefix = max(e.position for e in events if e.recorded_at <= middle.recorded_at)
            stamp = app.find("", limit=50, as_of_recorded=middle.recorded_at, include_inactive=True)
            assert stamp["as_of"]["recorded_position"] == prefix
        assert app.verify()["projections"] == "consistent"  # incremental == fresh rebuild
    finally:
        app.close()
