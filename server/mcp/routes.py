"""The catalogue of the four MCP tools: every action, view and task, as data.

A :class:`Route` is an operation's one declaration: the facade method that answers it, the edge
model that validates its ``data`` (its fields, types, limits, enums, times and their meanings),
whether it needs ``authorized: true``, whether it reports progress, its summary and example. The
advertised input schema, ``help``'s field lines and the CLI options of the memory commands are
generated from it (:mod:`server.schemas.describe`, :mod:`server.cli.model_options`). :func:`bind` turns the table into
bound facade methods once, when the server starts: a method that cannot take every field its
model validates stops the start (a field must never be validated and then dropped), and a route
whose method the facade lacks answers ``unavailable``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fact_ledger.server.schemas import admin as a
from fact_ledger.server.schemas import memory as s
from fact_ledger.server.schemas.describe import field_line


@dataclass(frozen=True)
class Route:
    method: str | None  # facade method; None: answered by the MCP layer itself (help)
    model: type[s.EdgeModel]
    summary: str
    example: dict[str, Any] = field(default_factory=dict)
    governed: bool | Callable[[dict[str, Any]], bool] = False  # needs authorized: true
    progress: bool = False  # long task: reports MCP progress when the client asks for it

    def needs_authorization(self, kwargs: dict[str, Any]) -> bool:
        return self.governed(kwargs) if callable(self.governed) else self.governed

    @property
    def fields(self) -> str:
        """The one line of fields ``help`` shows, generated from the edge model."""
        return field_line(self.model, governed=self.governed is True)

    def keywords(self) -> set[str]:
        """What the facade method receives: the model's fields, ``authorized`` turned into
        ``authorization`` (the MCP layer decides which kind, see :mod:`server.mcp.server`)."""
        names = set(self.model.model_fields)
        return names - {"authorized"} | {"authorization"} if "authorized" in names else names


@dataclass(frozen=True)
class Binding:
    """A route's facade method, looked up once; ``progress``: it takes a progress callback."""

    method: Callable[..., Any]
    progress: bool = False


@dataclass(frozen=True)
class ToolSpec:
    name: str
    key: str  # "action" | "view" | "task"
    title: str
    description: str
    routes: dict[str, Route]
    read_only: bool = False


HELP = Route(None, s.HelpData, "this text, or one entry with topic=<name>", {"topic": "find"})

MEMORY = ToolSpec(
    "memory",
    "action",
    "Shared memory",
    (
        "Long-term memory shared by every agent of this user. Store facts with remember, search with "
        "find, open one with read. Results are JSON: {ok, ...} or {ok:false, error:{code, message, field, "
        'did_you_mean}}. Example: {"action":"find","data":{"query":"staging port"}}.'
    ),
    {
        "remember": Route(
            "remember",
            s.RememberData,
            "store a fact (exact duplicates are not stored twice)",
            {"content": "The staging API listens on port 8080", "subject": "staging api", "tags": ["infra"]},
        ),
        "find": Route(
            "find",
            s.FindData,
            "search current memories (English and Chinese)",
            {"query": "staging port", "limit": 5},
        ),
        "read": Route(
            "read",
            s.ReadData,
            "one memory in full, with links",
            {"memory_id": 12},
        ),
        "update": Route(
            "update",
            s.UpdateData,
            "change a memory (protected/locked ones need authorized: true)",
            {"memory_id": 12, "expected_version": 1, "content": "port 8081"},
        ),
        "reinforce": Route(
            "reinforce",
            s.ReinforceData,
            "a signal about a working note; promotes it when the rule holds",
            {"memory_id": 12, "signal": "tool_succeeded", "session_id": "conv-a", "turn": 4},
        ),
        "judge": Route(
            "judge",
            s.JudgeData,
            "record a judgment on a conflict (guidance; changes no memory)",
            {"conflict_id": 3, "winner_id": 12, "rationale": "newer", "pins": {"12": 1, "15": 2}},
        ),
        "status": Route("status", s.Empty, "counts, projection lag, search mode"),
        "help": HELP,
    },
)

