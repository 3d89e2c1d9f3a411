"""Clients other than our own stdio session: MCP Inspector's CLI mode, and streamable HTTP.

The Inspector (``@modelcontextprotocol/inspector@0.17.2``, the last release that runs on
Node.js 20) is installed once into ``.ci/inspector-0.17.2`` (ignored by git; override the prefix
with ``LEDGER_INSPECTOR_PREFIX``) by :mod:`tests.contract.inspector_install`, which an
interrupted ``npm install`` cannot leave half-installed. The test skips only when Node.js or npm
is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import REPO
from tests.contract.inspector_install import install_inspector

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def inspector() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js (node and npm) is not installed: the MCP Inspector test needs it")
    return install_inspector(npm, Path(os.environ.get("LEDGER_INSPECTOR_PREFIX", REPO / ".ci")))


@pytest.fixture
def ledger_command(tmp_path: Path) -> str:
    """The ``ledger`` console script next to this interpreter, or an equivalent wrapper."""
    script = Path(sys.executable).with_name("ledger")
    if script.exists():
        return str(script)
    wrapper = tmp_path / "ledger"
    wrapper.write_text(f'#!/bin/sh\ncd "{REPO}" && exec "{sys.executable}" -m server "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return str(wrapper)


def run_inspector(inspector: Path, ledger: str, db: Path, *args: str) -> dict:
    env = {**os.environ, "LEDGER_CLIENT": "mcp-inspector"}
    proc = subprocess.run(
        [str(inspector), "--cli", ledger, "serve", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return json.loads(proc.stdout)


def test_mcp_inspector_lists_tools_and_calls_remember_and_find(
    inspector: Path, ledger_command: str, tmp_path: Path
) -> None:
    db = tmp_path / "inspector.db"
    listed = run_inspector(inspector, ledger_command, db, "--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} == {"memory", "memory_review", "memory_govern", "memory_repair"}
    memory = next(t for t in listed["tools"] if t["name"] == "memory")
    assert "remember" in memory["inputSchema"]["properties"]["action"]["enum"]

    remembered = run_inspector(
        inspector,
        ledger_command,
        db,
        "--method",
        "tools/call",
        "--tool-name",
        "memory",
        "--tool-arg",
        "action=remember",
        "--tool-arg",
        'data={"content": "Inspector saw the staging port 8080"}',
    )
    assert remembered["isError"] is False and remembered["structuredContent"]["ok"] is True
    found = run_inspector(
        inspector,
        ledger_command,
        db,
        "--method",
        "tools/call",
        "--tool-name",
        "memory",
        "--tool-arg",
        "action=find",
        "--tool-arg",
        'data={"query": "staging port"}',
    )
    results = found["structuredContent"]["results"]
    assert [r["content"] for r in results] == ["Inspector saw the staging port 8080"]
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.anyio
async def test_streamable_http_on_loopback_with_a_silent_stdout(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fact_ledger.server",
            "serve",
            "--http",
            "--port",
            str(port),
            "--db",
            str(tmp_path / "http.db"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "LEDGER_CLIENT": "http-test"},
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.05)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert len((await client.list_tools()).tools) == 4
            r = await client.call_tool("memory", {"action": "remember", "data": {"content": "Served over HTTP"}})
            assert r.structured_content["ok"] is True
            found = await client.call_tool("memory", {"action": "find", "data": {"query": "served over http"}})
            assert found.structured_content["results"][0]["content"] == "Served over HTTP"
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert out == b""  # logs go to stderr, never stdout
    assert b"Traceback" not in err and b"INFO" not in err  # WARNING level by default
