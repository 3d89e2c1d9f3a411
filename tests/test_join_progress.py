"""A machine joining a team's log says how far it got: the read models of a new file are built
from the log with progress (copy, then fold), and ``ledger serve`` prints it on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from fact_ledger.server.mcp.server import join_progress_printer
from tools.pg_cluster import Cluster


def machine(url: str, home: Path, progress=None) -> LedgerApp:  # type: ignore[no-untyped-def]
    home.mkdir(exist_ok=True)
    settings = Settings(
        store=url,
        views=str(home / "views.db"),
        backup=str(home / "backup.jsonl"),
        client=home.name,
        embedding=Embedding(enabled=False),
    )
    return LedgerApp(settings, join_progress=progress)


def test_a_new_read_model_file_reports_the_copy_then_the_fold(pg_cluster: Cluster, tmp_path: Path) -> None:
    url = pg_cluster.database()
    first = machine(url, tmp_path / "a")
    for i in range(30):
        first.remember(f"fact {i}: worker {i} is up")
    calls: list[tuple[int, int]] = []
    joined = machine(url, tmp_path / "b", progress=lambda done, total: calls.append((done, total)))
    assert joined.status()["memories"] == 30
    assert calls[0][1] == 30 and (30, 30) in calls  # the copy reached the head
    assert calls[-1] == (30, 30)  # and so did the fold, last
    again: list[tuple[int, int]] = []
    joined.close()
    machine(url, tmp_path / "b", progress=lambda done, total: again.append((done, total))).close()
    assert again == []  # a file that already holds the log builds nothing
    first.close()


def test_serve_prints_the_join_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    show = join_progress_printer(every=40)
    for done in (20, 40, 60, 80, 100, 100):  # the copy
        show(done, 100)
    for done in (50, 100):  # the fold starts again from the beginning
        show(done, 100)
    lines = capsys.readouterr().err.splitlines()
    prefix = "fact-ledger: building read models from the log: "
    assert lines == [
        prefix + "copying 20/100 events",
        prefix + "copying 60/100 events",
        prefix + "copying 100/100 events",
        prefix + "folding 50/100 events",
        prefix + "folding 100/100 events",
    ]
