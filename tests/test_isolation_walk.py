"""Strict isolation is one rule with many doors: every read path an agent has, walked from a
second workspace, shows nothing of the first.

An agent of workspace ``beta`` (``LEDGER_ISOLATION=strict``, through the real MCP tools in
process) walks every view it can call — each ``memory_review`` view, ``find`` and ``read`` with
and without as-of, sections, notices, history, audit, timeline, conflicts with their counts and
totals, status and doctor — once before workspace ``alpha`` writes anything and once after alpha
has stored memories, contradicted itself into open, judged and resolved claim sets, updated,
retired and confirmed memories, written a sectioned memory and raised semantic notices. The two
walks must be equal (ids, contents, counts, totals, has_more) but for the few fields that follow
the shared log's head (``LOG_HEAD``, with the reason), and no answer may name
alpha's words or alpha's ids. Alpha's ids asked for by id are refused or unknown.

A view added to the MCP tools must join the walk (``WALKED``) or be named a write or a
maintenance task (``NOT_READS``): ``test_every_route_is_walked_or_named_a_write`` fails until it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from fact_ledger.ledger.arbiter import RULE_ORDER
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.projections import notices
from fact_ledger.projections.indexer import Indexer
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from fact_ledger.server.mcp.routes import TOOLS
from fact_ledger.server.mcp.server import build_server

pytestmark = pytest.mark.anyio

SECRET = "zorblax"  # a word only alpha's memories hold
BETA_SESSION = "conv-beta"  # a conversation with a working note in beta
EVERY_PAIR_CLOSE = notices.Thresholds(similarity=-1.0, duplicate_similarity=2.0)
LONG = "\n\n".join(
    f"## Part {i}\n\n" + " ".join(f"The {SECRET} runbook step {i}.{j} restarts the gateway pool." for j in range(40))
    for i in range(4)
)

# Every route of the four tools: walked here, or not a read (with why).
WALKED = {
    ("memory", "find"),
    ("memory", "read"),
    ("memory", "status"),
    *(("memory_review", name) for name in TOOLS["memory_review"].routes if name != "help"),
}
NOT_READS = {
    **{("memory", n): "writes" for n in ("remember", "update", "judge", "reinforce")},
    **{("memory_govern", n): "writes (user-authorised)" for n in TOOLS["memory_govern"].routes if n != "help"},
    # Maintenance of the whole log (rebuild, verify the chain, replay, re-embed, archive): tasks,
    # not views of memories; verify's `events` is the shared log's head, like status's.
    **{("memory_repair", n): "maintenance of the whole log" for n in TOOLS["memory_repair"].routes if n != "help"},
    **{(tool, "help"): "static text" for tool in TOOLS},
}

# What follows the shared log rather than a workspace: the log is one sequence for every
# workspace, so its head (``events``), the positions an answer was read at (``recorded_position``,
# and the bound inside a paging cursor), how far each read model has folded it (``position``,
# ``lag``) and the doctor's hash chain over the whole log move when alpha writes. Full-text
# scores are bm25 over the whole index's term statistics: their value moves (the hits and their
# order must not).
LOG_HEAD = {"events", "recorded_position", "position", "lag"}
SHARED_STATISTICS = {"score"}
# How long this process took (the health pass, its recent finds): wall-clock, not content.
TIMINGS = {"find_latency_ms", "pass_ms"}


@pytest.fixture
def ledger(tmp_path: Path, tiny_gguf: Path) -> Iterator[dict[str, LedgerApp]]:
    db = str(tmp_path / "ledger.db")
    embedding = Embedding(model=str(tiny_gguf))
    apps = {
        ws: LedgerApp(
            Settings(db=db, client="test", agent_id=ws, workspace=ws, isolation="strict", embedding=embedding)
        )
        for ws in ("alpha", "beta")
    }
    yield apps
    for app in apps.values():
        app.close()


def _index(app: LedgerApp) -> None:
    model = app.embedding_model()
    assert model is not None
    Indexer(app.store, model, thresholds=EVERY_PAIR_CLOSE).run()


def seed_beta(beta: LedgerApp) -> dict[str, int]:
    first = beta.remember("The gateway port is 7070", subject="gateway port")["memory_id"]
    second = beta.remember("The gateway port is 9090", subject="gateway port")["memory_id"]
    beta.remember("the budget is 50k", subject="budget")
    beta.remember("the budget is 80k", subject="budget")
    beta.update(first, content="The gateway port is 7071")
    beta.remember("The gateway pool restarts nightly", tier="working", session_id=BETA_SESSION)  # a working note
    _index(beta)
    while beta.semantic_notice():  # the reply's one-time lines about beta's own notices, said before the walks
        pass
    conflict = next(c["conflict_id"] for c in beta.conflicts()["conflicts"] if first in c["members"])
    return {"first": first, "second": second, "conflict": conflict, "position": beta.store.last_position()}


def seed_alpha(alpha: LedgerApp) -> dict[str, list[int]]:
    """Everything a workspace can hold, in alpha: each kind of claim set, versions, notices."""

    def remember(content: str, subject: str = "gateway port", **kw: Any) -> int:
        return int(alpha.remember(content, subject=subject, **kw)["memory_id"])

    ids = [remember(f"The {SECRET} gateway port is {port}") for port in (1111, 2222, 3333)]
    judged = [remember(f"The {SECRET} cache ttl is {t}s", subject="cache ttl") for t in (10, 20)]
    resolved = [remember(f"The {SECRET} region is {r}", subject="region") for r in ("north", "south")]
    notes = [remember(f"the {SECRET} budget is {b}", subject="budget") for b in ("60k", "90k")]
    long = remember(LONG, subject="runbook")
    confirmed = remember(f"The {SECRET} owner is Dana", subject="owner", source_type="user_confirmed")
    alpha.confirm(confirmed, authorization=AUTH_USER)
    asserted = remember(f"The {SECRET} on-call is Lee", subject="on-call", source_type="user_confirmed")  # by an agent
    alpha.update(ids[0], content=f"The {SECRET} gateway port is 1112")
    alpha.retire(ids[2], reason=f"{SECRET} retired", authorization=AUTH_USER)
    sets = {c["conflict_id"]: c["members"] for c in alpha.conflicts(state="all")["conflicts"]}
    judged_set = next(cid for cid, members in sets.items() if judged[0] in members)
    alpha.judge(judged_set, winner_id=judged[1], rationale=f"{SECRET} newer")
    resolved_set = next(cid for cid, members in sets.items() if resolved[0] in members)
    alpha.resolve_conflict(resolved_set, winner_id=resolved[0], authorization=AUTH_USER)
    _index(alpha)
    states = {c["state"] for c in alpha.conflicts(state="all")["conflicts"]}
    assert states == {"open", "judged", "resolved"}  # every kind of set, for the walk to miss
    return {
        "memories": [*ids, *judged, *resolved, *notes, long, confirmed, asserted],
        "conflicts": sorted(sets),
        "notices": [n["notice_id"] for n in alpha.notices(state="all")["notices"]],
    }


async def walk(app: LedgerApp, own: dict[str, int]) -> dict[str, Any]:
    """Every read an agent has, through the MCP tools: label -> the structured answer."""
    seen: dict[str, Any] = {}
    async with Client(build_server(app)) as client:

        async def call(label: str, tool: str, key: str, name: str, data: dict[str, Any]) -> None:
            result = await client.call_tool(tool, {key: name, "data": data})
            assert isinstance(result.structured_content, dict), label
            seen[label] = result.structured_content

        async def find(label: str, data: dict[str, Any]) -> None:
            await call(label, "memory", "action", "find", data)

        for query in ("gateway port", "budget", SECRET, "", "runbook step restarts"):
            await find(f"find {query!r}", {"query": query, "limit": 50})
        await find("find inactive", {"query": "gateway", "include_inactive": True, "limit": 50})
        await find("find page", {"query": "the", "limit": 1})
        cursor = seen["find page"].get("next_cursor")
        if cursor:
            await find("find page 2", {"query": "the", "limit": 1, "cursor": cursor})
        await find("find as of event time", {"query": "gateway", "as_of_event_time": "2100-01-01T00:00:00Z"})
        await find("find as of recorded", {"query": "gateway", "as_of_recorded": own["position"]})
        for label, data in (
            ("read", {"memory_id": own["first"]}),
            ("read as of recorded", {"memory_id": own["first"], "as_of_recorded": own["position"]}),
            ("read as of event time", {"memory_id": own["first"], "as_of_event_time": "2100-01-01T00:00:00Z"}),
            ("read sections", {"memory_id": own["first"], "sections": "all"}),
        ):
            await call(label, "memory", "action", "read", data)
        await call("status", "memory", "action", "status", {})

        review = [
            ("overview", {}),
            ("history", {"memory_id": own["first"]}),
            *((f"conflicts {state}", {"state": state}) for state in ("open", "judged", "resolved", "all")),
            ("conflicts page", {"state": "all", "limit": 1}),
            ("conflict_detail", {"conflict_id": own["conflict"]}),
            ("compare", {"left_id": own["first"], "right_id": own["second"]}),
            ("audit", {"limit": 1000}),
            ("audit by type", {"type": "MemoryRecorded", "limit": 1000}),
            ("audit of a memory", {"memory_id": own["first"]}),
            ("audit page", {"limit": 1}),
            ("timeline", {"subject": "gateway port"}),
            ("timeline of a memory", {"memory_id": own["first"]}),
            ("timeline as of", {"subject": "gateway port", "as_of_recorded": own["position"]}),
            ("doctor", {}),
            ("workspaces", {}),
            *((f"notices {state}", {"state": state}) for state in ("open", "all")),
            ("notices page", {"state": "all", "limit": 1}),
            ("health", {}),
            ("whatif", {"rule_order": ["event_time", *(r for r in RULE_ORDER if r != "event_time")]}),
            ("working", {"session_id": BETA_SESSION}),
        ]
        for label, data in review:
            await call(label, "memory_review", "view", label.split()[0], data)
        # A page exactly as long as beta's own intervals: has_more must stay false.
        shown = len(seen["timeline"]["intervals"])
        await call("timeline page", "memory_review", "view", "timeline", {"subject": "gateway port", "limit": shown})
        views = {label.split()[0] for label, _ in review}
        assert views == {name for tool, name in WALKED if tool == "memory_review"}, "walk every review view"
    return seen


def _comparable(value: Any) -> Any:
    """The answer without what follows the shared log's head (see ``LOG_HEAD``)."""
    if isinstance(value, dict):
        if value.get("name") == "hash_chain":  # doctor: intact over N events (the whole log)
            return {k: v for k, v in value.items() if k not in ("count", "message")}
        return {
            k: _cursor(v) if k == "next_cursor" else _comparable(v)
            for k, v in value.items()
            if not (k in LOG_HEAD and isinstance(v, int)) and k not in SHARED_STATISTICS | TIMINGS
        }
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def _cursor(cursor: Any) -> Any:
    """A paging cursor without the log position it is bound to (its ``b``)."""
    if not isinstance(cursor, str):
        return cursor
    fields = cursor.split("~")
    return fields[:1] + fields[2:]  # paging's "a~b~f~p~c~s"


