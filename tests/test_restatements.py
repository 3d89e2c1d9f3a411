"""Restatements confirm instead of piling up, and a value stated later settles its set
(``ledger.restatement``, policy ``settle_changes``; docs/governance.md "Facts that change")."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.claims import extract_claims
from fact_ledger.ledger.facts import Policy
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.ledger.settlement import CHANGE_HORIZON_S
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

JAN, FEB, APR = "2026-01-10T09:00:00Z", "2026-02-03T10:00:00Z", "2026-04-01T08:00:00Z"
SHIPPED = Policy(settle_changes=True)  # tests/conftest.py pins review mode; these run the shipped default


@pytest.fixture
def app(tmp_path: Path) -> Iterator[LedgerApp]:
    ledger = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test", policy=SHIPPED))
    yield ledger
    ledger.close()


def test_the_shipped_default_settles_changes() -> None:
    assert {f.name: f.default for f in dataclasses.fields(Policy)}["settle_changes"] is True


def active_ids(app: LedgerApp) -> list[int]:
    return [r[0] for r in app.conn.execute("SELECT memory_id FROM memories WHERE status='active' ORDER BY memory_id")]


# -- restatements ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("first", "again"),
    [
        ("The billing API listens on port 8080", "Port for the billing API: 8080"),
        ("The billing API listens on port 8080", "The billing API port is 8080"),
        ("The Apollo budget is $50k", "The Apollo budget is $50,000"),
        ("阿波罗项目的预算是5万元", "阿波罗项目的预算是50000元"),
        ("The search service runs version 2.3.1", "The search service version is v2.3.1"),
        ("支付服务由张伟负责", "支付服务的负责人是张伟"),
        ("The upload limit is 5 MB", "The upload limit is 5 megabytes"),  # it was a change: 5 MB superseded
        ("The sprint length is 2 weeks", "The sprint length is 14 days"),
        ("Bob's manager is Carol", "Bob's boss is Carol"),
        ("The lease lasts 12 months", "The lease lasts 1 year"),  # months and years: one unit
        ("The landlord is Mr. Patel", "Our landlord is Mr. Patel"),  # a title's full stop ends no sentence
        ("Mom's flight lands at 5pm", "Mom's flight arrival time is 5pm"),
    ],
)
def test_a_restatement_confirms_the_memory_that_holds_it(app: LedgerApp, first: str, again: str) -> None:
    held = app.remember(first, event_time=JAN)["memory_id"]
    answer = app.remember(again, event_time=FEB, source_type="document_extracted")
    assert answer["memory_id"] == answer["restatement_of"] == held
    assert answer["support"] == 2 and "duplicate_of" not in answer
    assert active_ids(app) == [held]
    memory = app.read(held)["memory"]
    assert memory["content"] == first  # the memory keeps its words; history keeps the restatement's
    assert memory["support"] == 2 and memory["last_stated"].startswith(FEB[:19])
    events = [e for v in app.history(held)["versions"] for e in v["events"]]
    restated = [e for e in events if e["type"] == "Restated"]
    assert restated and restated[0]["payload"]["content"] == again
    assert restated[0]["payload"]["source_type"] == "document_extracted"


@pytest.mark.parametrize(
    ("first", "other"),
    [
        # another value is a change, not a restatement
        ("The billing API listens on port 8080", "The billing API listens on port 9090"),
        # more said than the fact: nothing it says may be lost
        ("The billing API listens on port 8080", "The billing API listens on port 8080 and Bob owns it since Monday"),
        # the same words about another thing
        ("The billing API listens on port 8080", "The orders API listens on port 8080"),
        # no claim at all: words in common decide nothing
        ("We talked about the billing API over lunch", "We talked about the billing API at lunch today"),
        # where a change went is no value of it; a start is not an end; another date is another slot
        ("We pushed the fix to staging", "We pushed the fix to production"),
        ("The deploy freeze starts on Friday", "The deploy freeze ends on Monday"),
        ("The start date is March 3", "The end date is March 10"),
        ("The release date is June 1", "The release notes date is June 3"),
        ("Since Monday the billing API runs on port 9091", "Since Monday the orders API runs on port 9092"),
        # a condition before the fact is part of it; a change still to come states no value yet
        ("The office door code is 1234", "After 6pm, the office door code is 4321"),
        ("The Pro plan price is $100", "After the discount, the Pro plan price is $80"),
        ("The standup is at 10am", "Starting next week the standup will be at 11am"),
        ("The standup is at 10am", "Starting tomorrow the standup is at 11am"),
        ("The staging API runs on port 8080", "The staging API has moved to port 9091 temporarily"),
        ("The NAS listens on port 445", "The NAS has moved to port 12 on switch B"),
        # "starts on" takes a time; "date" is a filler only of a date
        ("The cleanup script is idempotent", "The cleanup script starts on boot"),
        ("The export format is CSV", "The export date format is DD/MM/YYYY"),
        ("The launch date is TBD", "The launch is private"),
        ("The staging cluster is EKS", "The staging cluster is red"),
        # "new" before many things counts others; a migration still to come states no value yet
        ("The number of users is 1200", "The number of new users is 40"),
        ("The billing service uses Postgres 14", "The billing service will be migrated to Postgres 16"),
        ("The billing service uses Postgres 14", "We haven't migrated the billing service to Postgres 16"),
        # a person who moved lives there; where an office is, is not Bob's home
        ("Bob lives in Boston", "Bob's office has moved to Denver"),
        ("The office is in Boston", "Bob has moved to Denver"),
    ],
)
def test_other_statements_stay_distinct(app: LedgerApp, first: str, other: str) -> None:
    app.remember(first, event_time=JAN)
    answer = app.remember(other, event_time=FEB)
    assert "restatement_of" not in answer
    assert answer["memory_id"] not in (None, 1)


def test_tags_or_a_persons_confirmation_are_stored_not_absorbed(app: LedgerApp) -> None:
    held = app.remember("The billing API listens on port 8080", event_time=JAN)["memory_id"]
    tagged = app.remember("Port for the billing API: 8080", tags=["infra"])
    assert "restatement_of" not in tagged
    confirmed = app.remember("The billing API port is 8080", source_type="user_confirmed", authorization=AUTH_USER)
    assert "restatement_of" not in confirmed and confirmed["memory_id"] != held


def test_a_restatement_of_a_disputed_value_joins_the_set(app: LedgerApp) -> None:
    """Inside an unresolved set the statement's own time must take part in the ranking."""
    old = app.remember("The billing API listens on port 8080", event_time=JAN)["memory_id"]
    new = app.remember("The billing API listens on port 9090", event_time=JAN.replace("09:00", "09:20"))
    assert new["conflicts"], "within the change horizon: a disagreement, left open"
    again = app.remember("Port for the billing API: 8080", event_time=APR)
    assert "restatement_of" not in again and again["memory_id"] != old
    assert again["superseded"] == [new["memory_id"]]  # April's 8080 settles the set: 9090 was a change back
    assert app.read(old)["memory"]["status"] == "active"


