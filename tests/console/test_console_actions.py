"""The console's governance buttons run the operations of the route table (server/mcp/routes.py):
the route's edge model checks the form as it checks an agent's call, and the facade method the
route names answers, as the user's own act. Each button once, and a refusal that writes nothing."""

from __future__ import annotations

import html
import json
import re

from tests.conftest import ledger_cli
from tests.console.conftest import Console
from tests.console.test_console_guard import _request


def _memory(console: Console, text: str, *extra: str) -> int:
    written = ledger_cli("remember", text, "--db", console.db, "--json", *extra, check=True)
    return int(json.loads(written.stdout)["memory_id"])


def _act(console: Console, action: str, **form: str) -> tuple[int, str, dict[str, str]]:
    return _request(console, "POST", f"/act/{action}", body={**form, "csrf": console.csrf(), "confirmed": "yes"})


def test_each_memory_button_records_its_operation(console: Console) -> None:
    kept = _memory(console, "The office opens at 8 on weekdays", "--source-type", "agent_generated")
    before = console.events()
    status, _, headers = _act(console, "confirm", memory_id=str(kept))
    assert status == 303 and headers["location"] == f"/memory/{kept}?done=confirm"
    status, _, _ = _act(console, "unlock", memory_id=str(kept))
    assert status == 303 and console.events() == before + 2
    status, _, _ = _act(console, "retire", memory_id=str(kept), reason="moved office")
    page = console.get(f"/memory/{kept}")
    assert status == 303 and "moved office" in page and 'id="status">' in page


def test_the_route_s_model_refuses_what_an_agent_would_be_refused(console: Console) -> None:
    """A reason longer than the operation allows: refused by the same model, nothing recorded."""
    memory_id = _memory(console, "The lab key is at the front desk")
    before = console.events()
    status, page, _ = _act(console, "retire", memory_id=str(memory_id), reason="x" * 4001)
    assert status == 400 and "reason: at most 4000 characters, not 4001" in page
    assert console.events() == before


def test_keep_all_closes_a_claim_set_with_every_member_kept(console: Console) -> None:
    said = ("--subject", "build server", "--source-type", "agent_generated")  # ten minutes apart: no change
    first = _memory(console, "The build server listens on port 7001", *said, "--event-time", "2020-01-01T10:00:00Z")
    _memory(console, "The build server listens on port 7002", *said, "--event-time", "2020-01-01T10:10:00Z")
    detail = ledger_cli("conflicts", "--json", "--db", console.db, check=True)
    [conflict] = [c for c in json.loads(detail.stdout)["conflicts"] if first in c["members"]]
    status, _, headers = _act(console, "keep_both", conflict_id=str(conflict["conflict_id"]))
    assert status == 303 and headers["location"] == f"/conflict/{conflict['conflict_id']}?done=keep_both"
    after = json.loads(ledger_cli("conflicts", "--state", "resolved", "--json", "--db", console.db).stdout)
    [kept] = [c for c in after["conflicts"] if c["conflict_id"] == conflict["conflict_id"]]
    assert kept["resolution"] == "keep_all"  # the current word, as the CLI records it too


def test_an_act_that_changes_nothing_says_so_in_both_languages(console: Console) -> None:
    """Unlocking a memory that is not locked writes nothing: the page never says "Recorded."."""
    memory_id = _memory(console, "The plant room is on level B2", "--source-type", "agent_generated")
    before = console.events()
    status, _, headers = _act(console, "unlock", memory_id=str(memory_id))
    assert status == 303 and headers["location"] == f"/memory/{memory_id}?done=unlock&unchanged=1"
    assert console.events() == before
    once = headers["set-cookie"].split(";", 1)[0]  # what the browser carries to the page it is sent to
    for lang, said, not_said in (("en", "Nothing was changed", "Recorded."), ("zh", "未做任何更改", "已记录。")):
        cookie = f"ledger_console_{console.port}={console.token}; ledger_console_lang={lang}; {once}"
        _, page, _ = _request(console, "GET", headers["location"], headers={"Cookie": cookie})
        done = page.split('id="done">', 1)[1].split("</p>", 1)[0]
        assert said in done and not_said not in done
    status, _, headers = _act(console, "confirm", memory_id=str(memory_id))  # a real change still says Recorded
    assert status == 303 and "unchanged" not in headers["location"]


