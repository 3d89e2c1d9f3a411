"""Split a long memory into sections: Markdown headings first, paragraph windows for prose.

A memory longer than a threshold (default 4,000 characters) is cut so that ``find`` can answer
with the part that matches and ``read`` can return a catalog or chosen parts instead of the whole
document. The cut is a pure function of the text and two sizes, so a rebuild cuts exactly as the
live write did.

- Markdown: every ATX heading (``#`` to ``######`` at the start of a line, outside fenced code)
  starts a section whose heading path is the stack of enclosing headings
  (``["Install", "Linux"]``). Text before the first heading is a section with an empty path. A
  heading directly followed by a deeper heading adds no section of its own: its title lives on
  in the child's path.
- Prose, and any section still longer than ``target`` characters: paragraphs (blank-line
  separated) are packed greedily into windows of at most ``target`` characters; a paragraph
  longer than that is cut at sentence ends (``. ! ? 。 ！ ？``) and, failing those, at whitespace
  or at ``target``.

Sections are spans of the original text (``start``/``end`` offsets), so a section's body is
always verbatim content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_THRESHOLD = 4000  # characters: shorter memories are not split
DEFAULT_TARGET = 1500  # characters per section, at most (about 400 English tokens)
# A fact this short is always shown whole: a snippet budget cuts long memories only, since a
# short fact cut mid-value ("moved to https://vpn.acme.d…") answers nothing. The MCP reply
# (server/mcp/compact.py), the CLI and section snippets share this one rule.
WHOLE_FACT_CHARS = 300

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？]")


@dataclass(frozen=True)
class Section:
    ordinal: int  # 1-based position in the memory: the section id
    heading_path: tuple[str, ...]
    start: int
    end: int


def split_sections(text: str, threshold: int = DEFAULT_THRESHOLD, target: int = DEFAULT_TARGET) -> list[Section]:
    """The sections of ``text``, or ``[]`` when it is not longer than ``threshold`` characters."""
    if len(text) <= threshold:
        return []
    spans: list[tuple[tuple[str, ...], int, int]] = []
    for path, start, end in _heading_blocks(text):
        spans.extend((path, s, e) for s, e in _windows(text, start, end, target))
    return [Section(i, path, s, e) for i, (path, s, e) in enumerate(spans, start=1)]


def _heading_blocks(text: str) -> list[tuple[tuple[str, ...], int, int]]:
    """(heading path, start, end) per heading; one block with an empty path when there are none."""
    headings: list[tuple[int, int, str]] = []  # (offset, level, title)
    offset, fenced = 0, False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(line.rstrip("\r\n"))):
            headings.append((offset, len(match.group(1)), match.group(2).strip()))
        offset += len(line)
    if not headings:
        return [((), 0, len(text))]
    blocks: list[tuple[tuple[str, ...], int, int]] = []
    if text[: headings[0][0]].strip():
        blocks.append(((), 0, headings[0][0]))
    stack: list[tuple[int, str]] = []
    for index, (start, level, title) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = headings[index + 1][0] if index + 1 < len(headings) else len(text)
        following_is_child = index + 1 < len(headings) and headings[index + 1][1] > level
        body = text[start:end].split("\n", 1)[1] if "\n" in text[start:end] else ""
        if following_is_child and not body.strip():
            continue  # only a title: it is in the child's heading path
        blocks.append((tuple(t for _, t in stack), start, end))
    return blocks


def _windows(text: str, start: int, end: int, target: int) -> list[tuple[int, int]]:
    """Greedy windows of whole paragraphs, each at most ``target`` characters (when possible)."""
    if end - start <= target:
        return [(start, end)] if text[start:end].strip() else []
    pieces: list[tuple[int, int]] = []
    cursor = start
    for match in _PARAGRAPH_BREAK.finditer(text, start, end):
        pieces.append((cursor, match.end()))
        cursor = match.end()
    pieces.append((cursor, end))
    units: list[tuple[int, int]] = []
    for s, e in pieces:
        units.extend(_cut_long(text, s, e, target) if e - s > target else [(s, e)])
    windows: list[tuple[int, int]] = []
    for s, e in units:
        if windows and e - windows[-1][0] <= target:
            windows[-1] = (windows[-1][0], e)
        else:
            windows.append((s, e))
    return [(s, e) for s, e in windows if text[s:e].strip()]


def _cut_long(text: str, start: int, end: int, target: int) -> list[tuple[int, int]]:
    """Cut one over-long paragraph at the last sentence end (else whitespace) before ``target``."""
    out: list[tuple[int, int]] = []
    while end - start > target:
        limit = start + target
        cut = 0
        for match in _SENTENCE_END.finditer(text, start, limit):
            cut = match.end()
        if cut <= start:
            cut = max(text.rfind(" ", start, limit), text.rfind("\n", start, limit)) + 1
        if cut <= start:
            cut = limit
        out.append((start, cut))
        start = cut
    out.append((start, end))
    return out


def shown_whole(text: str) -> bool:
    """Whether ``text`` is short enough that no answer may cut it (:data:`WHOLE_FACT_CHARS`)."""
    return len(text) <= WHOLE_FACT_CHARS


def snippet(text: str, terms: list[str], width: int = 240) -> str:
    """About ``width`` characters of ``text`` around the first query term found (case-folded),
    cut at spaces where there are any, with "…" where text was left out; a short text whole."""
    if shown_whole(text):
        return " ".join(text.split())
    lowered = text.casefold()
    hits = [i for i in (lowered.find(t.casefold()) for t in terms if t) if i >= 0]
    centre = min(hits) if hits else 0
    start = max(0, centre - width // 3)
    end = min(len(text), start + width)
    start = max(0, end - width)
    if start > 0 and (space := text.find(" ", start, centre)) != -1:
        start = space + 1
    if end < len(text) and (space := text.rfind(" ", centre, end)) > centre:
        end = space
    body = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")
