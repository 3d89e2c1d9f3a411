"""Settings precedence (docs/contract.md "Transport and identity"): defaults < file < environment < flags."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.server.config import Settings, default_db_path, load_settings


@pytest.fixture
def toml_file(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.toml"
    path.write_text(
        'db = "/from/file.db"\nclient = "file-client"\nagent_id = "file-agent"\nworkspace = "file-ws"\n'
        'isolation = "weak"\nbusy_timeout_ms = 1234\n[policy]\nlocked_requires_user_channel = true\n'
    )
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
        "/from/file.db",
        "file-client",
        "file-agent",
        "file-ws",
    )
    assert settings.isolation == "weak" and settings.busy_timeout_ms == 1234
    assert settings.policy.locked_requires_user_channel is True
    assert settings.actor == "file-client:file-agent"


def test_environment_beats_file_and_flags_beat_environment(toml_file: Path) -> None:
    env = {
        "LEDGER_CONFIG": str(toml_file),
        "LEDGER_CLIENT": "env-client",
        "LEDGER_WORKSPACE": "env-ws",
        "LEDGER_ISOLATION": "strict",
        "LEDGER_DB": "/from/env.db",
    }
    settings = load_settings(env=env)
    assert (settings.client, settings.workspace, settings.isolation, settings.db) == (
        "env-client",
        "env-ws",
        "strict",
        "/from/env.db",
    )
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


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({"LEDGER_ISOLATION": "paranoid"}, "isolation"),
        ({"LEDGER_BUSY_TIMEOUT_MS": "soon"}, "busy_timeout_ms"),
        ({"LEDGER_BUSY_TIMEOUT_MS": "-1"}, "busy_timeout_ms"),
        ({"LEDGER_RETENTION_DAYS": "99999999999999"}, "retention_days"),  # an OverflowError at archive
        ({"LEDGER_RETENTION_DAYS": "-3"}, "retention_days"),
        ({"LEDGER_WORKSPACE": "w" * 257}, "workspace"),  # --workspace and the tools hold 256
        ({"LEDGER_AGENT_ID": "a" * 257}, "agent_id"),
    ],
)
def test_bad_values_are_refused(env: dict[str, str], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        load_settings(env=env)
    assert info.value.field == field
    # the variable a person set is named ("busy_timeout_ms must be an integer" named none)
    (name,) = env
    assert info.value.message.startswith(f"{name}: "), info.value.message
    assert f"{field}: " not in info.value.message  # not named twice


def test_a_bad_section_value_from_the_environment_names_its_variable() -> None:
    with pytest.raises(InvalidInput) as info:
        load_settings(env={"LEDGER_POLICY_SETTLE_CHANGES": "maybe"})
    assert info.value.message.startswith("LEDGER_POLICY_SETTLE_CHANGES: policy.settle_changes must be")


def test_the_limits_themselves_are_accepted() -> None:
    settings = load_settings(
        env={"LEDGER_RETENTION_DAYS": "36500", "LEDGER_WORKSPACE": "w" * 256, "LEDGER_BUSY_TIMEOUT_MS": "0"}
    )
    assert (settings.retention_days, len(settings.workspace), settings.busy_timeout_ms) == (36500, 256, 0)


def test_an_infinite_number_in_a_config_file_is_refused_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as info:
        load_settings(env=_config(tmp_path, "event_time_skew_s = 1e400\n"))
    assert info.value.field == "event_time_skew_s"
    assert str(info.value) == f"config file {tmp_path / 'c.toml'}: event_time_skew_s must be an integer"


def test_a_broken_config_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("db = [unterminated")
    with pytest.raises(InvalidInput) as info:
        load_settings(env={"LEDGER_CONFIG": str(bad)})
    assert info.value.field == "LEDGER_CONFIG"


def _config(tmp_path: Path, text: str, name: str = "c.toml") -> dict[str, str]:
    path = tmp_path / name
    path.write_text(text)
    return {"LEDGER_CONFIG": str(path)}


@pytest.mark.parametrize(
    ("text", "key", "suggestion"),
    [
        ('isolaton = "weak"\n', "isolaton", "isolation"),
        ("[policy]\nreview_agent_conflict = true\n", "policy.review_agent_conflict", "policy.review_agent_conflicts"),
        ('[embedding]\nmodle = "x"\n', "embedding.modle", "embedding.model"),
        ('colour = "blue"\nclient = "c"\n', "colour", None),
    ],
)
def test_unknown_file_keys_are_refused_with_a_suggestion(
    tmp_path: Path, text: str, key: str, suggestion: str | None
) -> None:
    """A typo in a config file would leave the default in force without a word: refused, with
    the key it resembles, as an unknown tool field is."""
    with pytest.raises(InvalidInput) as info:
        load_settings(env=_config(tmp_path, text))
    assert info.value.field == key
    assert info.value.to_dict().get("did_you_mean") == suggestion
    assert key in info.value.message


def test_a_section_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as info:
        load_settings(env=_config(tmp_path, "policy = true\n"))
    assert info.value.field == "policy"


@pytest.mark.parametrize(
    "text",
    [
        'review_agent_conflicts = "false"',
        "review_agent_conflicts = false",
        'review_agent_conflicts = "off"',
        'review_agent_conflicts = "0"',
    ],
)
def test_false_in_a_config_file_is_false(tmp_path: Path, text: str) -> None:
    settings = load_settings(env=_config(tmp_path, f"[policy]\n{text}\n"))
    assert settings.policy.review_agent_conflicts is False


@pytest.mark.parametrize("text", ['review_agent_conflicts = "true"', 'review_agent_conflicts = "yes"'])
def test_true_in_a_config_file_is_true(tmp_path: Path, text: str) -> None:
    settings = load_settings(env=_config(tmp_path, f"[policy]\n{text}\n"))
    assert settings.policy.review_agent_conflicts is True


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[policy]\nreview_agent_conflicts = "maybe"\n', "policy.review_agent_conflicts"),
        ("[policy]\nlocked_requires_user_channel = 2\n", "policy.locked_requires_user_channel"),
        ('create = "sometimes"\n', "create"),
        ("create = 1\n", "create"),
        ('[embedding]\nenabled = "nope"\n', "embedding.enabled"),
        ("busy_timeout_ms = true\n", "busy_timeout_ms"),
    ],
)
def test_a_value_that_is_not_a_boolean_is_a_config_error(tmp_path: Path, text: str, key: str) -> None:
    with pytest.raises(InvalidInput) as info:
        load_settings(env=_config(tmp_path, text))
    assert info.value.field == key


def test_json_booleans_parse_strictly_too(tmp_path: Path) -> None:
    env = _config(tmp_path, json.dumps({"policy": {"locked_requires_user_channel": "false"}}), "c.json")
    assert load_settings(env=env).policy.locked_requires_user_channel is False
    env = _config(tmp_path, json.dumps({"policy": {"locked_requires_user_channel": "no!"}}), "d.json")
    with pytest.raises(InvalidInput):
        load_settings(env=env)


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("LEDGER_POLICY_REVIEW_AGENT_CONFLICTS", "policy.review_agent_conflicts"),
        ("LEDGER_CREATE", "create"),
        ("LEDGER_EMBEDDING_ENABLED", "embedding.enabled"),
    ],
)
def test_a_switch_in_the_environment_that_is_not_a_boolean_is_refused(name: str, field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        load_settings(env={name: "perhaps"})
    assert info.value.field == field
    assert load_settings(env={name: "off"}) is not None


def test_one_policy_class_from_settings_to_the_ledger() -> None:
    """The server's settings carry the ledger's own Policy: no second class to copy across."""
    from fact_ledger.ledger.facts import Policy as LedgerPolicy
    from fact_ledger.server.config import Policy as SettingsPolicy

    assert SettingsPolicy is LedgerPolicy
    settings = load_settings(env={"LEDGER_POLICY_LOCKED_REQUIRES_USER_CHANNEL": "true"})
    assert type(settings.policy) is LedgerPolicy
    assert settings.policy == LedgerPolicy(locked_requires_user_channel=True)


def test_embedding_threads_come_from_the_settings(tmp_path: Path) -> None:
    import os

    from fact_ledger.projections.runtime.embedding import embedding_threads

    assert load_settings(env={"LEDGER_EMBEDDING_THREADS": "1"}).embedding.threads == 1
    assert load_settings(env=_config(tmp_path, "[embedding]\nthreads = 3\n")).embedding.threads == 3
    assert load_settings(env={}).embedding.threads == 0
    assert embedding_threads(2) == 2
    for unset in (0, load_settings(env={"LEDGER_EMBEDDING_THREADS": ""}).embedding.threads):
        assert embedding_threads(unset) == (os.cpu_count() or 1)
    for bad in ("many", "-1"):
        with pytest.raises(InvalidInput) as info:
            load_settings(env={"LEDGER_EMBEDDING_THREADS": bad})
        assert info.value.field == "embedding.threads"


def test_the_store_takes_its_busy_timeout_from_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment reaches the store only through Settings (the ledger reads none)."""
    from fact_ledger.ledger.log.store import EventStore
    from fact_ledger.server.app.facade import LedgerApp

    monkeypatch.setenv("LEDGER_BUSY_TIMEOUT_MS", "1234")
    store = EventStore(tmp_path / "plain.db")
    assert store.busy_timeout_ms == 5000  # the argument's default: the environment is not read here
    store.close()
    settings = load_settings({"db": str(tmp_path / "b.db"), "create": True})
    assert settings.busy_timeout_ms == 1234
    app = LedgerApp(settings)
    try:
        assert app.store.busy_timeout_ms == 1234
    finally:
        app.close()
    assert EventStore(tmp_path / "c.db", busy_timeout_ms=250).busy_timeout_ms == 250


