"""Retractions always land (docs/contract.md, ``remember``): a write with ``ref_id`` + ``retracts``
is never absorbed as a duplicate without retracting its target, and a cancellation without a
``ref_id`` retracts the one active instruction that holds its words, or answers with the
candidates. Over MCP stdio: tests/contract/test_fact_changes.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fact_ledger.ledger.cancellation import (
    MAX_MATCHES,
    Target,
    cancelled_words,
    choose,
    find,
    is_cancellation,
    is_instruction,
    names_one_occurrence,
    recurs,
)
from fact_ledger.ledger.decide import RETRACTED_BY_WORDS
from fact_ledger.ledger.errors import Locked
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from tests.conftest import ledger_cli

CANCELLED = "The nightly orders backup is cancelled"


def status(app: LedgerApp, memory_id: int) -> str:
    return str(app.read(memory_id)["memory"]["status"])


def assert_rebuild_reproduces(app: LedgerApp) -> None:
    incremental = app.runner.checksums()
    app.rebuild()
    assert app.runner.checksums() == incremental
    assert app.verify()["projections"] == "consistent"


# -- explicit retractions ----------------------------------------------------------------------
def test_a_second_retraction_with_the_same_text_retracts_its_own_target(app: LedgerApp) -> None:
    first = app.remember("Run the nightly orders backup at 02:00")["memory_id"]
    second = app.remember("Run the nightly orders backup on the replica at 03:00")["memory_id"]
    cancel = app.remember(CANCELLED, ref_id=first, retracts=True)
    assert cancel["retracted"] == [first]
    again = app.remember(CANCELLED, ref_id=second, retracts=True)
    # The existing cancellation absorbs the repeat and retracts the second target too.
    assert again["duplicate_of"] == again["memory_id"] == cancel["memory_id"]
    assert again["retracted"] == [second]
    assert status(app, second) == "retired"
    target = app.read(second)["memory"]
    assert target["retired_by"] == cancel["memory_id"] and target["status_reason"] == "retracted"
    assert app.read(cancel["memory_id"])["memory"]["retracts"] == [first, second]
    events = [v["events"] for v in app.history(second)["versions"]]
    assert any("MemoryRetired" in str(e) for e in events)  # history explains why it left
    assert_rebuild_reproduces(app)


def test_repeating_a_finished_retraction_is_a_plain_sighting(app: LedgerApp) -> None:
    target = app.remember("Run the nightly orders backup at 02:00")["memory_id"]
    first = app.remember(CANCELLED, ref_id=target, retracts=True)
    before = app.store.last_position()
    again = app.remember(CANCELLED, ref_id=target, retracts=True)  # a retried call: nothing left to retract
    assert again["duplicate_of"] == first["memory_id"] and "retracted" not in again
    assert app.store.last_position() == before + 1  # the sighting only


def test_a_retraction_in_its_targets_own_words_is_recorded_and_lands(app: LedgerApp) -> None:
    target = app.remember("Ping Dana before every release")["memory_id"]
    r = app.remember("Ping Dana before every release", ref_id=target, retracts=True)
    assert "duplicate_of" not in r and r["memory_id"] != target and r["retracted"] == [target]
    assert status(app, target) == "retired"


def test_a_duplicate_retraction_of_a_locked_target_still_needs_authorization(app: LedgerApp) -> None:
    other = app.remember("Run the nightly orders backup at 02:00")["memory_id"]
    cancel = app.remember(CANCELLED, ref_id=other, retracts=True)["memory_id"]
    locked = app.remember("Keep the nightly orders backup", source_type="user_confirmed", authorization=AUTH_USER)
    before = app.store.last_position()
    with pytest.raises(Locked):
        app.remember(CANCELLED, ref_id=locked["memory_id"], retracts=True)
    assert app.store.last_position() == before and status(app, locked["memory_id"]) == "active"
    r = app.remember(CANCELLED, ref_id=locked["memory_id"], retracts=True, authorization=AUTH_USER)
    assert r["duplicate_of"] == cancel and r["retracted"] == [locked["memory_id"]]


# -- cancellations without ref_id --------------------------------------------------------------
@pytest.mark.parametrize(
    ("instruction", "cancellation"),
    [
        ("Send the minutes to the team after each meeting", "don't send the minutes"),
        ("Send the minutes to the team after each meeting", "You don't need to send the minutes any more"),
        ("Run the nightly orders backup at 02:00", CANCELLED),
        ("Hold the standup at 09:30 every day", "Cancel the standup"),
        ("Please book the big room every Friday", "No need to book the big room anymore"),
        ("每天下午五点给客户发邮件", "不要发邮件了"),
        ("每晚两点备份订单数据库", "取消每晚的备份"),
        ("每周一提醒张三交周报", "别再提醒张三了"),
        # an event's time is a schedule; a condition that is part of the instruction cancelled
        ("The Friday retro is at 4pm", "The Friday retro is cancelled"),
        ("Always run the linter before committing", "We don't need to run the linter before committing anymore"),
        # a habit given up, an event that is off, a reservation by what booked it
        ("I do yoga every Monday at 7pm", "We're not doing yoga anymore"),
        ("I do yoga every Monday at 7pm", "We're no longer doing yoga"),
        ("Team lunch is every Thursday at noon", "The team lunch is off"),
        ("Book a table at Luigi's for Friday 7pm", "Cancel the Luigi's reservation"),
        ("Reserve a table at Luigi's for Friday 7pm", "Cancel the Luigi's reservation"),
        ("The launch party is at 6pm", "The launch party is cancelled"),
        ("The standup with the design team is at 10am", "Cancel the standup"),
        ("Yoga class is at 6pm on Mondays", "We're not doing yoga anymore"),
        # an event named by what it is about, with "call", "meeting" or "event" after it
        ("The client call is at 3pm on Friday", "The client call is cancelled"),
        ("The all-hands meeting is on Friday at 4pm", "The all-hands is cancelled"),
        ("The sprint planning meeting is every Monday at 10am", "Sprint planning is cancelled"),
        ("The launch event is at 6pm on March 3", "The launch is cancelled"),
        # one day's booking or reminder, cancelled for that day: it is the one-off itself
        ("Book a table at Nobu for Saturday's dinner", "Cancel Saturday's dinner at Nobu"),
        ("Remind me about Friday's demo with Acme at 2pm", "Friday's demo with Acme is cancelled"),
        ("Send the report to Bob every Friday", "Don't send the report to Bob on Fridays"),
        # an event with someone that is off, an event whose "is" is contracted, a day and its time
        ("My 1:1 with Bob is at 3pm on Thursday", "My 1:1 with Bob is off"),
        ("Dinner with the Smiths is Saturday at 7pm", "Dinner with the Smiths is off"),
        ("The game is Sunday at 4pm", "The game's off"),
        ("The game is Sunday at 4pm", "The game is off"),
        ("The game is Sunday at 4pm", "The game is off because of the rain"),
        ("The trip to Denver is on Friday", "The trip's been cancelled"),
        ("The farewell party for Tom is on Friday at 5pm", "The farewell party for Tom is off"),
        ("The party is on Saturday at 8pm", "The party is off, sorry"),
        ("The 1:1 with Bob is at 3pm on Thursdays", "The 1:1 with Bob is off for good"),
        # an appointment named by whom it is with; a Chinese plan with its day and time
        ("The electrician is scheduled for Friday at 10am", "The electrician appointment is cancelled"),
        ("The dentist is on Tuesday at 3pm", "Cancel the dentist appointment"),
        ("周五晚上8点和老张吃饭", "和老张吃饭取消了"),
        ("下周二下午3点去看牙医", "看牙医取消了"),
        # cancelled said with "got", or for good; someone coming at a time is a schedule
        ("The dentist is scheduled for Monday at 9am", "My dentist appointment got cancelled"),
        ("Soccer practice is every Wednesday at 5pm", "Soccer practice is cancelled for good"),
        ("The babysitter is coming on Friday at 6pm", "The babysitter is cancelled"),
        ("每周三晚上7点打羽毛球", "羽毛球不打了"),
        ("每周六上午10点上钢琴课", "钢琴课不上了"),
    ],
)
def test_a_cancellation_retracts_the_one_instruction_that_holds_its_words(
    app: LedgerApp, instruction: str, cancellation: str
) -> None:
    target = app.remember(instruction)["memory_id"]
    bystander = app.remember("The VPN portal moved to https://vpn.acme.dev")["memory_id"]
    r = app.remember(cancellation)
    assert r["retracted"] == [target] and "retraction_candidates" not in r
    memory = app.read(target)["memory"]
    assert memory["status"] == "retired" and memory["retired_by"] == r["memory_id"]
    assert memory["status_reason"] == RETRACTED_BY_WORDS  # found by its words, not named
    assert app.read(r["memory_id"])["memory"]["retracts"] == [target]
    assert status(app, bystander) == "active"
    assert_rebuild_reproduces(app)


def test_two_matching_instructions_are_answered_as_candidates_and_nothing_is_retracted(app: LedgerApp) -> None:
    acme = app.remember("Send the invoice to Acme every Friday")["memory_id"]
    globex = app.remember("Send the invoice to Globex every Monday")["memory_id"]
    r = app.remember("Stop sending the invoice")
    assert "retracted" not in r
    assert {c["memory_id"] for c in r["retraction_candidates"]} == {acme, globex}
    assert any("cancellation" in n for n in r["notices"])
    assert status(app, acme) == status(app, globex) == "active"
    narrowed = app.remember("Stop sending the invoice to Globex")  # more words: one instruction left
    assert narrowed["retracted"] == [globex] and status(app, acme) == "active"


@pytest.mark.parametrize(
    ("instruction", "cancellation"),
    [
        ("We deploy on Fridays and run the backup every night", "We no longer deploy on Fridays"),
        ("Deploy to staging first, then deploy to production", "Don't deploy to staging"),
        ("Water the plants every morning. Feed the cat at 6pm", "Stop watering the plants"),
        (
            "Remind me to water the plants, and to take out the trash on Tuesdays",
            "Stop reminding me to water the plants",
        ),
        ("每周五部署，每晚备份", "不要再每周五部署了"),
        ("Post the release notes in #eng, then pin them.", "Stop posting the release notes in #eng."),
    ],
)
def test_an_instruction_that_gives_others_too_is_named_not_retracted(
    app: LedgerApp, instruction: str, cancellation: str
) -> None:
    """Retracting it would cancel the instructions the cancellation did not name (the backup, the
    cat, production): it is listed as the candidate, to retract by ``ref_id`` or update."""
    target = app.remember(instruction)["memory_id"]
    r = app.remember(cancellation)
    assert "retracted" not in r and status(app, target) == "active"
    assert [c["memory_id"] for c in r["retraction_candidates"]] == [target]
    assert any("cancellation" in n for n in r["notices"])


@pytest.mark.parametrize(
    ("instruction", "cancellation"),
    [
        ("Send the minutes to Bob and Carol every Monday", "Don't send the minutes any more"),
        ("Send the report to Bob, every Monday", "Stop sending the report"),
        ("每天早上9点，给Bob发日报", "不要再给Bob发日报了"),
        ("Remind me to water the plants every morning", "Stop reminding me to water the plants"),
        (
            "Send the weekly report, with the metrics attached, to Bob every Monday.",
            "Stop sending the weekly report to Bob.",
        ),
        ("Every Monday, send the minutes to Bob and Carol.", "Do not send the minutes to Bob and Carol any more."),
    ],
)
def test_one_instruction_in_several_parts_is_still_retracted(
    app: LedgerApp, instruction: str, cancellation: str
) -> None:
    target = app.remember(instruction)["memory_id"]
    assert app.remember(cancellation)["retracted"] == [target]


@pytest.mark.parametrize(
    "statement",
    [
        "The cancel button is next to the invoice form",
        "Flight cancellations rose in March, says the invoice report",
        "We may cancel the invoice run if the budget is cut",
        "Don't forget to send the invoice to Acme",
        "Don't send the invoice to Acme until Bob approves it",
        "Caroline: don't send the invoice to Acme, I did it",
        "The invoice was sent to Acme on Friday",
    ],
)
def test_statements_that_are_no_cancellation_retract_nothing(app: LedgerApp, statement: str) -> None:
    instruction = app.remember("Send the invoice to Acme every Friday")["memory_id"]
    r = app.remember(statement)
    assert "retracted" not in r and "retraction_candidates" not in r
    assert status(app, instruction) == "active"


@pytest.mark.parametrize(
    ("schedule", "one_off"),
    [
        ("Yoga is at 6pm on Mondays", "Yoga is cancelled this Monday"),
        ("The 1:1 with Bob is at 2pm on Tuesdays", "Cancel the 1:1 with Bob this Tuesday"),
        ("Hold the standup at 09:30 every day", "Cancel tomorrow's standup"),
        ("每天早上9点开站会", "今天的站会取消了"),
        ("Team lunch is every Thursday at noon", "Thursday's team lunch is off"),
        ("Team lunch is every Thursday at noon", "Thursday's team lunch is cancelled"),
        ("I do yoga every Monday at 7pm", "We're not doing yoga today"),
    ],
)
def test_cancelling_one_occurrence_leaves_the_schedule(app: LedgerApp, schedule: str, one_off: str) -> None:
    """ "Yoga is cancelled this Monday" retracted "Yoga is at 6pm on Mondays": the day named in the
    cancellation matched the schedule's days, and the whole schedule went."""
    target = app.remember(schedule)["memory_id"]
    r = app.remember(one_off)
    assert "retracted" not in r and status(app, target) == "active"


