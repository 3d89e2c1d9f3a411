"""Time travel on the facade: as-of find/read on both axes, history, timeline, audit, archive.

The scenario test is the seed's /api/foo case: two agent-generated answers about one endpoint,
the later one superseding the earlier, asked about at different world and recorded times.
"""

from __future__ import annotations

from typing import Any

import pytest

from fact_ledger.ledger.errors import InvalidInput, NotFound
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import AUTH_USER, Event, MemoryRetired, Superseded
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

JUL = "2026-07-{:02d}T00:00:00.000000Z"


def append(app: LedgerApp, data: Event, stream_id: str, event_time: str) -> int:
    """An event straight through the normal append path (used where no facade action exists yet)."""
    stored = app.store.write(
        lambda: app.runner.append(
            [NewEvent(data=data, stream_id=stream_id, event_time=event_time, actor="test:governance")]
        )
    )
    return stored[0].position


def stream_of(app: LedgerApp, memory_id: int) -> str:
    return str(app.conn.execute("SELECT stream_id FROM memories WHERE memory_id=?", (memory_id,)).get)


def supersede(app: LedgerApp, loser: int, winner: int) -> None:
    app.supersede(loser_id=loser, winner_id=winner, reason="newer observation", authorization=AUTH_USER)


def ids(result: dict[str, Any]) -> list[int]:
    return [r["memory_id"] for r in result["results"]]


@pytest.fixture
def foo(app: LedgerApp) -> dict[str, Any]:
    """The /api/foo case: "200" on 07-01, then "404" on 07-06 superseding it."""
    ok = app.remember(
        "接口 /api/foo 返回 200", subject="/api/foo", event_time=JUL.format(1), source_type="agent_generated"
    )["memory_id"]
    before_second = app.store.last_position()
    recorded_before = app.conn.execute("SELECT recorded_at FROM events WHERE position=?", (before_second,)).get
    not_found = app.remember(
        "接口 /api/foo 返回 404", subject="/api/foo", event_time=JUL.format(6), source_type="agent_generated"
    )["memory_id"]
    supersede(app, ok, not_found)
    return {"ok": ok, "nf": not_found, "position": before_second, "recorded": recorded_before}


def test_api_foo_between_the_two_dates_the_200_answer_is_current(app: LedgerApp, foo: dict[str, Any]) -> None:
    found = app.find("/api/foo", as_of_event_time=JUL.format(3))
    assert ids(found) == [foo["ok"]]
    assert found["results"][0]["status"] == "active"
    assert app.read(foo["ok"], as_of_event_time=JUL.format(3))["memory"]["status"] == "active"
    with pytest.raises(NotFound):  # the 404 answer did not hold yet in the world
        app.read(foo["nf"], as_of_event_time=JUL.format(3))


def test_api_foo_after_the_second_date_the_404_answer_is_current(app: LedgerApp, foo: dict[str, Any]) -> None:
    found = app.find("接口 返回", as_of_event_time=JUL.format(8))
    assert ids(found) == [foo["nf"]]
    everything = app.find("/api/foo", as_of_event_time=JUL.format(8), include_inactive=True)
    assert {r["memory_id"]: r["status"] for r in everything["results"]} == {
        foo["ok"]: "superseded",
        foo["nf"]: "active",
    }
    old = app.read(foo["ok"], as_of_event_time=JUL.format(8))["memory"]
    assert (old["status"], old["superseded_by"], old["valid_to"]) == ("superseded", foo["nf"], JUL.format(6))
    assert app.read(foo["nf"], as_of_event_time=JUL.format(8))["memory"]["supersedes"] == [foo["ok"]]


def test_api_foo_recorded_before_the_second_write_does_not_know_it(app: LedgerApp, foo: dict[str, Any]) -> None:
    for point in (foo["position"], foo["recorded"], str(foo["position"])):
        found = app.find("/api/foo", as_of_recorded=point, include_inactive=True)
        assert ids(found) == [foo["ok"]], point
        assert found["results"][0]["status"] == "active"
        with pytest.raises(NotFound):
            app.read(foo["nf"], as_of_recorded=point)
    # Both axes at once: what the ledger then believed about 07-08 — still the 200 answer.
    both = app.find("/api/foo", as_of_recorded=foo["position"], as_of_event_time=JUL.format(8))
    assert ids(both) == [foo["ok"]]
    assert app.find("/api/foo", as_of_recorded=0)["results"] == []


