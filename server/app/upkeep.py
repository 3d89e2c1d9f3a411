"""Upkeep of the hot read models (a service of the facade): use counts, cold memories, and the
periodic pass.

The pass (:meth:`Upkeep.sweep`) records what depends on the clock as events, so a rebuild
reproduces it: conversations idle past the working TTL (``WorkingExpired``) and long-term
memories unused for ``cold_after_days`` (``Cooled``). It also opens the claim sets the vectors
found (:mod:`ledger.meaning_slots`): a notice is a read model, the set it becomes is an event.
How often a memory is used (on a ``find``'s first page, or ``read``) is counted in memory and written now and then to
``memory_use``, a table outside the read models that no rebuild touches: a read must not grow
the log. A cold memory that is used again is ``Warmed`` (one event per cold memory used, not
per read).
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any

from fact_ledger.ledger import clock
from fact_ledger.ledger.disagree import DISAGREEMENTS
from fact_ledger.ledger.facts import Decision, MemoryFacts
from fact_ledger.ledger.freshness import template
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.events import Cooled, Warmed, WorkingExpired
from fact_ledger.ledger.meaning_slots import meaning_set, same_slot
from fact_ledger.ledger.meaning_slots import set_key as meaning_key
from fact_ledger.projections import conversations as conv
from fact_ledger.projections import memories as mem
from fact_ledger.projections import notices as notices_model
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.conflicts.queries import conflict_facts
from fact_ledger.server.app.service import Service
from fact_ledger.server.app.storage import Storage
from fact_ledger.server.app.workspaces import Workspaces

_USE_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_use(
    memory_id INTEGER PRIMARY KEY,
    uses      INTEGER NOT NULL,
    last_used TEXT NOT NULL
)
"""
COOL_BATCH = 500  # Cooled events per transaction of the pass
MEANING_BATCH = 200  # open disagreement notices looked at per pass (one transaction per set opened)
USE_FLUSH = 256  # uses kept in memory before they are written (and at close, and by the pass)
log = logging.getLogger("fact_ledger.upkeep")