def test_only_the_settings_read_the_environment() -> None:
    """server/config.py is the one reader of the environment among the packages."""
    import re

    root = Path(__file__).resolve().parent.parent
    readers = [
        str(path.relative_to(root))
        for package in ("ledger", "projections", "server")
        for path in sorted((root / package).rglob("*.py"))
        if re.search(r"os\.environ|os\.getenv|getenv\(", path.read_text(encoding="utf-8"))
    ]
    assert readers == ["server/config.py"]


def test_the_cli_names_a_mistyped_config_key(tmp_path: Path) -> None:
    """A person at a terminal gets the suggestion too; --json carries it as did_you_mean."""
    from tests.conftest import ledger_cli

    env = {**_config(tmp_path, 'isolaton = "weak"\n'), "LEDGER_DB": str(tmp_path / "x.db")}
    human = ledger_cli("status", env=env)
    assert human.returncode != 0 and "Traceback" not in human.stderr
    assert "unknown setting 'isolaton'" in human.stderr and "did you mean 'isolation'?" in human.stderr
    for command in (
        ("serve",),
        ("console", "--no-open", "--port", "0"),
    ):  # they printed a line of their own, without it
        started = ledger_cli(*command, env=env, timeout=30)
        assert (started.returncode, started.stderr) == (human.returncode, human.stderr), command
    machine = ledger_cli("--json", "status", env=env)
    assert json.loads(machine.stdout)["error"]["did_you_mean"] == "isolation"
    assert not (tmp_path / "x.db").exists()  # nothing written


