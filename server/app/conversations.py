"""Conversations and the working tier (a service of the facade).

A working memory (``remember`` with ``tier: "working"``) is logged like every write
(``WorkingNoted``) but kept out of claims, conflicts, notices, vectors and other conversations:
it lives in its conversation's working set (``projections.conversations``). ``reinforce`` records
a signal (``Reinforced``); when :func:`ledger.promotion.assess` holds, the same transaction
records the long-term memory — through ``remember``'s own decision, so it meets claims and
conflicts then — and a ``Promoted`` event with the score, the signals and the rule.

The periodic pass, use counts and cold memories are :mod:`server.app.upkeep`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from fact_ledger.ledger import clock
from fact_ledger.ledger.decide import RememberCommand, effective_changes, written_fields
from fact_ledger.ledger.errors import InvalidInput, NotFound, VersionConflict
from fact_ledger.ledger.facts import Decision
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.events import (
    AUTH_AGENT,
    AUTH_USER,
    DuplicateSighted,
    MemoryRecorded,
    Promoted,
    PromotionSignal,
    Reinforced,
    Restated,
    WorkingNoted,
    WorkingRepeated,
    WorkingRevised,
)
from fact_ledger.ledger.normalize import content_hash, normalize_text
from fact_ledger.ledger.promotion import DEFAULT_RULE, SIGNALS, USER_RULE, Signal, assess
from fact_ledger.ledger.trust import default_confidence
from fact_ledger.ledger.working import match_score, select_set
from fact_ledger.projections import conversations as conv
from fact_ledger.projections import memories as mem
from fact_ledger.projections.conversations import WorkingNote
from fact_ledger.server.app import credentials
from fact_ledger.server.app.collisions import Collisions
from fact_ledger.server.app.service import Service
from fact_ledger.server.app.storage import BackedUp, Storage
from fact_ledger.server.app.upkeep import Upkeep
from fact_ledger.server.app.workspaces import Workspaces
from fact_ledger.server.app.writes import AGENT_ASSERTED_NOTICE, Unchanged

# what a working note records of remember's fields: any other one said is a long-term act
_NOTE_FIELDS = frozenset(WorkingNoted.__struct_fields__)
_REVISABLE = ("content", "subject", "tags", "confidence", "metadata")  # what a WorkingRevised may change


def working_view(row: WorkingNote, *, score: float | None = None) -> dict[str, Any]:
    """A working memory as answers show it (``tier: "working"``)."""
    view: dict[str, Any] = {
        "memory_id": row.memory_id,
        "tier": "working",
        "session_id": row.session,
        "content": row.content,
        "subject": row.subject,
        "tags": list(row.tags),
        "source_type": row.source_type,
        "confidence": row.confidence,
        "status": {"working": "active"}.get(row.state, row.state),
        "sticky": row.sticky,
        "turn": row.turn,
        "last_turn": row.last_turn,
        "event_time": row.event_time,
        "recorded_at": row.recorded_at,
        "version": row.version,
        "valid_to": row.valid_to,  # erased: until the erasure, as a long-term memory's read says
    }
    if score is not None:
        view["score"] = round(score, 4)
    return {k: v for k, v in view.items() if v is not None and v != [] and v != ""}


class Conversations(Service):
    """The working tier, conversation filters, promotion, cooling and use counts."""

    def __init__(self, storage: Storage, workspaces: Workspaces, collisions: Collisions, writes: Any) -> None:
        super().__init__(storage, workspaces)
        self.collisions = collisions
        self.writes = writes  # server.app.writes.Writes: secrets, event times, exact duplicates
        self.upkeep = Upkeep(storage, workspaces)

    # -- the working tier ------------------------------------------------------------------------
    def note(
        self,
        content: str,
        *,
        session_id: str,
        turn: int | None,
        sticky: bool,
        event_time: str | None = None,
        workspace: str | None = None,
        on_secret: str = "refuse",
        authorization: str = "",
        **given: Any,
    ) -> dict[str, Any]:
        """``remember`` into the working tier: a new note, or an exact repeat absorbed by the set.
        ``given``: the rest of ``remember``'s fields; one ``WorkingNoted`` does not hold (a claim,
        a retraction, any field only a long-term memory keeps) is refused when it says something."""
        long_term = sorted(k for k, v in given.items() if v and k not in _NOTE_FIELDS)
        if long_term:
            raise InvalidInput(f"{long_term[0]} is a long-term act: a working memory takes none", field=long_term[0])
        if event_time is not None:
            event_time = self.writes._plausible(event_time)
        target = self.workspaces.write_workspace(workspace)
        fields = {"subject": "", "tags": [], "source_ref": "", "metadata": None} | {
            k: v for k, v in given.items() if k in _NOTE_FIELDS
        }
        clean, masked = self.writes._without_secrets({"content": content, **fields}, lambda: target, on_secret)
        clean = written_fields(clean)
        if clean.get("confidence") is None:  # as a direct write of it would have: promoted, it keeps it
            clean["confidence"] = default_confidence(clean.get("source_type") or "agent_generated", authorization)
        digest = content_hash(clean["content"])
        subject_norm = normalize_text(clean["subject"])
        stream = uuid7()
        before: list[WorkingNote] = []

        def decide() -> tuple[Decision, str, str]:
            current = conv.working_set(self.conn, session_id, (target,), self.settings.working_set_size)
            before[:] = current
            for row in current:
                if row.content_hash == digest and normalize_text(row.subject) == subject_norm:
                    return (
                        [(row.stream_id, WorkingRepeated(memory=row.stream_id, turn=turn))],
                        clock.now(),
                        target,
                    )
            note = WorkingNoted(
                memory=stream,
                session=session_id,
                content_hash=digest,
                turn=turn,
                sticky=sticky,
                authorization=authorization,
                **clean,
            )
            return [(stream, note)], event_time or clock.now(), target

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        head = outcome.events[0]
        repeated = head.type == "WorkingRepeated"
        touched = {"memory_id": head.position, "version": 1, "sticky": sticky} if not repeated else {}
        mine, after = self._set_after(before, head.stream_id, head.position, touched)
        result: dict[str, Any] = {
            "ok": True,
            "memory_id": mine["memory_id"],
            "version": mine["version"],
            "status": "active",
            "tier": "working",
            "session_id": session_id,
            "workspace": target,
            **masked,
        }
        if repeated:
            result["duplicate_of"] = mine["memory_id"]
        evicted = [r.memory_id for r in before if r.memory_id not in after]
        if mine["memory_id"] not in after:  # sticky notes fill the set: this one never entered it
            result["in_set"] = False
            result["notices"] = [
                f"the working set of {session_id} is full of sticky notes: #{mine['memory_id']} was left out of "
                "it at once (working_set_size sets its room)"
            ]
        if evicted:
            result["evicted"] = evicted
        if clean.get("source_type") == "user_confirmed" and authorization != AUTH_USER:
            # as a long-term write says it (writes.py): the label is the agent's word, not the user's
            result.update(authorization=AUTH_AGENT, notices=[AGENT_ASSERTED_NOTICE, *result.get("notices", [])])
        return result

    def _set_after(
        self, before: list[WorkingNote], stream: str, position: int, new: dict[str, Any]
    ) -> tuple[dict[str, Any], set[int]]:
        """The conversation's set after one write touched the note ``stream`` at ``position``
        (``new``: its fields when it was not a note of ``before``), from the set before it
        (:func:`ledger.working.select_set`): no read. Returns the touched note and the set's ids."""
        members = {
            r.stream_id: {"memory_id": r.memory_id, "version": r.version, "sticky": r.sticky, "touched": r.touched}
            for r in before
        }
        members.setdefault(stream, new)["touched"] = position
        after = {r["memory_id"] for r in select_set(list(members.values()), self.settings.working_set_size)}
        return members[stream], after

    def working(self, session_id: str) -> dict[str, Any]:
        """``memory_review working``: the conversation's working set, most recently touched first."""
        scope, _ = self.workspaces.find_scope(None)
        with self.storage.snapshot():
            rows = conv.working_set(self.conn, session_id, scope, self.settings.working_set_size)
            views = []
            for row in rows:
                view = working_view(row)
                view["score"] = assess(conv.signals_of(self.conn, row.memory_id)).score
                views.append(view)
        return {"ok": True, "session_id": session_id, "limit": self.settings.working_set_size, "memories": views}

    def working_hits(self, query: str, session_id: str, scope: tuple[str, ...] | None) -> list[dict[str, Any]]:
        """The conversation's working notes that answer ``query``, best first (lexical: working
        notes are not embedded; see ``ledger.working``)."""
        rows = conv.working_set(self.conn, session_id, scope, self.settings.working_set_size)
        scored = []
        for row in rows:
            text = " ".join((row.subject, row.content, " ".join(list(row.tags))))
            score = match_score(query, text)
            if score > 0:
                scored.append((score, row.touched, row))
        scored.sort(key=lambda s: (-s[0], -s[1]))
        return [working_view(row, score=score) for score, _, row in scored]

    def _working_row(self, memory_id: int, session_id: str | None = None) -> WorkingNote:
        """The working note a call acts on: refused when it was promoted, expired or erased, and
        hidden from another conversation (``session_id`` given and not the note's), as ``find``
        hides it."""
        row = conv.working_by_id(self.conn, memory_id)
        if row is not None and session_id and session_id != row.session:
            row = None  # another conversation's note: as if there were none
        if row is None:
            if mem.by_id(self.conn, memory_id) is not None:
                raise InvalidInput(
                    f"#{memory_id} is a long-term memory: only working memories take this", field="memory_id"
                )
            raise NotFound(_no_note(memory_id, session_id), field="memory_id")
        self.workspaces.check_workspace(row.workspace)
        if row.state == conv.PROMOTED:
            long_id = mem.memory_id_of(self.conn, row.promoted_to)
            raise InvalidInput(
                f"#{memory_id} was already promoted: it is long-term memory #{long_id}", field="memory_id"
            )
        if row.state == conv.EXPIRED:
            raise InvalidInput(f"#{memory_id} expired with its idle conversation (still in history)", field="memory_id")
        if row.state == conv.ERASED:
            raise InvalidInput(f"memory {memory_id} is erased", field="memory_id")
        return row

    def is_working(self, memory_id: int) -> bool:
        return conv.working_by_id(self.conn, memory_id) is not None

    def reinforce(self, memory_id: int, signal: str, *, session_id: str | None = None, turn: int) -> dict[str, Any]:
        """Record a signal; promote in the same transaction when ``ledger.promotion`` holds."""
        if signal not in SIGNALS:
            raise InvalidInput(f"signal must be one of {', '.join(SIGNALS)}", field="signal")
        credentials.refuse_in_names(session_id=session_id)  # stored on the signal, for good
        found: dict[str, Any] = {}

        def decide() -> tuple[Decision, str, str]:
            row = self._working_row(memory_id, session_id)
            signals = [*conv.signals_of(self.conn, memory_id), Signal(signal, turn)]
            verdict = assess(signals, DEFAULT_RULE)
            size = self.settings.working_set_size
            before = conv.working_set(self.conn, row.session, (row.workspace,), size)
            found.update(row=row, assessment=verdict, before=before)
            event = Reinforced(memory=row.stream_id, signal=signal, session=session_id or row.session, turn=turn)
            decision: Decision = [(row.stream_id, event)]
            if not verdict.promote:
                return decision, clock.now(), row.workspace
            counted = tuple(PromotionSignal(s.signal, s.turn, DEFAULT_RULE.weights[s.signal]) for s in verdict.counted)
            promotion = self._promotion(row, verdict.score, counted, DEFAULT_RULE.describe(), "")
            return decision + promotion, row.event_time, row.workspace

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        verdict = found["assessment"]
        result: dict[str, Any] = {
            "ok": True,
            "memory_id": memory_id,
            "tier": "working",
            "signal": signal,
            "score": verdict.score,
            "turns": verdict.turns,
            "needed": {"score": DEFAULT_RULE.threshold, "turns": DEFAULT_RULE.min_turns},
        }
        if verdict.promote:
            result.update(self._promoted_report(outcome.events, memory_id))
        else:  # the signal touched the note: one that had left the set comes back, and may push one out
            row, before = found["row"], found["before"]
            new = {"memory_id": row.memory_id, "version": row.version, "sticky": row.sticky}
            _, after = self._set_after(before, row.stream_id, outcome.events[0].position, new)
            evicted = [r.memory_id for r in before if r.memory_id not in after]
            if evicted:
                result["evicted"] = evicted
        return result

    def promote(self, memory_id: int, authorization: str = "") -> dict[str, Any]:
        """``memory_govern promote``: the user makes a working memory long-term at once."""

        def decide() -> tuple[Decision, str, str]:
            row = self._working_row(memory_id)
            verdict = assess(conv.signals_of(self.conn, memory_id), DEFAULT_RULE)
            counted = tuple(PromotionSignal(s.signal, s.turn, DEFAULT_RULE.weights[s.signal]) for s in verdict.counted)
            auth = authorization or AUTH_AGENT
            return self._promotion(row, verdict.score, counted, USER_RULE, auth), row.event_time, row.workspace

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        return {"ok": True, "memory_id": memory_id, **self._promoted_report(outcome.events, memory_id)}

    def _promotion(
        self, row: WorkingNote, score: int, signals: tuple[PromotionSignal, ...], rule: str, authorization: str
    ) -> Decision:
        """The long-term memory (``remember``'s decision: duplicates, claims, conflicts) and the
        ``Promoted`` event that names it, in that order (the event is then linked to it too)."""
        cmd = RememberCommand(
            content=row.content,
            subject=row.subject,
            tags=row.tags,
            source_type=row.source_type,
            confidence=row.confidence,
            event_time=row.event_time,
            workspace=row.workspace,
            source_ref=row.source_ref,
            metadata=row.metadata,
            authorization=authorization or row.authorization,
            recorded={"session": row.session, "turn": row.turn, "promoted_from": row.stream_id},
        )
        new_stream = uuid7()
        # a note that cancels an instruction retracts it, and one that said a value no longer holds
        # ends the long-term memory holding it, as remembering it long-term would
        # (ledger.cancellation, ledger.negation)
        cmd, target, denied = self.writes._cancellation_target(cmd)
        decision, _ = self.collisions.remember_decision(
            cmd, new_stream, target=target, cancelling=denied, duplicate=self.writes._find_duplicate(cmd)
        )
        stream, head = decision[0]
        # the memory it became, or the one that already said it (an exact repeat, a restatement)
        long_term = stream if isinstance(head, MemoryRecorded | DuplicateSighted | Restated) else new_stream
        promoted = Promoted(
            memory=row.stream_id,
            long_term=long_term,
            score=score,
            signals=signals,
            rule=rule,
            authorization=authorization,
        )
        return [*decision, (row.stream_id, promoted)]

    def _promoted_report(self, events: list[Any], memory_id: int) -> dict[str, Any]:
        promoted = next(e for e in events if e.type == "Promoted")
        long_id = mem.memory_id_of(self.conn, promoted.data.long_term)
        assert long_id is not None
        report = self.collisions.write_report(events, long_id, [])
        out: dict[str, Any] = {
            "tier": "long",
            "promoted": True,
            "promoted_to": long_id,
            "score": promoted.data.score,
            "rule": promoted.data.rule,
        }
        if any(e.type == "DuplicateSighted" for e in events):
            out["duplicate_of"] = long_id
        elif any(e.type == "Restated" for e in events):  # as remember answers the same text
            out["restatement_of"] = long_id
        out.update(self.writes._retracted(events))
        for key in ("conflicts", "conflicts_total", "near_duplicates", "superseded"):
            if key in report:
                out[key] = report[key]
        row = mem.by_id(self.conn, long_id)
        out["status"] = row.status if row is not None else "active"
        notices = list(report.get("notices", []))
        ids = ", ".join(f"#{c['conflict_id']}" for c in report.get("conflicts", ()))
        if out["status"] == "superseded":  # a later value settled the set it joined
            notices.insert(
                0, f"promoted to long-term #{long_id}: superseded on arrival, as a later value leads (conflict {ids})"
            )
        elif out["status"] == "retired":  # a denial said after the time it speaks of
            notices.insert(
                0,
                f"promoted to long-term #{long_id}: arrived late, stored retired (a later memory says its value "
                "no longer holds)",
            )
        elif ids and not report.get("superseded"):
            notices.insert(
                0, f"promoted to long-term #{long_id}: it now disagrees with long-term memory (conflict {ids})"
            )
        elif report.get("superseded"):
            done = ", ".join(f"#{m}" for m in report["superseded"])
            notices.insert(0, f"promoted to long-term #{long_id}: a later value, it supersedes {done}")
        if notices:
            out["notices"] = notices[:3]
        return out

    def update(
        self,
        memory_id: int,
        *,
        turn: int | None,
        changes: dict[str, Any],
        on_secret: str,
        expected_version: int | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """``update`` of a working memory: a ``WorkingRevised`` (it touches the note). A field a
        working note has none of (``event_time``) is refused, not dropped: the answer said
        "unchanged" while the caller meant a change; another conversation (``session_id``) does
        not see the note."""
        foreign = sorted(k for k, v in changes.items() if v is not None and k not in _REVISABLE)
        if foreign:
            raise InvalidInput(
                f"{foreign[0]} is a long-term field: a working note has none (promote it first)", field=foreign[0]
            )
        requested = {k: v for k, v in changes.items() if v is not None and k in _REVISABLE}
        texts = {k: v for k, v in requested.items() if k in ("content", "subject", "tags", "metadata")}
        masked: dict[str, Any] = {}

        def decide() -> tuple[Decision, str, str]:
            row = self._working_row(memory_id, session_id)
            # a revision made offline yields to another machine's later revision of its fields
            self.writes._not_overtaken(
                memory_id, set(requested), lambda seen: conv.revisions_after(self.conn, row.stream_id, seen)
            )
            if expected_version is not None and expected_version != row.version:
                raise VersionConflict(
                    f"memory {memory_id} is at version {row.version}, not {expected_version}",
                    field="expected_version",
                    current_version=row.version,
                )
            workspace = row.workspace
            clean, found = self.writes._without_secrets(texts, lambda: workspace, on_secret) if texts else ({}, {})
            masked.update(found)
            current = {
                "content": row.content,
                "subject": row.subject,
                "tags": list(row.tags),
                "confidence": row.confidence,
                "metadata": row.metadata,
            }
            fields = effective_changes(current, written_fields({**requested, **clean}))
            if not fields:  # as for a long-term memory: a change that changes nothing writes nothing
                raise Unchanged(row.version)
            if "content" in fields:
                fields["content_hash"] = content_hash(fields["content"])
            event = WorkingRevised(memory=row.stream_id, turn=turn, **fields)
            return [(row.stream_id, event)], clock.now(), row.workspace

        try:
            outcome = self._commit(decide)
        except Unchanged as same:
            return {"ok": True, "memory_id": memory_id, "version": same.version, "tier": "working", "unchanged": True}
        if isinstance(outcome, BackedUp):
            return outcome.result
        row = conv.working_by_id(self.conn, memory_id)
        assert row is not None
        return {"ok": True, "memory_id": memory_id, "version": row.version, "tier": "working", **masked}

    def read(self, memory_id: int, session_id: str | None = None) -> dict[str, Any] | None:
        """``read`` of a working memory (None: not one); another conversation's is not found."""
        with self.storage.snapshot():
            row = conv.working_by_id(self.conn, memory_id)
            if row is None:
                return None
            if session_id and session_id != row.session:
                raise NotFound(_no_note(memory_id, session_id), field="memory_id")
            self.workspaces.check_workspace(row.workspace)
            view = working_view(row)
            view["metadata"] = row.metadata
            view["workspace"] = row.workspace
            if row.status_reason:  # erased: the erasure's reason, as an erased long-term memory's read gives
                view["status_reason"] = row.status_reason
            view["signals"] = [msgspec.to_builtins(s) for s in conv.signals_of(self.conn, memory_id)]
            view["score"] = assess(conv.signals_of(self.conn, memory_id)).score
            if row.promoted_to:
                view["promoted_to"] = mem.memory_id_of(self.conn, row.promoted_to)
        return {"ok": True, "memory": view}

    def long_term_fields(self, memory_id: int, stream_id: str) -> dict[str, Any]:
        """What ``read`` adds to a long-term memory: its tier, its conversation and turn, and the
        working memory it was promoted from."""
        out: dict[str, Any] = {"tier": "long"}
        session = conv.sessions_of(self.conn, [memory_id]).get(memory_id)
        if session is not None:
            out["session_id"], turn = session
            if turn is not None:
                out["turn"] = turn
        origin = conv.promoted_from(self.conn, stream_id)
        if origin is not None:
            out["promoted_from"] = origin
        return out

    # -- conversations in find ------------------------------------------------------------------
    def sessions_of(self, memory_ids: list[int]) -> dict[int, tuple[str, int | None]]:
        return conv.sessions_of(self.conn, memory_ids)

    # -- use, cooling, expiry (server/app/upkeep.py) --------------------------------------------
    def used(self, memory_ids: list[int], *, maybe_cold: bool = True) -> None:
        self.upkeep.used(memory_ids, maybe_cold=maybe_cold)

    def flush_uses(self) -> None:
        self.upkeep.flush_uses()

    def sweep(self, *, dry_run: bool = False, now: str | None = None) -> dict[str, Any]:
        return self.upkeep.sweep(dry_run=dry_run, now=now)

    def close(self) -> None:
        self.upkeep.flush_uses()


def _no_note(memory_id: int, session_id: str | None) -> str:
    """Not found, said of the conversation asked about when one was named (another
    conversation's note is hidden as if it did not exist, whether it does or not)."""
    return f"no memory {memory_id} in conversation {session_id!r}" if session_id else f"no memory {memory_id}"
