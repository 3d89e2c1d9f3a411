"""What a person can type into the console's URLs and forms: every id and position is read one way
(ASCII digits within SQLite's integer range), every time-travel point is checked before a page
answers with it, and a bad value is a clear error page that writes nothing — never a 500."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

import pytest

from fact_ledger.server.console.views import as_true_at
from tests.conftest import ledger_cli
from tests.console.conftest import Console
from tests.console.test_console_guard import _request

HUGE = "99999999999999999999999"  # past 2**63 - 1: binding it to SQLite overflows
SUPERSCRIPT = quote("²")  # str.isdigit says yes, int() says no
ARABIC = quote("٣")  # str.isdigit says yes, int() reads 3


def _get(console: Console, path: str) -> tuple[int, str]:
    status, text, _ = _request(console, "GET", path)
    return status, text


def _remember(console: Console, text: str) -> dict[str, Any]:
    """A write by an agent (so a disagreement stays open for a person), as the CLI answers it."""
    args = ("remember", text, "--source-type", "agent_generated", "--db", console.db, "--json")
    return dict(json.loads(ledger_cli(*args, check=True).stdout))


def _intervals(page: str) -> list[str]:
    """The rows of the Timeline page's table as text, one per memory."""
    table = page.split('id="intervals"', 1)[1].split("</table>", 1)[0]
    return [re.sub(r"<[^>]+>", " ", row) for row in table.split("<tr>")[2:]]


@pytest.mark.parametrize("at", ["2026-12-31", "2026-12-31T00:00:00", "2024-01-31"])
def test_the_timeline_answers_as_true_at_a_date_or_a_naive_time(console: Console, at: str) -> None:
    status, page = _get(console, f"/timeline?subject=prod%20db&at={at}")
    assert status == 200 and 'id="timeline-svg"' in page and "Traceback" not in page


@pytest.mark.parametrize("at", ["junk", "2023", "99999-01-01"])
def test_a_bad_point_on_the_timeline_is_an_error_page(console: Console, at: str) -> None:
    status, page = _get(console, f"/timeline?subject=prod%20db&at={at}")
    assert status == 400 and "invalid_input" in page and "as_of_event_time" in page
    assert 'id="past-banner"' not in page


def test_the_timeline_as_true_at_a_point_shows_no_later_event(console: Console) -> None:
    ids = console.ids
    _, page = _get(console, "/timeline?subject=prod%20db&at=2024-01-15T00:00:00Z")
    [old] = _intervals(page)  # the upgrade (May 2024) had not happened
    assert f"#{ids['old_db']}" in old and "active" in old and "ongoing" in old
    assert "superseded" not in old and f"#{ids['new_db']}" not in page.split('id="intervals"', 1)[1]
    _, page = _get(console, "/timeline?subject=prod%20db&at=2024-06-01")
    old, new = _intervals(page)
    assert "superseded" in old and f"#{ids['new_db']}" in old and "2024-05-20" in old and "active" in new


def test_as_true_at_follows_the_as_of_rule() -> None:
    ended = {
        "memory_id": 1,
        "valid_from": "2023-01-01T00:00:00.000000Z",
        "valid_to": "2024-02-01T00:00:00.000000Z",
        "status": "superseded",
        "ended": "superseded",
        "superseded_by": 2,
    }
    later = {**ended, "memory_id": 2, "valid_from": "2024-02-01T00:00:00.000000Z", "valid_to": None}
    [before] = as_true_at([ended, later], "2024-01-15T00:00:00.000000Z")
    assert before["status"] == "active" and before["valid_to"] is None and before["superseded_by"] is None
    after = as_true_at([ended, later], "2024-02-01T00:00:00.000000Z")  # ends at its valid_to, exclusive
    assert after[0] == ended and len(after) == 2


