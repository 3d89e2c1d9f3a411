"""Export/import and the time-travel CLI: a chain an outsider can verify, idempotent import."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.transfer import export_csv, export_jsonl, import_jsonl
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Settings
from tests.test_export_schema import ERASABLE

GENESIS = "0" * 64
CHAIN_FIELDS = (
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


class Tampered(Exception):
    """The exported chain does not hold at ``position`` (``what``: the link or the hash)."""

    def __init__(self, position: int, what: str) -> None:
        super().__init__(f"{what} does not hold at position {position}")
        self.position, self.what = position, what


def outside_verify(path: Path, start: str = GENESIS) -> int:
    """Recheck the hash chain from the export file alone: json + hashlib, no project code."""
    prev = start
    count = 0
    for line in path.read_bytes().split(b"\n")[:-1]:
        event = json.loads(line)["event"]
        columns = [event[f] for f in CHAIN_FIELDS]
        if event["seal"]:  # a sealed row (docs/design.md): its payload without the erasable fields, then the seal
            doc = json.loads(event["payload"])
            fields = {key: doc.pop(key) for key in ERASABLE[event["type"]] if key in doc}
            if event["type"] == "ClaimCollided":
                fields["members"] = [[m.pop("value", None), m.pop("norm", None)] for m in doc["members"]]
            columns[6] = json.dumps(doc, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
            columns.append(event["seal"])
            packed = json.dumps(fields, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode()
            if event["salt"] and hashlib.sha256(bytes.fromhex(event["salt"]) + packed).hexdigest() != event["seal"]:
                raise Tampered(event["position"], "seal")
        body = json.dumps(columns, separators=(",", ":"), ensure_ascii=False).encode()
        if event["prev_hash"] != prev:
            raise Tampered(event["position"], "prev_hash")
        if hashlib.sha256(prev.encode("ascii") + body).hexdigest() != event["hash"]:
            raise Tampered(event["position"], "hash")
        prev = event["hash"]
        count += 1
    return count


def fill(app: LedgerApp) -> int:
    """Four writes, five events; returns the id of the retracted memory."""
    app.remember("接口 /api/foo 返回 200", subject="/api/foo", event_time="2026-07-01T00:00:00Z")
    app.remember('quotes " backslash \\ newline \n tab \t emoji 🙂 and \u2028 separators', tags=["odd"])
    retracted = app.remember("retracted soon", event_time="2026-07-02T00:00:00Z")["memory_id"]
    app.remember("cancel that", ref_id=retracted, retracts=True, metadata={"k": [1, 2.5, None]})
    return int(retracted)


def test_an_outside_verifier_rechecks_the_exported_chain(app: LedgerApp, tmp_path: Path) -> None:
    fill(app)
    out = tmp_path / "export.jsonl"
    with out.open("wb") as fh:
        assert export_jsonl(app, fh) == app.store.last_position() >= 5
    assert outside_verify(out) == app.store.last_position()
    tampered = tmp_path / "tampered.jsonl"
    lines = out.read_bytes().split(b"\n")  # not splitlines(): U+2028 inside a string is no line end
    doc = json.loads(lines[1])
    doc["event"]["payload"] = doc["event"]["payload"].replace("emoji", "EMOJI")
    tampered.write_bytes(b"\n".join([lines[0], json.dumps(doc, ensure_ascii=False).encode(), *lines[2:]]))
    with pytest.raises(Tampered) as info:
        outside_verify(tampered)
    # the edited text is an erasable field: its seal no longer holds (docs/design.md, "Erasure")
    assert (info.value.position, info.value.what) == (json.loads(lines[1])["event"]["position"], "seal") == (2, "seal")


def test_a_since_export_verifies_from_its_first_prev_hash(app: LedgerApp, tmp_path: Path) -> None:
    fill(app)
    third = app.conn.execute("SELECT recorded_at FROM events WHERE position=3").get
    out = tmp_path / "since.jsonl"
    with out.open("wb") as fh:
        count = export_jsonl(app, fh, since=third)
    first = json.loads(out.read_bytes().splitlines()[0])["event"]
    assert first["position"] == 3 and outside_verify(out, start=first["prev_hash"]) == count == 3
    until = tmp_path / "until.jsonl"
    with until.open("wb") as fh:
        assert export_jsonl(app, fh, until=third) == 3


def test_import_is_idempotent_and_reports_progress(app: LedgerApp, tmp_path: Path) -> None:
    retracted = fill(app)
    out = tmp_path / "export.jsonl"
    with out.open("wb") as fh:
        export_jsonl(app, fh)
    out.write_bytes(out.read_bytes() + out.read_bytes().splitlines(keepends=True)[0] + b"garbage\n")
    other = LedgerApp(Settings(db=str(tmp_path / "other.db")))
    seen: list[tuple[int, int]] = []
    n = app.store.last_position()
    first = import_jsonl(other, out, progress=lambda done, total: seen.append((done, total)))
    assert (first["appended"], first["already_present"], first["bad_total"]) == (n, 1, 1)
    assert seen[-1] == (n + 2, n + 2)
    again = import_jsonl(other, out)
    assert (again["appended"], again["already_present"]) == (0, n + 1)
    assert sorted(r[0] for r in other.conn.execute("SELECT content FROM memories")) == sorted(
        r[0] for r in app.conn.execute("SELECT content FROM memories")
    )
    assert other.read(retracted)["memory"]["status"] == "retired"  # same ids: same positions
    assert other.verify()["projections"] == "consistent"
    other.close()


def test_csv_export_carries_the_hashes(app: LedgerApp) -> None:
    fill(app)
    buf = io.BytesIO()
    assert export_csv(app, buf) == app.store.last_position()
    rows = list(csv.DictReader(io.StringIO(buf.getvalue().decode("utf-8"))))
    assert rows[0]["prev_hash"] == GENESIS and rows[1]["prev_hash"] == rows[0]["hash"]
    assert json.loads(rows[0]["payload"])["content"] == "接口 /api/foo 返回 200"


def test_cli_time_travel_commands(tmp_path: Path) -> None:
    db = str(tmp_path / "ledger.db")
    runner = CliRunner()

    def run(*args: str) -> dict:
        result = runner.invoke(main, [*args, "--db", db, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    first = run("remember", "staging port is 8080", "--subject", "staging", "--event-time", "2026-07-01")
    second = run("remember", "staging port is 9090", "--subject", "staging", "--event-time", "2026-07-05")
    a, b, point = first["memory_id"], second["memory_id"], str(first["memory_id"])
    assert run("read", str(a), "--as-of-recorded", point)["memory"]["content"] == "staging port is 8080"
    with_time = run("read", str(b), "--as-of-event-time", "2026-07-06")["memory"]
    assert with_time["status"] == "active"
    assert [i["memory_id"] for i in run("timeline", "--subject", "staging")["intervals"]] == [a, b]
    last = run("status")["events"]
    assert [e["position"] for e in run("audit", "--limit", "1")["events"]] == [last]
    assert [r["memory_id"] for r in run("find", "staging port", "--as-of-recorded", point)["results"]] == [a]
    assert run("archive", "--dry-run")["candidates"] == 0
    dry = run("replay-backup")
    assert dry["dry_run"] is True and dry["events"] == 0
    export = tmp_path / "e.jsonl"
    assert run("export", "-o", str(export))["events"] == last
    other = str(tmp_path / "other.db")
    for expected in (last, 0):
        result = runner.invoke(main, ["import", str(export), "--db", other, "--json"])
        assert json.loads(result.output)["appended"] == expected
    human = runner.invoke(main, ["timeline", str(a), "--db", db])
    assert human.exit_code == 0 and f"#{a}" in human.output
    bad = runner.invoke(main, ["read", str(a), "--as-of-event-time", "soonish", "--db", db, "--json"])
    assert bad.exit_code == 1 and json.loads(bad.output)["error"]["code"] == "invalid_input"


def test_an_export_line_changed_after_export_is_refused(app: LedgerApp, tmp_path: Path) -> None:
    fill(app)
    out = tmp_path / "export.jsonl"
    with out.open("wb") as fh:
        export_jsonl(app, fh)
    lines = out.read_bytes().splitlines(keepends=True)
    edited = json.loads(lines[0])
    payload = json.loads(edited["event"]["payload"])
    payload["content"] = "接口 /api/foo 返回 500"  # a sealed field: the row hash covers it through the seal
    edited["event"]["payload"] = json.dumps(payload, ensure_ascii=False)
    renamed = json.loads(lines[1])
    renamed["event"]["actor"] = "someone-else"  # a field the row hash covers itself
    out.write_bytes(
        json.dumps(edited, ensure_ascii=False).encode()
        + b"\n"
        + json.dumps(renamed).encode()
        + b"\n"
        + b"".join(lines[2:])
    )
    other = LedgerApp(Settings(db=str(tmp_path / "other.db")))
    try:
        result = import_jsonl(other, out)
        assert result["bad_total"] == 2 and result["appended"] == len(lines) - 2
        assert [b["line"] for b in result["bad_lines"]] == [1, 2]
        assert all("its hash does not match its content" in b["error"] for b in result["bad_lines"])
        assert other.conn.execute("SELECT count(*) FROM memories WHERE content LIKE '%500%'").fetchone()[0] == 0
    finally:
        other.close()


def test_an_import_skips_what_names_a_refused_line_and_says_why(app: LedgerApp, tmp_path: Path) -> None:
    """An import that refused a changed line appended the later events naming its memory: the
    claim set, the judgment (the conflict view printed "#None should win"), a supersession."""
    app.remember("The staging API listens on port 8080", subject="staging")
    second = app.remember("The staging API listens on port 9090", subject="staging", source_type="agent_generated")
    (opened,) = second["conflicts"]
    app.judge(opened["conflict_id"], second["memory_id"], rationale="the agent checked")
    app.remember("Deploys freeze on Fridays")  # names nothing refused: it comes in
    out = tmp_path / "export.jsonl"
    with out.open("wb") as fh:
        export_jsonl(app, fh)
    lines = out.read_text().splitlines()
    changed = json.loads(lines[1])  # the second memory's MemoryRecorded
    payload = json.loads(changed["event"]["payload"])
    changed["event"]["payload"] = json.dumps({**payload, "content": "tampered"})
    lines[1] = json.dumps(changed)
    out.write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "copy.db")
    runner = CliRunner()
    imported = runner.invoke(main, ["--db", db, "--create", "--json", "import", str(out)])
    assert imported.exit_code == 4, imported.output
    result = json.loads(imported.stdout)
    assert result["bad_total"] == 3 and result["appended"] == len(lines) - 3
    assert [b["line"] for b in result["bad_lines"]] == [2, 3, 4]
    assert all("whose line was refused above" in b["error"] for b in result["bad_lines"][1:])
    copy = LedgerApp(Settings(db=db))
    try:
        assert copy.conflicts(state="all")["conflicts"] == []
        assert sorted(r["content"] for r in copy.find("staging deploys", limit=10)["results"]) == [
            "Deploys freeze on Fridays",
            "The staging API listens on port 8080",
        ]
        assert copy.verify()["projections"] == "consistent"
    finally:
        copy.close()


def test_a_line_written_by_a_newer_version_is_refused_not_read_short(app: LedgerApp, tmp_path: Path) -> None:
    """A ``MemoryRecorded`` of v9 with a field this version does not know was imported as v2,
    the field dropped and the stored row's hash no longer the exported one (bad lines 0)."""
    from fact_ledger.ledger.log import chain
    from fact_ledger.ledger.log.chain import StoredEvent

    fill(app)
    out = tmp_path / "export.jsonl"
    with out.open("wb") as fh:
        export_jsonl(app, fh)
    lines = out.read_bytes().splitlines()
    last = json.loads(lines[-1])["event"]
    stream = "01a23eff-0000-7000-8000-0000000000aa"
    payload = {"memory": stream, "content": "from the future", "source_type": "unknown", "newfield": [1, 2]}
    event = {
        **last,
        "position": last["position"] + 1,
        "event_id": "01a23eff-0000-7000-8000-000000000001",
        "stream_id": stream,
        "stream_version": 1,
        "type": "MemoryRecorded",
        "v": 9,
        "payload": json.dumps(payload),
        "prev_hash": last["hash"],
        "seal": "",
        "salt": None,
    }
    event["hash"] = chain.row_hash(last["hash"], StoredEvent(**{**event, "hash": ""}))
    out.write_bytes(b"\n".join([*lines, json.dumps({"schema": 1, "event": event}).encode()]) + b"\n")
    other = LedgerApp(Settings(db=str(tmp_path / "other.db")))
    try:
        result = import_jsonl(other, out)
        assert result["bad_total"] == 1 and result["appended"] == len(lines)
        assert "newer than this ledger reads" in result["bad_lines"][0]["error"]
        assert other.conn.execute("SELECT count(*) FROM memories WHERE content='from the future'").get == 0
    finally:
        other.close()


