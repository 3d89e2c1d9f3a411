"""Copy a log to another backend row for row (``ledger migrate``), and open a log by its URL.

A copy keeps every column, so positions, times and the hash chain are the same on both ends and
``verify``/``export`` agree byte for byte. It is resumable: when the target already holds a
prefix of the source (an interrupted copy), it goes on from there; a target that holds anything
else is refused before a row is written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import msgspec

from fact_ledger.ledger.errors import InvalidInput, Unavailable, VersionConflict
from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.dbfiles import MissingDatabase
from fact_ledger.ledger.log.protocol import EventLog
from fact_ledger.ledger.log.store import EventStore

BATCH = 2000


class CopyResult(msgspec.Struct, kw_only=True):
    copied: int
    already_present: int
    events: int
    head_hash: str


def display_url(url: str) -> str:
    """The URL without its password, for messages and replies."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def log_location(url: str) -> tuple[str, str]:
    """``("postgresql", url)`` or ``("sqlite", path)``; anything else is invalid input."""
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql", url
    path = url.removeprefix("sqlite://") if url.startswith("sqlite:///") else url
    if "://" in path or not path:
        raise InvalidInput(f"unknown log URL {display_url(url)!r}: use postgresql://… or sqlite:///path", field="url")
    return "sqlite", str(Path(path).expanduser())


def refuse_same_log(source: str, target: str) -> None:
    """A copy of a log onto itself (the same SQLite file by any path or link, the same
    PostgreSQL database) is refused: it "copied 0 events" and said the target held them, as if
    the log now lived somewhere else too."""
    kind, where = log_location(source)
    target_kind, target_where = log_location(target)
    if kind != target_kind:
        return
    if kind == "sqlite":
        same = Path(where).resolve() == Path(target_where).resolve()
        if not same and Path(where).exists() and Path(target_where).exists():
            same = Path(where).samefile(target_where)
    else:
        same = _database(where) == _database(target_where)
    if same:
        raise InvalidInput(
            f"--to names the log being copied ({display_url(target)}): nothing would be copied; "
            "give another file (sqlite:///path) or a PostgreSQL database",
            field="to",
        )


def _database(url: str) -> tuple[str, int, str]:
    """A PostgreSQL URL's server and database (user and password name no other log)."""
    parts = urlsplit(url)
    return (parts.hostname or "localhost", parts.port or 5432, parts.path.strip("/"))


def open_log(url: str, *, create: bool) -> EventLog:
    """The log at ``url`` (see :func:`log_location`); a missing SQLite file is
    :class:`Unavailable` unless ``create``."""
    kind, where = log_location(url)
    if kind == "postgresql":
        from fact_ledger.ledger.log.pg_store import PostgresEventStore

        return PostgresEventStore(where, create=create)
    try:
        return EventStore(where, create=create)
    except MissingDatabase as exc:
        raise Unavailable(str(exc), reason="missing") from None


def _head(log: EventLog, position: int) -> StoredEvent | None:
    return next(iter(log.read(after=position - 1, until=position, batch=1)), None) if position else None


def copy_log(source: EventLog, target: EventLog, *, progress: Callable[[int], None] | None = None) -> CopyResult:
    """Append to ``target`` every row of ``source`` it lacks; both chains are verified after."""
    end = source.last_position()
    present = target.last_position()
    if present > end or (present and _head(source, present) != _head(target, present)):
        raise VersionConflict(
            f"the target log already holds other events (at position {present}); copy into an empty log",
            field="to",
            target_position=present,
        )
    copied = 0
    batch: list[StoredEvent] = []
    for row in source.read(after=present, until=end):
        batch.append(row)
        if len(batch) >= BATCH:
            target.append_stored(batch)
            copied += len(batch)
            batch = []
            if progress:
                progress(present + copied)
    if batch:
        target.append_stored(batch)
        copied += len(batch)
    events = target.verify_chain()
    head = _head(target, events)
    return CopyResult(copied=copied, already_present=present, events=events, head_hash=head.hash if head else "")