REVIEW = ToolSpec(
    "memory_review",
    "view",
    "Review memory (read-only)",
    (
        "Read-only views of the shared memory: history, conflicts, comparisons, audit trail, timelines, "
        'health. Example: {"view":"conflicts","data":{"state":"open"}}.'
    ),
    {
        "overview": Route("overview", s.Empty, "counts by status, source and workspace; open conflicts"),
        "history": Route(
            "history",
            a.HistoryData,
            "every version of a memory",
            {"memory_id": 12},
        ),
        "conflicts": Route(
            "conflicts",
            a.ConflictsData,
            "conflicts by state",
            {"state": "open"},
        ),
        "conflict_detail": Route(
            "conflict_detail",
            a.ConflictDetailData,
            "one claim set, members paged",
            {"conflict_id": 3},
        ),
        "compare": Route(
            "compare",
            a.CompareData,
            "two memories side by side: verdict, word diff, closeness, state paths, reference chains (writes nothing)",
            {"left_id": 12, "right_id": 15},
        ),
        "audit": Route(
            "audit",
            a.AuditData,
            "events of the ledger",
            {"memory_id": 12},
        ),
        "timeline": Route(
            "timeline",
            a.TimelineData,
            "validity intervals",
            {"subject": "staging api"},
        ),
        "doctor": Route("doctor", s.Empty, "health checks and severity"),
        "working": Route(
            "working",
            a.WorkingData,
            "a conversation's working set",
            {"session_id": "conv-a"},
        ),
        "workspaces": Route("workspaces", s.Empty, "workspaces, accepted aliases and suggested aliases"),
        "notices": Route(
            "notices",
            a.NoticesData,
            "semantic notices: pairs close in meaning that differ (advice)",
            {"state": "open"},
        ),
        "health": Route(
            "health",
            a.HealthData,
            "health report: contradiction clusters with suggestions, duplicates, ratios",
            {"limit": 10},
        ),
        "whatif": Route(
            "whatif",
            a.WhatifData,
            "claim sets whose leader or settlement would change under another rule order (writes nothing)",
            {"rule_order": ["protection", "source_type", "event_time", "confidence", "ingest_time"]},
        ),
        "help": HELP,
    },
    read_only=True,
)