def test_rebuild_reproduces_restatements(app: LedgerApp) -> None:
    held = app.remember("The billing API listens on port 8080", event_time=JAN)["memory_id"]
    app.remember("Port for the billing API: 8080", event_time=FEB)
    incremental = app.runner.checksums()
    app.rebuild()
    assert app.runner.checksums() == incremental
    assert app.read(held)["memory"]["support"] == 2


# -- a later value settles its set -------------------------------------------------------------
def test_a_value_stated_later_supersedes_the_older_one(app: LedgerApp) -> None:
    old = app.remember("The staging API listens on port 8080", event_time=JAN)["memory_id"]
    new = app.remember("The staging API moved to port 9090", event_time=APR)
    assert new["superseded"] == [old]
    assert active_ids(app) == [new["memory_id"]]
    late = app.remember("The staging API port is 8081", event_time=FEB)  # arrives late, older
    assert late["status"] == "superseded"
    assert active_ids(app) == [new["memory_id"]]
    found = app.find("staging API port")["results"]
    assert found[0]["memory_id"] == new["memory_id"]
    assert all(r["memory_id"] in (new["memory_id"],) for r in found)


@pytest.mark.parametrize(
    ("said", "changed"),
    [
        ("张三的经理是李四", "张三现在向王五汇报"),
        ("张三的经理是李四", "张三的上级是王五"),
        ("Bob's manager is Carol", "Bob's boss is now Erin"),
        ("Bob's manager is Carol", "Bob现在的领导是Erin"),
        ("The team lead is Carol", "Erin is the new team lead"),
        ("The disk quota is 1 gigabyte", "The disk quota is 1 terabyte"),
        ("Our Postgres version is 16", "We upgraded Postgres to 17"),
        ("Postgres版本是16", "我们把Postgres升级到了17"),
        # a time said before the fact: the key took "since monday", "as of today", "from"
        ("The staging API runs on port 8080", "Since Monday the staging API runs on port 9091"),
        ("The staging API runs on port 8080", "Since Monday, the staging API runs on port 9091"),
        ("The staging API runs on port 8080", "As of today the staging API runs on port 9091"),
        ("The staging API runs on port 8080", "From now on the staging API runs on port 9091"),
        ("The staging API runs on port 8080", "Going forward, the staging API runs on port 9091"),
        # the verb read as another attribute ("now runs on" was "uses"), or no claim at all
        ("The staging API runs on port 8080", "The staging API now runs on port 9091"),
        ("The staging API runs on port 8080", "The staging API has moved to port 9091"),
        ("The staging API runs on port 8080", "The staging API now listens on 9091"),
        ("Our Postgres version is 16", "We're on Postgres 17 now"),
        ("The deploy freeze starts on Friday", "The deploy freeze now starts on Monday"),
        # "the launch date" and "the launch" are one slot, "ownership" is the owner
        ("The launch date is March 3", "The launch slipped to March 10"),
        ("The launch date is March 3", "The launch was postponed to March 10"),
        ("The launch date is March 3", "We pushed the launch to March 10"),
        ("The launch date is March 3", "Launch is now March 10"),
        ("The billing service owner is Alice", "Ownership of the billing service moved to Bob"),
        # a value that ends like a participle ("string" as "starting") was none
        ("The id field type is integer", "The id field type is string"),
        # a correction's preamble, and a delay
        ("The standup is at 10am", "Scrap that, the standup is at 10:30am"),
        ("The standup is at 10am", "Never mind, the standup is at 10:30am"),
        ("The launch date is March 3", "We delayed the launch to March 10"),
        ("发布日期是3月3日", "发布推迟到3月10日"),
        # "new" before one thing is its replacement; a migration is what a thing runs on now; a
        # value raised, lowered or swapped in Chinese, and "我们把…" before the thing
        ("Alice's phone number is 555-0100", "Alice has a new phone number: 555-0199"),
        ("The budget is $50k", "The updated budget is $80k"),
        ("The billing service uses Postgres 14", "We migrated the billing service to Postgres 16"),
        ("The billing service uses MySQL", "The billing service was migrated from MySQL to Postgres 16"),
        ("Our Postgres version is 16", "We migrated to Postgres 17"),
        ("项目预算是5万元", "项目预算提高到8万元了"),
        ("内存上限是8GB", "内存上限从8GB降到4GB"),
        ("数据库是PostgreSQL", "数据库换成了MySQL"),
        ("会议时间是下午2点", "我们把会议时间调到了下午3点"),
        # a setting named as an identifier, set or raised in a headline's words
        ("Max connections: 100", "max_connections was bumped to 200"),
        ("Max connections: 100", "I set max_connections to 200"),
        ("The CI timeout is 30 minutes", "CI timeout set to 45 min"),
        ("The rate limit is 100 requests per minute", "Rate limit raised to 500 requests per minute"),
        # where a place of work is: a street address is no number, "moved" is where it is now
        ("The office is at 12 Main Street", "We moved offices to 40 Elm Street"),
        ("The office is in Boston", "The office moved to Denver"),
        ("The office is in Boston", "The office has moved to Denver"),
        ("Our bank is Wells Fargo", "We switched banks to Chase"),
        # who is on call, said of the person or of the role, this week or now
        ("Carol is the on-call engineer this week", "Dave is on call this week"),
        ("The on-call engineer is Carol", "Dave is now on call"),
        ("The on-call person is Carol", "Dave is the on-call engineer"),
        # a date in May ("may" read as a hedge), a rename to a word ending in -ing, a desk or a room
        # moved to ("4B" read as 4 bytes), ends, expiry, duration, a rescheduled date, a title, a role
        ("Carol's birthday is May 3", "Carol's birthday is May 4"),
        ("The launch is 3 May", "The launch is June 3"),
        ("Our Slack channel is #eng-general", "We renamed the Slack channel to #engineering"),
        ("Jenny's desk is 4B", "Jenny moved to desk 7A"),
        ("The meeting room is Everest", "The meeting moved to room Kilimanjaro"),
        ("The sprint ends on Friday", "The sprint now ends on Monday"),
        ("The API key expires on March 1", "The API key now expires on April 1"),
        ("The trial lasts 14 days", "The trial now lasts 30 days"),
        ("The release is scheduled for June 1", "The release has been rescheduled for June 15"),
        ("Bob's title is Senior Engineer", "Bob got promoted to Staff Engineer"),
        ("Tom is the project lead", "Sarah took over as project lead"),
        ("Tom is the project lead", "Sarah replaced Tom as project lead"),
        # a relation that names a slot ("costs" a price, "ends" an end, "expires", "lasts"), a
        # count, a departure, a time delayed in a headline, a chief
        ("The price of the Pro plan is $20/month", "Pro plan now costs $25/month"),
        ("The Pro plan costs $20 a month", "We raised the Pro plan price to $25 a month"),
        ("The sprint ends on Friday", "The sprint end date is now Monday"),
        ("The API key expiry date is March 1", "The API key now expires on April 1"),
        ("The trial length is 14 days", "The trial now lasts 30 days"),
        ("The warranty lasts 2 years", "The warranty now lasts 36 months"),
        ("The office address is 1200 17th Street", "The office moved to 40 Elm Street"),
        ("The meeting room is Everest", "We moved the meeting to Room Kilimanjaro"),
        ("The cluster has 3 nodes", "We scaled the cluster to 5 nodes"),
        ("The cluster has 3 nodes", "The cluster now has 5 nodes"),
        ("The team has 8 engineers", "The team grew to 10 engineers"),
        ("My flight departs at 9:15am", "My flight now departs at 11:40am"),
        ("My flight is at 9:15am", "Flight delayed to 11:40am"),
        ("Our CEO is Jane Doe", "John Smith is our new CEO"),
        # Chinese said without 是: since today, a new number, a migration, a count
        ("站会是每天早上9点半", "从今天起站会改成10点"),
        ("张三的手机号是13800000000", "张三换了新手机号13900000000"),
        ("数据库用的是MySQL", "数据库迁移到了PostgreSQL"),
        ("团队有8个人", "团队扩大到12个人"),
        # "new" before a one-value attribute; a named someone's own value changed; extended, scaled,
        # located; 调大到, 削减到, 在每天…; a setting named as an identifier
        ("The CEO is Dana", "The new CEO is Evan"),
        ("Bob's manager is Carol", "Bob's new manager is Dan"),
        ("Alice's phone number is 555-0100", "Alice changed her phone number to 555-0199"),
        ("The Acme office is in Austin", "Acme relocated its office to Denver"),
        ("The deadline for the report is Friday", "The report deadline was extended to Monday"),
        ("The replica count is 3", "We scaled the replica count to 5"),
        ("The office is in Austin", "Our office is located in Denver"),
        ("最大连接数是100", "最大连接数调大到200"),
        ("站会在每天9点半", "站会改到10点了"),
        ("LOG_LEVEL is set to info", "LOG_LEVEL is now set to debug"),
        ("Bob's title is Senior Engineer", "Bob got promoted to staff engineer"),
        ("Tom is the project lead", "Sarah is taking over as project lead"),
        ("The team has 8 people", "The team grew to 12 people"),
        ("Acme's HQ is in Boston", "Acme moved its headquarters to Denver"),
        # "team" and "daily" before a standup; "is $X" and "went up to $X" of a thing are its price
        # (an amount named, as a budget, keeps its own slot); 涨价到 is the price; extended to a
        # length is how long it lasts; a journey "is at" / "was delayed to" when it departs; "lives
        # at" a street address; a new holder introduced
        ("Our team standup is at 9:30am", "The standup moved to 10am"),
        ("The daily standup is at 9:30", "The standup moved to 10am"),
        ("团队站会是9点半", "站会改到10点了"),
        ("The Pro plan costs $20 per month", "The Pro plan is now $25/month"),
        ("The ticket price is $200", "The ticket went up to $250"),
        ("项目预算是5万", "项目预算为8万元"),
        ("会员价格是20元", "会员涨价到30元"),
        ("The trial lasts 14 days", "We extended the trial to 30 days"),
        ("The CI timeout is 30 minutes", "We extended the CI timeout to 60 minutes"),
        ("My flight to Paris is at 9am", "My flight to Paris was delayed to 11am"),
        ("The flight departs at 7am", "The flight was delayed to 9am"),
        ("Alice lives at 12 Main Street", "Alice moved to 500 Market St"),
        ("The CEO is Alice", "Meet our new CEO, Evan"),
        ("The interim CTO is Carol", "Bob is the interim CTO"),
        # a price change said with when it changed, or from what; a price in another written currency
        ("The Pro plan is $20/month", "The Pro plan went up to $25/month last week"),
        ("The hotel costs $180 a night", "The hotel costs $200 a night as of March"),
        ("The Pro plan costs $20/month", "The Pro plan costs $25/month from now on"),
        ("The ticket is $250", "The ticket went up to $300 from $250"),
        ("Our therapist is $150 a session", "Our therapist is $180 a session starting in March"),
        ("门票是100元", "门票涨价到120元"),
        ("The ticket is £20", "The ticket is 25 pounds"),
        ("The Pro plan is 25€/month", "The Pro plan is €30/month"),
        # a flight's time said of one day
        ("My flight is at 7am", "My flight is at 9am tomorrow"),
        ("My flight is on Friday at 9am", "My flight is on Saturday at 10am"),
        # what a place, a plan or a service allows, supports or requires: yes, then no
        ("The office allows dogs", "The office does not allow dogs"),
        ("Deploys require approval from Bob", "Deploys no longer require approval from Bob"),
        ("The API supports XML", "The API doesn't support XML anymore"),
        ("办公室允许带狗", "办公室不允许带狗"),
        # a length said with "is", then extended
        ("The trial is 14 days", "We extended the trial to 30 days"),
        ("The lease is 12 months", "The lease was extended to 2 years"),
        # how many a plan or a place lets in is one count, whatever the number
        ("The plan allows 10 users", "The plan allows 5 users"),
        ("The venue accepts 150 guests", "The venue now accepts up to 200 guests"),
        ("The Pro plan supports 3 seats", "The Pro plan supports 10 seats"),
        # a name after a title ("Dr." ended the sentence: every doctor was "dr"), an arrival, what
        # someone charges, a holder replaced
        ("Our doctor is Dr. Lee", "Our doctor is Dr. Gomez"),
        ("The landlord is Mr. Patel", "The landlord is Mr. Smith"),
        ("Mom's flight lands at 5pm", "Mom's flight now lands at 7pm"),
        ("The babysitter charges $18 an hour", "The babysitter now charges $20 an hour"),
        ("Daniel is our account manager", "Daniel was replaced by Aisha as our account manager"),
        ("The gym opens at 6am", "The gym now opens at 5am"),
        # a time brought earlier
        ("The recital is at 6pm", "The recital was moved up to 5pm"),
        ("The launch date is March 3", "The launch was brought forward to March 1"),
        # an event's place, said "is in/at" or moved to; a role's new holder named by what it is of; when
        # someone comes; when a group meets
        ("The team offsite is in Denver", "The team offsite moved to Austin"),
        ("Book club is at Jenna's house", "Book club moved to Mia's house"),
        ("Kim is the project manager", "Kim left; the new project manager is Jordan"),
        ("The dog walker comes at noon", "The dog walker now comes at 1pm"),
        ("The movers are coming on Tuesday", "The movers are coming on Wednesday instead"),
        ("The book club meets on the first Monday", "The book club now meets on the second Tuesday"),
        ("Game night is at Tom's place", "Game night moved to Ana's place"),
        # a subscription's price is the price of what it is to; a coach, a treasurer, a landlord replaced
        ("The Spotify subscription costs $10.99 a month", "Spotify now costs $11.99 a month"),
        ("The coach is Mr. Jones", "The new coach is Ms. Rivera"),
        ("Sarah is the treasurer", "The new treasurer is Dave"),
        ("我们的房东是李先生", "新房东是王女士"),
        ("老王是我们的房东", "新房东是李先生"),
        # a Chinese period said before the amount, or after it with / or 一个
        ("爱奇艺会员是每月25元", "爱奇艺会员涨价到每月30元"),
        ("房租是3000元一个月", "房租涨到了每月3200元"),
        ("爱奇艺会员是25元/月", "爱奇艺会员涨价到每月30元"),
        # the room or the gate something is in, said "is in", then moved
        ("The meeting is in Room 4", "The meeting moved to Room 7"),
        ("My flight is at gate B12", "My flight moved to gate C3"),
        # "is" contracted before a time; a plan or a premium named by its service; 新 before a role of two words
        ("The standup is at 9am", "Standup's at 9:30 now"),
        ("The Hulu plan costs $7.99 a month", "Hulu now costs $9.99 a month"),
        ("The YouTube Premium subscription is $13.99 a month", "YouTube Premium is now $15.99 a month"),
        ("我们的物业经理是张姐", "新物业经理是李哥"),
        ("Bob's manager's manager is Dave", "Bob's skip-level manager is Erin"),
        ("The office is on the 3rd floor", "The office is now on the 5th floor"),
        ("The launch is on June 3", "The launch is on June 10"),
        ("The launch is in March", "The launch is in April"),
        ("The manual is in English", "The manual is in French"),
        # a status, said "on" or "in": one slot, apart from where the thing is
        ("The project is on hold", "The project is in progress"),
        ("The library is on holiday hours", "The library is on regular hours"),
        ("The printer is in maintenance mode", "The printer is in maintenance"),
        # a day of the month, alone or against a date
        ("The board meeting is on the 15th", "The board meeting was moved to the 22nd"),
        ("The launch is on June 3", "The launch moved to the 10th"),
        ("My birthday party is on the 3rd", "My birthday party moved to the 4th"),
        # an event named by its initials (no one's home); a status said with an adjective
        ("The AGM is in London", "The AGM moved to Manchester"),
        ("The QBR is on the 10th", "The QBR moved to the 17th"),
        ("The house is on the market", "The house is in escrow"),
        ("The app is in public beta", "The app is in production"),
    ],
)
def test_a_change_said_in_other_words_supersedes_the_older_value(app: LedgerApp, said: str, changed: str) -> None:
    """Each pair stayed side by side, both active: the new way of saying it was no claim of the
    same fact (or, for units spelled out, no unit), so ``find`` could answer the old value first."""
    old = app.remember(said, event_time=JAN)["memory_id"]
    new = app.remember(changed, event_time=APR)
    assert new["superseded"] == [old]
    assert active_ids(app) == [new["memory_id"]]


