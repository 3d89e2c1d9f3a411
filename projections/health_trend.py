"""``health_trend``: the summary of each recorded health report pass (``HealthChecked``), so the
report's trend over time is a fold of the log (a rebuild gives the same points)."""

from __future__ import annotations

import json
from typing import Any

import apsw

from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import Event, HealthChecked

_SCHEMA = """
CREATE TABLE IF NOT EXISTS health_trend(
    position    INTEGER PRIMARY KEY,
    recorded_at TEXT NOT NULL,
    workspace   TEXT NOT NULL,
    summary     TEXT NOT NULL
);
"""


class HealthTrendProjector:
    name = "health_trend"
    version = 1
    tables = ("health_trend",)
    handles = frozenset({"HealthChecked"})

    def create(self, conn: apsw.Connection) -> None:
        conn.execute(_SCHEMA)

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS health_trend")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        assert isinstance(data, HealthChecked)
        conn.execute(
            "INSERT OR REPLACE INTO health_trend(position, recorded_at, workspace, summary) VALUES(?,?,?,?)",
            (event.position, event.recorded_at, event.workspace, json.dumps(data.summary, sort_keys=True)),
        )


def points(conn: apsw.Connection, limit: int = 60) -> list[dict[str, Any]]:
    """The latest ``limit`` passes, oldest first: ``{position, recorded_at, **summary}``."""
    try:
        rows = conn.execute(
            "SELECT position, recorded_at, summary FROM health_trend ORDER BY position DESC LIMIT ?", (limit,)
        ).fetchall()
    except apsw.SQLError:  # a read model from before the trend
        return []
    # find latency is known only to a process that answered finds (a CLI `health --record` has
    # none): null then, so every point has the keys the contract lists
    unknown = {"find_p50_ms": None, "find_p95_ms": None}
    return [{"position": p, "recorded_at": at, **unknown, **json.loads(s)} for p, at, s in reversed(rows)]
