"""The MCP server: four thin tools over the application facade (no business logic here).

Each tool takes ``{"action"|"view"|"task": name, "data": {...}}``, validates ``data`` at the
edge (:mod:`server.schemas.memory`), calls the facade method bound to the route when the server started
(:func:`server.mcp.routes.bind`; a route the facade lacks answers ``unavailable``) and returns one
JSON object as structured content and as text. Errors are
``{"ok": false, "error": {...}}`` with ``isError`` set; no traceback ever reaches an agent.

Facade calls run one at a time (the facade owns one SQLite connection whose write transactions
must not interleave). Short calls run inline on the event loop: they take a millisecond or two,
and a worker-thread hop would cost about as much again on every call. Long tasks (rebuild,
verify, replay, reembed) run in a worker thread so the loop can carry their progress
notifications.

User confirmation (elicitation): for ``confirm``, and for governance on a locked memory, a
resolver asks the user through the client when the client advertises form elicitation — on the
2025 protocol as a server-to-client request, on 2026-07-28 through ``input_required`` — and the
facade records ``user_channel``; a refusal is ``unauthorized``. Clients without elicitation fall
back to the agent's ``authorized: true``, recorded as ``agent_asserted``.

(No ``from __future__ import annotations`` here: the SDK evaluates the tool functions'
annotations, and the resolver closures in :func:`build_server` are only visible at definition.)
"""

import logging
import sys
from collections.abc import Callable
from typing import Annotated, Any

import anyio
import mcp.types as mcp_types
from mcp.server import MCPServer
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Resolve
from pydantic import WithJsonSchema

from fact_ledger.ledger.errors import LedgerError
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from fact_ledger.server.mcp.dispatch import Approval, LedgerTools, fields_under_data
from fact_ledger.server.mcp.routes import GOVERN, MEMORY, REPAIR, REVIEW, TOOLS
from fact_ledger.server.mcp.stdio import run_stdio
from fact_ledger.server.mcp.tool_schemas import tool_schemas
from fact_ledger.server.process import freeze_start_up

INSTRUCTIONS = (
    "fact-ledger: long-term memory shared by this user's agents. Before answering from memory, "
    "memory find; store durable facts with memory remember (subject + tags help). Governance "
    "(memory_govern) only when the user asks, with authorized: true. Each tool has a help entry."
)


class _LedgerServer(MCPServer):
    """The SDK's server, listing each tool's name key as required (the SDK itself must not
    require it: a call without one gets our ``invalid_input``, not the SDK's text error)."""

    async def list_tools(self) -> list[mcp_types.Tool]:
        listed = []
        for tool in await super().list_tools():
            spec = TOOLS.get(tool.name)
            if spec is not None:
                fields = {
                    name: {k: v for k, v in field.items() if k not in ("title", "default")}
                    for name, field in tool.input_schema.get("properties", {}).items()
                }
                tool = tool.model_copy(
                    update={"input_schema": {"type": "object", "properties": fields, "required": [spec.key]}}
                )
            listed.append(tool)
        return listed

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        spec = TOOLS.get(name)
        if spec is not None and isinstance(arguments, dict):
            arguments = fields_under_data(spec, arguments)
        return await super().call_tool(name, arguments, context)