def test_a_line_cut_out_of_the_middle_of_an_export_is_named(app: LedgerApp, tmp_path: Path) -> None:
    """Every line carries its ``prev_hash``; a line deleted from the middle went unnoticed
    (appended, bad lines 0, exit 0) and its memory was silently missing."""
    fill(app)
    out = tmp_path / "export.jsonl"
    with out.open("wb") as fh:
        export_jsonl(app, fh)
    lines = out.read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:2] + lines[3:]))
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "other.db"), "--json", "import", str(cut)])
    answer = json.loads(result.stdout)
    assert result.exit_code == 4 and answer["gaps"] == [{"line": 3, "after_line": 2}] and answer["gap_total"] == 1
    whole = CliRunner().invoke(main, ["--db", str(tmp_path / "third.db"), "--json", "import", str(out)])
    assert whole.exit_code == 0 and "gaps" not in json.loads(whole.stdout)


def test_an_export_cut_before_an_erasure_imports_without_the_erased_row(tmp_path: Path) -> None:
    """``export --until`` kept a row erased later but not its ``Erased`` event: the import
    appended it, and the ledger it made failed ``verify`` (an erased row no erasure names)."""
    from fact_ledger.ledger.log.events import AUTH_USER

    source = LedgerApp(Settings(db=str(tmp_path / "source.db")))
    try:
        for n in range(3):
            source.remember(f"fact {n} is here")
        until = source.audit(limit=1)["events"][0]["recorded_at"]
        source.erase(2, reason="asked", authorization=AUTH_USER)
        cut = tmp_path / "until.jsonl"
        with cut.open("wb") as fh:
            export_jsonl(source, fh, until=until)
    finally:
        source.close()
    other = tmp_path / "other.db"
    result = CliRunner().invoke(main, ["--db", str(other), "--json", "import", str(cut)])
    answer = json.loads(result.stdout)
    assert result.exit_code == 4 and answer["appended"] == 2
    assert answer["bad_lines"] == [{"line": 2, "error": answer["bad_lines"][0]["error"]}]
    assert "without the Erased event" in answer["bad_lines"][0]["error"]
    verified = CliRunner().invoke(main, ["--db", str(other), "verify"])
    assert verified.exit_code == 0 and "intact" in verified.output


