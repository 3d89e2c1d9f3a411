"""compare's word diff and lexical closeness (ledger.word_diff): pure functions, EN and ZH."""

from __future__ import annotations

from fact_ledger.ledger.word_diff import lexical_closeness, render, word_diff


def test_english_words_are_the_tokens() -> None:
    runs = word_diff("Always deploy to the staging server first.", "Never deploy to the production server first!")
    assert runs == [
        {"op": "replace", "left": "Always", "right": "Never"},
        {"op": "equal", "left": "deploy to the", "right": "deploy to the"},
        {"op": "replace", "left": "staging", "right": "production"},
        {"op": "equal", "left": "server first", "right": "server first"},
        {"op": "replace", "left": ".", "right": "!"},
    ]
    assert render(runs) == "[-Always-]{+Never+} deploy to the [-staging-]{+production+} server first[-.-]{+!+}"


def test_chinese_characters_are_the_tokens() -> None:
    runs = word_diff("张伟的电话是备用号码", "张伟的电话是主用号码，请记住")
    assert runs == [
        {"op": "equal", "left": "张伟的电话是", "right": "张伟的电话是"},
        {"op": "replace", "left": "备", "right": "主"},
        {"op": "equal", "left": "用号码", "right": "用号码"},
        {"op": "insert", "left": "", "right": "，请记住"},
    ]
    assert render(runs) == "张伟的电话是[-备-]{+主+}用号码{+，请记住+}"


def test_deletions_insertions_and_spacing_are_kept() -> None:
    runs = word_diff("use  port 8080 now", "use port 8080")
    assert [r["op"] for r in runs] == ["equal", "delete"]
    assert runs[0]["left"] == "use  port 8080" and runs[0]["right"] == "use port 8080"
    assert word_diff("same", "same") == [{"op": "equal", "left": "same", "right": "same"}]
    assert word_diff("", "") == []


def test_lexical_closeness_is_the_shingles_jaccard() -> None:
    assert lexical_closeness("the staging server", "the staging server") == 1.0
    assert lexical_closeness("abcd", "wxyz") == 0.0
    close = lexical_closeness("Always deploy to the staging server first", "Always deploy to the staging server")
    far = lexical_closeness("Always deploy to the staging server first", "Never deploy anything on Fridays")
    assert 0.5 < close < 1.0 and far < close
    assert 0.0 < lexical_closeness("张伟的电话是备用号码", "张伟的电话是主用号码") < 1.0
