"""Automatic settlement (policy ``auto_settle``): a set whose verdict a rule decides, with no
protected or user-confirmed member, is settled for its leader when a write opens or joins it;
every supersession records the deciding rule and ``authorization: "policy"``. Off (the default),
nothing changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fact_ledger.ledger.arbiter import Side, arbitrate_set
from fact_ledger.ledger.log.events import AUTH_POLICY, AUTH_USER
from fact_ledger.ledger.settlement import guarded
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Policy, Settings, load_settings

T = "2025-07-0{}T00:00:00Z"


def _app(path: Path, **policy: bool) -> LedgerApp:
    return LedgerApp(Settings(db=str(path), client="t", policy=Policy(**policy)))


@pytest.fixture
def settling(tmp_path: Path) -> Iterator[LedgerApp]:
    app = _app(tmp_path / "settling.db", auto_settle=True)
    yield app
    app.close()


def payloads(app: LedgerApp, type_: str) -> list[dict]:  # type: ignore[type-arg]
    import msgspec

    return [msgspec.structs.asdict(e.data) for e in app.store.read() if e.type == type_]


def test_the_switch_supersedes_the_losers_and_records_the_rule(settling: LedgerApp) -> None:
    old = settling.remember("The staging API listens on port 7070", event_time=T.format(1))["memory_id"]
    mid = settling.remember("The staging API listens on port 7071", event_time=T.format(2))["memory_id"]
    new = settling.remember("The staging API listens on port 8080", event_time=T.format(3))
    assert new["superseded"] == [mid] and new["status"] == "active"
    assert settling.read(old)["memory"]["status"] == "superseded"
    assert settling.read(mid)["memory"]["superseded_by"] == new["memory_id"]
    assert settling.status()["open_conflicts"] == 0
    for p in payloads(settling, "Superseded"):
        assert (p["rule"], p["authorization"]) == ("event_time", AUTH_POLICY) and "event_time" in p["reason"]
    assert [(p["resolution"], p["authorization"]) for p in payloads(settling, "ConflictResolved")] == [
        ("policy", AUTH_POLICY)
    ] * 2
    (entry,) = [
        e
        for v in settling.history(mid)["versions"]
        for e in v["events"]
        if e["type"] == "Superseded" and e["role"] == "stream"
    ]  # mid itself superseded (it beat old too)
    assert (entry["rule"], entry["authorization"]) == ("event_time", AUTH_POLICY)
    audited = settling.audit(type="Superseded")["events"]
    assert {(e["payload"]["rule"], e["payload"]["authorization"]) for e in audited} == {("event_time", AUTH_POLICY)}
    conflict = settling.conflicts(state="resolved")["conflicts"][0]
    assert settling.conflict_detail(conflict["conflict_id"])["conflict"]["resolution"] == "policy"


def test_a_writer_that_loses_is_superseded_at_once(settling: LedgerApp) -> None:
    current = settling.remember("the on-call engineer is Alice", event_time=T.format(5))["memory_id"]
    late = settling.remember("the on-call engineer is Bob", event_time=T.format(2))
    assert late["status"] == "superseded" and late["superseded"] == [late["memory_id"]]
    assert settling.read(late["memory_id"])["memory"]["superseded_by"] == current
    assert [r["memory_id"] for r in settling.find("on-call engineer")["results"]] == [current]


def test_protected_and_user_confirmed_members_keep_the_set_open(settling: LedgerApp) -> None:
    mine = settling.remember(
        "the cache port is 7000", source_type="user_confirmed", authorization=AUTH_USER, event_time=T.format(1)
    )["memory_id"]
    for i in range(3):
        reply = settling.remember(f"the cache port is {7001 + i}", event_time=T.format(2 + i))
        assert "superseded" not in reply and reply["conflicts"][0]["member_count"] == 2 + i
    asserted = settling.remember("the queue port is 5000", source_type="user_confirmed", event_time=T.format(1))
    assert "superseded" not in settling.remember("the queue port is 5001", event_time=T.format(2))
    assert settling.read(asserted["memory_id"])["memory"]["status"] == "active"
    assert settling.status()["open_conflicts"] == 2 and payloads(settling, "Superseded") == []
    assert settling.read(mine)["memory"]["status"] == "active"


def test_manual_review_keeps_the_set_open(tmp_path: Path) -> None:
    app = _app(tmp_path / "review.db", auto_settle=True, review_agent_conflicts=True)
    try:
        first = app.remember("the build agent count is 4", event_time=T.format(1))["memory_id"]
        reply = app.remember("the build agent count is 6", event_time=T.format(2))
        assert reply["conflicts"][0]["verdict"]["manual_review"] and "superseded" not in reply
        assert app.status()["open_conflicts"] == 1
        # A document's newer value leads without review (not two agents at the top): now it settles.
        doc = app.remember("the build agent count is 8", source_type="document_extracted", event_time=T.format(3))
        assert sorted(doc["superseded"]) == [first, reply["memory_id"]]
    finally:
        app.close()


def test_an_update_that_collides_settles_too(settling: LedgerApp) -> None:
    old = settling.remember("the deploy window is Friday", event_time=T.format(1))["memory_id"]
    other = settling.remember("lunch is served at noon", event_time=T.format(2))["memory_id"]
    reply = settling.update(other, content="the deploy window is Tuesday", event_time=T.format(3))
    assert reply["superseded"] == [old]
    assert settling.read(old)["memory"]["superseded_by"] == other


def test_off_by_default_and_off_changes_nothing(tmp_path: Path) -> None:
    assert Settings().policy.auto_settle is False and load_settings(env={}).policy.auto_settle is False
    replies = []
    for name, app in (
        ("default", LedgerApp(Settings(db=str(tmp_path / "d.db"), client="t"))),
        ("off", _app(tmp_path / "off.db", auto_settle=False)),
    ):
        try:
            for i in range(4):
                replies.append(app.remember(f"the sprint name is Falcon{i}", event_time=T.format(1 + i)))
            assert payloads(app, "Superseded") == [] and app.status()["open_conflicts"] == 1, name
            assert all("superseded" not in r for r in replies)
            assert [e.type for e in app.store.read()].count("ClaimCollided") == 3
        finally:
            app.close()


def test_the_switch_is_read_from_the_environment_and_the_config_file(tmp_path: Path) -> None:
    assert load_settings(env={"LEDGER_POLICY_AUTO_SETTLE": "yes"}).policy.auto_settle is True
    toml = tmp_path / "c.toml"
    toml.write_text("[policy]\nauto_settle = true\n")
    assert load_settings(env={"LEDGER_CONFIG": str(toml)}).policy.auto_settle is True


# -- the switch against random histories: only unguarded losers, nothing left that could settle, a
# rebuild that gives the same tables.
_VALUES = st.sampled_from(["7000", "7001", "7002", "7003"])
_STEP = st.tuples(
    st.sampled_from(["api", "cache", "both"]),
    _VALUES,
    st.sampled_from(["agent_generated", "document_extracted", "user_confirmed", "person"]),
    st.integers(1, 9),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(st.lists(_STEP, min_size=2, max_size=12))
def test_random_histories_settle_only_unguarded_losers_and_rebuild_the_same(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str, str, int]]
) -> None:
    app = _app(tmp_path_factory.mktemp("settle") / "l.db", auto_settle=True)
    try:
        for subject, value, source, day in steps:
            person = source == "person"
            content = (
                "the api port is {0}; the cache port is {0}"
                if subject == "both"  # two sets at once
                else f"the {subject} port is {{0}}"
            ).format(value)
            app.remember(
                content,
                event_time=T.format(day),
                source_type="user_confirmed" if person else source,
                authorization=AUTH_USER if person else "",
            )
        for p in payloads(app, "Superseded"):
            assert p["authorization"] == AUTH_POLICY
            loser = app.conn.execute(
                "SELECT source_type, protection FROM memories WHERE stream_id=?", (p["loser"],)
            ).fetchone()
            assert loser[0] != "user_confirmed" and loser[1] == "normal"
        for c in app.conflicts(state="open", limit=200)["conflicts"]:
            rows = app.conn.execute(
                "SELECT m.memory_id, m.source_type, m.protection, m.event_time, m.confidence, m.recorded_at, "
                "m.confirmed_via, m.stream_id, m.status FROM conflict_members c JOIN memories m USING(memory_id) "
                "WHERE c.conflict_id=? AND c.active=1",
                (c["conflict_id"],),
            ).fetchall()
            sides = [
                Side(
                    memory_id=r[0],
                    source_type=r[1],
                    protection=r[2],
                    event_time=r[3],
                    confidence=r[4],
                    recorded_at=r[5],
                    confirmed_via=r[6],
                )
                for r in rows
            ]
            blocked = any(s.protection != "normal" or s.source_type == "user_confirmed" for s in sides)
            # a member that states two facts ("the api port is …; the cache port is …") is never
            # superseded by the policy: its set may stay open
            several = app.conn.execute(
                "SELECT count(*) FROM claims WHERE memory_id IN (SELECT memory_id FROM conflict_members "
                "WHERE conflict_id=? AND active=1) GROUP BY memory_id ORDER BY 1 DESC LIMIT 1",
                (c["conflict_id"],),
            ).get
            # else the switch would have settled it
            verdict = arbitrate_set(sides, review_agent_conflicts=False)
            assert blocked or verdict["manual_review"] or (several or 0) > 1, c
        stale = app.conn.execute(  # a superseded member always left its open sets
            "SELECT count(*) FROM conflict_members c JOIN conflicts s USING(conflict_id) JOIN memories m "
            "USING(memory_id) WHERE c.active=1 AND s.state<>'resolved' AND m.status<>'active'"
        ).get
        assert stale == 0
        incremental = app.runner.checksums()
        app.rebuild()
        assert app.runner.checksums() == incremental
    finally:
        app.close()


def test_guarded_names_what_no_policy_may_supersede() -> None:
    from fact_ledger.ledger.facts import MemoryFacts

    base = {"memory_id": 1, "stream_id": "s", "version": 1, "status": "active"}
    assert not guarded(MemoryFacts(**base, protection="normal", source_type="agent_generated"))
    assert guarded(MemoryFacts(**base, protection="protected", source_type="agent_generated"))
    assert guarded(MemoryFacts(**base, protection="locked", source_type="user_confirmed"))
    assert guarded(MemoryFacts(**base, protection="normal", source_type="user_confirmed"))  # an agent's label too


@pytest.mark.parametrize("policy", [{"settle_changes": True}, {"auto_settle": True}])
def test_a_note_of_several_facts_is_never_superseded_by_a_policy(tmp_path: Path, policy: dict[str, bool]) -> None:
    """A later "Standup is at 11am" superseded the whole note, and with it the staging port and
    the billing owner that had not changed: ``find`` answered nothing for them. The set stays
    open, led by the later value, for a person (who may update the note)."""
    app = _app(tmp_path / "l.db", **policy)
    try:
        note = app.remember(
            "Notes from sync: staging API listens on port 8080. Standup is at 10am. Billing owner is Alice.",
            source_type="agent_generated",
            event_time="2026-11-01T09:00:00Z",
        )["memory_id"]
        later = app.remember("Standup is at 11am", source_type="agent_generated", event_time="2026-11-10T09:00:00Z")
        assert "superseded" not in later and later["conflicts"][0]["leader_id"] == later["memory_id"]
        assert app.read(note)["memory"]["status"] == "active"
        assert [r["memory_id"] for r in app.find("staging api port")["results"]][:1] == [note]
        older = app.remember("Standup is at 9am", source_type="agent_generated", event_time="2026-10-01T09:00:00Z")
        assert older["status"] == "active"  # the set it joins has a member the policy may not supersede
        single = app.remember(
            "The deploy window is Friday", source_type="agent_generated", event_time="2026-11-01T09:00:00Z"
        )
        changed = app.remember(
            "The deploy window is Thursday", source_type="agent_generated", event_time="2026-11-10T09:00:00Z"
        )
        assert changed["superseded"] == [single["memory_id"]]  # one fact: still settled
    finally:
        app.close()


def test_two_facts_joined_by_and_are_two_facts(tmp_path: Path) -> None:
    """ "The standup is at 10am and the billing service owner is Alice" read as the standup alone
    (the clause after "and" had a subject of three words), so a later standup time superseded the
    sentence and the owner with it."""
    from fact_ledger.ledger.claims import extract_claims

    said = "The standup is at 10am and the billing service owner is Alice."
    assert len({c.key for c in extract_claims(said)}) == 2
    app = _app(tmp_path / "l.db", settle_changes=True)
    try:
        both = app.remember(said, source_type="agent_generated", event_time="2026-11-01T09:00:00Z")["memory_id"]
        app.remember("The standup is at 11am.", source_type="agent_generated", event_time="2026-11-10T09:00:00Z")
        assert app.read(both)["memory"]["status"] == "active"
    finally:
        app.close()
