"""The mutation check's own rules (tools/mutation): which mutants exist, and that each is real."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import REPO
from tools.mutation.mutants import apply, points
from tools.mutation.targets import TARGETS

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