def test_api_foo_timeline_history_and_audit(app: LedgerApp, foo: dict[str, Any]) -> None:
    by_subject = app.timeline(subject="/API/foo")["intervals"]
    assert [(i["memory_id"], i["valid_from"], i["valid_to"], i["status"], i["superseded_by"]) for i in by_subject] == [
        (foo["ok"], JUL.format(1), JUL.format(6), "superseded", foo["nf"]),
        (foo["nf"], JUL.format(6), None, "active", None),
    ]
    assert app.timeline(memory_id=foo["nf"])["intervals"] == by_subject
    early = app.timeline(subject="/api/foo", as_of_recorded=foo["position"])["intervals"]
    assert [(i["memory_id"], i["valid_to"], i["status"]) for i in early] == [(foo["ok"], None, "active")]

    versions = app.history(foo["ok"])["versions"]
    assert [v["version"] for v in versions] == [1, 2]
    assert versions[0]["events"][0]["type"] == "MemoryRecorded"
    sup = next(e for v in versions for e in v["events"] if e["type"] == "Superseded")
    assert sup["reason"] == "newer observation" and sup["actor"] and sup["recorded_at"]
    assert versions[1]["status"] == "superseded" and versions[1]["superseded_by"] == foo["nf"]
    # the winner's history shows the supersession too, in the role of the winner
    roles = {e["role"] for v in app.history(foo["nf"])["versions"] for e in v["events"]}
    assert "winner" in roles

    audit = app.audit(memory_id=foo["ok"])["events"]
    assert [e["type"] for e in audit][:1] == ["Superseded"] and audit[-1]["type"] == "MemoryRecorded"
    assert set(audit[0]) >= {"position", "type", "stream_id", "event_time", "recorded_at", "actor", "payload"}


def test_update_changes_are_seen_only_from_their_position(app: LedgerApp) -> None:
    mid = app.remember("the staging port is 8080", subject="staging", event_time=JUL.format(1))["memory_id"]
    p1 = app.store.last_position()
    app.update(mid, content="the staging port is 9090", event_time=JUL.format(4))
    assert ids(app.find("8080", as_of_recorded=p1)) == [mid]
    assert app.find("8080")["results"] == [] and app.find("8080", as_of_recorded=p1 + 1)["results"] == []
    assert ids(app.find("9090", as_of_recorded=p1 + 1)) == [mid]
    then = app.read(mid, as_of_recorded=p1)["memory"]
    now = app.read(mid, as_of_recorded=p1 + 1)["memory"]
    assert (then["content"], then["version"], then["event_time"]) == ("the staging port is 8080", 1, JUL.format(1))
    assert (now["content"], now["version"], now["event_time"]) == ("the staging port is 9090", 2, JUL.format(4))
    # The current (non as-of) answer and the as-of answer at the last position agree.
    current = app.read(mid)["memory"]
    assert {k: current[k] for k in ("content", "version", "status", "event_time", "tier")} == {
        k: now[k] for k in ("content", "version", "status", "event_time", "tier")
    }
    # docs/contract.md: what only the current model keeps is absent as of a point, not made up
    assert not {"retired_by", "retracts", "status_reason", "support", "last_stated"} & set(now)


def test_a_retraction_ends_validity_at_its_event_time(app: LedgerApp) -> None:
    mid = app.remember("standup is on wednesday", event_time=JUL.format(1))["memory_id"]
    app.remember("cancel the wednesday standup", ref_id=mid, retracts=True, event_time=JUL.format(10))
    assert app.read(mid, as_of_event_time=JUL.format(9))["memory"]["status"] == "active"
    assert app.read(mid, as_of_event_time=JUL.format(10))["memory"]["status"] == "retired"
    assert app.find("standup wednesday", as_of_event_time=JUL.format(11))["results"][0]["memory_id"] != mid


