"""Writing memories: ``remember`` and ``update`` (a service of the facade).

Every write follows docs/design.md's write path: the storage seam opens ``BEGIN IMMEDIATE`` → the
``decide`` closure reads the state the decision needs → pure decision in ``ledger.decide`` (claims,
collisions and near-duplicates through the governance service) → append + inline projections →
commit → compact result with docs/contract.md's keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from fact_ledger.ledger import clock
from fact_ledger.ledger.cancellation import (
    MAX_CANDIDATES,
    MAX_MATCHES,
    Target,
    cancelled_words,
    find,
    holds_other_instructions,
    names_one_occurrence,
    recurs,
)
from fact_ledger.ledger.decide import RememberCommand
from fact_ledger.ledger.duplicates import duplicate_key
from fact_ledger.ledger.errors import Locked, Unauthorized, VersionConflict
from fact_ledger.ledger.facts import Decision, MemoryFacts, check_current, check_writable
from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import AUTH_AGENT, AUTH_USER, MemoryRecorded, MemoryUpdated
from fact_ledger.ledger.negation import denies_only, ended_claims, holds_only
from fact_ledger.ledger.remember import RememberState
from fact_ledger.ledger.update import decide as decide_update
from fact_ledger.projections import claims as claims_model
from fact_ledger.projections import memories as mem
from fact_ledger.projections.search.queries import holding_all
from fact_ledger.server.app import credentials
from fact_ledger.server.app.collisions import Collisions
from fact_ledger.server.app.service import Service
from fact_ledger.server.app.storage import BackedUp, Storage
from fact_ledger.server.app.workspaces import Workspaces

AGENT_ASSERTED_NOTICE = (
    "user_confirmed kept as agent_asserted: not locked, ranked as the agent's word until the user confirms it"
)


CANCELLATION_NOTICE = (
    "reads as a cancellation of {n} active instruction(s), none retracted: "
    "retract one with ref_id + retracts (see retraction_candidates)"
)
ENDED_NOTICE = (
    "says {n} active memory(ies) no longer hold, none retracted: "
    "retract one with ref_id + retracts (see retraction_candidates)"
)


def in_conversation(decision: Decision, session_id: str | None, turn: int | None) -> Decision:
    """The decision with the conversation (``session_id``, ``turn``) stored on the memory's
    recorded or updated event, when the caller named one."""
    if not session_id and turn is None:
        return decision
    return [
        (stream, msgspec.structs.replace(ev, session=session_id or "", turn=turn))
        if isinstance(ev, MemoryRecorded | MemoryUpdated)
        else (stream, ev)
        for stream, ev in decision
    ]


def _ended_on_arrival(denial: MemoryFacts) -> str:
    return f"arrived late: stored retired, as memory #{denial.memory_id} (said later) says this value no longer holds"


class Unchanged(Exception):  # control flow: never leaves the facade
    """An update whose fields all equal the memory's (or a judgment the set's standing one repeats):
    nothing to write. ``version``: the memory's version (the standing judgment's id)."""

    def __init__(self, version: int) -> None:
        super().__init__("unchanged")
        self.version = version


def _candidates_report(cancelling: tuple[Target, ...], retracted: dict[str, list[int]]) -> dict[str, Any]:
    """A cancellation (or a denial of a value) that retracted nothing it matched answers with the
    memories it matched (protected, or more than one)."""
    if retracted or not cancelling:
        return {}
    notice = ENDED_NOTICE if cancelling[0].denied else CANCELLATION_NOTICE
    return {
        "retraction_candidates": [{"memory_id": t.memory_id, "content": t.content} for t in cancelling],
        "notices": [notice.format(n=len(cancelling))],
    }


class Writes(Service):
    """``remember`` and ``update`` over the storage seam."""

    def __init__(self, storage: Storage, workspaces: Workspaces, collisions: Collisions) -> None:
        super().__init__(storage, workspaces)
        self.collisions = collisions

    def remember(
        self,
        content: str,
        *,
        event_time: str | None = None,
        workspace: str | None = None,
        on_secret: str = "refuse",
        authorization: str = "",
        session_id: str | None = None,
        turn: int | None = None,
        **given: Any,
    ) -> dict[str, Any]:
        """A new memory. ``given``: the other fields of ``remember``'s edge model (subject, tags,
        source_type, confidence, source_ref, ref_id, retracts, claims, metadata, and any field
        added there), passed through to the command (:meth:`RememberCommand.of`) after the
        credential check, which reads every one of them."""
        if event_time is not None:
            event_time = self._plausible(event_time)
        clean, masked = self._without_secrets(
            {"content": content, **given}, lambda: self.workspaces.write_workspace(workspace), on_secret
        )
        cmd = RememberCommand.of(clean, event_time=event_time or clock.now(), authorization=authorization)
        new_stream = self.storage.new_stream_id()  # a replayed write keeps its own
        state = RememberState()

        def decide() -> tuple[Decision, str, str]:
            nonlocal cmd, state  # the workspace resolves under the write lock, with the aliases the decision reads
            cmd = msgspec.structs.replace(cmd, workspace=self.workspaces.write_workspace(workspace))
            target = self._memory(cmd.ref_id, "ref_id") if cmd.ref_id is not None else None
            command, cancelling = cmd, ()
            if cmd.ref_id is None:
                command, target, cancelling = self._cancellation_target(cmd)
            # one typed state, read once (projections/write_state.py), and one pure decision from it
            decision, state = self.collisions.remember_decision(
                command, new_stream, target=target, cancelling=cancelling, duplicate=self._find_duplicate(command)
            )
            return in_conversation(decision, session_id, turn), command.event_time, command.workspace

        def reply(events: list[StoredEvent]) -> dict[str, Any]:
            """The answer, from the state this write read and produced (inside its transaction)."""
            return self._remember_reply(events, cmd, state, masked)

        outcome = self._commit(decide, reply)
        if isinstance(outcome, BackedUp):
            return outcome.result
        answer: dict[str, Any] = outcome.reply
        return answer

    def _remember_reply(
        self, events: list[StoredEvent], cmd: RememberCommand, state: RememberState, masked: dict[str, Any]
    ) -> dict[str, Any]:
        retracted = self._retracted(events)
        reply = self._remember_answer(events, cmd, state, masked, retracted)
        target = state.target
        if cmd.retracts and target is not None and target.status != "active" and not retracted:
            # named, but already out of the current answers: the write links to it and retires nothing
            reply["notices"] = [*reply.get("notices", []), _already_inactive(target)]
        return reply

    def _remember_answer(
        self,
        events: list[StoredEvent],
        cmd: RememberCommand,
        state: RememberState,
        masked: dict[str, Any],
        retracted: dict[str, list[int]],
    ) -> dict[str, Any]:
        head = events[0]
        if head.type in ("DuplicateSighted", "Restated"):
            row = mem.by_stream(self.conn, head.stream_id)
            assert row is not None
            absorbed = "duplicate_of" if head.type == "DuplicateSighted" else "restatement_of"
            return {
                "ok": True,
                "memory_id": row.memory_id,
                "version": row.version,
                "status": row.status,
                absorbed: row.memory_id,
                **({"support": mem.support(self.conn, row.memory_id)[0]} if head.type == "Restated" else {}),
                "workspace": row.workspace,
                **retracted,
                **_candidates_report(state.cancelling, retracted),
                **masked,
            }
        result = {
            "ok": True,
            "memory_id": head.position,
            "version": 1,
            "status": "active",
            "workspace": cmd.workspace,
            **self.collisions.write_report(events, head.position, list(state.near)),
            **retracted,
            **_candidates_report(state.cancelling, retracted),
            **masked,
        }
        if state.denied_by is not None:  # stated as of a time before a denial of its value
            result.update(status="retired", notices=[*result.get("notices", []), _ended_on_arrival(state.denied_by)])
        if head.position in result.get("superseded", ()):  # policy auto_settle: a later value leads
            row = mem.by_id(self.conn, head.position)
            assert row is not None
            result.update(status=row.status, version=row.version)
        if cmd.source_type == "user_confirmed" and cmd.authorization != AUTH_USER:
            result.update(authorization=AUTH_AGENT, notices=[AGENT_ASSERTED_NOTICE, *result.get("notices", [])])
        return result

    def _without_secrets(
        self, fields: dict[str, Any], workspace: Callable[[], str], on_secret: str
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The write's fields with no credential in them (server/app/credentials.py): refused
        (``invalid_input`` naming kind and span, before anything is written), or masked with
        ``on_secret: "mask"`` (the answer's ``secrets_masked`` lists what was replaced); a workspace
        of ``secrets_allowed_workspaces`` keeps them as given. ``workspace`` gives the write's
        workspace, asked only when a credential is found (a remember resolves it under its lock)."""
        found = credentials.scan(fields)
        if not found or self.settings.secrets_allowed(workspace()):
            return fields, {}
        if on_secret != "mask":
            raise credentials.refusal(found)
        swaps: dict[str, str] = {}
        clean = credentials.masked(fields, swaps)
        self.storage.masked_texts(swaps)  # the backup records the call as it was stored
        return clean, {"secrets_masked": [s.to_dict() for s in found]}

    def _cancellation_target(
        self, cmd: RememberCommand
    ) -> tuple[RememberCommand, MemoryFacts | None, tuple[Target, ...]]:
        """A cancellation without ``ref_id`` retracts the one active instruction of its workspace
        that holds its words and gives no other instruction (``ledger.cancellation``); a statement
        that a value no longer holds ends the one active memory holding it (``ledger.negation``).
        Also returns what matched."""
        words = cancelled_words(cmd.content)
        if not words:
            return self._ended_target(cmd)
        runner = self.storage.runner
        if runner.unsettled():  # full text trails the log between reads: this decision reads it
            runner.settle_in_transaction()
        scope = self.workspace_scope(cmd.workspace) or (cmd.workspace,)
        target, matched, words = find(
            words, lambda w: [Target(*row) for row in holding_all(self.conn, w, scope, limit=MAX_MATCHES + 1)]
        )
        if names_one_occurrence(cmd.content) and (target is None or recurs(target.content)):
            # "yoga is cancelled this Monday": that one is off, the schedule stays ("cancel Saturday's
            # dinner at Nobu" still cancels the one booking for it)
            return self._ended_target(cmd)
        cancelling = tuple(matched)
        if target is None:
            return (cmd, None, cancelling) if cancelling else self._ended_target(cmd)
        if holds_other_instructions(target.content, words):
            return cmd, None, cancelling  # retracting it would cancel its other instructions too
        return self._retracting(cmd, self._memory(target.memory_id), cancelling, matched=True)

    def _ended_target(self, cmd: RememberCommand) -> tuple[RememberCommand, MemoryFacts | None, tuple[Target, ...]]:
        """ "Alice is no longer the owner": the one active memory of the writer's workspaces whose
        claim has the value denied, stated no later than this write's event time (a denial that
        arrives late does not end a fact stated after it)."""
        denied = ended_claims(cmd.content, cmd.subject)
        if not denied:
            return cmd, None, ()
        scope = self.workspace_scope(cmd.workspace) or (cmd.workspace,)
        claim_of = {
            m: claim
            for claim in denied
            for workspace in scope
            for m in claims_model.holding_value(self.conn, claim, workspace)
        }
        rows = mem.load_many(self.conn, sorted(claim_of))
        said = clock.to_datetime(cmd.event_time)
        held = [
            row
            for row in rows.values()
            if row.status == "active"
            and clock.to_datetime(row.event_time) <= said
            and denies_only(cmd.content, row.content, claim_of[row.memory_id])  # no time, scope or source
        ]
        candidates = tuple(Target(row.memory_id, row.stream_id, row.content, True) for row in held[:MAX_CANDIDATES])
        if len(held) != 1 or not holds_only(held[0].content, cmd.content, claim_of[held[0].memory_id]):
            return cmd, None, candidates  # several holders, or one that says more: ending it would end that too
        return self._retracting(cmd, MemoryFacts.from_row(held[0]), candidates, ends=True)

    def _retracting(
        self, cmd: RememberCommand, facts: MemoryFacts, candidates: tuple[Target, ...], **found: bool
    ) -> tuple[RememberCommand, MemoryFacts | None, tuple[Target, ...]]:
        """``cmd`` retracting ``facts``, found by its words, when its authorisation may write it
        (``check_writable``: a protected or locked memory only with the user's own, as at the
        CLI); otherwise nothing is retracted and ``candidates`` are shown."""
        try:
            check_writable(facts, expected_version=None, authorization=cmd.authorization, policy=self._policy)
        except (Locked, Unauthorized):
            return cmd, None, candidates
        return msgspec.structs.replace(cmd, ref_id=facts.memory_id, retracts=True, **found), facts, candidates

    def _retracted(self, events: list[Any]) -> dict[str, list[int]]:
        """``retracted``: the memories this write retired by retracting them (not itself, ended on
        arrival); ``reinstated``: the one a pure cancellation brought back (what the retracted
        memory had replaced)."""
        out: dict[str, list[int]] = {}
        own = events[0].stream_id if events else None
        for key, kind in (("retracted", "MemoryRetired"), ("reinstated", "Reinstated")):
            ids = [
                row.memory_id
                for ev in events
                if ev.type == kind
                and ev.stream_id != own
                and (row := mem.by_stream(self.conn, ev.stream_id)) is not None
            ]
            if ids:
                out[key] = ids
        return out

    def _plausible(self, event_time: str) -> str:
        """The canonical event time, refused when far ahead of now or before the floor."""
        canonical = clock.parse_time(event_time, field="event_time")
        clock.check_event_time(canonical, now=clock.now(), skew_s=self.settings.event_time_skew_s)
        return canonical

    def _find_duplicate(self, cmd: RememberCommand) -> MemoryFacts | None:
        row = mem.exact_duplicate(self.conn, duplicate_key(cmd.content, cmd.subject, cmd.workspace))
        return None if row is None else MemoryFacts.from_row(row)  # its event time too: a later repeat may join its set

    def update(
        self,
        memory_id: int,
        *,
        expected_version: int | None = None,
        authorization: str = "",
        on_secret: str = "refuse",
        session_id: str | None = None,
        turn: int | None = None,
        **changes: Any,
    ) -> dict[str, Any]:
        requested = {k: v for k, v in changes.items() if v is not None}
        if "event_time" in requested:
            requested["event_time"] = self._plausible(requested["event_time"])
        texts = {k: v for k, v in requested.items() if k in ("content", "subject", "tags", "metadata")}
        masked: dict[str, Any] = {}
        if texts:  # one scan; the workspace is read only when a credential is found
            clean, masked = self._without_secrets(texts, lambda: self._row(memory_id).workspace, on_secret)
            requested.update(clean)

        def decide() -> tuple[Decision, str, str]:
            self._not_overtaken(memory_id, set(requested))
            state = self.collisions.update_state(self._row(memory_id), requested)  # one read (write_state)
            facts = state.memory
            if not state.changes:  # nothing differs: no version, so nobody's expected_version goes stale
                check_current(facts)  # a stale expected_version is still reported as such
                check_writable(
                    msgspec.structs.replace(facts, protection="normal"),
                    expected_version=expected_version,
                    authorization=authorization,
                )
                raise Unchanged(facts.version)
            decision = decide_update(  # one pure decision from it (ledger/update.py)
                state, expected_version=expected_version, authorization=authorization, policy=self._policy
            )
            decision = in_conversation(decision, session_id, turn)
            return decision, state.changes.get("event_time") or clock.now(), facts.workspace

        try:
            outcome = self._commit(decide, lambda stored: self._update_reply(stored, memory_id, masked))
        except Unchanged as same:
            return {"ok": True, "memory_id": memory_id, "version": same.version, "unchanged": True}
        if isinstance(outcome, BackedUp):
            return outcome.result
        answer: dict[str, Any] = outcome.reply
        return answer

    def _not_overtaken(
        self, memory_id: int, fields: set[str], later: Callable[[int], list[mem.Change]] | None = None
    ) -> None:
        """A backed-up update replayed after a later change of the same fields of its memory (a
        version past the log position its decision read, said at a later event time, not one of
        this machine's own replayed writes) is refused, as a stale ``expected_version`` is:
        applied, the older change became the current value over the newer one (ci-2 over ci-3).
        A later change of other fields leaves it to apply (a tag added offline still lands), and a
        change the machine had not read but that was said before this one yields to it.

        ``later`` gives the versions made past a log position (a working note's revisions:
        ``projections.conversations.revisions_after``); a long-term memory's by default."""
        pin = self.storage.replaying
        seen = (pin.command.request or {}).get("seen") if pin is not None else None
        if pin is None or not isinstance(seen, int):
            return  # a line written before the backup recorded what it had read
        own = self.storage.backup_log.heads()  # this machine's replays (the file read once, not per write)
        made = clock.to_datetime(pin.head.event_time)
        changes = later(seen) if later is not None else mem.changes_after(self.conn, memory_id, seen)
        for change in changes:
            if change.event_id in own or not (change.fields & fields):
                continue
            if clock.to_datetime(change.event_time) > made:
                both = ", ".join(sorted(change.fields & fields))
                raise VersionConflict(
                    f"#{memory_id} changed after this update was made offline ({both} in version "
                    f"{change.version}, at {change.event_time}): the later change stays current",
                    memory_id=memory_id,
                    current_version=change.version,
                )

    def _update_reply(self, stored: list[StoredEvent], memory_id: int, masked: dict[str, Any]) -> dict[str, Any]:
        """An update's answer, from the state it produced (inside its transaction)."""
        row = mem.by_id(self.conn, memory_id)
        assert row is not None
        result = {
            "ok": True,
            "memory_id": memory_id,
            "version": row.version,
            **self.collisions.write_report(stored, memory_id),
            **self.collisions.conflict_changes(stored),
            **masked,
        }
        if any(getattr(e.data, "derived_from_confirmed", False) for e in stored):
            # Labels never lie (ledger.decide.decide_update): say so, the change was not silent.
            result["relabelled"] = {
                "from": "user_confirmed",
                "source_type": row.source_type,
                "protection": row.protection,
            }
            result["notices"] = [
                f"#{memory_id} was user_confirmed: a change that is not the user's makes it "
                f"{row.source_type} and {row.protection} (confirm it again to make it the user's word)"
            ]
        return result


def _already_inactive(target: MemoryFacts) -> str:
    return f"#{target.memory_id} was already {target.status}: nothing was retracted (this memory links to it)"
