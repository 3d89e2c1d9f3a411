"""The mutation check's own rules (tools/mutation): which mutants exist, and that each is real."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import REPO
from tools.mutation.mutants import apply, points
from tools.mutation.run import is_equivalent, target_points
from tools.mutation.targets import SCOPE_LINES, TARGETS, Target

SOURCE = '''"""A docstring is never mutated."""
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from os import path

ORDER = (("a", 1), ("b", 2), ("c", 3))


def rule(x: int, y: int, *, flag: bool = False) -> bool:
    """Nor is this one."""
    if x < y and not flag:
        return True
    check(limit=x)
    return x == y


def other(x: int) -> int:
    return x + 1
'''


def test_points_cover_the_operators_and_skip_docstrings_annotations_and_type_checking() -> None:
    found = {(p.scope, p.description) for p in points(SOURCE, ordered=("ORDER",))}
    assert ("ORDER", "swap elements 0 and 1 of ORDER") in found and ("ORDER", "swap elements 1 and 2 of ORDER") in found
    assert {
        ("rule", "< → <="),
        ("rule", "and → or"),
        ("rule", "drop the not in not flag"),
        ("rule", "== → !="),
        ("rule", "remove the call check(limit=x)"),
        ("rule", "limit=x → limit=None"),
        ("rule", "True → False"),
        ("rule", "False → True"),
        ("other", "+ → -"),
        ("other", "1 → 2"),
    } <= found
    assert not [d for _, d in found if "docstring" in d.lower() or "path" in d]


def test_every_mutant_differs_from_the_original_and_compiles() -> None:
    original = ast.dump(ast.parse(SOURCE))
    for point in points(SOURCE, ordered=("ORDER",)):
        mutated = apply(SOURCE, point.index, ordered=("ORDER",))
        compile(mutated, "<mutant>", "exec")
        assert ast.dump(ast.parse(mutated)) != original, point


def test_only_restricts_to_the_named_functions_and_a_vanished_name_is_an_error() -> None:
    assert {p.scope for p in points(SOURCE, only=("other",))} == {"other"}
    with pytest.raises(LookupError, match=r"update tools/mutation/targets.py"):
        points(SOURCE, only=("renamed",))


def test_the_map_names_existing_modules_tests_and_functions() -> None:
    for target in TARGETS:
        assert (REPO / target.path).is_file(), target.path
        assert target.tests and all((REPO / t).is_file() for t in target.tests), target.tests
        source = (REPO / target.path).read_text(encoding="utf-8")
        assert points(source, only=target.only, ordered=target.ordered), target.path  # names exist, mutants too
        assert set(target.critical) <= set(target.only) or not target.only, target.path
    fast = [t.path for t in TARGETS if t.fast]
    assert "ledger/arbiter.py" in fast and "server/app/workspaces.py" in fast


def test_a_scope_passed_down_is_forgotten_positional_or_keyword() -> None:
    """The slip of issue 33: a nearest-neighbour scan called without ``filters.workspaces``."""
    source = (
        "def scan(filters, scope, n):\n"
        "    index.nearest(n, filters.workspaces, scope=scope, k=n, limit=filters.limit)\n"
        "    return pick(n, scope)\n"
    )
    found = {p.description for p in points(source)}
    assert {
        "argument filters.workspaces → None",
        "scope=scope → scope=None",
        "k=n → k=None",
        "argument scope → None",
    } <= found
    assert not {"argument n → None", "limit=filters.limit → limit=None"} & found  # not named for a scope
    for point in points(source):
        compile(apply(source, point.index), "<mutant>", "exec")


def test_fast_lines_keep_the_statements_that_name_a_scope(tmp_path: Path) -> None:
    source = (
        "def listing(conn, state, scope):\n"
        "    limit = 20 + 1\n"
        "    return conn.run(\n"
        "        state, limit=limit, workspaces=scope\n"
        "    )\n"
    )
    every = {p.description for p in points(source)}
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    target = Target(str(tmp_path / "m.py"), ("tests/test_mutation_tool.py",))
    kept = {p.description for p in target_points(target, SCOPE_LINES)}
    assert "+ → -" in every and "+ → -" not in kept  # a line that names no scope
    assert {"workspaces=scope → workspaces=None", "limit=limit → limit=None"} <= kept  # one call, three lines
    assert {p.description for p in target_points(target)} == every


# Where a module applies a workspace scope (a read filtered to the caller's workspace, a by-id
# check), the mutation check must hold it critical and run it in CI. Modules that partition by
# workspace in every isolation mode, or serve the user rather than an agent, say why here.
SCOPE_APPLIED = re.compile(
    # (projections.workspaces, imported for its wording of a workspace's name, applies no scope)
    r"find_scope\(|check_workspace\(|workspace_scope\(|settings\.isolation|(?<!projections)\.workspaces\b"
    r"|\b(scope|workspaces): tuple\[str"
)
NOT_ISOLATION = {
    "server/app/collisions.py": "claim sets are partitioned by workspace in every isolation mode (governance tests)",
    "projections/claims.py": "the claims of one workspace's sets (collisions.py's partition)",
    "projections/write_state.py": "the claims of one workspace's sets, read for a write (collisions.py's partition)",
    "server/app/governance.py": "it imports Workspaces to be built; its loaders' checks are Service's (critical)",
    "server/app/workspaces.py": "the rule itself: a critical target of its own",
    "server/app/upkeep.py": "the periodic pass works over every workspace by design (it imports Workspaces only)",
}


def test_every_module_that_applies_a_workspace_scope_is_critical() -> None:
    applying = sorted(
        str(path.relative_to(REPO))
        for folder in ("server", "projections")
        for path in (REPO / folder).rglob("*.py")
        if SCOPE_APPLIED.search(path.read_text(encoding="utf-8"))
    )
    targets = {t.path: t for t in TARGETS}
    assert "server/app/views.py" in applying and "projections/hybrid.py" in applying
    missing = [
        path for path in applying if path not in NOT_ISOLATION and not (path in targets and targets[path].critical)
    ]
    assert missing == [], "add them to tools/mutation/targets.py (critical)"
    # CI's --fast keeps the rule itself, the continuity rule and the vector scans (their tests
    # need no seeded ledger); the isolation walk's modules are critical in the full run.
    fast = ("server/app/workspaces.py", "server/app/views_file.py", "server/app/storage.py", "projections/knn.py")
    for path in (*fast, "projections/hybrid.py", "server/app/timetravel.py", "projections/timeline/asof.py"):
        assert targets[path].critical and targets[path].fast, path


def test_an_equivalence_with_a_fragment_covers_only_the_lines_holding_it() -> None:
    knn = next(t for t in TARGETS if t.path == "projections/knn.py")
    ones = [p for p in target_points(knn) if p.description == "1 → 2"]
    source = (REPO / knn.path).read_text(encoding="utf-8").splitlines()
    noted = {source[p.line - 1].strip() for p in ones if is_equivalent(knn, p, source)}
    left = {source[p.line - 1].strip() for p in ones if not is_equivalent(knn, p, source)}
    assert any("far = self.words * 64 + 1" in line for line in noted)
    assert any("far - 1" in line for line in left)  # the cutoff's bound is a rule: it is run
