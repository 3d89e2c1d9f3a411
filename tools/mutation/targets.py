"""What the mutation check mutates, and which tests must notice.

One entry per module. Edit this map when a rule moves or a new test file covers it:

- ``tests``: the test files run against each mutant of the module (only these, with ``-x``:
  the first failure kills the mutant). The first file runs alone first and the rest only for
  the mutants it misses: put the module's own fast unit tests first.
- ``only``: qualified names (``Class.method`` or a module-level name) to mutate; empty means
  the whole module, so functions added later are mutated without touching this map. A name
  listed here that the module no longer has is an error, never a silent skip.
- ``critical``: names where any surviving mutant fails the check whatever the score (workspace
  isolation, the arbitration rule order).
- ``fast``: part of the subset that CI runs (``--fast``).
- ``ordered``: module-level sequences whose element order is a rule (each adjacent pair swapped).
- ``equivalent``: ``(name, mutation)`` pairs, as the report prints them, that change nothing a
  caller can see (say why in a comment); they are listed in the report, not run or counted.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    path: str
    tests: tuple[str, ...]
    only: tuple[str, ...] = ()
    critical: tuple[str, ...] = ()
    ordered: tuple[str, ...] = ()
    equivalent: tuple[tuple[str, str], ...] = ()
    fast: bool = False


_GOVERNANCE_TESTS = (
    "tests/test_governance.py",
    "tests/test_governance_conflicts.py",
    "tests/test_duplicates.py",
    "tests/test_governance_rebuild.py",
    "tests/test_ledger_decisions.py",
)
_CLAIM_TESTS = ("tests/test_claims.py", "tests/test_governance_conflicts.py", "tests/test_duplicates.py")
_TIME_TESTS = ("tests/test_workspaces.py", "tests/test_timetravel.py", "tests/test_timetravel_property.py")

TARGETS: tuple[Target, ...] = (
    # Arbitration: the rule order and every rule's direction.
    Target(
        "ledger/arbiter.py",
        (
            "tests/test_arbiter.py",
            "tests/test_standing.py",
            "tests/test_claim_sets.py",
            "tests/test_governance_conflicts.py",
        ),
        critical=("_RULES", "_protection_rank", "arbitrate"),
        ordered=("_RULES",),
        fast=True,
        equivalent=(
            ("_protection_rank", "2 → 3"),  # only the order of the ranks 0 < 1 < 2 matters
            ("_RULES", "9 → 10"),  # confidences are given with far fewer digits
            ("arbitrate", "> → >="),
        ),
    ),  # compared only once the keys differ
    Target("ledger/trust.py", ("tests/test_arbiter.py", "tests/test_governance.py", "tests/test_find_freshness.py")),
    # The write decisions (command + state -> events) and governance.
    Target("ledger/decide.py", (*_GOVERNANCE_TESTS, "tests/test_retractions.py")),
    Target("ledger/facts.py", _GOVERNANCE_TESTS),
    Target("ledger/govern.py", _GOVERNANCE_TESTS),
    Target("ledger/settlement.py", ("tests/test_settlement.py",)),
    # Which memory repeats another, which memories are archived, how a reply ranks its collisions.
    Target("ledger/duplicates.py", ("tests/test_ledger_rules.py", "tests/test_duplicates.py")),
    Target("ledger/retention.py", ("tests/test_ledger_rules.py", "tests/test_timetravel.py")),
    Target("ledger/reply.py", ("tests/test_ledger_rules.py", "tests/test_governance_conflicts.py")),
    # Which statement cancels which instruction; which hits state one fact (newest first in find).
    Target("ledger/cancellation.py", ("tests/test_retractions.py",)),
    Target("ledger/freshness.py", ("tests/test_find_freshness.py",)),
    # Normalisation and claim extraction.
    Target("ledger/normalize.py", ("tests/test_claims.py", "tests/test_duplicates.py", "tests/test_text.py")),
    Target("ledger/normalize_when.py", ("tests/test_claims.py",)),
    Target("ledger/claims.py", _CLAIM_TESTS),
    Target("ledger/claim_words.py", _CLAIM_TESTS),
    Target("ledger/claim_values.py", _CLAIM_TESTS),
    # The filters guarding workspace isolation ...
    Target(
        "server/app/workspaces.py",
        ("tests/test_workspaces.py",),
        only=(
            "Workspaces.check_workspace",
            "Workspaces.write_workspace",
            "Workspaces.find_scope",
            "Workspaces.workspaces",
        ),
        critical=(
            "Workspaces.check_workspace",
            "Workspaces.write_workspace",
            "Workspaces.find_scope",
            "Workspaces.workspaces",
        ),
        fast=True,
    ),
    # ... and time travel (as-of find and read, the validity rules they apply).
    Target(
        "server/app/timetravel.py",
        _TIME_TESTS,
        only=("History._point", "History.find_as_of", "History.read_as_of"),
        critical=("History.read_as_of",),  # as-of find's isolation is Workspaces.find_scope's
        equivalent=(("History.find_as_of", "1 → 2"),),
    ),  # one more hit fetched, none shown
    Target("projections/asof.py", _TIME_TESTS, only=("_where", "status_at", "state_at", "position_at")),
)
