"""The console filters memories by conversation (issue 25): ``/memories?session=ID`` lists that
conversation's working notes and long-term memories and nothing of another one; a working note's
page opens. The real ``ledger console`` subprocess, raw HTTP with its cookie."""

from __future__ import annotations

import http.client
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import REPO


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, dict[str, int]]]:
    db = tmp_path_factory.mktemp("console-conv") / "ledger.db"
    app = LedgerApp(Settings(db=str(db), client="seed"))
    ids = {
        "a_long": app.remember("今天的会是需求评审会", session_id="conv-a", turn=1)["memory_id"],
        "b_working": app.remember("今天的会是UI走查会", session_id="conv-b", turn=1, tier="working")["memory_id"],
        "b_long": app.remember("The walkthrough is in room 4", session_id="conv-b", turn=2)["memory_id"],
    }
    app.close()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fact_ledger.server", "console", "--no-open", "--port", "0", "--db", str(db)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = next((line.strip() for line in iter(proc.stdout.readline, "") if "token=" in line), "")
    port, token = int(url.split("/?", 1)[0].rsplit(":", 1)[1]), url.split("token=", 1)[1]
    yield port, token, ids
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=20)
    assert "Traceback" not in stderr, stderr


def _get(served: tuple[int, str, dict[str, int]], path: str) -> tuple[int, str]:
    port, token, _ = served
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", "Cookie": f"ledger_console_{port}={token}"})
    try:
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8")
    finally:
        conn.close()


def _rows(html: str) -> set[int]:
    return {int(part.split('"', 1)[0]) for part in html.split('data-id="')[1:]}


def test_memories_filter_by_conversation(served: tuple[int, str, dict[str, int]]) -> None:
    ids = served[2]
    status, html = _get(served, "/memories?session=conv-b&q=")
    assert status == 200
    assert _rows(html) == {ids["b_working"], ids["b_long"]}
    assert 'name="session"' in html and 'value="conv-b"' in html
    assert "working memory" in html
    _, other = _get(served, "/memories?session=conv-a")
    assert _rows(other) == {ids["a_long"]}
    _, everything = _get(served, "/memories?q=" + quote("今天的会"))
    assert ids["b_working"] not in _rows(everything)  # a working note is not long-term memory


def test_a_working_notes_page_opens(served: tuple[int, str, dict[str, int]], tmp_path: Path) -> None:
    status, html = _get(served, f"/memory/{served[2]['b_working']}")
    assert status == 200, html[:500]
    assert "UI走查会" in html
