"""A claim set larger than one page of the facade's members: the Conflict page shows every member
(the leader too) and counts them right; the Conflicts list says how many it leaves out."""

from __future__ import annotations

import re

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.console.conftest import Console

MEMBERS = 25  # past the facade's 20 a page and the list's 20 ids


def _large_set(console: Console) -> tuple[int, int]:
    """A 25-member claim set (one service, 25 ports, days apart); its id and its leader."""
    app = LedgerApp(Settings(db=console.db, client="test-writer"))
    try:
        for n in range(MEMBERS):
            written = app.remember(
                f"The mirror API listens on port {5500 + n}",
                subject="mirror",
                event_time=f"2024-08-{n + 1:02d}T00:00:00Z",
                source_type="agent_generated",
            )
        conflict_id = int(written["conflicts"][0]["conflict_id"])
        detail = app.conflict_detail(conflict_id)["conflict"]
    finally:
        app.close()
    assert detail["member_count"] == MEMBERS and detail["has_more"]
    return conflict_id, int(detail["current_verdict"]["leader_id"])


def test_every_member_of_a_large_set_is_shown_and_choosable(console: Console) -> None:
    conflict_id, leader = _large_set(console)
    page = console.get(f"/conflict/{conflict_id}")
    shown = re.findall(r'<li class="member" data-id="(\d+)"', page)
    assert len(shown) == len(set(shown)) == MEMBERS and str(leader) in shown
    assert len(re.findall(r'class="act-resolve"', page)) == MEMBERS
    assert f'<span id="member-count">{MEMBERS}</span>' in page and f"Keep all {MEMBERS}" in page

    listing = console.get("/conflicts?state=open")
    row = listing.split(f'data-id="{conflict_id}"', 1)[1].split("</tr>", 1)[0]
    listed = re.findall(r'href="/memory/(\d+)"', row)
    assert str(leader) in listed and f"and {MEMBERS - len(listed)} more" in row


def test_the_count_stands_beside_the_tab_it_counts(console: Console) -> None:
    """With "open" chosen the count sat after "all": "open judged resolved all(3)"."""
    for state in ("open", "resolved"):
        page = console.get(f"/conflicts?state={state}")
        tab = page.split(f'id="state-{state}"', 1)[1].split("</a>", 1)[0]
        assert re.search(r'<span class="count">\(\d+\)</span>$', tab), tab
        assert (
            '<span class="count">'
            not in page.split(f'id="state-{state}"', 1)[1].split("</nav>", 1)[0].split("</a>", 1)[1]
        )
