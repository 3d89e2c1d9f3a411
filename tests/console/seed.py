"""A small ledger with everything the console shows: English and Chinese content, claim sets in
every state (open, a five-member one, judged, resolved by a person against the rules over a
locked fact, kept all, settled by policy), an update (two versions), a supersession, a
retraction, a locked user-confirmed fact, tags and workspaces. Used by the browser tests and by
``tools/console_shots.py``."""

from __future__ import annotations

from typing import Any

from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Policy, Settings


def seed(db: str) -> dict[str, Any]:
    """Write the seed through the facade; returns the ids the tests look for."""
    app = LedgerApp(Settings(db=db, client="seed", agent_id="agent-1"))
    try:
        ids: dict[str, Any] = {}
        r = app.remember
        ids["paris"] = r("Alice lives in Paris", subject="Alice", event_time="2023-01-10T09:00:00Z", tags=["people"])[
            "memory_id"
        ]
        berlin = r(
            "Alice lives in Berlin",
            subject="Alice",
            event_time="2024-06-01T09:00:00Z",
            tags=["people"],
            source_type="document_extracted",
        )
        ids["berlin"] = berlin["memory_id"]
        ids["alice_conflict"] = berlin["conflicts"][0]["conflict_id"]
        ids["port"] = r(
            "The staging API listens on port 8080",
            subject="staging api",
            tags=["infra"],
            workspace="fact-ledger",
            event_time="2024-01-05T12:00:00Z",
        )["memory_id"]
        ids["before_update"] = app.status()["events"]
        app.update(ids["port"], expected_version=1, content="The staging API listens on port 8081")
        ids["old_db"] = r(
            "Production database is PostgreSQL 14", subject="prod db", tags=["infra"], event_time="2023-03-01T00:00:00Z"
        )["memory_id"]
        ids["new_db"] = r(
            "Production database was upgraded to PostgreSQL 16 in May",
            subject="prod db",
            tags=["infra"],
            event_time="2024-05-20T00:00:00Z",
        )["memory_id"]
        app.supersede(ids["old_db"], ids["new_db"], reason="upgrade finished", authorization=AUTH_USER)
        ids["meeting"] = r(
            "Team sync is on Wednesday at 10:00", subject="team sync", event_time="2024-02-01T08:00:00Z"
        )["memory_id"]
        ids["cancel"] = r(
            "Cancel the Wednesday team sync",
            subject="team sync",
            ref_id=ids["meeting"],
            retracts=True,
            event_time="2024-02-02T08:00:00Z",
        )["memory_id"]
        ids["shanghai"] = r("张伟住在上海", subject="张伟", event_time="2022-03-01T00:00:00Z")["memory_id"]
        beijing = r("张伟住在北京", subject="张伟", event_time="2024-09-01T00:00:00Z")
        ids["beijing"] = beijing["memory_id"]
        ids["zh_conflict"] = beijing["conflicts"][0]["conflict_id"] if beijing["conflicts"] else None
        ids["budget"] = r(
            "项目预算是5万元",
            subject="项目预算",
            tags=["财务"],
            source_type="user_confirmed",
            event_time="2024-04-01T00:00:00Z",
        )["memory_id"]
        app.confirm(ids["budget"], authorization=AUTH_USER)
        ids.update(_claim_sets(app, db))
        ids["builds"] = [  # enough rows for a second page
            r(
                f"Build log {n}: nightly build {n} passed on runner r{n % 4}",
                subject=f"build {n}",
                tags=["ci"],
                event_time=f"2024-07-{n % 28 + 1:02d}T03:00:00Z",
            )["memory_id"]
            for n in range(30)
        ]
        return ids
    finally:
        app.close()


def _port(app: LedgerApp, service: str, port: int, day: int) -> dict[str, Any]:
    return app.remember(
        f"The {service} API listens on port {port}", subject=service, event_time=f"2024-03-{day:02d}T00:00:00Z"
    )


def _claim_sets(app: LedgerApp, db: str) -> dict[str, Any]:
    """One claim set per state the pages show, each on its own service's port."""
    ids: dict[str, Any] = {}
    canary = [_port(app, "canary", 7000 + n, n + 1) for n in range(5)]
    ids["five_conflict"] = canary[-1]["conflicts"][0]["conflict_id"]
    qa_old = _port(app, "qa", 6001, 1)["memory_id"]
    qa_new = _port(app, "qa", 6002, 2)
    ids["judged_conflict"] = qa_new["conflicts"][0]["conflict_id"]
    app.judge(ids["judged_conflict"], qa_old, rationale="the QA runbook says 6001")
    ids["judged_for"] = qa_old
    demo_old = _port(app, "demo", 5001, 1)["memory_id"]
    app.confirm(demo_old, authorization=AUTH_USER)  # a person's fact: it leads by rule 1
    demo_new = _port(app, "demo", 5002, 2)
    ids["resolved_conflict"], ids["resolved_for"], ids["rules_favour"] = (
        demo_new["conflicts"][0]["conflict_id"],
        demo_new["memory_id"],
        demo_old,
    )
    app.resolve_conflict(ids["resolved_conflict"], winner_id=demo_new["memory_id"], authorization=AUTH_USER)
    _port(app, "docs", 3001, 1)
    ids["kept_conflict"] = _port(app, "docs", 3002, 2)["conflicts"][0]["conflict_id"]
    app.resolve_conflict(ids["kept_conflict"], resolution="keep_all", authorization=AUTH_USER)
    guarded_old = _port(app, "search", 9201, 1)["memory_id"]
    app.confirm(guarded_old, authorization=AUTH_USER)
    guarded_new = _port(app, "search", 9202, 2)
    ids["guarded_conflict"], ids["guarded_loser"], ids["guarded_winner"] = (
        guarded_new["conflicts"][0]["conflict_id"],
        guarded_old,
        guarded_new["memory_id"],
    )
    settling = LedgerApp(Settings(db=db, client="seed-policy", agent_id="agent-2", policy=Policy(auto_settle=True)))
    try:
        _port(settling, "perf", 4001, 1)
        ids["policy_conflict"] = _port(settling, "perf", 4002, 2)["conflicts"][0]["conflict_id"]
    finally:
        settling.close()
    return ids
