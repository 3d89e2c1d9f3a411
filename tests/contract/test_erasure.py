"""Issue 27's acceptance over stdio and on a team's PostgreSQL log: a memory with a unique marker
is written, embedded, exported and backed up, then erased; a byte scan (never the API) finds the
marker in no file, ``verify`` passes, a rebuild gives the same read models, time travel shows
``[erased]``, and the receipt verifies on another machine of the team and fails when edited.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import apsw
import mcp.types as mcp_types
import pytest

from fact_ledger.projections import derived, vectors
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import ledger_cli
from tests.contract.conftest import LedgerServer

MARKER = "qx-marker-40417-vanish"


class Approving:
    """The person behind the client: answers each confirmation from a script."""

    def __init__(self) -> None:
        self.answers: list[bool | None] = []
        self.questions: list[str] = []

    async def __call__(self, ctx: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        self.questions.append(params.message)
        answer = self.answers.pop(0)
        if answer is None:
            return mcp_types.ElicitResult(action="decline")
        return mcp_types.ElicitResult(action="accept", content={"approve": answer})


def _files_holding(folder: Path, needle: bytes) -> list[str]:
    """Every file under ``folder`` whose bytes hold ``needle`` (a byte scan, no API)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def _wait_for_vectors(server: LedgerServer, count: int) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = server.memory("status")["vectors"]
        if status.get("vectors", 0) >= count and not status.get("pending"):
            return status
        time.sleep(0.1)
    raise AssertionError(f"vectors never caught up: {status}")


def test_an_erased_memory_leaves_every_file_and_the_log_still_proves_the_rest(tmp_path: Path, tiny_gguf: Path) -> None:
    home = tmp_path / "machine"
    home.mkdir()
    db = home / "ledger.db"
    env = {"LEDGER_EMBEDDING_MODEL": str(tiny_gguf)}
    user = Approving()
    server = LedgerServer(db, env=env, elicitation=user).start()
    try:
        kept = server.memory("remember", {"content": "the office opens at nine", "subject": "office"})
        secret = server.memory(
            "remember",
            {
                "content": f"Dana's locker code is {MARKER}",
                "subject": f"dana {MARKER}",
                "tags": [MARKER],
                "metadata": {"note": MARKER},
            },
        )
        assert kept.ok and secret.ok, (kept.body, secret.body)
        memory_id = secret["memory_id"]
        _wait_for_vectors(server, 2)
        ledger_cli("export", "-o", str(home / "before.jsonl"), "--db", str(db), check=True)
        assert MARKER.encode() in (home / "before.jsonl").read_bytes()
        # The JSONL backup holds what a write kept while the log refused it; here, the marker's lines.
        backup = db.with_suffix(".backup.jsonl")
        lines = [line for line in (home / "before.jsonl").read_bytes().splitlines(True) if MARKER.encode() in line]
        backup.write_bytes(b"".join(lines))
        model_id = (
            apsw.Connection(str(home / "ledger.views.db"))
            .execute("SELECT value FROM vectors_meta WHERE name='model_id'")
            .get
        )
        position_before = server.events()

        # An agent's authorized: true is not enough: the user declines, nothing is erased.
        user.answers = [None]
        refused = server.call("memory_govern", "erase", {"memory_id": memory_id, "reason": "asked", "authorized": True})
        assert refused.code == "unauthorized" and server.events() == position_before
        user.answers = [True]
        erased = server.call(
            "memory_govern", "erase", {"memory_id": memory_id, "reason": "Dana asked", "authorized": True}
        )
        assert erased.ok, erased.body
        assert "Erase memory" in user.questions[-1]
        receipt = erased["receipt"]
        assert receipt["erasures"][0]["memory_id"] == memory_id and receipt["head"]["position"] == position_before + 1
        assert MARKER not in json.dumps(erased.body)
        found = server.memory("find", {"query": MARKER})
        assert found.ok and memory_id not in [r["memory_id"] for r in found.body.get("results", [])], found.body
        status = server.memory("status")["vectors"]
        assert status["vectors"] == 1 and status["context_vectors"] == 0
    finally:
        server.close()
    assert "Traceback" not in server.stderr

    ledger_cli("export", "-o", str(home / "after.jsonl"), "--db", str(db), check=True)
    (home / "before.jsonl").unlink()  # the old export is the user's own copy: out of reach, by design
    (home / "ledger.stderr.log").unlink()
    assert _files_holding(home, MARKER.encode()) == []
    views = apsw.Connection(str(home / "ledger.views.db"))
    for text in (f"Dana's locker code is {MARKER}",):
        key = derived.embedding_key(model_id, vectors.passage_text(text))
        assert views.execute("SELECT count(*) FROM derived_cache WHERE key=?", (key,)).get == 0
    assert views.execute("SELECT count(*) FROM vectors WHERE memory_id=?", (memory_id,)).get == 0
    views.close()

    done = ledger_cli("verify", "--db", str(db), "--json", check=True)
    assert json.loads(done.stdout)["chain"] == "intact"
    app = LedgerApp(Settings(db=str(db)))
    try:
        before = app.runner.checksums()
        app.rebuild()
        assert app.runner.checksums() == before
        versions = app.history(memory_id)["versions"]
        assert versions[0]["content"] == "[erased]" and versions[0]["actor"]
        past = app.as_of(as_of_recorded=position_before)
        shown = json.dumps(past, ensure_ascii=False)
        assert MARKER not in shown
        assert "[erased]" in json.dumps(app.timeline(memory_id=memory_id, as_of_recorded=position_before))
    finally:
        app.close()


