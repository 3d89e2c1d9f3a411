"""docs/architecture.md stays true to the code: every path it names exists, every package is
named, and every module of ``ledger/`` and ``projections/`` is named with its job."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
NAMED = set(re.findall(r"`((?:ledger|projections|server|tools|tests)/[\w/.\-]*)`", DOC))
LAYERS = ("ledger", "projections", "server")


def test_every_path_the_page_names_exists() -> None:
    assert len(NAMED) > 50
    missing = sorted(path for path in NAMED if not (REPO / path).exists())
    assert not missing, f"docs/architecture.md names what is not there: {missing}"


def test_every_package_is_named() -> None:
    packages = sorted(
        f"{p.parent.relative_to(REPO).as_posix()}/" for layer in LAYERS for p in (REPO / layer).rglob("__init__.py")
    )
    assert "server/app/" in packages
    unnamed = [p for p in packages if p not in DOC]
    assert not unnamed, f"packages docs/architecture.md does not name: {unnamed}"


def test_every_module_of_the_lower_layers_is_named() -> None:
    modules = sorted(
        p.relative_to(REPO).as_posix()
        for layer in ("ledger", "projections")
        for p in (REPO / layer).glob("*.py")
        if p.name != "__init__.py"
    )
    assert "ledger/arbiter.py" in modules
    unnamed = [m for m in modules if f"`{m}`" not in DOC]
    assert not unnamed, f"modules docs/architecture.md does not name: {unnamed}"
