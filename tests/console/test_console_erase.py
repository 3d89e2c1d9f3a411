"""The console's erase button (issue 27, point 1): the same confirmation page as other
governance, which says what goes and what stays, then the memory reads ``erased`` with its text
gone from its page and its history, and nothing of it left in the log file."""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode

from tests.conftest import ledger_cli
from tests.console.conftest import Console
from tests.console.test_console_guard import _request

MARKER = "cn-marker-60233-gone"


def test_erase_asks_first_then_the_memory_reads_erased(console: Console) -> None:
    written = ledger_cli("remember", f"Nia's door code is {MARKER}", "--db", console.db, "--json", check=True)
    memory_id = json.loads(written.stdout)["memory_id"]
    page = console.get(f"/memory/{memory_id}")
    assert 'action="/act/erase"' in page and MARKER in page
    form = {"memory_id": str(memory_id), "reason": "Nia asked", "csrf": console.csrf()}
    before = console.events()

    status, asked, _ = _request(console, "POST", "/act/erase", body=form)
    assert status == 200 and f"Erase memory #{memory_id} for good" in asked and MARKER in asked
    assert 'name="confirmed" value="yes"' in asked and console.events() == before  # nothing yet

    status, _, headers = _request(console, "POST", "/act/erase", body={**form, "confirmed": "yes"})
    assert status == 303 and headers["location"] == f"/memory/{memory_id}?done=erase"
    assert console.events() == before + 1  # the Erased event
    page = console.get(f"/memory/{memory_id}")
    assert MARKER not in page and re.search(r'id="status">\s*erased', page) and 'action="/act/erase"' not in page
    assert MARKER not in console.get(f"/memory/{memory_id}?" + urlencode({"tab": "history"}))
    with open(console.db, "rb") as fh:
        assert MARKER.encode() not in fh.read()
