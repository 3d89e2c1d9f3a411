"""Long-running servers freeze what start-up built (server/process.py): a full collection then
walks only what came later, instead of pausing a tool call for every module, the facade and the
server (tools/bench/gc_pause.py)."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.server.config import Settings
from fact_ledger.server.console import serve as console_serve
from fact_ledger.server.mcp import server as mcp_server
from tools.bench import gc_pause


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """The test process must not stay frozen (nor start frozen) whatever the test does."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_ledger_serve_freezes_start_up_before_it_serves(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, unfrozen: None
) -> None:
    seen: list[int] = []

    def serve_nothing(*_args: Any) -> None:  # in place of the stdio loop: what is frozen by then
        seen.append(gc.get_freeze_count())

    monkeypatch.setattr(mcp_server.anyio, "run", serve_nothing)
    mcp_server.run_server(Settings(db=str(db_path), client="test"))
    assert seen and seen[0] > 10_000  # the modules, the facade and the server at least


def test_ledger_console_freezes_start_up_before_it_serves(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, unfrozen: None
) -> None:
    seen: list[int] = []

    def serve_nothing(_server: Any, sockets: Any = None) -> None:
        seen.append(gc.get_freeze_count())

    monkeypatch.setattr(console_serve.uvicorn.Server, "run", serve_nothing)
    console_serve.run_console({"db": str(db_path)}, port=0, open_browser=False)
    assert seen and seen[0] > 10_000


def test_the_bench_compares_a_full_collection_with_and_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--memories", "200", "--calls", "5", "--reps", "2", "--workdir", str(tmp_path)]
    assert gc_pause.main(args) == 0
    report = json.loads(capsys.readouterr().out)
    plain, frozen = report["modes"]["plain"], report["modes"]["frozen"]
    assert plain["frozen"] == 0 and frozen["frozen"] > 10_000
    assert frozen["tracked"] < plain["tracked"] / 4  # what a full collection still walks
    assert len(plain["pauses_ms"]) == 2 and report["ratio"] == round(frozen["median_ms"] / plain["median_ms"], 4)
