"""The console in a real browser (headless Debian Chromium through Playwright) on a seeded ledger.

Set ``LEDGER_CONSOLE_SHOTS=DIR`` to keep screenshots of the main pages there
(``python -m tools.console_shots`` does, for docs/console/).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ledger_cli
from tests.console.conftest import Console
from tests.contract.conftest import LedgerServer

SHOTS = os.environ.get("LEDGER_CONSOLE_SHOTS")


def shot(page: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def test_every_page_loads_with_english_and_chinese_content(page: Any, console: Console) -> None:
    ids = console.ids
    pages = {
        "overview": ("/", "Memories by status"),
        "memories": ("/memories", "Build log"),
        "memory": (f"/memory/{ids['port']}", "port 8081"),
        "conflicts": ("/conflicts", "Alice"),
        "conflict": (f"/conflict/{ids['zh_conflict']}", "张伟住在北京"),
        "timeline": ("/timeline?subject=prod db", "PostgreSQL 16"),
        "audit": ("/audit", "Confirmed"),
        "doctor": ("/doctor?run=1", "hash chain intact"),
        "settings": ("/settings", "policy.review_agent_conflicts"),
        "health": ("/health", "Contradiction clusters"),
    }
    # The checks run when asked: a visit shows the last run's report (none before a first run, which
    # another test of this shared console may have asked for already), never a new one.
    page.goto(console.base + "/doctor")
    assert page.is_visible("#run-checks")
    shown = page.inner_text("main")
    page.goto(console.base + "/doctor")
    assert page.inner_text("main") == shown  # a new run says its own time
    for name, (path, expected) in pages.items():
        response = page.goto(console.base + path)
        assert response.status == 200, (path, response.status)
        assert expected in page.inner_text("main"), (path, expected)
        shot(page, name)
    page.goto(console.base + "/")
    assert "hash chain intact" in page.inner_text("#chain-state")  # the Overview shows the last check
    shot(page, "overview")
    page.goto(f"{console.base}/memory/{ids['budget']}")
    assert "项目预算是5万元" in page.inner_text("#content") and "locked" in page.inner_text("h1")


def test_memory_page_shows_versions_links_and_a_retraction(page: Any, console: Console) -> None:
    ids = console.ids
    page.goto(f"{console.base}/memory/{ids['port']}")
    versions = page.locator(".version")
    assert versions.count() == 2
    assert "8080" in versions.nth(0).inner_text() and "8081" in versions.nth(1).inner_text()
    assert page.locator(".version").nth(1).locator(".d-added").first.inner_text() == "8081"
    page.goto(f"{console.base}/memory/{ids['meeting']}")
    assert "retired" in page.inner_text("#status")
    assert f"#{ids['cancel']}" in page.inner_text("#links")
    page.goto(f"{console.base}/memory/{ids['old_db']}")
    assert f"#{ids['new_db']}" in page.inner_text("#links") and "superseded" in page.inner_text("#status")


def test_search_filters_and_paging(page: Any, console: Console) -> None:
    page.goto(console.base + "/memories")
    page.fill("#q", "Berlin")
    page.click("#search-go")
    page.locator(".memory-row", has_text="Alice lives in Berlin").first.wait_for()
    assert "q=Berlin" in page.url
    rows = page.locator(".memory-row")
    assert "Alice lives in Berlin" in rows.first.inner_text() and "in conflict" in rows.first.inner_text()
    page.goto(console.base + "/memories?q=张伟")
    assert "张伟" in page.locator(".memory-row").first.inner_text()
    page.goto(console.base + "/memories?tags=ci")
    first = {r.get_attribute("data-id") for r in page.locator(".memory-row").all()}
    assert len(first) == 20
    with page.expect_navigation():  # a link: the rows are read from the next page, not during the load
        page.click("#next-page")
    page.locator(".memory-row").first.wait_for()
    second = {r.get_attribute("data-id") for r in page.locator(".memory-row").all()}
    assert second and not first & second


def test_a_search_in_a_workspace_that_never_held_a_memory_says_so_in_both_languages(
    page: Any, console: Console
) -> None:
    """A mistyped workspace answered "Nothing found.", as a query that matches nothing does."""
    for lang, said, nearest in (
        ("en", "Workspace “fact-ledgr” holds no memory: none was ever stored in it.", "Did you mean “fact-ledger”?"),
        ("zh", "工作区“fact-ledgr”中没有任何记忆：从未有记忆存入其中。", "是否要找“fact-ledger”？"),
    ):
        page.goto(f"{console.base}/lang/{lang}?next=/memories")
        page.goto(f"{console.base}/memories?q=port&workspace=fact-ledgr")
        assert page.locator(".memory-row").count() == 0
        assert page.inner_text("#workspace-empty").startswith(said)
        assert page.inner_text("#workspace-nearest") == nearest
        with page.expect_navigation():
            page.click("#workspace-nearest")
        assert "workspace=fact-ledger" in page.url and "q=port" in page.url
        assert "8081" in page.locator(".memory-row").first.inner_text()
        assert not page.is_visible("#workspace-empty")
    page.goto(f"{console.base}/memories?q=nothing+like+this&workspace=fact-ledger")  # no match stays that
    assert page.is_visible(".empty") and not page.is_visible("#workspace-empty")


def test_a_stray_space_in_a_search_box_is_no_filter(page: Any, console: Console) -> None:
    """A space typed in the workspace or conversation box searched a workspace (a conversation)
    named " " and found nothing."""
    # the values themselves are asked for: other tests of this module add memories about ports to
    # the shared ledger, which could push a "port" hit off the first page
    page.goto(f"{console.base}/memories?q=9201&session=+")
    assert page.locator(".memory-row", has_text="9201").count() == 1
    page.goto(f"{console.base}/memories?q=9201&workspace=+")
    assert page.locator(".memory-row", has_text="9201").count() == 1  # another workspace's too
    assert not page.is_visible("#workspace-empty")
    page.goto(f"{console.base}/memories?q=8081&workspace=fact-ledger+")  # nor around a name
    assert "8081" in page.locator(".memory-row").first.inner_text()


def test_a_working_note_and_a_retired_memory_are_erased_from_their_page(page: Any, console: Console) -> None:
    """The console offered no erase for a working note (its page said it could not be erased, and
    to promote it first: its text would have been recorded again as long-term memory) nor for a
    memory no longer current, where the CLI and the MCP tool erase both."""
    note = json.loads(
        ledger_cli(
            "remember", "the vault PIN is 4471", "--tier", "working", "--session", "ops", "--db", console.db, "--json",
            check=True,
        ).stdout
    )["memory_id"]  # fmt: skip
    old = json.loads(ledger_cli("remember", "the old vault PIN was 1234", "--db", console.db, "--json").stdout)
    ledger_cli("retire", str(old["memory_id"]), "--reason", "changed", "--db", console.db, check=True)
    page.goto(f"{console.base}/lang/zh?next=/memories")
    for memory_id, text in ((note, "4471"), (old["memory_id"], "1234")):
        page.goto(f"{console.base}/memory/{memory_id}")
        if memory_id == note:  # its page no longer says it cannot be erased
            assert "可以直接永久删除" in page.inner_text("#working-note")
        page.fill("#erase-reason", "泄露")
        with page.expect_navigation():
            page.click("#act-erase")
        assert text in page.inner_text("#confirm-items")
        with page.expect_navigation():
            page.click("#confirm-yes")
        assert f"记忆 #{memory_id} 已永久删除" in page.inner_text("main")
        page.goto(f"{console.base}/memory/{memory_id}")
        assert text not in page.inner_text("main") and not page.is_visible("#act-erase")
        assert "已删除" in page.inner_text("#status")
    # the erased note's page no longer tells the person to promote it, or that it can be erased
    page.goto(f"{console.base}/memory/{note}")
    assert page.inner_text("#working-note") == "某次对话中的工作记忆，已永久删除：其文本已不存在，只保留删除记录。"
    page.goto(f"{console.base}/lang/en?next=/memory/{note}")
    assert page.inner_text("#working-note").startswith("A working note of one conversation, erased for good")


def test_language_switch_is_remembered(page: Any, console: Console) -> None:
    page.goto(console.base + "/memories")
    page.click("#lang-switch")
    assert page.inner_text("#nav-memories") == "记忆"
    page.goto(console.base + "/conflicts")
    assert page.inner_text("h1") == "冲突"
    shot(page, "conflicts-zh")
    page.click("#lang-switch")
    assert page.inner_text("h1") == "Conflicts"


def test_time_travel_shows_the_older_value_and_is_carried_by_links(page: Any, console: Console) -> None:
    ids = console.ids
    page.goto(f"{console.base}/memory/{ids['port']}")
    assert "8081" in page.inner_text("#content")
    page.fill("#tt-as-of", str(ids["before_update"]))
    page.click("#tt-go")
    page.wait_for_load_state()
    assert "8080" in page.inner_text("#content") and page.locator(".version").count() == 1
    assert page.is_visible("#past-banner")
    page.click("#nav-memories")
    assert f"as_of={ids['before_update']}" in page.url
    page.goto(f"{console.base}/memories?at=2023-06-01T00:00:00Z&q=Alice")
    text = page.inner_text("#results")
    assert "Paris" in text and "Berlin" not in text  # in mid-2023 Alice had not moved yet
    shot(page, "time-travel")


def test_resolve_a_conflict_in_the_browser_then_mcp_sees_it(page: Any, console: Console) -> None:
    ids = console.ids
    conflict = ids["alice_conflict"]
    page.goto(f"{console.base}/conflict/{conflict}")
    assert page.locator(".member").count() == 2
    assert "event_time" in page.inner_text("#verdict tr.decides")
    page.click(f"#resolve-{ids['berlin']}")
    assert f"#{ids['berlin']}" in page.inner_text("#confirm-text")
    page.click("#confirm-yes")
    page.wait_for_load_state()  # the answer page whole, not only its URL
    page.wait_for_url(f"**/conflict/{conflict}?done=resolve")
    assert page.inner_text("#conflict-state") == "resolved"
    mcp = LedgerServer(Path(console.db)).start()
    try:
        detail = mcp.call("memory_review", "conflict_detail", {"conflict_id": conflict})
        assert detail["conflict"]["state"] == "resolved" and detail["conflict"]["winner_id"] == ids["berlin"]
        events = mcp.call("memory_review", "audit", {"memory_id": ids["paris"], "limit": 5})["events"]
        superseded = next(e for e in events if e["type"] == "Superseded")
        assert superseded["actor"] == "console" and superseded["payload"]["authorization"] == "user_channel"
    finally:
        mcp.close()


def test_judge_and_retire_go_through_a_confirmation(page: Any, console: Console) -> None:
    ids = console.ids
    conflict = ids["zh_conflict"]
    page.goto(f"{console.base}/conflict/{conflict}")
    page.locator(f"#judge-{ids['beijing']}").locator("xpath=..").locator("input[name=rationale]").fill("搬家了")
    page.click(f"#judge-{ids['beijing']}")
    page.click("#confirm-cancel")  # nothing recorded on cancel
    assert page.inner_text("#conflict-state") == "open"
    page.locator(f"#judge-{ids['beijing']}").locator("xpath=..").locator("input[name=rationale]").fill("搬家了")
    page.click(f"#judge-{ids['beijing']}")
    page.click("#confirm-yes")
    page.wait_for_load_state()  # the answer page whole, not only its URL
    assert page.inner_text("#conflict-state") == "judged" and "搬家了" in page.inner_text("#judgments")
    page.goto(f"{console.base}/memory/{ids['budget']}")
    page.click("#act-unlock")
    page.click("#confirm-yes")
    page.wait_for_load_state()  # the answer page whole, not only its URL
    assert "locked" not in page.inner_text("h1") and page.is_visible("#act-confirm")
    page.click("#act-confirm")
    assert "user_confirmed" in page.inner_text("#confirm-text")
    page.click("#confirm-yes")
    page.wait_for_load_state()  # the answer page whole, not only its URL
    assert "locked" in page.inner_text("h1")
    loser, winner = ids["builds"][:2]
    page.goto(f"{console.base}/memory/{loser}")
    page.fill("#supersede-winner", str(winner))
    page.click("#act-supersede")
    page.click("#confirm-yes")
    page.wait_for_load_state()  # the answer page whole, not only its URL
    assert "superseded" in page.inner_text("#status") and f"#{winner}" in page.inner_text("#links")
    page.goto(f"{console.base}/memory/{ids['shanghai']}")
    page.fill("#retire-reason", "duplicate entry")
    page.click("#act-retire")
    page.click("#confirm-yes")
    page.wait_for_load_state()  # the answer page whole, not only its URL
    assert "retired" in page.inner_text("#status") and page.is_visible("#done")


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_audit_filters_and_export_links(page: Any, console: Console, fmt: str) -> None:
    page.goto(console.base + "/audit?type=Superseded")
    types = {r.get_attribute("title") for r in page.locator(".event-row .event-type").all()}
    assert types == {"Superseded"}  # the type's name in words, the stored name in its title
    page.goto(console.base + "/audit?client=seed")
    actors = {r.locator("td").nth(4).inner_text() for r in page.locator(".event-row").all()}
    assert actors == {"seed:agent-1"}
    with page.expect_download() as download:
        page.click(f"#export-{fmt}")
    assert download.value.suggested_filename == f"ledger-audit.{fmt}"
    body = Path(download.value.path()).read_text(encoding="utf-8")
    assert "张伟住在北京" in body and ("hash" in body.splitlines()[0])


def test_the_audit_type_filter_lists_the_types_in_words_and_refuses_an_unknown_one(page: Any, console: Console) -> None:
    """The Type filter was a free text box: a Chinese page listed 被取代 yet wanted "Superseded"
    typed, and a typo ("memoryrecorded", "Bogus") answered "Nothing found." as if the log held no
    such event. It is a list of the event types in the page's language; a type no list offers
    is refused, as an agent's is."""
    page.goto(f"{console.base}/lang/zh?next=/audit")
    choice = page.locator("#audit-type")
    assert choice.evaluate("e => e.tagName") == "SELECT"
    labels = [o.inner_text() for o in choice.locator("option").all()]
    assert "被取代" in labels and "Superseded" not in labels
    choice.select_option(label="被取代")
    page.click("#audit-go")
    page.wait_for_load_state()
    types = {r.get_attribute("title") for r in page.locator(".event-row .event-type").all()}
    assert types == {"Superseded"} and "type=Superseded" in page.url
    assert page.locator("#audit-type option:checked").inner_text() == "被取代"  # the filter shown as applied
    for typed in ("memoryrecorded", "Bogus"):
        response = page.goto(f"{console.base}/audit?type={typed}")
        assert response is not None and response.status == 400
        assert typed in page.inner_text("#error") and "类型" in page.inner_text("#error-kind")
    page.goto(f"{console.base}/lang/en?next=/audit")
    response = page.goto(f"{console.base}/audit?type=MemoryRemembered")  # a renamed type's old name still filters
    assert response is not None and response.status == 200
    assert page.locator("#audit-type option:checked").inner_text() == "MemoryRecorded"