def test_a_corrected_winner_time_moves_the_losers_end(app: LedgerApp) -> None:
    a = app.remember("release is friday", event_time=JUL.format(1))["memory_id"]
    b = app.remember("release is monday", event_time=JUL.format(6))["memory_id"]
    append(app, Superseded(loser=stream_of(app, a), winner=stream_of(app, b)), stream_of(app, a), JUL.format(6))
    p = app.store.last_position()
    app.update(b, event_time=JUL.format(4))
    assert app.read(a, as_of_recorded=p)["memory"]["valid_to"] == JUL.format(6)
    assert app.read(a)["memory"]["status"] == "superseded"
    assert app.read(a, as_of_event_time=JUL.format(5))["memory"]["status"] == "superseded"
    assert app.read(a, as_of_event_time=JUL.format(5), as_of_recorded=p)["memory"]["status"] == "active"


def test_a_value_that_arrives_late_is_true_only_until_the_next_one(app: LedgerApp) -> None:
    """8080 since the 10th, 9090 since the 20th; then 7070 "since the 1st" arrives, and 7575
    "since the 15th". Each was superseded by 9090, the latest value, and was given its start as
    the end: at the 12th the ledger answered 7070 and 8080 as both true, 7070 first."""
    said = {}
    for port, day in ((8080, 10), (9090, 20), (7070, 1), (7575, 15)):  # the order they were recorded in
        said[port] = app.remember(
            f"The staging API listens on port {port}", subject="staging", event_time=JUL.format(day)
        )["memory_id"]
        if port != 9090 and 9090 in said:
            supersede(app, said[port], said[9090])  # the latest value wins each time
    supersede(app, said[8080], said[9090])
    ends = {port: app.read(m)["memory"]["valid_to"] for port, m in said.items()}
    assert ends == {8080: JUL.format(15), 9090: None, 7070: JUL.format(10), 7575: JUL.format(20)}
    for day, port in ((5, 7070), (12, 8080), (17, 7575), (25, 9090)):
        found = app.find("staging api port", as_of_event_time=JUL.format(day))
        assert ids(found) == [said[port]], (day, found)
    timeline = app.timeline(subject="staging")["intervals"]
    assert [(i["memory_id"], i["valid_to"]) for i in timeline] == [
        (said[7070], JUL.format(10)),
        (said[8080], JUL.format(15)),
        (said[7575], JUL.format(20)),
        (said[9090], None),
    ]
    assert app.verify()["projections"] == "consistent"  # a rebuild folds the same ends


def test_a_loser_to_an_older_confirmed_value_stays_never_in_force(app: LedgerApp) -> None:
    confirmed = app.remember("The staging API listens on port 8080", subject="staging", event_time=JUL.format(5))
    newer = app.remember("The staging API listens on port 9090", subject="staging", event_time=JUL.format(8))
    supersede(app, newer["memory_id"], confirmed["memory_id"])  # the person kept the older value
    latest = app.remember("The staging API listens on port 7070", subject="staging", event_time=JUL.format(20))
    supersede(app, confirmed["memory_id"], latest["memory_id"])
    # never in force: an empty interval at its own start (its winner's start, the 5th, came before it)
    assert app.read(newer["memory_id"])["memory"]["valid_to"] == JUL.format(8)
    [interval] = [i for i in app.timeline(subject="staging")["intervals"] if i["memory_id"] == newer["memory_id"]]
    assert (interval["valid_from"], interval["valid_to"]) == (JUL.format(8), JUL.format(8))
    assert ids(app.find("staging api port", as_of_event_time=JUL.format(8))) == [confirmed["memory_id"]]
    assert app.read(confirmed["memory_id"])["memory"]["valid_to"] == JUL.format(20)
    assert ids(app.find("staging api port", as_of_event_time=JUL.format(10))) == [confirmed["memory_id"]]