@pytest.mark.parametrize(
    ("schedule", "cancellation"),
    [
        # the words name something else the schedule's thing is named after (the launch, not its
        # party); a booking not made at the place named; a state, not an event, that is off
        ("The launch party is at 6pm", "The launch is cancelled"),
        ("The launch review is at 3pm on Friday", "The launch is cancelled"),
        ("Order pizza from Luigi's every Friday", "Cancel the Luigi's reservation"),
        ("Turn on the heating every morning at 6am", "The heating is off"),
        ("The meeting with the client is at 3pm on Friday", "The meeting with the client is off-site"),
        ("The meeting is at 3pm on Friday", "The meeting is off-site"),
        ("Dinner with the Smiths is Saturday at 7pm", "Dinner with the Smiths is off the menu"),
        ("Lunch with the team is at noon on Friday", "Lunch with the team is off Main Street"),
        # more said after "off" than why: its words find nothing
        ("The class is at 6pm on Mondays", "Class is off, students are on a field trip to the zoo"),
        ("I do yoga every Monday at 7pm", "We're not doing yoga"),
        # the words name when the instruction applies, not what it says to do
        ("Take ibuprofen when I have headaches", "I'm no longer having headaches"),
        ("Remind me to take my allergy pills when I have symptoms", "I'm not having symptoms anymore"),
        # a reservation's retried "book" is the verb that booked it, not a book
        ("Buy the Lonely Planet Japan guide book before the trip", "Cancel the Japan reservation"),
        ("Buy the book 'Dune' for Sam's birthday", "Cancel the Dune reservation"),
        # one of the schedule's days given up: the other days stay
        ("Yoga is every Monday and Wednesday at 7pm", "We're not doing yoga on Mondays anymore"),
        ("Standup is every weekday at 10am", "We're not doing standups on Fridays anymore"),
        ("Gym every Monday, Wednesday and Friday at 6am", "I'm not going to the gym on Fridays anymore"),
        # an appointment is the schedule of whom it is with, all of it; a Chinese plan of someone else,
        # or one already past
        ("Bob's flight is at 9am on Friday", "The Bob appointment is cancelled"),
        ("The electrician's invoice is due on Friday at 10am", "The electrician appointment is cancelled"),
        ("The plumber is scheduled for Friday at 10am", "The electrician appointment is cancelled"),
        ("周五晚上8点和老张吃饭", "和老李吃饭取消了"),
        ("昨天晚上8点和老张吃饭了", "和老张吃饭取消了"),
        ("明天下雨", "下雨取消了"),  # a day without a time: the weather, no plan
        # what another thing the instruction names is of: the orders of its backup, the client of its report
        ("Run the nightly orders backup at 02:00", "The order is cancelled"),
        ("Send the client report every Monday", "The client is cancelled"),
        ("每晚两点备份订单数据库", "订单取消了"),
        ("每周一早上9点发销售报表", "销售取消了"),
    ],
)
def test_a_cancellation_of_something_else_retracts_nothing(app: LedgerApp, schedule: str, cancellation: str) -> None:
    target = app.remember(schedule)["memory_id"]
    r = app.remember(cancellation)
    assert "retracted" not in r and status(app, target) == "active"


