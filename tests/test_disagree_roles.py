"""The number rule of the disagreement test compares only numbers that can be the same quantity
(issue 29, point 18): digits inside identifiers are no numbers, and a port is never weighed
against a budget."""

from __future__ import annotations

import pytest

from fact_ledger.ledger.disagree import disagreement, numbers, numbers_with_roles, role
from fact_ledger.ledger.normalize import normalize_text


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("The CI runner ci-02 is down", "The CI runner nul-1 is down"),  # names, not numbers
        ("Deploys go through build-7 now", "Deploys go through lint-3 now"),
        ("The nightly job runs on db2", "The nightly job runs on db3"),
        ("The staging port is 9001", "The staging budget is 80000"),  # different roles
        ("端口是9001", "预算是80000"),
        ("The timeout is 30s", "The timeout is 100 requests per minute"),  # different units
    ],
)
def test_numbers_of_different_things_are_not_a_disagreement(left: str, right: str) -> None:
    assert disagreement(left, right) is None


@pytest.mark.parametrize(
    ("left", "right", "values"),
    [
        ("the budget is 50k", "the budget is 80k", ("50000", "80000")),
        ("The budget is 50k", "Our budget amounts to 80,000", ("50000", "80000")),
        ("预算是5万", "项目预算为8万", ("50000", "80000")),
        ("The staging API port is 9001", "The staging API port was raised to 9002", ("9001", "9002")),
        ("The server listens on port 8080", "The server listens on port 9090", ("8080", "9090")),
        ("Runner ci-02 has 4 cores", "Runner ci-02 has 8 cores", ("4", "8")),  # the name is no number
    ],
)
def test_numbers_of_the_same_thing_still_disagree(left: str, right: str, values: tuple[str, str]) -> None:
    found = disagreement(left, right)
    assert found is not None and found["kind"] == "number"
    assert (found["left"], found["right"]) == values


def test_a_number_knows_its_role_and_identifier_digits_are_skipped() -> None:
    assert numbers_with_roles(normalize_text("port 9001 and a budget of 80000元")) == [
        ("9001", "port"),
        ("80000", "budget"),
    ]
    assert numbers(normalize_text("ci-02, nul-1, 02-b and 7 servers")) == ["7"]
    assert role("项目预算已调整为") == "预算" and role("") == "" and role("the, is") == ""
