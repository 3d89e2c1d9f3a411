"""Whether another process holds a local file's write lock now (a long write in a ``ledger
serve``, a script): every write then waits out the busy timeout and goes to the JSONL backup.

``doctor``'s ``writable`` check and ``status`` (its ``busy`` field) ask the same probe, so they
say the same: a connection of its own tries ``BEGIN IMMEDIATE`` for :data:`LOCK_PROBE_S` and
rolls back (nothing is written), so the answer is the same in a new process and in a server's.
"""

from __future__ import annotations

from typing import Any

import apsw

from fact_ledger.ledger.log.store import EventStore

# How long the probe waits for the write lock before calling it held: a write commits in
# milliseconds, so a lock held this long is a long transaction, not a write passing by.
LOCK_PROBE_S = 1.0


def held_write_locks(storage: Any) -> list[tuple[str, str]]:
    """The local files (the log's, the read models') whose write lock another connection holds
    for over :data:`LOCK_PROBE_S`: each as a person names it (``the log``) and its path."""
    named = [("the log", storage.log)] + (
        [("the read models' file", storage.store)] if storage.store is not storage.log else []
    )
    held: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name, store in named:
        if not isinstance(store, EventStore) or store.conn.readonly("main"):
            continue
        path = store.conn.filename
        if not path or path in seen:
            continue
        seen.add(path)
        if _locked(path):
            held.append((name, str(store.path)))
    return held


def busy(storage: Any, then: str) -> dict[str, Any] | None:
    """``{"files", "message"}`` while another process holds a write lock (``files``: their
    paths), else None; ``then`` says what becomes of the backed-up writes (this process replays
    them, or a person does)."""
    held = held_write_locks(storage)
    if not held:
        return None
    wait = max(storage.settings.busy_timeout_ms, 100) * 3 / 1000  # EventStore.write's deadline
    named = " and ".join(f"{name} ({path})" for name, path in held)
    goes = storage.backup_log.where_writes_go(then=f" ({then})", one=True)  # or refused: never said kept
    return {
        "files": [path for _, path in held],
        "message": f"another process has held the write lock on {named} for over {LOCK_PROBE_S:g} s; "
        f"a write waits up to {wait:g} s for it, then {goes}; "
        "let the process with the long write open (a ledger serve, a script) finish",
    }


def replay_then(storage: Any) -> str:
    """What becomes of backed-up writes: only ``ledger serve`` replays by itself; a CLI or
    console process leaves it to ``replay-backup``."""
    return "then it replays" if storage.auto_replay else "then `ledger replay-backup --apply` lands them"


def _locked(path: str) -> bool:
    conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READWRITE)
    try:
        conn.set_busy_timeout(int(LOCK_PROBE_S * 1000))
        try:
            conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError:
            return True
        conn.execute("ROLLBACK")
        return False
    finally:
        conn.close()
