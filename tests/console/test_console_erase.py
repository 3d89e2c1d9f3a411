"""The console's erase button (issue 27, point 1): the same confirmation page as other
governance, which says what goes and what stays, then the memory reads ``erased`` with its text
gone from its page and its history, and nothing of it left in the log file."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
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

    status, done, _ = _request(console, "POST", "/act/erase", body={**form, "confirmed": "yes"})
    assert status == 200 and f"Memory #{memory_id} erased" in done and MARKER not in done
    assert console.events() == before + 1  # the Erased event
    assert "1 row of the log was cleared" in done and "1 rows" not in done  # one event row: its one row
    # the receipt, as the CLI gives it: shown, and offered as a file that verify proves
    receipt = json.loads(html.unescape(re.search(r'<pre id="receipt">(.*?)</pre>', done, re.S).group(1)))
    assert receipt["kind"] == "fact-ledger erasure receipt" and receipt["erasures"][0]["memory_id"] == memory_id
    assert f'download="erasure-receipt-{memory_id}.json"' in done and "ledger verify --receipt FILE" in done
    saved = Path(console.db).with_name(f"receipt-{memory_id}.json")
    saved.write_text(json.dumps(receipt), encoding="utf-8")
    verified = ledger_cli("verify", "--receipt", str(saved), "--db", console.db, "--json", check=True)
    assert json.loads(verified.stdout)["ok"] is True
    page = console.get(f"/memory/{memory_id}")
    assert MARKER not in page and re.search(r'id="status">\s*erased', page) and 'action="/act/erase"' not in page
    assert MARKER not in console.get(f"/memory/{memory_id}?" + urlencode({"tab": "history"}))
    with open(console.db, "rb") as fh:
        assert MARKER.encode() not in fh.read()


def test_the_erasure_receipt_page_speaks_chinese_too(console: Console) -> None:
    written = ledger_cli("remember", f"Oli's locker code is {MARKER}-zh", "--db", console.db, "--json", check=True)
    memory_id = json.loads(written.stdout)["memory_id"]
    cookie = f"ledger_console_{console.port}={console.token}; ledger_console_lang=zh"
    form = {"memory_id": str(memory_id), "reason": "本人要求", "csrf": console.csrf(), "confirmed": "yes"}
    status, done, _ = _request(console, "POST", "/act/erase", body=form, headers={"Cookie": cookie})
    assert status == 200 and f"记忆 #{memory_id} 已永久删除" in done and "下载回执" in done, done[-800:]