class Upkeep(Service):
    """Use counts, warm-ups and the periodic pass."""

    def __init__(self, storage: Storage, workspaces: Workspaces) -> None:
        super().__init__(storage, workspaces)
        self._uses: dict[int, int] = {}
        self._last_used: dict[int, str] = {}
        self._lock = threading.Lock()

    def used(self, memory_ids: list[int], *, maybe_cold: bool = True) -> None:
        """Count a use of each memory (a find's first page, a read): in memory, written in
        batches; cold ones among them warm up (one ``Warmed`` event each). ``maybe_cold=False``:
        the caller read them as hot (a find that left cold memories out), no look needed."""
        if not memory_ids:
            return
        now = clock.now()
        with self._lock:
            for i in memory_ids:
                self._uses[i] = self._uses.get(i, 0) + 1
                self._last_used[i] = now
            full = len(self._uses) >= USE_FLUSH
        cold = conv.cold_ids(self.conn, memory_ids) if maybe_cold else set()
        if cold:
            self._warm(sorted(cold))
        if full:
            self.flush_uses()

    def _warm(self, memory_ids: list[int]) -> None:
        streams = mem.streams_of(self.conn, memory_ids)

        def decide() -> tuple[Decision, str, str]:
            still = conv.cold_ids(self.conn, memory_ids)
            rows = mem.load_many(self.conn, sorted(still))
            return (
                [(streams[i], Warmed(memory=streams[i])) for i in sorted(still)],
                clock.now(),
                next((r.workspace for r in rows.values()), ""),
            )

        self._maintain(decide)

    def _maintain(self, decide: Any) -> None:
        """Append what the pass or a warm-up decided, in one write transaction, with no backup
        fallback: these are the ledger's own bookkeeping, never worth a backup line, and a read
        that warms a memory must not turn into a backed-up write (next time will do)."""
        if self.storage.degraded or not self.storage.lock_free():  # held by another process: next time
            return

        def work() -> None:
            decision, event_time, workspace = decide()
            if decision:
                self.runner.append(self.storage.new_events(decision, event_time, workspace))

        try:
            self.storage.transaction(work)
        except Exception as exc:  # busy, read-only, full: the state stays as it is until the next pass or use
            log.info("working tier bookkeeping skipped: %s", exc)

    def flush_uses(self) -> None:
        """Write the counted uses to ``memory_use`` (outside the log and the read models)."""
        with self._lock:
            uses, last = self._uses, self._last_used
            self._uses, self._last_used = {}, {}
        if not uses or self.storage.degraded:
            return
        if not self.storage.lock_free():
            # Another process holds a write lock (a long write in a server, a script): a count is
            # never worth waiting for. A read waited out the busy timeout (15 s) at its close,
            # after it had answered; the counts stay for the next flush (in this process).
            with self._lock:
                for i, n in uses.items():
                    self._uses[i] = self._uses.get(i, 0) + n
                    self._last_used[i] = max(self._last_used.get(i, last[i]), last[i])
            log.info("use counts kept for the next flush: another process holds the write lock")
            return

        def work() -> None:
            self.conn.execute(_USE_SCHEMA)
            self.conn.executemany(
                "INSERT INTO memory_use(memory_id, uses, last_used) VALUES(?,?,?) ON CONFLICT(memory_id) "
                "DO UPDATE SET uses = uses + excluded.uses, last_used = max(last_used, excluded.last_used)",
                [(i, n, last[i]) for i, n in sorted(uses.items())],
            )

        try:
            self.storage.transaction(work)
        except Exception:
            return

    def sweep(self, *, dry_run: bool = False, now: str | None = None) -> dict[str, Any]:
        """The periodic pass: expire idle conversations' working memories, cool unused long-term ones."""
        self.flush_uses()
        now = now or clock.now()
        moment = clock.to_datetime(now)
        ttl_cutoff = clock.format_time(moment - timedelta(days=self.settings.working_ttl_days))
        cold_cutoff = clock.format_time(moment - timedelta(days=self.settings.cold_after_days))
        with self.storage.snapshot():
            idle = conv.idle_sessions(self.conn, ttl_cutoff)
            cooling = self._cooling(cold_cutoff)
        result: dict[str, Any] = {
            "ok": True,
            "dry_run": dry_run,
            "expired_sessions": [s for s, _, _ in idle],
            "cooled": [i for i, _, _ in cooling],
            "meaning_sets": self._meaning_sets(dry_run, now),
        }
        if dry_run or (not idle and not cooling):
            return result
        days = self.settings.working_ttl_days
        for session, workspace, _ in idle:
            self._maintain(
                lambda s=session, w=workspace: ([(uuid7(), WorkingExpired(session=s, idle_days=days))], now, w)
            )
        cold_days = self.settings.cold_after_days
        by_workspace: dict[str, list[str]] = {}
        for _, stream, workspace in cooling:
            by_workspace.setdefault(workspace, []).append(stream)
        for workspace, streams in sorted(by_workspace.items()):
            for start in range(0, len(streams), COOL_BATCH):
                chunk = streams[start : start + COOL_BATCH]
                self._maintain(
                    lambda c=chunk, w=workspace: ([(m, Cooled(memory=m, idle_days=cold_days)) for m in c], now, w)
                )
        return result

    def _meaning_sets(self, dry_run: bool, now: str) -> list[list[int]]:
        """Open disagreement notices that are one slot (:mod:`ledger.meaning_slots`) open a claim
        set each (settled at once when a write policy decides it): the pairs, as memory ids."""
        with self.storage.snapshot():
            found = notices_model.listing(self.conn, state="open", kinds=DISAGREEMENTS, limit=MEANING_BATCH)
        pairs: list[list[int]] = []
        for notice in found:
            left_id, right_id = notice["left"]["memory_id"], notice["right"]["memory_id"]
            values = (notice["left"]["value"], notice["right"]["value"])
            if dry_run:
                with self.storage.snapshot():
                    if self._meaning_pair(left_id, right_id) is not None:
                        pairs.append([left_id, right_id])
                continue

            def decide(left_id: int = left_id, right_id: int = right_id, values: tuple[str, str] = values) -> Any:
                pair = self._meaning_pair(left_id, right_id)
                if pair is None:
                    return [], now, ""
                left, right, subject = pair
                other_sets = {
                    m.stream_id: [
                        conflict_facts(self.conn, r) for r in conflicts_model.unresolved_of(self.conn, m.memory_id)
                    ]
                    for m in (left, right)
                }
                decision = meaning_set(
                    left,
                    right,
                    values,
                    conflict=uuid7(),
                    subject=subject,
                    policy=self.settings.policy,
                    other_sets=other_sets,
                )
                pairs.append([left_id, right_id])
                return decision, now, left.workspace

            self._maintain(decide)
        return pairs

    def _unresolved(self, memory_id: int) -> list[Any]:
        return [conflict_facts(self.conn, r) for r in conflicts_model.unresolved_of(self.conn, memory_id)]

    def _meaning_pair(self, left_id: int, right_id: int) -> tuple[MemoryFacts, MemoryFacts, str] | None:
        """The two memories as decisions see them, and the set's subject, when they are one slot
        and no set of theirs exists yet (None otherwise)."""
        rows = mem.load_many(self.conn, [left_id, right_id])
        left, right = rows.get(left_id), rows.get(right_id)
        if left is None or right is None or left.status != "active" or right.status != "active":
            return None
        if left.workspace != right.workspace:
            return None
        if not same_slot(left.subject_norm, right.subject_norm, left.content, right.content):
            return None
        key = meaning_key(left.stream_id, right.stream_id)
        if self.conn.execute("SELECT 1 FROM conflicts WHERE key=? LIMIT 1", (key,)).fetchone() is not None:
            return None  # opened before: settled, kept by a person, or still open
        shared = {r.conflict_id for r in conflicts_model.unresolved_of(self.conn, left_id)}
        if shared & {r.conflict_id for r in conflicts_model.unresolved_of(self.conn, right_id)}:
            return None  # already disputed together on a claim
        subject = left.subject or template(left.content)
        return MemoryFacts.from_row(left), MemoryFacts.from_row(right), subject

    def _cooling(self, cutoff: str) -> list[tuple[int, str, str]]:
        """Active long-term memories last used (or, never used, last changed) before ``cutoff``
        and not cold yet: ``(memory_id, stream_id, workspace)``."""
        has_use = self.conn.execute("SELECT 1 FROM sqlite_master WHERE name='memory_use'").fetchone() is not None
        used = "(SELECT last_used FROM memory_use u WHERE u.memory_id = m.memory_id)" if has_use else "NULL"
        return self.conn.execute(
            "SELECT m.memory_id, m.stream_id, m.workspace FROM memories m WHERE m.status='active' "
            f"AND coalesce({used}, m.updated_at) < ? "
            "AND m.memory_id NOT IN (SELECT memory_id FROM cold_memories) ORDER BY m.memory_id",
            (cutoff,),
        ).fetchall()

    def close(self) -> None:
        self.flush_uses()
