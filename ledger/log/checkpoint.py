"""Background WAL checkpoints for the SQLite log (see :class:`Checkpointer`)."""

from __future__ import annotations

import threading
import time
from contextlib import suppress

import apsw

# WAL frames after which a checkpoint is due (SQLite's own auto-checkpoint default), and the
# size at which the writer checkpoints itself because the background one has not kept up.
CHECKPOINT_FRAMES = 1000
CHECKPOINT_FRAMES_INLINE = 16 * CHECKPOINT_FRAMES
# The background checkpoint waits until the writer has been quiet this long (see Checkpointer).
CHECKPOINT_IDLE_S = 0.05


class Checkpointer:
    """PASSIVE WAL checkpoints on a thread with its own connection, in the writer's idle time.

    A checkpoint copies every page the WAL holds into the database file (at random places)
    and syncs it; run inside ``COMMIT`` (SQLite's auto-checkpoint) that is tens of milliseconds
    every few dozen writes. Run concurrently with a busy writer it competes for the disk and
    for the two cores: every commit's own sync waits behind it (measured: remember p50 +25%,
    twice the writes over 5 ms). So it runs once the writer has paused for
    ``CHECKPOINT_IDLE_S``, which an agent's pace provides; a writer that never pauses
    checkpoints itself at ``CHECKPOINT_FRAMES_INLINE``. PASSIVE never blocks a writer or a
    reader and never waits on a lock.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._wake = threading.Event()
        self._stopped = threading.Event()  # only close() wakes the wait for the writer's pause
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.backfilled = 0  # frames copied into the database by this thread (all passes)
        self.last_write = 0.0  # time.monotonic() of the writer's latest commit

    def request(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="ledger-checkpoint", daemon=True)
            self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        try:
            conn = apsw.Connection(self.path, flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_URI)
            # A connection that has never read the database has not opened its WAL yet, and
            # checkpointing on it is a silent no-op (it answers -1, -1): read the schema first.
            conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()
        except apsw.Error:
            return
        try:
            while True:
                self._wake.wait()
                # Wait out the writer's burst. A busy writer requests on every commit once the
                # WAL is large; those requests must not wake this thread (each wake takes the
                # GIL from the writer): a commit meanwhile only moves the deadline on.
                while not self._stopping and (quiet := time.monotonic() - self.last_write) < CHECKPOINT_IDLE_S:
                    self._stopped.wait(CHECKPOINT_IDLE_S - quiet)
                if self._stopping:
                    return
                self._wake.clear()  # a request from here on asks for the next pass
                # On failure the next request, the writer's fallback or the close tries again.
                with suppress(apsw.Error):
                    _, done = conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
                    self.backfilled += max(done, 0)
        finally:
            conn.close()

    def close(self) -> None:
        if self._thread is not None:
            self._stopping = True
            self._stopped.set()
            self._wake.set()
            self._thread.join()
            self._thread = None
