"""A statement that a value no longer holds ends the memory that held it (ledger/negation.py,
docs/contract.md ``remember``): "Alice is no longer the owner of the billing service" retires
"Alice owns the billing service", brings back nothing, and a denial that arrives late, one in
doubt, or one that matches a protected or several memories ends nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from fact_ledger.ledger.decide import ENDED
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.ledger.negation import denies_only, ended_claims
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Policy, Settings
from tests.conftest import ledger_cli
from tests.test_retractions import assert_rebuild_reproduces, status

EARLY = "2026-03-15T00:00:00Z"


def current(app: LedgerApp, query: str) -> list[str]:
    return [r["content"] for r in app.find(query)["results"]]


@pytest.mark.parametrize(
    ("denial", "held"),
    [
        ("Alice is no longer the owner of the billing service", "Alice owns the billing service"),
        ("Alice isn't the owner of the billing service any more", "Alice is the owner of the billing service"),
        ("The staging API does not listen on port 8080 anymore", "The staging API listens on port 8080"),
        ("The staging API no longer listens on port 8080", "The staging API listens on port 8080"),
        ("Bob doesn't report to Dan any more.", "Bob reports to Dan"),
        ("The deploy window is no longer Friday", "The deploy window is Friday"),
        ("Erin is no longer the team lead", "The team lead is Erin"),
        ("计费服务的负责人不再是Alice了", "计费服务的负责人是Alice"),
        ("staging API不再使用端口8080", "staging API使用端口8080"),
        # a fact that stopped: "stopped/ceased V-ing" is "no longer Vs"
        ("The staging API stopped listening on port 8080.", "The staging API listens on port 8080"),
        ("The staging API has stopped using port 8080", "The staging API uses port 8080"),
        ("Alice stopped owning the billing service", "Alice owns the billing service"),
        ("Alice stopped being the owner of the billing service", "Alice owns the billing service"),
        ("staging API停止监听8080端口了", "staging API监听8080端口"),
        # why, or since when, it ended does not make the value hold again
        ("Alice is no longer the owner of the billing service since the reorg.", "Alice owns the billing service"),
        ("Bob doesn't report to Dan any more, since the reorg", "Bob reports to Dan"),
        ("The staging API no longer listens on port 8080 after the migration", "The staging API listens on port 8080"),
        ("Bob no longer reports to Dan because of the reorg", "Bob reports to Dan"),
        # the holder named first, the version of what we run, a Latin name against Chinese
        ("Carol is no longer my manager", "My manager is Carol"),
        ("Carol is not our team lead anymore", "The team lead is Carol"),
        ("We're no longer on Postgres 16", "Our Postgres version is 16"),
        ("We don't run Postgres 16 any more", "Our Postgres version is 16"),
        ("Alice不再负责计费服务了", "计费服务的负责人是Alice"),
        ("Alice不再负责计费服务", "Alice负责计费服务"),
        ("站会不再是10点了", "站会时间是10点"),  # 站会 ends in 会: no "will"
    ],
)
def test_a_denial_ends_the_memory_holding_the_value(app: LedgerApp, denial: str, held: str) -> None:
    old = app.remember(held, source_type="agent_generated")["memory_id"]
    other = app.remember("Deploys freeze on Fridays", source_type="agent_generated")["memory_id"]
    r = app.remember(denial, source_type="agent_generated")
    assert r["retracted"] == [old] and "reinstated" not in r
    assert (status(app, old), status(app, other)) == ("retired", "active")
    memory = app.read(old)["memory"]
    assert memory["retired_by"] == r["memory_id"] and memory["status_reason"] == ENDED
    assert held not in current(app, held)
    assert_rebuild_reproduces(app)


def test_an_ended_change_brings_back_nothing(tmp_path: Path) -> None:
    """Unlike "the move is cancelled", "Bob is no longer the owner" does not make Alice the owner
    again: the value Bob's memory replaced stays replaced."""
    shipped = Policy(settle_changes=True)  # tests/conftest.py pins review mode
    settles = LedgerApp(Settings(db=str(tmp_path / "l.db"), client="test", agent_id="pytest", policy=shipped))
    try:
        alice = settles.remember("Alice owns the billing service", event_time="2026-01-05T09:00:00Z")["memory_id"]
        bob = settles.remember("Bob owns the billing service", event_time="2026-02-05T09:00:00Z")
        assert bob["superseded"] == [alice]
        r = settles.remember("Bob is no longer the owner of the billing service", event_time="2026-03-05T09:00:00Z")
        assert r["retracted"] == [bob["memory_id"]] and "reinstated" not in r
        assert status(settles, alice) == "superseded"
    finally:
        settles.close()


