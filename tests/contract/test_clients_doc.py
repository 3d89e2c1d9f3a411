"""docs/clients.md: every config snippet parses, names our server and a real ``ledger serve``,
and the generic stdio snippet, run exactly as a client would run it, serves the four tools."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.ledger.log.store import EventStore
from fact_ledger.server.config import _ENV
from tests.conftest import REPO
from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow
DOC = REPO / "docs" / "clients.md"
KNOWN_ENV = set(_ENV.values()) | {"LEDGER_CONFIG"}


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


def servers() -> list[dict[str, Any]]:
    found = [json.loads(b)["mcpServers"]["fact-ledger"] for b in blocks("json")]
    found += [tomllib.loads(b)["mcp_servers"]["fact-ledger"] for b in blocks("toml")]
    return found


def test_every_snippet_is_valid_and_launches_ledger_serve() -> None:
    configs = servers()
    assert len(configs) == 4  # Claude Code .mcp.json, Cursor, Codex config.toml, generic
    for config in configs:
        assert Path(config["command"]).name == "ledger"
        assert config["args"][0] == "serve"
        assert set(config.get("env", {})) <= KNOWN_ENV, config
    commands = [line for b in blocks("bash") for line in b.splitlines() if " mcp add " in line]
    assert len(commands) == 3
    for line in commands:
        words = shlex.split(line)
        assert words[-3:] == ["--", "ledger", "serve"] or words[-1].startswith("http://127.0.0.1:")
        for word in words:
            if "=" in word and word.startswith("LEDGER_"):
                assert word.split("=", 1)[0] in KNOWN_ENV


def test_the_documented_variables_exist() -> None:
    documented = set(re.findall(r"`(LEDGER_[A-Z_]+)`", DOC.read_text()))
    assert documented == KNOWN_ENV


def test_the_generic_snippet_works_as_written(tmp_path: Path) -> None:
    config = json.loads(blocks("json")[-1])["mcpServers"]["fact-ledger"]
    db = tmp_path / "doc.db"
    args = [str(db) if a.endswith(".db") else a for a in config["args"]]  # only the path is ours
    server = LedgerServer(db)
    server.params = server.params.model_copy(
        update={
            "command": sys.executable,
            "args": ["-m", "fact_ledger.server", *args],
            "env": {**os.environ, **config["env"]},
        }
    )
    server.start()
    try:
        assert len(server.list_tools()) == 4
        assert server.memory("remember", {"content": "configured from the docs"}).ok
    finally:
        server.close()
    store = EventStore(db)
    try:
        assert [e.actor for e in store.read()] == ["my-agent:agent-1"]
    finally:
        store.close()