def test_a_schedule_of_a_thing_named_after_the_one_cancelled_is_listed_not_retracted(app: LedgerApp) -> None:
    """ "The launch is cancelled" retracted "The launch party is at 6pm": the party holds the word
    "launch", and was the one schedule that did."""
    party = app.remember("The launch party is at 6pm")["memory_id"]
    r = app.remember("The launch is cancelled")
    assert "retracted" not in r and status(app, party) == "active"
    assert [c["memory_id"] for c in r["retraction_candidates"]] == [party]


@pytest.mark.parametrize(
    ("memory", "cancellation"),
    [
        ("Standup is at 9:30 every day; the demo is at 3pm on Friday", "The demo is cancelled"),
        ("Alice's flight lands at 6pm and her hotel check-in is at 8pm", "The hotel is cancelled"),
        ("每周二下午3点周会，周五下午4点复盘会", "复盘会取消了"),
    ],
)
def test_a_memory_that_keeps_another_schedule_is_named_not_retracted(
    app: LedgerApp, memory: str, cancellation: str
) -> None:
    """ "The demo is cancelled" retracted "Standup is at 9:30 every day; the demo is at 3pm on
    Friday": the daily standup went with the demo."""
    target = app.remember(memory)["memory_id"]
    r = app.remember(cancellation)
    assert "retracted" not in r and status(app, target) == "active"
    assert [c["memory_id"] for c in r["retraction_candidates"]] == [target]