def test_find_answers_the_value_a_change_in_other_words_set(app: LedgerApp) -> None:
    """ "now runs on port 9091" was the attribute "uses": no claim set, both active, and ``find``
    answered the old port first."""
    old = app.remember("The staging API runs on port 8080", event_time=JAN)["memory_id"]
    new = app.remember("The staging API now runs on port 9091", event_time=APR)
    assert new["superseded"] == [old]
    assert [r["memory_id"] for r in app.find("staging API port")["results"]] == [new["memory_id"]]


def test_find_answers_a_migration_over_the_values_before_it_even_one_arriving_late(app: LedgerApp) -> None:
    """ "We migrated the billing service to Postgres 16" stated no claim: Postgres 14 and a late
    note of Postgres 13 formed a set without it, and ``find`` answered Postgres 14 first."""
    app.remember("The billing service uses Postgres 14", event_time=JAN)
    moved = app.remember("We migrated the billing service to Postgres 16", event_time=APR)["memory_id"]
    late = app.remember("The billing service uses Postgres 13", event_time="2025-06-01T00:00:00Z")
    assert late["status"] == "superseded" and late["conflicts"][0]["leader_id"] == moved
    assert active_ids(app) == [moved]
    assert app.find("billing service Postgres")["results"][0]["memory_id"] == moved