def test_timestamp_points_resolve_to_the_log_prefix_recorded_by_then(app: LedgerApp) -> None:
    a = app.remember("first fact", event_time=JUL.format(1))["memory_id"]
    t1 = app.conn.execute("SELECT recorded_at FROM events WHERE position=1").get
    app.remember("second fact", event_time=JUL.format(1))
    # A replayed backup line keeps its older stamp; it still counts from where it entered the log.
    stream = stream_of(app, a)
    app.store.write(
        lambda: app.runner.append(
            [
                NewEvent(
                    data=MemoryRetired(memory=stream, reason="r"),
                    stream_id=stream,
                    event_time=JUL.format(2),
                    recorded_at="2000-01-01T00:00:00.000000Z",
                )
            ]
        )
    )
    assert app.read(a, as_of_recorded=t1)["memory"]["status"] == "active"
    with pytest.raises(NotFound) as before:
        app.read(a, as_of_recorded="2000-01-01T00:00:00Z")
    # named as the time asked ("was not in the ledger at position 0" of a date a person gave)
    assert before.value.message == (
        f"memory {a} was not in the ledger as recorded by 2000-01-01T00:00:00.000000Z (the log up to position 0)"
    )
    with pytest.raises(NotFound) as at:
        app.read(a, as_of_recorded=0)
    assert at.value.message == f"memory {a} was not in the ledger at position 0"
    assert app.read(a, as_of_recorded="2999-01-01T00:00:00Z")["memory"]["status"] == "retired"
    assert app.read(a, as_of_recorded=10**9)["memory"]["status"] == "retired"


def test_as_of_inputs_are_validated(app: LedgerApp) -> None:
    app.remember("x fact")
    with pytest.raises(InvalidInput):
        app.find("x", as_of_event_time="next tuesday")
    with pytest.raises(InvalidInput):
        app.read(1, as_of_recorded="yesterday-ish")
    with pytest.raises(InvalidInput):
        app.timeline()
    for bad in (True, -1, "-1"):  # a bool is not a position; positions start at 0
        with pytest.raises(InvalidInput) as info:
            app.read(1, as_of_recorded=bad)
        assert info.value.field == "as_of_recorded"


def test_as_of_find_filters_and_empty_query(app: LedgerApp) -> None:
    a = app.remember("alpha deploy note", tags=["ops"], event_time=JUL.format(1))["memory_id"]
    b = app.remember("alpha review note", tags=["dev"], event_time=JUL.format(2), source_type="document_extracted")[
        "memory_id"
    ]
    point = app.store.last_position()
    assert ids(app.find("", as_of_recorded=point)) == [b, a]
    assert ids(app.find("alpha", as_of_recorded=point, tags_filter=["ops"])) == [a]
    assert ids(app.find("alpha", as_of_recorded=point, source_type="document_extracted")) == [b]
    assert ids(app.find("alpha", as_of_recorded=point, after_time=JUL.format(2))) == [b]
    assert ids(app.find("alpha", as_of_recorded=point, before_time="2026-07-01T12:00:00Z")) == [a]
    limited = app.find("alpha", as_of_recorded=point, limit=1)
    assert limited["has_more"] is True and len(limited["results"]) == 1 and limited["ok"] is True
    rest = app.find("alpha", as_of_recorded=point, limit=1, cursor=limited["next_cursor"])
    assert ids(limited) + ids(rest) == ids(app.find("alpha", as_of_recorded=point)) and rest["has_more"] is False
    exact = app.find("alpha", as_of_recorded=point, limit=2)  # exactly the limit: nothing more
    assert len(exact["results"]) == 2 and exact["has_more"] is False and exact["next_cursor"] is None
    assert ids(app.find("🙂", as_of_recorded=point)) == []


def test_audit_filters(app: LedgerApp) -> None:
    app.remember("audit one")
    other = LedgerApp(Settings(db=app.settings.db, client="other-agent"))
    other.remember("audit two")
    other.close()
    everything = app.audit()["events"]
    assert [e["position"] for e in everything] == [2, 1]
    assert [e["actor"] for e in app.audit(actor="other-agent")["events"]] == ["other-agent"]
    assert [e["actor"] for e in app.audit(client="other-agent")["events"]] == ["other-agent"]
    assert app.audit(type="MemoryRetired")["events"] == []
    assert app.audit(until="2000-01-01T00:00:00Z")["events"] == []
    assert len(app.audit(since=everything[0]["recorded_at"])["events"]) == 1
    page = app.audit(limit=1)
    assert page["has_more"] and len(page["events"]) == 1
    with pytest.raises(NotFound):
        app.audit(memory_id=99)