def test_only_instructions_are_cancelled_not_reports_of_the_past(app: LedgerApp) -> None:
    report = app.remember("The minutes were sent to the team on Monday")["memory_id"]
    r = app.remember("don't send the minutes")
    assert "retracted" not in r and status(app, report) == "active"


def test_a_cancellation_stays_in_its_workspace(app: LedgerApp) -> None:
    other = app.remember("Send the minutes to the team after each meeting", workspace="beta")["memory_id"]
    mine = app.remember("Send the minutes to the team after each meeting", workspace="alpha")["memory_id"]
    r = app.remember("don't send the minutes", workspace="alpha")  # one match here, whatever beta holds
    assert r["retracted"] == [mine] and status(app, other) == "active"


def test_a_cancellation_finds_its_instruction_under_an_alias_of_its_workspace(app: LedgerApp) -> None:
    """An instruction written under a name the workspace later took as an alias is the
    workspace's own: the cancellation's search covers every stored name of its workspace."""
    old = app.remember("Send the minutes to the team after each meeting", workspace="team-x")["memory_id"]
    app.accept_alias("team-x", "beta", authorization=AUTH_USER)
    r = app.remember("don't send the minutes", workspace="beta")
    assert r["retracted"] == [old] and status(app, old) == "retired"


def test_one_more_memory_holding_the_words_than_looked_at_retracts_nothing(app: LedgerApp) -> None:
    """The search reads one row past :data:`MAX_MATCHES`: with that many reports holding the
    words beside the one instruction, the instruction could hide another, so none is retracted."""
    for n in range(MAX_MATCHES):
        app.remember(f"Dana did send the minutes late, report number {n}")
    instruction = app.remember("Send the minutes to the team after each meeting")["memory_id"]  # the newest
    r = app.remember("don't send the minutes")
    assert "retracted" not in r and status(app, instruction) == "active"
    assert [c["memory_id"] for c in r["retraction_candidates"]] == [instruction]


