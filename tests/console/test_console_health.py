"""The console's Health page (docs/governance.md "Hindsight"): the report's clusters with their
values and suggestion, applied after a confirmation page as one change, and undone the same way;
both languages."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import ledger_cli
from tests.console.conftest import Console
from tests.console.test_console_guard import _request

BUDGETS = ("40k", "55k", "70k")


def test_a_suggestion_is_applied_and_undone_from_the_health_page(page: Any, console: Console) -> None:
    ids = []
    for month, value in enumerate(BUDGETS, start=1):
        done = ledger_cli(
            "remember",
            f"The Orion rollout budget is ${value}",
            "--subject",
            "Orion rollout",
            "--event-time",
            f"2025-0{month}-01T00:00:00Z",
            "--db",
            console.db,
            "--json",
            check=True,
        )
        ids.append(json.loads(done.stdout)["memory_id"])
    page.goto(f"{console.base}/health")
    cluster = page.locator("section.cluster", has_text="Orion rollout")
    assert cluster.locator(".cluster-values tr").count() == 1 + len(BUDGETS)
    assert f"#{ids[-1]} wins by event_time" in cluster.locator(".suggestion").inner_text()
    conflict = int(cluster.get_attribute("data-conflict") or 0)
    before = console.events()

    cluster.locator("button.act-apply").click()
    assert f"Settle conflict #{conflict} for #{ids[-1]}" in page.inner_text("#confirm-text")
    assert page.locator(".confirm-item").count() == len(BUDGETS) and console.events() == before
    page.check("#guarded-ok")  # the CLI wrote them: facts a person confirmed, superseded only with the tick
    page.click("#confirm-yes")
    page.wait_for_load_state()  # the answer page whole, not only its URL
    assert page.url.startswith(f"{console.base}/health?done=apply")
    assert console.events() == before + (len(BUDGETS) - 1) + 2  # Superseded each, ConflictResolved, ChangeRecorded
    assert page.locator(f"section.cluster[data-conflict='{conflict}']").count() == 0
    page.goto(f"{console.base}/conflict/{conflict}")
    assert page.inner_text("#conflict-state").strip() == "resolved"

    page.goto(f"{console.base}/health")
    change = page.locator("tr.change[data-kind='apply_suggestion']").first
    change.locator("button.act-undo").click()
    page.wait_for_load_state()
    assert page.locator(".confirm-item").count() == len(BUDGETS) - 1
    page.click("#confirm-yes")
    page.wait_for_load_state()  # the answer page whole, not only its URL
    assert page.url.startswith(f"{console.base}/health?done=undo")
    assert page.locator(f"section.cluster[data-conflict='{conflict}']").count() == 1
    assert page.locator("tr.change[data-kind='undo']").count() >= 1
    # the undo row lists what it reinstated as reinstated (it said "Superseded" over them)
    undo_row = page.locator("tr.change[data-kind='undo']").first.locator("td.changed").inner_text()
    assert undo_row.startswith("Reinstated:") and f"#{ids[0]}" in undo_row
    applied_row = page.locator("tr.change[data-kind='apply_suggestion']").first.locator("td.changed").inner_text()
    assert applied_row.startswith("Superseded:")
    page.goto(f"{console.base}/conflict/{conflict}")
    assert page.inner_text("#conflict-state").strip() == "open"

    # Two recorded passes (as ledger serve records one a day) draw the trend: a point per pass.
    for _ in range(2):
        ledger_cli("health", "--record", "--db", console.db, check=True)
    page.goto(f"{console.base}/health")
    points = page.locator("#trend-clusters").get_attribute("points") or ""
    assert len(points.split()) >= 2 and page.locator("#health-trend").is_visible()

    page.goto(f"{console.base}/lang/zh?next=/health")
    text = page.inner_text("body")
    assert "矛盾簇" in text and "应用建议" in text and "依据事件时间胜出" in text and "随时间变化" in text


def test_a_proposed_alias_is_accepted_from_the_health_page(page: Any, console: Console) -> None:
    for content, subject in (("The Jon team lead is Maria", "Jon"), ("John's desk is on floor 4", "John")):
        ledger_cli("remember", content, "--subject", subject, "--db", console.db, "--json", check=True)
    page.goto(f"{console.base}/health")
    row = page.locator("tr.alias[data-alias='Jon']")
    assert "one letter apart" in row.inner_text()
    before = console.events()
    row.locator("button.act-alias-accept").click()
    assert "claims about Jon are about John" in page.inner_text("#confirm-text") and console.events() == before
    page.click("#confirm-yes")
    page.wait_for_load_state()  # the answer page whole, not only its URL
    assert page.url.startswith(f"{console.base}/health?done=alias_accept") and console.events() == before + 1
    assert page.locator("tr.alias[data-alias='Jon']").count() == 0  # decided: no longer proposed


def test_a_stale_undo_form_is_refused_before_its_confirmation_page(console: Console) -> None:
    """The change was undone elsewhere (the command line, another tab): the form's first POST
    refuses at once, and never lists active memories as "will be reinstated"."""
    from fact_ledger.ledger.log.events import AUTH_USER
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings

    app = LedgerApp(Settings(db=console.db, client="test-writer"))
    try:
        for month, value in enumerate(BUDGETS, start=1):
            written = app.remember(
                f"The Vega rollout budget is ${value}", subject="Vega rollout", event_time=f"2025-0{month}-01T00:00:00Z"
            )
        conflict = written["conflicts"][0]["conflict_id"]
        [cluster] = [c for c in app.health(limit=200)["clusters"] if c["conflict_id"] == conflict]
        change = app.apply_suggestion(cluster["suggestion"]["suggestion_id"], authorization=AUTH_USER)["change_id"]
        app.undo(change, authorization=AUTH_USER)
    finally:
        app.close()
    before = console.events()
    status, page, _ = _request(console, "POST", "/health/undo", body={"change_id": change, "csrf": console.csrf()})
    assert status == 400 and "already undone" in page and "Will be reinstated" not in page
    assert 'name="confirmed"' not in page and console.events() == before


def _port_set(console: Console, subject: str) -> tuple[int, list[int], str]:
    """Two values of one port a person gave at the command line (user_confirmed, locked), a
    month apart (the later leads by event time): the set, its members and its suggestion."""
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings

    ids = []
    for month, port in ((1, 2501), (2, 2502)):
        args = ["remember", f"The {subject} API listens on port {port}", "--subject", subject]
        args += ["--event-time", f"2025-0{month}-01T00:00:00Z", "--db", console.db, "--json"]
        ids.append(json.loads(ledger_cli(*args, check=True).stdout)["memory_id"])
    app = LedgerApp(Settings(db=console.db, client="test-writer"))
    try:
        [cluster] = [c for c in app.health(limit=200)["clusters"] if c["claim"]["subject"] == subject]
    finally:
        app.close()
    assert cluster["suggestion"]["winner_id"] == ids[1]
    return cluster["conflict_id"], ids, cluster["suggestion"]["suggestion_id"]


def test_a_suggestion_shown_before_its_set_changed_is_refused(console: Console) -> None:
    """The suggestion's id named the set's members and values only: after the older value's
    event time was corrected (or a member confirmed), "Yes" on the page that said #2 wins made
    #1 win and superseded #2."""
    conflict, ids, suggestion = _port_set(console, "zephyr")
    ledger_cli("update", str(ids[0]), "--event-time", "2025-03-01T00:00:00Z", "--db", console.db, check=True)
    before = console.events()
    body = {"suggestion_id": suggestion, "csrf": console.csrf(), "confirmed": "yes", "guarded_ok": "yes"}
    status, page, _ = _request(console, "POST", "/health/apply", body=body)
    assert status == 400 and "stale" in page and console.events() == before
    shown = json.loads(ledger_cli("conflict", str(conflict), "--db", console.db, "--json", check=True).stdout)
    assert shown["conflict"]["state"] == "open"


