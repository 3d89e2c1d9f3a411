"""The benchmark and the recall harness still run (so they cannot rot), on tiny synthetic input.

The real LoCoMo data is for ``tools/eval`` only; here the harness reads a two-session
conversation written by the test itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from tests.conftest import REPO
from tools.bench.floor import projection_schema
from tools.eval import chat_conflicts, locomo


def positive_numbers(node: object, path: str = "") -> list[str]:
    """Paths of every number in a JSON tree that is not > 0 (the figures a bench must produce)."""
    bad = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in ("config", "ok", "example_misses", "seed", "quick"):
                bad += positive_numbers(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            bad += positive_numbers(value, f"{path}[{i}]")
    elif isinstance(node, int | float) and not isinstance(node, bool) and node <= 0:
        bad.append(path)
    return bad


def test_quick_bench_prints_every_figure() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench", "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout)
    assert set(report) >= {"machine", "config", "append", "sizes", "scaling", "budgets", "seconds"}
    assert set(report["append"]) == {"batched_1000", "single_durable"}
    assert {"events_per_s", "p50_ms", "p99_ms"} <= set(report["append"]["single_durable"])
    assert list(report["sizes"]) == ["300", "600"]
    for size in report["sizes"].values():
        assert {"build", "rebuild", "find_ms", "exact_phrase", "remember_ms"} <= set(size)
        assert {"p50", "p95", "p99"} <= set(size["find_ms"]) and {"p50", "p99"} <= set(size["remember_ms"])
        assert 0 < size["exact_phrase"]["hit_rate"] <= 1 and size["rebuild"]["events_per_s"] > 0
    assert set(report["budgets"]) == {
        "remember_p50_ms",
        "remember_p99_ms",
        "find_p50_ms",
        "rebuild_events_per_s",
        "exact_phrase_hit_rate",
    }
    assert all({"value", "budget", "ratio", "ok"} <= set(b) for b in report["budgets"].values())
    assert positive_numbers(report) == []
    cold = [size["rebuild"]["cold_events_per_s"] for size in report["sizes"].values()]
    assert all(c > 0 for c in cold)


def test_io_floor_prints_both_write_patterns(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench.io_floor", "--commits", "5", "--frames", "2,7", "--dir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout)
    assert list(report["results"]) == ["2_frames", "7_frames"]
    for patterns in report["results"].values():
        assert set(patterns) == {"sqlite_wal_pattern", "one_pwrite"}
        assert all(p["p50"] > 0 and p["n"] == 5 and 0 <= p["over_5ms"] <= 1 for p in patterns.values())
    assert list(tmp_path.iterdir()) == []  # the scratch file is gone


def test_floor_replays_what_the_ledger_wrote(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench.floor", "--quick", "--workdir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout)
    remember, rebuild = report["remember"], report["rebuild"]
    # The replayed statements wrote the same log as the facade: the floor measures the real work.
    assert remember["replay_reached_the_same_log"] is True
    assert remember["statements_per_remember"] > 10 and remember["wal_frames_per_remember"] > 10
    assert remember["commit_ms"]["p50"] > 0 and remember["replayed_sql_ms"]["p50"] > 0
    # The core-only replay writes the same log through fewer pages.
    assert 0 < remember["core_wal_frames_per_remember"] < remember["wal_frames_per_remember"]
    # Every read model is in the rebuild floor, the log read and the commit too.
    assert {"read the log", "COMMIT", "memories", "search_fts", "tt_fts", "near_dup_bands", "claims"} <= set(
        rebuild["floor_by_table_s"]
    )
    assert "events" not in rebuild["floor_by_table_s"] and rebuild["events"] == 300
    assert rebuild["core_floor_events_per_s"] > 0
    assert set(report["floor_vs_budget"]) == {"rebuild_events_per_s", "remember_p50_ms", "remember_p50_ms_two_files"}
    # The default layout's floor: both files' statements replayed in order reach the same log and
    # read models, the log's COMMIT synced and the read models' not.
    two = remember["two_files"]
    assert two["replay_reached_the_same_log"] is True
    assert two["statements_per_remember"] > remember["statements_per_remember"]  # two BEGINs, two COMMITs
    assert set(two["commit_ms"]) == {"log", "views"} and two["replayed_sql_ms"]["p50"] > 0
    assert list(tmp_path.iterdir()) == []  # the scratch databases are gone


def test_floor_refuses_a_read_model_it_cannot_fill(tmp_path: Path) -> None:
    src = apsw.Connection(str(tmp_path / "src.db"))
    src.execute("CREATE TABLE memories(memory_id INTEGER PRIMARY KEY); CREATE VIRTUAL TABLE notes_fts USING fts5(x)")
    src.close()
    conn = apsw.Connection(":memory:")
    conn.execute("ATTACH ? AS src", (str(tmp_path / "src.db"),))
    with pytest.raises(SystemExit, match="notes_fts"):
        projection_schema(conn)


def test_recall_harness_scores_a_tiny_conversation(tmp_path: Path) -> None:
    conversation = {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey kitten called Miso!"},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Congrats! I started pottery classes."},
        ],
        "session_2_date_time": "10:00 am on 1 June, 2023",
        "session_2": [
            {
                "speaker": "Bo",
                "dia_id": "D2:1",
                "text": "My bowl cracked in the kiln.",
                "blip_caption": "a photo of a cracked bowl",
            },
        ],
        "qa": [
            {"question": "What is the name of Ann's kitten?", "evidence": ["D1:1"], "category": 4},
            {"question": "What happened to Bo's bowl?", "evidence": ["D2:1"], "category": 1},
            {"question": "Is this adversarial?", "evidence": ["D1:2"], "category": 5},
        ],
    }
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "1.json").write_text(json.dumps(conversation), encoding="utf-8")
    report = locomo.run(tmp_path / "data", workdir=tmp_path / "ledgers")
    assert report["questions"] == 2
    assert report["overall"] == {"R@1": 1.0, "R@5": 1.0, "R@10": 1.0}
    assert report["by_category"]["4-single-hop"]["questions"] == 1
    assert locomo.session_time("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00.000000Z"


def test_chat_conflicts_counts_a_real_change_of_mind_and_not_the_small_talk(tmp_path: Path) -> None:
    conversation = {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I like hiking, it clears my head."},
            {"speaker": "Ann", "dia_id": "D1:2", "text": "This is my favourite trail."},
            {"speaker": "Bo", "dia_id": "D1:3", "text": "That is what makes me smile."},
        ],
        "session_2_date_time": "10:00 am on 1 June, 2023",
        "session_2": [
            {"speaker": "Ann", "dia_id": "D2:1", "text": "I don't like hiking anymore since my knee injury."},
            {"speaker": "Bo", "dia_id": "D2:2", "text": "This is where I practice."},
        ],
    }
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "1.json").write_text(json.dumps(conversation), encoding="utf-8")
    report = chat_conflicts.run(tmp_path / "data")
    assert report["turns"] == 5 and report["conflicts"] == 1 and report["claims"] == 2  # hiking yes, then no
    (opened,) = report["opened"]
    assert opened["dia_id"] == "D2:1" and opened["subject"] == "Ann" and opened["attribute"] == "likes hiking"
    assert opened["value"] == "no"  # this turn's value; the set holds the earlier "yes" too
    assert report["retractions"] == 0 and report["retracted"] == []


def test_chat_conflicts_lists_what_a_turn_retracted_by_its_words(tmp_path: Path) -> None:
    conversation = {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Alice owns the billing service."}],
        "session_2_date_time": "10:00 am on 1 June, 2023",
        "session_2": [
            {"speaker": "Bo", "dia_id": "D2:1", "text": "Alice is no longer the owner of the billing service."}
        ],
    }
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "1.json").write_text(json.dumps(conversation), encoding="utf-8")
    report = chat_conflicts.run(tmp_path / "data")
    assert report["retractions"] == 1
    (ended,) = report["retracted"]
    assert (ended["dia_id"], ended["retracted"]) == ("D2:1", "Alice owns the billing service.")
