"""The log and the read models in two files: the log fsynced, the read models never ahead of it.

A local ledger keeps its log at ``db`` (``synchronous=FULL``) and its read models, with a copy of
the log, in ``ledger.views.db`` beside it (``synchronous=NORMAL``). These tests open real files
and look at what is in each, then break the pair the ways a crash, a restore or a disk can.
"""

from __future__ import annotations

import os
from pathlib import Path

import apsw
import pytest

from fact_ledger.ledger.errors import ChainBroken, LogUnreachable
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import MemoryRecorded
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections import derived
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.views_file import UnreachableLog, open_views
from fact_ledger.server.config import Settings, views_beside


def tables(path: Path) -> set[str]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()


def recorded(content: str) -> NewEvent:
    stream = uuid7()
    return NewEvent(
        data=MemoryRecorded(memory=stream, content=content), stream_id=stream, event_time="2026-07-01T00:00:00.000000Z"
    )


def contents(app: LedgerApp, query: str) -> list[str]:
    return [r["content"] for r in app.find(query, limit=20)["results"]]


def test_the_views_file_sits_beside_the_log() -> None:
    assert views_beside("/srv/team/ledger.db") == "/srv/team/ledger.views.db"
    assert views_beside("/srv/ledger") == "/srv/ledger.views.db"
    assert views_beside("file:/srv/ledger.db?mode=ro") == "/srv/ledger.views.db"
    assert views_beside(":memory:") == ":memory:"


def test_the_log_file_holds_only_the_log_and_is_the_only_one_fsynced(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The staging API listens on port 7070", subject="staging api")
    assert app.storage.log.conn.execute("PRAGMA synchronous").get == 2  # FULL
    assert app.conn.execute("PRAGMA synchronous").get == 1  # NORMAL
    assert app.storage.views_path == str(tmp_path / "ledger.views.db")
    app.close()
    assert tables(db) == {"events"}
    views = tables(tmp_path / "ledger.views.db")
    assert {"events", "memories", "claims", "projection_checkpoints", "derived_cache"} <= views


def test_events_the_read_models_missed_are_pulled_on_open(tmp_path: Path) -> None:
    """A crash after the log's commit and before the read models' leaves them one write behind."""
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The on-call engineer this week is Dana")
    app.close()
    log = EventStore(db)  # what a writer that died before its read-model commit left behind
    log.append([recorded("The sprint ends on Friday the 14th")])
    log.close()
    app = LedgerApp(Settings(db=str(db)))
    assert app.status()["log"]["behind"] == 0
    assert contents(app, "sprint ends Friday") == ["The sprint ends on Friday the 14th"]
    assert app.verify()["projections"] == "consistent"
    app.close()


def test_a_write_pulls_what_another_writer_added_before_it_decides(tmp_path: Path) -> None:
    """Decisions read fresh state: a repeat of a fact only the log holds is still a duplicate,
    and a contradiction of it joins one claim set."""
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    app.remember("warm-up memory")
    elsewhere = LedgerApp(Settings(db=str(db), views=str(tmp_path / "other.views.db")))  # another machine
    first = elsewhere.remember("The build cache lives on bucket ci-cache-7")["memory_id"]
    other = elsewhere.remember("The staging API listens on port 7070", subject="staging api")["memory_id"]
    elsewhere.close()
    assert app.status()["log"]["behind"] == 2
    again = app.remember("The build cache lives on bucket ci-cache-7")
    assert again["duplicate_of"] == first
    moved = app.remember("The staging API listens on port 8080", subject="staging api")
    assert [c["other_id"] for c in moved["conflicts"]] == [other]
    assert app.status()["memories"] == 4
    app.close()


def test_read_models_that_do_not_continue_the_log_are_set_aside(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "ledger.db", tmp_path / "b" / "ledger.db"
    for db, text in ((first, "first ledger's fact"), (second, "second ledger's fact")):
        app = LedgerApp(Settings(db=str(db)))
        app.remember(text)
        app.remember(f"{text}, again different")
        app.close()
    # The read models of the first ledger now sit beside the second one's log.
    os.replace(views_beside(str(first)), views_beside(str(second)))
    app = LedgerApp(Settings(db=str(second)))
    assert sorted(contents(app, "ledger's fact")) == ["second ledger's fact", "second ledger's fact, again different"]
    assert app.verify()["chain"] == "intact"
    app.close()
    assert any(p.name.startswith("ledger.views.db.set-aside-") for p in second.parent.iterdir())


def test_a_corrupt_views_file_is_built_again_from_the_log(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The release train leaves every Tuesday")
    app.close()
    views = Path(views_beside(str(db)))
    for suffix in ("-wal", "-shm"):
        Path(str(views) + suffix).unlink(missing_ok=True)
    views.write_bytes(b"this is not a database at all" * 200)
    app = LedgerApp(Settings(db=str(db)))
    assert app.status()["degraded"] is None
    assert contents(app, "release train Tuesday") == ["The release train leaves every Tuesday"]
    app.close()


def test_a_single_file_ledger_moves_to_two_files_and_keeps_its_cache(tmp_path: Path) -> None:
    """Before this layout the read models lived in the log's file; ``views = db`` still does that."""
    db = tmp_path / "ledger.db"
    one_file = Settings(db=str(db), views=str(db))
    app = LedgerApp(one_file)
    app.remember("Staging listens on port 7070", subject="staging")
    app.remember("Production listens on port 443", subject="production")
    assert app.storage.log is app.storage.store
    cached = app.conn.execute("SELECT count(*) FROM derived_cache").get
    app.close()
    assert cached > 0 and "memories" in tables(db)
    app = LedgerApp(Settings(db=str(db)))
    assert app.storage.log is not app.storage.store
    assert sorted(contents(app, "port")) == ["Production listens on port 443", "Staging listens on port 7070"]
    adopted = app.conn.execute("SELECT count(*) FROM derived_cache").get
    assert adopted >= cached
    with derived.bypassed():
        assert app.verify()["projections"] == "consistent"
    app.close()


def test_the_read_models_are_never_ahead_of_the_log(tmp_path: Path) -> None:
    """A write the log refuses leaves nothing in the read models (their commit comes second)."""
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db), busy_timeout_ms=50))
    app.remember("first fact, stored")
    blocker = apsw.Connection(str(db))
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the log's write lock
    try:
        result = app.remember("second fact, refused by the log")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert result["backup_only"] is True
    assert app.store.last_position() == app.storage.log.last_position() == 1
    assert contents(app, "fact") == ["second fact, refused by the log", "first fact, stored"]
    # only the stored one comes from the read models; the other is this machine's pending write
    assert [r.get("pending") for r in app.find("fact")["results"]] == [True, None]
    app.close()