_AUTH = ' All actions need "authorized": true (the user asked for it).'
GOVERN = ToolSpec(
    "memory_govern",
    "action",
    "Govern memory (user-authorised)",
    (
        "Explicit changes the user asked for: arbitrate, confirm, retire, supersede, resolve conflicts, "
        "unlock, workspace aliases." + _AUTH + " Where the client supports it the user is asked directly "
        'for locked memories and confirm. Example: {"action":"retire","data":{"memory_id":12,'
        '"reason":"obsolete","authorized":true}}.'
    ),
    {
        "arbitrate": Route(
            "arbitrate",
            a.ArbitrateData,
            "verdict for two memories; apply supersedes the loser",
            {"left_id": 12, "right_id": 15, "apply": True, "authorized": True},
            governed=True,
        ),
        "confirm": Route(
            "confirm",
            a.ConfirmData,
            "mark user_confirmed and lock",
            {"memory_id": 12, "authorized": True},
            governed=True,
        ),
        "retire": Route(
            "retire",
            a.RetireData,
            "retire a memory",
            {"memory_id": 12, "reason": "obsolete", "authorized": True},
            governed=True,
        ),
        "supersede": Route(
            "supersede",
            a.SupersedeData,
            "the winner replaces the loser",
            {"loser_id": 12, "winner_id": 15, "authorized": True},
            governed=True,
        ),
        "resolve_conflict": Route(
            "resolve_conflict",
            a.ResolveConflictData,
            "close a conflict",
            {"conflict_id": 3, "winner_id": 15, "authorized": True},
            governed=True,
        ),
        "erase": Route(
            "erase",
            a.EraseData,
            "erase a memory (or a workspace) for good: only the user, through the client's confirmation",
            {"memory_id": 12, "reason": "the user asked for it to be forgotten", "authorized": True},
            governed=True,
        ),
        "unlock": Route(
            "unlock",
            a.UnlockData,
            "remove the lock of a memory",
            {"memory_id": 12, "authorized": True},
            governed=True,
        ),
        "promote": Route(
            "promote",
            a.UnlockData,  # the same fields: one schema branch serves both
            "make a working note long-term now",
            {"memory_id": 12, "authorized": True},
            governed=True,
        ),
        "accept": Route(
            "accept_alias",
            a.AliasData,
            "accept a workspace alias (alias means canonical)",
            {"alias": "FactLedger", "canonical": "fact-ledger", "authorized": True},
            governed=True,
        ),
        "reject": Route(
            "reject_alias",
            a.AliasData,
            "reject a suggested (or undo an accepted) alias",
            {"alias": "ledger", "canonical": "fact-ledger", "authorized": True},
            governed=True,
        ),
        "apply_suggestion": Route(
            "apply_suggestion",
            a.ApplySuggestionData,
            "apply a health suggestion as one change",
            {"suggestion_id": "settle-3-0123456789ab", "authorized": True},
            governed=True,
        ),
        "accept_alias": Route(
            "accept_entity_alias",
            a.AliasData,
            "an entity alias: claims about alias meet canonical's (health proposes them)",
            {"alias": "张工", "canonical": "张伟", "authorized": True},
            governed=True,
        ),
        "reject_alias": Route(
            "reject_entity_alias",
            a.AliasData,
            "reject (or undo) an entity alias",
            {"alias": "Jon", "canonical": "John", "authorized": True},
            governed=True,
        ),
        "undo": Route(
            "undo",
            a.UndoData,
            "revert a change in one step",
            {"change_id": "0190c0de-0000-7000-8000-000000000000", "authorized": True},
            governed=True,
        ),
        "review_notice": Route(
            "review_notice",
            a.ReviewNoticeData,
            "dismiss or resolve a semantic notice",
            {"notice_id": 4, "state": "dismissed", "authorized": True},
            governed=True,
        ),
        "help": HELP,
    },
)

REPAIR = ToolSpec(
    "memory_repair",
    "task",
    "Repair memory (maintenance)",
    (
        "Maintenance: rebuild projections from the event log, verify the hash chain, replay the JSONL "
        'backup, re-embed, archive. Example: {"task":"verify"}.'
    ),
    {
        "rebuild": Route(
            "rebuild",
            a.RebuildData,
            "regenerate projections from the log",
            {"projection": "search"},
            progress=True,
        ),
        "verify": Route("verify", s.Empty, "hash chain and projection consistency", progress=True),
        "replay_backup": Route(
            "replay_backup",
            a.ReplayBackupData,
            "append the JSONL backup to the log",
            {"dry_run": False, "authorized": True},
            governed=lambda kw: not kw.get("dry_run", True),
            progress=True,
        ),
        "reembed": Route(
            "reembed",
            a.ReembedData,
            "fill missing vectors, or move them to the configured model",
            {"rebuild": False},
            progress=True,
        ),
        "archive": Route(
            "archive",
            a.ArchiveData,
            "archive retired/superseded memories past retention",
            {"dry_run": True},
            progress=True,
        ),
        "sweep": Route(
            "sweep",
            a.SweepData,
            "periodic pass: idle working sets expire, unused memories cool",
            {"dry_run": True},
        ),
        "help": HELP,
    },
)

TOOLS: dict[str, ToolSpec] = {t.name: t for t in (MEMORY, REVIEW, GOVERN, REPAIR)}


