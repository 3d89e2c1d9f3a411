"""Which storage failures put a write in the JSONL backup, and the reason each one reports.

Kept apart from :mod:`server.app.storage` so that the modules beside it (the backup's state,
replay) name the same failures without importing the storage seam itself.
"""

from __future__ import annotations

import apsw

from fact_ledger.ledger.errors import LogUnreachable
from fact_ledger.ledger.log.dbfiles import MissingDatabase, NotALedger, ReadOnlySidecar
from fact_ledger.ledger.log.store import StoreBusy

STORAGE_ERRORS: tuple[type[Exception], ...] = (
    StoreBusy,
    LogUnreachable,
    apsw.BusyError,
    apsw.LockedError,
    apsw.ReadOnlyError,
    apsw.FullError,
    apsw.CorruptError,
    apsw.NotADBError,
    apsw.CantOpenError,
    apsw.IOError,
)
OPEN_ERRORS: tuple[type[Exception], ...] = (*STORAGE_ERRORS, OSError)
REASONS: tuple[tuple[type[Exception], str], ...] = (
    (StoreBusy, "locked"),
    (LogUnreachable, "log_unreachable"),
    (apsw.BusyError, "locked"),
    (apsw.LockedError, "locked"),
    (apsw.ReadOnlyError, "read_only"),
    (apsw.FullError, "disk_full"),
    (apsw.CorruptError, "corrupt"),
    (apsw.NotADBError, "corrupt"),
    (apsw.CantOpenError, "cant_open"),
    (apsw.IOError, "io_error"),
    (MissingDatabase, "missing"),
    (ReadOnlySidecar, "read_only"),
    (OSError, "cant_open"),
)


def reason_of(exc: BaseException) -> str:
    if isinstance(exc, NotALedger):
        return exc.reason
    return next((reason for cls, reason in REASONS if isinstance(exc, cls)), "io_error")