@pytest.mark.parametrize(
    "path",
    [
        f"/memory/{HUGE}",
        f"/conflict/{HUGE}",
        f"/audit?memory_id={HUGE}",
        f"/timeline?subject={HUGE}",
        f"/audit?memory_id={SUPERSCRIPT}",
        f"/audit?memory_id={ARABIC}",
        f"/memory/{ARABIC}",
        f"/memories?as_of={SUPERSCRIPT}",
        f"/memories?as_of={ARABIC}",
        f"/memory/1?as_of={SUPERSCRIPT}",
        f"/audit?as_of={SUPERSCRIPT}",
        f"/?as_of={SUPERSCRIPT}",  # the overview and conflicts showed "Back to now" over a bad point
        f"/conflicts?as_of={SUPERSCRIPT}",
        f"/timeline?subject=prod%20db&as_of={SUPERSCRIPT}",
        f"/memories?page={SUPERSCRIPT}",
        "/memory/abc",
    ],
)
def test_an_id_or_position_that_is_not_ascii_digits_in_range_is_a_clear_400(console: Console, path: str) -> None:
    status, page = _get(console, path)
    assert status == 400 and "invalid_input" in page and "digits 0-9" in page, (path, status)
    assert "Traceback" not in page and 'id="past-banner"' not in page


@pytest.mark.parametrize(
    ("action", "form"),
    [
        ("supersede", {"memory_id": "paris", "winner_id": HUGE}),
        ("resolve", {"conflict_id": HUGE, "winner_id": "paris"}),
        ("retire", {"memory_id": "²", "reason": "probe"}),
        ("retire", {"memory_id": "٣", "reason": "probe"}),
        ("confirm", {"memory_id": HUGE}),
        ("judge", {"conflict_id": "alice_conflict", "winner_id": "paris", "pin_²": "1"}),
        ("judge", {"conflict_id": "alice_conflict", "winner_id": "paris", "pin_1": HUGE}),
    ],
)
def test_a_bad_id_in_a_form_is_a_clear_400_and_writes_nothing(
    console: Console, action: str, form: dict[str, str]
) -> None:
    ids = console.ids
    sent = {k: str(ids.get(v, v)) for k, v in form.items()}
    before = console.events()
    for confirmed in ({}, {"confirmed": "yes"}):
        status, page, _ = _request(
            console, "POST", f"/act/{action}", body={**sent, **confirmed, "csrf": console.csrf()}
        )
        assert status == 400 and "invalid_input" in page and "digits 0-9" in page, (action, form, status)
    assert console.events() == before


def test_ids_in_range_still_work(console: Console) -> None:
    status, _ = _get(console, f"/memory/{console.ids['paris']}?as_of=0{console.ids['before_update']}")
    assert status == 200
    status, page = _get(console, f"/memory/{2**63 - 1}")
    assert status == 404 and "not_found" in page
    status, page = _get(console, f"/memory/{2**63}")
    assert status == 400


@pytest.mark.parametrize("path", ["/memories?source_type=bogus", "/memories?status=bogus"])
def test_a_filter_value_the_form_never_offers_is_refused(console: Console, path: str) -> None:
    """``source_type=bogus`` answered "Nothing found." and ``status=bogus`` read as current memories."""
    status, page = _get(console, path)
    assert status == 400 and "invalid_input" in page and "Traceback" not in page


def test_a_subject_in_other_digits_is_a_subject_not_a_memory(console: Console) -> None:
    """Only the digits 0-9 name a memory on the timeline: a subject written in other digits was
    refused as a memory id, so it could never be shown (and is never read as memory 3)."""
    for subject in (ARABIC, SUPERSCRIPT):
        status, page = _get(console, f"/timeline?subject={subject}")
        assert status == 200 and "invalid_input" not in page, subject


def test_a_point_on_the_conflict_page_is_checked(console: Console) -> None:
    """The conflict page showed the present under any ``as_of``."""
    cid = console.ids["alice_conflict"]
    status, page = _get(console, f"/conflict/{cid}?as_of=zzz")
    assert status == 400 and "invalid_input" in page
    status, page = _get(console, "/memories?as_of=1")
    assert status == 200 and 'id="past-banner"' in page


@pytest.mark.parametrize("past_the_end", ["99999999", HUGE, "9" * 5000])
def test_a_position_past_the_end_of_the_log_is_the_end(page: Any, console: Console, past_the_end: str) -> None:
    """MCP and the CLI read a position past the end of the log as the end; the console refused
    it ("past the end of the log"). It answers as of the end, which is the present: no banner of
    the past, a note naming the position the log ends at."""
    written = _remember(console, f"The vesta relay listens on port {len(past_the_end)}")
    last = console.events()
    for path in (f"/memories?q=vesta+relay&as_of={past_the_end}", f"/?as_of={past_the_end}"):
        response = page.goto(f"{console.base}{path}")
        assert response is not None and response.status == 200, path
        assert not page.is_visible("#past-banner"), path
        assert page.inner_text("#present-note").split()[-1].rstrip(".") == str(last), path
    page.goto(f"{console.base}/memories?q=vesta+relay&as_of={past_the_end}")
    assert page.locator(f".memory-row[data-id='{written['memory_id']}']").count() == 1
    cid = console.ids["alice_conflict"]
    response = page.goto(f"{console.base}/conflict/{cid}?as_of={past_the_end}")
    assert response is not None and response.status == 200


