"""A clean (non-editable) install puts one top-level package into site-packages, ships its data
files, and runs whatever the working directory holds: the repository's folders ``ledger/``,
``projections/`` and ``server/`` install as ``fact_ledger.*``."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("ledger", "projections", "server")


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(venv, its site-packages) with the wheel of this tree installed and nothing else."""
    tmp = tmp_path_factory.mktemp("install")
    # Built from the tracked files only: a build/ folder left in the tree by an earlier build could
    # otherwise bring modules that no longer exist into the wheel.
    source = tmp / "source"
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    for name in tracked.split():
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    built = _run(
        sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp / "dist", source
    )
    assert built.returncode == 0, built.stderr
    venv = tmp / "venv"
    made = _run(sys.executable, "-m", "venv", "--without-pip", venv)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    before = set(p.name for p in site.iterdir())
    wheel = next((tmp / "dist").glob("fact_ledger-*.whl"))
    done = _run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel)
    assert done.returncode == 0, done.stderr
    new = sorted(p.name for p in site.iterdir() if p.name not in before)
    assert new == ["fact_ledger", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"]
    # The dependencies come from this environment (appended after the venv's own site-packages:
    # a path line in a .pth file is not itself processed, so no editable finder comes along).
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return venv, site


@pytest.mark.slow
def test_one_top_level_package_with_every_module_and_data_file(installed: tuple[Path, Path]) -> None:
    _, site = installed
    root = site / "fact_ledger"
    assert sorted(p.name for p in root.iterdir()) == list(PACKAGES)  # a namespace: no __init__ of its own
    for package in PACKAGES:
        modules = {p.relative_to(REPO) for p in (REPO / package).rglob("*.py") if "__pycache__" not in p.parts}
        shipped = {p.relative_to(root) for p in (root / package).rglob("*.py")}
        assert shipped == modules
    assert (root / "ledger" / "log" / "export.schema.json").is_file()
    console = root / "server" / "console"
    assert {p.name for p in (console / "templates").iterdir()} == {
        p.name for p in (REPO / "server/console/templates").iterdir()
    }
    assert {p.name for p in (console / "static").iterdir()} == {
        p.name for p in (REPO / "server/console/static").iterdir()
    }


@pytest.mark.slow
def test_the_script_runs_beside_a_server_py(installed: tuple[Path, Path], tmp_path: Path) -> None:
    """Generic names in the working directory (``server.py``, ``ledger.py``) shadow nothing."""
    venv, _ = installed
    for name in ("server.py", "ledger.py", "projections.py"):
        (tmp_path / name).write_text("raise SystemExit('shadowed')\n", encoding="utf-8")
    for command in (
        [venv / "bin" / "ledger", "--help"],
        [venv / "bin" / "python", "-m", "fact_ledger.server", "--help"],
    ):
        done = _run(*command, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "shadowed" not in done.stdout + done.stderr
        assert "remember" in done.stdout and "fact-ledger" in done.stdout
    schema = _run(venv / "bin" / "ledger", "export", "--schema", cwd=tmp_path)
    assert schema.returncode == 0 and '"$schema"' in schema.stdout, schema.stderr