def test_a_team_log_erases_through_the_cli_and_the_receipt_holds_on_another_machine(
    tmp_path: Path, pg_cluster: Any, tiny_gguf: Path
) -> None:
    url = pg_cluster.database()
    model = {"LEDGER_EMBEDDING_MODEL": str(tiny_gguf)}
    first = {"LEDGER_STORE": url, "LEDGER_VIEWS": str(tmp_path / "first" / "views.db"), **model}
    second = {"LEDGER_STORE": url, "LEDGER_VIEWS": str(tmp_path / "second" / "views.db"), **model}
    ledger_cli("remember", "the team meets on tuesdays", "--json", env=first, check=True)
    written = ledger_cli("remember", f"Eve's badge number is {MARKER}", "--json", env=first, check=True)
    memory_id = json.loads(written.stdout)["memory_id"]
    for machine in (first, second):  # each machine embeds into its own read models
        ledger_cli("reembed", env=machine, check=True)
        assert json.loads(ledger_cli("status", "--json", env=machine, check=True).stdout)["vectors"]["vectors"] == 2
    export = tmp_path / "first" / "before.jsonl"
    ledger_cli("export", "-o", str(export), env=first, check=True)
    lines = [line for line in export.read_bytes().splitlines(True) if MARKER.encode() in line]
    (tmp_path / "first" / "views.backup.jsonl").write_bytes(b"".join(lines))  # this machine's backup
    export.unlink()  # the user's own copy, out of reach by design
    receipt_file = tmp_path / "receipt.json"
    done = ledger_cli("erase", str(memory_id), "--reason", "Eve left", "--receipt", str(receipt_file), env=first)
    assert done.returncode == 0, done.stderr
    receipt = json.loads(receipt_file.read_text())

    ok = ledger_cli("verify", "--receipt", str(receipt_file), "--json", env=second)
    assert ok.returncode == 0 and json.loads(ok.stdout)["receipt"] == "valid", ok.stdout + ok.stderr
    edited = dict(receipt)
    edited["erasures"] = [{**receipt["erasures"][0], "rows": [{**receipt["erasures"][0]["rows"][0], "seal": "0" * 64}]}]
    bad_file = tmp_path / "edited.json"
    bad_file.write_text(json.dumps(edited))
    bad = ledger_cli("verify", "--receipt", str(bad_file), env=second)
    assert bad.returncode == 2 and f"position {receipt['erasures'][0]['position']}" in bad.stderr + bad.stdout
    other_log = tmp_path / "other-log.json"  # the team's log is named by its id: another log's receipt fails
    other_log.write_text(json.dumps({**receipt, "log": "00000000-0000-0000-0000-000000000000"}))
    bad = ledger_cli("verify", "--receipt", str(other_log), env=second)
    assert bad.returncode == 2 and "not this log" in bad.stderr + bad.stdout, bad.stdout + bad.stderr

    # A byte scan of PostgreSQL: a dump, and the table files after a checkpoint.
    dump = subprocess.run([str(pg_cluster.bin / "pg_dump"), url], capture_output=True, check=True).stdout
    assert MARKER.encode() not in dump and b"[erased]" in dump
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        dboid = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
    assert _files_holding(pg_cluster.data / "base" / str(dboid), MARKER.encode()) == []
    ledger_cli("export", "-o", str(tmp_path / "first" / "after.jsonl"), env=first, check=True)
    for machine in ("first", "second"):
        assert _files_holding(tmp_path / machine, MARKER.encode()) == []
    assert (tmp_path / "first" / "views.backup.jsonl").read_bytes() == b""
    for machine in (first, second):
        assert json.loads(ledger_cli("verify", "--json", env=machine, check=True).stdout)["chain"] == "intact"
        assert json.loads(ledger_cli("status", "--json", env=machine, check=True).stdout)["vectors"]["vectors"] == 1