def test_a_protected_instruction_is_not_retracted_by_words_alone(app: LedgerApp) -> None:
    locked = app.remember(
        "Send the minutes to the team after each meeting", source_type="user_confirmed", authorization=AUTH_USER
    )["memory_id"]
    r = app.remember("don't send the minutes")  # stored, but the locked instruction needs ref_id + authorization
    assert r["ok"] and "retracted" not in r
    assert [c["memory_id"] for c in r["retraction_candidates"]] == [locked]
    assert status(app, locked) == "active"


# -- the rule itself (pure) --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("don't send the minutes", ("send", "minutes")),
        (CANCELLED, ("nightly", "orders", "backup")),
        ("Stop sending the weekly report.", ("sending", "weekly", "report")),
        ("不要发邮件了", ("发邮", "邮件")),
        ("每晚的备份取消了", ("每晚", "备份")),
        ("不要再给Bob发日报了", ("给", "bob", "发日", "日报")),  # a Latin name is a word of its own
        ("别发邮件了", ("发邮", "邮件")),
        ("cancel it", ()),  # nothing named: nothing to look for
        ("We're not doing yoga anymore", ("yoga",)),
        ("The team lunch is off", ("team", "lunch")),
        ("Thursday's team lunch is off", ("thursday's", "team", "lunch")),  # one occurrence: see below
        ("The game's off", ("game",)),  # 's is "is" before "off"
        ("Dinner with the Smiths is off, sadly", ("dinner", "smiths")),  # how or why it is off names nothing
    ],
)
def test_cancelled_words(text: str, words: tuple[str, ...]) -> None:
    assert cancelled_words(text) == words


