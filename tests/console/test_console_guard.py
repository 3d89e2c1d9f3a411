"""Who may use the console: token, Host (DNS rebinding), same origin, CSRF — and a refusal writes nothing.

The HTTP tests speak to the real ``ledger console`` subprocess with raw ``http.client`` requests,
so they can send the headers a browser never would (a hostile Host, a foreign Origin).
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlencode

import pytest

from fact_ledger.server.console.guard import Guard, without_token
from tests.conftest import ledger_cli
from tests.console.conftest import Console


def test_guard_accepts_only_its_own_loopback_host() -> None:
    guard = Guard(port=18876)
    assert guard.host_refusal("127.0.0.1:18876") is None
    assert guard.host_refusal("localhost:18876") is None
    for host in ("evil.example:18876", "127.0.0.1:18877", "127.0.0.1", None, "0.0.0.0:18876"):
        assert guard.host_refusal(host), host


def test_localhost_is_sent_on_to_the_printed_address_where_the_key_is() -> None:
    guard = Guard(port=18876)
    assert guard.canonical("localhost:18876", "GET", "/memories", "q=a") == "http://127.0.0.1:18876/memories?q=a"
    assert guard.canonical("localhost:18876", "GET", "/", "token=abc") == "http://127.0.0.1:18876/?token=abc"
    assert guard.canonical("127.0.0.1:18876", "GET", "/", "") is None
    assert guard.canonical("localhost:18876", "POST", "/act/retire", "") is None  # a POST is never replayed


@pytest.mark.parametrize(
    ("origin", "site", "refused"),
    [
        (None, None, False),
        (None, "none", False),
        ("http://127.0.0.1:18876", "same-origin", False),
        ("http://localhost:18876", None, False),
        ("http://evil.example", None, True),
        (None, "cross-site", True),
        (None, "same-site", True),
        ("http://127.0.0.1:9999", "same-origin", True),
        ("null", None, True),
    ],
)
def test_guard_refuses_other_origins(origin: str | None, site: str | None, refused: bool) -> None:
    assert bool(Guard(port=18876).origin_refusal(origin, site)) is refused


def test_tokens_are_random_per_run_and_compared_whole() -> None:
    a, b = Guard(port=1), Guard(port=1)
    assert a.token != b.token and a.csrf != b.csrf and len(a.token) >= 32
    assert a.token_ok(a.token) and not a.token_ok(b.token) and not a.token_ok(None) and not a.token_ok("")
    assert a.csrf_ok(a.csrf) and not a.csrf_ok(a.csrf[:-1]) and not a.csrf_ok(None) and not a.csrf_ok(["x"])


def test_the_token_is_dropped_from_the_url_it_redirects_to() -> None:
    assert without_token("/memories", "q=alice&token=abc&page=2") == "/memories?q=alice&page=2"
    assert without_token("/", "token=abc") == "/"


def _request(
    console: Console,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: dict[str, str] | None = None,
    cookie: bool = True,
) -> tuple[int, str, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", console.port, timeout=10)
    sent = {"Host": f"127.0.0.1:{console.port}"}
    if cookie:
        sent["Cookie"] = f"ledger_console_{console.port}={console.token}"
    if body is not None:
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    sent.update(headers or {})
    conn.request(method, path, body=urlencode(body) if body is not None else None, headers=sent)
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, text, {k.lower(): v for k, v in response.getheaders()}


def test_without_the_token_nothing_is_shown(console: Console) -> None:
    status, text, _ = _request(console, "GET", "/memories", cookie=False)
    assert status == 403 and "Alice" not in text
    status, _, _ = _request(
        console, "GET", "/memories", cookie=False, headers={"Cookie": f"ledger_console_{console.port}=guessed"}
    )
    assert status == 403


def test_the_printed_token_sets_a_strict_cookie_and_redirects_without_it(console: Console) -> None:
    status, _, headers = _request(console, "GET", f"/memories?q=alice&token={console.token}", cookie=False)
    assert status == 303 and headers["location"] == "/memories?q=alice"
    cookie = headers["set-cookie"]
    assert f"ledger_console_{console.port}={console.token}" in cookie
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
    assert "frame-ancestors 'none'" in headers["content-security-policy"]


def test_a_post_without_the_csrf_token_is_refused_and_writes_nothing(console: Console) -> None:
    before = console.events()
    form = {"memory_id": str(console.ids["paris"]), "reason": "csrf probe", "confirmed": "yes"}
    status, text, _ = _request(console, "POST", "/act/retire", body=form)
    assert status == 403 and "CSRF" in text
    status, _, _ = _request(console, "POST", "/act/retire", body={**form, "csrf": "wrong"})
    assert status == 403
    assert console.events() == before


def test_a_wrong_host_header_is_refused_and_writes_nothing(console: Console) -> None:
    before = console.events()
    form = {"memory_id": str(console.ids["paris"]), "reason": "rebinding", "confirmed": "yes", "csrf": console.csrf()}
    for host in (f"attacker.example:{console.port}", "127.0.0.1:1"):
        status, text, _ = _request(console, "POST", "/act/retire", body=form, headers={"Host": host})
        assert status == 403 and "Host" in text
        status, text, _ = _request(console, "GET", "/memories", headers={"Host": host})
        assert status == 403 and "Alice" not in text
    assert console.events() == before


def test_a_cross_origin_request_is_refused_and_writes_nothing(console: Console) -> None:
    before = console.events()
    form = {
        "memory_id": str(console.ids["paris"]),
        "reason": "cross origin",
        "confirmed": "yes",
        "csrf": console.csrf(),
    }
    for headers in (
        {"Origin": "http://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "same-site"},
    ):
        status, text, _ = _request(console, "POST", "/act/retire", body=form, headers=headers)
        assert status == 403 and "refused" in text, headers
    assert console.events() == before


def test_the_first_post_only_asks_for_confirmation(console: Console) -> None:
    # a current memory of its own: the seed's Paris is superseded, which no page offers to retire
    written = ledger_cli("remember", "The print room is on floor 3", "--db", console.db, "--json", check=True)
    before = console.events()
    form = {"memory_id": str(json.loads(written.stdout)["memory_id"]), "reason": "moved", "csrf": console.csrf()}
    status, text, _ = _request(
        console,
        "POST",
        "/act/retire",
        body=form,
        headers={"Origin": f"http://127.0.0.1:{console.port}", "Sec-Fetch-Site": "same-origin"},
    )
    assert status == 200 and 'name="confirmed" value="yes"' in text and "moved" in text
    assert console.events() == before


def test_bad_input_is_a_clear_error_page_and_writes_nothing(console: Console) -> None:
    before = console.events()
    status, text, _ = _request(
        console,
        "POST",
        "/act/supersede",
        body={"memory_id": str(console.ids["paris"]), "winner_id": "abc", "csrf": console.csrf(), "confirmed": "yes"},
    )
    assert status == 400 and "winner_id" in text and "Traceback" not in text
    status, text, _ = _request(console, "GET", "/memory/999999")
    assert status == 404 and "not_found" in text
    status, text, _ = _request(console, "GET", "/memories?as_of=yesterday-ish")
    assert status == 400 and "as_of_recorded" in text
    assert console.events() == before