def build_server(app: LedgerApp, tools: LedgerTools | None = None) -> MCPServer:
    """The four tools of the contract on one facade (through ``tools``, its dispatch)."""
    server = _LedgerServer(
        name="fact-ledger", title="fact-ledger", version=_version(), log_level="WARNING", instructions=INSTRUCTIONS
    )
    tools = tools or LedgerTools(app)
    # The advertised schemas, through the SDK's own signature reading: WithJsonSchema sets what
    # clients see while the arguments still reach our edge models unvalidated (every error in
    # our shape). The name stays optional to the SDK so a call without it gets our error too.
    shown = {name: [WithJsonSchema(part) for part in tool_schemas(spec)] for name, spec in TOOLS.items()}

    def key(tool: str) -> Any:
        return Annotated[Any, shown[tool][0]]

    def data_of(tool: str) -> Any:
        return Annotated[Any, shown[tool][1]]

    async def ask_memory(action: Any, data: Any, ctx: Context) -> Any:
        return await tools.ask(MEMORY, action, data, ctx)

    async def ask_govern(action: Any, data: Any, ctx: Context) -> Any:
        return await tools.ask(GOVERN, action, data, ctx)

    async def memory(
        ctx: Context,
        action: key("memory") = None,
        data: data_of("memory") = None,
        approval: Annotated[ElicitationResult[Approval], Resolve(ask_memory)] = None,
    ) -> mcp_types.CallToolResult:
        return await tools.call(MEMORY, action, data, ctx, approval)

    async def memory_review(
        ctx: Context, view: key("memory_review") = None, data: data_of("memory_review") = None
    ) -> mcp_types.CallToolResult:
        return await tools.call(REVIEW, view, data, ctx)

    async def memory_govern(
        ctx: Context,
        action: key("memory_govern") = None,
        data: data_of("memory_govern") = None,
        approval: Annotated[ElicitationResult[Approval], Resolve(ask_govern)] = None,
    ) -> mcp_types.CallToolResult:
        return await tools.call(GOVERN, action, data, ctx, approval)

    async def memory_repair(
        ctx: Context, task: key("memory_repair") = None, data: data_of("memory_repair") = None
    ) -> mcp_types.CallToolResult:
        return await tools.call(REPAIR, task, data, ctx)

    hints = {
        MEMORY.name: mcp_types.ToolAnnotations(read_only_hint=False, destructive_hint=False),
        REVIEW.name: mcp_types.ToolAnnotations(read_only_hint=True),
        GOVERN.name: mcp_types.ToolAnnotations(read_only_hint=False, destructive_hint=True),
        REPAIR.name: mcp_types.ToolAnnotations(read_only_hint=False, destructive_hint=False),
    }
    for fn in (memory, memory_review, memory_govern, memory_repair):
        spec = TOOLS[fn.__name__]
        server.add_tool(
            fn,
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=hints[spec.name],
            structured_output=False,
        )
    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fact-ledger")
    except PackageNotFoundError:
        return "0"


HTTP_PATH = "/mcp"  # the SDK's default streamable HTTP endpoint
MODEL_POLL_S = 0.05  # how often start-up looks whether the model has loaded
SWEEP_FIRST_S = 60.0  # the periodic pass (server/app/conversations.py) first runs this long after start
SWEEP_EVERY_S = 3600.0  # and then once an hour
HEALTH_FIRST_S = 120.0  # the scheduled health report pass first runs this long after start (or sooner)
REPLAY_POLL_S = 1.0  # how often ledger serve looks whether backed-up writes can land (between calls)
SETTLE_POLL_S = 0.05  # how often it looks whether its writes await full text and the timeline


def start_lines(app: LedgerApp, *, http: bool, port: int, terminal: bool) -> list[str]:
    """What ``serve`` says on stderr: where and how it serves (only to a person at a terminal:
    a client reading the pipe needs no greeting), and always why the database is not usable."""
    lines = []
    if terminal:
        where = f"streamable HTTP at http://127.0.0.1:{port}{HTTP_PATH}" if http else "stdio"
        lines.append(f"fact-ledger: serving {app.storage.log_location()} over {where} (Ctrl-C to stop)")
    degraded = getattr(app, "degraded", None)
    if degraded:
        lines.append(f"fact-ledger: database unusable ({degraded['reason']}): {degraded['message']}")
    return lines


