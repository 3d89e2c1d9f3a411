"""Exact and near duplicates (issue point 5) and the retraction lifecycle (point 6)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from fact_ledger.ledger import fingerprint
from fact_ledger.server.app.facade import LedgerApp
from tests.conftest import REPO


def test_an_exact_duplicate_creates_no_second_memory_and_is_recorded(app: LedgerApp) -> None:
    first = app.remember("The staging API listens on port 8080", subject="staging")
    again = app.remember(
        "  the STAGING api listens on port 8080\u200b ",
        subject="Staging",
        source_type="document_extracted",
        source_ref="runbook.md",
    )
    assert again["duplicate_of"] == first["memory_id"] and again["memory_id"] == first["memory_id"]
    assert app.status()["memories"] == 1
    sighting = list(app.store.read())[-1]
    assert sighting.type == "DuplicateSighted" and sighting.data.source_ref == "runbook.md"  # type: ignore[attr-defined]
    assert app.conn.execute("SELECT sightings FROM memories WHERE memory_id=?", (first["memory_id"],)).get == 1


def test_same_content_in_another_subject_or_workspace_is_not_an_exact_duplicate(app: LedgerApp) -> None:
    first = app.remember("deploys freeze on Fridays", subject="web")["memory_id"]
    other_subject = app.remember("deploys freeze on Fridays", subject="mobile")
    other_workspace = app.remember("deploys freeze on Fridays", subject="web", workspace="team-b")
    assert "duplicate_of" not in other_subject and "duplicate_of" not in other_workspace
    assert other_subject["near_duplicates"] == [{"memory_id": first, "similarity": 1.0}]
    assert other_workspace["near_duplicates"] == []  # fingerprints are scoped by workspace


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("张工明天下午三点在三楼开会讨论发布计划", "章工明天下午三点在三楼开会讨论发布计划"),
        (
            "Build 4711 deployed to staging at 2025-07-01T10:00:00.100Z",
            "Build 4711 deployed to staging at 2025-07-01T10:00:00.300Z",
        ),
        (
            "The nightly backup job copies the orders table to cold storage",
            "The nightly backup job copies the order table to cold storage",
        ),
    ],
)
def test_near_duplicates_are_reported_never_merged(app: LedgerApp, left: str, right: str) -> None:
    first = app.remember(left)["memory_id"]
    second = app.remember(right)
    assert "duplicate_of" not in second and second["memory_id"] != first
    (near,) = second["near_duplicates"]
    assert near["memory_id"] == first and near["similarity"] >= fingerprint.NEAR_THRESHOLD
    assert app.status()["memories"] == 2


def test_unrelated_memories_are_not_near_duplicates(app: LedgerApp) -> None:
    app.remember("张工明天下午三点在三楼开会讨论发布计划")
    app.remember("The staging API listens on port 8080")
    assert app.remember("我们下周一开始迁移数据库到新的集群")["near_duplicates"] == []
    assert app.remember("Payroll runs on the last business day of the month")["near_duplicates"] == []


def test_an_inactive_memory_is_no_near_duplicate(app: LedgerApp) -> None:
    first = app.remember("the quarterly report is due on the first Monday")["memory_id"]
    app.retire(first, authorization="user_channel")
    assert app.remember("the quarterly report is due on the first Monday!")["near_duplicates"] == []


def test_the_fingerprint_estimates_jaccard_and_is_stable() -> None:
    a, b = "张工明天下午三点开会", "章工明天下午三点开会"
    left, right = fingerprint.shingles(a), fingerprint.shingles(b)
    exact = len(left & right) / len(left | right)
    estimate = fingerprint.similarity(fingerprint.signature(a), fingerprint.signature(b))
    assert abs(estimate - exact) < 0.2
    assert fingerprint.signature(a) == fingerprint.signature.__wrapped__(a)  # the cache returns what it computed
    assert fingerprint.band_keys(fingerprint.signature(a), "w") != fingerprint.band_keys(fingerprint.signature(a), "v")
    assert "张工" in fingerprint.shingles(a) and "开会" in fingerprint.shingles(a)  # CJK bigrams


def test_signatures_and_band_keys_are_the_same_in_every_process() -> None:
    """No per-process randomness (Python's ``hash()`` is salted per process): other interpreters,
    with other hash seeds, compute the very same signature and band keys."""
    text = "张工明天下午三点在三楼开会讨论发布计划 port 8080"
    here = [list(fingerprint.signature(text)), fingerprint.band_keys(fingerprint.signature(text), "w")]
    program = (
        "import json, sys; from ledger import fingerprint as f; s = f.signature(sys.argv[1]); "
        "print(json.dumps([list(s), f.band_keys(s, 'w')]))"
    )
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", program, text],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed},
            timeout=60,
        )
        assert json.loads(done.stdout) == json.loads(json.dumps(here))


def test_re_remembering_a_retired_memorys_text_stores_it_again(app: LedgerApp) -> None:
    """The exact-duplicate rule looks only at active memories: a retired fact stated again is new."""
    old = app.remember("the release train leaves on Tuesdays", subject="release")["memory_id"]
    app.retire(old, authorization="user_channel")
    again = app.remember("the release train leaves on Tuesdays", subject="release")
    assert "duplicate_of" not in again and again["memory_id"] != old
    assert app.read(again["memory_id"])["memory"]["status"] == "active"
    assert app.read(old)["memory"]["status"] == "retired"
    assert app.conn.execute("SELECT sightings FROM memories WHERE memory_id=?", (old,)).get == 0
    assert [e.type for e in app.store.read()].count("DuplicateSighted") == 0


def test_retraction_retires_its_target_and_default_find_hides_it(app: LedgerApp) -> None:
    meeting = app.remember("周三下午三点开项目评审会", subject="评审会")["memory_id"]
    cancel = app.remember("取消周三的项目评审会", subject="评审会", ref_id=meeting, retracts=True)["memory_id"]
    target = app.read(meeting)["memory"]
    assert target["status"] == "retired"
    assert app.conn.execute("SELECT retired_by FROM memories WHERE memory_id=?", (meeting,)).get == cancel
    found = [r["memory_id"] for r in app.find("评审会")["results"]]
    assert meeting not in found and cancel in found
    assert meeting in [r["memory_id"] for r in app.find("评审会", include_inactive=True)["results"]]


def test_lifecycle_states_are_the_documented_ones(app: LedgerApp) -> None:
    a = app.remember("the status page is status.example.com", event_time="2025-07-01T00:00:00Z")["memory_id"]
    b = app.remember("the status page is status.example.org", event_time="2025-07-02T00:00:00Z")["memory_id"]
    c = app.remember("the support rota lives in the wiki")["memory_id"]
    app.arbitrate(a, b, apply=True, authorization="agent_asserted")
    app.retire(c, authorization="agent_asserted")
    assert [app.read(m)["memory"]["status"] for m in (a, b, c)] == ["superseded", "active", "retired"]
    assert app.overview()["by_status"] == {"active": 1, "retired": 1, "superseded": 1}
    assert app.conn.execute("SELECT count(*) FROM claims WHERE memory_id IN (?, ?)", (a, c)).get == 0


def test_the_write_path_reads_governance_tables_by_index_only(app: LedgerApp) -> None:
    """remember/update must not scan claims, fingerprints or conflicts (the 100k-memory budget)."""
    for i in range(30):
        app.remember(f"service-{i} port: {8000 + i}", subject=f"svc{i}")
    seen: list[tuple[str, object]] = []

    def trace(cursor: object, sql: str, bindings: object) -> bool:
        if sql.lstrip().upper().startswith("SELECT"):
            seen.append((sql, bindings))
        return True

    app.conn.exec_trace = trace
    mid = app.remember("service-3 port: 9999", subject="svc3")["memory_id"]
    app.update(mid, content="service-3 port: 9998")
    app.conn.exec_trace = None
    mine = ("claims", "near_dup_", "conflicts", "conflict_members")
    checked = 0
    for sql, bindings in seen:
        if not any(t in sql for t in mine):
            continue
        plan = " | ".join(r[3] for r in app.conn.execute("EXPLAIN QUERY PLAN " + sql, bindings))
        assert not re.search(r"\bSCAN (claims|near_dup_\w+|conflicts|conflict_members|judgments|memories)\b", plan), (
            sql,
            plan,
        )
        checked += 1
    assert checked >= 4
