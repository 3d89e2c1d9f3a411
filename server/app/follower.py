"""Following a team's log: this machine's read models catch up as soon as another machine writes.

A write on any machine pulls before it decides (``Storage.transaction``), so decisions never
need this; reads do. ``ledger serve`` on a PostgreSQL log runs one :class:`LogFollower`: a thread
with its own connections that waits on the log's ``NOTIFY`` (``ledger.log.pg_store.LogWatcher``,
polling as the fallback) and folds what arrived into the read models' file, where the serving
connection sees it on its next read. While the server is unreachable it keeps waiting; the
read models keep answering with what they hold.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import apsw

from fact_ledger.ledger.errors import Unavailable
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections.runner import ProjectionRunner, Projector
from fact_ledger.server.app.views_file import another_connection

log = logging.getLogger("fact_ledger.follower")

POLL_S = 1.0  # the longest a lost notification can delay a pull
RETRY_S = 1.0


class LogFollower:
    """A thread that pulls the shared log into the read models whenever it grows."""

    def __init__(
        self,
        url: str,
        views_path: str,
        projectors: Callable[[], list[Projector]],
        *,
        busy_timeout_ms: int,
        on_pull: Callable[[int], None] | None = None,
        on_erasure: Callable[[list[str], EventStore], None] | None = None,
    ) -> None:
        self.url, self.views_path, self._projectors = url, views_path, projectors
        self.busy_timeout_ms = busy_timeout_ms
        self.on_pull = on_pull
        self.on_erasure = on_erasure  # erasures a pull brought: the machine's backup and old bytes follow
        self.pulled = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="log-follower", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        from fact_ledger.ledger.log.pg_store import LogWatcher, PostgresEventStore

        watcher = LogWatcher(self.url, poll_s=POLL_S)
        copy = another_connection(self.views_path, busy_timeout_ms=self.busy_timeout_ms)
        shared: PostgresEventStore | None = None
        runner: ProjectionRunner | None = None
        try:
            while not self._stop.is_set():
                watcher.wait_beyond(copy.last_position(), timeout_s=POLL_S)
                if self._stop.is_set():
                    return
                try:
                    if shared is None or runner is None:
                        shared = PostgresEventStore(self.url)
                        runner = ProjectionRunner(copy, self._projectors(), log=shared)
                    count = copy.write(runner.pull)
                except (Unavailable, apsw.Error) as exc:
                    log.warning("log follower: pull failed (%s); retrying", exc)
                    self._stop.wait(RETRY_S)
                    continue
                erased, runner.pulled_erasures = runner.pulled_erasures, []
                if erased and self.on_erasure is not None:
                    try:
                        self.on_erasure(erased, copy)
                    except Exception as exc:  # the follower goes on: the bytes go at the next erasure or open
                        log.warning("log follower: clearing after an erasure failed (%s)", exc)
                if count:
                    self.pulled += count
                    if self.on_pull is not None:
                        self.on_pull(count)
        finally:
            watcher.close()
            if shared is not None:
                shared.close()
            copy.close()
