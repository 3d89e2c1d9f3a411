"""The governance CLI (issue point 7): compare, conflicts and the governance actions, as a user channel."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Settings

GOVERNANCE = [
    "compare",
    "conflicts",
    "conflict",
    "confirm",
    "unlock",
    "retire",
    "supersede",
    "resolve",
    "arbitrate",
    "judge",
    "doctor",
    "review",
]


def run(db: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = CliRunner().invoke(main, [*args, "--db", str(db), "--json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.output) if result.output.strip() else {}


def seed(db: Path) -> tuple[int, int, int]:
    app = LedgerApp(Settings(db=str(db), client="agent"))
    a = app.remember("接口 /api/foo 返回 200", event_time="2025-07-01T00:00:00Z")["memory_id"]
    b = app.remember("接口 /api/foo 返回 404", event_time="2025-07-06T00:00:00Z")
    app.close()
    return a, b["memory_id"], b["conflicts"][0]["conflict_id"]


def test_every_governance_command_is_registered_and_documented() -> None:
    for name in GOVERNANCE:
        assert name in main.commands
        out = CliRunner().invoke(main, [name, "--help"]).output
        assert "Example:" in out and "--json" in out and "--db" in out


def test_compare_and_conflicts(db_path: Path) -> None:
    a, b, cid = seed(db_path)
    code, out = run(db_path, "compare", str(a), str(b))
    assert code == 0 and out["verdict"]["winner_id"] == b and out["verdict"]["rule"] == "event_time"
    code, out = run(db_path, "conflicts")
    assert [c["conflict_id"] for c in out["conflicts"]] == [cid]
    code, out = run(db_path, "conflict", str(cid))
    assert [m["memory_id"] for m in out["conflict"]["memories"]] == [a, b]
    human = CliRunner().invoke(main, ["compare", str(a), str(b), "--db", str(db_path)]).output
    assert "winner: right" in human and "event_time" in human


def test_judge_then_resolve_from_the_terminal(db_path: Path) -> None:
    a, b, cid = seed(db_path)
    code, out = run(db_path, "judge", str(cid), str(b), "--rationale", "newer", "--pin", f"{a}=1", "--pin", f"{b}=1")
    assert code == 0 and out["conflict"]["state"] == "judged"
    again = CliRunner().invoke(main, ["--db", str(db_path), "judge", str(cid), str(b), "--rationale", "newer"])
    assert again.exit_code == 0
    assert (
        again.stdout.strip()
        == f"judgment {out['judgment_id']} already says so (nothing recorded); conflict {cid} is judged"
    )
    code, out = run(db_path, "judge", str(cid), str(b), "--pin", f"{a}=7")
    assert code == 1 and out["error"]["code"] == "version_conflict"
    code, out = run(db_path, "resolve", str(cid), "--winner", str(b))
    assert code == 0 and out["conflict"]["state"] == "resolved"
    app = LedgerApp(Settings(db=str(db_path)))
    supersession = next(e for e in app.store.read() if e.type == "Superseded")
    app.close()
    assert supersession.data.authorization == "user_channel" and supersession.actor == "cli"  # type: ignore[attr-defined]


def test_confirm_unlock_retire_supersede_arbitrate(db_path: Path) -> None:
    a, b, cid = seed(db_path)
    code, out = run(db_path, "confirm", str(a))
    assert code == 0 and out["source_type"] == "user_confirmed" and out["protection"] == "locked"
    code, out = run(db_path, "arbitrate", str(a), str(b), "--apply")
    assert code == 0 and out["applied"] and out["verdict"]["winner_id"] == a  # the confirmed fact wins
    assert out["conflict_id"] == cid
    code, out = run(db_path, "unlock", str(a))
    assert out["protection"] == "normal"
    app = LedgerApp(Settings(db=str(db_path), client="agent"))
    c = app.remember("the cache TTL is 60s")["memory_id"]
    d = app.remember("the cache TTL is 90s")["memory_id"]
    app.close()
    code, out = run(db_path, "supersede", str(c), str(d), "--reason", "tuned")
    assert code == 0 and out["superseded_by"] == d
    code, out = run(db_path, "retire", str(d), "--reason", "cache removed")
    assert code == 0 and out["status"] == "retired"
    code, out = run(db_path, "resolve", "999", "--keep-both")
    assert code == 1 and out["error"]["code"] == "not_found"


def test_doctor_exit_codes_and_review(db_path: Path) -> None:
    seed(db_path)
    code, out = run(db_path, "doctor")
    assert code == 0 and out["severity"] == "info"  # open conflicts are information
    app = LedgerApp(Settings(db=str(db_path), client="agent"))
    app.remember("the on-call phone is +1-555-0100", source_type="user_confirmed")  # agent-asserted
    app.close()
    code, out = run(db_path, "doctor")
    assert code == 1 and out["severity"] == "warning"
    code, out = run(db_path, "review")
    assert out["agent_asserted_confirmations"] == 1 and out["open_conflicts"] == 1


def test_a_verdict_naming_a_memory_this_ledger_does_not_hold_reads_plainly() -> None:
    """A set whose judged winner is not here (a log that lost the line that recorded it) read
    "#1 leads by None; judgment 3 says #None"."""
    from fact_ledger.server.cli.governance import _set_outcome

    said = _set_outcome({"winner_id": 1, "rule": None, "judgment": {"judgment_id": 3, "winner_id": None}})
    assert said == "#1 leads by being the only member held here; judgment 3 says a memory this ledger does not hold"
