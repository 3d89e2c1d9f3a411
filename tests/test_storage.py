"""The storage seam on its own: a write answers Written or BackedUp (a value, not an exception),
degraded mode, and the two protocols the log and the read models meet."""

from __future__ import annotations

from pathlib import Path

from fact_ledger.ledger import clock
from fact_ledger.ledger.log.events import MemoryRecorded
from fact_ledger.ledger.log.pg_store import PostgresEventStore
from fact_ledger.ledger.log.protocol import EventLog
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.ledger.normalize import content_hash
from fact_ledger.projections import memories as mem
from fact_ledger.projections.runner import ProjectionRunner
from fact_ledger.server.app.facade import default_projectors
from fact_ledger.server.app.storage import BackedUp, Decide, ProjectionStore, Storage, Written
from fact_ledger.server.config import Settings

# A ledger overwritten past SQLite's header (a file with no such header is not a ledger at all).
NOT_A_DB = b"SQLite format 3\x00" + b"this file was a ledger, then overwritten by accident\n" * 200


def settings(tmp_path: Path) -> Settings:
    return Settings(db=str(tmp_path / "ledger.db"), backup=str(tmp_path / "backup.jsonl"), client="test")


def recorded(stream: str, content: str) -> MemoryRecorded:
    return MemoryRecorded(
        memory=stream,
        content=content,
        subject="",
        tags=(),
        source_type="agent_generated",
        confidence=0.5,
        protection="normal",
        source_ref="",
        content_hash=content_hash(content),
    )


def decide_one(stream: str, content: str) -> Decide:
    return lambda: ([(stream, recorded(stream, content))], clock.now(), "w")


def test_a_write_answers_written_with_the_stored_and_projected_events(tmp_path: Path) -> None:
    storage = Storage(settings(tmp_path), lambda: default_projectors())
    outcome = storage.commit(decide_one("s1", "the gateway is 10.0.0.1"))
    assert isinstance(outcome, Written) and [e.stream_id for e in outcome.events] == ["s1"]
    with storage.snapshot():
        row = mem.by_id(storage.conn, outcome.events[0].position)
        assert row is not None and row.content == "the gateway is 10.0.0.1"
    assert storage.degraded is None and storage.pending_backup() is None
    storage.close()


def test_a_refused_write_answers_backed_up_and_lands_in_the_backup_file(tmp_path: Path) -> None:
    s = settings(tmp_path)
    (tmp_path / "ledger.db").write_bytes(NOT_A_DB)
    storage = Storage(s, lambda: default_projectors())
    assert storage.shadow and storage.degraded is not None and storage.degraded["reason"] == "corrupt"
    outcome = storage.commit(decide_one("s1", "kept for later"))
    assert isinstance(outcome, BackedUp)
    assert outcome.result["backup_only"] is True and outcome.result["reason"] == "corrupt"
    assert len(outcome.result["backup"]["event_ids"]) == 1
    assert Path(s.backup_path).read_text().count("\n") == 1
    assert storage.pending_backup()["events"] == 1
    storage.close()


def test_the_log_and_the_read_models_meet_their_protocols() -> None:
    """Both log backends are one ``EventLog`` (the protocol every part of the program uses), and
    the runner is the seam's ``ProjectionStore``."""
    for cls, protocol in ((EventStore, EventLog), (PostgresEventStore, EventLog), (ProjectionRunner, ProjectionStore)):
        needed = {n for n in vars(protocol) if not n.startswith("_")} - {"by_name", "path"}
        assert needed and all(callable(getattr(cls, n, None)) for n in needed), (cls, needed)
    assert "append_stored" in vars(EventLog) and "present_ids" in vars(EventLog)  # the copy's and the seam's
    # The PostgreSQL log also reads a snapshot outside a projection transaction, as the SQLite one does.
    assert callable(getattr(PostgresEventStore, "snapshot", None)) and callable(getattr(EventStore, "snapshot", None))


def test_a_degraded_reason_is_one_line_cut_between_words() -> None:
    """``status`` printed a driver's message cut mid-word ("… accepting connec")."""
    from fact_ledger.server.app.storage import _shortened

    said = "connection failed: No such file or directory\n\tIs the server running locally and accepting connections?"
    assert _shortened(said) == " ".join(said.split())
    cut = _shortened(said * 5)
    assert cut.endswith(" …") and len(cut) <= 302 and "\n" not in cut and cut[:-2].split()[-1] in said.split()