@pytest.mark.parametrize("views_name", ["elsewhere/views.db"])
def test_views_can_be_placed_anywhere(tmp_path: Path, views_name: str) -> None:
    views = tmp_path / views_name
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), views=str(views)))
    app.remember("placed read models")
    app.close()
    assert "memories" in tables(views)
    assert not Path(views_beside(str(tmp_path / "ledger.db"))).exists()


def test_read_models_ahead_of_a_log_restored_from_an_older_copy_are_set_aside(tmp_path: Path) -> None:
    """The read models hold more events than the log: they are set aside, never trusted."""
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The on-call engineer this week is Dana")
    app.close()
    older = tmp_path / "older-copy.db"
    older.write_bytes(db.read_bytes())  # the log as it was: one event
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The sprint ends on Friday the 14th")
    app.close()
    os.replace(older, db)  # the log restored from the older copy; the read models stay ahead
    app = LedgerApp(Settings(db=str(db)))
    assert contents(app, "sprint ends Friday") == []  # a memory the log does not have
    assert contents(app, "on-call engineer Dana") == ["The on-call engineer this week is Dana"]
    assert app.store.last_position() == app.storage.log.last_position() == 1
    assert app.verify() == {"ok": True, "events": 1, "chain": "intact", "projections": "consistent"}
    app.close()
    assert any(p.name.startswith("ledger.views.db.set-aside-") for p in tmp_path.iterdir())


def test_verify_and_doctor_name_read_models_ahead_of_their_log(tmp_path: Path) -> None:
    """Read models that got ahead of their log while open: verify refuses and names both heads,
    doctor's read_models_head check is critical with the same words."""
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db")))
    app.remember("The on-call engineer this week is Dana")
    app.store.append([recorded("only the read models hold this")])  # not in the log
    with pytest.raises(ChainBroken) as info:
        app.verify()
    assert "the read models hold 2 events, the log only 1" in info.value.message
    assert info.value.details["position"] == 2
    [check] = [c for c in app.doctor()["checks"] if c["name"] == "read_models_head"]
    assert check["severity"] == "critical" and check["count"] == 1
    assert check["message"].startswith("the read models hold 2 events, the log only 1")
    app.close()