def test_each_postgresql_log_has_a_backup_of_its_own_named_without_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every PostgreSQL log's default backup was one file (views/shared.backup.jsonl): a machine
    on log Y replayed the writes it had backed up in log X's outage into Y, where "update #1"
    changed an unrelated memory."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    at = "postgresql://ops{}@/{}?host=/run/pg&port=5433"
    x, x_again, y = (
        Settings(store=at.format(pw, db)) for pw, db in ((":s3cret", "team_x"), ("", "team_x"), ("", "team_y"))
    )
    assert x.backup_path == x_again.backup_path != y.backup_path
    assert "s3cret" not in x.backup_path and x.backup_path.endswith(".backup.jsonl")
    assert Settings(store=at.format("", "team_x"), backup=str(tmp_path / "b.jsonl")).backup_path == str(
        tmp_path / "b.jsonl"
    )


@pytest.mark.parametrize("name", ["LEDGER_CREATE", "LEDGER_POLICY_AUTO_SETTLE", "LEDGER_EMBEDDING_ENABLED"])
def test_a_bad_switch_at_the_terminal_lists_the_words_it_takes(tmp_path: Path, name: str) -> None:
    """``LEDGER_CREATE=maybe`` said "must be true or false", though 1/0, yes/no and on/off are
    taken too: the one line a person sees lists them, and each word it lists does what it says."""
    from tests.conftest import ledger_cli

    env = {"LEDGER_DB": str(tmp_path / "x.db"), "LEDGER_CONFIG": "", "HOME": str(tmp_path), name: "maybe"}
    human = ledger_cli("status", env=env)
    assert human.returncode != 0 and "Traceback" not in human.stderr
    lines = human.stderr.splitlines()
    assert len(lines) == 1, human.stderr
    shape = r"error \(invalid_input\): (\S+): \S+ must be on \((.*)\) or off \((.*)\) \(got 'maybe'\)"
    said = re.fullmatch(shape, lines[0])
    assert said is not None, lines[0]
    assert said.group(1) == name
    on, off = said.group(2).split(", "), said.group(3).split(", ")
    assert sorted(on + off) == sorted(["1", "true", "yes", "on", "0", "false", "no", "off"])
    field = json.loads(ledger_cli("--json", "status", env=env).stdout)["error"]["field"]
    section, _, key = field.partition(".")  # "create", or "policy.auto_settle"
    for words, meant in ((on, True), (off, False)):
        for word in words:
            settings = load_settings(env={name: word.upper()})
            got = getattr(getattr(settings, section), key) if key else getattr(settings, section)
            assert got is meant, (field, word)
    assert not (tmp_path / "x.db").exists()  # nothing written