def run_server(settings: Settings, *, http: bool = False, port: int = 8765) -> None:
    """Serve until the client goes away. Logs go to stderr (WARNING); stdout is the protocol."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        app = LedgerApp(settings, join_progress=join_progress_printer())
    except LedgerError as exc:
        print(f"error ({exc.code}): {exc.message}", file=sys.stderr)
        sys.exit(1)
    for line in start_lines(app, http=http, port=port, terminal=sys.stderr.isatty()):
        print(line, file=sys.stderr, flush=True)
    app.start_log_follower()  # on a team's PostgreSQL log: pull what other machines write
    app.storage.auto_replay = True  # this machine's backed-up writes land by themselves once the log is back
    try:
        tools = LedgerTools(app)
        server = build_server(app, tools)
        freeze_start_up()
        anyio.run(_serve, server, tools, http, port)
    finally:
        app.close()


async def _serve(server: MCPServer, tools: LedgerTools, http: bool, port: int) -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(_start_semantic, tools)
        group.start_soon(_sweep_periodically, tools)
        group.start_soon(_health_periodically, tools)
        group.start_soon(_replay_when_back, tools)
        group.start_soon(_settle_between_calls, tools)
        if http:
            await server.run_streamable_http_async(host="127.0.0.1", port=port)
        else:
            await run_stdio(server)
        group.cancel_scope.cancel()


def join_progress_printer(every: int = 20_000) -> Callable[[int, int], None]:
    """Stderr lines while a new read-model file copies, then folds, a long log (a machine
    joining a team's log): one every ``every`` events, and the last."""
    shown = [-every]
    phase = ["copying"]

    def show(done: int, total: int) -> None:
        if total == 0:  # a fresh ledger: nothing to build, nothing to say
            return
        if done < shown[0]:  # the copy is done: the fold starts again from 0
            phase[0], shown[0] = "folding", -every
        if done != shown[0] and (done - shown[0] >= every or done == total):
            shown[0] = done
            print(f"fact-ledger: building read models from the log: {phase[0]} {done}/{total} events", file=sys.stderr)

    return show


async def _settle_between_calls(tools: LedgerTools) -> None:
    """Between tool calls, within ``SETTLE_POLL_S`` of a write: full text and the timeline fold
    what the writes left them (projections/runner.py), so neither the next ``find`` of this
    server nor another process's read waits for it."""
    app = tools.app
    while True:
        await anyio.sleep(SETTLE_POLL_S)
        if app.unsettled_writes():
            await tools.run_alone(app.settle)


async def _replay_when_back(tools: LedgerTools) -> None:
    """Between tool calls, once a second: when the log takes writes again, this machine's
    backed-up writes replay (``Storage.replay_if_due``; a stat of the backup file when nothing
    is pending), so they land even if no agent calls; the next reply carries the notice."""
    app = tools.app
    while True:
        await anyio.sleep(REPLAY_POLL_S)
        try:
            await tools.run_alone(app.replay_due)
        except Exception as exc:  # the log still away, or the read models not built yet: next second
            print(f"fact-ledger: backup replay waits: {exc}", file=sys.stderr)


async def _sweep_periodically(tools: LedgerTools) -> None:
    """The periodic pass, between tool calls: idle conversations' working memories expire and
    unused long-term memories cool, each recorded as an event (so a rebuild repeats it)."""
    await anyio.sleep(SWEEP_FIRST_S)
    while True:
        try:
            await tools.run_alone(tools.app.sweep)
        except Exception as exc:  # a database that is missing or degraded: try again next time
            print(f"fact-ledger: periodic pass skipped: {exc}", file=sys.stderr)
        await anyio.sleep(SWEEP_EVERY_S)


async def _health_periodically(tools: LedgerTools) -> None:
    """The health report pass on its schedule (``health_every_minutes``; 0: never), between tool
    calls: it reads under a snapshot and appends one ``HealthChecked``, a point of the trend. It
    never applies a suggestion."""
    every = tools.app.settings.health_every_minutes * 60
    if every <= 0:
        return
    await anyio.sleep(min(HEALTH_FIRST_S, every))
    while True:
        try:
            await tools.run_alone(tools.app.record_health)
        except Exception as exc:  # a database that is missing or degraded: try again next time
            print(f"fact-ledger: health pass skipped: {exc}", file=sys.stderr)
        await anyio.sleep(every)


async def _start_semantic(tools: LedgerTools) -> None:
    """The embedding model loads in a thread while the server already answers (a load takes
    seconds, longer than some clients wait for ``initialize``; ``find`` uses full text until
    then). Once it is ready, between two tool calls, the vectors worker starts (vectors follow
    the log in the background), the nearest-neighbour index is read, so the first ``find``
    does not pay for it, and the model is lent to CLI calls on this database
    (:mod:`server.app.model_lender`)."""
    app = tools.app
    loaded = app.load_model_in_background()
    while not loaded.is_set():
        await anyio.sleep(MODEL_POLL_S)
    await tools.run_alone(lambda: (app.start_vector_worker(), app.warm_search(), app.lend_model()))