@pytest.mark.parametrize(
    ("first", "other"),
    [
        # next week's on-call is another slot; an office's move is not where its staff live
        ("Carol is on call this week", "Dave is on call next week"),
        ("Bob lives in Boston", "Bob's office has moved to Denver"),
        ("The number of users is 1200", "The number of new users is 40"),
        # when it starts is not when it ends; a hedged date in May states none
        ("The deploy freeze starts on Friday", "The deploy freeze ends on Monday"),
        ("The launch is June 3", "We may launch on May 10"),
        # a count of other things; another plan's price
        ("The cluster has 3 nodes", "The cluster has 12 cores"),
        ("The Pro plan costs $20 a month", "The Team plan costs $50 a month"),
        # when someone starts is not when they leave; going up to a place is no amount
        ("Bob starts at 9am", "Bob leaves at 5pm"),
        ("Bob is on the roof", "Bob went up to the attic"),
        # a price is no other number of its thing; "new" before another kind of thing; what is counted
        ("The flight costs $450", "The flight is 6 hours long"),
        ("The laptop costs $1,200", "The laptop is 14 inches"),
        ("The user limit is 1000", "The new user limit is 100"),
        ("The office has 25 desks", "The new office has 40 desks"),
        ("The release has 12 bugs", "The latest release has 3 bugs"),
        ("团队有8个人", "团队有2个实习生"),
        ("公司有200个员工", "公司有3个办公室"),
        # a migration to what is no product; an office's move that names no place, or is a plan;
        # a hotel's address is not its name; a person's leaving time; a temporary lead
        ("We migrated billing to Postgres", "We migrated billing to the new team"),
        ("The office is in Denver", "We moved offices to save money"),
        ("The office is in Denver", "The office moved to hybrid"),
        ("The office is in Austin", "The office will move to Denver next year"),
        ("The hotel is the Hilton", "The hotel address is 5 Main St"),
        ("Bob leaves at 5pm", "Bob leaves at 3pm today"),
        ("Tom is the lead", "Alice took over as lead for now"),
        # a rate's period is part of its slot
        ("The Pro plan costs $20 per month", "The Pro plan costs $200 per year"),
        ("The Pro plan costs $20 per month", "The Pro plan costs $20 per user"),
        ("The rate limit is 100 requests per minute", "The rate limit is 5000 requests per day"),
        # a meeting run over is no new time; "new" of another thing; a price or a duration with a
        # condition; a departure of one schedule among others; a routine's time
        ("The meeting is at 3pm", "The meeting was extended to 4pm"),
        ("The lease is 12 months", "The lease was extended to 2027"),
        ("The server's IP is 10.0.0.4", "The new server IP is 10.0.0.5"),
        ("Our client's contact is John", "Our new client's contact is Maria"),
        ("The contractor's rate is $80 per hour", "A new contractor's rate is $90 per hour"),
        ("The gym costs $50 a month for students", "The gym costs $500 a year for students"),
        ("The ticket costs $50 online", "The ticket costs $60 at the door"),
        ("The battery lasts 10 hours", "The battery lasts 3 days on standby"),
        ("The train leaves at 9:10", "The train leaves at 9:40 on Sundays"),
        ("The lecture ends at 4pm", "The lecture ends at 5pm on Thursdays"),
        ("Tom is the project lead", "Sarah is taking over as project lead next month"),
        ("妈妈在每天早上8点吃药", "妈妈在每天晚上9点吃药"),
        ("张总在周五出差", "张总在周一开会"),
        ("Alice's title is Senior Engineer", "Alice got promoted to Level 5"),
        ("She changed her phone number to 555-0123", "She changed her phone number to 555-0199"),
        # another standup; another amount of the thing, another plan, a condition after the price;
        # a length extended for some only, a count; arriving is not departing, another flight; a
        # city and a street address; one of many engineers; a stand-in beside the holder
        ("The team standup is at 9:30", "The leadership standup is at 11am"),
        ("The ticket price is $200", "The ticket fee is $15"),
        ("The hotel is $200 a night", "The hotel deposit is $100"),
        ("The Pro plan is $25/month", "The Team plan is $50/month"),
        ("The room is $180 a night", "The room is $220 a night on weekends"),
        ("Tickets are $50 online", "Tickets are $60 at the door"),
        ("Tickets are $50 for adults", "Tickets are $25 for kids"),
        ("The ticket went up to $250", "The ticket count went up to 250"),
        ("My flight to Paris departs at 9am", "My flight to Rome departs at 11am"),
        ("The lunch break is at noon", "The lunch break was extended to 1 hour"),
        ("会员价格是20元", "会员费是30元"),
        ("The trial lasts 14 days", "We extended the trial to 30 days for enterprise customers"),
        ("The trial lasts 14 days", "We extended the trial to 30 users"),
        ("The flight departs at 7am", "The flight arrival time is 11am"),
        ("The flight departs at 7am", "The return flight departs at 6pm"),
        ("The train leaves at 9:10", "The train is at 9:40 on Sundays"),
        ("Alice lives in Boston", "Alice lives at 12 Main Street"),
        ("The CEO is Alice", "Meet our new engineer, Bob"),
        ("Alice is the CTO", "Bob is the interim CTO"),
        ("Alice is the CTO", "Bob is the acting CTO"),
        ("Tom is the lead", "Alice took over as lead while Bob is on leave"),
        ("Tom is the lead", "Alice is the lead while Bob is on leave"),
        # a stand-in names no holder; a role a team has several of; a price from another place
        ("Bob is Alice's backup", "Bob is the team lead while Alice is on leave"),
        ("Alice is the CTO", "Bob is the CTO while Alice is OOO"),
        ("The release manager is Alice", "The release manager is Bob while Alice is away"),
        ("Welcome our new manager, Bob", "Welcome our new manager, Carol"),
        ("Tom is our account manager", "Please welcome our new account manager, Priya"),
        ("The flight costs $450 from JFK", "The flight costs $500 from LAX"),
        ("The office allows dogs", "The office does not allow cats"),
        ("Our policy requires two approvals", "Our policy does not require two approvals for hotfixes"),
        ("The API supports JSON", "The API doesn't support XML"),
        ("The lease is 12 months", "The lease renewal is 3 months away"),
        ("The trial is 14 days", "The CI timeout is 30 days"),
        # a count of other things let in, of another plan, or what a plan has; another object; a count
        # with more said after it
        ("The plan allows 10 users", "The plan allows 10 admins"),
        ("The Pro plan allows 10 users", "The Team plan allows 50 users"),
        ("The plan allows 10 users", "The plan has 3 users"),
        ("The office allows dogs", "The office allows cats"),
        ("The plan allows 10 users", "The plan allows 5 users per team"),
        ("Our policy requires two approvals", "Our policy requires two approvals for hotfixes"),
        # one occurrence called off is no value of the schedule; when it lands is not when it
        # leaves; what another charges, or a charge for something; another role's holder
        ("The team lunch is every Friday at noon", "The team lunch is off this Friday"),
        ("The team lunch is every Friday at noon", "The team lunch is off tonight"),
        ("The flight departs at 7am", "The flight lands at 11am"),
        ("The babysitter charges $18 an hour", "The tutor charges $40 an hour"),
        ("The hotel charges $200 a night", "The hotel charges $30 for parking"),
        ("The landlord is Mr. Patel", "The plumber is Mr. Smith"),
        ("The train arrives at 6:10pm", "The train arrives at 7:10pm on weekends"),
        ("The gym opens at 6am", "The gym opens at 8am on Sundays"),
        ("The gym opens at 6am", "The gym closes at 10pm"),
        # an event's place is not when it is, nor another event's place, nor a team's; a move still
        # to come, or to no named place; another role; someone's one day; a person's habit; where a
        # club meets is not when
        ("Book club is at Jenna's house", "Book club is at 7pm"),
        ("The team offsite is in Denver", "The team is in Austin"),
        ("Dinner is at Luigi's", "Lunch is at Nobu"),
        ("The team offsite is in Denver", "The team offsite will move to Austin"),
        ("The project manager is Kim", "The new office manager is Jordan"),
        ("The dog walker comes at noon", "The dog walker comes at 1pm on Fridays"),
        ("The dog walker comes at noon", "The cleaner comes at 1pm"),
        ("Bob comes at 5pm", "Bob comes at 6pm today"),
        ("The book club meets on Tuesdays", "The book club meets at the library"),
        ("The chess club meets on Mondays", "The book club meets on Tuesdays"),
        # what an event is in, when it is not a place ("the backyard" is no name for "The …" before it)
        ("The meeting is in Room 4", "The meeting is in progress"),
        ("The conference is in Lisbon", "The conference is in English"),
        ("The offsite is in Denver", "The offsite is in two weeks"),
        ("The party moved to the backyard", "The party is at Jenna's house"),
        ("The gym membership is $40 a month", "The gym day pass is $15"),
        ("新加坡办公室的经理是小王", "办公室的经理是小李"),
        # someone's kin comes as a habit; the days someone comes are several; in a month, a quarter,
        # weeks is when, not where
        ("My mom comes on Sundays", "My mom comes on Mondays"),
        ("The cleaner comes on Mondays", "The cleaner comes on Thursdays"),
        ("The wedding is in Napa", "The wedding is in June"),
        ("The conference is in Lisbon", "The conference is in Q3"),
        ("The offsite is in Denver", "The offsite is in March"),
        # another period is another price
        ("房租是每月3000元", "房租是每年36000元"),
        ("爱奇艺会员是每月25元", "爱奇艺会员是每年248元"),
        # a room is not a room's name, nor where another thing is
        ("The meeting room is Everest", "The meeting is in Room 4"),
        ("The meeting is in Room 4", "The workshop is in Room 7"),
        ("The meeting is in Room 4", "The meeting is on floor 3"),
        # a plan or a subscription named by nothing else; another plan of the service; 新加坡 is no "new"
        ("The plan costs $20 a month", "The subscription costs $10 a month"),
        ("The subscription is $10 a month", "The membership is $40 a month"),
        ("Spotify costs $10.99 a month", "The Spotify family plan costs $16.99 a month"),
        ("经理是小王", "新加坡经理是小李"),
        ("The board meeting is in Denver", "The board meeting was moved to the 22nd"),  # a day, no place
        ("The festival is in Austin", "The festival is in its 10th year"),
        ("The trip is in May", "The trip is in Marseille"),  # a word begun as a month is none
        ("The office is in March", "The office is in Mayfair"),
        # someone's that is no place, a half of the year; a manager's manager; a floor and a street;
        # what a thing that is no event is "in" when it says when or in what
        ("The offsite is in Napa", "The offsite is in Bob's hands"),
        ("The offsite is in Napa", "The offsite is at Bob's discretion"),
        ("The offsite is in Napa", "The offsite is in H2"),
        ("Bob's manager is Carol", "Bob's manager's manager is Dave"),
        ("张三的经理是李四", "张三的经理的经理是王五"),
        ("The office is on the 3rd floor", "The office is on Main Street"),
        ("The trip is in May", "The trip is in Japan"),
        ("The sale is in March", "The sale is in store only"),
        ("The manual is in the drawer", "The manual is in English"),
        ("The tournament is in Dallas", "The tournament is in round 2"),
        ("The concert is in Central Park", "The concert is in D minor"),
        # a status or a passing state is not where a thing is; a shift or a department is not a home,
        # "lives in fear" no home
        ("The library is on Elm Street", "The library is on holiday hours"),
        ("The office is in Boston", "The office is in chaos"),
        ("The office is in Boston", "The office is in lockdown"),
        ("The cafe is on Elm Street", "The cafe is on strike"),
        ("The server is in us-east-1", "The server is in maintenance"),
        ("The server is in us-east-1", "The server is in production"),
        ("Bob is on the platform team", "Bob is on vacation"),
        ("Bob moved to Denver", "Bob moved to the night shift"),
        ("Bob moved to Denver", "Bob moved to Product"),
        ("Bob lives in Denver", "Bob lives in fear of spiders"),
        # an event moved to no place named; an event named in capitals is no one (its home)
        ("The HOA meeting moved to the library", "The HOA meeting moved to the afternoon"),
        ("The BBQ moved to Austin", "The BBQ moved to the Jones'"),
        # a status said with an adjective or an adverb, or one more word of standing (escrow, transit, stock,
        # on the market, on mute); leave of some kind is a passing state
        ("The app is in the App Store", "The app is in public beta"),
        ("The project is on GitHub", "The project is on hold indefinitely"),
        ("The house is in Austin", "The house is in escrow"),
        ("The package is in the mailroom", "The package is in transit"),
        ("The product is in the warehouse", "The product is in stock"),
        ("The house is on Elm Street", "The house is on the market"),
        ("The phone is on the desk", "The phone is on mute"),
        ("Bob is on the platform team", "Bob is on paternity leave"),
        # a move at work to a floor, a desk, an office, a project, a class, a grade or a department
        # named in more words is not a move of home; nor is a move to a day; a rank is no day
        ("Sam moved to Chicago", "Sam moved to the 5th floor"),
        ("Sam moved to Chicago", "Sam moved to the front desk"),
        ("Sam moved to Osaka", "Sam moved to the Tokyo office"),
        ("Sam moved to Chicago", "Sam moved to the billing project"),
        ("Sam moved to Chicago", "Sam moved to the evening class"),
        ("Sam moved to Chicago", "Sam moved to customer success"),
        ("Sam moved to Chicago", "Sam moved to engineering management"),
        ("Sam moved to Chicago", "Sam moved to DevOps"),
        ("Sam moved to Chicago", "Sam moved to the 3rd"),
        ("My daughter moved to Chicago", "My daughter moved to 2nd grade"),
        ("Our team meets on the 5th", "Our team is 2nd"),
        # what someone lives in that is no place, said with a word before it
        ("Bob lives in Boston", "Bob lives in constant fear"),
        ("Bob lives in Boston", "Bob lives in the moment"),
        # a team's move to a way of working names no place
        ("The team moved to Denver", "The team moved to two-week sprints"),
        ("The team moved to Denver", "The team moved to kanban"),
    ],
)
def test_statements_of_other_slots_form_no_set(app: LedgerApp, first: str, other: str) -> None:
    app.remember(first, event_time=JAN)
    answer = app.remember(other, event_time=FEB)
    assert answer["conflicts"] == [] and "superseded" not in answer
    assert len(active_ids(app)) == 2