def _differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    out = []
    for label in before:
        one, other = _comparable(before[label]), _comparable(after[label])
        if one != other:
            keys = sorted(k for k in {*one, *other} if one.get(k) != other.get(k)) if isinstance(one, dict) else []
            shown = (json.dumps(x, sort_keys=True)[:1500] for x in (one, other))
            out.append(f"{label} (differs in {keys}):\n  before {next(shown)}\n  after  {next(shown)}")
    return out


def test_every_route_is_walked_or_named_a_write() -> None:
    routes = {(tool, name) for tool, spec in TOOLS.items() for name in spec.routes}
    assert not WALKED & set(NOT_READS)
    assert routes == WALKED | set(NOT_READS), "a new view must join the isolation walk (WALKED)"


def test_strict_conflict_lists_count_only_the_callers_sets(tmp_path: Path) -> None:
    """Issue 29, point 11: a zephyr agent was told `{"conflicts": [], "total": 7}`."""
    db = str(tmp_path / "ledger.db")
    aurora, zephyr = (
        LedgerApp(Settings(db=db, client="test", workspace=ws, isolation="strict")) for ws in ("aurora", "zephyr")
    )
    try:
        for service in ("api", "db", "cache"):
            for port in (7000, 8000):
                aurora.remember(f"The {service} port is {port}", subject=f"{service} port")
        assert aurora.conflicts(state="all")["total"] == 3
        assert zephyr.status()["memories"] == zephyr.status()["open_conflicts"] == 0
        assert zephyr.conflicts(state="all")["total"] == 0
        mine = [zephyr.remember(f"The zephyr queue size is {n}", subject="queue size")["memory_id"] for n in (5, 6)]
        for state in ("open", "all"):
            seen = zephyr.conflicts(state=state, limit=1)
            assert seen["total"] == 1 and seen["has_more"] is False and seen["next_cursor"] is None
            assert [c["members"] for c in seen["conflicts"]] == [mine]
        assert zephyr.conflicts(state="resolved") == {
            "ok": True,
            "conflicts": [],
            "total": 0,
            "has_more": False,
            "next_cursor": None,
        }
        assert zephyr.status()["open_conflicts"] == 1 and zephyr.status()["memories"] == 2
    finally:
        aurora.close()
        zephyr.close()


