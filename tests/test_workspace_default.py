"""One workspace for the user and the agents (issue 29, point 8): the default config file
(``~/.config/fact-ledger/config.toml``) names it for the CLI and for every agent's ``ledger
serve`` alike, and each write says where it went.

Real processes: the CLI in a subprocess, an MCP agent over stdio, one database file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fact_ledger.server.config import default_config_path, load_settings, settings_sources
from tests.conftest import ledger_cli
from tests.contract.conftest import LedgerServer


def _config_home(tmp_path: Path, text: str) -> dict[str, str]:
    home = tmp_path / "config-home"
    (home / "fact-ledger").mkdir(parents=True)
    (home / "fact-ledger" / "config.toml").write_text(text, encoding="utf-8")
    return {"XDG_CONFIG_HOME": str(home)}


def test_the_user_and_an_agent_write_to_the_configured_workspace_and_meet_in_one_set(tmp_path: Path) -> None:
    env = _config_home(tmp_path, 'workspace = "my-project"\n')
    db = tmp_path / "ledger.db"
    ledger_cli("init", "--db", str(db), env=env, check=True)
    mine = ledger_cli("remember", "The staging api port is 8080", "--db", str(db), env=env, check=True)
    assert mine.stdout.splitlines()[0] == 'remembered #1 in workspace "my-project"'
    agent = LedgerServer(db, env={**env, "LEDGER_CLIENT": "claude-code"}).start()  # the snippet sets no workspace
    try:
        theirs = agent.memory("remember", {"content": "The staging api port is 7070"})
        assert theirs.ok
        assert theirs["workspace"] == "my-project" and theirs["conflicts"], theirs.body
    finally:
        agent.close()
    conflicts = json.loads(ledger_cli("conflicts", "--db", str(db), "--json", env=env, check=True).stdout)
    assert conflicts["total"] == 1 and conflicts["conflicts"][0]["member_count"] == 2
    again = json.loads(
        ledger_cli("remember", "The staging api port is 8080", "--db", str(db), "--json", env=env, check=True).stdout
    )
    assert again["duplicate_of"] == 1 and again["workspace"] == "my-project"


def test_a_write_names_its_workspace_in_human_and_json_output(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    ledger_cli("init", "--db", str(db), check=True)
    plain = ledger_cli("remember", "Deploys freeze on Fridays", "--db", str(db), check=True)
    assert plain.stdout.splitlines()[0] == 'remembered #1 in the default workspace ("")'
    named = ledger_cli(
        "remember", "Deploys freeze at noon", "--workspace", "ops", "--db", str(db), "--json", check=True
    )
    assert json.loads(named.stdout)["workspace"] == "ops"
    seen = ledger_cli("remember", "Deploys freeze on Fridays", "--db", str(db), check=True)
    assert seen.stdout.splitlines()[0] == 'already remembered as #1 in the default workspace ("") (seen again)'


def test_the_default_config_file_yields_to_ledger_config_env_and_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _config_home(tmp_path, 'workspace = "from-default-file"\nisolation = "weak"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", home["XDG_CONFIG_HOME"])
    assert default_config_path() == Path(home["XDG_CONFIG_HOME"]) / "fact-ledger" / "config.toml"
    assert load_settings(env={}).workspace == "from-default-file"
    assert settings_sources(env={})["workspace"] == "file"
    named = tmp_path / "named.toml"
    named.write_text('workspace = "from-named-file"\n', encoding="utf-8")
    only_named = load_settings(env={"LEDGER_CONFIG": str(named)})
    assert only_named.workspace == "from-named-file" and only_named.isolation == "none"  # one file, not both
    assert load_settings(env={"LEDGER_WORKSPACE": "from-env"}).workspace == "from-env"
    assert load_settings({"workspace": "from-flag"}, env={"LEDGER_WORKSPACE": "from-env"}).workspace == "from-flag"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "empty"))
    assert load_settings(env={}).workspace == ""  # no file: the default workspace