def test_audit_by_workspace_position_and_under_strict_isolation(db_path) -> None:
    writer = LedgerApp(Settings(db=str(db_path)))
    writer.remember("alpha fact", workspace="alpha")
    writer.remember("beta fact", workspace="beta")
    assert [e["position"] for e in writer.audit(workspace="beta")["events"]] == [2]
    assert [e["position"] for e in writer.audit(before_position=2)["events"]] == [1]
    writer.close()
    strict = LedgerApp(Settings(db=str(db_path), workspace="beta", isolation="strict"))
    assert [e["position"] for e in strict.audit()["events"]] == [2]  # alpha's event stays invisible
    strict.close()


def test_archive_moves_old_inactive_memories_out_but_time_travel_still_sees_them(db_path) -> None:
    app = LedgerApp(Settings(db=str(db_path), retention_days=0))
    a = app.remember("old office is on floor 3", event_time=JUL.format(1))["memory_id"]
    b = app.remember("new office is on floor 5", event_time=JUL.format(5))["memory_id"]
    keep = app.remember("lunch is at noon", event_time=JUL.format(1))["memory_id"]
    append(app, Superseded(loser=stream_of(app, a), winner=stream_of(app, b)), stream_of(app, a), JUL.format(5))
    assert app.archive(dry_run=True)["candidates"] == 1
    assert app.archive()["archived"] == 1
    assert app.archive()["archived"] == 0  # nothing left to do
    assert app.read(a)["memory"]["status"] == "archived"
    assert app.read(keep)["memory"]["status"] == "active"
    assert a not in ids(app.find("office floor", include_inactive=False))
    assert ids(app.find("office floor 3", as_of_event_time=JUL.format(2))) == [a]
    assert app.read(a, as_of_event_time=JUL.format(6))["memory"]["status"] == "superseded"
    assert app.timeline(memory_id=a)["intervals"][0]["status"] == "archived"
    assert app.verify()["projections"] == "consistent"
    app.close()
    recent = LedgerApp(Settings(db=str(db_path), retention_days=90))
    assert recent.archive(dry_run=True)["candidates"] == 0
    recent.close()


def test_archive_runs_in_bounded_batches_and_counts_exactly(db_path, monkeypatch) -> None:
    import fact_ledger.server.app.timetravel as tt

    monkeypatch.setattr(tt, "ARCHIVE_BATCH", 2)
    app = LedgerApp(Settings(db=str(db_path), retention_days=0))
    for n in range(5):
        mid = app.remember(f"temporary note {n}", event_time=JUL.format(1))["memory_id"]
        append(app, MemoryRetired(memory=stream_of(app, mid), reason="done"), stream_of(app, mid), JUL.format(2))
    seen: list[tuple[int, int]] = []
    assert app.archive(progress=lambda done, total: seen.append((done, total)))["archived"] == 5
    assert seen[-1] == (5, 5) and len(seen) == 3
    fresh = app.remember("one more", event_time=JUL.format(1))["memory_id"]
    append(app, MemoryRetired(memory=stream_of(app, fresh)), stream_of(app, fresh), JUL.format(2))
    assert app.archive()["archived"] == 1  # earlier archived memories are not counted again
    app.close()


