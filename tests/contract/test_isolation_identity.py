"""Identity stamped on events, and workspace isolation, with several servers on one database.

Each server is one agent: its ``LEDGER_CLIENT``/``LEDGER_AGENT_ID``/``LEDGER_WORKSPACE`` come
from the environment (a client's MCP ``env`` block) or from flags, like a real client config.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.log.store import EventStore
from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shared_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("shared") / "ledger.db"


@pytest.fixture(scope="module")
def alpha(shared_db: Path) -> Iterator[LedgerServer]:
    env = {
        "LEDGER_CLIENT": "claude-code",
        "LEDGER_AGENT_ID": "agent-a",
        "LEDGER_WORKSPACE": "alpha",
        "LEDGER_ISOLATION": "strict",
    }
    server = LedgerServer(shared_db, env=env).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def beta(shared_db: Path) -> Iterator[LedgerServer]:
    server = LedgerServer(
        shared_db, args=("--client", "cursor", "--agent-id", "agent-b", "--workspace", "beta", "--isolation", "strict")
    ).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def weak(shared_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LedgerServer]:
    config = tmp_path_factory.mktemp("cfg") / "ledger.toml"
    config.write_text('client = "codex"\nagent_id = "agent-w"\nworkspace = "alpha"\nisolation = "weak"\n')
    server = LedgerServer(shared_db, env={"LEDGER_CONFIG": str(config), "LEDGER_CLIENT": ""}).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def ids(alpha: LedgerServer, beta: LedgerServer) -> dict[str, int]:
    return {
        "alpha": alpha.memory("remember", {"content": "Deploy window for this team is 14:00 UTC"})["memory_id"],
        "beta": beta.memory("remember", {"content": "Deploy window for this team is 22:00 UTC"})["memory_id"],
    }


def test_every_event_carries_the_configured_identity(shared_db: Path, ids: dict[str, int], weak: LedgerServer) -> None:
    weak.memory("remember", {"content": "Codex agent wrote this"})
    store = EventStore(shared_db)
    try:
        stamped = {(e.actor, e.workspace) for e in store.read() if e.type == "MemoryRecorded"}
    finally:
        store.close()
    assert stamped == {("claude-code:agent-a", "alpha"), ("cursor:agent-b", "beta"), ("codex:agent-w", "alpha")}


def test_strict_find_is_hard_filtered(alpha: LedgerServer, beta: LedgerServer, ids: dict[str, int]) -> None:
    seen_by_alpha = [r["memory_id"] for r in alpha.memory("find", {"query": "deploy window"})["results"]]
    seen_by_beta = [r["memory_id"] for r in beta.memory("find", {"query": "deploy window"})["results"]]
    assert ids["alpha"] in seen_by_alpha and ids["beta"] not in seen_by_alpha
    assert seen_by_beta == [ids["beta"]]
    wide = alpha.memory("find", {"query": "deploy window", "include_inactive": True, "limit": 50})["results"]
    assert ids["beta"] not in [r["memory_id"] for r in wide]
    r = alpha.memory("find", {"query": "deploy window", "workspace": "beta"})
    assert r.code == "forbidden_workspace" and r.error["field"] == "workspace"


def test_strict_refuses_by_id_access_across_workspaces(alpha: LedgerServer, ids: dict[str, int]) -> None:
    before = alpha.events()
    other = ids["beta"]
    calls = [
        ("memory", "read", {"memory_id": other}),
        ("memory", "update", {"memory_id": other, "content": "hijacked", "authorized": True}),
        ("memory", "remember", {"content": "planted", "workspace": "beta"}),
        ("memory", "remember", {"content": "cancel theirs", "ref_id": other, "retracts": True}),
        ("memory_review", "history", {"memory_id": other}),
    ]
    for tool, name, data in calls:
        r = alpha.call(tool, name, data)
        assert r.code == "forbidden_workspace", (name, r.body)
    for action, data in (
        ("retire", {"memory_id": other}),
        ("confirm", {"memory_id": other}),
        ("unlock", {"memory_id": other}),
        ("supersede", {"loser_id": other, "winner_id": ids["alpha"]}),
    ):
        r = alpha.call("memory_govern", action, {**data, "authorized": True})
        assert r.code == "forbidden_workspace", (action, r.body)
    assert alpha.events() == before
    assert alpha.memory("read", {"memory_id": ids["alpha"]}).ok


def test_weak_ranks_the_own_workspace_first(weak: LedgerServer, ids: dict[str, int]) -> None:
    found = [r["memory_id"] for r in weak.memory("find", {"query": "deploy window for this team"})["results"]]
    assert found[:2] == [ids["alpha"], ids["beta"]]
    assert weak.memory("read", {"memory_id": ids["beta"]}).ok  # weak never refuses


def test_an_alias_pulls_a_name_into_the_strict_workspace(
    alpha: LedgerServer, weak: LedgerServer, ids: dict[str, int]
) -> None:
    legacy = weak.memory("remember", {"content": "Deploy window was 13:00 UTC last year", "workspace": "alpha-legacy"})[
        "memory_id"
    ]
    assert alpha.memory("read", {"memory_id": legacy}).code == "forbidden_workspace"
    pushed = alpha.call("memory_govern", "accept", {"alias": "alpha", "canonical": "beta", "authorized": True})
    assert pushed.code == "forbidden_workspace"  # strict: never push your name into another workspace
    r = alpha.call("memory_govern", "accept", {"alias": "alpha-legacy", "canonical": "alpha", "authorized": True})
    assert r.ok
    assert alpha.memory("read", {"memory_id": legacy}).ok
    found = {x["memory_id"] for x in alpha.memory("find", {"query": "deploy window"})["results"]}
    assert {ids["alpha"], legacy} <= found and ids["beta"] not in found
    listing = alpha.call("memory_review", "workspaces")
    assert {w["name"] for w in listing["workspaces"]} == {"alpha", "alpha-legacy"}  # strict: only its own


def test_servers_share_one_ledger(alpha: LedgerServer, beta: LedgerServer, ids: dict[str, int]) -> None:
    assert alpha.events() == beta.events()  # one log, several processes