def test_retire_and_erase_refuse_a_blank_reason_and_write_nothing(console: Console) -> None:
    memory_id = _memory(console, "The fire drill is on Friday")
    before = console.events()
    for action in ("retire", "erase"):
        for reason in ("", "   "):
            for confirmed in ({}, {"confirmed": "yes"}):
                form = {"memory_id": str(memory_id), "reason": reason, "csrf": console.csrf(), **confirmed}
                status, page, _ = _request(console, "POST", f"/act/{action}", body=form)
                assert status == 400 and "reason is required" in page and 'id="error"' in page, (action, reason)
    assert console.events() == before and 'id="status">active' in console.get(f"/memory/{memory_id}")


def test_a_confirmation_page_is_never_shown_for_what_yes_would_refuse(console: Console) -> None:
    """Supersede offered a retired, an erased or the same memory as the winner ("Memory #50
    supersedes memory #50"), and confirm, retire and erase offered an erased memory: each showed
    its confirmation page and was refused only after "Yes"."""
    live = _memory(console, "The badge office is on floor 2")
    retired = _memory(console, "The badge office was on floor 1")
    erased = _memory(console, "The badge office code is 4411")
    _act(console, "retire", memory_id=str(retired), reason="moved")
    _act(console, "erase", memory_id=str(erased), reason="a code")
    note = _memory(console, "The badge office may move", "--tier", "working", "--session", "badge", "--turn", "1")
    ledger_cli("promote", str(note), "--db", console.db, check=True)
    settled, member = console.ids["resolved_conflict"], console.ids["resolved_for"]
    before = console.events()
    asks = [
        ("supersede", {"memory_id": str(live), "winner_id": str(live)}, "cannot supersede itself"),
        ("supersede", {"memory_id": str(live), "winner_id": str(retired)}, "retired, no longer current"),
        ("supersede", {"memory_id": str(live), "winner_id": str(erased)}, "erased, no longer current"),
        ("confirm", {"memory_id": str(erased)}, "is erased"),
        ("retire", {"memory_id": str(erased), "reason": "again"}, "is erased"),
        ("erase", {"memory_id": str(erased), "reason": "again"}, "is erased"),
        # settled, retired or promoted since the page was shown (another tab, the CLI, a double submit)
        ("retire", {"memory_id": str(retired), "reason": "again"}, "retired, no longer current"),
        ("supersede", {"memory_id": str(retired), "winner_id": str(live)}, "retired, no longer current"),
        ("confirm", {"memory_id": str(retired)}, "retired, no longer current"),
        ("promote", {"memory_id": str(note)}, "already promoted"),
        ("resolve", {"conflict_id": str(settled), "winner_id": str(member)}, "already resolved"),
        ("keep_both", {"conflict_id": str(settled)}, "already resolved"),
        ("judge", {"conflict_id": str(settled), "winner_id": str(member), "rationale": "x"}, "already resolved"),
    ]
    status, page, _ = _request(
        console, "POST", "/act/supersede", body={"memory_id": str(live), "winner_id": "999999", "csrf": console.csrf()}
    )
    assert status == 404 and "Winner memory id" in page  # the field the person typed, not "Memory id"
    for action, form, said in asks:
        status, page, _ = _request(console, "POST", f"/act/{action}", body={**form, "csrf": console.csrf()})
        assert status == 400 and said in page and 'name="confirmed"' not in page, (action, form)
    assert console.events() == before


def _confirmation_form(page: str) -> dict[str, str]:
    """The hidden fields of a confirmation page's "Yes" form, as a browser sends them."""
    form = page.split('<form method="post"', 1)[1].split("</form>", 1)[0]
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form))


