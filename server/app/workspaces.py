"""Workspaces: alias governance and the isolation rules that use it (a service of the facade).

Isolation (``LEDGER_ISOLATION``): ``none`` ignores workspaces unless a filter names one;
``weak`` ranks the caller's workspace first (+0.2 in full-text and hybrid scores: of two
equal matches the caller's comes first); ``strict`` hard-filters searches to the caller's
workspace and refuses by-id access to any other with ``forbidden_workspace``. Every check
compares *canonical* names, so an accepted alias joins the two names for reading and for
isolation alike.
"""

from __future__ import annotations

from typing import Any

from fact_ledger.ledger import clock
from fact_ledger.ledger.decide import settle
from fact_ledger.ledger.errors import ForbiddenWorkspace, InvalidInput, Unauthorized
from fact_ledger.ledger.facts import Decision
from fact_ledger.ledger.log.events import WorkspaceAliasSet
from fact_ledger.projections import memories as mem
from fact_ledger.projections import workspaces as ws
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.conflicts.queries import conflict_facts
from fact_ledger.server.app import credentials
from fact_ledger.server.app.storage import BackedUp, Storage
from fact_ledger.server.config import Settings


class Workspaces:
    """Workspace names, aliases and isolation checks over the storage seam."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    @property
    def settings(self) -> Settings:
        """The storage's settings: the MCP server swaps them per call (the caller's identity)."""
        return self.storage.settings

    # -- names -------------------------------------------------------------------------------
    def canonical_workspace(self, name: str) -> str:
        return ws.canonical(self.storage.conn, name)

    def own_workspace(self) -> str:
        return self.canonical_workspace(self.settings.workspace)

    def workspace_scope(self, name: str) -> tuple[str, ...]:
        """Every stored workspace name meaning the same workspace as ``name``."""
        return ws.scope(self.storage.conn, name)

    def check_workspace(self, workspace: str, field: str = "memory_id") -> None:
        """Strict isolation: refuse anything stored in another (canonical) workspace."""
        if self.settings.isolation != "strict":
            return
        if self.canonical_workspace(workspace) != self.own_workspace():
            raise ForbiddenWorkspace("that belongs to another workspace", field=field)

    def write_workspace(self, requested: str | None) -> str:
        """The canonical workspace a new memory is stored in (strict: only the caller's own).

        Whitespace around a name is no part of it ("Aurora " is "Aurora"), unless that padded
        name was accepted as an alias: no new padded name is recorded."""
        name = self.own_workspace() if requested is None else self.canonical_workspace(requested)
        if name != name.strip():
            name = self.canonical_workspace(name.strip())
        self.check_workspace(name, field="workspace")
        return name

    def find_scope(self, requested: str | None) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
        """(hard filter, ranking boost) for a search under the configured isolation."""
        isolation = self.settings.isolation
        if requested is not None:
            if requested != requested.strip():  # as a write takes it: "proj " is "proj" (it found
                # nothing), unless "proj " is recorded (a scan: only for a name typed with spaces)
                requested = ws.recorded_name(self.storage.conn, requested)
            self.check_workspace(requested, field="workspace")
            return self.workspace_scope(requested), None
        if isolation == "strict":
            return self.workspace_scope(self.settings.workspace), None
        if isolation == "weak":
            return None, self.workspace_scope(self.settings.workspace)
        return None, None

    def empty_workspace(self, requested: str) -> dict[str, Any] | None:
        """``find``'s word when the workspace it searched never held a memory (``workspace_empty``:
        ``{workspace, nearest}`` and a notice), else None: a mistyped name answered nothing, as a
        query that matches nothing does. ``nearest`` is the recorded workspace the name most
        likely meant; never under strict isolation, where the caller sees no other's name."""
        conn = self.storage.conn
        if ws.holds_memory(conn, self.workspace_scope(ws.recorded_name(conn, requested))):
            return None
        near = None if self.settings.isolation == "strict" else ws.nearest(conn, requested)
        return {"workspace": requested, "nearest": near}

    # -- governance --------------------------------------------------------------------------
    def accept_alias(self, alias: str, canonical: str, *, authorization: str = "") -> dict[str, Any]:
        """Record that ``alias`` names the same workspace as ``canonical``."""
        return self._set_alias(alias, canonical, accepted=True, authorization=authorization)

    def reject_alias(self, alias: str, canonical: str, *, authorization: str = "") -> dict[str, Any]:
        """Record that ``alias`` is *not* ``canonical`` (undoes an acceptance, silences the suggestion)."""
        return self._set_alias(alias, canonical, accepted=False, authorization=authorization)

    def _set_alias(self, alias: str, canonical: str, *, accepted: bool, authorization: str) -> dict[str, Any]:
        if not authorization:
            raise Unauthorized("workspace aliases need authorized: true", field="authorized")
        if not alias.strip() or not canonical.strip() or alias.strip() == canonical.strip():
            raise InvalidInput("alias and canonical must be two different non-empty names", field="alias")
        credentials.refuse_in_aliases(alias, canonical)

        def decide() -> tuple[Decision, str, str]:
            nonlocal alias
            # The names as recorded: a suggestion's "Aurora " (or a person's "Aurora" for it)
            # must alias the name its memories carry, or accepting it changes nothing.
            alias = ws.recorded_name(self.storage.conn, alias)
            canonical_name = ws.recorded_name(self.storage.conn, canonical)
            target = ws.canonical(self.storage.conn, canonical_name) if accepted else canonical_name
            if accepted and target == alias:
                raise InvalidInput(f"{canonical_name!r} is already an alias of {alias!r}", field="canonical")
            if (alias, target, accepted) in ws.alias_rows(self.storage.conn):  # decided so already
                said = "one workspace" if accepted else "rejected"
                raise InvalidInput(f"{alias!r} and {target!r} are already {said}", field="alias")
            # Strict: a user may pull a name into their own workspace, never push one elsewhere.
            self.check_workspace(target, field="canonical")
            event = WorkspaceAliasSet(alias=alias, canonical=target, accepted=accepted, authorization=authorization)
            parted = [] if accepted else self._part(alias, target)
            return [(f"workspace-alias:{alias}", event), *parted], clock.now(), target

        outcome = self.storage.commit(decide)
        if isinstance(outcome, BackedUp):
            return outcome.result
        stored = outcome.events
        return {
            "ok": True,
            "alias": alias,
            "canonical": self.canonical_workspace(alias),
            "accepted": accepted,
            "position": stored[0].position,
        }

    def _part(self, alias: str, canonical: str) -> Decision:
        """A rejected alias: each member of an unresolved claim set that met the set's workspace
        only through the alias leaves it (a set left with one value is settled ``dissolved``),
        as a rejected entity alias parts its keys. Left in, it stayed in the other workspace's set
        and joined its own workspace's next set too: two open sets for one fact."""
        conn = self.storage.conn
        home = ws.resolver(conn, without=alias)
        reason = f"workspace alias rejected: {alias} is not {canonical}"
        decision: Decision = []
        for row in conflicts_model.unresolved(conn):
            conflict = conflict_facts(conn, row)
            for stream in list(conflict.values):
                memory = mem.by_stream(conn, stream)
                if memory is not None and home(memory.workspace) != home(row.workspace):
                    decision += settle(stream, [conflict], resolution="dissolved", reason=reason)
        return decision

    def workspaces(self) -> dict[str, Any]:
        """Workspaces, accepted aliases and undecided suggestions (strict: only the caller's)."""
        with self.storage.snapshot():
            result = ws.listing(self.storage.conn)
        if self.settings.isolation == "strict":
            own = self.own_workspace()
            result["workspaces"] = [w for w in result["workspaces"] if w["canonical"] == own]
            result["aliases"] = [a for a in result["aliases"] if a["canonical"] == own]
            result["suggestions"] = [s for s in result["suggestions"] if own in (s["alias"], s["canonical"])]
        return {"ok": True, **result}
