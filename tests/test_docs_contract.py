"""The project's docs stand alone: every MCP tool, action, view and task is documented in
docs/contract.md within its tool's section, named in docs/clients.md's table of the four tools
and in README's list of them, and nothing in the repository points at a contract or design file
outside it."""

from __future__ import annotations

import re
import subprocess

import pytest

from fact_ledger.server.mcp.routes import TOOLS
from tests.conftest import REPO

CONTRACT = (REPO / "docs" / "contract.md").read_text(encoding="utf-8")


def _section(tool: str) -> str:
    parts = re.split(r"^## ", CONTRACT, flags=re.MULTILINE)
    found = [p for p in parts if p.startswith(f"Tool `{tool}`")]
    assert len(found) == 1, f"docs/contract.md needs one section for {tool}"
    return found[0]


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_action_view_and_task_is_documented_with_its_fields(tool: str) -> None:
    section = _section(tool)
    for name, route in TOOLS[tool].routes.items():
        rows = [line for line in section.splitlines() if line.startswith(f"| `{name}` |")]
        assert len(rows) == 1, f"{tool} {name} needs one row in docs/contract.md"
        documented = set(re.findall(r"`([a-z_]+)(?:\[\]|\{\})?`", rows[0]))  # `tags[]`, `metadata{}`
        fields = set(route.model.model_fields) - {"authorized"}  # described once per tool
        assert fields <= documented, (tool, name, fields - documented)


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_the_clients_table_and_the_readme_name_every_action_of_each_tool(tool: str) -> None:
    """Both lists were written by hand and fell behind what tools/list shows (reinforce, working,
    erase, sweep, ...): the routes are the one declaration, so both are checked against them."""
    names = set(TOOLS[tool].routes)
    clients = (REPO / "docs" / "clients.md").read_text(encoding="utf-8")
    (row,) = [line for line in clients.splitlines() if line.startswith(f"| `{tool}` ")]
    listed = set(re.findall(r"`([a-z_]+)`", row.split("|")[2]))
    assert listed == names, (tool, "docs/clients.md", names - listed, listed - names)
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    found = re.search(rf"`{tool}` \(([^)]*)\)", readme)
    assert found, f"README names {tool} with its actions in brackets"
    named = set(re.findall(r"[a-z_]+", found[1].split(":", 1)[-1].split(";", 1)[0]))
    assert names - {"help"} <= named, (tool, "README.md", names - {"help"} - named)
    assert "each with a `help` entry" in readme


def test_the_docs_and_code_point_only_inside_the_repository() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "*.md", "*.py"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    outside = [
        path
        for path in tracked
        if path != "CHANGELOG.md"
        and path != "tests/test_docs_contract.py"
        and re.search(r"(?<![\w/])(?:DESIGN|CONTRACT)\.md", (REPO / path).read_text(encoding="utf-8"))
    ]
    assert outside == []
    for link in re.findall(r"\]\(([^)#]+)", CONTRACT + (REPO / "docs" / "design.md").read_text(encoding="utf-8")):
        assert (REPO / "docs" / link).exists(), link
