"""From a tool call to the facade: routes, edge validation, identity, one call at a time, and the
user's confirmation (elicitation) where a change needs it. :mod:`server.mcp.server` wires this
into the SDK."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Any

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp.types as mcp_types
from mcp.server.elicitation import AcceptedElicitation
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Elicit
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, ConfigDict, WithJsonSchema

from fact_ledger.ledger.errors import InvalidInput, LedgerError, Unauthorized, Unavailable, closest
from fact_ledger.ledger.log.events import AUTH_AGENT, AUTH_USER
from fact_ledger.projections.workspaces import words as workspace_words
from fact_ledger.server.app import credentials
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from fact_ledger.server.mcp import compact as mcp_compact
from fact_ledger.server.mcp.routes import GOVERN, Route, ToolSpec, bind, help_result
from fact_ledger.server.schemas.admin import memory_ids
from fact_ledger.server.schemas.memory import HelpData

log = logging.getLogger("fact_ledger.mcp")


NOT_ASKED = "not_asked"
ASK_FAILED = "ask_failed"  # the client advertised elicitation but could not answer
CHECK_FAILED = "check_failed"  # deciding whether to ask crashed: refuse rather than skip the user
BAD_ANSWER = "bad_answer"  # the client answered, but not with the form asked for: a refusal


@dataclass(frozen=True)
class Refused:
    """What the call would be refused with, found before asking: the user is not asked to approve
    a change that cannot happen (erasing a memory that does not exist or is erased already)."""

    error: LedgerError


_INPUT_REQUIRED_VERSION = "2026-07-28"  # elicitation travels inside input_required from here on


# Nothing but {"approve": true|false} counts as an answer, yet the model parses any object: an
# answer off the form then reaches _verdict, which refuses it in our own error shape (the SDK's
# own check would end the call with a bare text error).
class Approval(BaseModel):
    """The form the user sees: one checkbox."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"required": ["approve"], "additionalProperties": False})
    approve: Annotated[Any, WithJsonSchema({"type": "boolean", "description": "Allow this change"})] = None

    @property
    def on_form(self) -> bool:
        return type(self.approve) is bool and not self.model_extra


def _result(payload: dict[str, Any], *, error: bool = False) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=mcp_compact.dumps(payload))],
        structured_content=payload,
        is_error=error,
    )


def _error(exc: LedgerError, notices: list[str] | None = None) -> mcp_types.CallToolResult:
    """A refusal; ``notices``: what the call should know besides (fields it sent beside ``data``)."""
    said = [credentials.scrubbed(n) for n in notices or ()]  # they may name a field as it was sent
    return _result(
        {"ok": False, "error": credentials.scrub(exc).to_dict(), **({"notices": said} if said else {})}, error=True
    )


def _data(data: Any) -> Any:
    """Some clients send ``data`` as a JSON string: accept it when it holds an object."""
    if isinstance(data, str):
        if not data.strip():
            return {}
        try:
            return json.loads(data)
        except ValueError:
            raise InvalidInput("data must be a JSON object", field="data") from None
        except RecursionError:
            raise InvalidInput("data nests too deep to read", field="data") from None
    return data


# What the agent sent beside ``data`` (the SDK drops arguments its tool signature lacks): set by
# :func:`fields_under_data` for the call in flight, read back as a notice.
_BESIDE_DATA: contextvars.ContextVar[tuple[tuple[str, ...], tuple[str, ...]]] = contextvars.ContextVar(
    "beside_data", default=((), ())
)


