"""The console takes RFC 3339's lowercase ``t`` and ``z`` in its time fields (the Audit filters,
"as true at", the audit export) as the CLI and the tools do; ``T24:00`` is refused in words."""

from __future__ import annotations

import urllib.error

from tests.console.conftest import Console


def test_the_audit_page_filters_by_a_lowercase_time(console: Console) -> None:
    page = console.get("/audit?since=2000-01-01t00:00:00z&until=2999-01-01t00:00:00z")
    assert 'class="event-row"' in page and 'id="error"' not in page
    assert 'class="event-row"' in console.get("/audit?at=2999-01-01t00:00:00z")
    exported = console.get("/audit/export.jsonl?since=2000-01-01t00:00:00z")
    assert exported.count("\n") == console.events()  # every event, one a line


def test_the_end_of_a_day_is_refused_with_the_time_to_write(console: Console) -> None:
    try:
        page = console.get("/audit?since=2026-01-04T24:00:00Z")
    except urllib.error.HTTPError as refused:  # an error page may come with a 4xx status
        page = refused.read().decode()
    assert "the end of a day (24:00)" in page and "2026-01-05T00:00Z" in page, page[-2000:]
