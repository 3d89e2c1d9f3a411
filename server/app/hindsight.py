"""Hindsight on the facade: the memory health report, a suggestion applied as one change, its
undo, and what-if under another rule order.

The report is a read-only pass (:mod:`ledger.health` over :mod:`projections.health`); nothing
it finds is applied by itself. ``apply_suggestion`` settles one claim set as the report
proposed — the same events ``resolve_conflict`` writes, each carrying one ``change`` id, and a
``ChangeRecorded`` — and ``undo`` appends the compensating events (the superseded reinstated,
the set re-opened), never deleting anything.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import msgspec

from fact_ledger.ledger import clock, entity_alias
from fact_ledger.ledger import health as report
from fact_ledger.ledger import whatif as whatif_model
from fact_ledger.ledger.arbiter import RULE_ORDER
from fact_ledger.ledger.claims import extract_claims
from fact_ledger.ledger.decide import set_key, settle
from fact_ledger.ledger.errors import InvalidInput, NotFound, quoted
from fact_ledger.ledger.facts import Decision, check_authorized
from fact_ledger.ledger.govern import decide_resolve
from fact_ledger.ledger.ids import typed_key, uuid7
from fact_ledger.ledger.log.events import (
    ChangeRecorded,
    ConflictReopened,
    EntityAliasSet,
    Event,
    HealthChecked,
    Reinstated,
)
from fact_ledger.projections import changes as changes_model
from fact_ledger.projections import claims as claims_model
from fact_ledger.projections import entity_aliases, health_trend
from fact_ledger.projections import health as health_model
from fact_ledger.projections import memories as mem
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.conflicts.queries import conflict_facts
from fact_ledger.server.app import credentials
from fact_ledger.server.app.governance import _resolved
from fact_ledger.server.app.governance_views import GovernanceViews
from fact_ledger.server.app.service import Service
from fact_ledger.server.app.set_verdicts import ARBITRATION_PREFIX
from fact_ledger.server.app.storage import BackedUp, Storage, storage_call
from fact_ledger.server.app.workspaces import Workspaces

UNDO_PREFIX = "undo of change "  # a reinstatement's or a reopened set's reason: what an undo undid

MAX_CLUSTERS = 200
FIND_SAMPLES = 1000
TREND_KEYS = ("cluster_count", "open_members", "needs_person", "hot", "superseded_ratio", "stale_ratio", "pass_ms")


def tagged(event: Event, change: str) -> Event:
    """The event as part of the change ``change`` (types without the field are left as they are)."""
    return msgspec.structs.replace(event, change=change) if "change" in event.__struct_fields__ else event  # type: ignore[call-arg]


class Hindsight(Service):
    """The health report, apply/undo of its suggestions, what-if."""

    def __init__(self, storage: Storage, workspaces: Workspaces, views: GovernanceViews) -> None:
        super().__init__(storage, workspaces)
        self.views = views  # a cluster's set, shown as the conflict views show it
        # ``find`` latencies of this process (the facade appends each one): the report's figure
        # is what this server measured, not a benchmark's.
        self.find_ms: deque[float] = deque(maxlen=FIND_SAMPLES)

    def _scope(self) -> tuple[str, ...] | None:
        scope, _ = self._find_scope(None)  # strict: the caller's workspace only
        return scope

    @storage_call
    def health(self, limit: int = report.DEFAULT_CLUSTERS) -> dict[str, Any]:
        """The report: ranked contradiction clusters with suggestions, duplicates, ratios."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_CLUSTERS:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_CLUSTERS}", field="limit")
        started = time.perf_counter()
        scope = self._scope()
        review = self.settings.policy.review_agent_conflicts
        with self.storage.snapshot():
            sets = health_model.open_sets(self.conn, scope)
            stored, sightings, restated = health_model.absorbed(self.conn, scope)
            pairs = health_model.near_duplicate_pairs(self.conn, scope)
            status = mem.status_counts(self.conn, scope)
            cold = health_model.cold_count(self.conn, scope)
            changes = changes_model.recent(self.conn, 20, scope)
            trend = health_trend.points(self.conn)
            aliases = entity_alias.propose(
                health_model.subject_counts(self.conn, scope),
                health_model.claim_values(self.conn, scope),
                decided=entity_aliases.decided(self.conn),
            )
        clusters = [report.cluster(s, review_agent_conflicts=review) for s in sets]
        return {
            "ok": True,
            "clusters": report.rank(clusters, limit),
            "cluster_count": len(clusters),
            "open_members": sum(c["member_count"] for c in clusters),
            "needs_person": sum(1 for c in clusters if c["suggestion"]["kind"] == "needs_person"),
            "duplicates": report.duplicates(
                writes=stored, sightings=sightings, restatements=restated, near_groups=report.groups(pairs)
            ),
            **report.ratios(status, cold=cold),
            "aliases": [
                {**a, "action": {"action": "accept_alias", "data": {"alias": a["alias"], "canonical": a["canonical"]}}}
                for a in aliases
            ],
            "find_latency_ms": report.latency(list(self.find_ms)),
            "changes": changes,
            "trend": trend,
            "pass_ms": round((time.perf_counter() - started) * 1000, 1),
        }

    @storage_call
    def record_health(self) -> dict[str, Any]:
        """Run the pass and record its summary (``HealthChecked``): one point of the trend. The
        pass reads under a snapshot; the write lock is held only to append the one event."""
        found = self.health()
        summary = {key: found[key] for key in TREND_KEYS if key in found}
        summary["absorbed_per_1000_writes"] = found["duplicates"]["absorbed_per_1000_writes"]
        summary["near_group_count"] = found["duplicates"]["near_group_count"]
        if found["find_latency_ms"]:
            summary["find_p50_ms"] = found["find_latency_ms"]["p50"]
            summary["find_p95_ms"] = found["find_latency_ms"]["p95"]

        def decide() -> tuple[Decision, str, str]:
            return [("health", HealthChecked(summary=summary))], clock.now(), self.workspaces.own_workspace()

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        return {"ok": True, "position": outcome.events[0].position, "summary": summary}

    @storage_call
    def apply_suggestion(self, suggestion_id: str, authorization: str = "") -> dict[str, Any]:
        """Settle the set as the suggestion says, as one change (every event carries its id)."""
        if isinstance(suggestion_id, str):
            suggestion_id = typed_key(suggestion_id)  # as pasted, a space copied with it, or typed in capitals
        conflict_id = report.conflict_of_suggestion(suggestion_id) if isinstance(suggestion_id, str) else None
        if conflict_id is None:
            raise InvalidInput("suggestion_id is not a suggestion of the health report", field="suggestion_id")
        change = uuid7()
        applied: list[dict[str, Any]] = []

        def decide() -> tuple[Decision, str, str]:
            row, proposal = self._suggestion_plan(suggestion_id, conflict_id)
            conflict = self._conflict(conflict_id)
            members = {s: self._memory(i, "suggestion_id") for s, i in conflict.ids.items()}
            winner = self._memory(proposal["winner_id"], "suggestion_id")
            decision = decide_resolve(
                conflict,
                winner=winner,
                members=members,
                resolution=None,
                authorization=authorization,
                policy=self._policy,
                member_conflicts={s: self._conflicts_of(m.memory_id) for s, m in members.items()},
            )
            superseded = tuple(e.loser for _, e in decision if type(e).__name__ == "Superseded")  # type: ignore[attr-defined]
            out: Decision = [(s, tagged(e, change)) for s, e in decision]
            out.append(
                (
                    change,
                    ChangeRecorded(
                        change=change,
                        kind="apply_suggestion",
                        suggestion=suggestion_id,
                        conflict=conflict.stream_id,
                        winner=winner.stream_id,
                        superseded=superseded,
                        authorization=authorization,
                    ),
                )
            )
            applied[:] = [proposal]
            return out, clock.now(), row.workspace

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        with self.storage.snapshot():
            record = changes_model.by_id(self.conn, change)
            assert record is not None
            return {
                "ok": True,
                "change_id": change,
                "change": changes_model.view(self.conn, record),
                "conflict": self.views._conflict_view_by_id(conflict_id),
                "resolved_conflicts": _resolved(self.conn, outcome.events),
            }

    def check_suggestion(self, suggestion_id: str) -> None:
        """Refuse as :meth:`apply_suggestion` would, writing nothing: the console says why a
        suggestion it no longer lists cannot be applied (settled already, by this person's first
        click too, or changed since) instead of one word for every case."""
        if isinstance(suggestion_id, str):
            suggestion_id = typed_key(suggestion_id)
        conflict_id = report.conflict_of_suggestion(suggestion_id) if isinstance(suggestion_id, str) else None
        if conflict_id is None:
            raise InvalidInput("suggestion_id is not a suggestion of the health report", field="suggestion_id")
        with self.storage.snapshot():
            self._suggestion_plan(suggestion_id, conflict_id)

    def _suggestion_plan(self, suggestion_id: str, conflict_id: int) -> tuple[Any, dict[str, Any]]:
        """The set's row and the report's settlement for it, when ``suggestion_id`` still names
        it as it stands; ``not_found`` / ``invalid_input`` otherwise (settled, no dispute left,
        changed since the report, or needing a person)."""
        try:
            row = self._conflict_row(conflict_id)
        except NotFound:  # the caller gave a suggestion: name it, not the set it points at
            raise NotFound(
                f"no suggestion {suggestion_id}: its conflict {conflict_id} is not in this ledger",
                field="suggestion_id",
            ) from None
        if row.conflict_id != conflict_id or row.state == "resolved":
            raise InvalidInput(
                f"suggestion {suggestion_id} is stale: conflict {conflict_id} is already settled",
                field="suggestion_id",
            )
        found = health_model.open_sets(self.conn, conflict_id=conflict_id)
        if not found:
            raise InvalidInput(f"suggestion {suggestion_id} is stale: the set has no dispute", field="suggestion_id")
        proposal = report.settlement(found[0], review_agent_conflicts=self.settings.policy.review_agent_conflicts)
        if proposal["suggestion_id"] != suggestion_id:
            now = (
                f"now {proposal['suggestion_id']}; run health again"
                if proposal["kind"] == "settle"
                else f"it now needs a person: {proposal['explanation']}"  # no id to apply: say why
            )
            raise InvalidInput(
                f"suggestion {suggestion_id} is stale: the set changed since the report ({now})",
                field="suggestion_id",
                conflict_id=conflict_id,
            )
        if proposal["kind"] != "settle":  # why, as the report said it (a rule may decide, yet not alone)
            raise InvalidInput(
                f"suggestion {suggestion_id} needs a person: {proposal['explanation']}",
                field="suggestion_id",
                conflict_id=conflict_id,
            )
        return row, proposal

    @storage_call
    def undo(self, change_id: str, authorization: str = "") -> dict[str, Any]:
        """Revert a change in one step: compensating events (the superseded reinstated, the set
        re-opened) that carry the undo's own change id; nothing is deleted."""
        check_authorized(authorization)
        if not isinstance(change_id, str) or not change_id.strip():
            raise InvalidInput("change_id is required", field="change_id")
        # as pasted: a space copied with it, or the id in capitals, was "no change …"
        given = change_id.strip()
        change_id = typed_key(given)
        undo_id = uuid7()

        def decide() -> tuple[Decision, str, str]:
            record, conflict, reinstated = self._undo_plan(change_id, given)
            reason = f"{UNDO_PREFIX}{change_id}"
            decision: Decision = [
                (stream, Reinstated(memory=stream, reason=reason, change=undo_id, authorization=authorization))
                for stream in reinstated
            ]
            if conflict is not None and conflict.state == "resolved":
                decision.append(
                    (record.conflict, ConflictReopened(conflict=record.conflict, reason=reason, change=undo_id))
                )
            decision.append(
                (
                    undo_id,
                    ChangeRecorded(
                        change=undo_id,
                        kind="undo",
                        undoes=change_id,
                        conflict=record.conflict,
                        winner=record.winner,
                        superseded=record.superseded,
                        authorization=authorization,
                    ),
                )
            )
            return decision, clock.now(), record.workspace

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        with self.storage.snapshot():
            record = changes_model.by_id(self.conn, undo_id)
            assert record is not None
            view = changes_model.view(self.conn, record)
            conflict = self.views._conflict_view_by_id(view["conflict_id"]) if view["conflict_id"] else None
        return {"ok": True, "change_id": undo_id, "undoes": change_id, "change": view, "conflict": conflict}

    def check_undo(self, change_id: str) -> None:
        """Refuse as :meth:`undo` would, writing nothing (the console asks before its
        confirmation page, so a stale Undo never lists what it cannot do)."""
        given = change_id.strip() if isinstance(change_id, str) else change_id
        with self.storage.snapshot():
            self._undo_plan(typed_key(given) if isinstance(given, str) else given, given)

    def _undo_plan(self, change_id: str, given: str | None = None) -> tuple[Any, Any, list[str]]:
        """The change, its set and the memories an undo reinstates; ``invalid_input`` when the
        change cannot be undone (an undo, undone already, or the ledger moved on since).
        ``given``: the id as the caller wrote it, quoted when there is no such change."""
        record = changes_model.by_id(self.conn, change_id)
        if record is None:
            raise NotFound(f"no change {quoted(given if given is not None else change_id, 60)}", field="change_id")
        self._check_workspace(record.workspace, field="change_id")
        name = _change_name(record)  # its log position too: the Health page lists changes by it
        if record.kind == "undo":
            raise InvalidInput(f"{name} is an undo; apply the suggestion again instead", field="change_id")
        if record.undone_by:
            undo = changes_model.by_id(self.conn, record.undone_by)
            by = _change_name(undo) if undo is not None else f"change {record.undone_by}"
            raise InvalidInput(f"{name} was already undone by {by}", field="change_id")
        winner = mem.by_stream(self.conn, record.winner) if record.winner else None
        conflict = conflicts_model.by_stream(self.conn, record.conflict)
        self._check_set_unmoved(name, winner, conflict)
        reinstated: list[str] = []
        for stream in record.superseded:
            row = mem.by_stream(self.conn, stream)
            if row is None:
                continue
            if row.status != "superseded" or winner is None or row.superseded_by != winner.memory_id:
                raise InvalidInput(
                    f"memory {row.memory_id} changed since {name} (now {row.status}); undo would overwrite that",
                    field="change_id",
                )
            reinstated.append(stream)
        return record, conflict, reinstated

    def _check_set_unmoved(self, name: str, winner: Any, conflict: Any) -> None:
        """An undo re-opens the change's set with its winner in it: refused when the winner is no
        longer current (the set would re-open led by a retired memory), no longer states the
        value it won with (updated since: the set would hold its old value, and a later
        settlement supersede the others by a memory that no longer says so), or when another
        set on the same fact has opened since (two open sets for one fact, overlapping for good)."""
        if winner is not None and winner.status != "active":
            raise InvalidInput(
                f"memory {winner.memory_id}, the winner of {name}, is {winner.status} since; "
                "undo would re-open the set led by it",
                field="change_id",
            )
        if conflict is None or not conflict.key:
            return
        if winner is not None:
            won_with = self.conn.execute(
                "SELECT value_norm FROM conflict_members WHERE conflict_id=? AND memory_id=?",
                (conflict.conflict_id, winner.memory_id),
            ).fetchone()
            held = {
                c.value_norm for c in claims_model.claims_of(self.conn, winner.memory_id) if set_key(c) == conflict.key
            }
            if won_with is not None and won_with[0] not in held:
                raise InvalidInput(
                    f"memory {winner.memory_id}, the winner of {name}, no longer states the value it won "
                    "with; undo would re-open the set with a value it does not hold",
                    field="change_id",
                )
        scope = self.workspace_scope(conflict.workspace) or (conflict.workspace,)
        other = conflicts_model.unresolved_for_key(self.conn, conflict.key, scope)
        if other is not None and other.conflict_id != conflict.conflict_id:
            raise InvalidInput(
                f"claim set {other.conflict_id} opened on this fact since {name}; settle it first "
                "(an undo would leave two open sets for one fact)",
                field="change_id",
            )

    # -- entity aliases ------------------------------------------------------------------------
    @storage_call
    def accept_entity_alias(self, alias: str, canonical: str, authorization: str = "") -> dict[str, Any]:
        """``alias`` names the same person or thing as ``canonical``: claims about it meet
        ``canonical``'s in claim sets from now on."""
        return self._entity_alias(alias, canonical, accepted=True, authorization=authorization)

    @storage_call
    def reject_entity_alias(self, alias: str, canonical: str, authorization: str = "") -> dict[str, Any]:
        """``alias`` is not ``canonical`` (undoes an acceptance; never proposed again)."""
        return self._entity_alias(alias, canonical, accepted=False, authorization=authorization)

    def _entity_alias(self, alias: str, canonical: str, *, accepted: bool, authorization: str) -> dict[str, Any]:
        check_authorized(authorization)
        alias, canonical = alias.strip(), canonical.strip()
        if not alias or not canonical or alias == canonical:
            raise InvalidInput("alias and canonical must be two different non-empty names", field="alias")
        credentials.refuse_in_aliases(alias, canonical)
        for field, name in (("alias", alias), ("canonical", canonical)):
            if not entity_alias.tokens(name):
                raise InvalidInput(
                    f"{name!r} holds no word a claim is keyed by (single letters and common words are not)",
                    field=field,
                )
        if entity_alias.tokens(alias) == entity_alias.tokens(canonical):
            raise InvalidInput(f"{alias!r} and {canonical!r} are already one key", field="alias")
        target: list[str] = []

        def decide() -> tuple[Decision, str, str]:
            final = entity_aliases.canonical(self.conn, canonical) if accepted else canonical
            if final == alias:  # canonical is already an alias of this name
                raise InvalidInput(f"{canonical!r} is already an alias of {alias!r}", field="canonical")
            if (alias, final, accepted) in entity_aliases.rows(self.conn):  # decided so already: nothing to record
                said = "one key" if accepted else "rejected"
                raise InvalidInput(f"{alias!r} and {final!r} are already {said}", field="alias")
            target[:] = [final]
            event = EntityAliasSet(alias=alias, canonical=final, accepted=accepted, authorization=authorization)
            decision: Decision = [(f"entity-alias:{alias}", event)]
            if not accepted:
                decision += self._part(alias, final)
            return decision, clock.now(), self.workspaces.own_workspace()

        outcome = self._commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        return {
            "ok": True,
            "alias": alias,
            "canonical": target[0],
            "accepted": accepted,
            "position": outcome.events[0].position,
        }

    def _part(self, alias: str, canonical: str) -> Decision:
        """A rejected alias: each member of an unresolved set filed under ``canonical``'s key
        whose own claims no longer carry that key (they named ``alias``) leaves it, and a set
        left with one value is settled (``dissolved``)."""
        gone = entity_alias.tokens(alias)
        after = [a for a in entity_aliases.accepted(self.conn) if a[0] != gone]
        canon = entity_alias.tokens(canonical)
        reason = f"entity alias rejected: {alias} is not {canonical}"
        decision: Decision = []
        for row in conflicts_model.unresolved(self.conn):
            if not canon <= set(row.key.split("\x1f", 1)[0].split()):
                continue
            conflict = conflict_facts(self.conn, row)
            for stream in list(conflict.values):
                memory = mem.by_stream(self.conn, stream)
                if memory is None:
                    continue
                explicit = health_model.explicit_of(self.conn, memory.memory_id)
                keys = {
                    set_key(c)
                    for c in entity_alias.rekey(extract_claims(memory.content, memory.subject, explicit), after)
                }
                if row.key not in keys:
                    decision += settle(stream, [conflict], resolution="dissolved", reason=reason)
        return decision

    # -- what-if -------------------------------------------------------------------------------
    @storage_call
    def whatif(self, rule_order: list[str] | str | None = None, auto_settle: bool = False) -> dict[str, Any]:
        """Every claim set's verdict under ``rule_order`` (and the policy ``auto_settle``); writes nothing."""
        order = whatif_model.rule_order(rule_order) if rule_order is not None else list(RULE_ORDER)
        review = self.settings.policy.review_agent_conflicts
        with self.storage.snapshot():
            found = health_model.every_set(self.conn, self._scope())
        sets = []
        for row, sides in found:
            resolved = row.state == "resolved"
            by_rule = resolved and (row.resolution == "policy" or row.reason.startswith(ARBITRATION_PREFIX))
            sets.append(
                whatif_model.SetSides(
                    conflict_id=row.conflict_id,
                    state=row.state,
                    subject=row.subject,
                    attribute=row.attribute,
                    sides=tuple(sides),
                    guarded=any(s.protection != "normal" or s.source_type == "user_confirmed" for s in sides),
                    winner_id=row.winner_id,
                    by_rule=by_rule,
                )
            )
        checked, changed = whatif_model.replay(sets, order, auto_settle=auto_settle, review_agent_conflicts=review)
        return {
            "ok": True,
            "rule_order": order,
            "auto_settle": auto_settle,
            "sets_checked": checked,
            "changed": changed,
            "unchanged": checked - len(changed),
        }


def _change_name(record: changes_model.ChangeRow) -> str:
    """A change as a person finds it: its log position (the Health page's list), then its id."""
    return f"change @{record.position} ({record.change_id})"