@pytest.mark.parametrize(
    ("text", "one", "recurring"),
    [
        ("Thursday's team lunch is off", True, False),
        ("Cancel tomorrow's standup", True, False),
        ("今天的站会取消了", True, False),
        ("Team lunch is every Thursday at noon", False, True),
        ("Yoga is at 6pm on Mondays", False, True),
        ("每天早上9点开站会", False, True),
        ("Book a table at Nobu for Saturday's dinner", True, False),
    ],
)
def test_one_occurrence_and_a_schedule_that_recurs(text: str, one: bool, recurring: bool) -> None:
    """One occurrence cancelled leaves a schedule that recurs; a one-off for that day is cancelled."""
    assert (names_one_occurrence(text), recurs(text)) == (one, recurring)


@pytest.mark.parametrize(
    "text",
    [
        "The cancel button is grey",
        "别墅在海边",
        "别忘了发邮件",
        "不用担心",
        "I don't know the answer",
        "Flight cancellations rose in March",
        "The meeting is off the table",
        "The heating is off",
        "The meeting is off-site",
        "The meeting with the client is off site",
        "Dinner with the Smiths is off Main Street",
        "The party is off and on",
    ],
)
def test_no_cancellation(text: str) -> None:
    assert is_cancellation(text) is False and cancelled_words(text) == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Caroline: the trip to Paris is cancelled", False),  # a conversation turn reports, it cancels nothing
        ("The trip to Paris is cancelled", True),
        ("别再发周报", True),  # 别再: a cancellation without a closing 了
        ("别人发周报", False),  # 别 starting another word
        ("不要担心发周报的事", False),
        ("Don't send the report unless Bob asks", False),
        ("Don't deploy before Friday", False),  # a condition: an instruction of its own
        ("We don't need to run the linter before committing anymore", True),
        ("We're not doing yoga anymore", True),
        ("We're not doing yoga", False),  # not today, or not any more: no word says which
        ("I'm not going to the gym anymore", True),
        ("I'm no longer going to be the release manager", False),  # a role given up, not a habit
        ("The team lunch is off", True),
        ("The heating is off", False),  # a state, not an event called off
        ("羽毛球不打了", True),  # an activity given up, said of the activity
        ("我不去了", False),  # of the speaker: not going this time
        ("他不打了", False),
        ("", False),
    ],
)
def test_cancellation_forms(text: str, expected: bool) -> None:
    assert is_cancellation(text) is expected


