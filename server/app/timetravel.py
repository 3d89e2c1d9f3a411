"""Time travel and audit (a service of the facade): as-of reads, history, timelines, audit, archive.

Two axes (docs/design.md "Two time axes"): ``as_of_recorded`` (a log position, or a timestamp that
resolves to the log prefix recorded by then) picks what the ledger knew; ``as_of_event_time``
picks the world time at which validity is judged. Both come from the ``timeline`` projection
(:mod:`projections.timeline.projector`, queried through :mod:`projections.timeline.asof`), so a past answer is an
index lookup, and equals a fresh fold of the events up to that point (``tests/test_timetravel_*``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import msgspec

from fact_ledger.ledger import clock
from fact_ledger.ledger.arbiter import Side, leaders_first_scored, set_leaders
from fact_ledger.ledger.claims import extract_claims
from fact_ledger.ledger.errors import InvalidInput, NotFound
from fact_ledger.ledger.ids import ascii_digits, position_in
from fact_ledger.ledger.log.chain import NewEvent, StoredEvent
from fact_ledger.ledger.log.events import current_type, stored_names
from fact_ledger.ledger.retention import archive_cutoff, decide_archive
from fact_ledger.projections import audit as audit_model
from fact_ledger.projections import conversations as conv
from fact_ledger.projections import memories as mem
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.timeline import asof
from fact_ledger.server.app import paging
from fact_ledger.server.app.memory_view import memory_view
from fact_ledger.server.app.payload_ids import StreamIds
from fact_ledger.server.app.storage import Storage
from fact_ledger.server.app.workspaces import Workspaces
from fact_ledger.server.config import Settings

AUDIT_MAX = 1000
TIMELINE_MAX = 500
HISTORY_PAGE = 50  # versions per history page
# The fields of a version that may change from one to the next (a history row's ``changed_from``)
VERSION_FIELDS = (
    "content",
    "subject",
    "tags",
    "event_time",
    "valid_to",
    "status",
    "source_type",
    "protection",
    "confidence",
    "superseded_by",
)
ARCHIVE_BATCH = 500
_COMPACT_DROP = ("content", "metadata")
REF_CHAIN_LEVELS = 3  # compare's ref_chain: links followed from each side


class History:
    """As-of reads, history, timelines, audit and retention over the storage seam."""

    def __init__(self, storage: Storage, workspaces: Workspaces) -> None:
        self.storage = storage
        self.workspaces = workspaces

    @property
    def settings(self) -> Settings:
        """The storage's settings: the MCP server swaps them per call (the caller's identity)."""
        return self.storage.settings

    # -- points ------------------------------------------------------------------------------
    def _point(self, as_of_event_time: str | None, as_of_recorded: str | int | None) -> asof.Point:
        last = self.storage.store.last_position()
        if as_of_recorded is None:
            position = last
        elif isinstance(as_of_recorded, bool):
            raise InvalidInput("as_of_recorded must be a position or a timestamp", field="as_of_recorded")
        elif isinstance(as_of_recorded, int) or (isinstance(as_of_recorded, str) and ascii_digits(as_of_recorded)):
            given = as_of_recorded if isinstance(as_of_recorded, int) else position_in(as_of_recorded)
            position = min(given, last)
            if position < 0:
                raise InvalidInput("a position must be >= 0", field="as_of_recorded")
        else:
            recorded = clock.parse_time(as_of_recorded, field="as_of_recorded")
            position = asof.position_at(self.storage.store.conn, recorded, last)
        event_time = clock.parse_time(as_of_event_time, field="as_of_event_time") if as_of_event_time else None
        return asof.Point(position, event_time)

    @staticmethod
    def _point_view(point: asof.Point) -> dict[str, Any]:
        return {"recorded_position": point.position, "event_time": point.event_time}

    def as_of(self, as_of_event_time: str | None = None, as_of_recorded: str | int | None = None) -> dict[str, Any]:
        """The point a pair of as-of values names: the log position it resolves to, the event time."""
        with self.storage.snapshot():
            return {"ok": True, "as_of": self._point_view(self._point(as_of_event_time, as_of_recorded))}

    # -- as-of find and read (called from LedgerApp.find / read) -----------------------------
    def find_as_of(
        self,
        query: str,
        *,
        limit: int,
        tags_filter: list[str] | tuple[str, ...],
        source_type: str | None,
        workspace: str | None,
        after_time: str | None,
        before_time: str | None,
        include_inactive: bool,
        as_of_event_time: str | None,
        as_of_recorded: str | int | None,
        offset: int,
        bound: int | None,
        request: dict[str, Any],
    ) -> dict[str, Any]:
        scope, boost = self.workspaces.find_scope(workspace)
        filters = asof.AsOfFilters(
            include_inactive=include_inactive,
            workspaces=scope,
            source_type=source_type,
            tags_all=tuple(tags_filter),
            after_time=after_time,
            before_time=before_time,
        )
        with self.storage.snapshot():
            # Later pages read the ledger as the first page did (what it knew at the bound).
            point = self._point(as_of_event_time, bound if bound is not None else as_of_recorded)
            # hits past the page too: a set's leader ranked just below it moves up into it, on
            # every page alike (as the current find looks STANDING_WINDOW past its page)
            hits, _ = asof.find_at(
                self.storage.store.conn,
                query,
                point,
                filters,
                offset + limit + 1 + paging.STANDING_WINDOW,
                boost_workspaces=boost,
            )
            hits = self._leaders_first_at(hits, point)  # the current rows it reads: the same snapshot
        shown = hits[offset : offset + limit]
        results = [
            memory_view(h.state, conflict_ids=[], score=h.score, status=asof.status_at(h.state, point.event_time) or "")
            for h in shown
        ]
        more = len(hits) > offset + limit
        cursor = paging.encode("find", request, offset + limit, point.position) if more else None
        return {
            "ok": True,
            "results": results,
            "has_more": more,
            "next_cursor": cursor,
            "as_of": self._point_view(point),
        }

    def _leaders_first_at(self, hits: list[asof.Scored], point: asof.Point) -> list[asof.Scored]:
        """``hits`` with each claim set's leader, among the memories holding at the point, ahead of
        its challengers (as the current ``find`` orders them): no set is stored for a past point,
        so the hits' claims and the arbitration rules name it here. A leader moved up takes its
        challenger's score, so scores still fall down the list."""
        holding = [h.state for h in hits if asof.status_at(h.state, point.event_time) == "active"]
        if len(holding) < 2:
            return hits
        # who vouched for a label is kept by the current model only (a later confirmation by a
        # person can move it; the label at the point is the state's own)
        vouched = {
            m: row.confirmed_via for m, row in mem.load_many(self.storage.conn, [s.memory_id for s in holding]).items()
        }
        members = [
            (
                Side(
                    memory_id=s.memory_id,
                    source_type=s.source_type,
                    protection=s.protection,
                    event_time=s.event_time,
                    confidence=s.confidence,
                    recorded_at=s.recorded_at,
                    confirmed_via=vouched.get(s.memory_id, ""),
                ),
                [((s.workspace, c.key), c.kind, c.value_norm) for c in extract_claims(s.content, s.subject)],
            )
            for s in holding
        ]
        leader_of = set_leaders(members)
        if not leader_of:
            return hits
        by_id = {h.state.memory_id: h for h in hits}
        ranked = leaders_first_scored([(h.state.memory_id, h.score) for h in hits], leader_of)
        return [by_id[m] if by_id[m].score == score else by_id[m]._replace(score=score) for m, score in ranked]

    def read_as_of(
        self, memory_id: int, *, as_of_event_time: str | None, as_of_recorded: str | int | None
    ) -> dict[str, Any]:
        with self.storage.snapshot():
            point = self._point(as_of_event_time, as_of_recorded)
            state = asof.state_at(self.storage.store.conn, memory_id, point.position)
            if state is None:
                if conv.working_by_id(self.storage.conn, memory_id) is not None:
                    raise NotFound(
                        f"memory {memory_id} is a working note: it has no time-travel states (read it without "
                        "an as-of point)",
                        field="memory_id",
                    )
                raise _not_yet_recorded(memory_id, as_of_recorded, point.position)
            self.workspaces.check_workspace(state.workspace)
            status = asof.status_at(state, point.event_time)
            if status is None:
                raise NotFound(
                    f"memory {memory_id} was not yet valid at {point.event_time} (valid from {state.event_time})",
                    field="memory_id",
                    valid_from=state.event_time,
                )
            view = memory_view(state, conflict_ids=[], status=status, detail=True)
            # the time-travel states are long-term memories; what only the current model keeps
            # (retired_by, retracts, status_reason, support, last_stated) is not known as of a point
            view.update(
                supersedes=asof.supersedes_at(self.storage.store.conn, memory_id, point.position),
                sections=[],
                tier="long",
            )
        return {"ok": True, "memory": view, "as_of": self._point_view(point)}

    # -- history -----------------------------------------------------------------------------
    def history(self, memory_id: int, *, limit: int = HISTORY_PAGE, cursor: str | None = None) -> dict[str, Any]:
        """Every version with the events behind it: who, when, and by which rule (oldest first).
        A working note has no time-travel states: its versions are folded from its own stream."""
        after = paging.key_of(paging.decode("history", {"memory_id": memory_id}, cursor)) or 0
        conn = self.storage.store.conn
        with self.storage.snapshot():
            ids = StreamIds(conn)
            first = asof.state_at(conn, memory_id, self.storage.store.last_position())
            if first is not None:
                self.workspaces.check_workspace(first.workspace)
                versions = self._versions(memory_id, ids)
            else:
                note = self._working_note(memory_id)
                self.workspaces.check_workspace(note.workspace)
                versions = _note_versions(note, audit_model.stream_events(conn, note.stream_id), ids)
        for prior, version in itertools.pairwise(versions):  # what a page's first version changed too
            version["changed_from"] = {f: prior[f] for f in VERSION_FIELDS if version[f] != prior[f]}
        rest = [v for v in versions if v["version"] > after]
        page, more = rest[:limit], len(rest) > limit
        return {
            "ok": True,
            "memory_id": memory_id,
            "versions": page,
            "has_more": more,
            "next_cursor": paging.encode("history", {"memory_id": memory_id}, page[-1]["version"]) if more else None,
        }

    def _working_note(self, memory_id: int) -> conv.WorkingNote:
        """The working note ``memory_id`` names, which has no time-travel states; else no memory."""
        note = conv.working_by_id(self.storage.conn, memory_id)
        if note is None:
            raise NotFound(f"no memory {memory_id}", field="memory_id")
        return note

    def _versions(self, memory_id: int, ids: StreamIds) -> list[dict[str, Any]]:
        """A long-term memory's versions from its time-travel states, each with its events."""
        conn = self.storage.store.conn
        states = [asof.state_at(conn, memory_id, p) for p in audit_model.state_positions(conn, memory_id)]
        events = audit_model.memory_events(conn, memory_id)
        by_position = {ev.position: ev for _, ev in events}
        versions: list[dict[str, Any]] = []
        for state in states:
            assert state is not None
            if versions and versions[-1]["version"] == state.version:
                versions[-1].update(valid_to=state.valid_to)  # a successor's time was corrected
                continue
            origin = by_position.get(state.known_from)
            versions.append(
                {
                    "version": state.version,
                    "content": state.content,
                    "subject": state.subject,
                    "tags": list(state.tags),
                    "event_time": state.event_time,
                    "valid_to": state.valid_to,
                    "recorded_at": origin.recorded_at if origin else state.recorded_at,
                    "actor": origin.actor if origin else "",
                    "status": state.status,
                    "source_type": state.source_type,
                    "protection": state.protection,
                    "confidence": state.confidence,
                    "superseded_by": state.superseded_by,
                    "position": state.known_from,
                    "events": [],
                }
            )
        for role, ev in events:
            _owner(versions, ev.position)["events"].append(_event_view(ev, role, ids))
        return versions

    # -- compare's two sides -----------------------------------------------------------------
    def compare_sides(self, left_id: int, right_id: int) -> dict[str, Any]:
        """``compare``'s ``state_path`` and ``ref_chain``, each ``{"left": …, "right": …}``. The
        caller has checked both memories' workspaces; a linked memory outside the caller's scope
        is left out of a chain."""
        conn = self.storage.store.conn
        with self.storage.snapshot():
            ids = StreamIds(conn)
            return {
                "state_path": {"left": self._state_path(left_id, ids), "right": self._state_path(right_id, ids)},
                "ref_chain": {"left": self._ref_chain(left_id, ids), "right": self._ref_chain(right_id, ids)},
            }

    def _state_path(self, memory_id: int, ids: StreamIds) -> list[dict[str, Any]]:
        """The memory's status changes in log order: the status, and the event that set it with
        its rule (when a verdict decided it), actor, time and position."""
        conn = self.storage.store.conn
        by_position = {ev.position: (role, ev) for role, ev in audit_model.memory_events(conn, memory_id)}
        path: list[dict[str, Any]] = []
        for position in audit_model.state_positions(conn, memory_id):
            state = asof.state_at(conn, memory_id, position)
            if state is None or (path and path[-1]["status"] == state.status):
                continue
            step: dict[str, Any] = {"status": state.status, "position": position}
            found = by_position.get(position)
            if found is not None:
                view = _event_view(found[1], found[0], ids)
                step.update(type=view["type"], actor=view["actor"], recorded_at=view["recorded_at"])
                step.update({k: view[k] for k in ("rule", "reason") if k in view})
                by = view["payload"].get("by_id") or view["payload"].get("winner_id")
                if by is not None and by != memory_id:
                    step["by_id"] = by
            path.append(step)
        return path

    def _ref_chain(self, memory_id: int, ids: StreamIds) -> list[dict[str, Any]]:
        """Memories linked to this one by reference, retraction or supersession, breadth first up
        to ``REF_CHAIN_LEVELS`` links away: ``{memory_id, relation, of, level}`` says that
        ``of`` (the start, or a memory found before) ``relation`` ``memory_id``."""
        conn = self.storage.store.conn
        strict = self.settings.isolation == "strict"
        scope = set(self.workspaces.workspace_scope(self.settings.workspace)) if strict else None
        seen, frontier, chain = {memory_id}, [memory_id], []
        for level in range(1, REF_CHAIN_LEVELS + 1):
            nxt: list[int] = []
            for current in frontier:
                for relation, other in _links(conn, current, ids):
                    if other in seen:
                        continue
                    row = mem.by_id(conn, other)
                    if row is None or (scope is not None and row.workspace not in scope):
                        continue
                    seen.add(other)
                    nxt.append(other)
                    chain.append({"memory_id": other, "relation": relation, "of": current, "level": level})
            frontier = nxt
        return chain

    # -- timeline ----------------------------------------------------------------------------
    def timeline(
        self,
        subject: str | None = None,
        memory_id: int | None = None,
        *,
        as_of_recorded: str | int | None = None,
        limit: int = TIMELINE_MAX,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Validity intervals over event time, by subject or along a memory's supersession chain."""
        if (subject is None) == (memory_id is None):
            raise InvalidInput("give either subject or memory_id", field="subject")
        if subject is not None and not subject.strip():  # it listed every memory stored without one
            raise InvalidInput(
                "subject must not be blank: give the subject memories were stored under", field="subject"
            )
        limit = max(1, min(limit, TIMELINE_MAX))
        request = {"subject": subject, "memory_id": memory_id, "as_of_recorded": as_of_recorded}
        page = paging.decode("timeline", request, cursor)
        offset = paging.offset_of(page)
        conn = self.storage.store.conn
        with self.storage.snapshot():  # later pages read what the ledger knew at the first one
            point = self._point(None, page.bound if page.bound is not None else as_of_recorded)
            wanted = offset + limit + 1
            scope, _ = self.workspaces.find_scope(None)  # strict: the caller's workspace only
            if memory_id is not None:
                states = asof.chain_at(conn, memory_id, point.position, wanted)
                if not states:
                    if conv.working_by_id(self.storage.conn, memory_id) is not None:  # as read as of a point says
                        raise NotFound(
                            f"memory {memory_id} is a working note: it has no validity intervals (read it, or "
                            "its history)",
                            field="memory_id",
                        )
                    if as_of_recorded is not None:  # as read says it: the ledger did not hold it then
                        raise _not_yet_recorded(memory_id, as_of_recorded, point.position)
                    raise NotFound(f"no memory {memory_id}", field="memory_id")
                # another workspace's memory is refused, as read and history refuse it (an empty
                # answer told that the id exists)
                own = next((s for s in states if s.memory_id == memory_id), states[0])
                self.workspaces.check_workspace(own.workspace)
                if scope is not None:
                    states = [s for s in states if s.workspace in scope]
            else:
                states = asof.subject_at(conn, subject or "", point.position, wanted, scope)
        # Counted after the scope: has_more never tells of another workspace's intervals.
        more = len(states) > offset + limit
        states = states[offset : offset + limit]
        intervals = [
            {
                "memory_id": s.memory_id,
                "valid_from": s.event_time,
                "valid_to": s.valid_to,
                "status": s.status,
                "superseded_by": s.superseded_by,
                "ended": s.ended,
                "subject": s.subject,
                "content": s.content[:200],
            }
            for s in states
        ]
        return {
            "ok": True,
            "intervals": intervals,
            "has_more": more,
            "next_cursor": paging.encode("timeline", request, offset + limit, point.position) if more else None,
            "as_of": self._point_view(point),
        }

    # -- audit -------------------------------------------------------------------------------
    def audit(
        self,
        since: str | None = None,
        until: str | None = None,
        memory_id: int | None = None,
        actor: str | None = None,
        type: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
        *,
        client: str | None = None,
        workspace: str | None = None,
        conflict_id: int | None = None,
        before_position: int | None = None,
    ) -> dict[str, Any]:
        """Events newest first, filtered by recorded time range, memory, actor, client, workspace,
        event type or conflict; ``before_position`` ends the log there (the console's as-of)."""
        limit = max(1, min(int(limit), AUDIT_MAX))
        for name, value, give in (("actor", actor, "client:agent, or a client alone"), ("client", client, "its name")):
            if value is not None and not value.strip():  # it matched no event: "no events match"
                raise InvalidInput(f"{name} must not be blank: give {give}", field=name)
        request = {
            "since": since,
            "until": until,
            "memory_id": memory_id,
            "actor": actor,
            "type": type,
            "client": client,
            "workspace": workspace,
            "conflict_id": conflict_id,
            "before_position": before_position,
        }
        before = paging.key_of(paging.decode("audit", request, cursor))
        since, until = clock.time_range(since, until)
        query = audit_model.AuditQuery(
            before=before,
            since=since,
            until=until,
            actor=actor,
            client=client,
            workspace=workspace,
            before_position=before_position,
            types=stored_names(type) if type is not None else None,  # either name of a renamed type
            memory_id=memory_id,
        )
        conn = self.storage.store.conn
        with self.storage.snapshot():
            if conflict_id is not None:
                row = conflicts_model.by_id(conn, conflict_id)
                if row is None:
                    raise NotFound(f"no conflict {conflict_id}", field="conflict_id")
                query.stream_id = row.stream_id
            if self.settings.isolation == "strict":  # events of other workspaces stay invisible
                query.workspaces = tuple(self.workspaces.workspace_scope(self.settings.workspace))
            if memory_id is not None and asof.state_at(conn, memory_id, self.storage.store.last_position()) is None:
                # a working note has no time-travel links: its events are those of its own stream
                note = self._working_note(memory_id)
                # (a working note is in no conflict: with a conflict_id, a stream nothing has)
                query.memory_id = None
                query.stream_id = note.stream_id if query.stream_id in (None, note.stream_id) else ""
            found = audit_model.audit_events(conn, query, limit + 1)
        ids = StreamIds(conn)
        events = [_audit_view(ev, ids) for ev in found[:limit]]
        more = len(found) > limit
        return {
            "ok": True,
            "events": events,
            "has_more": more,
            "next_cursor": paging.encode("audit", request, events[-1]["position"]) if more else None,
        }

    # -- retention ---------------------------------------------------------------------------
    def archive(
        self,
        *,
        dry_run: bool = False,
        older_than_days: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Move retired/superseded memories inactive for longer than the retention period out of
        the hot read model (status ``archived``). The events stay: time travel still sees them."""
        days = self.settings.retention_days if older_than_days is None else older_than_days
        now = clock.now()
        cutoff = archive_cutoff(now, days)  # refuses a negative period
        with self.storage.snapshot():
            total = mem.count_archivable(self.storage.store.conn, cutoff)
        if dry_run:
            return {"ok": True, "dry_run": True, "candidates": total, "cutoff": cutoff, "retention_days": days}
        archived, after = 0, 0

        def work() -> tuple[int, int, int]:
            candidates = mem.archivable(self.storage.store.conn, cutoff, after=after, limit=ARCHIVE_BATCH)
            workspaces = {c.stream_id: c.workspace for c in candidates}
            decision = decide_archive(candidates, cutoff)
            self.storage.runner.append(
                [
                    NewEvent(
                        data=event,
                        stream_id=stream,
                        event_time=now,
                        actor=self.settings.actor,
                        workspace=workspaces[stream],
                    )
                    for stream, event in decision
                ]
            )
            return len(decision), len(candidates), candidates[-1].memory_id if candidates else after

        while True:  # bounded transactions; each re-reads the status inside its write lock
            done, count, after = self.storage.transaction(work)
            archived += done
            if progress:
                progress(archived, max(total, archived))
            if count < ARCHIVE_BATCH:
                break
        return {"ok": True, "dry_run": False, "archived": archived, "cutoff": cutoff, "retention_days": days}


def _owner(versions: list[dict[str, Any]], position: int) -> dict[str, Any]:
    """The version an event at ``position`` belongs to: the latest one known by then."""
    return next((v for v in reversed(versions) if v["position"] <= position), versions[0])


# What a working note's version shows of its fields, and the events that make a new version
_NOTE_FIELDS = ("content", "subject", "tags", "source_type", "confidence")
_NOTE_VERSIONS = ("WorkingNoted", "WorkingRevised")


def _note_versions(note: conv.WorkingNote, events: list[StoredEvent], ids: StreamIds) -> list[dict[str, Any]]:
    """A working note's versions folded from its stream: ``WorkingNoted`` is version 1 and each
    ``WorkingRevised`` the next, with the fields it changed (a revision's absent fields keep
    their value), as the read model folds them (``projections.conversations``), so no text it
    once held drops out of its history. The other events (a repeat, a signal, the promotion)
    belong to the version they touched. An erasure is a version of its own, the last, as a
    long-term memory's ``Erased`` is: ``erased`` from then on, valid until the erasure; the one
    before it keeps the status the note had. Every other version but the last was active; the
    last has the note's status now."""
    versions: list[dict[str, Any]] = []
    for ev in events:
        if current_type(ev.type) == "Erased" and versions:
            versions.append(
                {
                    **versions[-1],
                    "version": len(versions) + 1,
                    "valid_to": ev.event_time,
                    "recorded_at": ev.recorded_at,
                    "actor": ev.actor,
                    "status": conv.ERASED,
                    "position": ev.position,
                    "events": [],
                }
            )
        elif current_type(ev.type) in _NOTE_VERSIONS:
            data = ev.data
            changed = {f: getattr(data, f) for f in _NOTE_FIELDS if getattr(data, f, None) is not None}
            base = versions[-1] if versions else {"event_time": ev.event_time}
            versions.append(
                {
                    "version": len(versions) + 1,
                    **{f: base.get(f) for f in _NOTE_FIELDS},
                    **changed,
                    "tags": list(changed.get("tags", base.get("tags") or ())),
                    "event_time": base["event_time"],
                    "valid_to": None,
                    "recorded_at": ev.recorded_at,
                    "actor": ev.actor,
                    "tier": "working",
                    "status": "active",
                    "protection": "normal",
                    "superseded_by": None,
                    "position": ev.position,
                    "events": [],
                }
            )
        if versions:
            _owner(versions, ev.position)["events"].append(_event_view(ev, "stream", ids))
    if versions and versions[-1]["status"] != conv.ERASED:
        versions[-1]["status"] = {conv.WORKING: "active"}.get(note.state, note.state)
    elif len(versions) > 1 and any(current_type(e["type"]) == "Promoted" for e in versions[-2]["events"]):
        versions[-2]["status"] = conv.PROMOTED  # promoted, then erased
    return versions


def _links(conn: Any, memory_id: int, ids: StreamIds) -> list[tuple[str, int]]:
    """``(relation, memory_id)`` of every memory one link from ``memory_id``: what it refers to
    (``ref``) or retracts (``retracts``), what it supersedes, and who retracted or superseded it."""
    row = mem.by_id(conn, memory_id)
    if row is None:
        return []
    out: list[tuple[str, int]] = []
    for role, ev in audit_model.memory_events(conn, memory_id):
        if role == "stream" and current_type(ev.type) == "MemoryRecorded":
            payload = ids.payload(_payload(ev))
            if isinstance(payload.get("ref_id"), int):
                out.append(("retracts" if payload.get("retracts") else "ref", payload["ref_id"]))
            break
    out += [("retracts", m) for m in mem.retracts(conn, memory_id)]
    out += [("supersedes", m) for m in mem.supersedes(conn, memory_id)]
    if row.retired_by is not None:
        out.append(("retracted_by", row.retired_by))
    if row.superseded_by is not None:
        out.append(("superseded_by", row.superseded_by))
    return list(dict.fromkeys(out))


def _payload(ev: StoredEvent) -> dict[str, Any]:
    """The event's fields as stored, and who authorised it even where that is the type's default
    (an agent's confirm or unlock stores no ``authorization``: ``agent_asserted`` is the default)."""
    try:
        data = ev.data
        payload = dict(msgspec.to_builtins(data))
    except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
        return dict(json.loads(ev.payload))
    said = getattr(data, "authorization", "")
    if said and "authorization" not in payload:
        payload["authorization"] = said
    return payload


def _type_view(ev: StoredEvent) -> dict[str, str]:
    """The type by its current name (the payload is shown upcast too) and, for a row written
    under a type's old name, that name as stored (``stored_type``)."""
    current = current_type(ev.type)
    return {"type": current} if current == ev.type else {"type": current, "stored_type": ev.type}


def _audit_view(ev: StoredEvent, ids: StreamIds) -> dict[str, Any]:
    return {
        "position": ev.position,
        **_type_view(ev),
        "stream_id": ev.stream_id,
        **ids.owner(ev.stream_id),
        "event_time": ev.event_time,
        "recorded_at": ev.recorded_at,
        "actor": ev.actor,
        "workspace": ev.workspace,
        "event_id": ev.event_id,
        "hash": ev.hash,
        "prev_hash": ev.prev_hash,
        "payload": ids.payload(_payload(ev)),
    }


def _event_view(ev: StoredEvent, role: str, ids: StreamIds) -> dict[str, Any]:
    """A history entry: the event, its role for this memory and the rule behind it if any."""
    # A version shows its content once; a restatement's words are its own (ledger.restatement).
    drop = _COMPACT_DROP if ev.type != "Restated" else ("metadata",)
    payload = ids.payload({k: v for k, v in _payload(ev).items() if k not in drop})
    view: dict[str, Any] = {
        "position": ev.position,
        **_type_view(ev),
        "role": role,
        "actor": ev.actor,
        "recorded_at": ev.recorded_at,
        "event_time": ev.event_time,
        "payload": payload,
    }
    verdict = payload.get("verdict") if isinstance(payload.get("verdict"), dict) else {}
    rule = payload.get("rule") or verdict.get("rule") or verdict.get("reasons")
    if rule:
        view["rule"] = rule
    if payload.get("reason"):
        view["reason"] = payload["reason"]
    if payload.get("authorization"):
        view["authorization"] = payload["authorization"]
    if payload.get("change"):  # one event of a change applied (or undone) as a unit
        view["change_id"] = payload["change"]
    return view


def _not_yet_recorded(memory_id: int, as_of_recorded: str | int, position: int) -> NotFound:
    """No state of ``memory_id`` in the log up to ``position``. A time names the log as recorded
    by then: said as the time asked (it said "at position 0" of a date a person gave)."""
    by = (
        f" as recorded by {clock.parse_time(as_of_recorded, field='as_of_recorded')} (the log up to "
        f"position {position})"
        if isinstance(as_of_recorded, str) and not ascii_digits(as_of_recorded)
        else f" at position {position}"
    )
    return NotFound(f"memory {memory_id} was not in the ledger{by}", field="memory_id")
