"""Governance read side (a service of the facade): compare, conflict lists and details, overview.

Nothing here writes. The helpers that load memories and conflicts with the workspace checks
(``_memory``, ``_conflict``, ``_conflicts_of``) are shared with the write side in
:mod:`server.app.governance`, which runs them inside its write transactions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fact_ledger.ledger.arbiter import arbitrate as arbitrate_pair
from fact_ledger.ledger.arbiter import with_ids
from fact_ledger.ledger.claims import Claim, key_tokens
from fact_ledger.ledger.errors import InvalidInput, NotFound
from fact_ledger.ledger.facts import CONFLICT_LISTINGS, MemoryFacts
from fact_ledger.ledger.word_diff import lexical_closeness, word_diff
from fact_ledger.projections import claims as claims_model
from fact_ledger.projections import memories as mem
from fact_ledger.projections import vectors
from fact_ledger.projections import workspaces as ws
from fact_ledger.projections.confirmations import agent_asserted
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.conflicts.queries import ConflictRow
from fact_ledger.server.app import paging
from fact_ledger.server.app.service import Service
from fact_ledger.server.app.set_verdicts import shown_verdict, verdict_of
from fact_ledger.server.app.storage import storage_call

MEMBERS_LISTED = 20  # member ids in a conflict list; conflict_detail pages through all of them


class GovernanceViews(Service):
    """Read views of claim sets and memories side by side; the governing services
    (:class:`server.app.governance.Governance`, :class:`server.app.hindsight.Hindsight`) are given
    one to show a set as these views do."""

    def _shown_verdict(self, row: ConflictRow, *, ranking: bool = False) -> dict[str, Any]:
        """The verdict answers show: from the members as they are now and how the set ended."""
        return shown_verdict(
            self.conn, row, review_agent_conflicts=self.settings.policy.review_agent_conflicts, ranking=ranking
        )

    def standings(self, memory_ids: list[int]) -> tuple[dict[int, dict[str, Any]], dict[int, list[int]]]:
        """Each memory's standing in its (oldest) unresolved claim set (leader or challenger),
        and the unresolved sets each is a current member of (``conflict_ids``), from one read."""
        if not memory_ids:
            return {}, {}
        leaders: dict[int, int | None] = {}
        out: dict[int, dict[str, Any]] = {}
        member_of: dict[int, list[int]] = {}
        review = self.settings.policy.review_agent_conflicts
        for memory_id, cid, subject, attribute, best in conflicts_model.memberships_with_leaders(self.conn, memory_ids):
            member_of.setdefault(memory_id, []).append(cid)
            if memory_id in out:
                continue
            if cid not in leaders:
                leaders[cid] = verdict_of(best, review_agent_conflicts=review)["leader_id"]
            out[memory_id] = {
                "role": "leader" if leaders[cid] == memory_id else "challenger",
                "conflict_id": cid,
                "claim": {"subject": subject, "attribute": attribute},
                "leader_id": leaders[cid],
            }
        return out, member_of

    # -- read views --------------------------------------------------------------------------
    @storage_call
    def compare(self, left_id: int, right_id: int) -> dict[str, Any]:
        """The verdict for two memories as they are now; writes nothing."""
        if left_id == right_id:
            raise InvalidInput("left_id and right_id are the same memory", field="right_id")
        with self.storage.snapshot():
            left, right = self._memory(left_id, "left_id"), self._memory(right_id, "right_id")
            for side, field in ((left, "left_id"), (right, "right_id")):
                if side.status == "erased":  # its words are gone: a verdict would judge its lock alone
                    raise InvalidInput(
                        f"memory {side.memory_id} was erased: its text is gone, so there is nothing to compare "
                        "(its Erased event stays in the audit)",
                        field=field,
                    )
            left_claim, right_claim, same = self._shared(left, right)
            texts = [(m, _content(self.conn, m)) for m in (left_id, right_id)]
            cosine = vectors.cosine(self.conn, texts[0], texts[1])
        verdict = arbitrate_pair(
            left.side(), right.side(), review_agent_conflicts=self.settings.policy.review_agent_conflicts
        )
        return {
            "ok": True,
            "verdict": verdict,
            "same_subject": same,
            "current": left.status == right.status == "active",
            "claim": _pair_claim(left_claim, right_claim),
            "diff": word_diff(texts[0][1], texts[1][1]),
            "closeness": {"lexical": lexical_closeness(texts[0][1], texts[1][1]), "vector": cosine},
        }

    @storage_call
    def conflicts(self, state: str = "open", limit: int = 20, cursor: str | None = None) -> dict[str, Any]:
        """One page of claim sets; the defaults are the facade's (``LedgerApp.conflicts``)."""
        if state not in CONFLICT_LISTINGS:
            raise InvalidInput(f"state must be one of {', '.join(CONFLICT_LISTINGS)}", field="state")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 200:
            raise InvalidInput("limit must be an integer from 1 to 200", field="limit")
        before = paging.key_of(paging.decode("conflicts", {"state": state}, cursor))
        scope, _ = self._find_scope(None)  # strict: the caller's sets only, in the total too
        with self.storage.snapshot():
            total, rows = conflicts_model.page(
                self.conn, None if state == "all" else state, before=before, limit=limit + 1, workspaces=scope
            )
            more, rows = len(rows) > limit, rows[:limit]
            views = [self._conflict_view(r) for r in rows]
        # Keyset on conflict_id (newest first): a conflict opened meanwhile never shifts a page.
        cursor_out = paging.encode("conflicts", {"state": state}, rows[-1].conflict_id) if more else None
        return {"ok": True, "conflicts": views, "total": total, "has_more": more, "next_cursor": cursor_out}

    @storage_call
    def conflict_detail(self, conflict_id: int, limit: int = 20, offset: int = 0) -> dict[str, Any]:
        """One claim set: its verdict, judgments, folded pairwise conflicts and a page of members."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 200:
            raise InvalidInput("limit must be an integer from 1 to 200", field="limit")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InvalidInput("offset must be a non-negative integer", field="offset")
        with self.storage.snapshot():
            row = self._conflict_row(conflict_id)
            cid = row.conflict_id
            view = self._conflict_view(row)
            if cid != conflict_id:
                view["requested_id"] = conflict_id  # an old pairwise conflict, folded into this set
            page = conflicts_model.members_of(self.conn, cid, active=False, limit=limit + 1, offset=offset)
            memories = []
            for member in page[:limit]:
                memory = mem.by_id(self.conn, member.memory_id)
                if memory is None:
                    continue
                item = self._memory_view(memory)
                item.update(value=member.value, in_set=member.active)
                if member.left_reason:
                    item["left_reason"] = member.left_reason
                memories.append(item)
            view["memories"] = memories
            view["member_versions"] = {str(m["memory_id"]): m["version"] for m in memories if m["in_set"]}
            view["has_more"] = len(page) > limit
            if view["has_more"]:
                view["next_offset"] = offset + limit
            view["judgments"] = conflicts_model.judgments_of(self.conn, cid)
            pairs = conflicts_model.pairs_of(self.conn, cid)
            view["pairwise"] = [{**p, "verdict": with_ids(p["verdict"], *p["members"])} for p in pairs]
            view["current_verdict"] = self._shown_verdict(row, ranking=True)
        return {"ok": True, "conflict": view}

    @storage_call
    def near_duplicates_of(self, memory_id: int, limit: int = 5) -> dict[str, Any]:
        """Current memories whose wording is close to this one's (the probe a write runs)."""
        with self.storage.snapshot():
            row = mem.by_id(self.conn, memory_id)
            if row is None:
                raise NotFound(f"no memory {memory_id}", field="memory_id")
            self._check_workspace(row.workspace)
            found = claims_model.near_duplicates(self.conn, row.content, row.workspace, exclude=memory_id, limit=limit)
        return {"ok": True, "memory_id": memory_id, "near_duplicates": found}

    @storage_call
    def overview(self) -> dict[str, Any]:
        """Counts by status, source_type and workspace; conflicts; unconfirmed confirmations; backup.

        Under strict isolation every count covers the caller's workspace only.
        """
        scope: tuple[str, ...] | None = None
        if self.settings.isolation == "strict":
            scope = self.workspace_scope(self.settings.workspace)
        with self.storage.snapshot():
            active = mem.active_counts(self.conn, scope)
            canonical = ws.resolver(self.conn)  # an accepted alias counts as its workspace
            states = conflicts_model.count_by_state(self.conn, scope)
            out = {
                "ok": True,
                "by_status": mem.status_counts(self.conn, scope),
                "by_source_type": _summed(active, lambda row: row[1]),
                "by_workspace": _summed(active, lambda row: canonical(row[0])),
                "conflicts": states,
                "open_conflicts": states["open"],
                "agent_asserted_confirmations": agent_asserted(active),
            }
        out["pending_backup"] = self.pending_backup()
        return out

    # -- views -------------------------------------------------------------------------------
    def _shared(self, left: MemoryFacts, right: MemoryFacts) -> tuple[Claim | None, Claim | None, bool]:
        """The first claim key both memories share, and whether they are about the same subject."""
        right_claims = {c.key[:2]: c for c in claims_model.claims_of(self.conn, right.memory_id)}
        for claim in claims_model.claims_of(self.conn, left.memory_id):
            if claim.key[:2] in right_claims:
                return claim, right_claims[claim.key[:2]], True
        lt, rt = key_tokens(left.subject), key_tokens(right.subject)
        return None, None, bool(lt) and lt == rt

    def _conflict_view(self, row: ConflictRow) -> dict[str, Any]:
        """A claim set as lists show it: members' ids (the first 20), never their values."""
        cid = row.conflict_id
        verdict = self._shown_verdict(row)
        members = [m.memory_id for m in conflicts_model.members_of(self.conn, cid, limit=MEMBERS_LISTED)]
        return {
            "conflict_id": cid,
            "state": row.state,
            "members": members,
            "member_count": row.member_count,
            "leader_id": verdict.get("leader_id"),
            "claim": {"subject": row.subject, "attribute": row.attribute},
            "verdict": verdict,
            "resolution": row.resolution,
            "winner_id": row.winner_id,
            "reason": row.reason,
            "opened_at": row.opened_at,
            "updated_at": row.updated_at,
        }

    def _conflict_view_by_id(self, conflict_id: int) -> dict[str, Any]:
        return self._conflict_view(self._conflict_row(conflict_id))


def _summed(active: list[tuple[str, str, str, int]], key: Callable[[tuple[str, str, str, int]], str]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for row in active:
        totals[key(row)] = totals.get(key(row), 0) + row[3]
    return dict(sorted(totals.items()))


def _content(conn: Any, memory_id: int) -> str:
    row = mem.by_id(conn, memory_id)
    return row.content if row is not None else ""


def _pair_claim(left: Claim | None, right: Claim | None) -> dict[str, str] | None:
    if left is None or right is None:
        return None
    return {
        "subject": right.subject,
        "attribute": right.attribute,
        "left_value": left.value,
        "right_value": right.value,
    }