def test_a_lone_chinese_character_is_a_word_of_its_own() -> None:
    assert cancelled_words("不要发了") == ("发",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Send the minutes to the team", True),
        ("Always cc Dana on invoices", True),
        ("The nightly orders backup runs at 02:00", True),
        ("The Friday retro is at 4pm", True),
        ("The offsite is on Tuesday", True),
        ("The office is at 12 Main Street", False),
        ("每天下午五点给客户发邮件", True),
        ("The minutes were sent to Bob on Monday", False),
        ("The VPN portal moved to https://vpn.acme.dev", False),
        ("don't send the minutes", False),  # a cancellation is never a target
        ("Caroline: always send the report on Fridays", False),  # a conversation turn
        ("会议纪要上周一已经发给张三", False),  # a Chinese report of the past
        ("周五晚上8点和老张吃饭", True),  # a plan with its day and time
        ("昨天晚上8点和老张吃饭了", False),
        ("明天下雨", False),
        ("", False),
    ],
)
def test_is_instruction(text: str, expected: bool) -> None:
    assert is_instruction(text) is expected


# -- the command line (the issue's own reproduction) -------------------------------------------
def test_cli_second_retraction_lands(tmp_path: Path) -> None:
    db = str(tmp_path / "l.db")
    assert ledger_cli("init", "--db", db).returncode == 0
    ledger_cli("remember", "Run the nightly orders backup at 02:00", "--db", db, check=True)
    ledger_cli("remember", "Run the nightly orders backup on the replica at 03:00", "--db", db, check=True)
    first = json.loads(ledger_cli("remember", CANCELLED, "--retracts", "1", "--db", db, "--json", check=True).stdout)
    assert first["memory_id"] == 3 and first["retracted"] == [1]
    second = ledger_cli("remember", CANCELLED, "--retracts", "2", "--db", db, check=True).stdout
    assert "already remembered as #3" in second and "retracted #2" in second
    read = json.loads(ledger_cli("read", "2", "--db", db, "--json", check=True).stdout)["memory"]
    assert read["status"] == "retired" and read["retired_by"] == 3


def test_cli_cancellation_without_ref_lists_candidates(tmp_path: Path) -> None:
    db = str(tmp_path / "l.db")
    assert ledger_cli("init", "--db", db).returncode == 0
    ledger_cli("remember", "Send the invoice to Acme every Friday", "--db", db, check=True)
    ledger_cli("remember", "Send the invoice to Globex every Monday", "--db", db, check=True)
    out = ledger_cli("remember", "Stop sending the invoice", "--db", db, check=True).stdout
    assert "none retracted" in out and "#1 Send the invoice to Acme" in out and "#2 Send the invoice" in out
    done = ledger_cli("remember", "don't send the invoice to Acme", "--db", db, check=True).stdout
    assert "retracted #1" in done


def test_too_many_memories_holding_the_words_retract_nothing() -> None:
    assert MAX_MATCHES == 50
    one = Target(1, "s1", "Send the minutes to the team")
    reports = [Target(i, f"s{i}", "The minutes were sent on Monday") for i in range(2, 51)]
    assert choose([one, *reports])[0] == one  # every memory holding the words was looked at
    target, matched = choose([one, *reports, Target(99, "s99", "The minutes were sent on Friday")])
    assert target is None and matched == [one]  # one more than looked at: it could hide another


