"""The ``ledger`` exit codes: one table, so scripts can tell what happened without parsing text.

``docs/cli.md`` prints :data:`TABLE`; a test checks the two agree and that each code is the one
a real run exits with.
"""

from __future__ import annotations

from fact_ledger.ledger.errors import ChainBroken, LedgerError, Unavailable

OK = 0
REFUSED = 1  # bad input, not found, locked, version conflict, unauthorized: nothing written
BROKEN = 2  # verify: chain or projection broken; doctor: critical; the database file is corrupt
BACKUP_ONLY = 3  # the write did not reach the database: its events are only in the JSONL backup
PARTIAL = 4  # import / replay-backup skipped bad lines (the good ones were appended)
UNAVAILABLE = 5  # no ledger at the path, or the database cannot be opened: nothing written
USAGE = 64  # a command line click could not parse (BSD sysexits EX_USAGE)

WARNINGS = 1  # doctor only: warnings, nothing critical

TABLE: list[tuple[int, str, str]] = [
    (OK, "every command", "done"),
    (
        REFUSED,
        "every command",
        "refused: invalid input, not found, locked, version conflict, unauthorized, "
        "forbidden workspace; nothing was written",
    ),
    (WARNINGS, "doctor", "warnings, nothing critical"),
    (
        BROKEN,
        "verify, doctor, every command",
        "verify: the hash chain or a projection is broken (the first bad "
        "position is named); doctor: a critical check; any command: the "
        "database file is corrupt",
    ),
    (
        BACKUP_ONLY,
        "remember, update, governance commands",
        "the database refused the write; its events are kept in the JSONL backup until replay-backup --apply",
    ),
    (PARTIAL, "import, replay-backup", "some lines were bad and skipped (each is listed); the rest was applied"),
    (
        UNAVAILABLE,
        "every command",
        "no ledger at an explicit --db path (see init / --create), or the database "
        "cannot be opened, or (model install) the model could not be downloaded or "
        "failed its checks; nothing was written",
    ),
    (USAGE, "every command", "the command line itself is wrong (unknown option, missing argument)"),
]


def for_error(exc: LedgerError) -> int:
    """The exit code of a command that failed with ``exc``."""
    if isinstance(exc, ChainBroken):
        return BROKEN
    if isinstance(exc, Unavailable):
        return BROKEN if exc.details.get("reason") == "corrupt" else UNAVAILABLE
    return REFUSED


def for_result(result: dict[str, object]) -> int:
    """The exit code of a command that returned ``result``."""
    if result.get("backup_only"):
        return BACKUP_ONLY
    if result.get("bad_total"):
        return PARTIAL
    return OK
