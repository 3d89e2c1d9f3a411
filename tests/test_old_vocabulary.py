"""A ledger written before the log took the design's names (``MemoryRemembered``,
``MemoryConfirmed``) opens, verifies, rebuilds, exports unchanged, imports and time-travels.

The old log is written here row by row as the old code stored it: old type names, a v1 payload
(tags as one comma-separated string), the hash chain computed with hashlib alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.envelope import backup_envelope, from_envelope
from fact_ledger.ledger.log.events import Confirmed, MemoryRecorded, current_type, stored_names
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections.runner import ProjectionRunner
from fact_ledger.projections.search.index import SearchProjector
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.transfer import export_jsonl, import_jsonl
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Settings

GENESIS = "0" * 64
CHAIN = (
    "position",
    "event_id",
    "stream_id",
    "stream_version",
    "type",
    "v",
    "payload",
    "event_time",
    "recorded_at",
    "actor",
    "workspace",
    "idempotency_key",
)
A, B = "0190a000-0000-7000-8000-00000000000a", "0190a000-0000-7000-8000-00000000000b"
# (stream, stream_version, type, v, payload, event_time): memory 1 (v1 tags), memory 2, memory 2
# confirmed, memory 1 superseded by memory 2.
OLD_LOG = (
    (
        A,
        1,
        "MemoryRemembered",
        1,
        {"memory": A, "content": "staging port is 8080", "subject": "staging", "tags": "infra, db ,"},
        "2026-07-01T00:00:00.000000Z",
    ),
    (
        B,
        1,
        "MemoryRemembered",
        2,
        {"memory": B, "content": "staging port is 9090", "subject": "staging", "tags": ["infra"]},
        "2026-07-05T00:00:00.000000Z",
    ),
    (B, 2, "MemoryConfirmed", 1, {"memory": B, "authorization": "user_channel"}, "2026-07-06T00:00:00.000000Z"),
    (
        A,
        2,
        "Superseded",
        1,
        {"loser": A, "winner": B, "reason": "moved", "rule": "manual"},
        "2026-07-06T00:00:00.000000Z",
    ),
)


def write_old_ledger(path: Path) -> list[dict[str, object]]:
    """The rows an earlier release stored, inserted as they were (the store's triggers allow INSERT)."""
    EventStore(path).close()  # the events table, empty
    store = EventStore(path)
    rows: list[dict[str, object]] = []
    prev = GENESIS
    for position, (stream, version, type_, v, payload, event_time) in enumerate(OLD_LOG, 1):
        row: dict[str, object] = {
            "position": position,
            "event_id": f"0190a000-0000-7000-8000-{position:012d}",
            "stream_id": stream,
            "stream_version": version,
            "type": type_,
            "v": v,
            "payload": json.dumps(payload, sort_keys=True, separators=(",", ":")),
            "event_time": event_time,
            "recorded_at": f"2026-07-10T00:00:0{position}.000000Z",
            "actor": "old-agent",
            "workspace": "default",
            "idempotency_key": None,
            "prev_hash": prev,
        }
        body = json.dumps([row[f] for f in CHAIN], separators=(",", ":"), ensure_ascii=False).encode()
        row["hash"] = prev = hashlib.sha256(prev.encode("ascii") + body).hexdigest()
        store.conn.execute(
            f"INSERT INTO events({', '.join(row)}) VALUES({', '.join('?' * len(row))})", tuple(row.values())
        )
        rows.append(row)
    store.close()
    return rows


@pytest.fixture
def old(tmp_path: Path) -> Iterator[tuple[LedgerApp, list[dict[str, object]]]]:
    rows = write_old_ledger(tmp_path / "old.db")
    app = LedgerApp(Settings(db=str(tmp_path / "old.db"), client="test", agent_id="pytest"))
    yield app, rows
    app.close()


def stored_types(app: LedgerApp) -> list[str]:
    return [t for (t,) in app.conn.execute("SELECT type FROM events ORDER BY position")]


def test_an_old_ledger_opens_and_verifies_with_its_rows_unchanged(old: tuple[LedgerApp, list]) -> None:
    app, rows = old
    assert app.verify() == {"ok": True, "events": 4, "chain": "intact", "projections": "consistent"}
    assert stored_types(app) == [r["type"] for r in rows]
    first, second = app.read(1)["memory"], app.read(2)["memory"]
    assert (first["status"], first["tags"], first["superseded_by"]) == ("superseded", ["infra", "db"], 2)
    assert (second["protection"], second["source_type"]) == ("locked", "user_confirmed")


def test_new_writes_take_the_design_names_beside_the_old_rows(old: tuple[LedgerApp, list]) -> None:
    app, _ = old
    new = app.remember("prod port is 443", subject="prod")["memory_id"]
    app.confirm(new, authorization="user_channel")
    assert stored_types(app)[4:] == ["MemoryRecorded", "Confirmed"]
    audit = app.audit(limit=10)["events"]
    assert [(e["type"], e.get("stored_type")) for e in reversed(audit)] == [
        ("MemoryRecorded", "MemoryRemembered"),
        ("MemoryRecorded", "MemoryRemembered"),
        ("Confirmed", "MemoryConfirmed"),
        ("Superseded", None),
        ("MemoryRecorded", None),
        ("Confirmed", None),
    ]
    for name in ("MemoryRecorded", "MemoryRemembered"):  # either name filters rows under both
        assert [e["position"] for e in app.audit(type=name)["events"]] == [5, 2, 1]
    assert [e["position"] for e in app.audit(type="MemoryConfirmed")["events"]] == [6, 3]
    assert app.verify()["projections"] == "consistent"


def test_rebuild_folds_the_old_names_into_the_same_read_models(old: tuple[LedgerApp, list]) -> None:
    app, _ = old
    before = app.runner.checksums()
    assert app.conn.execute("SELECT count(*) FROM memories").get == 2
    assert app.rebuild()["events"] == 4
    assert app.runner.checksums() == before
    assert app.find("staging port")["results"][0]["memory_id"] == 2


def test_export_emits_what_is_stored_and_import_accepts_it(old: tuple[LedgerApp, list], tmp_path: Path) -> None:
    app, rows = old
    out = tmp_path / "old.jsonl"
    with out.open("wb") as fh:
        assert export_jsonl(app, fh) == 4
    # rows written before sealing export with an empty seal and no salt (docs/design.md, "Erasure")
    assert [json.loads(line)["event"] for line in out.read_bytes().splitlines()] == [
        {**row, "seal": "", "salt": None} for row in rows
    ]
    other = LedgerApp(Settings(db=str(tmp_path / "other.db")))
    try:
        assert import_jsonl(other, out)["appended"] == 4
        assert import_jsonl(other, out)["appended"] == 0
        assert other.verify()["projections"] == "consistent"
        # Import appends through today's write path: the copy speaks the current vocabulary.
        assert stored_types(other) == ["MemoryRecorded", "MemoryRecorded", "Confirmed", "Superseded"]
        for memory_id in (1, 2):
            mine, theirs = app.read(memory_id)["memory"], other.read(memory_id)["memory"]
            assert {k: mine[k] for k in ("content", "tags", "status", "protection", "superseded_by")} == {
                k: theirs[k] for k in ("content", "tags", "status", "protection", "superseded_by")
            }
    finally:
        other.close()


def test_time_travel_over_the_old_rows(old: tuple[LedgerApp, list]) -> None:
    app, _ = old
    at_two = app.read(2, as_of_recorded=2)["memory"]
    assert (at_two["protection"], at_two["source_type"]) == ("normal", "agent_generated")
    assert app.read(1, as_of_recorded=3)["memory"]["status"] == "active"
    assert app.read(1, as_of_recorded=4)["memory"]["status"] == "superseded"
    assert app.read(1, as_of_event_time="2026-07-02T00:00:00Z")["memory"]["tags"] == ["infra", "db"]
    history = app.history(2)["versions"]
    assert [(e["type"], e.get("stored_type")) for v in history for e in v["events"]][:2] == [
        ("MemoryRecorded", "MemoryRemembered"),
        ("Confirmed", "MemoryConfirmed"),
    ]
    assert [i["memory_id"] for i in app.timeline(subject="staging")["intervals"]] == [1, 2]


@pytest.mark.parametrize(("old_name", "cls"), [("MemoryRemembered", MemoryRecorded), ("MemoryConfirmed", Confirmed)])
def test_a_backup_line_under_either_name_reads_as_the_current_type(old_name: str, cls: type) -> None:
    """``replay-backup`` and ``import`` parse lines with ``from_envelope``."""
    data = cls(memory=A, content="x") if cls is MemoryRecorded else cls(memory=A)
    line = backup_envelope(
        NewEvent(data=data, stream_id=A, event_time="2026-07-01T00:00:00Z"), "2026-07-01T00:00:00.000000Z"
    )
    assert json.loads(line)["event"]["type"] == cls.__name__
    for name in (cls.__name__, old_name):
        renamed = line.replace(f'"type":"{cls.__name__}"'.encode(), f'"type":"{name}"'.encode())
        assert from_envelope(renamed).data == data
    assert current_type(old_name) == cls.__name__
    assert stored_names(old_name) == stored_names(cls.__name__) == (cls.__name__, old_name)


def test_a_projector_naming_an_old_type_is_refused(tmp_path: Path) -> None:
    """Rows are dispatched by current name: a projector listening for an old one would miss them."""
    stale = SearchProjector()
    stale.handles = frozenset({"MemoryRemembered", "MemoryUpdated"})
    store = EventStore(tmp_path / "x.db")
    try:
        with pytest.raises(ValueError, match="MemoryRemembered"):
            ProjectionRunner(store, [stale])
        ProjectionRunner(store, [SearchProjector()])
    finally:
        store.close()


def test_replay_backup_appends_lines_written_under_the_old_names(tmp_path: Path) -> None:
    """A backup an earlier release wrote while SQLite was unreachable (no position, no hash)."""
    settings = Settings(db=str(tmp_path / "ledger.db"), client="test", agent_id="pytest")
    lines = []
    for n, (stream, version, type_, v, payload, event_time) in enumerate(OLD_LOG[1:3], 1):
        event = {
            "event_id": f"0190b000-0000-7000-8000-{n:012d}",
            "stream_id": stream,
            "stream_version": version,
            "type": type_,
            "v": v,
            "payload": json.dumps(payload),
            "event_time": event_time,
            "recorded_at": "2026-07-10T00:00:00.000000Z",
            "actor": "old-agent",
            "workspace": "default",
            "idempotency_key": None,
        }
        lines.append(json.dumps({"schema": 1, "event": event, "command": "c1", "command_size": 2}))
    Path(settings.backup_path).write_text("\n".join(lines) + "\n")
    app = LedgerApp(settings)
    try:
        assert app.replay_backup(dry_run=False, authorization="user_channel")["appended"] == 2
        memory = app.read(1)["memory"]
        assert (memory["content"], memory["protection"], memory["tags"]) == (
            "staging port is 9090",
            "locked",
            ["infra"],
        )
        assert stored_types(app) == ["MemoryRecorded", "Confirmed"]
    finally:
        app.close()


def test_cli_audit_shows_the_design_names_for_new_writes(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.db")

    def run(*args: str) -> dict:
        result = CliRunner().invoke(main, [*args, "--db", db, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    memory_id = run("remember", "standup is at 9:30", "--source-type", "agent_generated")["memory_id"]
    run("confirm", str(memory_id))
    assert [e["type"] for e in run("audit")["events"]] == ["Confirmed", "MemoryRecorded"]
    assert [e["type"] for e in run("audit", "--type", "MemoryRemembered")["events"]] == ["MemoryRecorded"]
