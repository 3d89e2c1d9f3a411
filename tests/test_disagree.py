"""The deterministic half of a semantic notice: what two close texts disagree on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fact_ledger.ledger.disagree import dates, disagreement, entities, negated, numbers
from fact_ledger.ledger.normalize import normalize_text


@pytest.mark.parametrize(
    ("left", "right", "kind"),
    [
        ("the budget is 50k", "the budget is 80k", "number"),
        ("预算是5万", "预算是8万", "number"),
        ("The launch is on 2025-07-01", "The launch is on July 3, 2025", "date"),
        ("The API is ready", "The API is not ready", "negation"),
        ("接口已经上线", "接口还没上线", "negation"),
        ("Alice leads the platform team", "Bob leads the platform team", "entity"),
    ],
)
def test_a_difference_is_named(left: str, right: str, kind: str) -> None:
    found = disagreement(left, right)
    assert found is not None and found["kind"] == kind
    assert found["left"] != found["right"]


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("The budget is 50k", "Our budget amounts to 50,000"),
        ("预算是5万", "预算为50000"),
        ("The launch is on 2025-07-01", "We launch on July 1, 2025"),
        ("The server listens on port 8080", "Port 8080 is where the server listens"),
        ("I like Python for scripting", "I love Python for scripts"),
        ("The budget is 50k", "The budget is 50k and was approved by finance"),  # added detail, no number differs
    ],
)
def test_paraphrases_are_not_disagreements(left: str, right: str) -> None:
    assert disagreement(left, right) is None


@pytest.mark.parametrize(
    ("detailed", "plain"),
    [
        ("we need 3 servers for the launch", "we need servers for the launch"),
        ("The budget of 50k was approved by finance", "The budget was approved by finance"),
        ("预算是5万", "预算已经批准"),
        ("The launch is on 2025-07-01", "The launch is soon"),
    ],
)
def test_a_number_or_date_on_one_side_only_is_detail_not_disagreement(detailed: str, plain: str) -> None:
    """Each rule compares what *both* sides state: one side's number or date alone is no notice."""
    assert disagreement(detailed, plain) is None
    assert disagreement(plain, detailed) is None


def test_the_parts() -> None:
    assert numbers(normalize_text("we need 3 servers and 5万 yuan")) == ["3", "50000"]
    found, rest = dates(normalize_text("ship on 2025-07-01 with 3 servers"))
    assert found == ["2025-07-01"] and "2025" not in rest
    assert negated("we never ship on fridays") and not negated("we do not never ship")
    assert entities("Yesterday Alice met Bob in Paris. The Team agreed") == {"alice", "bob", "paris", "team"}


@given(st.text(max_size=80))
def test_a_text_never_disagrees_with_itself(text: str) -> None:
    assert disagreement(text, text) is None


@given(st.text(max_size=60), st.text(max_size=60))
def test_disagreement_is_symmetric_in_kind(left: str, right: str) -> None:
    one, other = disagreement(left, right), disagreement(right, left)
    assert (one is None) == (other is None)
    if one is not None and other is not None:
        assert one["kind"] == other["kind"] and one["left"] == other["right"]
