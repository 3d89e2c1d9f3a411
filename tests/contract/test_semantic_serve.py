"""``ledger serve`` with a model and embedded memories: the nearest-neighbour index is loaded at
start (once the model is), so the first hybrid ``find`` does not pay for reading every vector."""

from __future__ import annotations

import time
from pathlib import Path

from tests.conftest import ledger_cli
from tests.contract.conftest import LedgerServer


def test_serve_loads_the_search_index_before_the_first_find(tmp_path: Path, tiny_gguf: Path) -> None:
    db = tmp_path / "ledger.db"
    env = {"LEDGER_EMBEDDING_MODEL": str(tiny_gguf)}
    for text in ("the staging server listens on port 8080", "the budget is 50k", "my dog likes coffee"):
        ledger_cli("remember", text, "--db", str(db), env=env, check=True)
    ledger_cli("reembed", "--db", str(db), env=env, check=True)
    server = LedgerServer(db, env=env).start()
    try:
        deadline = time.monotonic() + 60  # the model loads in the background (tests/test_model_startup.py)
        while not (status := server.memory("status"))["vectors"]["index_memories"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert status["search_mode"] == "vector+fts"
        assert status["vectors"]["index_memories"] == 3  # loaded once the model was: no find has run yet
        found = server.memory("find", {"query": "which port does staging use", "limit": 3})
        assert found.ok and found["results"]
    finally:
        server.close()
    assert "Traceback" not in server.stderr


def test_serve_on_a_missing_database_with_a_model_starts_and_refuses_writes(tmp_path: Path, tiny_gguf: Path) -> None:
    db = tmp_path / "mistyped.db"
    # the suite sets LEDGER_CREATE=1 for its own ledgers; a user's mistyped path is not created
    server = LedgerServer(db, env={"LEDGER_EMBEDDING_MODEL": str(tiny_gguf), "LEDGER_CREATE": "0"}).start()
    try:
        assert server.memory("remember", {"content": "the budget is 50k"}).code == "unavailable"
    finally:
        server.close()
    assert "Traceback" not in server.stderr
    assert not db.exists()
