"""tools/bench/remember_ab: two source trees in alternating rounds (here the same tree twice, at a
tiny size), each in its own process with ``fact_ledger`` imported from that tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.bench import remember_ab


def test_rounds_alternate_and_the_ratio_is_their_median(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = remember_ab.REPO
    assert remember_ab.main(
        ["--before", str(tree), "--after", str(tree), "--memories", "200", "--rounds", "2", "--calls", "20",
         "--workdir", str(tmp_path)]
    ) == 0  # fmt: skip
    result = json.loads(capsys.readouterr().out)
    assert result["rounds"] == 2 and len(result["ratios"]) == 2
    assert all(len(result["p50_ms"][side]) == 2 and min(result["p50_ms"][side]) > 0 for side in ("before", "after"))
    assert sorted(result["ratios"])[0] <= result["median_ratio"] <= sorted(result["ratios"])[-1]
    links = tmp_path / "links-before" / "fact_ledger" / "ledger"
    assert links.is_symlink() and links.resolve() == (tree / "ledger").resolve()  # imported from that tree


def test_find_rounds_read_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = remember_ab.REPO
    args = ["--before", str(tree), "--after", str(tree), "--memories", "200", "--rounds", "1", "--calls", "15"]
    assert remember_ab.main([*args, "--operation", "find", "--workdir", str(tmp_path)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["operation"] == "find" and min(result["p50_ms"]["after"]) > 0
    from fact_ledger.ledger.log.store import EventStore

    store = EventStore(tmp_path / "after-200.db")
    try:
        assert store.last_position() == 200  # the corpus and nothing else: a find writes nothing
    finally:
        store.close()


def test_a_kept_workdir_runs_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = str(remember_ab.REPO)
    args = ["--before", tree, "--after", tree, "--memories", "100", "--rounds", "1", "--calls", "5"]
    for _ in range(2):  # the second run reuses the ledgers and makes the links again
        assert remember_ab.main([*args, "--workdir", str(tmp_path)]) == 0
        assert json.loads(capsys.readouterr().out)["rounds"] == 1


def test_settle_rounds_time_each_after_commit_fold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fact_ledger.projections.runner import SETTLE_EVERY

    tree = str(remember_ab.REPO)
    args = ["--before", tree, "--after", tree, "--memories", "100", "--rounds", "1", "--calls", str(2 * SETTLE_EVERY)]
    assert remember_ab.main([*args, "--operation", "settle", "--workdir", str(tmp_path)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["operation"] == "settle" and min(result["p50_ms"]["before"]) > 0
    assert result["max_ms"]["after"][0] >= result["p50_ms"]["after"][0]


def test_rebuild_rounds_time_whole_rebuilds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = str(remember_ab.REPO)
    args = ["--before", tree, "--after", tree, "--memories", "150", "--rounds", "1", "--calls", "3"]
    assert remember_ab.main([*args, "--operation", "rebuild", "--workdir", str(tmp_path)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["operation"] == "rebuild" and min(result["p50_ms"]["before"]) > 0
    from fact_ledger.ledger.log.store import EventStore

    store = EventStore(tmp_path / "after-150.db")
    try:
        assert store.last_position() == 150  # a rebuild folds the log again and appends nothing
    finally:
        store.close()
