"""The working set rule and the working tier's lexical recall (ledger/working.py): properties."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fact_ledger.ledger.working import match_score, select_set, tokens

notes = st.lists(
    st.builds(lambda s, t: {"sticky": s, "touched": t}, st.booleans(), st.integers(0, 10_000)),
    max_size=60,
    unique_by=lambda n: n["touched"],
)


@given(notes, st.integers(1, 40))
def test_sticky_notes_stay_and_the_rest_are_the_most_recently_touched(pool: list[dict], size: int) -> None:
    kept = select_set(pool, size)
    sticky = [n for n in pool if n["sticky"]]
    assert all(n in kept for n in sticky)
    assert len(kept) == max(len(sticky), min(size, len(pool)))
    others = [n for n in kept if not n["sticky"]]
    dropped = [n for n in pool if n not in kept]
    assert all(d["touched"] < o["touched"] for d in dropped for o in others)  # the least recently touched go
    assert [n["touched"] for n in kept] == sorted((n["touched"] for n in kept), reverse=True)


def test_recall_by_words_in_english_and_chinese() -> None:
    assert match_score("preview port", "Trying port 8081 for the preview server") == 1.0
    assert match_score("staging database", "Trying port 8081 for the preview server") == 0.0
    assert match_score("今天的会", "今天的会是UI走查会") == 1.0
    assert match_score("预算", "今天的会是UI走查会") == 0.0
    assert match_score("", "anything") == 1.0
    assert "the" not in tokens("the preview") and {"今天", "天的"} <= tokens("今天的会")
