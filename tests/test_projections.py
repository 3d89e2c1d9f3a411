"""The projection runner: inline application, catch-up on open, version bumps, rebuild determinism."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import MemoryRecorded
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections.memories import MemoriesProjector
from fact_ledger.server.app.facade import LedgerApp, default_projectors
from fact_ledger.server.config import Settings

T0 = "2026-07-01T00:00:00.000000Z"


def test_a_write_is_readable_when_it_returns(app: LedgerApp) -> None:
    mid = app.remember("the build server is ci-7", subject="build")["memory_id"]
    assert app.read(mid)["memory"]["content"] == "the build server is ci-7"
    assert app.find("build server")["results"][0]["memory_id"] == mid
    status = app.status()["projections"]
    assert all(p["lag"] == 0 for p in status.values())


def test_events_from_another_process_are_caught_up_on_open(db_path: Path) -> None:
    LedgerApp(Settings(db=str(db_path))).close()
    raw = EventStore(db_path)  # a writer that runs no projectors at all
    stream = uuid7()
    raw.append(
        [
            NewEvent(
                data=MemoryRecorded(memory=stream, content="written behind our back"), stream_id=stream, event_time=T0
            )
        ]
    )
    raw.close()
    app = LedgerApp(Settings(db=str(db_path)))
    assert app.find("behind our back")["results"][0]["content"] == "written behind our back"
    assert app.status()["projections"]["memories"]["lag"] == 0


def test_a_bumped_projector_version_rebuilds_that_projection(db_path: Path, monkeypatch, caplog) -> None:
    app = LedgerApp(Settings(db=str(db_path)))
    app.remember("alpha fact")
    app.conn.execute("DELETE FROM memories")  # damage the read model; only a rebuild restores it
    app.close()
    assert "rebuilding" not in caplog.text  # a new ledger is built quietly
    old = MemoriesProjector.version
    monkeypatch.setattr(MemoriesProjector, "version", old + 1)
    app = LedgerApp(Settings(db=str(db_path)))
    assert f"memories v{old} → v{old + 1}" in caplog.text  # an upgrade says why the open is slow
    assert app.read(1)["memory"]["content"] == "alpha fact"
    version = app.conn.execute("SELECT version FROM projection_checkpoints WHERE name='memories'").get
    assert version == MemoriesProjector.version


def test_rebuild_of_one_projection_leaves_the_others(app: LedgerApp) -> None:
    memory = app.remember("gamma fact")["memory_id"]
    # Mark two read models by hand: only the named one may be thrown away and folded again.
    app.conn.execute("UPDATE memories SET content='marked by the test' WHERE memory_id=?", (memory,))
    app.conn.execute("UPDATE search_docs SET body='marked by the test' WHERE memory_id=?", (memory,))
    result = app.rebuild("search")
    assert result["projections"] == ["search"] and result["events"] == app.store.last_position()
    assert app.conn.execute("SELECT body FROM search_docs WHERE memory_id=?", (memory,)).get == "gamma fact"
    assert app.conn.execute("SELECT content FROM memories WHERE memory_id=?", (memory,)).get == "marked by the test"
    assert [r["memory_id"] for r in app.find("gamma")["results"]] == [memory]


commands = st.lists(
    st.one_of(
        st.tuples(
            st.just("remember"),
            st.sampled_from(
                ["端口 8080", "port 8080", "the cache is redis", "预算 5万", "deploy friday", "接口返回 200"]
            ),
            st.sampled_from(["", "api", "cache"]),
        ),
        st.tuples(st.just("update"), st.integers(0, 20), st.sampled_from(["changed", "又改了", "port 9090"])),
        st.tuples(st.just("retract"), st.integers(0, 20), st.just("")),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=commands)
def test_incremental_projections_equal_a_rebuild(tmp_path_factory, script) -> None:
    db = tmp_path_factory.mktemp("det") / "l.db"
    app = LedgerApp(Settings(db=str(db)))
    ids: list[int] = []
    for kind, arg, extra in script:
        if kind == "remember":
            ids.append(app.remember(arg, subject=extra)["memory_id"])
        elif ids and kind == "update":
            target = ids[arg % len(ids)]
            if app.read(target)["memory"]["status"] == "active":
                app.update(target, content=extra)
        elif ids and kind == "retract":
            ids.append(app.remember("cancel that", ref_id=ids[arg % len(ids)], retracts=True)["memory_id"])
    incremental = app.runner.checksums()
    app.rebuild()
    assert app.runner.checksums() == incremental
    assert app.verify()["projections"] == "consistent"
    app.close()


def test_projector_order_puts_memories_first() -> None:
    assert default_projectors()[0].name == "memories"