def test_a_denial_that_arrives_late_ends_nothing_stated_after_it(app: LedgerApp) -> None:
    owner = app.remember("Alice owns the billing service", event_time="2026-03-01T09:00:00Z")["memory_id"]
    r = app.remember("Alice is no longer the owner of the billing service", event_time="2026-01-01T09:00:00Z")
    assert "retracted" not in r and status(app, owner) == "active"


@pytest.mark.parametrize(
    "statement",
    [
        "Is Alice no longer the owner of the billing service?",
        "Alice might not be the owner of the billing service",
        "If Alice is not the owner of the billing service, ask Bob",
        "Alice owns the billing service",
        "It is not true that Alice is not the owner of the billing service",
        "Carol is not the owner of the billing service",
        # a change still to come has ended nothing yet
        "Alice will no longer be the owner of the billing service",
        "Starting Monday Alice is no longer the owner of the billing service",
        # a reason is read only after a statement that something ended
        "Alice is not the owner of the billing service since the reorg",
        # ... and is no reason when it names a time to come
        "Alice is no longer the owner of the billing service after the migration next month",
        "Alice is no longer the owner of the billing service after Friday",
        "Alice is no longer the owner of the billing service as of tomorrow",
        "Alice no longer owns the billing service after she leaves",
        "Alice is no longer the owner of the billing service after the reorg is approved",  # a condition
        "Alice is no longer the owner of the billing service after the reorg in March",  # a date that may come
        "Alice is no longer the owner of the billing service due to the reorg in Q3",
        # a tag question asks
        "Alice isn't the owner of the billing service any more, is she",
        "Alice no longer owns the billing service, does she?",
        # a verb no fact is stated with
        "Alice stopped worrying about the billing service",
    ],
)
def test_what_denies_nothing_held_ends_nothing(app: LedgerApp, statement: str) -> None:
    owner = app.remember("Alice owns the billing service", source_type="agent_generated")["memory_id"]
    r = app.remember(statement, source_type="agent_generated")
    assert "retracted" not in r and status(app, owner) == "active"


@pytest.mark.parametrize(
    ("held", "denial"),
    [
        ("The standup is at 10am", "The standup isn't at 10am today"),
        ("The meeting is on Wednesday", "The meeting is not on Wednesday next week"),
        ("The API listens on port 8080", "The API does not listen on port 8080 in production"),
        ("The API listens on port 8080", "The API doesn't listen on port 8080 during maintenance"),
        ("The version is 2.3", "The version isn't 2.3 on staging"),
        ("Alice owns the billing service", "Alice isn't the owner of the billing service for the EU region"),
        ("Alice owns the billing service", "I don't think Alice owns the billing service"),
        ("The budget is 5000 dollars", "The budget isn't 5000 dollars, I think"),
        ("Alice owns the billing service", "Alice isn't the owner of the billing service, right"),
        ("Alice owns the billing service", "Alice isn't the owner of the billing service, Bob said"),
        ("计费服务的负责人是Alice", "计费服务的负责人不是Alice吧"),
        ("计费服务的负责人是Alice", "听说计费服务的负责人不再是Alice了"),
        ("计费服务的负责人是Alice", "计费服务的负责人暂时不是Alice"),
    ],
)
def test_a_denial_that_says_more_ends_nothing(app: LedgerApp, held: str, denial: str) -> None:
    """A time, a scope, a source or a doubt beside the denial ("today", "in production", "Bob
    said", "I think", 吧, 听说, 暂时): the value may still hold, so the fact stays current."""
    old = app.remember(held, source_type="agent_generated", event_time="2026-01-05T09:00:00Z")["memory_id"]
    r = app.remember(denial, source_type="agent_generated", event_time="2026-01-06T09:00:00Z")
    assert "retracted" not in r and status(app, old) == "active", r


@pytest.mark.parametrize(
    ("held", "statement"),
    [
        ("staging API的端口是8080", "staging API的端口不是8080吗"),  # asks, and means it is
        ("计费服务的负责人是Alice", "计费服务的负责人将不再是Alice"),  # will be: not yet
        ("The staging API listens on port 8080", "The staging API isn't listening on port 8080, is it"),
        ("The staging API listens on port 8080", "The staging API no longer listens on port 8080, does it"),
    ],
)
def test_a_question_or_a_change_to_come_ends_nothing(app: LedgerApp, held: str, statement: str) -> None:
    old = app.remember(held, source_type="agent_generated", event_time="2026-01-05T09:00:00Z")["memory_id"]
    r = app.remember(statement, source_type="agent_generated", event_time="2026-01-06T09:00:00Z")
    assert "retracted" not in r and status(app, old) == "active", r