@pytest.mark.parametrize("common", [2, 2000])
def test_as_of_search_for_common_terms_takes_the_bounded_path(app: LedgerApp, monkeypatch, common: int) -> None:
    from fact_ledger.projections.timeline import asof

    monkeypatch.setattr(asof, "COMMON", common)  # 2: every term here counts as common
    made = [app.remember(f"alpha bravo note {n}", event_time=JUL.format(1 + n))["memory_id"] for n in range(5)]
    point = app.store.last_position()
    app.update(made[0], content="charlie only now")
    orders: list[str] = []

    def trace(cursor: object, sql: str, bindings: object) -> bool:
        if "tt_fts MATCH ?" in sql and "ORDER BY" in sql:
            orders.append(sql.split("ORDER BY")[1].split("LIMIT")[0].strip())
        return True

    app.store.conn.exec_trace = trace
    assert set(ids(app.find("alpha bravo", limit=50, as_of_recorded=point))) == set(made)
    app.store.conn.exec_trace = None
    # Common terms are taken newest first; only rare ones are ranked by bm25 (over every posting).
    assert orders and set(orders) == ({"tt_fts.rowid DESC"} if common == 2 else {"r"}), orders
    assert set(ids(app.find("alpha", limit=50, as_of_recorded=point))) == set(made)
    assert set(ids(app.find("alpha", limit=50))) == set(made[1:])
    assert set(ids(app.find("alpha bravo", limit=50, as_of_recorded=point))) == set(made)
    assert set(ids(app.find("bravo zulu", limit=50, as_of_recorded=point))) == set(made)
    assert ids(app.find("charlie", limit=50, as_of_recorded=point)) == []
    assert ids(app.find("charlie", limit=50, as_of_recorded=point + 1)) == [made[0]]


def test_a_move_collides_and_once_resolved_each_time_has_its_own_home(app: LedgerApp) -> None:
    paris = app.remember("Bob lives in Paris", subject="Bob", event_time="2020-01-01T00:00:00Z")["memory_id"]
    moved = app.remember("Bob moved to Berlin last year", subject="Bob", event_time="2023-06-01T00:00:00Z")
    (conflict,) = moved["conflicts"]
    assert conflict["claim"]["attribute"] == "lives in" and conflict["verdict"]["winner_id"] == moved["memory_id"]
    app.resolve_conflict(conflict["conflict_id"], winner_id=moved["memory_id"], authorization=AUTH_USER)

    def home(at: str | None = None) -> list[int]:
        return [r["memory_id"] for r in app.find("where does Bob live", as_of_event_time=at)["results"]]

    assert home("2021-01-01T00:00:00Z") == [paris]
    assert home("2024-01-01T00:00:00Z") == home() == [moved["memory_id"]]
    assert app.read(paris)["memory"]["valid_to"].startswith("2023-06-01")


def test_the_timeline_skips_only_fields_that_cannot_name_a_memory() -> None:
    """Links look in fewer fields than an event has (a rebuild links every event); a field is
    skipped only when msgspec refuses an id in it, alone, in a list or as a dict's key."""
    import msgspec

    from fact_ledger.ledger.log.events import EVENT_TYPES
    from fact_ledger.projections.timeline.projector import _id_fields

    an_id = "0193c1a2-1111-7000-8000-000000000001"
    looked_at = 0
    for kind in EVENT_TYPES.values():
        chosen = _id_fields(kind)
        for field in msgspec.structs.fields(kind):
            if field.name in chosen:
                looked_at += 1
                continue
            for shape in (an_id, [an_id], {an_id: 1}):
                with pytest.raises(msgspec.ValidationError):
                    msgspec.convert(shape, field.type)
    assert "memory" in _id_fields(EVENT_TYPES["MemoryRecorded"])
    assert {"winner", "loser"} <= set(_id_fields(EVENT_TYPES["Superseded"]))
    assert looked_at > 40


def test_history_and_audit_by_memory_show_the_collisions_it_took_part_in(app: LedgerApp) -> None:
    """A ``ClaimCollided`` names its members inside a list of structs, which the links never
    looked into: neither ``history`` nor ``audit --memory-id`` showed a memory's collisions."""
    first = app.remember("The staging API listens on port 8080", subject="staging")["memory_id"]
    second = app.remember("The staging API listens on port 9090", subject="staging", source_type="agent_generated")
    (collided,) = [e.position for e in app.store.read() if e.type == "ClaimCollided"]
    kinds = [e["type"] for v in app.history(first)["versions"] for e in v["events"]]
    assert kinds == ["MemoryRecorded", "ClaimCollided"]
    assert collided in [e["position"] for e in app.audit(memory_id=second["memory_id"])["events"]]