@pytest.mark.parametrize("field", ["hash", "position"])
def test_a_receipt_that_names_another_event_fails(tmp_path: Path, field: str) -> None:
    db = tmp_path / "ledger.db"
    ledger_cli("remember", f"Frank's pin is {MARKER}", "--db", str(db), check=True)
    ledger_cli("remember", "another fact", "--db", str(db), check=True)
    receipt_file = tmp_path / "r.json"
    ledger_cli("erase", "1", "--receipt", str(receipt_file), "--db", str(db), check=True)
    receipt = json.loads(receipt_file.read_text())
    receipt["head"][field] = 2 if field == "position" else "f" * 64
    receipt_file.write_text(json.dumps(receipt))
    bad = ledger_cli("verify", "--receipt", str(receipt_file), "--db", str(db))
    assert bad.returncode == 2


@pytest.mark.parametrize(
    ("where", "field", "value"),
    [
        ("erasure", "memory_id", 2),
        ("erasure", "event_id", "0193c1a2-1111-7000-8000-000000000001"),
        ("receipt", "reason", "forged"),
        ("receipt", "actor", "mallory"),
        ("receipt", "recorded_at", "2000-01-01T00:00:00Z"),
    ],
)
def test_a_receipt_with_any_field_a_person_reads_edited_fails(
    tmp_path: Path, where: str, field: str, value: object
) -> None:
    """Only the positions, hashes, stream and rows were checked: a receipt that named another
    memory id, reason, actor or time still verified."""
    db = tmp_path / "ledger.db"
    ledger_cli("remember", f"Frank's pin is {MARKER}", "--db", str(db), check=True)
    ledger_cli("remember", "another fact", "--db", str(db), check=True)
    receipt_file = tmp_path / "r.json"
    ledger_cli("erase", "1", "--reason", "asked", "--receipt", str(receipt_file), "--db", str(db), check=True)
    good = ledger_cli("verify", "--receipt", str(receipt_file), "--db", str(db))
    assert good.returncode == 0 and "valid" in good.stdout
    receipt = json.loads(receipt_file.read_text())
    (receipt["erasures"][0] if where == "erasure" else receipt)[field] = value
    receipt_file.write_text(json.dumps(receipt))
    bad = ledger_cli("verify", "--receipt", str(receipt_file), "--db", str(db))
    assert bad.returncode == 2, bad.stdout + bad.stderr


@pytest.mark.parametrize(
    ("edit", "value"),
    [
        (("erasures", 0, "position"), 10**30),  # past any position: was an OverflowError traceback
        (("erasures",), [1, 2]),  # erasures that are numbers: was an AttributeError traceback
        (("head",), None),  # no head: was read as a log that breaks
        (("head", "position"), "x"),
        (("erasures",), []),
    ],
)
def test_a_receipt_that_is_not_of_its_kind_is_refused_as_input(tmp_path: Path, edit: tuple, value: object) -> None:
    db = tmp_path / "ledger.db"
    ledger_cli("remember", f"Frank's pin is {MARKER}", "--db", str(db), check=True)
    receipt_file = tmp_path / "r.json"
    ledger_cli("erase", "1", "--receipt", str(receipt_file), "--db", str(db), check=True)
    receipt = json.loads(receipt_file.read_text())
    *path, last = edit
    target = receipt
    for step in path:
        target = target[step]
    target[last] = value
    receipt_file.write_text(json.dumps(receipt))
    bad = ledger_cli("verify", "--receipt", str(receipt_file), "--db", str(db))
    said = bad.stdout + bad.stderr
    assert bad.returncode == 1 and "invalid_input" in said and "Traceback" not in said, said
