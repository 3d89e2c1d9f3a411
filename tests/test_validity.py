"""Until when a superseded value was in force (ledger/validity.py): pure, no ledger."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fact_ledger.ledger.validity import chain_ends

DAY = "2026-11-{:02d}T00:00:00Z"


def test_a_late_older_value_ends_where_the_next_began() -> None:
    # 9090 (head, the 20th) superseded 8080 (the 10th), then 7070 (the 1st) and 7575 (the 15th) arrived late
    ends = chain_ends(4, DAY.format(20), [(1, DAY.format(10), 4), (2, DAY.format(1), 4), (3, DAY.format(15), 4)])
    assert ends == {1: DAY.format(15), 2: DAY.format(10), 3: DAY.format(20)}


def test_a_value_that_lost_to_an_older_one_was_never_in_force_and_cuts_nothing() -> None:
    # 2 (the 8th) lost to 1 (the 5th, confirmed by the user); 3 (the 20th) later superseded 1
    # (an empty interval: it ends where it starts, never before; it ended at the 5th, before its start)
    ends = chain_ends(3, DAY.format(20), [(1, DAY.format(5), 3), (2, DAY.format(8), 1)])
    assert ends == {1: DAY.format(20), 2: DAY.format(8)}


@given(st.lists(st.integers(min_value=1, max_value=28), min_size=1, max_size=12, unique=True))
def test_values_that_each_lost_to_the_latest_tile_time_without_overlap(days: list[int]) -> None:
    """Every loser newer-superseded by the head, in any arrival order: their intervals and the
    head's cover from the earliest start on, each ending where the next began."""
    *losers, head = sorted(days)
    ends = chain_ends(0, DAY.format(head), [(d, DAY.format(d), 0) for d in losers])
    starts = [*sorted(losers), head]
    assert [ends[d] for d in sorted(losers)] == [DAY.format(s) for s in starts[1:]]


def test_a_loser_whose_winner_was_never_in_force_ends_at_its_winner() -> None:
    # 1 (the 1st) lost to 2 (the 12th), which itself lost to the older 3 (the 1st, the head):
    # no value of the chain began after 1 and was in force, so it ends where its winner began
    ends = chain_ends(3, DAY.format(1), [(1, DAY.format(1), 2), (2, DAY.format(12), 3)])
    assert ends == {1: DAY.format(12), 2: DAY.format(12)}  # 2 never was in force: empty, at its start


@given(
    st.integers(min_value=1, max_value=28),
    st.lists(st.tuples(st.integers(min_value=1, max_value=28), st.integers(min_value=0, max_value=12)), max_size=12),
)
def test_no_value_ends_before_it_starts(head: int, picks: list[tuple[int, int]]) -> None:
    """Whatever the chain (winners older or newer than their losers), every end is at or after
    its own start: the console drew a loser of an older winner as a bar that ends before it starts."""
    losers = [(i + 1, DAY.format(day), winner if winner <= i else 0) for i, (day, winner) in enumerate(picks)]
    ends = chain_ends(0, DAY.format(head), losers)
    assert all(ends[m] >= since for m, since, _w in losers)