def test_an_export_saved_with_a_byte_order_mark_imports_whole(app: LedgerApp, tmp_path: Path) -> None:
    """An editor's UTF-8 BOM made line 1 "not JSON", and every later line naming its memory was
    refused with it."""
    fill(app)
    out = tmp_path / "export.jsonl"
    with out.open("wb") as fh:
        export_jsonl(app, fh)
    marked = tmp_path / "bom.jsonl"
    marked.write_bytes(b"\xef\xbb\xbf" + out.read_bytes())
    other = LedgerApp(Settings(db=str(tmp_path / "other.db")))
    try:
        result = import_jsonl(other, marked)
        assert result["bad_total"] == 0 and result["appended"] == len(out.read_bytes().splitlines())
    finally:
        other.close()


def test_files_saved_with_a_byte_order_mark_as_a_person_imports_them(app: LedgerApp, tmp_path: Path) -> None:
    """At the terminal: a JSONL export saved with a UTF-8 BOM imports whole; a CSV export saved
    with one (a spreadsheet does) was read as three lines of bad JSON (exit 4, "line 1: not
    JSON") instead of the CSV export it is: it is refused as one now, nothing appended."""
    fill(app)
    plain, table = tmp_path / "export.jsonl", tmp_path / "export.csv"
    with plain.open("wb") as fh:
        events = export_jsonl(app, fh)
    with table.open("wb") as fh:
        export_csv(app, fh)
    for path in (plain, table):
        path.with_name("bom-" + path.name).write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    other = str(tmp_path / "other.db")
    runner = CliRunner()
    runner.invoke(main, ["--db", other, "init"])
    done = runner.invoke(main, ["--db", other, "import", str(tmp_path / "bom-export.jsonl")])
    assert done.exit_code == 0 and done.stdout == f"appended {events}, already present 0, bad lines 0\n", done.output
    refused = runner.invoke(main, ["--db", other, "import", str(tmp_path / "bom-export.csv")])
    assert refused.exit_code == 1 and refused.stdout == "", refused.output
    assert "bom-export.csv is a CSV export; CSV is an export-only format" in refused.stderr
    assert "not JSON" not in refused.output


