"""``remember``'s ``reason`` (why a memory is worth keeping), the field added through the one
declaration: an agent over stdio and a person at the terminal give it, ``help`` names it, the
log keeps it, ``audit`` shows it in both forms; a working note refuses it; a credential in it is
refused or masked like one in the text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ledger_cli
from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow
WHY = "the user said so after the March outage"


def test_an_agent_s_reason_is_kept_and_shown_by_audit(srv: LedgerServer) -> None:
    assert "reason (why it is worth remembering" in srv.memory("help")["actions"]["remember"]
    r = srv.memory("remember", {"content": "Deploys freeze on Fridays", "subject": "deploys", "reason": WHY})
    assert r.ok
    events = srv.call("memory_review", "audit", {"memory_id": r["memory_id"]})["events"]
    assert [e["payload"].get("reason") for e in events if e["type"] == "MemoryRecorded"] == [WHY]
    plain = srv.memory("remember", {"content": "The coffee machine is on floor 3"})
    recorded = srv.call("memory_review", "audit", {"memory_id": plain["memory_id"]})["events"][0]["payload"]
    assert "reason" not in recorded  # an absent reason is not written (old events keep their bytes)


def test_a_working_note_refuses_a_reason_and_writes_nothing(srv: LedgerServer) -> None:
    before = srv.events()
    r = srv.memory("remember", {"content": "trying port 8082", "tier": "working", "session_id": "c", "reason": WHY})
    assert r.code == "invalid_input" and r.body["error"]["field"] == "reason"
    assert srv.events() == before


def test_a_credential_in_the_reason_is_refused_or_masked(srv: LedgerServer) -> None:
    leaky = "the password is hunter2hunter2"
    refused = srv.memory("remember", {"content": "Deploy keys rotate monthly", "reason": leaky})
    assert refused.code == "invalid_input" and refused.body["error"]["field"] == "reason"
    masked = srv.memory("remember", {"content": "Deploy keys rotate monthly", "reason": leaky, "on_secret": "mask"})
    assert masked.ok and masked["secrets_masked"][0]["field"] == "reason"
    events = srv.call("memory_review", "audit", {"memory_id": masked["memory_id"]})["events"]
    assert events[0]["payload"]["reason"] == "the password is [secret:password]"


def test_a_person_gives_a_reason_at_the_terminal_and_reads_it_in_audit(tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    assert ledger_cli("init", "--db", db).returncode == 0
    wrote = ledger_cli("remember", "Deploys freeze on Fridays", "--reason", WHY, "--db", db)
    assert wrote.returncode == 0 and wrote.stdout.startswith("remembered #1"), wrote.stderr
    human = ledger_cli("audit", "--memory-id", "1", "--db", db)
    assert human.returncode == 0 and f"reason: {WHY}" in human.stdout.splitlines()[1]
    as_json = json.loads(ledger_cli("audit", "--memory-id", "1", "--json", "--db", db).stdout)
    assert as_json["events"][0]["payload"]["reason"] == WHY
    assert "--reason" in ledger_cli("remember", "--help").stdout
