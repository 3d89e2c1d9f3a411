"""Claims, near-duplicate and conflict projections: a rebuild equals the incremental fold.

A random script of writes and governance actions (some refused, which must leave no trace)
runs against a fresh ledger; the checksums of every projection table must then equal those of
a full rebuild, and ``verify`` must agree.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.errors import LedgerError
from ledger.events import AUTH_AGENT, AUTH_USER, MemoryArchived
from ledger.store import NewEvent
from server.app import LedgerApp
from server.config import Settings

CONTENTS = ["接口 /api/foo 返回 200", "接口 /api/foo 返回 404", "项目预算是5万", "项目预算为8万元",
            "The staging API listens on port 8080", "staging port: 9090", "会议定在周三下午3点",
            "会议改为周四", "the cache is redis", "张工明天下午三点开会", "章工明天下午三点开会"]
SOURCES = ["agent_generated", "user_confirmed", "document_extracted"]
AUTH = [AUTH_AGENT, AUTH_USER]

ops = st.lists(st.one_of(
    st.tuples(st.just("remember"), st.sampled_from(CONTENTS), st.sampled_from(SOURCES)),
    st.tuples(st.just("update"), st.integers(0, 30), st.sampled_from(CONTENTS)),
    st.tuples(st.just("retract"), st.integers(0, 30), st.sampled_from(AUTH)),
    st.tuples(st.sampled_from(["confirm", "unlock", "retire"]), st.integers(0, 30), st.sampled_from(AUTH)),
    st.tuples(st.just("supersede"), st.integers(0, 30), st.integers(0, 30)),
    st.tuples(st.just("arbitrate"), st.integers(0, 30), st.integers(0, 30)),
    st.tuples(st.sampled_from(["judge", "resolve", "keep_both"]), st.integers(0, 30), st.integers(0, 1)),
    st.tuples(st.just("archive"), st.integers(0, 30), st.just(0)),
), min_size=1, max_size=30)


def run(app: LedgerApp, script: list[tuple]) -> None:  # type: ignore[type-arg]
    ids: list[int] = []

    def pick(i: int) -> int:
        return ids[i % len(ids)]

    for kind, x, y in script:
        if kind != "remember" and not ids:
            continue
        conflicts = [c["conflict_id"] for c in app.conflicts(state="all", limit=50)["conflicts"]]
        try:
            if kind == "remember":
                ids.append(app.remember(x, source_type=y, authorization=AUTH_USER if y == "user_confirmed" else "",
                                        event_time=f"2025-07-{len(ids) % 28 + 1:02d}T00:00:00Z")["memory_id"])
            elif kind == "update":
                app.update(pick(x), content=y)
            elif kind == "retract":
                ids.append(app.remember("cancel that", ref_id=pick(x), retracts=True, authorization=y)["memory_id"])
            elif kind in ("confirm", "unlock"):
                getattr(app, kind)(pick(x), authorization=y)
            elif kind == "retire":
                app.retire(pick(x), authorization=y)
            elif kind == "supersede":
                app.supersede(pick(x), pick(y), authorization=AUTH_AGENT)
            elif kind == "arbitrate":
                app.arbitrate(pick(x), pick(y), mark_conflict=True, apply=bool(x % 2), authorization=AUTH_USER)
            elif kind == "archive":
                archive(app, pick(x))
            elif conflicts:
                cid = conflicts[x % len(conflicts)]
                members = app.conflict_detail(cid)["conflict"]["members"]
                if kind == "judge":
                    app.judge(cid, members[y])
                elif kind == "resolve":
                    app.resolve_conflict(cid, winner_id=members[y], authorization=AUTH_USER)
                else:
                    app.resolve_conflict(cid, resolution="keep_both", authorization=AUTH_USER)
        except LedgerError:
            pass  # refusals are part of the script: they must write nothing


def archive(app: LedgerApp, memory_id: int) -> None:
    row = app.conn.execute("SELECT stream_id, status FROM memories WHERE memory_id=?", (memory_id,)).fetchone()
    if row and row[1] in ("retired", "superseded"):
        app.store.write(lambda: app.runner.append([NewEvent(
            data=MemoryArchived(memory=row[0]), stream_id=row[0], event_time="2025-12-01T00:00:00.000000Z")]))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(script=ops)
def test_governance_projections_rebuild_to_the_same_tables(tmp_path_factory, script) -> None:  # type: ignore[no-untyped-def]
    app = LedgerApp(Settings(db=str(tmp_path_factory.mktemp("gov") / "l.db"), client="test"))
    try:
        run(app, script)
        incremental = app.runner.checksums()
        assert {"claims", "near_dup_sigs", "near_dup_bands", "conflicts", "conflict_members", "judgments"} <= set(
            incremental)
        app.rebuild()
        assert app.runner.checksums() == incremental
        assert app.verify()["projections"] == "consistent"
        states = {s for (s,) in app.conn.execute("SELECT DISTINCT status FROM memories")}
        assert states <= {"active", "superseded", "retired", "archived"}
        active_claims = app.conn.execute(
            "SELECT count(*) FROM claims c JOIN memories m USING(memory_id) WHERE m.status<>'active'").get
        assert active_claims == 0
    finally:
        app.close()


def test_a_refused_action_leaves_no_trace(tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    app = LedgerApp(Settings(db=str(tmp_path_factory.mktemp("gov") / "l.db"), client="test"))
    mid = app.remember("the release train leaves on Tuesday", source_type="user_confirmed",
                       authorization=AUTH_USER)["memory_id"]
    before = (app.store.last_position(), app.runner.checksums())
    run(app, [("update", 0, "changed"), ("retire", 0, ""), ("supersede", 0, 0)])
    assert (app.store.last_position(), app.runner.checksums()) == before
    assert app.read(mid)["memory"]["status"] == "active"
    app.close()