@pytest.mark.parametrize(
    ("held", "denial"),
    [
        ("The orders API uses Redis and Kafka", "The orders API no longer uses Redis"),
        (
            "The staging API listens on port 8080. Alice is the owner of the staging API.",
            "The staging API no longer listens on port 8080",
        ),
        ("staging API使用端口8080，负责人是Alice", "staging API不再使用端口8080"),
    ],
)
def test_a_memory_that_holds_more_than_the_denied_value_is_named_not_ended(
    app: LedgerApp, held: str, denial: str
) -> None:
    """Ending it would end what else it says (Kafka, the owner): it is a candidate instead."""
    old = app.remember(held, source_type="agent_generated", event_time="2026-01-05T09:00:00Z")["memory_id"]
    r = app.remember(denial, source_type="agent_generated", event_time="2026-01-06T09:00:00Z")
    assert "retracted" not in r and status(app, old) == "active", r
    assert [c["memory_id"] for c in r["retraction_candidates"]] == [old]


def test_a_denial_reads_the_subject_the_write_gives(app: LedgerApp) -> None:
    """Stored with its subject ("listens on port 7070", subject "staging API"), the fact was never
    ended by a denial sent with the same subject: the denial's claims were read without it."""
    old = app.remember("Listens on port 7070", subject="staging API", event_time="2026-01-05T09:00:00Z")
    r = app.remember("No longer listens on port 7070", subject="staging API", event_time="2026-01-06T09:00:00Z")
    assert r["retracted"] == [old["memory_id"]]


def test_a_chinese_denial_of_more_than_one_clause_ends_nothing(app: LedgerApp) -> None:
    old = app.remember("计费服务的负责人是Alice", event_time="2026-01-05T09:00:00Z")["memory_id"]
    r = app.remember("计费服务的负责人不再是Alice了，下个季度再说", event_time="2026-01-06T09:00:00Z")
    assert "retracted" not in r and status(app, old) == "active"
    r = app.remember("计费服务的负责人不再是Alice了。", event_time="2026-01-06T10:00:00Z")
    assert r["retracted"] == [old]


def test_a_denial_is_read_with_its_verb_in_the_third_person() -> None:
    from fact_ledger.ledger.negation import _affirmed

    assert _affirmed("The worker doesn't have 16 GB of memory any more") == "The worker has 16 GB of memory"
    assert _affirmed("The job does not reach the replica") == "The job reaches the replica"
    assert _affirmed("The job stopped reading the replica") is None  # "read" states no fact here
    assert _affirmed("The proxy stopped running on port 80") == "The proxy runs on port 80"
    assert _affirmed("The proxy has ceased serving on port 443") == "The proxy serves on port 443"
    assert _affirmed("The job stopped using the replica") == "The job uses the replica"


def test_a_denial_with_a_reason_still_says_no_more_than_the_end() -> None:
    """The reason is not read as more than the denial ("the reorg" names no scope or time the
    value would still hold in), but a time or scope beside the denial still is."""
    held, claim = "Alice owns the billing service", ended_claims("Alice no longer owns the billing service")[0]
    assert denies_only("Alice no longer owns the billing service since the reorg", held, claim)
    assert not denies_only("Alice no longer owns the billing service in the EU region", held, claim)
    assert not denies_only("Alice no longer owns the billing service in the EU since the reorg", held, claim)


def test_a_value_the_denial_states_itself_is_a_disagreement_not_an_end() -> None:
    """ "Alice does not like coffee" gives the taste a value (false): a claim set settles it."""
    assert ended_claims("Alice does not like coffee") == ()
    assert [c.value_norm for c in ended_claims("The cache is not enabled")] == ["true"]


def test_a_protected_memory_is_named_not_ended(app: LedgerApp) -> None:
    ledger_cli("remember", "Alice owns the billing service", "--db", app.settings.db, check=True)  # a person's
    assert app.read(1)["memory"]["protection"] == "locked"
    r = app.remember("Alice is no longer the owner of the billing service", source_type="agent_generated")
    assert "retracted" not in r and status(app, 1) == "active"
    assert r["retraction_candidates"] == [{"memory_id": 1, "content": "Alice owns the billing service"}]
    assert r["notices"] == [
        "says 1 active memory(ies) no longer hold, none retracted: "
        "retract one with ref_id + retracts (see retraction_candidates)"
    ]