def fields_under_data(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments with the fields an agent put beside ``data`` moved into it.

    Agents often flatten a call (``{"action": "remember", "content": …}``); the SDK would drop
    those fields and the call would fail on a field it never saw. ``data`` sent as a JSON string
    is read first (as the edge reads it); a field ``data`` does not hold moves in, one it holds
    stays as ``data`` says. The answer names both (:func:`beside_data_notices`)."""
    beside = {k: v for k, v in arguments.items() if k not in (spec.key, "data")}
    if not beside:
        _BESIDE_DATA.set(((), ()))
        return arguments
    data = arguments.get("data")
    if isinstance(data, str):
        with contextlib.suppress(InvalidInput):  # not JSON: it stays a string, reported below
            data = _data(data)
    if data is None:
        data = {}
    if not isinstance(data, dict):  # not JSON, a list or a number: the edge reports it as it is
        _BESIDE_DATA.set(((), tuple(beside)))
        return {k: v for k, v in arguments.items() if k not in beside}
    moved = tuple(k for k in beside if k not in data)
    _BESIDE_DATA.set((moved, tuple(k for k in beside if k in data)))
    return {spec.key: arguments.get(spec.key), "data": {**data, **{k: beside[k] for k in moved}}}


def beside_data_notices(unknown: tuple[str, ...] = ()) -> list[str]:
    """What the call's answer says of the fields sent beside ``data``; ``unknown``: the fields the
    edge then ignored as unknown, which its own notice names instead."""
    moved, ignored = _BESIDE_DATA.get()
    moved = tuple(k for k in moved if k not in unknown)
    notices = []
    if moved:
        notices.append(f"fields go under data; read {', '.join(moved)} from beside it this time")
    if ignored:
        notices.append(f"ignored field(s) beside data: {', '.join(ignored)} (data says otherwise)")
    return notices


def _route(spec: ToolSpec, name: Any) -> Route:
    route = spec.routes.get(name) if isinstance(name, str) else None
    if name is None or name == "":
        raise InvalidInput(f"{spec.key} is required; one of: {', '.join(spec.routes)}", field=spec.key)
    if route is None:
        raise InvalidInput(
            f"unknown {spec.key} {name!r}; one of: {', '.join(spec.routes)}",
            field=spec.key,
            did_you_mean=closest(name, spec.routes, cutoff=0.6) if name else None,
        )
    return route


def _verdict(outcome: Any) -> str:
    """approved | refused | not_asked | ask_failed, whatever path the question took."""
    inner = outcome.data if isinstance(outcome, AcceptedElicitation) else outcome
    if isinstance(inner, AcceptedElicitation):  # asked synchronously by the resolver itself
        inner = inner.data
    if isinstance(inner, Approval):
        if not inner.on_form:
            return BAD_ANSWER
        return "approved" if inner.approve else "refused"
    if getattr(inner, "action", None) in ("decline", "cancel"):
        return "refused"
    return inner if inner in (ASK_FAILED, CHECK_FAILED, BAD_ANSWER) else NOT_ASKED


def _snippet(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LedgerTools:
    """Dispatch from tool calls to the facade, with identity, locking and elicitation."""

    def __init__(self, app: LedgerApp) -> None:
        self.app = app
        self.settings = app.settings
        self._lock = anyio.Lock()
        self._routes = bind(app)
        self._notices = [
            fn for fn in (getattr(app, "backup_notice", None), getattr(app, "semantic_notice", None)) if fn is not None
        ]
        self._conflict_detail = getattr(app, "conflict_detail", None)

    async def run_alone(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the facade in a worker thread while no tool call runs (start-up work)."""
        return await self._run(fn, {}, thread=True)

    async def _run(
        self, fn: Callable[..., Any], kwargs: dict[str, Any], settings: Settings | None = None, *, thread: bool = False
    ) -> Any:
        async with self._lock:
            self.app.settings = settings or self.settings
            if thread:
                return await anyio.to_thread.run_sync(functools.partial(fn, **kwargs))
            return fn(**kwargs)

    def _caller(self, ctx: Context | None) -> Settings:
        """The configured identity; an unnamed client is named by its MCP ``clientInfo``."""
        if self.settings.client != "unknown" or ctx is None:
            return self.settings
        try:
            params = ctx.session.client_params
            name = params.client_info.name if params is not None else ""
        except (AttributeError, ValueError, LookupError):
            name = ""
        return replace(self.settings, client=name[:64]) if name else self.settings

    # -- calls -------------------------------------------------------------------------------
    async def call(
        self, spec: ToolSpec, name: Any, data: Any, ctx: Context | None, approval: Any = None
    ) -> mcp_types.CallToolResult:
        try:
            return _result(await self._dispatch(spec, name, data, ctx, approval))
        except LedgerError as exc:
            return _error(exc, beside_data_notices())
        except Exception as exc:  # never a traceback to an agent; the log has it
            log.exception("%s %s failed", spec.name, name)
            return _error(LedgerError(f"internal error ({type(exc).__name__}); see the server log"))

    async def _dispatch(
        self, spec: ToolSpec, name: Any, data: Any, ctx: Context | None, approval: Any
    ) -> dict[str, Any]:
        route = _route(spec, name)
        data = _data(data)
        if route.method is None:
            return help_result(spec, HelpData.parse(data).topic)
        model = route.model.parse(data)
        kwargs = model.to_kwargs()
        authorized = getattr(model, "authorized", False) is True
        if route.needs_authorization(kwargs) and not authorized:
            raise Unauthorized(f"{name} needs authorized: true (only when the user asked for it)", field="authorized")
        inner = approval.data if isinstance(approval, AcceptedElicitation) else approval  # as the resolver said
        if isinstance(inner, Refused):
            raise inner.error
        notices = beside_data_notices(tuple(model.ignored))
        if model.ignored:
            notices.append(credentials.scrubbed(f"ignored unknown field(s): {', '.join(model.ignored)}"))
        if "authorized" in type(model).model_fields:
            verdict = _verdict(approval)
            if verdict == "refused":
                raise Unauthorized("the user declined this change; nothing was written", field="authorized")
            if verdict == BAD_ANSWER:
                raise Unauthorized(
                    "the answer did not match the approval form (approve: true|false); nothing was written",
                    field="authorized",
                )
            if verdict == CHECK_FAILED:
                raise LedgerError("internal error while preparing the user's confirmation; see the server log")
            if verdict == ASK_FAILED:  # first: the answer keeps at most three notices
                notices.insert(0, "could not ask the user; recorded as agent_asserted")
            kwargs["authorization"] = "" if not authorized else AUTH_USER if verdict == "approved" else AUTH_AGENT
        bound = self._routes.get((spec.name, name))
        if bound is None:
            raise Unavailable(f"{spec.name} {name} is not available yet", field=spec.key)
        if bound.progress and ctx is not None:
            kwargs["progress"] = _progress_reporter(ctx)
        result = await self._run(bound.method, kwargs, self._caller(ctx), thread=route.progress)
        pending = await self._pending_work()
        return mcp_compact.compact(
            spec.name, str(name), result, query=kwargs.get("query", ""), notices=notices, after=pending
        )

    async def _pending_work(self) -> list[str]:
        """Work an agent should know about whatever it asked: a backup awaiting replay, and at
        most one semantic notice (meaning is off, or two memories seem to disagree)."""

        def collect() -> list[str]:  # one turn on the facade for both
            out = []
            for notice in self._notices:
                try:
                    text = notice()
                except LedgerError:
                    continue
                if text:
                    out.append(text)
            return out

        return await self._run(collect, {})

    # -- elicitation -------------------------------------------------------------------------
    async def ask(self, spec: ToolSpec, name: Any, data: Any, ctx: Context) -> Any:
        """Resolver: ask the user when this call confirms or governs a locked memory."""
        caps = ctx.client_capabilities
        elicitation = caps.elicitation if caps is not None else None
        if elicitation is None or (elicitation.form is None and elicitation.url is not None):
            return NOT_ASKED
        try:
            question = await self._question(spec, name, _data(data))
        except LedgerError as exc:
            return Refused(exc)  # the call reports it, and nobody is asked
        except Exception:
            log.exception("%s %s: could not decide whether to ask the user", spec.name, name)
            return CHECK_FAILED
        if question is None:
            return NOT_ASKED
        version = ctx.protocol_version
        if version is not None and is_version_at_least(version, _INPUT_REQUIRED_VERSION):
            return Elicit(question, Approval)
        try:
            return await ctx.elicit(question, Approval)
        except ValueError as exc:  # answered, but not the form: never read as consent
            log.warning("elicitation answer refused: %s", exc)
            return BAD_ANSWER
        except Exception as exc:  # advertised, but the client could not answer
            log.warning("elicitation failed: %s", exc)
            return ASK_FAILED

    async def _question(self, spec: ToolSpec, name: Any, data: Any) -> str | None:
        if not isinstance(name, str) or (spec.name, name) not in _ASKING:
            return None
        model = _route(spec, name).model.parse(data)
        if not getattr(model, "authorized", False):
            return None
        if name == "arbitrate" and not getattr(model, "apply", False):
            return None
        if name == "erase":  # always the user's own answer: an agent's authorized: true never erases
            return await self._erase_question(model)
        ids = memory_ids(model)
        if name == "resolve_conflict":
            ids += await self._conflict_members(model.conflict_id)  # type: ignore[attr-defined]
        for memory_id in ids:
            try:
                memory = (await self._run(self.app.read, {"memory_id": memory_id}))["memory"]
            except LedgerError:
                continue
            text = f"#{memory_id} “{_snippet(memory.get('content', ''))}”"
            if memory.get("status", "active") != "active" or memory.get("tier") == "working":
                return None  # refused by the call itself: no longer current, or a working note
            if name == "confirm":
                return f"Confirm memory {text} as your own fact? It becomes user_confirmed and locked."
            if memory.get("protection") == "locked":
                return f"Allow {spec.name} {name} on locked memory {text}?"
        return None

    async def _erase_question(self, model: Any) -> str:
        if model.workspace is not None:
            held = await self._run(self.app.erasable_in, {"workspace": model.workspace})
            return _workspace_question(model.workspace, held)
        targets = await self._run(self.app.erasable, {"memory_id": model.memory_id})  # refused: nobody is asked
        text, tier = f"#{model.memory_id}", "long"
        with contextlib.suppress(LedgerError):
            memory = (await self._run(self.app.read, {"memory_id": model.memory_id}))["memory"]
            text += f" “{_snippet(memory.get('content', ''))}”"
            tier = memory.get("tier", "long")
        also = [f"#{m}" for m in targets if m != model.memory_id]  # a note and the memory promoted from it
        what = "the long-term memory promoted from it" if tier == "working" else "the working note it was promoted from"
        with_it = f" With it: {', '.join(also)}, {what}." if also else ""
        return f"Erase memory {text} for good? Its text leaves the log, the indexes and the backup.{with_it}"

    async def _conflict_members(self, conflict_id: int) -> list[int]:
        if self._conflict_detail is None:
            return []
        try:
            conflict = (await self._run(self._conflict_detail, {"conflict_id": conflict_id})).get("conflict") or {}
        except LedgerError:
            return []
        members = conflict.get("members") or []
        ids = [m.get("memory_id") if isinstance(m, dict) else m for m in members]
        return [i for i in ids if isinstance(i, int) and not isinstance(i, bool)]


def _workspace_question(named: str, held: list[tuple[int, str, bool]]) -> str:
    """The question before a workspace's erase: the other names its memories are recorded under
    (its aliases), and by id each memory held in another workspace that goes with it (a working
    note and the memory promoted from it go together), so nobody approves more than they read."""
    aliases = sorted({w for _m, w, own in held if own and w != named})
    also = f" (and what is recorded as {', '.join(map(repr, aliases))}, the same workspace)" if aliases else ""
    beyond = [f"#{m} of {workspace_words(w)}" for m, w, own in held if not own]
    with_it = (
        f" With it: {', '.join(beyond)}, a working note or the memory promoted from it, tied to one of its memories."
        if beyond
        else ""
    )
    return f"Erase every memory of {workspace_words(named)}{also} for good? Only an Erased record stays.{with_it}"


_ASKING = {
    ("memory", "update"),
    *((GOVERN.name, n) for n in ("arbitrate", "confirm", "retire", "supersede", "resolve_conflict", "unlock", "erase")),
}


def _progress_reporter(ctx: Context) -> Callable[[int, int], None]:
    """A facade progress callback (worker thread) that sends MCP progress notifications."""

    def report(done: int, total: int) -> None:
        try:
            anyio.from_thread.run(functools.partial(ctx.report_progress, done, total or None))
        except Exception:  # progress is best effort; the task itself goes on
            log.debug("progress notification failed", exc_info=True)

    return report