def test_yes_on_a_set_that_changed_since_its_page_records_nothing(console: Console) -> None:
    """The page listed the members "Resolve" would supersede; "Yes" carried only the set and the
    winner, so a member that joined in between was superseded unseen."""
    said = ("--subject", "kiosk api", "--source-type", "agent_generated")
    first = _memory(console, "The kiosk API listens on port 7001", *said, "--event-time", "2020-01-01T10:00:00Z")
    _memory(console, "The kiosk API listens on port 7002", *said, "--event-time", "2020-01-01T10:10:00Z")
    sets = json.loads(ledger_cli("conflicts", "--json", "--db", console.db, check=True).stdout)["conflicts"]
    [cid] = [c["conflict_id"] for c in sets if first in c["members"]]
    for action, extra in (("resolve", {"winner_id": str(first)}), ("keep_both", {})):
        form = {"conflict_id": str(cid), "csrf": console.csrf(), **extra}
        status, page, _ = _request(console, "POST", f"/act/{action}", body=form)
        assert status == 200
        yes = {k: html.unescape(v) for k, v in _confirmation_form(page).items()}
        assert yes["confirmed"] == "yes" and yes["shown"]
        joined = _memory(
            console,
            f"The kiosk API listens on port {7100 + len(action)}",
            *said,
            "--event-time",
            "2020-01-01T10:20:00Z",
        )
        before = console.events()
        status, page, _ = _request(console, "POST", f"/act/{action}", body=yes)
        assert status == 409 and 'id="changed-since"' in page and f'data-id="{joined}"' in page
        assert console.events() == before  # nothing recorded: the page shows the set as it is now
        status, _, headers = _request(
            console, "POST", f"/act/{action}", body=_confirmation_form(page) | {"csrf": console.csrf()}
        )
        assert status == 303 and "done=" in headers["location"], action  # "Yes" on the page as it is now
        if action == "resolve":
            member = json.loads(ledger_cli("read", str(joined), "--json", "--db", console.db, check=True).stdout)
            assert member["memory"]["status"] == "superseded"  # seen, then superseded
            _memory(console, "The kiosk API listens on port 7300", *said, "--event-time", "2020-01-01T10:30:00Z")
            sets = json.loads(ledger_cli("conflicts", "--json", "--db", console.db, check=True).stdout)["conflicts"]
            [cid] = [c["conflict_id"] for c in sets if c["claim"]["subject"].lower().startswith("kiosk")]


def test_recorded_is_said_once_to_the_one_who_acted_not_by_the_url(console: Console) -> None:
    """Any ``?done=`` said "Recorded.": a reload, a bookmark or a shared link of the page told its
    reader that something had just been recorded (an open conflict "resolved")."""
    memory_id = _memory(console, "The loading dock closes at 6pm", "--source-type", "agent_generated")
    status, _, headers = _act(console, "confirm", memory_id=str(memory_id))
    assert status == 303
    done = headers["set-cookie"].split(";", 1)[0]
    cookie = f"ledger_console_{console.port}={console.token}; {done}"
    _, page, answer = _request(console, "GET", headers["location"], headers={"Cookie": cookie})
    assert 'id="done"' in page and "Recorded." in page
    assert "ledger_console_done=" in answer["set-cookie"]  # cleared once shown
    _, again, _ = _request(console, "GET", headers["location"])  # the reload, or the link shared
    assert 'id="done"' not in again
    _, forged, _ = _request(console, "GET", "/memory/1?done=resolve")
    assert 'id="done"' not in forged


def test_the_supersede_warning_calls_an_unlocked_confirmed_fact_no_locked_one(console: Console) -> None:
    """It read "a fact a person confirmed (user_confirmed, locked)" of a memory unlocked since."""
    unlocked = _memory(console, "The fire drill is on Thursday")  # the CLI: user_confirmed, locked
    ledger_cli("unlock", str(unlocked), "--db", console.db, check=True)
    winner = _memory(console, "The fire drill moved to Friday")
    form = {"memory_id": str(unlocked), "winner_id": str(winner), "csrf": console.csrf()}
    status, page, _ = _request(console, "POST", "/act/supersede", body=form)
    assert status == 200 and "confirmed or locked" in page and "locked)" not in page


def test_a_confirmation_page_marks_a_long_memory_cut(console: Console) -> None:
    """A confirmation page shows a memory's first 300 characters: it cut a long one with no mark,
    so the text read as if the memory ended there."""
    words = " ".join(f"step{i}" for i in range(80))  # ~550 characters
    long = _memory(console, f"The release checklist: {words}")
    before = console.events()
    status, page, _ = _request(
        console, "POST", "/act/retire", body={"memory_id": str(long), "reason": "old", "csrf": console.csrf()}
    )
    shown = html.unescape(page.split('class="ledger-text">', 1)[1].split("</span>", 1)[0])
    assert status == 200 and 'name="confirmed"' in page  # the confirmation page, nothing recorded yet
    assert len(shown) == 300 and shown.endswith("…") and shown[:-1] in f"The release checklist: {words}"
    assert console.events() == before
