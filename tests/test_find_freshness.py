"""``find`` answers the newest statement of a fact first, and ranks an agent's "user_confirmed" as
the agent's word (issue: know when a fact changed; docs/search.md, ranking)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from fact_ledger.ledger.freshness import newest_first, template
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.ledger.text import fold
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings


def ids(app: LedgerApp, query: str) -> list[int]:
    return [r["memory_id"] for r in app.find(query, limit=10)["results"]]


def test_templates_mask_values_and_need_words() -> None:
    assert template("The VPN portal moved to https://vpn.acme.dev") == template(
        "the VPN portal moved to https://vpn2.acme.io."
    )
    assert template("The team lunch happens in room 4B") == template("The team lunch happens in room 7C!")
    assert template("The team lunch happens in room 4B") != template("The team dinner happens in room 4B")
    assert template("Thanks!") == template("ok 42") == template("Backup runs 02:00") == ""  # too few words
    assert template("Backup job runs 02:00") == "backup job runs 0value0"  # three words name a fact
    # A name holding digits says which thing: service s2 and service s3 are two facts, not one.
    assert template("the deploy window of service s2 is 2 pm") != template("the deploy window of service s3 is 3 pm")
    assert template("key ci-02 belongs to billing") != template("key nul-1 belongs to billing")
    assert template("The budget is $50k now") == template("The budget is 5万 now") == template("The budget is 7% now")


# The pattern template() used over the whole text until it went quadratic on long runs: the
# reference its linear, token-by-token replacement must agree with.
_ONE_PASS = re.compile(
    r"\S+://\S+|\S+@\S+\.\S+"
    r"|(?<![A-Za-z0-9_-])[$€¥£]?v?\d[\d.,:/-]*(?:[a-z%]{1,3}|[万千百亿元块])?(?![A-Za-z0-9_-])"
)


def _one_pass_template(text: str) -> str:
    words = re.findall(r"[^\W_]+", _ONE_PASS.sub(" 0value0 ", fold(text)))
    return " ".join(words) if sum(1 for w in words if w != "0value0") >= 3 else ""


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1:/@.-_,$v%万天 \t\u3000x9")), max_size=40))
@example("see http://a.b and mail me@x.io, port 8080 now")
@example("://x a://b a:// @a.b a@.b a@b. a@b.c 1.2.3 $5k v1.2 x-1 3pm")
def test_templates_agree_with_the_one_pass_pattern(text: str) -> None:
    assert template(text) == _one_pass_template(text)


def test_a_long_run_without_spaces_is_templated_in_linear_time() -> None:
    for run in ("x" * 100_000, "a@" * 50_000, "北京的天气很好" * 15_000, "ab://" * 20_000, "1." * 50_000 + "x"):
        started = time.perf_counter()
        template(f"the note says {run} today")
        assert time.perf_counter() - started < 0.5, run[:12]  # the one-pass pattern: seconds to hours


def test_newest_first_reorders_only_inside_the_places_a_group_holds() -> None:
    times = {1: "2025-01", 2: "2025-03", 3: "2025-02", 4: "2025-04", 5: "2025-05"}
    slots = {1: ["a"], 3: ["a"], 2: ["b"], 4: ["b"]}
    assert newest_first([1, 2, 3, 4, 5], slots, times) == [3, 4, 1, 2, 5]
    # A shared key links groups transitively; a hit in an unresolved claim set keeps its place.
    assert newest_first([1, 2, 3, 4], {1: ["a"], 3: ["a", "b"], 4: ["b"]}, times) == [4, 2, 3, 1]
    assert newest_first([1, 2, 3, 4], {1: ["a"], 3: ["a", "b"], 4: ["b"]}, times, fixed=[4]) == [3, 2, 1, 4]
    assert newest_first([1, 2], {1: ["a"], 2: ["a"]}, {1: "2025", 2: "2025"}) == [1, 2]  # a tie keeps rank


def test_the_newer_statement_of_the_same_fact_answers_first(app: LedgerApp) -> None:
    # No claim is extracted from these: outside any claim set, only the statement's shape ties them.
    old = app.remember(
        "The team lunch happens in room 4B", source_type="document_extracted", event_time="2025-02-03T12:00:00Z"
    )["memory_id"]
    new = app.remember("The team lunch happens in room 7C", event_time="2025-04-07T12:00:00Z")["memory_id"]
    other = app.remember("The team lunch budget is generous", event_time="2025-05-01T12:00:00Z")["memory_id"]
    found = ids(app, "where does the team lunch happen")
    assert found.index(new) < found.index(old)
    assert other in found


def test_one_claim_key_without_a_set_answers_newest_first(app: LedgerApp) -> None:
    # The same value in two wordings: one claim key, no set (nothing disagrees).
    old = app.remember("Staging port: 8080", source_type="document_extracted", event_time="2025-01-10T09:00:00Z")
    new = app.remember("The staging port is still 8080", event_time="2025-03-10T09:00:00Z")
    old, new = old["memory_id"], new["memory_id"]
    assert app.find("staging port")["results"][0]["memory_id"] == new
    assert old in ids(app, "staging port")


# Two days apart: not one session (no context score flows between them), and a recency
# difference far smaller than any trust step.
EARLIER, LATER = "2025-03-01T09:00:00Z", "2025-03-03T09:00:00Z"


def test_an_agent_asserted_user_confirmed_ranks_as_the_agents_word(app: LedgerApp) -> None:
    asserted = app.remember("Deploy notes for alpha", source_type="user_confirmed", event_time=LATER)
    assert asserted["authorization"] == "agent_asserted"
    document = app.remember("Deploy notes for gamma", source_type="document_extracted", event_time=EARLIER)
    # 45 (the agent's word) < 70 (a document): the document answers first.
    assert ids(app, "deploy notes")[:2] == [document["memory_id"], asserted["memory_id"]]


def test_a_user_confirmed_label_from_the_user_channel_still_ranks_first(app: LedgerApp) -> None:
    document = app.remember("Deploy notes for gamma", source_type="document_extracted", event_time=LATER)
    confirmed = app.remember(
        "Deploy notes for alpha", source_type="user_confirmed", event_time=EARLIER, authorization=AUTH_USER
    )
    assert ids(app, "deploy notes")[:2] == [confirmed["memory_id"], document["memory_id"]]


def test_find_order_survives_a_rebuild(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), client="test"))
    try:
        app.remember("The team lunch happens in room 4B", source_type="document_extracted", event_time="2025-02-03")
        app.remember("The team lunch happens in room 7C", event_time="2025-04-07")
        app.remember("Staging port: 8080", event_time="2025-03-10")
        before = (ids(app, "team lunch room"), app.runner.checksums())
        app.rebuild()
        assert (ids(app, "team lunch room"), app.runner.checksums()) == before
    finally:
        app.close()