def test_a_reservation_is_looked_for_again_as_what_booked_it() -> None:
    """The write path's retry as a rule of its own: "cancel the Luigi's reservation" holds no
    instruction by its words, then finds the booking by "book" (a guide book is no booking)."""
    memories = [
        Target(1, "s1", "Book a table at Luigi's for Friday 7pm"),
        Target(2, "s2", "Buy the Luigi's cook book for Sam"),
    ]
    asked: list[tuple[str, ...]] = []

    def holding(words: tuple[str, ...]) -> list[Target]:
        asked.append(words)
        return [t for t in memories if all(w.rstrip("s").rstrip("'") in t.content.lower() for w in words)]

    target, matched, words = find(cancelled_words("Cancel the Luigi's reservation"), holding)
    assert asked == [("luigi's", "reservation"), ("luigi's", "book")]
    assert target == memories[0] and matched == [memories[0]] and words == ("luigi's", "book")
    assert find(("invoice",), holding) == (None, [], ("invoice",))  # nothing named a reservation: one look


def test_at_most_five_candidates_are_listed() -> None:
    many = [Target(i, f"s{i}", f"Send the invoice to client {i} every Friday") for i in range(1, 8)]
    target, matched = choose(many)
    assert target is None and [t.memory_id for t in matched] == [1, 2, 3, 4, 5]


def test_retracting_a_memory_that_is_already_retired_says_so(app: LedgerApp, tmp_path: Path) -> None:
    first = app.remember("send the weekly minutes to the team on friday")["memory_id"]
    app.retire(first, reason="done", authorization=AUTH_USER)
    again = app.remember("cancel that", ref_id=first, retracts=True)
    assert "retracted" not in again  # nothing was retired by this write
    assert again["notices"] == [f"#{first} was already retired: nothing was retracted (this memory links to it)"]
    live = app.remember("stop the nightly backup job on host b7")["memory_id"]
    assert "notices" not in app.remember("cancel the backup job", ref_id=live, retracts=True)
    db = str(tmp_path / "cli.db")
    assert ledger_cli("--db", db, "remember", "send the weekly minutes on friday").returncode == 0
    assert ledger_cli("--db", db, "retire", "1").returncode == 0
    human = ledger_cli("--db", db, "remember", "cancel that", "--retracts", "1")
    assert human.returncode == 0 and "#1 was already retired: nothing was retracted" in human.stdout


def test_a_cancelled_move_named_by_its_noun_brings_back_what_it_replaced(tmp_path: Path) -> None:
    """ "The move of the launch review is cancelled" retracted nothing (a cancellation found only
    instructions), so Dec 10 stayed current; only ``ref_id`` + ``retracts`` undid the move."""
    from fact_ledger.server.config import Policy, Settings

    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), policy=Policy(settle_changes=True)))
    try:
        held = app.remember(
            "The launch review is on Dec 3", source_type="agent_generated", event_time="2026-11-01T00:00:00Z"
        )
        moved = app.remember(
            "The launch review was moved to Dec 10", source_type="agent_generated", event_time="2026-11-05T00:00:00Z"
        )
        assert moved["superseded"] == [held["memory_id"]]
        cancel = app.remember("The move of the launch review is cancelled", source_type="agent_generated")
        assert cancel["retracted"] == [moved["memory_id"]] and cancel["reinstated"] == [held["memory_id"]]
        assert status(app, held["memory_id"]) == "active"
        plain = app.remember("The launch review report is cancelled", source_type="agent_generated")
        assert "retracted" not in plain  # no change named: a report of one is no instruction
        past = app.remember("We migrated the DB to Postgres 17 last year", source_type="agent_generated")
        assert "retracted" not in app.remember("The migration of the DB is cancelled", source_type="agent_generated")
        assert status(app, past["memory_id"]) == "active"  # history, not a change to call off
        assert "retracted" not in app.remember("The change is cancelled", source_type="agent_generated")
        assert_rebuild_reproduces(app)
    finally:
        app.close()