def test_the_cli_says_what_a_denial_ended_and_what_it_could_not(tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    ledger_cli("remember", "Alice owns the billing service", "--source-type", "agent_generated", "--db", db, check=True)
    done = ledger_cli("remember", "Alice is no longer the owner of the billing service", "--db", db, check=True)
    assert "retracted #1" in done.stdout and "reinstated" not in done.stdout
    # a person at the CLI ends a fact of theirs (locked) by saying so; two memories holding the
    # value (one says more besides) are named, and neither is retired
    ledger_cli("remember", "Bob owns the payroll service", "--db", db, check=True)
    ledger_cli("remember", "Bob owns the payroll service. Deploys freeze on Fridays.", "--db", db, check=True)
    done = ledger_cli("remember", "Bob is no longer the owner of the payroll service", "--db", db)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert not any(line.startswith("  retracted") for line in lines)
    assert "  none retracted; name the one it ends with --retracts ID:" in lines
    named = [line.strip().split(" ", 1) for line in lines if line.startswith("    #")]
    assert [text for _, text in named] == [
        "Bob owns the payroll service",
        "Bob owns the payroll service. Deploys freeze on Fridays.",
    ]
    assert "ref_id" not in done.stdout  # the agent's notice: the lines above say it to a person
    first = named[0][0].lstrip("#")
    done = ledger_cli("remember", "Bob is no longer the owner of the payroll service", "--retracts", first, "--db", db)
    assert f"retracted #{first}" in done.stdout, done.stdout + done.stderr


def test_a_promoted_working_note_that_denies_a_value_ends_it(app: LedgerApp) -> None:
    """A working note "Alice is no longer the owner …" left the fact current once promoted, where
    the same text remembered long-term ended it."""
    old = app.remember("Alice owns the billing service", source_type="agent_generated")["memory_id"]
    note = app.remember("Alice is no longer the owner of the billing service", tier="working", session_id="s")
    assert status(app, old) == "active"  # a working note takes no part in claims
    promoted = app.promote(note["memory_id"], authorization=AUTH_USER)
    assert promoted["retracted"] == [old] and status(app, old) == "retired"
    assert app.read(old)["memory"]["retired_by"] == promoted["promoted_to"]
    assert_rebuild_reproduces(app)


def test_an_undone_change_leaves_the_value_current(app: LedgerApp) -> None:
    """ "We moved the standup to 11am but moved it back" read as the standup at 11am: a later
    value of the slot, so the 10am it had left was superseded."""
    held = app.remember("The standup is at 10am", source_type="agent_generated")["memory_id"]
    r = app.remember("We moved the standup to 11am but moved it back", source_type="agent_generated")
    assert r["conflicts_total"] == 0 and "superseded" not in r and status(app, held) == "active"
    assert_rebuild_reproduces(app)


def test_a_value_stated_as_of_before_its_denial_arrives_ended(app: LedgerApp) -> None:
    """ "Alice owns …" (March 15), recorded after "Alice is no longer the owner …" (said now),
    was stored active: the denied value was current again, beside its denial."""
    app.remember("The billing service owner is Alice", source_type="agent_generated", event_time="2026-03-01T00:00:00Z")
    denial = app.remember("Alice is no longer the owner of the billing service", source_type="agent_generated")
    late = app.remember(
        "The billing service owner is Alice", source_type="agent_generated", event_time="2026-03-15T00:00:00Z"
    )
    assert late["status"] == "retired" and "retracted" not in late
    assert any(f"#{denial['memory_id']}" in n for n in late["notices"])
    memory = app.read(late["memory_id"])["memory"]
    assert memory["retired_by"] == denial["memory_id"] and memory["status_reason"] == ENDED
    assert current(app, "billing service owner") == ["Alice is no longer the owner of the billing service"]
    after = app.remember("The billing service owner is Alice", source_type="agent_generated")  # said now: it holds
    assert after["status"] == "active"
    assert_rebuild_reproduces(app)


def test_a_denial_that_arrives_first_ends_a_value_stated_before_it(app: LedgerApp) -> None:
    """ "Alice is no longer the owner …" with nothing to end, then "The billing service owner is
    Alice" as of before it: the value was stored active, current beside its denial."""
    denial = app.remember("Alice is no longer the owner of the billing service", source_type="agent_generated")
    late = app.remember(
        "The billing service owner is Alice", source_type="agent_generated", event_time="2026-03-15T00:00:00Z"
    )
    assert late["status"] == "retired" and app.read(late["memory_id"])["memory"]["retired_by"] == denial["memory_id"]
    assert current(app, "billing service owner") == ["Alice is no longer the owner of the billing service"]
    zh = app.remember("计费服务的负责人不再是Bob了", source_type="agent_generated")
    said = app.remember("计费服务的负责人是Bob", source_type="agent_generated", event_time="2026-03-15T00:00:00Z")
    assert said["status"] == "retired" and app.read(said["memory_id"])["memory"]["retired_by"] == zh["memory_id"]
    assert_rebuild_reproduces(app)


@pytest.mark.parametrize(
    "denial",
    [
        "I think Alice is no longer the owner of the billing service",
        "Alice is no longer the owner of the billing service in production",
        "Alice is no longer the owner of the billing service, Bob said",
        "听说计费服务的负责人不再是Alice了",
    ],
)
def test_a_denial_that_says_more_ends_nothing_whichever_arrives_first(app: LedgerApp, denial: str) -> None:
    """A hedged, scoped or reported denial that came first retired the value stated before it,
    though the same denial coming second ends nothing."""
    app.remember(denial, source_type="agent_generated")
    late = app.remember("The billing service owner is Alice", source_type="agent_generated", event_time=EARLY)
    assert late["status"] == "active"
    zh = app.remember("计费服务的负责人是Alice", source_type="agent_generated", event_time=EARLY)
    assert zh["status"] == "active"


def test_an_edited_denial_denies_what_it_says_now(app: LedgerApp) -> None:
    """ "Alice is no longer the owner …" edited to name Bob kept denying Alice."""
    denial = app.remember("Alice is no longer the owner of the billing service", source_type="agent_generated")
    app.update(denial["memory_id"], content="Bob is no longer the owner of the billing service", expected_version=1)
    alice = app.remember("The billing service owner is Alice", source_type="agent_generated", event_time=EARLY)
    assert alice["status"] == "active"
    bob = app.remember("The billing service owner is Bob", source_type="agent_generated", event_time=EARLY)
    assert bob["status"] == "retired"
    assert_rebuild_reproduces(app)


def test_an_erased_denial_that_arrived_first_ends_nothing(app: LedgerApp) -> None:
    denial = app.remember("Alice is no longer the owner of the billing service", source_type="agent_generated")
    app.erase(denial["memory_id"], reason="wrong ledger", authorization=AUTH_USER)
    late = app.remember(
        "The billing service owner is Alice", source_type="agent_generated", event_time="2026-03-15T00:00:00Z"
    )
    assert late["status"] == "active"
    assert_rebuild_reproduces(app)


def test_a_retracted_denial_ends_nothing_that_arrives_late(app: LedgerApp) -> None:
    app.remember("The billing service owner is Alice", source_type="agent_generated", event_time="2026-03-01T00:00:00Z")
    denial = app.remember("Alice is no longer the owner of the billing service", source_type="agent_generated")
    app.retire(denial["memory_id"], reason="it was a mistake", authorization=AUTH_USER)
    late = app.remember(
        "The billing service owner is Alice", source_type="agent_generated", event_time="2026-03-15T00:00:00Z"
    )
    assert late["status"] == "active"
    assert_rebuild_reproduces(app)


def test_a_promoted_note_stated_before_a_denial_arrives_ended(app: LedgerApp) -> None:
    app.remember("Alice owns the billing service", source_type="agent_generated", event_time="2026-03-01T00:00:00Z")
    note = dict(tier="working", session_id="s1", source_type="agent_generated")
    said = app.remember("Alice owns the billing service", turn=2, event_time="2026-03-10T00:00:00Z", **note)
    denied = app.remember("Alice is no longer the owner of the billing service", turn=3, **note)
    assert app.promote(denied["memory_id"])["retracted"]
    promoted = app.promote(said["memory_id"])
    assert promoted["status"] == "retired" and "arrived late" in promoted["notices"][0]
    assert current(app, "billing service owner") == ["Alice is no longer the owner of the billing service"]


def test_a_late_note_of_several_facts_is_not_ended_by_a_denial_of_one(app: LedgerApp) -> None:
    """A back-dated note holding a denied value and two others was stored retired, and its other
    facts could not be found."""
    app.remember("The billing service owner is Alice", source_type="agent_generated", event_time="2026-10-01T00:00:00Z")
    app.remember("Alice is no longer the owner of the billing service", source_type="agent_generated")
    note = app.remember(
        "Notes from sync: the billing service owner is Alice. Standup is at 10am. Staging API listens on port 8080.",
        source_type="agent_generated",
        event_time="2026-10-03T00:00:00Z",
    )
    assert note["status"] == "active"
    assert [r["memory_id"] for r in app.find("staging API port")["results"]][:1] == [note["memory_id"]]
