"""A small ledger with everything the console shows: English and Chinese content, open conflicts,
an update (two versions), a supersession, a retraction, a locked user-confirmed fact, tags and
workspaces. Used by the browser tests and by ``tools/console_shots.py``."""

from __future__ import annotations

from typing import Any

from fact_ledger.ledger.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings


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