def test_strict_notices_list_only_the_callers_workspace(ledger: dict[str, LedgerApp]) -> None:
    """The notices listing and the reply's notice line take the caller's scope (issue 33, point 1)."""
    alpha, beta = ledger["alpha"], ledger["beta"]
    alpha.remember(f"the {SECRET} budget is 60k")
    alpha.remember(f"the {SECRET} budget is 90k")
    _index(alpha)
    assert [n["workspace"] for n in alpha.notices(state="all")["notices"]] == ["alpha"]
    assert beta.semantic_notice() is None
    for state in ("open", "all"):
        assert beta.notices(state=state) == {"ok": True, "notices": [], "has_more": False, "next_cursor": None}


@dataclass
class Walked:
    """One ledger walked by beta before and after alpha wrote (shared by the tests below: the
    seeding and the two walks are the slow part)."""

    beta: LedgerApp
    own: dict[str, int]
    theirs: dict[str, list[int]]
    before: dict[str, Any]
    after: dict[str, Any]


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory, tiny_gguf: Path) -> Iterator[Walked]:
    db = str(tmp_path_factory.mktemp("walk") / "ledger.db")
    embedding = Embedding(model=str(tiny_gguf))
    alpha, beta = (
        LedgerApp(Settings(db=db, client="test", agent_id=ws, workspace=ws, isolation="strict", embedding=embedding))
        for ws in ("alpha", "beta")
    )
    try:
        own = seed_beta(beta)
        before = anyio.run(walk, beta, own)
        theirs = seed_alpha(alpha)
        yield Walked(beta, own, theirs, before, anyio.run(walk, beta, own))
    finally:
        alpha.close()
        beta.close()