@pytest.mark.parametrize(
    "said",
    [
        "We pushed the fix to production",
        "The team moved to port 5432",
        "Since Monday I feel sick",
        "As of now nothing changed",
        "Today is Friday",
        "The billing service is being migrated to Postgres 16",
        "The billing service is going to be migrated to Postgres 16",
        "We migrated it to Postgres 16",
        "We set up the server to run nightly",
        "We set out to build a better product",
        "The platform team is on call",
        "We may launch on June 3",
        "Bob might get promoted to Staff Engineer",
        "We have 3 nodes",
        "I have 2 kids",
        "The cluster doesn't have 3 nodes",
        "我换了新手机",
        "我们有3个人",
        "团队没有8个人",
        "Alice was promoted to the London office",
        "May 3 is the deadline",
        "数据库迁移到了新机房",
        "支付服务的端口将改成9090",
        "支付服务的端口是9090吗",
        "Alice lives at home",
        "Meet our new engineer, Bob",
        "Alice took over as lead while Bob is on leave",
        "The meeting was extended to 4pm",
        # "support" the noun; what lets a person do something is no rule of a place
        "Thanks for the support and encouragement",
        "Having a good support system is key",
        "It's been a big part of my life and allows me to be myself",
        # one occurrence called off; a person's arrival (a habit, or one day's); a charge of no amount;
        # a stand-in
        "The team lunch is off tonight",
        "The standup is off this Friday",
        "Bob arrives at 9am",
        "The station charges EVs",
        "Bob charges his phone at night",
        "Tom was replaced by Sarah as project lead while Bob is on leave",
        "Bob was moved up to the senior team",
        # what an event is in when it is no place; where a club meets; days someone may come, kin's visits
        "The festival is in its 10th year",
        "The meeting is in progress",
        "The book club meets at the library",
        "The cleaner comes on Mondays",
        "My mom comes on Sundays",
        # a passing state something is in; a move at work; no home
        "The office is in chaos",
        "The store is on sale",
        "The team is on vacation",
        "The office is on fire",
        "Bob moved to the night shift",
        "Bob moved to Sales",
        "Bob moved to part-time",
        "Bob lives in denial",
        "The HOA meeting moved to the library",
        "The party moved to the 45th",
        "The BBQ moved to the Jones'",
    ],
)
def test_changes_of_no_slot_state_no_claim(said: str) -> None:
    assert extract_claims(said) == ()


