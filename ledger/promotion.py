"""When a working memory becomes long-term: a pure rule over the signals it received.

A working note is provisional ("trying port 8081"); it earns a place in long-term memory when
the user or a tool confirmed it over several turns. Each signal has a weight (the defaults:
the user affirms it +1, a tool call that acted on it succeeded +2, the user referred back to it
+1); a ``contradicted`` signal counts nothing and wipes out what came before it. The note is
promoted when, counting only the signals after the last ``contradicted``,

- the weights sum to at least ``threshold`` (5), and
- those signals came in at least ``min_turns`` (3) distinct turns of the conversation.

Finds and reads are not signals: recalling a note proves nothing about it (promotion by recall
count turns a week's passing topic into a permanent memory), so nothing but ``reinforce`` feeds
this rule. Pure: the signals come in as arguments, in log order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

CONTRADICTED = "contradicted"
SIGNALS = ("user_affirmed", "tool_succeeded", "user_referenced", CONTRADICTED)
DEFAULT_WEIGHTS: Mapping[str, int] = {"user_affirmed": 1, "tool_succeeded": 2, "user_referenced": 1}
THRESHOLD = 5
MIN_TURNS = 3
USER_RULE = "user"  # memory_govern promote: the user promoted it, no signal needed


class Signal(msgspec.Struct, frozen=True):
    """One ``reinforce``: its signal and the conversation turn it came in (None: no turn given)."""

    signal: str
    turn: int | None = None


class Rule(msgspec.Struct, frozen=True, kw_only=True):
    """The promotion rule's parameters (weights by signal, the score to reach, the turns)."""

    weights: Mapping[str, int] = msgspec.field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    threshold: int = THRESHOLD
    min_turns: int = MIN_TURNS

    def describe(self) -> str:
        """The rule in one line, as a ``Promoted`` event records it."""
        weights = " ".join(f"{name}+{w}" for name, w in sorted(self.weights.items()))
        return f"score>={self.threshold} over >={self.min_turns} turns since the last contradicted ({weights})"


DEFAULT_RULE = Rule()


class Assessment(msgspec.Struct, frozen=True, kw_only=True):
    """What the rule concluded: ``promote`` and why (the counted signals, score and turns)."""

    promote: bool
    score: int
    turns: int
    counted: tuple[Signal, ...]
    contradicted: bool  # a contradicted signal came in (the count restarted after it)


def assess(signals: Sequence[Signal], rule: Rule = DEFAULT_RULE) -> Assessment:
    """Whether a working memory with these signals (log order) is promoted now."""
    last_contradiction = max((i for i, s in enumerate(signals) if s.signal == CONTRADICTED), default=-1)
    # a signal about a turn before the contradiction (sent late) speaks of what was contradicted
    since = signals[last_contradiction].turn if last_contradiction >= 0 else None
    counted = tuple(
        s
        for s in signals[last_contradiction + 1 :]
        if s.signal in rule.weights and (since is None or s.turn is None or s.turn >= since)
    )
    score = sum(rule.weights[s.signal] for s in counted)
    turns = len({s.turn for s in counted if s.turn is not None})
    return Assessment(
        promote=score >= rule.threshold and turns >= rule.min_turns,
        score=score,
        turns=turns,
        counted=counted,
        contradicted=last_contradiction >= 0,
    )
