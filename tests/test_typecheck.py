"""``python -m tools.typecheck``: ``ledger/`` holds ``mypy --strict`` (the same check .ci/run makes),
through a tree of links named as the installed packages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools.typecheck.__main__ import LINKED, REPO, link_tree


def test_the_link_tree_names_the_folders_as_the_installed_packages(tmp_path: Path) -> None:
    package = link_tree(tmp_path)
    assert package.name == "fact_ledger" and (package / "__init__.py").is_file()
    for name in LINKED:
        assert (package / name).resolve() == REPO / name
    assert (package / "ledger" / "arbiter.py").is_file()


def test_ledger_holds_mypy_strict() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.typecheck"], cwd=REPO, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues found" in done.stdout


def test_a_type_error_fails_the_check(tmp_path: Path) -> None:
    """The same mypy, strict, on a module that returns Any where it promises an int."""
    (tmp_path / "bad.py").write_text("import json\n\ndef count(text: str) -> int:\n    return json.loads(text)\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "bad.py"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and "no-any-return" in done.stdout
