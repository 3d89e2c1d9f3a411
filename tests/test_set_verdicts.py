"""A claim set's verdict as every answer shows it (issue 29, points 1, 12, 13, 15): computed from
the members as they are now and from how the set ended, in ids a tool accepts."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fact_ledger.ledger.log.events import AUTH_AGENT, AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Policy, Settings
from tests.conftest import ledger_cli

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NO_MODEL = {"LEDGER_EMBEDDING_ENABLED": "false"}


def pair(app: LedgerApp, old: str = "8080", new: str = "7070", **extra: object) -> tuple[int, int, int]:
    """Two agents' memories on one claim: the newer leads by event_time."""
    a = app.remember(f"The staging API listens on port {old}", event_time="2025-01-01T00:00:00Z", **extra)
    b = app.remember(f"The staging API listens on port {new}", event_time="2025-02-01T00:00:00Z", **extra)
    return a["memory_id"], b["memory_id"], b["conflicts"][0]["conflict_id"]


def cli(db: Path, *args: str) -> str:
    done = ledger_cli(*args, "--db", str(db), env=NO_MODEL)
    assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.returncode, done.stderr)
    return done.stdout


def test_ledger_conflict_prints_a_readme_ledger_open_judged_and_resolved(db_path: Path) -> None:
    """Point 1: the human form of ``ledger conflict`` crashed on every set (KeyError winner_side)."""
    cli(db_path, "init")
    first = int(json.loads(cli(db_path, "remember", "The staging API listens on port 8080", "--json"))["memory_id"])
    reply = json.loads(cli(db_path, "remember", "The staging API listens on port 7070", "--json"))
    second, cid = reply["memory_id"], reply["conflicts"][0]["conflict_id"]
    out = cli(db_path, "conflict", str(cid))
    assert f"#{second} leads by event_time" in out and "event_time: the" in out
    cli(db_path, "judge", str(cid), str(first), "--rationale", "the deploy log says 8080")
    out = cli(db_path, "conflict", str(cid))
    assert f"judgment says #{first}" not in out and f"says #{first}" in out and "the deploy log says 8080" in out
    cli(db_path, "resolve", str(cid), "--winner", str(first))
    out = cli(db_path, "conflict", str(cid))
    assert f"#{first} won by resolve_conflict" in out and f"the rules alone favour #{second}" in out
    listed = cli(db_path, "conflicts", "--state", "all")
    assert f"#{first} won by resolve_conflict" in listed and "no leader" not in listed


def test_a_resolved_set_and_the_audit_show_only_ids_a_tool_accepts(app: LedgerApp) -> None:
    """Point 12: resolved sets answered the opening verdict (``leader``: a stream uuid, ``#0``)."""
    _, b, cid = pair(app)
    resolved = app.resolve_conflict(cid, winner_id=b, authorization=AUTH_USER)
    listed = app.conflicts(state="all")
    detail = app.conflict_detail(cid)
    for answer in (resolved, listed, detail):
        text = json.dumps(answer, ensure_ascii=False)
        assert not UUID.search(text) and "#0" not in text and '"leader":' not in text, text
    assert listed["conflicts"][0]["verdict"]["winner_id"] == b == listed["conflicts"][0]["leader_id"]
    meeting = app.remember("Team sync is on Wednesday", subject="team sync")["memory_id"]
    cancel = app.remember("Cancel the team sync", subject="team sync", ref_id=meeting, retracts=True)["memory_id"]
    events = app.audit(limit=50)["events"]
    payloads = {e["type"]: e["payload"] for e in reversed(events)}  # the newest of each type
    assert payloads["MemoryRecorded"]["ref_id"] == meeting and "ref" not in payloads["MemoryRecorded"]
    assert payloads["MemoryRetired"]["by_id"] == cancel and "by" not in payloads["MemoryRetired"]
    opening = payloads["ClaimCollided"]["verdict"]
    assert opening["leader_id"] == b and "leader" not in opening
    assert any(f"#{b}" in r for r in opening["reasons"]) and not any("#0" in r for r in opening["reasons"])
    assert not UUID.search(json.dumps([e["payload"] for e in events]))


def test_a_verdict_follows_the_members_as_they_are_now(app: LedgerApp) -> None:
    """Point 13: after a confirm the verdict said "tie (normal on both sides)" and "no leader"."""
    a, _, cid = pair(app)
    assert app.conflicts()["conflicts"][0]["verdict"]["rule"] == "event_time"
    app.confirm(a, authorization=AUTH_USER)
    now = app.conflict_detail(cid)["conflict"]
    assert now["leader_id"] == a and now["current_verdict"]["rule"] == "user_confirmed/locked protection"
    app.resolve_conflict(cid, winner_id=a, authorization=AUTH_USER)
    for verdict in (
        app.conflicts(state="all")["conflicts"][0]["verdict"],
        app.conflict_detail(cid)["conflict"]["verdict"],
    ):
        assert verdict["winner_id"] == a == verdict["leader_id"] and verdict["decided_by"] == "resolve_conflict"
        assert verdict["reasons"][0].startswith(f"resolve_conflict: #{a} was chosen")
        assert "locked" in verdict["reasons"][1] and "normal on both sides" not in " ".join(verdict["reasons"])
        assert "rules_favour" not in verdict


