"""``find`` in a workspace no memory was ever stored in, as a person meets it over stdio and at the CLI.

It answered nothing and said nothing, like a query that matches nothing: a person who mistyped
the workspace's name could not tell the two apart. The answer now says the workspace holds no
memory (``workspace_empty``: ``{workspace, nearest}``, and a notice), naming the recorded workspace
the name most likely meant; under strict isolation no other workspace's name is said.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ledger_cli
from tests.contract.conftest import LedgerServer


def test_find_in_a_workspace_that_never_held_a_memory_says_so_and_names_the_nearest(srv: LedgerServer) -> None:
    assert srv.memory("remember", {"content": "the release train leaves on Fridays", "workspace": "fact-ledger"}).ok
    typo = srv.memory("find", {"query": "release", "workspace": "fact-ledgr"})
    assert typo.ok and typo["results"] == []
    assert typo["workspace_empty"] == {"workspace": "fact-ledgr", "nearest": "fact-ledger"}
    assert typo["notices"] == [
        "workspace 'fact-ledgr' holds no memory: none was ever stored in it; did you mean 'fact-ledger'?"
    ]
    far = srv.memory("find", {"query": "release", "workspace": "zz"})
    assert far["workspace_empty"] == {"workspace": "zz", "nearest": None}
    assert far["notices"] == ["workspace 'zz' holds no memory: none was ever stored in it"]
    miss = srv.memory("find", {"query": "no such words here", "workspace": "fact-ledger"})  # "no match" stays that
    assert miss["results"] == [] and "workspace_empty" not in miss.body and "notices" not in miss.body
    hit = srv.memory("find", {"query": "release", "workspace": "fact-ledger"})
    assert hit["results"] and "workspace_empty" not in hit.body


def test_strict_isolation_names_no_other_workspace(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    ledger_cli("init", "--db", str(db), check=True)
    ledger_cli(
        "remember", "the release train leaves on Fridays", "--workspace", "fact-ledger", "--db", str(db), check=True
    )
    mine = LedgerServer(db, env={"LEDGER_WORKSPACE": "fact-ledgr", "LEDGER_ISOLATION": "strict"}).start()
    try:
        answer = mine.memory("find", {"query": "release", "workspace": "fact-ledgr"})
    finally:
        mine.close()
    assert answer["workspace_empty"] == {"workspace": "fact-ledgr", "nearest": None}
    assert "fact-ledger'" not in json.dumps(answer.body)


def test_the_cli_says_so_for_people_and_in_json(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.db")
    ledger_cli("init", "--db", db, check=True)
    ledger_cli("remember", "the release train leaves on Fridays", "--workspace", "fact-ledger", "--db", db, check=True)
    human = ledger_cli("find", "release", "--workspace", "Fact Ledger", "--db", db)
    assert human.returncode == 0, human.stderr
    assert human.stdout.splitlines() == [
        "no memories found",
        "workspace 'Fact Ledger' holds no memory: none was ever stored in it; did you mean 'fact-ledger'?",
    ]
    doc = json.loads(ledger_cli("find", "release", "--workspace", "Fact Ledger", "--json", "--db", db).stdout)
    assert doc["workspace_empty"] == {"workspace": "Fact Ledger", "nearest": "fact-ledger"}
    assert doc["notices"] == [human.stdout.splitlines()[1]]
    plain = ledger_cli("find", "nothing like it", "--workspace", "fact-ledger", "--db", db)
    assert plain.stdout.splitlines() == ["no memories found"]


def test_a_workspace_typed_with_spaces_around_it_is_searched_as_a_write_stores_it(srv: LedgerServer) -> None:
    """A write stores "billing " as "billing"; a find in "billing " found nothing (and then said the
    workspace holds no memory)."""
    stored = srv.memory("remember", {"content": "invoices go out on the 3rd", "workspace": "billing "})
    assert stored["workspace"] == "billing"
    found = srv.memory("find", {"query": "invoices", "workspace": " billing "})
    assert [r["memory_id"] for r in found["results"]] == [stored["memory_id"]]
    assert "workspace_empty" not in found.body
