"""``mypy --strict`` over ``ledger/`` (the pure rules, the event schema and the stores), the
operations' one declaration (the routes, their edge models, the schemas and CLI options
generated from them) and the read models' typed rows (memories, current and as-of, claim sets,
working notes, changes: their loaders, the one rendering of a memory, a set's verdict).

The packages install as ``fact_ledger.*`` from folders named ``ledger/``, ``projections/`` and
``server/`` (pyproject's ``package-dir``); the editable install maps them with an import hook
that mypy does not follow. So mypy checks a temporary tree of links named as the installed
packages, ``fact_ledger/ledger -> ledger``, and resolves every ``fact_ledger.*`` import through
it. Its cache is kept in ``.mypy_cache/`` between runs.

    python -m tools.typecheck [PACKAGE ...]   # default: ledger and the declaration
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LINKED = ("ledger", "projections", "server")
STRICT = ("ledger",)  # the packages held to --strict (docs/architecture.md)
DECLARATION = (  # the operation list and what is generated from it: strict too, their imports checked silently
    "server.mcp.routes",
    "server.mcp.tool_schemas",
    "server.schemas.describe",
    "server.schemas.memory",
    "server.schemas.admin",
    "server.cli.model_options",
    # The read models' typed rows (memories current and as-of, claim sets, working notes, changes).
    "projections.rows",
    "projections.memory_row",
    "projections.memories",
    "projections.timeline.asof",
    "projections.conflicts.queries",
    "projections.conversations",
    "projections.changes",
    "server.app.set_verdicts",
    "server.app.memory_view",
)


def link_tree(into: Path) -> Path:
    """``into/fact_ledger`` whose subpackages are links to the repository's folders."""
    package = into / "fact_ledger"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    for name in LINKED:
        (package / name).symlink_to(REPO / name, target_is_directory=True)
    return package


def main(argv: list[str] | None = None) -> int:
    asked = argv if argv is not None else sys.argv[1:]
    packages, modules = (asked, []) if asked else (list(STRICT), list(DECLARATION))
    with tempfile.TemporaryDirectory(prefix="typecheck-") as tmp:
        link_tree(Path(tmp))
        command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(REPO / ".mypy_cache")]
        command += ["--follow-imports=silent"]  # what they import is typed for them, reported only where asked
        for name in packages:
            command += ["-p", f"fact_ledger.{name}"]
        for name in modules:
            command += ["-m", f"fact_ledger.{name}"]
        return subprocess.run(command, cwd=tmp, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