def test_the_day_of_the_month_a_group_meets_on_is_one_value() -> None:
    """ "the first Monday of each month" is "the first Monday": the same day, no other value."""
    (short,) = extract_claims("The book club meets on the first Monday")
    (long,) = extract_claims("The book club meets on the first Monday of each month")
    assert short.key == long.key and short.value_norm == long.value_norm == "first monday"


def test_values_within_the_horizon_are_a_disagreement(app: LedgerApp) -> None:
    app.remember("The staging API listens on port 8080", event_time=JAN)
    soon = JAN.replace("09:00", "09:59")  # 59 minutes later: under the horizon
    assert CHANGE_HORIZON_S == 3600
    answer = app.remember("The staging API listens on port 9090", event_time=soon)
    assert answer["conflicts"] and "superseded" not in answer
    assert len(active_ids(app)) == 2


def test_guarded_members_and_the_switch_leave_sets_open(tmp_path) -> None:
    off = LedgerApp(Settings(db=str(tmp_path / "l.db"), policy=Policy(settle_changes=False)))
    try:
        off.remember("The staging API listens on port 8080", event_time=JAN)
        answer = off.remember("The staging API moved to port 9090", event_time=APR)
        assert answer["conflicts"] and "superseded" not in answer
    finally:
        off.close()
    on = LedgerApp(Settings(db=str(tmp_path / "m.db"), policy=SHIPPED))
    try:
        on.remember("The staging API listens on port 8080", event_time=JAN, source_type="user_confirmed")
        answer = on.remember("The staging API moved to port 9090", event_time=APR)
        assert "superseded" not in answer and len(active_ids(on)) == 2  # a user_confirmed label waits for a person
    finally:
        on.close()


