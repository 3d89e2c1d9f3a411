"""``ledger compare`` side by side (docs/cli.md ``compare``; issue 26 point 4): the human output
shows the verdict, the diff inline, the closeness, each side's state path and reference chain;
``--json`` has the same keys as the MCP answer. Run through the real ``ledger`` entry point."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ledger_cli


def _seed(db: Path) -> tuple[int, int]:
    def remember(*args: str) -> int:
        done = ledger_cli("remember", *args, "--db", str(db), "--json", check=True)
        return int(json.loads(done.stdout)["memory_id"])

    target = remember("Always deploy to the staging server first", "--subject", "deploys")
    retraction = remember("Do not deploy to the staging server first any more", "--retracts", str(target))
    return target, retraction


def test_compare_shows_diff_closeness_paths_and_chain(db_path: Path) -> None:
    target, retraction = _seed(db_path)
    human = ledger_cli("compare", str(target), str(retraction), "--db", str(db_path), check=True).stdout
    lines = human.splitlines()
    assert lines[0].startswith(f"winner: right #{retraction} over #{target}")
    assert "diff: [-Always-]{+Do not+} deploy to the staging server first {+any more+}" in lines
    assert any(
        line.startswith("closeness: lexical 0.") and line.endswith("vector n/a (vectors not live)") for line in lines
    )
    left_path = next(line for line in lines if line.startswith("left path: "))
    assert left_path.startswith("left path: active at 1, ")
    assert "-> retired at 3, " in left_path and f"(MemoryRetired, by #{retraction}, actor " in left_path
    assert f"left chain: #{target} retracted_by #{retraction}" in lines
    assert f"right chain: #{retraction} retracts #{target}" in lines
    assert next(line for line in lines if line.startswith("right path: ")).count(" -> ") == 0


def test_compare_json_has_the_contract_keys(db_path: Path) -> None:
    target, retraction = _seed(db_path)
    done = ledger_cli("compare", str(retraction), str(target), "--db", str(db_path), "--json", check=True)
    out = json.loads(done.stdout)
    assert {"verdict", "diff", "closeness", "state_path", "ref_chain"} <= out.keys()
    assert out["diff"][0] == {"op": "replace", "left": "Do not", "right": "Always"}
    assert set(out["closeness"]) == {"lexical", "vector"} and out["closeness"]["vector"] is None
    assert [s["status"] for s in out["state_path"]["right"]] == ["active", "retired"]
    assert out["state_path"]["right"][-1]["by_id"] == retraction
    assert out["ref_chain"]["left"] == [{"memory_id": target, "relation": "retracts", "of": retraction, "level": 1}]


def test_compare_refuses_a_missing_memory_and_the_same_one_twice(db_path: Path) -> None:
    target, _ = _seed(db_path)
    missing = ledger_cli("compare", str(target), "99", "--db", str(db_path), "--json")
    assert missing.returncode == 1 and json.loads(missing.stdout)["error"]["field"] == "right_id"
    same = ledger_cli("compare", str(target), str(target), "--db", str(db_path), "--json")
    assert same.returncode == 1 and json.loads(same.stdout)["error"]["code"] == "invalid_input"


def test_compare_says_an_erased_memory_was_erased_instead_of_judging_it(db_path: Path) -> None:
    """``compare ERASED ID`` judged the erased memory the winner (its lock outlived its words) and
    diffed "[erased]" against the other text. It says the memory was erased now (exit 1,
    ``invalid_input`` on that side's field), as ``arbitrate`` refuses it."""
    db = str(db_path)
    kept = json.loads(ledger_cli("remember", "The office is in Boston", "--db", db, "--json", check=True).stdout)
    gone = kept["memory_id"]
    other = json.loads(
        ledger_cli(
            "remember", "The office is in Denver", "--source-type", "agent_generated", "--db", db, "--json", check=True
        ).stdout
    )["memory_id"]
    ledger_cli("erase", str(gone), "--reason", "asked to forget", "--db", db, check=True)
    for left, right, field in ((gone, other, "left_id"), (other, gone, "right_id")):
        human = ledger_cli("compare", str(left), str(right), "--db", db)
        assert human.returncode == 1 and human.stdout == "", human.stdout
        assert f"memory {gone} was erased" in human.stderr and "winner" not in human.stderr, human.stderr
        doc = json.loads(ledger_cli("compare", str(left), str(right), "--db", db, "--json").stdout)
        assert doc["error"]["code"] == "invalid_input" and doc["error"]["field"] == field, doc
        assert doc["error"]["message"].startswith(f"memory {gone} was erased")
