"""``memory_review compare`` side by side over stdio (docs/contract.md ``compare``; issue 26 point
4): a word diff of the two texts, their closeness, each side's state path and the reference chain,
for a retracted instruction and its retraction; an id from another workspace stays refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow


def test_a_retraction_and_its_target_side_by_side(srv: LedgerServer) -> None:
    older = srv.memory("remember", {"content": "Deploy to staging on Fridays", "subject": "deploys"})["memory_id"]
    target = srv.memory("remember", {"content": "Always deploy to the staging server first", "subject": "deploys"})
    target_id = target["memory_id"]
    superseded = srv.call("memory_govern", "supersede", {"loser_id": older, "winner_id": target_id, "authorized": True})
    assert superseded.ok, superseded.body
    retraction = srv.memory(
        "remember",
        {"content": "Do not deploy to the staging server first any more", "ref_id": target_id, "retracts": True},
    )
    assert retraction["retracted"] == [target_id]
    rid = retraction["memory_id"]
    before = srv.events()

    r = srv.call("memory_review", "compare", {"left_id": rid, "right_id": target_id})

    assert r.ok, r.body
    assert r["verdict"]["winner_id"] in (rid, target_id)  # today's verdict is still there
    assert r["diff"] == [
        {"op": "replace", "left": "Do not", "right": "Always"},
        {"op": "equal", "left": "deploy to the staging server first", "right": "deploy to the staging server first"},
        {"op": "delete", "left": "any more", "right": ""},
    ]
    closeness = r["closeness"]
    assert 0.5 < closeness["lexical"] < 1.0
    assert closeness["vector"] is None or -1.0 <= closeness["vector"] <= 1.0
    # The retraction names its target, which names what it superseded: two levels.
    assert r["ref_chain"]["left"] == [
        {"memory_id": target_id, "relation": "retracts", "of": rid, "level": 1},
        {"memory_id": older, "relation": "supersedes", "of": target_id, "level": 2},
    ]
    assert {"memory_id": rid, "relation": "retracted_by", "of": target_id, "level": 1} in r["ref_chain"]["right"]
    # The target's state path: recorded active, then retired by the retraction.
    path = r["state_path"]["right"]
    assert [s["status"] for s in path] == ["active", "retired"]
    assert path[0]["type"] == "MemoryRecorded" and path[-1]["type"] == "MemoryRetired"
    assert path[-1]["by_id"] == rid and path[-1]["actor"] and path[-1]["recorded_at"]
    assert path[0]["position"] < path[-1]["position"]
    assert [s["status"] for s in r["state_path"]["left"]] == ["active"]
    # The superseded memory's path names the supersession, with the rule when one decided.
    older_path = srv.call("memory_review", "compare", {"left_id": older, "right_id": target_id})["state_path"]["left"]
    assert [s["status"] for s in older_path] == ["active", "superseded"]
    assert older_path[-1]["by_id"] == target_id
    assert srv.events() == before  # compare writes nothing


def test_chinese_texts_diff_by_character(srv: LedgerServer) -> None:
    left = srv.memory("remember", {"content": "张伟的电话是备用号码", "subject": "张伟"})["memory_id"]
    right = srv.memory("remember", {"content": "张伟的电话是主用号码", "subject": "张伟"})["memory_id"]
    r = srv.call("memory_review", "compare", {"left_id": left, "right_id": right})
    assert r["diff"][1] == {"op": "replace", "left": "备", "right": "主"}
    assert r["ref_chain"] == {"left": [], "right": []}


@pytest.fixture(scope="module")
def strict_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LedgerServer, LedgerServer]]:
    db: Path = tmp_path_factory.mktemp("compare-strict") / "ledger.db"
    servers = [
        LedgerServer(db, env={"LEDGER_WORKSPACE": name, "LEDGER_ISOLATION": "strict"}).start()
        for name in ("alpha", "beta")
    ]
    yield servers[0], servers[1]
    for server in reversed(servers):
        server.close()


def test_strict_compare_refuses_another_workspaces_memory(strict_pair: tuple[LedgerServer, LedgerServer]) -> None:
    alpha, beta = strict_pair
    mine = alpha.memory("remember", {"content": "Deploy window is 14:00 UTC"})["memory_id"]
    theirs = beta.memory("remember", {"content": "Deploy window is 22:00 UTC"})["memory_id"]
    for data, field in (
        ({"left_id": mine, "right_id": theirs}, "right_id"),
        ({"left_id": theirs, "right_id": mine}, "left_id"),
    ):
        r = alpha.call("memory_review", "compare", data)
        assert r.code == "forbidden_workspace" and r.error["field"] == field, r.body