def test_nothing_of_another_workspace_shows_on_any_read_path(walked: Walked) -> None:
    before, after = walked.before, walked.after
    assert set(after) == set(before)
    differences = _differences(before, after)
    assert not differences, "\n".join(differences)
    text = json.dumps(list(after.values()))
    assert SECRET not in text and "alpha" not in text
    theirs = walked.theirs
    assert theirs["memories"] and theirs["conflicts"] and theirs["notices"]


async def test_another_workspaces_ids_asked_for_by_id_show_nothing(walked: Walked) -> None:
    beta, own, theirs = walked.beta, walked.own, walked.theirs
    answers: dict[str, dict[str, Any]] = {}
    async with Client(build_server(beta)) as client:
        for memory_id in theirs["memories"]:
            for tool, key, name, data in (
                ("memory", "action", "read", {}),
                ("memory", "action", "read", {"as_of_recorded": own["position"] + 40}),
                ("memory", "action", "read", {"as_of_event_time": "2100-01-01T00:00:00Z"}),
                ("memory", "action", "read", {"sections": "all"}),
                ("memory_review", "view", "history", {}),
                ("memory_review", "view", "audit", {}),
                ("memory_review", "view", "timeline", {}),
            ):
                result = await client.call_tool(tool, {key: name, "data": {"memory_id": memory_id, **data}})
                answers[f"{name} {memory_id} {data}"] = result.structured_content or {}
            compared = await client.call_tool(
                "memory_review", {"view": "compare", "data": {"left_id": own["first"], "right_id": memory_id}}
            )
            answers[f"compare {memory_id}"] = compared.structured_content or {}
        named = await client.call_tool("memory", {"action": "find", "data": {"query": SECRET, "workspace": "alpha"}})
        answers["find in alpha by name"] = named.structured_content or {}
        for conflict_id in theirs["conflicts"]:
            result = await client.call_tool(
                "memory_review", {"view": "conflict_detail", "data": {"conflict_id": conflict_id}}
            )
            answers[f"conflict_detail {conflict_id}"] = result.structured_content or {}
    for label, answer in answers.items():
        assert SECRET not in json.dumps(answer) and "alpha" not in json.dumps(answer), label
        if answer.get("ok"):  # an answer, then an empty one
            assert answer.get("events", answer.get("intervals")) == [], label
        else:
            assert answer["error"]["code"] in ("forbidden_workspace", "not_found"), label
