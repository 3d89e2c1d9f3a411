"""Erasing the default workspace (``workspace: ""``), as a person meets it over stdio and at the CLI.

The default workspace is where a memory goes when no workspace is named (``remember`` says
'in the default workspace ("")'). Erasing it as a workspace was refused by the MCP tool's schema
(``workspace`` had to be one character at least) and, at the CLI, read ``""`` as no workspace at
all: "no memory to erase in workspace ''" while its memories were there. It erases them now,
after the same confirmation as any other workspace, and names the workspace as a person reads it.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ledger_cli
from tests.contract.conftest import LedgerServer
from tests.contract.test_erasure import Approving


def test_the_default_workspace_is_erased_over_stdio_after_the_users_yes(tmp_path: Path) -> None:
    user = Approving()
    server = LedgerServer(tmp_path / "ledger.db", elicitation=user).start()
    try:
        first = server.memory("remember", {"content": "the office opens at nine"})["memory_id"]
        second = server.memory("remember", {"content": "the office closes at six"})["memory_id"]
        kept = server.memory("remember", {"content": "the lab opens at ten", "workspace": "lab"})["memory_id"]
        erase = {"workspace": "", "reason": "start over", "authorized": True}
        user.answers = [False]  # a refusal erases nothing
        refused = server.call("memory_govern", "erase", erase)
        assert refused.code == "unauthorized"
        assert server.memory("read", {"memory_id": first})["memory"]["status"] == "active"
        user.answers = [True]
        done = server.call("memory_govern", "erase", erase)
        assert done.ok, done.body
        assert sorted(done["erased"]) == sorted([first, second])
        assert (
            user.questions
            == ['Erase every memory of the default workspace ("") for good? Only an Erased record stays.'] * 2
        )
        assert server.memory("read", {"memory_id": kept})["memory"]["status"] == "active"
        again = server.call("memory_govern", "erase", erase)  # nothing left: nobody is asked
        assert (
            again.code == "not_found" and again.error["message"] == 'no memory to erase in the default workspace ("")'
        )
        assert len(user.questions) == 2
    finally:
        server.close()


def test_the_cli_erases_the_default_workspace_and_says_so(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.db")
    ledger_cli("init", "--db", db, check=True)
    ledger_cli("remember", "the office opens at nine", "--db", db, check=True)
    ledger_cli("remember", "the lab opens at ten", "--workspace", "lab", "--db", db, check=True)
    done = ledger_cli("erase", "--workspace", "", "--reason", "start over", "--db", db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("erased #1 (1 row cleared)"), done.stdout
    assert "lab opens at ten" in ledger_cli("find", "opens", "--db", db).stdout
    again = ledger_cli("erase", "--workspace", "", "--reason", "start over", "--db", db)
    assert again.returncode == 1
    assert 'no memory to erase in the default workspace ("")' in again.stderr