@pytest.mark.parametrize("held", [b"", b"\n\n  \r\n", b"\xef\xbb\xbf\n"], ids=["empty", "blank-lines", "bom-only"])
def test_importing_a_file_that_holds_no_events_says_so(tmp_path: Path, held: bytes) -> None:
    """An empty file (or one with blank lines only) answered "appended 0, already present 0, bad
    lines 0" like a file whose events were all in already: nothing said it held none. It is still
    done (exit 0): an export of a range with no events is such a file, and importing it is right."""
    empty = tmp_path / "nothing.jsonl"
    empty.write_bytes(held)
    db = str(tmp_path / "other.db")
    runner = CliRunner()
    runner.invoke(main, ["--db", db, "init"])
    done = runner.invoke(main, ["--db", db, "import", str(empty)])
    assert done.exit_code == 0, done.output
    assert done.stdout == f"{empty} holds no events (it is empty or has only blank lines): nothing to import\n"
    answer = json.loads(runner.invoke(main, ["--db", db, "--json", "import", str(empty)]).stdout)
    assert answer["empty"] is True and answer["appended"] == 0 and answer["bad_total"] == 0
    assert answer["notices"] == [f"{empty} holds no events (it is empty or has only blank lines): nothing to import"]


def test_an_import_with_events_is_not_called_empty(app: LedgerApp, tmp_path: Path) -> None:
    fill(app)
    out = tmp_path / "export.jsonl"
    with out.open("wb") as fh:
        export_jsonl(app, fh)
    runner = CliRunner()
    db = str(tmp_path / "other.db")
    runner.invoke(main, ["--db", db, "init"])
    for _ in range(2):  # the second time every event is present already: still not "empty"
        answer = json.loads(runner.invoke(main, ["--db", db, "--json", "import", str(out)]).stdout)
        assert "empty" not in answer and "notices" not in answer, answer
