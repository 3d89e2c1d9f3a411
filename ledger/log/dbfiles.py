"""The database's files before SQLite opens them: does the ledger exist, can its sidecars be written.

Two traps a person meets once and never forgets:

* A mistyped path (``--db nope/dir/x.db``) would silently start an empty ledger: an explicit
  path whose file does not exist, or is an empty file, is refused unless the caller asked to
  create it (:class:`MissingDatabase`).
* WAL mode keeps ``DB-wal`` and ``DB-shm`` beside the database, created with the database's
  permission bits. Opened once while the file was read-only, they stay read-only after the
  database is made writable again, and every write then fails with ``read_only``
  (https://www.sqlite.org/wal.html#readonly). When the caller owns such a sidecar, making it
  writable again changes no byte of it and is safe even while other processes have it open;
  otherwise :class:`ReadOnlySidecar` names the file and what to do.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

SIDECARS = ("-wal", "-shm")
# Free bytes below which a disk counts as full: less than a WAL index (-shm, 32 KiB) and a page.
FULL_BELOW = 64 * 1024


class MissingDatabase(FileNotFoundError):
    """An explicit database path with no ledger at it (and no request to create one)."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"no ledger at {path}; create it with `ledger init --db {path}` (or pass --create), or check the path"
        )
        self.path = path


class NotALedger(OSError):
    """An explicit database path that holds something else: a directory, a file that is not an
    SQLite database, or another program's SQLite database. Nothing is written there or beside it
    (no backup file either): the path is a mistake, not a ledger that is failing."""

    def __init__(self, path: str, what: str, *, reason: str = "not_a_ledger") -> None:
        super().__init__(
            f"{path} is not a ledger ({what}); check the path, or create one with `ledger init --db NEWPATH`"
        )
        self.path = path
        self.reason = reason  # "cant_open" for a directory, "not_a_ledger" for a file


SQLITE_HEADER = b"SQLite format 3\x00"  # https://www.sqlite.org/fileformat.html#the_database_header


class ReadOnlySidecar(PermissionError):
    """A read-only ``-wal``/``-shm`` beside a writable database that this user cannot fix."""

    def __init__(self, sidecar: str) -> None:
        super().__init__(
            f"{sidecar} is read-only (left by an open while the database was read-only); "
            f"with no ledger process running, make it writable (chmod u+w {sidecar}) or remove it"
        )
        self.path = sidecar


def is_plain_path(path: str) -> bool:
    """A file path (not ``:memory:`` and not a ``file:`` URI, which SQLite handles itself)."""
    return path != ":memory:" and not path.startswith("file:")


def prepare(path: str, *, create: bool) -> None:
    """Refuse a missing ledger unless ``create``; make our own read-only sidecars writable again."""
    if not is_plain_path(path):
        return
    db = Path(path)
    if path.endswith(("/", os.sep)):  # "newdir/": a directory, never a file named "newdir"
        raise NotALedger(path, "a path ending in / names a directory: name the file in it", reason="cant_open")
    if no_ledger_yet(db):
        if not create:
            raise MissingDatabase(path)
        db.parent.mkdir(parents=True, exist_ok=True)
        return
    if db.is_dir():
        raise NotALedger(path, "it is a directory", reason="cant_open")
    if not _sqlite_or_empty(db):
        raise NotALedger(path, "not an SQLite database")
    if not os.access(db, os.W_OK):
        return  # a read-only database: SQLite reports it, the write path backs up
    for suffix in SIDECARS:
        sidecar = Path(path + suffix)
        if sidecar.exists() and not os.access(sidecar, os.W_OK):
            _make_writable(sidecar)


def read_models_of(path: str) -> Path | None:
    """The log whose read-models file ``path`` names ("x.views.db" beside an "x.db"), if that log
    exists: opened as a log, such a file took writes that the next open of the real log set aside
    with the file (an acknowledged write lost)."""
    if not is_plain_path(path):
        return None
    db = Path(path)
    if not db.stem.endswith(".views"):
        return None
    log = db.with_name(db.stem.removesuffix(".views") + db.suffix)
    return log if log.is_file() else None


def no_ledger_yet(db: Path) -> bool:
    """Nothing at ``db``, or a file of no bytes with no write-ahead log beside it (``touch x.db``,
    a temporary file's name), which SQLite would silently make a database of. (A ledger whose
    pages all sit in its ``-wal`` still counts as one.)"""
    try:
        return not db.exists() or (db.is_file() and db.stat().st_size == 0 and not Path(f"{db}-wal").exists())
    except OSError:
        return False


def _sqlite_or_empty(db: Path) -> bool:
    """An SQLite file, or an empty one (SQLite makes a database of it); a file this user cannot
    read passes too, so SQLite reports what is wrong with it."""
    try:
        with db.open("rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError:
        return True
    return not head or head == SQLITE_HEADER


def _make_writable(sidecar: Path) -> None:
    info = sidecar.stat()
    if info.st_uid != os.geteuid():
        raise ReadOnlySidecar(str(sidecar))
    try:
        sidecar.chmod(stat.S_IMODE(info.st_mode) | stat.S_IWUSR)
    except OSError:
        raise ReadOnlySidecar(str(sidecar)) from None
    if not os.access(sidecar, os.W_OK):
        raise ReadOnlySidecar(str(sidecar))


def why_unwritable(path: str) -> tuple[str, str] | None:
    """What about the files keeps a write (or a WAL open) out of ``path``, as ``(reason,
    message)``, or None when nothing shows. SQLite says only "unable to open database file" or
    "attempt to write a readonly database" where the cause is the folder, the mount or the
    disk: this names it, by looking (nothing is created or written)."""
    if not is_plain_path(path):
        return None
    db = Path(path).expanduser()
    folder = db.parent
    try:
        info = os.statvfs(folder)
    except OSError:
        return None
    if info.f_flag & os.ST_RDONLY:
        return "read_only", f"the file system holding {folder} is mounted read-only"
    if not os.access(folder, os.W_OK):
        return "read_only", f"the folder {folder} cannot be written (the -wal and -shm files of {db.name} go there)"
    for file in (db, *(Path(f"{db}{suffix}") for suffix in SIDECARS)):
        if file.exists() and not os.access(file, os.W_OK):
            return "read_only", f"{file} cannot be written"
    free = info.f_bavail * info.f_frsize
    if free < FULL_BELOW:
        return "disk_full", f"the disk holding {folder} is full ({free} bytes free)"
    return None