def test_doctor_finds_read_models_that_follow_their_log(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db")))
    app.remember("The on-call engineer this week is Dana")
    [check] = [c for c in app.doctor()["checks"] if c["name"] == "read_models_head"]
    assert check["severity"] == "ok"
    assert app.verify()["events"] == 1
    app.close()


def test_read_models_that_continue_the_log_are_kept(tmp_path: Path) -> None:
    """A views file that is a prefix of the log (the log went on without it) is caught up, never
    set aside: setting aside would throw away every read model for nothing."""
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The on-call engineer this week is Dana")
    app.remember("The release train leaves every Tuesday")
    app.close()
    log = EventStore(db)
    log.append([recorded("The sprint ends on Friday the 14th")])  # another writer, after us
    log.close()
    for _ in range(2):
        app = LedgerApp(Settings(db=str(db)))
        assert contents(app, "sprint ends Friday") == ["The sprint ends on Friday the 14th"]
        app.close()
    assert not [p.name for p in tmp_path.iterdir() if "set-aside" in p.name]


def test_verify_refuses_read_models_that_differ_from_the_log_at_its_head(tmp_path: Path) -> None:
    """The same length, another last event: verify names the position."""
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The on-call engineer this week is Dana")
    app.store.append([recorded("only the read models hold this")])
    log = EventStore(db)
    log.append([recorded("only the log holds this")])
    log.close()
    with pytest.raises(ChainBroken) as info:
        app.verify()
    assert "differs from the log at position 2" in info.value.message
    assert info.value.details["position"] == 2
    app.close()


def test_verify_pulls_what_the_log_gained_and_checks_both_chains(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The on-call engineer this week is Dana")
    log = EventStore(db)
    log.append([recorded(f"fact {i} from another writer") for i in range(1000)])
    log.close()
    seen: list[int] = []
    assert app.verify(progress=lambda done, _total: seen.append(done))["events"] == 1001
    assert seen == [1000]  # the log's chain, reported every 1000 events
    assert app.store.last_position() == 1001
    # The copy's own chain is checked too: a hash changed in the read models' file only (no
    # projection reads hashes, so only the chain can tell).
    app.conn.execute("DROP TRIGGER events_no_update")
    app.conn.execute("UPDATE events SET hash = ? WHERE position = 9", ("0" * 64,))
    with pytest.raises(ChainBroken) as info:
        app.verify()
    assert info.value.details["position"] in (9, 10)
    app.close()


def test_read_models_are_kept_when_their_log_cannot_be_reached(tmp_path: Path) -> None:
    """Nothing is set aside on a log that cannot say whether the file continues it."""
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The on-call engineer this week is Dana")
    app.close()
    views = views_beside(str(db))
    with pytest.raises(LogUnreachable):
        open_views(views, UnreachableLog("postgresql://team/ledger", "connection refused"), busy_timeout_ms=100)
    assert not [p.name for p in tmp_path.iterdir() if "set-aside" in p.name]
    copy = open_views(views, EventStore(db), busy_timeout_ms=100)
    assert copy.last_position() == 1
    copy.close()


def test_two_ledgers_on_one_read_models_file_are_named_as_such(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each switch set the file aside blaming "another log, or the log was restored from a
    backup": nothing said that two ledgers were configured onto one read-models file. Nor is
    that the only cause: a file whose -wal was deleted under a running server was blamed on a
    second ledger that did not exist, so the message names both and claims neither."""
    shared = str(tmp_path / "shared.views.db")
    for name in ("p", "q"):
        app = LedgerApp(Settings(db=str(tmp_path / f"{name}.db"), create=True))
        app.remember(f"a note of ledger {name}")
        app.close()
    for name in ("p", "q"):
        LedgerApp(Settings(db=str(tmp_path / f"{name}.db"), views=shared)).close()
    said = " ".join(r.getMessage() for r in caplog.records if "set aside" in r.getMessage())
    assert "they do not match this log (their first event is not the log's)" in said
    assert "built from another log (two ledgers configured onto one read-models file" in said
    assert "or the file lost writes (its -wal or -shm removed while a ledger had it open)" in said


def test_read_models_of_a_log_that_went_on_differently_after_a_restore_are_set_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The log restored from an older copy, then written anew: the same first event, another one
    at the read models' head. They are set aside (and the log is not taken for another's)."""
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The on-call engineer this week is Dana")
    app.close()
    older = tmp_path / "older-copy.db"
    older.write_bytes(db.read_bytes())
    app = LedgerApp(Settings(db=str(db)))
    app.remember("The sprint ends on Friday the 14th")
    app.close()
    os.replace(older, db)
    other = LedgerApp(Settings(db=str(db), views=str(tmp_path / "elsewhere.views.db")))
    other.remember("The release is on Monday")  # the restored log goes on: event 2 is another one
    other.close()
    app = LedgerApp(Settings(db=str(db)))
    assert contents(app, "sprint ends Friday") == [] and contents(app, "release Monday") == ["The release is on Monday"]
    app.close()
    said = " ".join(r.getMessage() for r in caplog.records if "set aside" in r.getMessage())
    assert "its event 2 is not the log's (the log was restored from a backup, or replaced)" in said
    assert "another log" not in said


def test_a_folder_named_as_the_read_models_file_is_never_moved(tmp_path: Path) -> None:
    """LEDGER_VIEWS naming a folder got the user's folder renamed to "….set-aside-<time>" and a
    file put in its place."""
    folder = tmp_path / "views"
    folder.mkdir()
    (folder / "notes.txt").write_text("important")
    db = tmp_path / "ledger.db"
    LedgerApp(Settings(db=str(db), client="test")).close()
    app = LedgerApp(Settings(db=str(db), views=str(folder), client="test"))
    try:
        assert app.status()["ok"]
    finally:
        app.close()
    assert folder.is_dir() and (folder / "notes.txt").read_text() == "important"
    assert [p.name for p in tmp_path.iterdir() if "set-aside" in p.name] == []
