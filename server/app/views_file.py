"""Opening the read models' file: the log of record on one side, its local copy on the other.

The read models live in a SQLite file of their own (``Settings.views_path``): beside the local
log by default, or on each machine for a team's PostgreSQL log. Besides the projections the file
holds a *copy of the log* (the same ``events`` rows, hashes included), so every read model and
every query of the log's history is answered locally; :class:`projections.runner.ProjectionRunner`
keeps the copy a prefix of the log.

The file is rebuildable by design, so it is opened with ``synchronous=NORMAL``: a commit there
pays no fsync, and only the log's commit does. What a crash or a power cut can lose from it is
a suffix, which the next pull from the log puts back.

A file that is not a prefix of this log (another log's read models, a log restored from an older
backup, a corrupt file) is set aside and built again from the log; the caches of derived data
(claims, fingerprints, embeddings: pure functions of the text) are worth keeping, and a new file
adopts them from the old single-file layout, where they sat in the log's file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import apsw

from fact_ledger.ledger.errors import LogUnreachable
from fact_ledger.ledger.log import dbfiles
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections import derived

log = logging.getLogger("fact_ledger.views")

VIEWS_SYNCHRONOUS = "NORMAL"
_DISCARD_ERRORS = (apsw.CorruptError, apsw.NotADBError, dbfiles.NotALedger)


def same_file(a: str, b: str) -> bool:
    """Whether two configured paths name one file (the read models kept in the log's file)."""
    if a == ":memory:" or b == ":memory:":
        return False
    return _file_of(a) == _file_of(b)


def _file_of(path: str) -> Path:
    plain = path.removeprefix("file:").split("?", 1)[0] if path.startswith("file:") else path
    return Path(plain).expanduser().resolve()


def open_views(path: str, log_of_record: Any, *, busy_timeout_ms: int, adopt_from: str | None = None) -> EventStore:
    """The read models' file at ``path``, checked against the log (set aside and started
    afresh when it does not continue it). ``adopt_from``: a SQLite log whose derived cache a
    new file copies."""
    copy = _continuing(path, log_of_record, busy_timeout_ms)
    try:
        if adopt_from and copy.last_position() == 0:
            _adopt_cache(copy, adopt_from)
    except BaseException:
        copy.close()
        raise
    return copy


def _continuing(path: str, log_of_record: Any, busy_timeout_ms: int) -> EventStore:
    """The file at ``path`` when it continues the log; else it is set aside for a fresh one."""
    try:
        copy = _open(path, busy_timeout_ms)
    except _DISCARD_ERRORS as exc:
        _set_aside(path, f"unreadable ({exc.__class__.__name__})")
        return _open(path, busy_timeout_ms)
    try:
        problem = _mismatch(copy, log_of_record)
    except BaseException:  # the log cannot say (unreachable): the file is kept, untouched
        copy.close()
        raise
    if not problem:
        return copy
    copy.close()
    _set_aside(path, problem)
    return _open(path, busy_timeout_ms)


def another_connection(path: str, *, busy_timeout_ms: int) -> EventStore:
    """One more connection on a views file already opened by :func:`open_views` (the log
    follower's, the vectors worker's): the same durability, nothing created or checked."""
    return EventStore(path, busy_timeout_ms=busy_timeout_ms, synchronous=VIEWS_SYNCHRONOUS)


def _open(path: str, busy_timeout_ms: int) -> EventStore:
    return EventStore(path, busy_timeout_ms=busy_timeout_ms, synchronous=VIEWS_SYNCHRONOUS, create=True)


def _mismatch(copy: EventStore, log_of_record: Any) -> str | None:
    """Why the copy is not a prefix of the log, or None when it is."""
    head = copy.last_position()
    if not head:
        return None
    first, their_first = event_at(copy, 1), event_at(log_of_record, 1)
    if first is not None and their_first is not None and first.hash != their_first.hash:
        # Two causes leave this, and nothing in the file tells them apart: both are named.
        return (
            "they do not match this log (their first event is not the log's): either they were built "
            "from another log (two ledgers configured onto one read-models file, LEDGER_VIEWS or views = "
            "in the config: give each its own), or the file lost writes (its -wal or -shm removed while "
            "a ledger had it open)"
        )
    theirs = event_at(log_of_record, head)
    if theirs is None:
        return (
            f"it holds {head} event{'s' if head != 1 else ''}, the log fewer (the log was restored from a "
            "backup, or the file is another ledger's)"
        )
    if event_at(copy, head).hash != theirs.hash:
        return f"its event {head} is not the log's (the log was restored from a backup, or replaced)"
    return None


def event_at(log: Any, position: int) -> Any:
    """The event at ``position`` of a log or of the read models' copy (None past its head)."""
    return next(iter(log.read(after=position - 1, until=position)), None)


def _set_aside(path: str, why: str) -> None:
    """Move the file (and its WAL files) aside; the read models are built again from the log."""
    if not dbfiles.is_plain_path(path):
        raise apsw.CorruptError(f"the read models at {path} cannot be used: {why}")
    if os.path.isdir(path):  # a folder named as the read-models file (LEDGER_VIEWS): never moved
        raise apsw.CantOpenError(f"the read models path {path} is a folder: name a file (LEDGER_VIEWS, views)")
    aside = f"{path}.set-aside-{time.strftime('%Y%m%dT%H%M%S')}"
    log.warning("read models at %s set aside as %s (%s); building them again from the log", path, aside, why)
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(path + suffix, aside + suffix)


def _adopt_cache(copy: EventStore, source: str) -> None:
    """Copy the derived cache of a single-file ledger (the log's file) into a new read-model file."""
    if not dbfiles.is_plain_path(source) or not Path(source).is_file():
        return
    conn = copy.conn
    try:
        conn.execute("ATTACH DATABASE ? AS old", (f"file:{source}?mode=ro",))
    except apsw.Error:
        return
    try:
        present = conn.execute("SELECT 1 FROM old.sqlite_master WHERE type='table' AND name='derived_cache'").fetchone()
        if present:
            copy.write(
                lambda: (
                    conn.execute(derived.SCHEMA),
                    conn.execute("INSERT OR IGNORE INTO main.derived_cache SELECT key, value FROM old.derived_cache"),
                )
            )
    except apsw.Error as exc:  # a cache is an optimisation: never a reason not to open
        log.warning("could not adopt the derived cache of %s: %s", source, exc)
    finally:
        conn.execute("DETACH DATABASE old")


# -- a team's log, seen from one machine ---------------------------------------------------------
_KNOWN = "logs.json"


def _known_file() -> Path:
    from fact_ledger.server.config import views_dir

    return views_dir() / _KNOWN


def remember_views(url: str, log_id: str) -> None:
    """Note which log a server URL held, so that a later start with the server down still finds
    this machine's read models (they are keyed by the log's identity, which only the server knows)."""
    from fact_ledger.ledger.log.copy import display_url

    path = _known_file()
    known = _read_known(path)
    key = display_url(url)
    if known.get(key) == log_id:
        return
    known[key] = log_id
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(known, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def known_views(url: str) -> str | None:
    """The read models' file of the log last seen at ``url`` (see :func:`remember_views`)."""
    from fact_ledger.ledger.log.copy import display_url
    from fact_ledger.server.config import views_dir

    log_id = _read_known(_known_file()).get(display_url(url))
    return str(views_dir() / f"{log_id}.db") if log_id else None


def _read_known(path: Path) -> dict[str, str]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


class UnreachableLog:
    """Stands for a log of record that could not be reached when storage opened: every use
    raises :class:`LogUnreachable`, so a write goes to the backup while reads are answered
    from the read models, until storage reopens the real log."""

    def __init__(self, url: str, message: str) -> None:
        from fact_ledger.ledger.log.copy import display_url

        self.path = display_url(url)
        self._message = message

    def _fail(self, *_args: Any, **_kwargs: Any) -> Any:
        raise LogUnreachable(self._message, reason="log_unreachable")

    write = append_in_transaction = present_ids = last_position = read = verify_chain = _fail

    def close(self) -> None:
        pass