def test_a_person_choosing_against_the_rules_is_said_plainly(app: LedgerApp) -> None:
    a, b, cid = pair(app)
    app.judge(cid, a, rationale="the deploy log")
    judged = app.conflicts(state="judged")["conflicts"][0]["verdict"]
    assert judged["judgment"]["winner_id"] == a and judged["leader_id"] == b and judged["decided_by"] == "rules"
    assert judged["reasons"][0].startswith("judgment: ")
    app.resolve_conflict(cid, winner_id=a, authorization=AUTH_USER)
    verdict = app.conflict_detail(cid)["conflict"]["current_verdict"]
    assert verdict["winner_id"] == a and verdict["rules_favour"] == b and verdict["ranking"] == [a, b]
    assert verdict["reasons"][-1] == f"the rules alone favour #{b} (event_time); the set was settled for #{a}"


def test_keep_all_and_policy_settlements_say_what_settled_them(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), client="t", policy=Policy(auto_settle=True)))
    try:
        _, b, cid = pair(app)
        verdict = app.conflict_detail(cid)["conflict"]["verdict"]
        assert verdict["decided_by"] == "policy" and verdict["rule"] == "event_time" and verdict["winner_id"] == b
        assert verdict["reasons"][0].startswith(f"policy: auto_settle settled the set for #{b} by event_time")
    finally:
        app.close()
    app = LedgerApp(Settings(db=str(tmp_path / "c.db"), client="t", policy=Policy(settle_changes=True)))
    try:  # the shipped default: a later value; the reason named auto_settle, which was off
        _, b, cid = pair(app)
        verdict = app.conflict_detail(cid)["conflict"]["verdict"]
        assert verdict["reasons"][0].startswith(f"policy: settle_changes settled the set for #{b} by event_time")
    finally:
        app.close()
    app = LedgerApp(Settings(db=str(tmp_path / "k.db"), client="t"))
    try:
        _, _, cid = pair(app)
        app.resolve_conflict(cid, resolution="keep_all", authorization=AUTH_USER)
        verdict = app.conflicts(state="resolved")["conflicts"][0]["verdict"]
        assert verdict["winner_id"] is None and verdict["decided_by"] == "keep_all"
    finally:
        app.close()


def test_confirming_through_the_user_channel_sets_confidence_to_one(app: LedgerApp) -> None:
    """Point 15: ``confirm`` left confidence 0.45 beside trust 100."""
    mine = app.remember("Billing runs on the 3rd", confidence=0.45)["memory_id"]
    asserted = app.remember("Invoices go out on the 5th", confidence=0.45)["memory_id"]
    app.confirm(mine, authorization=AUTH_USER)
    app.confirm(asserted, authorization=AUTH_AGENT)
    assert app.read(mine)["memory"]["confidence"] == 1.0
    assert app.read(asserted)["memory"]["confidence"] == 0.45  # an agent's word is not a person's
    past = app.status()["events"]
    assert app.read(mine, as_of_recorded=past)["memory"]["confidence"] == 1.0  # time travel folds it too
    assert app.verify()["ok"]


def test_an_agents_change_to_a_confirmed_memory_says_it_was_relabelled(app: LedgerApp) -> None:
    """Point 15: the change turned the memory into agent_generated + protected without a word."""
    memory = app.remember("Deploys freeze on Fridays", source_type="user_confirmed", authorization=AUTH_USER)
    reply = app.update(memory["memory_id"], content="Deploys freeze on Thursdays", authorization=AUTH_AGENT)
    assert reply["relabelled"] == {
        "from": "user_confirmed",
        "source_type": "agent_generated",
        "protection": "protected",
    }
    assert "was user_confirmed" in reply["notices"][0]
    quiet = app.update(app.remember("Lunch is at noon")["memory_id"], content="Lunch is at one")
    assert "relabelled" not in quiet


def test_the_cli_keeps_all_values_of_a_larger_set(db_path: Path) -> None:
    """Point 15: "keep both" of a five-member set; ``--keep-all`` says what it does."""
    app = LedgerApp(Settings(db=str(db_path), client="t"))
    try:
        cid = [app.remember(f"The canary API listens on port {7000 + n}") for n in range(5)][-1]["conflicts"][0]
    finally:
        app.close()
    out = cli(db_path, "resolve", str(cid["conflict_id"]), "--keep-all")
    assert "all values kept (keep_all)" in out and "5 members" in out
    app = LedgerApp(Settings(db=str(db_path), client="t"))
    try:  # one word for it: the answer said resolution keep_both beside decided_by keep_all
        shown = app.conflict_detail(cid["conflict_id"])["conflict"]
        assert (shown["resolution"], shown["current_verdict"]["decided_by"]) == ("keep_all", "keep_all")
    finally:
        app.close()
