"""The JSON Schema of an export line: shipped with the package, printed by ``ledger export
--schema``, validating a real 10k-event export with the ``jsonschema`` library and refusing
edited lines; the hash chain is rechecked with ``json`` + ``hashlib`` alone."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent, StoredEvent
from fact_ledger.ledger.log.envelope import export_schema
from fact_ledger.ledger.log.events import EVENT_TYPES, RENAMED, MemoryRecorded
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import ledger_cli
from tests.test_old_vocabulary import write_old_ledger

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
SIZE = 10_000
T1, T2 = "2026-01-01T00:00:00.000000Z", "2026-02-01T00:00:00.000000Z"


# docs/design.md: the erasable fields of each sealed type (a claim set's members keep their ids).
ERASABLE = {
    "MemoryRecorded": ("content", "subject", "tags", "source_ref", "claims", "metadata", "content_hash"),
    "MemoryUpdated": ("content", "subject", "tags", "metadata", "content_hash"),
    "DuplicateSighted": ("source_ref",),
    "ClaimCollided": ("subject", "attribute", "key", "verdict"),
    "JudgmentSubmitted": ("rationale",),
}


def _canonical(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def chain_break(lines: list[bytes]) -> int | None:
    """The first line (1-based) whose hash (or seal) does not follow from the line before, or None."""
    prev = GENESIS
    for number, line in enumerate(lines, 1):
        event = json.loads(line)["event"]
        columns = [event[f] for f in CHAIN]
        if event["seal"]:
            doc = json.loads(event["payload"])
            erasable = {k: doc.pop(k) for k in ERASABLE[event["type"]] if k in doc}
            if event["type"] == "ClaimCollided":
                erasable["members"] = [[m.pop("value", None), m.pop("norm", None)] for m in doc["members"]]
            columns[6] = _canonical(doc)
            columns.append(event["seal"])
            packed = _canonical(erasable).encode()
            if event["salt"] and hashlib.sha256(bytes.fromhex(event["salt"]) + packed).hexdigest() != event["seal"]:
                return number
        body = json.dumps(columns, separators=(",", ":"), ensure_ascii=False).encode()
        if event["prev_hash"] != prev or hashlib.sha256(prev.encode("ascii") + body).hexdigest() != event["hash"]:
            return number
        prev = event["hash"]
    return None


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    """The schema as the CLI prints it, with no database anywhere."""
    printed = ledger_cli("export", "--schema", env={"LEDGER_DB": "/nonexistent/dir/never.db"}, check=True)
    return json.loads(printed.stdout)


@pytest.fixture(scope="module")
def export_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """A real export of a ledger of 10k events: memories written straight to the log (the
    first open folds them in one rebuild), then a conflict, a judgment, a confirmation, a
    duplicate, a supersession and an alias through the facade."""
    db = tmp_path_factory.mktemp("export") / "ledger.db"
    store = EventStore(db)
    for start in range(0, SIZE - 20, 1000):
        batch = []
        for n in range(start, min(start + 1000, SIZE - 20)):
            stream = uuid7()
            batch.append(
                NewEvent(
                    data=MemoryRecorded(memory=stream, content=f'fact {n}: 端口 {n % 997} "quoted"', tags=("bulk",)),
                    stream_id=stream,
                    event_time="2026-03-01T00:00:00.000000Z",
                    actor="bulk",
                )
            )
        store.append(batch)
    store.close()
    app = LedgerApp(Settings(db=str(db), client="test", agent_id="pytest"))
    try:
        user = {"authorization": "user_channel"}
        a = app.remember("Bob lives in Berlin", subject="Bob", tags=["people"], event_time=T1)["memory_id"]
        b = app.remember("Bob lives in Paris 🙂 巴黎", subject="Bob", event_time=T2)
        app.judge(b["conflicts"][0]["conflict_id"], b["memory_id"], rationale="newer")
        app.confirm(b["memory_id"], **user)
        app.remember("Bob lives in Berlin", subject="Bob", event_time=T1)
        app.supersede(a, b["memory_id"], **user)
        app.accept_alias("the-ledger", "fact-ledger", **user)
        while app.store.last_position() < SIZE:
            app.remember(f"note {app.store.last_position()}", event_time=T2)
    finally:
        app.close()
    out = db.parent / "export.jsonl"
    ledger_cli("export", "-o", str(out), "--db", str(db), check=True)
    return out.read_bytes().split(b"\n")[:-1]  # not splitlines(): U+2028 inside a string is no line end


def test_the_cli_prints_the_schema_shipped_with_the_package(schema: dict[str, Any]) -> None:
    Draft202012Validator.check_schema(schema)
    assert schema == json.loads(export_schema())


def test_the_schema_names_every_column_and_every_type(schema: dict[str, Any]) -> None:
    event = schema["properties"]["event"]
    assert event["required"] == list(StoredEvent.__struct_fields__) == list(event["properties"])
    assert set(event["properties"]["type"]["enum"]) == set(EVENT_TYPES) | set(RENAMED)


@pytest.mark.slow
def test_a_10k_event_export_validates_and_its_chain_checks_with_hashlib(
    schema: dict[str, Any], export_lines: list[bytes]
) -> None:
    validator = Draft202012Validator(schema)
    assert len(export_lines) == SIZE
    for line in export_lines:
        validator.validate(json.loads(line))
    assert chain_break(export_lines) is None
    types = {json.loads(line)["event"]["type"] for line in export_lines}
    assert {"MemoryRecorded", "Confirmed", "JudgmentSubmitted", "Superseded", "ClaimCollided"} <= types


def _set(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda event: event.__setitem__(field, value)


@pytest.mark.parametrize(
    "edit",
    [
        _set("hash", "abc123"),
        _set("position", "7"),
        _set("type", "MemoryForgotten"),
        _set("event_time", "2026-03-01"),
        _set("payload", {"content": "an object, not JSON text"}),
        _set("extra", 1),
        lambda event: event.pop("idempotency_key"),
    ],
    ids=[
        "short-hash",
        "position-text",
        "unknown-type",
        "loose-time",
        "payload-object",
        "extra-column",
        "missing-column",
    ],
)
def test_the_schema_rejects_an_edited_line(
    schema: dict[str, Any], export_lines: list[bytes], edit: Callable[[dict[str, Any]], None]
) -> None:
    doc = json.loads(export_lines[3])
    Draft202012Validator(schema).validate(doc)
    edit(doc["event"])
    assert not Draft202012Validator(schema).is_valid(doc)


def test_an_edited_payload_that_still_fits_the_schema_breaks_the_chain(
    schema: dict[str, Any], export_lines: list[bytes]
) -> None:
    lines = list(export_lines[:50])
    doc = json.loads(lines[9])
    doc["event"]["payload"] = doc["event"]["payload"].replace("fact", "fake")
    assert Draft202012Validator(schema).is_valid(doc)
    lines[9] = json.dumps(doc, ensure_ascii=False).encode()
    assert chain_break(lines) == 10


def test_an_export_of_a_ledger_under_the_old_names_validates(schema: dict[str, Any], tmp_path: Path) -> None:
    write_old_ledger(tmp_path / "old.db")
    out = tmp_path / "old.jsonl"
    ledger_cli("export", "-o", str(out), "--db", str(tmp_path / "old.db"), check=True)
    lines = out.read_bytes().split(b"\n")[:-1]
    for line in lines:
        Draft202012Validator(schema).validate(json.loads(line))
    assert chain_break(lines) is None
    assert [json.loads(line)["event"]["type"] for line in lines][:3] == [
        "MemoryRemembered",
        "MemoryRemembered",
        "MemoryConfirmed",
    ]


def test_schema_with_another_export_option_is_a_usage_error(tmp_path: Path) -> None:
    """``export --format csv --schema`` printed the JSONL line's schema as if ``--format`` were
    not there (``--since``, ``--until`` and ``--output`` were dropped the same way). ``--schema``
    takes none of them now: a usage error (exit 64) naming what was given, nothing written."""
    db = str(tmp_path / "ledger.db")
    human = ledger_cli("--db", db, "export", "--format", "csv", "--schema")
    assert human.returncode == 64 and human.stdout == "", human.stdout
    assert (
        "--schema prints the JSON Schema of a JSONL export line and takes no --format csv; a CSV export has no "
        "JSON Schema: its header row names its columns" in " ".join(human.stderr.split())
    ), human.stderr
    out = tmp_path / "schema.json"
    doc = json.loads(
        ledger_cli("--db", db, "--json", "export", "--schema", "--since", "2026-01-01", "-o", str(out)).stdout
    )
    assert doc["error"]["reason"] == "usage" and "takes no --since, --output" in doc["error"]["message"]
    assert "ledger export --schema > export.schema.json" in doc["error"]["message"]
    assert not out.exists() and not Path(db).exists()  # no database opened, no file made
    alone = ledger_cli("--db", db, "export", "--schema", "--format", "jsonl")
    assert alone.returncode == 0 and json.loads(alone.stdout) == json.loads(export_schema())