# -- as a person and an agent see it ----------------------------------------------------------
def test_the_cli_says_restates_and_supersedes_with_the_shipped_default(tmp_path: Path) -> None:
    """A ``ledger`` process without tests/conftest.py's pin runs the shipped policy."""
    db = str(tmp_path / "cli.db")
    env = {k: v for k, v in os.environ.items() if k != "LEDGER_POLICY_SETTLE_CHANGES"}

    def cli(*args: str) -> str:  # what an agent's document pipeline writes (a person's word is locked)
        done = subprocess.run(
            [sys.executable, "-m", "fact_ledger.server", "--db", db, *args, "--source-type", "document_extracted"],
            capture_output=True, text=True, env=env, timeout=60, check=True,
        )  # fmt: skip
        return done.stdout

    assert "remembered #1" in cli("remember", "The staging API listens on port 8080", "--event-time", JAN)
    assert "restates #1" in cli("remember", "Port for the staging API: 8080", "--event-time", FEB)
    out = cli("remember", "The staging API moved to port 9090", "--event-time", APR)
    assert "remembered #3" in out and "supersedes #1" in out
    shown = subprocess.run(
        [sys.executable, "-m", "fact_ledger.server", "--db", db, "read", "1", "--json"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert '"status": "superseded"' in shown and '"support": 2' in shown


def test_a_word_for_word_repeat_of_a_disputed_value_said_later_takes_part_in_its_set(app: LedgerApp) -> None:
    """8080, then 9090 half an hour later (an open set, 9090 leading), then 8080 again in April:
    word for word it was absorbed as a sighting and 9090 kept leading, while the same value in
    other words joined the set and led. Now the repeat is stored and joins, as a restatement of
    a disputed value is; a repeat of an undisputed memory is still absorbed."""
    first = app.remember("The staging API listens on port 8080", event_time="2026-01-10T00:00:00Z")["memory_id"]
    second = app.remember("The staging API listens on port 9090", event_time="2026-01-10T00:30:00Z")
    (conflict,) = second["conflicts"]
    assert conflict["leader_id"] == second["memory_id"]
    again = app.remember("The staging API listens on port 8080", event_time=APR)
    assert "duplicate_of" not in again and again["memory_id"] not in (first, second["memory_id"])
    assert second["memory_id"] in again["superseded"]
    found = app.find("staging API port")["results"]
    assert found[0]["content"] == "The staging API listens on port 8080"
    lone = app.remember("The cache TTL is 300 seconds", event_time=JAN)["memory_id"]
    assert app.remember("The cache TTL is 300 seconds", event_time=APR)["duplicate_of"] == lone


def test_last_stated_counts_a_word_for_word_repeat(app: LedgerApp) -> None:
    """``support`` counted the repeat while ``last_stated`` gave the first statement's time: the
    contract's "the latest event time a statement of it gave" ignored exact duplicates."""
    held = app.remember("The cache TTL is 300 seconds", event_time=JAN)["memory_id"]
    assert app.remember("The cache TTL is 300 seconds", event_time=APR)["duplicate_of"] == held
    memory = app.read(held)["memory"]
    assert memory["support"] == 2 and memory["last_stated"].startswith(APR[:19])
    assert app.remember("The cache TTL is 300 seconds", event_time=FEB)["duplicate_of"] == held  # an older repeat
    assert app.read(held)["memory"]["last_stated"].startswith(APR[:19])


def test_with_inactive_memories_the_current_value_stands_above_what_it_replaced(app: LedgerApp) -> None:
    """``find --include-inactive`` listed "Bob's manager is Carol" (superseded) above "Bob now
    reports to Dan": a superseded memory has no current claims, so nothing grouped the two."""
    old = app.remember("Bob's manager is Carol", event_time=JAN)["memory_id"]
    new = app.remember("Bob now reports to Dan", event_time=APR)
    assert new["superseded"] == [old]
    found = [r["memory_id"] for r in app.find("Bob's manager Carol", include_inactive=True)["results"]]
    assert found.index(new["memory_id"]) < found.index(old)


def test_cancelling_a_change_brings_back_the_value_it_replaced(app: LedgerApp) -> None:
    """ "moved to the 10th" superseded "on the 3rd"; cancelling the move left no date at all. A
    cancellation that states no value of its own brings the replaced value back; one that says
    the new value itself ("not the 10th; it is on the 12th") does not."""
    first = app.remember("The launch review is on 2026-03-03", event_time=JAN)["memory_id"]
    moved = app.remember("The launch review moved to 2026-03-10", event_time=FEB)
    assert moved["superseded"] == [first]
    cancel = app.remember("The move of the launch review is cancelled", ref_id=moved["memory_id"], retracts=True)
    assert cancel["retracted"] == [moved["memory_id"]] and cancel["reinstated"] == [first]
    assert app.read(first)["memory"]["status"] == "active"
    found = app.find("When is the launch review?")["results"]
    assert found[0]["memory_id"] == first
    assert app.verify()["projections"] == "consistent"

    day = app.remember("The design sync is on 2026-05-03", event_time=JAN)["memory_id"]
    later = app.remember("The design sync moved to 2026-05-10", event_time=FEB)["memory_id"]
    restated = app.remember("The design sync is on 2026-05-12", ref_id=later, retracts=True)
    assert restated["retracted"] == [later] and "reinstated" not in restated
    assert app.read(day)["memory"]["status"] == "superseded"


@pytest.mark.parametrize(
    "remark", ["That note is obsolete.", "That statement is withdrawn.", "The earlier note is incorrect."]
)
def test_a_retraction_that_remarks_on_the_note_brings_back_the_value_it_replaced(app: LedgerApp, remark: str) -> None:
    """ "That note is obsolete" read as a claim (that note: obsolete): a retraction stating a value,
    so the launch review was left with no date at all; two such remarks on unrelated notes then
    formed a claim set, and one was superseded by the other."""
    first = app.remember("The launch review is on 2026-03-03", event_time=JAN)["memory_id"]
    moved = app.remember("The launch review moved to 2026-03-10", event_time=FEB)["memory_id"]
    cancel = app.remember(remark, ref_id=moved, retracts=True)
    assert cancel["retracted"] == [moved] and cancel["reinstated"] == [first]
    owner = app.remember("The billing service owner is Alice")["memory_id"]
    other = app.remember(remark.replace(".", "!"), ref_id=owner, retracts=True)
    assert other["conflicts_total"] == 0 and "superseded" not in other
    assert app.read(cancel["memory_id"])["memory"]["status"] == "active"


@pytest.mark.parametrize(
    "correction",
    [
        "That was wrong, the standup is at 11am",
        "Correction: the daily standup is at noon",  # the value under another key: still its own value
        "Sorry, the team standup is at noon",
        "那条不对，站会是12点",
    ],
)
def test_a_correction_stating_the_new_value_brings_back_nothing(app: LedgerApp, correction: str) -> None:
    """A correction's preamble ("That was wrong, …") was read as part of the subject: the new
    value stood under another key, beside the old one brought back."""
    app.remember("The standup is at 9am", event_time=JAN)
    moved = app.remember("The standup is at 10am", event_time=FEB)["memory_id"]
    fixed = app.remember(correction, ref_id=moved, retracts=True)
    assert fixed["retracted"] == [moved] and "reinstated" not in fixed
    assert "The standup is at 9am" not in [r["content"] for r in app.find("standup")["results"]]
