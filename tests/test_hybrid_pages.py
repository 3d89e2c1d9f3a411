"""Paging through hybrid ``find`` (real tiny model, tests/tiny_model.py): pages never overlap
and nothing is skipped. Each page used to run the search again with a candidate pool sized by
that page, and the min-max normalisation over another pool moved the order: 300 short memories,
five pages of ten, 50 results but 47 distinct. Later pages now rank the first page's candidates,
normalised as they were (the cursor carries the first page's size), and past them the remaining
text matches follow in full-text order."""

from __future__ import annotations

from pathlib import Path

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

WORDS = ("coffee", "tea", "music", "book", "dog", "cat", "morning", "evening", "city", "project")
NAMES = [f"{c}{v}{c}o" for c in "bdfgklmnprst" for v in "aeiou"][:30]  # 30 made-up names, no digits


def _pages(app: LedgerApp, query: str, limit: int, pages: int) -> list[list[int]]:
    out, cursor = [], None
    for _ in range(pages):
        answer = app.find(query, limit=limit, cursor=cursor)
        out.append([r["memory_id"] for r in answer["results"]])
        cursor = answer["next_cursor"]
        if cursor is None:
            break
    return out


def test_hybrid_pages_never_repeat_or_skip_a_memory(tmp_path: Path, tiny_gguf: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(model=str(tiny_gguf))))
    try:
        for i in range(300):
            # Each memory its own statement (no two the same one with other values, which find
            # would put newest first among themselves): the order is the ranking's alone.
            app.remember(f"{NAMES[i // 10]} {WORDS[i % 10]}: the team keeps the {WORDS[(i // 10) % 10]} notes")
        app.reembed()
        assert app.search_mode() == "vector+fts"
        first = app.find("the coffee notes of the team", limit=10)
        pages = _pages(app, "the coffee notes of the team", 10, 5)
        shown = [m for page in pages for m in page]
        assert pages[0] == [r["memory_id"] for r in first["results"]]  # page 1 as before
        assert len(shown) == 50 and len(set(shown)) == 50, pages
        # Deeper than the first page's candidates (~80): the text matches go on, still distinct.
        deep = [m for page in _pages(app, "the coffee notes of the team", 40, 6) for m in page]
        assert len(deep) == len(set(deep)) > 100
    finally:
        app.close()
