"""The promotion rule (ledger/promotion.py, docs/governance.md "Working memory"): properties over
any sequence of signals, and the weights as documented."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fact_ledger.ledger.promotion import (
    CONTRADICTED,
    DEFAULT_RULE,
    DEFAULT_WEIGHTS,
    MIN_TURNS,
    SIGNALS,
    THRESHOLD,
    Signal,
    assess,
)

signals = st.lists(st.builds(Signal, st.sampled_from(SIGNALS), st.one_of(st.none(), st.integers(0, 8))), max_size=30)


def test_the_documented_weights_and_threshold() -> None:
    assert dict(DEFAULT_WEIGHTS) == {"user_affirmed": 1, "tool_succeeded": 2, "user_referenced": 1}
    assert (THRESHOLD, MIN_TURNS) == (5, 3)
    assert CONTRADICTED not in DEFAULT_RULE.weights


def test_three_signals_over_three_turns_reach_five() -> None:
    three = [Signal("tool_succeeded", 1), Signal("tool_succeeded", 2), Signal("user_affirmed", 3)]
    assert assess(three).promote and assess(three).score == 5
    assert not assess(three[:2]).promote  # 4 points


def test_five_points_in_two_turns_are_not_stable_enough() -> None:
    burst = [Signal("tool_succeeded", 1), Signal("tool_succeeded", 1), Signal("tool_succeeded", 2)]
    verdict = assess(burst)
    assert verdict.score == 6 and verdict.turns == 2 and not verdict.promote


def test_a_contradiction_restarts_the_count() -> None:
    before = [Signal("tool_succeeded", 1), Signal("tool_succeeded", 2), Signal("user_affirmed", 3)]
    verdict = assess([*before[:2], Signal(CONTRADICTED, 3), before[2]])
    assert not verdict.promote and verdict.score == 1 and verdict.contradicted


def test_a_signal_about_a_turn_before_the_contradiction_does_not_count() -> None:
    """Contradicted at turn 3, then "it worked" about turn 2 (sent late): it counted as a fresh
    turn toward promotion."""
    seq = [Signal(CONTRADICTED, 3), Signal("tool_succeeded", 2), Signal("tool_succeeded", 4)]
    verdict = assess(seq)
    assert verdict.score == 2 and verdict.turns == 1


@given(signals)
def test_promotion_is_exactly_score_and_turns_after_the_last_contradiction(seq: list[Signal]) -> None:
    last = max((i for i, s in enumerate(seq) if s.signal == CONTRADICTED), default=-1)
    since = seq[last].turn if last >= 0 else None  # a signal about an earlier turn, sent late, does not count
    tail = [s for s in seq[last + 1 :] if since is None or s.turn is None or s.turn >= since]
    score = sum(DEFAULT_WEIGHTS.get(s.signal, 0) for s in tail)
    turns = {s.turn for s in tail if s.turn is not None}
    verdict = assess(seq)
    assert verdict.score == score and verdict.turns == len(turns)
    assert verdict.promote == (score >= THRESHOLD and len(turns) >= MIN_TURNS)


@given(signals)
def test_a_trailing_contradiction_always_blocks(seq: list[Signal]) -> None:
    assert not assess([*seq, Signal(CONTRADICTED, 9)]).promote


@given(signals, st.sampled_from(["user_affirmed", "tool_succeeded", "user_referenced"]), st.integers(0, 8))
def test_a_positive_signal_never_takes_promotion_away(seq: list[Signal], signal: str, turn: int) -> None:
    if assess(seq).promote:
        assert assess([*seq, Signal(signal, turn)]).promote


@given(signals)
def test_signals_without_a_turn_never_make_a_note_stable(seq: list[Signal]) -> None:
    turnless = [Signal(s.signal, None) for s in seq]
    assert not assess(turnless).promote


def test_the_rule_names_its_weights_for_the_promoted_event() -> None:
    text = DEFAULT_RULE.describe()
    assert "score>=5" in text and ">=3 turns" in text and "tool_succeeded+2" in text
