"""Settings precedence (docs/contract.md "Transport and identity"): defaults < file < environment < flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.errors import InvalidInput
from server.config import Settings, default_db_path, load_settings


@pytest.fixture
def toml_file(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.toml"
    path.write_text(
        'db = "/from/file.db"\nclient = "file-client"\nagent_id = "file-agent"\nworkspace = "file-ws"\n'
        'isolation = "weak"\nbusy_timeout_ms = 1234\n[policy]\nlocked_requires_user_channel = true\n')
    return path


def test_defaults_without_file_env_or_flags() -> None:
    settings = load_settings(env={})
    assert settings == Settings(create=False)  # only the default path is created implicitly
    assert settings.db == default_db_path() and settings.db.endswith("ledger.db")
    assert settings.isolation == "none" and settings.busy_timeout_ms == 5000
    assert settings.actor == "unknown"


def test_file_values_apply(toml_file: Path) -> None:
    settings = load_settings(env={"LEDGER_CONFIG": str(toml_file)})
    assert (settings.db, settings.client, settings.agent_id, settings.workspace) == (
        "/from/file.db", "file-client", "file-agent", "file-ws")
    assert settings.isolation == "weak" and settings.busy_timeout_ms == 1234
    assert settings.policy.locked_requires_user_channel is True
    assert settings.actor == "file-client:file-agent"


def test_environment_beats_file_and_flags_beat_environment(toml_file: Path) -> None:
    env = {"LEDGER_CONFIG": str(toml_file), "LEDGER_CLIENT": "env-client", "LEDGER_WORKSPACE": "env-ws",
           "LEDGER_ISOLATION": "strict", "LEDGER_DB": "/from/env.db"}
    settings = load_settings(env=env)
    assert (settings.client, settings.workspace, settings.isolation, settings.db) == (
        "env-client", "env-ws", "strict", "/from/env.db")
    assert settings.agent_id == "file-agent"  # not overridden: the file still counts
    flagged = load_settings({"workspace": "flag-ws", "isolation": "none", "db": None}, env=env)
    assert (flagged.workspace, flagged.isolation, flagged.db) == ("flag-ws", "none", "/from/env.db")


def test_config_flag_beats_config_env(tmp_path: Path, toml_file: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"client": "json-client", "policy": {"review_agent_conflicts": True}}))
    settings = load_settings({"config": str(other)}, env={"LEDGER_CONFIG": str(toml_file)})
    assert settings.client == "json-client"
    assert settings.policy.review_agent_conflicts is True


def test_policy_from_environment() -> None:
    settings = load_settings(env={"LEDGER_POLICY_LOCKED_REQUIRES_USER_CHANNEL": "yes"})
    assert settings.policy.locked_requires_user_channel is True


@pytest.mark.parametrize(("env", "field"), [
    ({"LEDGER_ISOLATION": "paranoid"}, "isolation"),
    ({"LEDGER_BUSY_TIMEOUT_MS": "soon"}, "busy_timeout_ms"),
])
def test_bad_values_are_refused(env: dict[str, str], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        load_settings(env=env)
    assert info.value.field == field


def test_a_broken_config_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("db = [unterminated")
    with pytest.raises(InvalidInput) as info:
        load_settings(env={"LEDGER_CONFIG": str(bad)})
    assert info.value.field == "LEDGER_CONFIG"


def test_unknown_file_keys_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('colour = "blue"\nclient = "c"\n')
    assert load_settings(env={"LEDGER_CONFIG": str(path)}).client == "c"
