"""The ``ledger`` exit codes: one table, so scripts can tell what happened without parsing text.

``docs/cli.md`` prints :data:`TABLE`; a test checks the two agree and that each code is the one
a real run exits with.
"""

from __future__ import annotations

from fact_ledger.ledger.errors import ChainBroken, LedgerError, Unavailable

OK = 0
REFUSED = 1  # bad input, not found, locked, version conflict, unauthorized: nothing written
BROKEN = 2  # verify: chain or projection broken; doctor: critical; the database file is corrupt or no ledger
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
        "refused: invalid input (also a config file that is missing or invalid), not found, locked, "
        "version conflict, unauthorized, forbidden workspace, a port already taken (serve --http, "
        "console); nothing was written",
    ),
    (WARNINGS, "doctor", "warnings, nothing critical"),
    (
        BROKEN,
        "verify, doctor, every command",
        "verify: the hash chain or a projection is broken (the first bad "
        "position is named); doctor: a critical check; any command: the "
        "database file is corrupt, or is a file that is not a ledger (nothing is written to it "
        "or beside it), or a write found the hash chain broken",
    ),
    (
        BACKUP_ONLY,
        "remember, update, governance commands",
        "the database refused the write; its events are kept in the JSONL backup until replay-backup --apply",
    ),
    (
        PARTIAL,
        "import, replay-backup",
        "some lines were bad and skipped (each is listed), or (import) lines are missing between two "
        "(each gap is listed); the rest was applied",
    ),
    (
        UNAVAILABLE,
        "every command",
        "no ledger at an explicit --db path (see init / --create), or the path is a "
        "directory, or the database cannot be opened (status: degraded), or (model "
        "install, model list) the semantic extra is not installed, or the model could not be "
        "downloaded or failed its checks, or (reembed, rebuild --projection vectors) there is no "
        "usable embedding model (the message says why: none configured, the file missing, no model, "
        "its vectors not numbers) or it is still loading; nothing was written",
    ),
    (
        USAGE,
        "every command",
        "the command line itself is wrong (unknown option, missing argument, a value out of range); "
        "with --json, a JSON error with reason usage",
    ),
]


_BROKEN_FILE = ("corrupt", "not_a_ledger")  # degraded reasons that mean "this file", not "right now"


def for_error(exc: LedgerError) -> int:
    """The exit code of a command that failed with ``exc``."""
    if isinstance(exc, ChainBroken):
        return BROKEN
    if isinstance(exc, Unavailable):
        return BROKEN if exc.details.get("reason") in _BROKEN_FILE else UNAVAILABLE
    return REFUSED


def for_result(result: dict[str, object]) -> int:
    """The exit code of a command that returned ``result``: a ``status`` that answers
    ``degraded`` says in its code too that the database cannot be used."""
    degraded = result.get("degraded")
    if isinstance(degraded, dict):
        return BROKEN if degraded.get("reason") in _BROKEN_FILE else UNAVAILABLE
    if result.get("backup_only"):
        return BACKUP_ONLY
    if result.get("bad_total") or result.get("gap_total"):
        return PARTIAL
    return OK
