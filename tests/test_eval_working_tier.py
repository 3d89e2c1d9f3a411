"""tools/eval/working_tier: its wordings state one claim each, and on a small stream the working
tier lowers long-term duplicates and open contradictions without lowering current top answers."""

from __future__ import annotations

from pathlib import Path

from fact_ledger.ledger.claims import extract_claims
from tools.eval.working_tier import TEMPLATES, generate, main, run


def test_every_wording_of_a_fact_states_the_same_claim() -> None:
    for (kind, lang), wordings in TEMPLATES.items():
        subject = {"en": "amber staging API" if kind == "port" else "Alice Novak", "zh": "张伟"}[lang]
        value = "8080" if kind == "port" else ("上海" if lang == "zh" else "Berlin")
        keys = {
            tuple((c.subject.casefold(), c.attribute, c.value) for c in extract_claims(w.format(s=subject, v=value)))
            for w in wordings
        }
        assert len(keys) == 1 and next(iter(keys)), (kind, lang, keys)


def test_the_stream_is_reproducible_and_bilingual() -> None:
    first, second = generate(12, 6, seed=3), generate(12, 6, seed=3)
    assert [s.say for s in first.steps] == [s.say for s in second.steps]
    assert {f.lang for f in first.facts} == {"en", "zh"}
    assert {s.signal for s in first.steps if s.signal} >= {"tool_succeeded", "user_affirmed", "contradicted"}


def test_the_working_tier_keeps_long_term_memory_cleaner(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    result = run(facts=12, conversations=8, seed=5)
    long_only, working = result["long_only"], result["working"]
    assert working["duplicates_per_100"] < long_only["duplicates_per_100"]
    assert working["open_contradictions_per_100"] < long_only["open_contradictions_per_100"]
    assert working["top_answer_current"] >= long_only["top_answer_current"]
    assert main(["--facts", "4", "--conversations", "2"]) == 0
    assert "per 100 facts" in capsys.readouterr().err