def test_applying_a_suggestion_that_supersedes_a_confirmed_fact_needs_the_extra_tick(console: Console) -> None:
    """Health's Apply superseded a locked, user-confirmed fact with no tick, where Resolve on the
    conflict page asks for one; the confirmation page did not say the fact was locked."""
    _conflict, ids, suggestion = _port_set(console, "boreas")
    body = {"suggestion_id": suggestion, "csrf": console.csrf()}
    status, page, _ = _request(console, "POST", "/health/apply", body=body)
    assert status == 200 and 'id="guarded-ok"' in page and f'class="warn guarded" data-id="{ids[0]}"' in page
    assert "locked" in page
    before = console.events()
    status, page, _ = _request(console, "POST", "/health/apply", body={**body, "confirmed": "yes"})
    assert status == 409 and 'id="guarded-needed"' in page and console.events() == before
    status, _, headers = _request(
        console, "POST", "/health/apply", body={**body, "confirmed": "yes", "guarded_ok": "yes"}
    )
    assert status == 303 and headers["location"].startswith("/health?done=apply")
    shown = json.loads(ledger_cli("read", str(ids[0]), "--db", console.db, "--json", check=True).stdout)
    assert shown["memory"]["status"] == "superseded"


def test_yes_on_a_suggestion_another_tab_applied_says_it_is_settled(page: Any, console: Console) -> None:
    """Two tabs on one confirmation page (or Yes sent twice, or the back button after it): the
    second Yes said "the set changed; look at the report again", as if the person's own change
    had been lost. It says the conflict is already settled, and records nothing more."""
    ids = []
    for month, port in ((1, 3301), (2, 3302)):
        args = ["remember", f"The lyra API listens on port {port}", "--subject", "lyra", "--source-type"]
        args += ["agent_generated", "--event-time", f"2025-0{month}-01T00:00:00Z", "--db", console.db, "--json"]
        ids.append(json.loads(ledger_cli(*args, check=True).stdout)["memory_id"])
    page.goto(f"{console.base}/health")
    cluster = page.locator("section.cluster", has_text="lyra")
    conflict = int(cluster.get_attribute("data-conflict") or 0)
    cluster.locator("button.act-apply").click()
    page.wait_for_load_state()
    other = page.context.new_page()  # the same person's second tab, on the same confirmation
    other.goto(f"{console.base}/health")
    other.locator(f"section.cluster[data-conflict='{conflict}'] button.act-apply").click()
    other.wait_for_load_state()
    assert other.locator("#confirm-yes").count() == 1

    page.click("#confirm-yes")
    page.wait_for_load_state()
    assert page.url.startswith(f"{console.base}/health?done=apply")
    before = console.events()
    other.click("#confirm-yes")
    other.wait_for_load_state()
    said = other.inner_text("#error")
    assert f"conflict {conflict} is already settled" in said and "the set changed" not in said, said
    assert console.events() == before
    shown = json.loads(ledger_cli("read", str(ids[0]), "--db", console.db, "--json", check=True).stdout)
    assert shown["memory"]["status"] == "superseded"


