"""Read your own writes (issue 30, point 3): this machine's backed-up writes that the log does not
hold yet answer ``find`` first, marked ``pending: true`` without an id, and ``read`` lists the
pending changes to a memory; the CLI prints them as pending, and they leave once replayed."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import AUTH_USER, MemoryRecorded, MemoryUpdated
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Settings

T0 = "2026-07-01T00:00:00.000000Z"


def cli(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args])


def backed_up(db: Path) -> tuple[LedgerApp, str]:
    """A ledger with one memory, and a backup holding a new memory and an update of #1 (as a
    write refused by a locked log leaves them)."""
    app = LedgerApp(Settings(db=str(db), client="test"))
    app.remember("The VPN gateway is vpn-2", subject="vpn")
    stream = uuid7()
    new = NewEvent(
        data=MemoryRecorded(memory=stream, content="The VPN gateway is vpn-3", subject="vpn"),
        stream_id=stream,
        event_time=T0,
    )
    app.backup_log.append([new], {"op": "remember", "args": ["The VPN gateway is vpn-3"], "kwargs": {"subject": "vpn"}})
    first = app.conn.execute("SELECT stream_id FROM memories WHERE memory_id=1").get
    change = NewEvent(data=MemoryUpdated(memory=first, tags=("network",)), stream_id=first, event_time=T0)
    request = {"op": "update", "args": [1], "kwargs": {"tags": ["network"], "authorization": AUTH_USER}}
    app.backup_log.append([change], request)
    return app, new.event_id


def test_find_and_read_show_pending_writes_until_they_land(db_path: Path) -> None:
    app, head = backed_up(db_path)
    found = app.find("VPN gateway", limit=1)  # pending writes do not count against the limit
    assert [(r["memory_id"], r.get("pending"), r["content"]) for r in found["results"]] == [
        (None, True, "The VPN gateway is vpn-3"),
        (1, None, "The VPN gateway is vpn-2"),
    ]
    assert found["pending_results"] == 1 and found["results"][0]["event_id"] == head
    assert [r["memory_id"] for r in app.find("vpn-2")["results"]] == [1]  # every query word must match
    changes = app.read(1)["pending_changes"]
    assert [(c["pending"], c["type"], c["payload"]["tags"]) for c in changes] == [(True, "MemoryUpdated", ["network"])]
    replayed = app.replay_backup(dry_run=False, authorization=AUTH_USER)
    # decided again: the new gateway now meets #1's claim (the hand-made backup had no set)
    assert (replayed["replayed"], replayed["as_backed_up"], replayed["decided_anew"]) == (2, 1, 1)
    assert app.read(2)["memory"]["event_time"] == T0  # kept from the backup
    found = app.find("VPN gateway")
    assert "pending_results" not in found and not any(r.get("pending") for r in found["results"])
    assert sorted(r["memory_id"] for r in found["results"]) == [1, 2]
    assert "pending_changes" not in app.read(1) and app.read(1)["memory"]["tags"] == ["network"]
    app.close()


def test_the_cli_prints_a_pending_write_without_an_id(db_path: Path) -> None:
    app, _ = backed_up(db_path)
    app.close()
    doc = json.loads(cli(db_path, "--json", "find", "VPN gateway").stdout)
    assert [r.get("pending") for r in doc["results"]] == [True, None]
    out = cli(db_path, "find", "VPN gateway").stdout.splitlines()
    assert out[0] == "pending agent_generated (in the JSONL backup: no id until it replays) vpn"
    assert out[2].startswith("#1 v1 ")


def test_the_console_lists_a_pending_write_apart_and_links_only_memories_with_an_id(db_path: Path) -> None:
    """The console's memory list links each row to its page: a pending write has none yet, so it
    is listed apart, first, as an agent's ``find`` lists it (it was left out: "Nothing found")."""
    from starlette.testclient import TestClient

    from fact_ledger.server.console.guard import Guard
    from fact_ledger.server.console.routes import create_app

    app, _ = backed_up(db_path)
    guard = Guard(port=8799)
    with TestClient(create_app(app, guard, {}), base_url="http://127.0.0.1:8799") as client:
        page = client.get(f"/memories?q=VPN+gateway&token={guard.token}", follow_redirects=True)
    assert page.status_code == 200
    assert "The VPN gateway is vpn-2" in page.text and "/memory/None" not in page.text
    pending = page.text.split('id="pending-results"', 1)[1].split("</section>", 1)[0]
    assert "vpn-3" in pending and "href" not in pending
    app.close()


def test_the_cli_says_what_a_replay_decided_anew_and_refused(db_path: Path) -> None:
    app, _ = backed_up(db_path)
    stream = app.conn.execute("SELECT stream_id FROM memories WHERE memory_id=1").get
    gone = NewEvent(data=MemoryUpdated(memory=stream, content="x"), stream_id=stream, event_time=T0)
    app.backup_log.append([gone], {"op": "update", "args": [99], "kwargs": {"content": "x"}})  # no memory 99
    app.close()
    out = cli(db_path, "replay-backup", "--apply").stdout.splitlines()
    assert "replayed 3 write(s): 1 as backed up, 1 decided anew, 1 refused" in out
    assert any(line.startswith("  line 3 (update): not_found: no memory 99") for line in out), out
    again = cli(db_path, "--json", "replay-backup", "--apply").stdout
    assert json.loads(again)["writes_present"] == 3  # the refusal landed as a record: not pending
