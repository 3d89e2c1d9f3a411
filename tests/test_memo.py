"""Memoised text functions keep small inputs and never large ones."""

from __future__ import annotations

from fact_ledger.ledger.memo import text_cache


def test_small_texts_are_memoised_and_large_ones_computed_each_time() -> None:
    calls: list[int] = []

    @text_cache(maxsize=8, max_chars=10)
    def length(text: str, extra: int = 0) -> int:
        calls.append(len(text))
        return len(text) + extra

    assert length("short") == length("short") == 5
    assert length("short", 1) == 6
    assert calls == [5, 5]  # one computation per distinct argument tuple
    big = "x" * 11
    assert length(big) == length(big) == 11
    assert calls == [5, 5, 11, 11]  # computed every time
    assert length.cache_info().currsize == 2  # type: ignore[attr-defined]


def test_the_write_path_memos_do_not_keep_a_large_content() -> None:
    from fact_ledger.ledger import claims, fingerprint, text

    content = "项目 deploy port is 8443. " * 2000  # ~50k characters
    for fn in (fingerprint.signature, text.index_text):
        fn.cache_clear()  # type: ignore[attr-defined]
        fn(content)
        assert fn.cache_info().currsize == 0  # type: ignore[attr-defined]
    claims._extract.cache_clear()  # type: ignore[attr-defined]
    claims.extract_claims(content)
    assert claims._extract.cache_info().currsize == 0  # type: ignore[attr-defined]
