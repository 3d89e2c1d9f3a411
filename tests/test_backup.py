"""The JSONL backup: the result shape, degraded opening, pending notices and replay semantics.

Fault tests that hold a real lock from another process, make the file immutable or fill the
database live in ``test_backup_faults.py``; these use corrupt files, unwritable backup paths
and hand-written backup files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.ledger.errors import Unauthorized, Unavailable
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.storage import Storage, storage_call
from fact_ledger.server.config import Settings

# A ledger overwritten past SQLite's header (a file with no such header is not a ledger at all:
# refused, nothing backed up, tests/test_cli_paths.py).
NOT_A_DB = b"SQLite format 3\x00" + b"this file was a ledger, then overwritten by accident\n" * 200


def settings(tmp_path: Path, **extra: Any) -> Settings:
    return Settings(db=str(tmp_path / "ledger.db"), backup=str(tmp_path / "backup.jsonl"), client="test", **extra)


def contents(app: LedgerApp) -> list[str]:
    return sorted(r[0] for r in app.conn.execute("SELECT content FROM memories"))


@pytest.fixture
def corrupt(tmp_path: Path) -> Settings:
    (tmp_path / "ledger.db").write_bytes(NOT_A_DB)
    return settings(tmp_path)


def test_a_corrupt_database_still_starts_and_writes_go_to_the_backup(corrupt: Settings) -> None:
    app = LedgerApp(corrupt)
    status = app.status()
    assert status["ok"] and status["degraded"]["reason"] == "corrupt" and status["pending_backup"] is None
    result = app.remember("the vpn gateway is 10.0.0.1", subject="vpn")
    assert result["ok"] and result["backup_only"] is True and "memory_id" not in result
    assert result["backup"]["path"] == corrupt.backup_path and len(result["backup"]["event_ids"]) == 1
    lines = Path(corrupt.backup_path).read_text().splitlines()
    assert json.loads(lines[0])["schema"] == 1 and "position" not in json.loads(lines[0])["event"]
    # Nothing read from the empty stand-in may pass for an answer.
    for call in (
        lambda: app.find("vpn"),
        lambda: app.read(1),
        lambda: app.update(1, content="x"),
        lambda: app.history(1),
        lambda: app.audit(),
    ):
        with pytest.raises(Unavailable):
            call()
    assert app.status()["pending_backup"]["events"] == 1
    assert "await replay" in (app.backup_notice() or "")
    with pytest.raises(Unavailable):  # the log cannot take them yet
        app.replay_backup(dry_run=False, authorization=AUTH_USER)
    assert app.replay_backup()["to_apply"] == 1  # a dry run still reads the file
    app.close()


def test_the_degraded_facade_recovers_when_the_file_is_repaired(corrupt: Settings, monkeypatch) -> None:
    monkeypatch.setattr(Storage, "REOPEN_INTERVAL_S", 0.0)
    app = LedgerApp(corrupt)
    assert app.remember("repair me later")["backup_only"]
    Path(corrupt.db).unlink()  # the operator restores a (here: fresh) database file
    replay = app.replay_backup(dry_run=False, authorization=AUTH_USER)
    assert replay["appended"] == 1 and app.status()["degraded"] is None
    assert contents(app) == ["repair me later"]
    # the replayed write (#1) and its WriteReplayed record come first; then the new write
    assert app.remember("written normally")["memory_id"] == app.store.last_position() == 3
    app.close()


def test_when_the_backup_append_fails_too_the_caller_gets_unavailable(tmp_path: Path) -> None:
    (tmp_path / "ledger.db").write_bytes(NOT_A_DB)
    (tmp_path / "blocker").write_text("a file where the backup folder should be")
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), backup=str(tmp_path / "blocker" / "b.jsonl")))
    with pytest.raises(Unavailable) as err:
        app.remember("this must not be claimed")
    assert "nothing was stored" in err.value.message and err.value.details["reason"] == "corrupt"
    assert app.pending_backup() is None
    app.close()


def write_backup(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line.rstrip(b"\n") + b"\n" for line in lines))


@pytest.fixture
def backed_up(tmp_path: Path) -> tuple[Settings, list[bytes]]:
    """Five commands written to the backup by a degraded facade; returns its lines."""
    (tmp_path / "ledger.db").write_bytes(NOT_A_DB)
    s = settings(tmp_path)
    app = LedgerApp(s)
    for n in range(5):
        assert app.remember(f"backed up fact number {n}", event_time="2026-07-01T00:00:00Z")["backup_only"]
    app.close()
    (tmp_path / "ledger.db").unlink()
    return s, Path(s.backup_path).read_bytes().splitlines()


def test_replay_is_a_dry_run_by_default_and_applies_only_when_authorised(backed_up) -> None:
    s, _ = backed_up
    app = LedgerApp(s)
    dry = app.replay_backup()
    assert (dry["dry_run"], dry["to_apply"], dry["already_present"], dry["events"]) == (True, 5, 0, 5)
    assert app.status()["events"] == 0 and app.status()["pending_backup"]["events"] == 5
    with pytest.raises(Unauthorized):
        app.replay_backup(dry_run=False)
    before = Path(s.backup_path).read_bytes()
    applied = app.replay_backup(dry_run=False, authorization=AUTH_USER)
    assert (applied["appended"], applied["already_present"], applied["bad_total"]) == (5, 0, 0)
    assert contents(app) == [f"backed up fact number {n}" for n in range(5)]
    assert Path(s.backup_path).read_bytes() == before  # never deleted, never rewritten
    assert app.status()["pending_backup"] is None and app.backup_notice() is None
    again = app.replay_backup(dry_run=False, authorization=AUTH_USER)
    assert (again["appended"], again["already_present"]) == (0, 5)
    assert app.replay_backup()["to_apply"] == 0
    assert app.verify()["chain"] == "intact"
    app.close()


def test_bad_lines_are_skipped_and_reported_without_blocking_good_ones(backed_up) -> None:
    s, lines = backed_up
    torn = json.loads(lines[3])
    torn["command_size"] = 2  # a command cut short: replaying half of it would be wrong
    write_backup(
        Path(s.backup_path),
        [
            lines[0],
            b"{not json",
            lines[1],
            b'{"schema": 2, "event": {}}',
            json.dumps(torn).encode(),
            lines[2],
            b'{"schema": 1, "event": {"type": "NoSuchEvent", "v": 1, "payload": "{}"}}',
            lines[4],
        ],
    )
    app = LedgerApp(s)
    result = app.replay_backup(dry_run=False, authorization=AUTH_USER)
    assert result["appended"] == 4 and result["bad_total"] == 4
    assert [b["line"] for b in result["bad_lines"]] == [2, 4, 5, 7]
    assert "incomplete command" in result["bad_lines"][2]["error"]
    assert contents(app) == [f"backed up fact number {n}" for n in (0, 1, 2, 4)]
    app.close()


def test_replay_runs_in_bounded_batches_with_progress(backed_up) -> None:
    """Lines without ``request`` (as older versions wrote them) are appended as they are, in
    bounded transactions; a write with its call recorded is decided again in one of its own."""
    s, lines = backed_up
    legacy = [json.loads(line) for line in lines]
    for doc in legacy:
        doc.pop("request", None)
    Path(s.backup_path).write_text("".join(json.dumps(doc) + "\n" for doc in legacy))
    app = LedgerApp(s)
    seen: list[tuple[int, int]] = []
    transactions: list[int] = []
    real_write = app.store.write

    def counting_write(work: Any) -> Any:
        transactions.append(1)
        return real_write(work)

    app.store.write = counting_write  # type: ignore[method-assign]
    result = app.replay_backup(
        dry_run=False, authorization=AUTH_USER, batch_size=2, progress=lambda done, total: seen.append((done, total))
    )
    assert result["appended"] == 5 and len(transactions) == 3  # 2 + 2 + 1 events
    assert seen[-1] == (5, 5) and len(seen) >= 3
    app.close()


def test_a_retraction_backed_up_as_one_command_replays_whole(tmp_path: Path) -> None:
    s = settings(tmp_path)
    app = LedgerApp(s)
    target = app.remember("standup at 9", event_time="2026-07-01T00:00:00Z")["memory_id"]
    app.conn.execute(f"PRAGMA max_page_count={app.conn.execute('PRAGMA page_count').get}")
    result = app.remember("cancel the standup " + "x" * 40000, ref_id=target, retracts=True)
    assert result["backup_only"] and len(result["backup"]["event_ids"]) == 2
    docs = [json.loads(line) for line in Path(s.backup_path).read_text().splitlines()]
    assert {d["command"] for d in docs} == {docs[0]["command"]} and docs[0]["command_size"] == 2
    app.close()
    app = LedgerApp(s)
    assert app.replay_backup(dry_run=False, authorization=AUTH_USER)["appended"] == 2
    assert app.read(target)["memory"]["status"] == "retired"
    app.close()


def test_an_inner_public_call_does_not_swallow_the_backup_signal(corrupt: Settings) -> None:
    class Composite(LedgerApp):
        @storage_call
        def remember_twice(self, text: str) -> dict[str, Any]:
            first = self.remember(text)
            return {"ok": True, "first": first, "second": self.remember(text + " again")}

    app = Composite(corrupt)
    result = app.remember_twice("nested write")
    assert result["backup_only"] is True and "first" not in result  # the outer call answers
    app.close()


def test_a_backup_line_records_the_call_replay_can_run_again_and_no_other(corrupt: Settings) -> None:
    """``request`` is the outermost call when replay knows it (remember, retire, …); a write made
    inside another call (here one replay does not know) keeps only its events, which replay
    appends as they are. A write that masked a secret records its call with the texts as they
    were stored (a masked write went in as backed up, past every decision replay makes: an
    erased or retired target, a claim set to join); one that asked for a mask and had nothing
    to mask records its call as given."""

    class Composite(LedgerApp):
        @storage_call
        def remember_twice(self, text: str) -> dict[str, Any]:
            self.remember(text)
            return self.remember(text + " again")

    app = Composite(corrupt)
    app.remember("a plain write", subject="plain", tags=["t"])
    app.remember_twice("nested write")
    app.remember("the key is AKIAIOSFODNN7EXAMPLE", on_secret="mask", metadata={"db": {"password": "hunter2-Prod"}})
    app.remember("nothing to hide here", on_secret="mask")
    docs = [json.loads(line) for line in Path(corrupt.backup_path).read_text().splitlines()]
    assert docs[0]["request"] == {
        "op": "remember",
        "args": ["a plain write"],
        "kwargs": {"subject": "plain", "tags": ["t"]},
    }
    assert [("request" in d) for d in docs] == [True, False, False, True, True]
    assert docs[3]["request"] == {
        "op": "remember",
        "args": ["the key is [secret:aws-access-key]"],
        "kwargs": {"on_secret": "mask", "metadata": {"db": {"password": "[secret:password]"}}},
    }
    assert docs[4]["request"]["args"] == ["nothing to hide here"]
    text = Path(corrupt.backup_path).read_text()
    assert "AKIAIOSFODNN7EXAMPLE" not in text and "hunter2-Prod" not in text
    app.close()


def test_a_masked_write_is_decided_again_with_its_texts_as_stored(corrupt: Settings, monkeypatch) -> None:
    monkeypatch.setattr(Storage, "REOPEN_INTERVAL_S", 0.0)
    app = LedgerApp(corrupt)
    assert app.remember("the db password is hunter2-Prod!", on_secret="mask")["backup_only"]
    Path(corrupt.db).unlink()  # the operator restores a (here: fresh) database file
    replay = app.replay_backup(dry_run=False, authorization=AUTH_USER)
    assert replay["replayed"] == 1 and replay["as_backed_up"] == 1 and replay["refused"] == 0
    assert contents(app) == ["the db password is [secret:password]!"]
    replayed = [e.data for e in app.store.read() if e.type == "WriteReplayed"]
    assert [r.outcome for r in replayed] == ["as_backed_up"] and replayed[0].op == "remember"
    app.close()


def test_the_notice_on_a_path_with_no_ledger_says_writes_are_refused(tmp_path: Path) -> None:
    """``ledger serve`` on a mistyped path told every reply "writes go to the JSONL backup",
    while each write was refused and no backup grows there."""
    app = LedgerApp(Settings(db=str(tmp_path / "nowhere" / "ledger.db"), client="test", create=False))
    try:
        notice = app.backup_notice() or ""
        assert "writes are refused" in notice and "JSONL backup" not in notice
        with pytest.raises(Unavailable, match="nothing was stored"):
            app.remember("a fact")
    finally:
        app.close()
    assert not (tmp_path / "nowhere").exists()


def test_forgetting_an_erased_memory_keeps_the_other_writes_that_mention_it(tmp_path: Path) -> None:
    """A backed-up write of memory X that collided with Y is two lines (X recorded, the set that
    holds Y's value). Erasing Y dropped only the second: X's write was left an incomplete
    command, never replayed and not even pending."""
    from fact_ledger.ledger.ids import uuid7
    from fact_ledger.ledger.log.chain import NewEvent
    from fact_ledger.ledger.log.events import ClaimCollided, MemoryRecorded, MemoryUpdated, SetMember
    from fact_ledger.server.app.backup_log import BackupLog

    x, y, conflict = uuid7(), uuid7(), uuid7()
    when = "2026-11-01T00:00:00.000000Z"
    log = BackupLog(tmp_path / "backup.jsonl")
    log.append(
        [
            NewEvent(data=MemoryRecorded(memory=x, content="port 9090"), stream_id=x, event_time=when),
            NewEvent(
                data=ClaimCollided(
                    conflict=conflict,
                    subject="staging",
                    attribute="port",
                    key="k",
                    members=(SetMember(memory=y, value="8080"), SetMember(memory=x, value="9090")),
                ),
                stream_id=conflict,
                event_time=when,
            ),
        ],
        {"op": "remember", "args": ["port 9090"], "kwargs": {}},
    )
    log.append([NewEvent(data=MemoryUpdated(memory=y, content="port 8081"), stream_id=y, event_time=when)])
    assert log.forget({y}) == 2  # Y's own update, and the line of X's write that holds Y's value
    text = (tmp_path / "backup.jsonl").read_text()
    assert y not in text and "8080" not in text
    (kept,) = log.pending_commands()
    assert not kept.errors and [e.stream_id for e in kept.events] == [x] and kept.request is not None
    assert log.pending(None, 0)["writes"] == 1