PRESENT = {"en": ("Viewing the past", "current state"), "zh": ("正在查看过去", "当前状态")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_end_of_the_log_is_the_present_not_the_past(page: Any, console: Console, lang: str) -> None:
    """Time travel to the newest position (the end of the log) said "Viewing the past" (正在查看过去)
    above what is the present: it is the present view now (the memory page's own sections, a
    conversation's working set), saying it is the current state, until a later write makes that
    position the past."""
    past_words, present_words = PRESENT[lang]
    written = _remember(console, f"The hesper gateway runs release 70{len(lang)}")
    mid, last = written["memory_id"], console.events()
    page.goto(f"{console.base}/lang/{lang}?next=/")

    def shown(path: str) -> str:
        response = page.goto(f"{console.base}{path}")
        assert response is not None and response.status == 200, (path, page.inner_text("main"))
        return page.inner_text("header")

    for path in (f"/memory/{mid}?as_of={last}", f"/memories?q=hesper+gateway&as_of={last}", f"/?as_of={last}"):
        header = shown(path)
        assert not page.is_visible("#past-banner") and past_words not in header, path
        assert present_words in page.inner_text("#present-note") and str(last) in page.inner_text("#present-note")
    shown(f"/memory/{mid}?as_of={last}")
    assert page.is_visible("#near")  # the present view's own section, which a past view leaves out
    shown(f"/conflict/{console.ids['alice_conflict']}?as_of={last}")
    assert not page.is_visible("#past-banner")
    shown(f"/memories?session=no-such-conversation&as_of={last}")  # a conversation's working set has no past
    # one position earlier is the past, and the end is the past once the log moves on
    header = shown(f"/memories?q=hesper+gateway&as_of={last - 1}")
    assert page.is_visible("#past-banner") and past_words in header and not page.is_visible("#present-note")
    _remember(console, f"The hesper gateway runs release 71{len(lang)}")
    header = shown(f"/memory/{mid}?as_of={last}")
    assert page.is_visible("#past-banner") and past_words in header and not page.is_visible("#present-note")
    assert not page.is_visible("#near")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_recorded_time_after_the_last_write_is_the_present(page: Any, console: Console, lang: str) -> None:
    """A recorded time at or after the last write (a date in the future too) names the same
    state as the end of the log: it said "Viewing the past" above the current state. A time
    before the last write is the past."""
    past_words, present_words = PRESENT[lang]
    _remember(console, f"The vesper relay runs release 80{len(lang)}")
    page.goto(f"{console.base}/lang/{lang}?next=/")
    for when in ("2099-01-01", "2099-01-01T00:00:00Z"):
        page.goto(f"{console.base}/memories?q=vesper+relay&as_of={when}")
        assert not page.is_visible("#past-banner") and past_words not in page.inner_text("header"), when
        assert present_words in page.inner_text("#present-note")
        assert page.locator(".memory-row", has_text="vesper relay").count() == 1
    page.goto(f"{console.base}/memories?q=vesper+relay&as_of=2001-01-01")
    assert page.is_visible("#past-banner") and past_words in page.inner_text("header")
    assert not page.is_visible("#present-note")


def test_a_stale_pin_is_refused_before_the_confirmation_page(console: Console) -> None:
    # a set of its own that stays open (the seed's are judged and resolved by other tests)
    first = _remember(console, "The pin test service listens on port 7001")
    answer = _remember(console, "The pin test service listens on port 7002")
    cid, winner = answer["conflicts"][0]["conflict_id"], first["memory_id"]
    form = {"conflict_id": str(cid), "winner_id": str(winner), f"pin_{winner}": "9", "csrf": console.csrf()}
    status, page, _ = _request(console, "POST", "/act/judge", body=form)
    assert status == 409 and "the judgment pinned 9" in page and "confirm-yes" not in page