def test_an_as_of_answer_puts_a_claim_sets_leader_first(app: LedgerApp) -> None:
    """Two values of one fact, both in force at the point (an unresolved set): the one the rules
    rank first at that point leads the as-of answer as it leads the current one, though the
    challenger's wording fits the query better."""
    old = app.remember("The staging API listens on port 8080", event_time="2026-01-05T09:00:00Z")["memory_id"]
    new = app.remember(
        "The staging API listens on port 9090 after the network migration of the data centre",
        event_time="2026-02-05T09:00:00Z",
    )
    assert new["conflicts"][0]["leader_id"] == new["memory_id"]
    query = "staging API listens on port"
    assert ids(app.find(query)) == [new["memory_id"], old]
    for point in ({"as_of_event_time": "2026-03-01T00:00:00Z"}, {"as_of_recorded": new["memory_id"]}):
        found = app.find(query, **point)["results"]
        assert [r["memory_id"] for r in found] == [new["memory_id"], old], point
        assert found[0]["score"] >= found[1]["score"]
    # before the second value held, the first is the only one in force
    assert ids(app.find(query, as_of_event_time="2026-01-20T00:00:00Z")) == [old]
    # a person's confirmation of the older value makes it lead from its position on
    confirmed = app.confirm(old, authorization=AUTH_USER)
    assert confirmed["ok"]
    assert ids(app.find(query, as_of_event_time="2026-03-01T00:00:00Z"))[0] == old
    assert ids(app.find(query, as_of_recorded=new["memory_id"])) == [new["memory_id"], old]


def test_an_as_of_answer_keeps_one_order_across_pages_and_sets_stay_in_their_workspace(app: LedgerApp) -> None:
    """Each page reordered only the hits up to its end: paged one at a time, the set's leader was
    never shown and a hit came twice. Two workspaces holding one slot were ordered as one set."""
    point = "2026-02-01T00:00:00Z"
    old = app.remember(
        "The inventory API listens on port 8080 inventory inventory port", event_time="2026-01-05T09:00:00Z"
    )["memory_id"]
    leader = app.remember("The inventory API listens on port 9090", event_time="2026-01-05T12:00:00Z")["memory_id"]
    for i in range(4):
        app.remember(
            f"inventory port note number {i} inventory port", event_time="2026-01-04T09:00:00Z", tags=[f"t{i}"]
        )
    whole = ids(app.find("inventory port", limit=20, as_of_event_time=point))
    assert whole.index(leader) < whole.index(old)
    for limit in (1, 2):
        seen, cursor = [], None
        while True:
            page = app.find("inventory port", limit=limit, cursor=cursor, as_of_event_time=point)
            seen += ids(page)
            cursor = page["next_cursor"]
            if not cursor:
                break
        assert seen == whole, limit
    # the same slot in two workspaces is no set: the better match stays first
    a = app.remember(
        "The billing API listens on port 7070 billing billing port", event_time="2026-01-05T09:00:00Z", workspace="w1"
    )
    b = app.remember("The billing API listens on port 7171", event_time="2026-01-05T12:00:00Z", workspace="w2")
    assert not b["conflicts"]
    expected = [a["memory_id"], b["memory_id"]]
    assert ids(app.find("billing API port", as_of_event_time=point))[:2] == expected
    assert ids(app.find("billing API port"))[:2] == expected


def test_a_timeline_before_the_memory_was_recorded_says_so_as_read_does(app: LedgerApp) -> None:
    """``timeline(memory_id, as_of_recorded=0)`` of a memory written later said "no memory N",
    as if the id named nothing; ``read`` at the same point says the ledger did not hold it yet."""
    a = app.remember("The build server is ci-3", event_time="2026-01-01T00:00:00Z")["memory_id"]
    for point, said in ((0, "at position 0"), ("2000-01-01", "as recorded by 2000-01-01T00:00:00.000000Z")):
        with pytest.raises(NotFound) as read:
            app.read(a, as_of_recorded=point)
        with pytest.raises(NotFound) as timeline:
            app.timeline(memory_id=a, as_of_recorded=point)
        assert timeline.value.message == read.value.message and said in timeline.value.message
    with pytest.raises(NotFound, match="no memory 999"):
        app.timeline(memory_id=999)  # no point asked: the id names nothing
