"""Validation and findings that name the right thing (issue 29, point 20): lengths of text in
characters, the field a caller gave, control characters refused at the edge, an actor given
without its agent id, and doctor naming the conflicts it warns about."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fact_ledger.ledger.errors import InvalidInput, NotFound
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Settings
from fact_ledger.server.schemas.admin import CompareData, ResolveConflictData, SupersedeData, TimelineData
from fact_ledger.server.schemas.memory import RememberData


def test_a_too_long_text_is_measured_in_characters_and_a_list_in_items() -> None:
    with pytest.raises(InvalidInput) as err:
        RememberData.parse({"content": "x", "subject": "s" * 2001})
    assert err.value.message == "subject: at most 2000 characters, not 2001" and err.value.field == "subject"
    with pytest.raises(InvalidInput) as err:
        RememberData.parse({"content": "x", "tags": ["t"] * 101})
    assert "at most 100 items" in err.value.message


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b", "\x7f", "\x80", "\x9b", "\x9f"])
def test_control_characters_are_refused_at_the_edge(char: str) -> None:
    with pytest.raises(InvalidInput) as err:
        RememberData.parse({"content": f"port{char}8080"})
    assert err.value.field == "content"
    assert f"U+{ord(char):04X} at character 5" in err.value.message
    with pytest.raises(InvalidInput) as err:
        RememberData.parse({"content": "ok", "subject": f"a{char}"})
    assert err.value.field == "subject"


def test_text_keeps_tabs_line_breaks_and_form_feeds() -> None:
    text = "col\tcol\r\nnext page\x0cthere\x85next line"  # NEL (U+0085) breaks a line too
    assert RememberData.parse({"content": text}).content == text


def test_a_nul_byte_from_the_cli_is_refused_and_nothing_is_written(db_path: Path) -> None:
    result = CliRunner().invoke(main, ["--db", str(db_path), "--json", "remember", "-"], input="a\x00b")
    assert result.exit_code == 1 and json.loads(result.stdout)["error"]["field"] == "content"
    status = CliRunner().invoke(main, ["--db", str(db_path), "--json", "status"])
    assert json.loads(status.stdout)["events"] == 0


@pytest.mark.parametrize(
    ("model", "data", "field"),
    [
        (SupersedeData, {"loser_id": 2, "winner_id": 2, "authorized": True}, "winner_id"),
        (CompareData, {"left_id": 3, "right_id": 3}, "right_id"),
        (ResolveConflictData, {"conflict_id": 1, "authorized": True}, "winner_id"),
        (TimelineData, {}, "memory_id"),
    ],
)
def test_a_refusal_across_fields_still_names_a_field(model: type, data: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        model.parse(data)
    assert err.value.field == field


def test_a_retraction_of_an_unknown_memory_names_ref_id(app: LedgerApp) -> None:
    with pytest.raises(NotFound) as err:
        app.remember("cancel that", ref_id=999, retracts=True)
    assert err.value.field == "ref_id"
    with pytest.raises(NotFound) as err:
        app.update(999, content="x")
    assert err.value.field == "memory_id"


def test_audit_by_a_client_name_finds_every_agent_of_it(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.db")
    for agent in ("agent-1", "agent-2"):
        ledger = LedgerApp(Settings(db=db, client="cursor", agent_id=agent))
        ledger.remember(f"fact from {agent}")
        ledger.close()
    other = LedgerApp(Settings(db=db, client="cursorx"))
    other.remember("fact from a client whose name starts the same")
    assert sorted(e["actor"] for e in other.audit(actor="cursor")["events"]) == ["cursor:agent-1", "cursor:agent-2"]
    assert [e["actor"] for e in other.audit(actor="cursor:agent-2")["events"]] == ["cursor:agent-2"]
    assert [e["actor"] for e in other.audit(actor="cursorx")["events"]] == ["cursorx"]
    other.close()


def test_doctor_names_the_conflicts_with_a_member_no_longer_current(app: LedgerApp) -> None:
    app.remember("接口 /api/foo 返回 200", event_time="2025-07-01T00:00:00Z")
    second = app.remember("接口 /api/foo 返回 404", event_time="2025-07-06T00:00:00Z")
    cid = second["conflicts"][0]["conflict_id"]
    # Settlement ends such a set at once; a ledger written by older code can still hold one.
    app.conn.execute("UPDATE memories SET status='retired' WHERE memory_id=?", (second["memory_id"],))
    check = next(c for c in app.doctor()["checks"] if c["name"] == "conflicts_with_inactive_members")
    assert check["severity"] == "warning" and check["count"] == 1
    assert f"conflict {cid} (#{second['memory_id']} retired)" in check["message"]