def test_ids_typed_in_capitals_are_applied_and_undone(console: Console) -> None:
    """The facade's undo took a change id in capitals; the console's Apply refused a suggestion id
    so typed ("not a suggestion of the health report") and its Undo said "no such change"."""
    _conflict, ids, suggestion = _port_set(console, "capella")
    body = {"suggestion_id": f" {suggestion.upper()} ", "csrf": console.csrf()}
    status, page, _ = _request(console, "POST", "/health/apply", body=body)
    assert status == 200 and 'id="confirm-yes"' in page, page
    status, _, headers = _request(
        console, "POST", "/health/apply", body={**body, "confirmed": "yes", "guarded_ok": "yes"}
    )
    assert status == 303 and headers["location"].startswith("/health?done=apply")
    shown = json.loads(ledger_cli("read", str(ids[0]), "--db", console.db, "--json", check=True).stdout)
    assert shown["memory"]["status"] == "superseded"
    report = json.loads(ledger_cli("health", "--db", console.db, "--json", check=True).stdout)
    change = report["changes"][0]["change_id"]
    status, page, _ = _request(
        console, "POST", "/health/undo", body={"change_id": change.upper(), "csrf": console.csrf()}
    )
    assert status == 200 and "Will be reinstated" in page, page
    body = {"change_id": change.upper(), "csrf": console.csrf(), "confirmed": "yes"}
    status, _, headers = _request(console, "POST", "/health/undo", body=body)
    assert status == 303 and headers["location"].startswith("/health?done=undo")
    shown = json.loads(ledger_cli("read", str(ids[0]), "--db", console.db, "--json", check=True).stdout)
    assert shown["memory"]["status"] == "active"
