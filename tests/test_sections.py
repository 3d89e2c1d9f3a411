"""Sections of long memories: the split (Markdown headings, prose windows), the read model,
``find`` answering with the matching section and ``read``'s catalog / all / chosen sections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.sections import DEFAULT_TARGET, DEFAULT_THRESHOLD, snippet, split_sections
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from fact_ledger.server.schemas.memory import ReadData

PARAGRAPH = (
    "The deployment pipeline builds the image, runs the migrations and then shifts traffic "
    "gradually from the old pods to the new ones while watching the error rate. "
)


def markdown_document() -> str:
    return "\n".join(
        [
            "Intro text before any heading, describing the handbook.",
            "",
            "# Operations handbook",
            "",
            "## Install",
            "### Linux",
            PARAGRAPH * 4,
            "```bash",
            "# not a heading: a shell comment in a fence",
            "apt-get install ledger",
            "```",
            "### macOS",
            PARAGRAPH * 3,
            "## Budget",
            "The budget for 2025 is 50k, approved by finance in March.",
            "",
            PARAGRAPH * 20,
            "# Appendix",
            "Contacts and links.",
        ]
    )


def test_short_memories_are_not_split() -> None:
    assert split_sections("short text") == []
    assert split_sections("x" * DEFAULT_THRESHOLD) == []
    assert split_sections("x" * 200, threshold=100) != []


def test_markdown_headings_give_sections_with_heading_paths() -> None:
    text = markdown_document()
    assert len(text) > DEFAULT_THRESHOLD
    sections = split_sections(text)
    paths = [s.heading_path for s in sections]
    assert paths[0] == ()
    assert ("Operations handbook", "Install", "Linux") in paths
    assert ("Operations handbook", "Install", "macOS") in paths
    assert ("Appendix",) in paths
    # titles followed directly by a deeper heading are only part of paths
    assert ("Operations handbook",) not in paths and ("Operations handbook", "Install") not in paths
    # a '#' line inside a code fence is not a heading
    assert not any("not a heading" in p for path in paths for p in path)
    linux = next(s for s in sections if s.heading_path[-1:] == ("Linux",))
    assert "apt-get install ledger" in text[linux.start : linux.end]
    # the long Budget section is cut into windows that keep its path
    budget = [s for s in sections if s.heading_path == ("Operations handbook", "Budget")]
    assert len(budget) > 1 and "50k" in text[budget[0].start : budget[0].end]
    assert [s.ordinal for s in sections] == list(range(1, len(sections) + 1))


def test_prose_is_cut_into_paragraph_windows() -> None:
    paragraphs = [f"Paragraph {i}. " + PARAGRAPH * 3 for i in range(12)]
    text = "\n\n".join(paragraphs)
    sections = split_sections(text)
    assert len(sections) > 2 and all(s.heading_path == () for s in sections)
    for s in sections:
        body = text[s.start : s.end]
        assert len(body) <= DEFAULT_TARGET
        assert body.lstrip().startswith("Paragraph")  # windows hold whole paragraphs


def test_a_paragraph_without_breaks_is_cut_at_sentence_ends() -> None:
    text = "这是一个很长的句子，描述了项目的预算和计划。" * 400
    sections = split_sections(text)
    assert len(sections) > 1
    assert all(text[s.start : s.end].endswith("。") for s in sections)


_chunks = st.sampled_from(["a", "b ", "word ", ". ", "。", "\n", "\n\n", "# T\n", "## U\n", "```\n", "x" * 50])
_text = st.lists(_chunks, max_size=300).map("".join)


@settings(max_examples=200, deadline=None)
@given(_text, st.integers(10, 400))
def test_sections_are_ordered_verbatim_spans_that_cover_the_text(text: str, target: int) -> None:
    sections = split_sections(text, threshold=0, target=target)
    previous_end = 0
    for s in sections:
        assert previous_end <= s.start < s.end <= len(text)
        assert s.end - s.start <= target
        gap = text[previous_end : s.start]  # left out: only blank space and bare heading lines
        assert all(not line.strip() or line.startswith("#") for line in gap.splitlines())
        previous_end = s.end
    assert all(not line.strip() or line.startswith("#") for line in text[previous_end:].splitlines())
    assert split_sections(text, threshold=0, target=target) == sections  # deterministic


# -- the read model, find and read (real SQLite through the facade) ------------------------------
def _prose() -> str:
    topics = [
        "The staging cluster runs in Frankfurt and is patched every Tuesday night.",
        "Our budget review happens in March; the finance team approves every line item.",
        "The mobile app release train leaves every second Thursday from the main branch.",
    ]
    return "\n\n".join(f"{topics[i % 3]} " + PARAGRAPH * 3 + f"Note {i}." for i in range(12))


def test_find_answers_with_the_markdown_section_that_matches(app: LedgerApp) -> None:
    doc = markdown_document()
    memory_id = app.remember(doc, subject="handbook")["memory_id"]
    app.remember("A short note about the budget approval and finance", subject="note")
    hit = next(r for r in app.find("budget 50k approved finance")["results"] if r["memory_id"] == memory_id)
    section = hit["section"]
    assert section["heading_path"] == ["Operations handbook", "Budget"]
    assert "50k" in section["snippet"] and "50k" in hit["content"]
    assert len(hit["content"]) < len(doc) and hit["content"] in doc
    assert doc[section["start"] : section["end"]] == hit["content"]
    assert section["sections"] == len(split_sections(doc)) and section["section_id"] >= 1
    linux = next(r for r in app.find("apt-get install ledger")["results"] if r["memory_id"] == memory_id)
    assert linux["section"]["heading_path"] == ["Operations handbook", "Install", "Linux"]


def test_find_answers_with_a_prose_window_and_whole_when_the_match_is_spread(app: LedgerApp) -> None:
    text = _prose()
    memory_id = app.remember(text, subject="ops notes")["memory_id"]
    local = next(r for r in app.find("Frankfurt patched Tuesday")["results"] if r["memory_id"] == memory_id)
    assert local["section"]["heading_path"] == [] and "Frankfurt" in local["section"]["snippet"]
    assert len(local["content"]) <= 1500
    # "Note 0" and "Note 11" live in different windows: no single section holds both
    spread = next(r for r in app.find("Frankfurt Thursday Note 0 11")["results"] if r["memory_id"] == memory_id)
    assert "section" not in spread and spread["content"] == text
    short = app.remember("Frankfurt is patched on Tuesdays", subject="short")["memory_id"]
    plain = next(r for r in app.find("Frankfurt patched")["results"] if r["memory_id"] == short)
    assert "section" not in plain


def test_read_returns_the_catalog_all_sections_or_chosen_ones(app: LedgerApp) -> None:
    doc = markdown_document()
    memory_id = app.remember(doc, subject="handbook")["memory_id"]
    catalog = app.read(memory_id)["memory"]["sections"]
    assert [s["section_id"] for s in catalog] == list(range(1, len(catalog) + 1))
    assert all("text" not in s for s in catalog) and catalog[0]["heading_path"] == []
    assert app.read(memory_id, sections="catalog")["memory"]["sections"] == catalog
    every = app.read(memory_id, sections="all")["memory"]["sections"]
    assert [s["text"] for s in every] == [doc[s["start"] : s["end"]] for s in catalog]
    chosen = app.read(memory_id, sections=[3, 1])["memory"]["sections"]
    assert [s["section_id"] for s in chosen] == [3, 1] and chosen[1]["text"] == every[0]["text"]
    with pytest.raises(InvalidInput, match="no section 999"):
        app.read(memory_id, sections=[999])
    short = app.remember("short memory", subject="s")["memory_id"]
    assert app.read(short, sections="all")["memory"]["sections"] == []


def test_read_sections_input_is_validated() -> None:
    assert ReadData.parse({"memory_id": 1, "sections": "all"}).sections == "all"
    assert ReadData.parse({"memory_id": 1, "sections": [2, 3]}).sections == [2, 3]
    for bad in ("some", [0], [True], ["1"], 5):
        with pytest.raises(InvalidInput) as caught:
            ReadData.parse({"memory_id": 1, "sections": bad})
        assert caught.value.field is not None and caught.value.field.startswith("sections")
    # what it may be, said: the union's first branch alone named only 'catalog' or 'all'
    with pytest.raises(InvalidInput, match="section ids are positive integers"):
        ReadData.parse({"memory_id": 1, "sections": [0, -1]})
    with pytest.raises(InvalidInput, match="an empty list names no section"):
        ReadData.parse({"memory_id": 1, "sections": []})


def test_an_update_replaces_the_sections_with_the_new_versions(app: LedgerApp) -> None:
    memory_id = app.remember(markdown_document(), subject="handbook")["memory_id"]
    before = app.read(memory_id)["memory"]["sections"]
    assert {s["version"] for s in before} == {1}
    app.update(memory_id, content=_prose(), expected_version=1)
    after = app.read(memory_id)["memory"]["sections"]
    assert {s["version"] for s in after} == {2} and all(s["heading_path"] == [] for s in after)
    assert not any(r["memory_id"] == memory_id for r in app.find("apt-get install ledger")["results"])
    app.update(memory_id, content="now short", expected_version=2)
    assert app.read(memory_id)["memory"]["sections"] == []
    assert app.find("Frankfurt patched Tuesday")["results"] == []


def test_rebuild_gives_the_same_sections_and_index(app: LedgerApp) -> None:
    first = app.remember(markdown_document(), subject="handbook")["memory_id"]
    app.remember(_prose(), subject="ops")
    app.update(first, content=markdown_document().replace("50k", "80k"), expected_version=1)
    incremental = app.runner.checksums()
    found = app.find("budget 80k approved")["results"]
    app.rebuild()
    assert app.runner.checksums() == incremental
    assert app.find("budget 80k approved")["results"] == found
    assert found[0]["section"]["heading_path"] == ["Operations handbook", "Budget"]


def test_the_threshold_is_a_setting_and_a_new_value_rebuilds_the_sections(db_path: Path) -> None:
    text = _prose()[:3000]
    small = LedgerApp(Settings(db=str(db_path), section_threshold=1000))
    memory_id = small.remember(text, subject="ops")["memory_id"]
    assert len(small.read(memory_id)["memory"]["sections"]) >= 2
    small.close()
    default = LedgerApp(Settings(db=str(db_path)))
    try:
        assert default.read(memory_id)["memory"]["sections"] == []  # 3,000 chars: under the default 4,000
    finally:
        default.close()


def test_snippet_centres_on_the_first_term_and_marks_cuts() -> None:
    text = "alpha " * 100 + "the budget is 50k " + "omega " * 100
    cut = snippet(text, ["50k"], width=80)
    assert "50k" in cut and cut.startswith("…") and cut.endswith("…") and len(cut) <= 82
    assert snippet("short text", ["absent"]) == "short text"


def test_cli_read_shows_sections(db_path: Path) -> None:
    from tests.conftest import ledger_cli

    db = str(db_path)
    LedgerApp(Settings(db=db)).close()
    path = db_path.parent / "doc.md"
    path.write_text(markdown_document(), encoding="utf-8")
    memory_id = json.loads(ledger_cli("remember", "--file", str(path), "--db", db, "--json").stdout)["memory_id"]
    chosen = json.loads(ledger_cli("read", str(memory_id), "--sections", "2,1", "--db", db, "--json").stdout)
    assert [s["section_id"] for s in chosen["memory"]["sections"]] == [2, 1]
    assert "text" in chosen["memory"]["sections"][0]
    human = ledger_cli("read", str(memory_id), "--db", db).stdout
    assert "§2 Operations handbook › Install › Linux" in human
    bad = ledger_cli("read", str(memory_id), "--sections", "x", "--db", db, "--json")
    assert bad.returncode == 1 and json.loads(bad.stdout)["error"]["code"] == "invalid_input"