def unaccepted(method: Callable[..., Any], route: Route) -> list[str]:
    """The keywords of ``route`` that ``method`` cannot take (empty when it takes them all)."""
    params = inspect.signature(method).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return []
    takes = {n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return sorted(route.keywords() - takes)


def bind(app: object) -> dict[tuple[str, str], Binding]:
    """Every route of every tool with a method on ``app``, keyed by (tool, name).

    Raises :class:`TypeError` when a method cannot take a field its route validates: that is a
    mistake in the code, and it shows when the server starts, not when an agent calls.
    """
    bound: dict[tuple[str, str], Binding] = {}
    for spec in TOOLS.values():
        for name, route in spec.routes.items():
            method = getattr(app, route.method, None) if route.method else None
            if method is None:
                continue
            missing = unaccepted(method, route)
            if missing:
                raise TypeError(
                    f"{type(app).__name__}.{route.method} ({spec.name} {name}) does not accept {', '.join(missing)}"
                )
            takes_progress = route.progress and "progress" in inspect.signature(method).parameters
            bound[(spec.name, name)] = Binding(method, progress=takes_progress)
    return bound


TOPICS = {
    "errors": "Errors: {ok:false, error:{code, message, field?, did_you_mean?}}. Codes: invalid_input "
    "(fix the field), not_found, locked (needs authorized: true), version_conflict (re-read, "
    "retry with the current version), forbidden_workspace (strict isolation), unauthorized "
    "(governance without authorized: true, or the user declined), unavailable (not built yet, "
    "or storage unreachable: nothing stored).",
    "trust": "source_type trust: user_confirmed 100 (locked), document_extracted 70, agent_generated 45, "
    "unknown 10. Conflicts are decided by: user_confirmed/locked, newer event_time, source "
    "trust, confidence, newer ingest. user_confirmed sent by an agent is recorded agent_asserted: "
    "not locked, ranked as agent_generated; only the user confirms (confirm, asked when possible). "
    "event_time may not be before 1900 or over a day ahead.",
    "workspaces": "Isolation (LEDGER_ISOLATION): none; weak ranks your workspace first (+0.2: of equal "
    "matches yours comes first; others' still appear); strict only "
    "sees your workspace (forbidden_workspace otherwise). memory_govern accept/reject "
    "{alias, canonical} joins two names; memory_review workspaces lists suggestions.",
    "paging": "find, conflicts, audit, history and timeline answer has_more and next_cursor (null on the "
    "last page); send cursor with the same query and filters for the next page (limit may change). "
    "Pages hold still while others write.",
    "authorization": "Governance needs authorized: true, recorded as agent_asserted. When the client "
    "supports elicitation the user is asked for locked memories and confirm, "
    "recorded as user_channel; a refusal (or an answer off the form) is unauthorized.",
}


def help_result(spec: ToolSpec, topic: str | None) -> dict[str, Any]:
    """``help``: all entries in one line each, or one entry with its example call."""
    if topic is None:
        return {
            "ok": True,
            "tool": spec.name,
            spec.key + "s": {
                n: (f"{r.summary} — {r.fields}" if r.fields else r.summary) for n, r in spec.routes.items()
            },
            "topics": sorted(TOPICS),
        }
    route = spec.routes.get(topic)
    if route is None and topic in TOPICS:
        return {"ok": True, "topic": topic, "text": TOPICS[topic]}
    if route is None:
        from fact_ledger.ledger.errors import InvalidInput

        known = dict.fromkeys([*spec.routes, *TOPICS])  # memory_review's "workspaces" is a view and a topic: named once
        raise InvalidInput(f"no help topic {topic!r}; topics: {', '.join(known)}", field="topic")
    example = route.example
    if route is HELP:  # one entry of this tool (help is shared: "find" is no topic of memory_review)
        example = {"topic": next(name for name in spec.routes if name != topic)}
    entry = {
        "ok": True,
        "topic": topic,
        "text": route.summary,
        "fields": route.fields,
        "example": {spec.key: topic, "data": example} if example else {spec.key: topic},
    }
    if topic in TOPICS:  # a view named as a general topic ("workspaces"): the view's entry, then the topic
        entry["about"] = TOPICS[topic]
    return entry
