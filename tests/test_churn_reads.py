"""What a write to a disputed claim reads: the set once per key, values and membership from the
key index (whole claims only for the candidates kept), the writer's own stream never, and a
member's join counted by the one statement that records it (a re-join counts again)."""

from __future__ import annotations

from fact_ledger.server.app.facade import LedgerApp
from tests.conftest import statements_run


def statements(app: LedgerApp, write: object) -> list[str]:
    with statements_run(app.conn) as ran:
        write()  # type: ignore[operator]
    return ran


def test_joining_a_set_reads_it_once_and_never_looks_up_the_writers_stream(app: LedgerApp) -> None:
    for port in range(7000, 7005):
        app.remember(f"The staging api listens on port {port}")
    ran = statements(app, lambda: app.remember("The staging api listens on port 9999"))
    set_rows = [s for s in ran if s.startswith("SELECT conflict_id, stream_id") and "key=?" in s]
    membership = [s for s in ran if "FROM conflict_members WHERE conflict_id=? AND +active=1" in s]
    assert len(set_rows) == 1, set_rows  # the decision's two steps share what the first one read
    assert len(membership) <= 1, membership  # the reply's near-duplicate check; the decision's came with the values
    whole = [s for s in ran if "FROM claims WHERE key_subject=?" in s and not s.startswith("SELECT memory_id FROM")]
    assert not whole  # no whole claims of the key's history
    probes = [s for s in ran if s.startswith("SELECT memory_id FROM claims WHERE key_subject=?")]
    assert len(probes) <= 1 and all("value_norm=?" in s and "LIMIT" in s for s in probes)  # a restatement's seek
    assert not [s for s in ran if s.startswith("SELECT stream_id FROM memories")]  # its own event names it
    assert not [s for s in ran if s.startswith("SELECT active FROM conflict_members")]  # the upsert tells
    (conflict,) = app.conflicts()["conflicts"]
    assert conflict["member_count"] == 6


def test_a_member_that_left_rejoins_and_counts_again(app: LedgerApp) -> None:
    a = app.remember("the cache port is 7000")["memory_id"]
    app.remember("the cache port is 7001")
    c = app.remember("the cache port is 7002")["memory_id"]
    cid = app.read(a)["memory"]["conflict_ids"][0]
    app.update(c, content="the cache is fast")  # leaves
    assert app.conflict_detail(cid)["conflict"]["member_count"] == 2
    app.update(c, content="the cache port is 7003")  # joins again
    assert app.conflict_detail(cid)["conflict"]["member_count"] == 3
    app.update(a, content="the cache port is 7004")  # a current member with a new value: no new member
    detail = app.conflict_detail(cid)["conflict"]
    assert detail["member_count"] == 3 and detail["state"] == "open"
    values = {m["memory_id"]: m["value"] for m in detail["memories"]}
    assert values[c] == "7003"  # the re-join recorded the value it joined with
    assert app.runner.differs_from_fresh_fold() == []
