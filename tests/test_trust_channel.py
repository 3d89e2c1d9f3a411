"""Trust an agent cannot fake: implausible event times are refused, and a user_confirmed label
from the agent channel neither locks the memory nor wins on rule 1."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest
from mcp import Client

from fact_ledger.ledger import clock
from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.log.events import AUTH_AGENT, AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.writes import AGENT_ASSERTED_NOTICE
from fact_ledger.server.config import Settings, load_settings
from fact_ledger.server.mcp.server import build_server
from tests.conftest import ledger_cli


def _in(hours: float) -> str:
    return clock.format_time(datetime.now(UTC) + timedelta(hours=hours))


@pytest.mark.parametrize("when", ["9999-12-31T00:00:00Z", "1899-12-31T23:59:59Z", "0001-01-01T00:00:00Z"])
def test_far_future_and_far_past_event_times_are_refused_and_nothing_is_written(app: LedgerApp, when: str) -> None:
    before = app.store.last_position()
    with pytest.raises(InvalidInput) as refused:
        app.remember("The staging API listens on port 7070", event_time=when)
    assert refused.value.field == "event_time"
    assert app.store.last_position() == before
    memory = app.remember("The staging API listens on port 7071")["memory_id"]
    with pytest.raises(InvalidInput):
        app.update(memory, event_time=when)
    assert app.read(memory)["memory"]["version"] == 1


def test_event_times_within_the_skew_are_accepted_and_the_skew_is_configurable(db_path: Path) -> None:
    app = LedgerApp(Settings(db=str(db_path), client="t"))
    assert app.remember("the backup window opens at 02:00", event_time=_in(20))["ok"]
    assert app.remember("the census was taken", event_time="1901-03-31T00:00:00Z")["ok"]
    with pytest.raises(InvalidInput):
        app.remember("the release ships", event_time=_in(30))
    app.close()
    strict = LedgerApp(Settings(db=str(db_path), client="t", event_time_skew_s=60))
    with pytest.raises(InvalidInput):
        strict.remember("the release ships tomorrow", event_time=_in(1))
    strict.close()


def test_an_agent_asserted_user_confirmed_neither_locks_nor_wins_on_rule_one(app: LedgerApp) -> None:
    older = app.remember(
        "The staging API listens on port 7070", source_type="user_confirmed", event_time="2025-07-01T00:00:00Z"
    )
    assert older["authorization"] == "agent_asserted" and len(older["notices"]) == 1
    memory = app.read(older["memory_id"])["memory"]
    assert (memory["source_type"], memory["protection"]) == ("user_confirmed", "normal")
    newer = app.remember("The staging API listens on port 8080", event_time="2025-07-02T00:00:00Z")
    (conflict,) = newer["conflicts"]
    assert conflict["leader_id"] == newer["memory_id"] and conflict["verdict"]["rule"] == "event_time"
    verdict = app.compare(older["memory_id"], newer["memory_id"])["verdict"]
    assert verdict["winner_id"] == newer["memory_id"]
    assert verdict["reasons"][0].startswith("user_confirmed/locked protection: tie")
    app.update(older["memory_id"], content="The staging API listens on port 7071")  # not locked: no refusal


def test_an_agent_asserted_label_is_trusted_as_the_agents_word_on_rule_three(app: LedgerApp) -> None:
    t = "2025-07-01T00:00:00Z"
    asserted = app.remember("the cache port is 7000", source_type="user_confirmed", event_time=t)["memory_id"]
    document = app.remember("the cache port is 7001", source_type="document_extracted", event_time=t, confidence=0.7)[
        "memory_id"
    ]
    verdict = app.compare(asserted, document)["verdict"]
    assert verdict["winner_id"] == document and verdict["rule"] == "source_type"


def test_an_agent_asserted_label_does_not_outrank_the_agents_word_on_confidence(app: LedgerApp) -> None:
    """The label was stored with the confidence a person's confirmation gets (1.0): against an
    agent's write at the same time it led "by confidence (1 > 0.45)", though ranked as the agent's word."""
    t = "2025-07-01T00:00:00Z"
    plain = app.remember("the cache port is 7000", event_time=t)
    asserted = app.remember("the cache port is 7001", source_type="user_confirmed", event_time=t)
    assert (
        app.read(asserted["memory_id"])["memory"]["confidence"] == app.read(plain["memory_id"])["memory"]["confidence"]
    )
    assert app.read(asserted["memory_id"])["memory"]["confidence"] == 0.45
    verdict = app.compare(plain["memory_id"], asserted["memory_id"])["verdict"]
    assert verdict["rule"] != "confidence", verdict["reasons"]
    a_person = app.remember(
        "the cache port is 7002", source_type="user_confirmed", event_time=t, authorization=AUTH_USER
    )
    assert app.read(a_person["memory_id"])["memory"]["confidence"] == 1.0  # a person's confirmation: as before


def test_a_user_channel_confirmation_still_locks_and_wins_on_rule_one(app: LedgerApp) -> None:
    confirmed = app.remember(
        "The staging API listens on port 7070",
        source_type="user_confirmed",
        event_time="2025-07-01T00:00:00Z",
        authorization=AUTH_USER,
    )
    assert "notices" not in confirmed and app.read(confirmed["memory_id"])["memory"]["protection"] == "locked"
    newer = app.remember("The staging API listens on port 8080", event_time="2025-07-02T00:00:00Z")
    (conflict,) = newer["conflicts"]
    assert conflict["leader_id"] == confirmed["memory_id"]
    assert conflict["verdict"]["rule"] == "user_confirmed/locked protection"


def test_an_agent_channel_confirm_locks_against_changes_but_ranks_as_the_agents_word(app: LedgerApp) -> None:
    """``confirm`` is an explicit governance action: from the agent channel it still locks the memory
    against unauthorised changes, but rule 1 counts only a confirmation a person gave."""
    older = app.remember("the cache port is 7000", event_time="2025-07-01T00:00:00Z")["memory_id"]
    app.confirm(older, authorization=AUTH_AGENT)
    assert app.read(older)["memory"]["protection"] == "locked"
    newer = app.remember("the cache port is 7001", event_time="2025-07-02T00:00:00Z")["memory_id"]
    assert app.compare(older, newer)["verdict"]["winner_id"] == newer
    app.confirm(older, authorization=AUTH_USER)  # the user confirms it: now it counts
    verdict = app.compare(older, newer)["verdict"]
    assert verdict["winner_id"] == older and verdict["rule"] == "user_confirmed/locked protection"


def test_the_skew_comes_from_the_environment_and_nonsense_is_refused() -> None:
    assert load_settings(env={"LEDGER_EVENT_TIME_SKEW_S": "3600"}).event_time_skew_s == 3600
    assert load_settings(env={}).event_time_skew_s == 86_400
    for bad in ("-1", "soon", str(10**12)):
        with pytest.raises(InvalidInput) as refused:
            load_settings(env={"LEDGER_EVENT_TIME_SKEW_S": bad})
        assert refused.value.field == "event_time_skew_s"


# -- through the agent's MCP tool and through the CLI ---------------------------------------------
def _body(result: mcp_types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    return result.structured_content


@pytest.mark.anyio
async def test_over_mcp_far_event_times_are_refused_and_a_user_confirmed_label_is_agent_asserted(
    app: LedgerApp,
) -> None:
    async with Client(build_server(app)) as c:

        async def memory(action: str, data: dict[str, Any]) -> dict[str, Any]:
            return _body(await c.call_tool("memory", {"action": action, "data": data}))

        for when in ("9999-12-31T00:00:00Z", "1850-01-01"):
            refused = await memory("remember", {"content": "The staging API listens on port 7070", "event_time": when})
            assert refused["error"]["code"] == "invalid_input" and refused["error"]["field"] == "event_time"
        assert app.store.last_position() == 0
        asserted = await memory(
            "remember",
            {
                "content": "The staging API listens on port 7070",
                "source_type": "user_confirmed",
                "event_time": "2025-07-01T00:00:00Z",
            },
        )
        assert asserted["authorization"] == "agent_asserted"
        assert asserted["notices"] == [AGENT_ASSERTED_NOTICE]
        stored = (await memory("read", {"memory_id": asserted["memory_id"]}))["memory"]
        assert (stored["source_type"], stored["protection"]) == ("user_confirmed", "normal")
        refused = await memory("update", {"memory_id": asserted["memory_id"], "event_time": "9999-01-01T00:00:00Z"})
        assert refused["error"]["code"] == "invalid_input" and refused["error"]["field"] == "event_time"
        newer = await memory(
            "remember", {"content": "The staging API listens on port 8080", "event_time": "2025-07-02T00:00:00Z"}
        )
        assert newer["conflicts"][0]["leader_id"] == newer["memory_id"]
    (recorded,) = [e.data for e in app.store.read() if e.type == "MemoryRecorded" and e.data.content.endswith("7070")]
    assert recorded.authorization == AUTH_AGENT and recorded.protection == "normal"


def test_at_the_cli_far_event_times_are_refused_and_a_statement_is_the_users_and_wins(db_path: Path) -> None:
    db = str(db_path)
    guess = ledger_cli(
        "remember",
        "The staging API listens on port 7070",
        "--source-type",
        "agent_generated",
        "--event-time",
        "2025-07-02T00:00:00Z",
        "--db",
        db,
        "--json",
        check=True,
    )
    for when in ("9999-12-31T00:00:00Z", "1899-12-31T23:59:59Z"):
        refused = ledger_cli(
            "remember", "The staging API listens on port 6060", "--event-time", when, "--db", db, "--json"
        )
        assert refused.returncode == 1
        assert json.loads(refused.stdout)["error"]["field"] == "event_time"
    stated = json.loads(
        ledger_cli(
            "remember",
            "The staging API listens on port 8080",
            "--event-time",
            "2025-07-01T00:00:00Z",
            "--db",
            db,
            "--json",
            check=True,
        ).stdout
    )
    assert "notices" not in stated and "authorization" not in stated
    (conflict,) = stated["conflicts"]
    assert conflict["leader_id"] == stated["memory_id"]  # older, but the user's own word
    assert conflict["verdict"]["rule"] == "user_confirmed/locked protection"
    app = LedgerApp(Settings(db=db, client="t"))
    try:
        assert [e.type for e in app.store.read()].count("MemoryRecorded") == 2  # the refusals wrote nothing
        assert app.read(stated["memory_id"])["memory"]["protection"] == "locked"
        assert app.read(json.loads(guess.stdout)["memory_id"])["memory"]["protection"] == "normal"
    finally:
        app.close()
