"""A working note (one conversation's provisional note, docs/governance.md "Working memory") on the
Memory page: said to be one in both languages, offered only what can succeed (Promote and Erase,
never the long-term governance the facade answers ``not_found`` for), no empty trust or protection, and
after promotion its status in words and the links both ways."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.conftest import ledger_cli
from tests.console.conftest import Console
from tests.console.test_console_guard import _request

LONG_TERM_ONLY = ("act-confirm", "act-retire", "act-supersede", "act-unlock")


def _get(console: Console, path: str, lang: str = "en") -> tuple[int, str]:
    cookie = f"ledger_console_{console.port}={console.token}; ledger_console_lang={lang}"
    status, text, _ = _request(console, "GET", path, headers={"Cookie": cookie})
    return status, text


def _working_note(console: Console) -> int:
    written = ledger_cli(
        "remember", "Use the teal theme for the deck", "--tier", "working", "--session", "deck-chat", "--turn", "1",
        "--db", console.db, "--json", check=True,
    )  # fmt: skip
    return int(json.loads(written.stdout)["memory_id"])


def test_a_working_note_says_so_and_offers_only_promote_and_erase(console: Console) -> None:
    note = _working_note(console)
    for lang, words in (("en", "A working note"), ("zh", "工作记忆")):
        status, page = _get(console, f"/memory/{note}", lang)
        assert status == 200 and 'id="working-note"' in page and words in page
        assert 'id="act-promote"' in page and not any(f'id="{b}"' in page for b in LONG_TERM_ONLY)
        assert 'id="act-erase"' in page  # erased as it is, as at the CLI: never promoted to be erased
        header = page.split("<h1>", 1)[1].split("</h1>", 1)[0]
        assert 'class="badge trust"' not in header and "prot-" not in header and "None" not in page
        assert not re.search(r"\((trust|可信度) \)", page)

    before = console.events()
    csrf = console.csrf()
    for action, form in (
        ("confirm", {"memory_id": str(note)}),
        ("retire", {"memory_id": str(note), "reason": "r"}),
        ("supersede", {"memory_id": str(console.ids["paris"]), "winner_id": str(note)}),
    ):
        status, page, _ = _request(console, "POST", f"/act/{action}", body={**form, "csrf": csrf})
        assert status == 400 and "is a working note" in page, (action, status)
    status, page, _ = _request(
        console, "POST", "/act/promote", body={"memory_id": str(console.ids["paris"]), "csrf": csrf}
    )
    assert status == 400 and "not a working note" in page
    assert console.events() == before


def test_promoting_a_working_note_links_both_ways_in_both_languages(console: Console) -> None:
    note = _working_note(console)
    csrf = console.csrf()
    status, page, _ = _request(console, "POST", "/act/promote", body={"memory_id": str(note), "csrf": csrf})
    assert status == 200 and f"Promote working note #{note}" in page
    assert "· </small>" not in page  # a note has no protection: no empty field after the source
    status, _, headers = _request(
        console, "POST", "/act/promote", body={"memory_id": str(note), "csrf": csrf, "confirmed": "yes"}
    )
    assert status == 303 and headers["location"] == f"/memory/{note}?done=promote"

    _, page = _get(console, f"/memory/{note}", "zh")
    found = re.search(r'id="promoted-to">#(\d+)<', page)
    assert found and "已转为长期" in page and 'id="act-promote"' not in page
    _, page = _get(console, f"/memory/{note}", "en")  # it no longer tells the person to promote it
    assert "promote it to make it long-term" not in page and "promoted: the long-term memory" in page
    long_term = int(found.group(1))
    _, page = _get(console, f"/memory/{long_term}")
    assert f'id="promoted-from">#{note}<' in page and 'id="act-confirm"' not in page  # a person's own: confirmed
    assert 'id="act-retire"' in page


def test_time_travel_on_a_conversation_names_the_conversation_in_words(page: Any, console: Console) -> None:
    """The header's time travel keeps the Memories filters; on a conversation it answered with the
    facade's refusal of ``session_only`` — a field the person never saw, left as the raw name on
    the Chinese page too. The refusal names the Conversation filter and what to clear."""
    _working_note(console)
    before = console.events()
    for lang, field, words in (
        ("en", "Conversation", "conversation 'deck-chat' has no past"),
        ("zh", "对话", "对话 'deck-chat' 没有过去"),  # said in the page's language
    ):
        page.goto(f"{console.base}/lang/{lang}?next=/memories?session=deck-chat")
        assert "Use the teal theme for the deck" in page.inner_text("#results")
        page.fill("#tt-as-of", "3")
        with page.expect_navigation():
            page.click("#tt-go")
        assert "session=deck-chat" in page.url and "as_of=3" in page.url
        said, kind = page.inner_text("#error"), page.inner_text("#error-kind")
        assert words in said and "session_only" not in said + kind, said
        assert field in kind, kind
    assert console.events() == before


def test_an_ended_working_note_is_not_shown_as_valid_until_further_notice(console: Console) -> None:
    """An erased working note's Memory page said "Valid until: ongoing" (持续): the page read its
    missing end as "still holds". It is valid until its erasure, as ``read`` says (and as an
    erased long-term memory's page does)."""
    live = _working_note(console)
    written = ledger_cli(
        "remember", "The deck's font is Inter", "--tier", "working", "--session", "deck-chat", "--turn", "2",
        "--db", console.db, "--json", check=True,
    )  # fmt: skip
    erased = int(json.loads(written.stdout)["memory_id"])
    assert erased != live
    ledger_cli("erase", str(erased), "--reason", "a test", "--db", console.db, check=True)
    read = json.loads(ledger_cli("read", str(erased), "--db", console.db, "--json", check=True).stdout)["memory"]
    for lang, ongoing in (("en", "ongoing"), ("zh", "持续")):
        _, page = _get(console, f"/memory/{erased}", lang)
        valid_to = re.search(r'<td id="valid-to">([^<]*)</td>', page)
        assert valid_to is not None and valid_to.group(1) == read["valid_to"], (lang, valid_to)
        status = re.search(r'<td id="status">(.*?)</td></tr>', page)  # and why, as a long-term memory's page
        assert status is not None and "a test" in status.group(1), (lang, status)
        _, page = _get(console, f"/memory/{live}", lang)
        valid_to = re.search(r'<td id="valid-to">([^<]*)</td>', page)
        assert valid_to is not None and valid_to.group(1) == ongoing, lang
