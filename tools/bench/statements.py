"""How much work one call does: SQL statements (every connection, APSW's exec trace) and
project functions (a profile hook) for a ``remember`` that collides with one memory and for a
lexical ``find``, on a small two-file ledger (three memories, one about the staging port).

    python -m tools.bench.statements [--workdir DIR]

Prints one JSON object: per operation, ``statements`` (the count), ``by_kind`` (SELECT, INSERT,
…), ``functions`` (distinct project functions called) and ``calls`` (project function calls);
``after_commit``: what the write leaves to the next read (the full-text and timeline read
models, folded by ``Storage.settle``: one such fold serves every write before it); then the
same two calls over MCP (``mcp_*``: the ``memory`` tool through the mcp SDK's client,
the reply's notices included), statements only.
The counts are exact and repeatable, so one run is the figure (no medians needed).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

import fact_ledger.ledger as ledger_package
import fact_ledger.projections as projections_package
import fact_ledger.server as server_package
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from fact_ledger.server.mcp.server import build_server

PROJECT_DIRS = tuple(
    str(Path(package.__file__).parent) for package in (ledger_package, projections_package, server_package)
)
SEED = (
    ("The staging API listens on port 8080", "staging api"),
    ("Deploys freeze on Fridays", "deploys"),
    ("The on-call engineer this week is Dana", "on-call"),
)


def connections(app: LedgerApp) -> list[Any]:
    """Every SQLite connection a call may use: the read models, the local copy, the log."""
    storage = app.storage
    found = [storage.conn, storage.store.conn, getattr(storage.log, "conn", None)]
    unique: dict[int, Any] = {id(c): c for c in found if c is not None}
    return list(unique.values())


@contextmanager
def traced(app: LedgerApp) -> Iterator[list[str]]:
    """Collect the SQL text of every statement run on any of ``app``'s connections."""
    statements: list[str] = []

    def trace(_cursor: object, sql: str, _bindings: object) -> bool:
        statements.append(" ".join(sql.split()))
        return True

    conns = connections(app)
    for conn in conns:
        conn.exec_trace = trace
    try:
        yield statements
    finally:
        for conn in conns:
            conn.exec_trace = None


@contextmanager
def profiled() -> Iterator[Counter[str]]:
    """Count calls of project functions (their code lives in one of the three packages)."""
    calls: Counter[str] = Counter()

    def hook(frame: Any, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(PROJECT_DIRS):
            calls[f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_code.co_qualname}"] += 1

    sys.setprofile(hook)
    try:
        yield calls
    finally:
        sys.setprofile(None)


def kind(sql: str) -> str:
    word = sql.split(" ", 1)[0].upper()
    return "SELECT" if word == "WITH" else word


def measure(call: Callable[[], Any], app: LedgerApp) -> dict[str, Any]:
    with traced(app) as statements, profiled() as calls:
        call()
    return {
        "statements": len(statements),
        "by_kind": dict(sorted(Counter(kind(s) for s in statements).items())),
        "functions": len(calls),
        "calls": sum(calls.values()),
        "sql": statements,
    }


def seeded(workdir: Path) -> LedgerApp:
    workdir.mkdir(parents=True, exist_ok=True)
    app = LedgerApp(Settings(db=str(workdir / "ledger.db"), client="bench", agent_id="bench"))
    for content, subject in SEED:
        app.remember(content, subject=subject)
    app.find("staging port")  # warm: the first find prepares what later ones reuse
    return app


COLLIDING = {"content": "The staging API listens on port 9090", "subject": "staging api"}


def run(workdir: Path) -> dict[str, Any]:
    app = seeded(workdir / "facade")
    try:
        remember = measure(lambda: app.remember(**COLLIDING, source_type="agent_generated"), app)
        settle = measure(app.storage.settle, app)
        find = measure(lambda: app.find("staging port"), app)
    finally:
        app.close()
    return {
        "remember_colliding": remember,
        "after_commit": settle,
        "find_lexical": find,
        **anyio.run(over_mcp, workdir / "mcp"),
    }


async def over_mcp(workdir: Path) -> dict[str, Any]:
    """The same two calls as an agent makes them: the ``memory`` tool through the mcp SDK's
    client, connected in process to the server ``ledger serve`` runs (the SQL is the same over
    stdio), with the notices every reply asks for."""
    app = seeded(workdir)
    out: dict[str, Any] = {}
    try:
        async with Client(build_server(app)) as client:
            await client.call_tool("memory", {"action": "status", "data": {}})
            for name, data in (
                ("mcp_remember_colliding", {"action": "remember", "data": COLLIDING}),
                ("mcp_find_lexical", {"action": "find", "data": {"query": "staging port"}}),
            ):
                with traced(app) as statements:
                    await client.call_tool("memory", data)
                out[name] = _counted(statements)
                if name == "mcp_remember_colliding":
                    with traced(app) as statements:
                        app.storage.settle()
                    out["mcp_after_commit"] = _counted(statements)
    finally:
        app.close()
    return out


def _counted(statements: list[str]) -> dict[str, Any]:
    return {
        "statements": len(statements),
        "by_kind": dict(sorted(Counter(kind(s) for s in statements).items())),
        "sql": statements,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--sql", action="store_true", help="also print every statement")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        result = run(args.workdir or Path(tmp))
    if not args.sql:
        for entry in result.values():
            entry.pop("sql")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
