"""Sections in results: ``find`` answers with the matching section of a long memory, ``read``
returns the catalog, every section or chosen ones (``sections: "catalog" | "all" | [ids]``).

The find rule: when one section of a long memory holds every term of the query (or, with
vectors, when one section's vector is closer to the query than the whole memory's), the result
carries that section (``section_id``, ``heading_path``, a ``snippet``, its span and the number
of sections) and ``content`` is that section's text rather than the whole document; when the
terms are spread over several sections the memory answers whole, as a short one does.
"""

from __future__ import annotations

from typing import Any

import apsw

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.ledger.sections import snippet
from fact_ledger.ledger.text import analyse
from fact_ledger.projections.memory_row import MemoryRow
from fact_ledger.projections.sections import SectionInfo, best_local_section, catalog

SectionsRequest = str | list[int] | None


def matching_section(
    conn: apsw.Connection, row: MemoryRow, query: str, threshold: int, nearest: int | None = None
) -> SectionInfo | None:
    """The local match of ``query`` in a long memory: the section holding every query term, else
    the section whose vector was closest to the query (``nearest``, from hybrid find); None for
    short memories, or when the terms are spread and no section is closer than the whole."""
    if not query.strip() or len(row.content) <= threshold:
        return None
    found = best_local_section(conn, row.memory_id, query)
    if found is None and nearest is not None:
        found = next((s for s in catalog(conn, row.memory_id) if s.section_id == nearest), None)
    return found


def with_section(view: dict[str, Any], section: SectionInfo, query: str, total: int) -> dict[str, Any]:
    """``view`` answering with ``section``: its text as content, and where it sits."""
    body = view["content"][section.start : section.end]
    terms = [t.text for t in analyse(query).terms]
    view["content"] = body
    view["section"] = {
        "section_id": section.section_id,
        "heading_path": section.heading_path,
        "snippet": snippet(body, terms),
        "start": section.start,
        "end": section.end,
        "sections": total,
    }
    return view


def section_count(conn: apsw.Connection, memory_id: int) -> int:
    return len(catalog(conn, memory_id))


def sections_view(
    conn: apsw.Connection, memory_id: int, content: str, request: SectionsRequest
) -> list[dict[str, Any]]:
    """``read``'s sections: ``"catalog"`` (default) without text, ``"all"`` or a list of ids with text."""
    entries = catalog(conn, memory_id)
    if request is None or request == "catalog":
        chosen, with_text = entries, False
    elif request == "all":
        chosen, with_text = entries, True
    elif isinstance(request, list):
        known = {s.section_id: s for s in entries}
        missing = [i for i in request if i not in known]
        if missing:
            raise InvalidInput(
                f"memory {memory_id} has no section {missing[0]} (it has {len(entries)})", field="sections"
            )
        chosen, with_text = [known[i] for i in dict.fromkeys(request)], True
    else:
        raise InvalidInput('sections must be "catalog", "all" or a list of section ids', field="sections")
    out = []
    for s in chosen:
        item: dict[str, Any] = {
            "section_id": s.section_id,
            "heading_path": s.heading_path,
            "start": s.start,
            "end": s.end,
            "chars": s.end - s.start,
            "version": s.version,
        }
        if with_text:
            item["text"] = content[s.start : s.end]
        out.append(item)
    return out
