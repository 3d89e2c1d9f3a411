"""Slots beyond the patterns: the wordings an agent uses for one fact share one claim key, values of
another fact do not, and a question that names a slot is answered from it first
(``ledger.claims``, ``ledger.slot_match``; docs/governance.md "Facts that change")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fact_ledger.ledger.claims import collides, extract_claims
from fact_ledger.ledger.slot_match import SLOT_BONUS, question_tokens, slot_bonus, slot_tokens
from fact_ledger.server.app.facade import LedgerApp


def one_claim(text: str):  # type: ignore[no-untyped-def]
    claims = extract_claims(text)
    assert len(claims) == 1, (text, claims)
    return claims[0]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("小王不吃香菜", "小王现在吃香菜了"),
        ("小王从来不吃辣", "小王能吃辣了"),
        ("Carol doesn't eat dairy", "Carol is fine with dairy now"),
        ("Henry eats seafood", "Henry no longer eats seafood"),
        ("Frank prefers tea", "Frank switched to black coffee"),
        ("Alice's favourite drink is oat latte", "Alice now prefers green tea"),
        ("刘洋平时喝美式咖啡", "刘洋现在最喜欢喝热可可"),
        ("徐强最爱的饮料是热可可", "徐强改喝气泡水了"),
        ("库存服务监听在6881端口", "库存服务端口改成了5065"),
        ("The auth gateway runs version 4.0.1", "The auth gateway was upgraded to version 4.16.7"),
        ("推送服务当前版本1.1.7", "推送服务的版本改为5.17.5"),
        ("The CI dashboard is at https://a.example.dev/x", "Link to the CI dashboard is https://b.example.dev/y"),
        ("VPN门户的地址是https://a.example.dev/x", "VPN门户搬到了https://b.example.dev/y"),
        ("构建看板：https://a.example.dev/x", "构建看板的链接是https://b.example.dev/y"),
        ("The weekly design review starts at 9am", "The weekly design review is at 09:30"),
        ("销售例会定在13点30分", "销售例会的时间是14:00"),
        ("库存服务由赵磊负责", "库存服务改由杨帆负责"),
        ("The office move has a budget of 25,000 dollars", "Budget for the office move: $30,000"),
    ],
)
def test_a_changed_value_in_other_words_is_the_same_slot(before: str, after: str) -> None:
    assert collides(one_claim(before), one_claim(after))


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Bob drinks tea", "Bob drinks coffee"),  # several drinks hold at once: a taste each
        ("Bob likes jazz", "Bob likes techno"),
        ("Alice eats pork", "Alice doesn't eat seafood"),
        ("The billing API listens on port 8080", "The orders API listens on port 9090"),  # another entity
        ("The billing API listens on port 8080", "The billing API runs version 2.3.1"),  # another attribute
        ("小王不吃香菜", "小李现在吃香菜了"),
    ],
)
def test_other_facts_never_share_a_set(one: str, other: str) -> None:
    mine, theirs = extract_claims(one), extract_claims(other)
    assert not any(collides(a, b) for a in mine for b in theirs)


def test_a_preference_that_is_not_a_drink_is_not_a_drink_slot() -> None:
    assert not [c for c in extract_claims("Bob prefers the window seat") if c.attribute == "drink"]


# -- a question names a slot -------------------------------------------------------------------
def test_the_slot_a_question_names_gains_the_most() -> None:
    asked = question_tokens("What port does the inventory API listen on?")
    named = slot_tokens("api inventory port", "is")
    neighbour = slot_tokens("api port staging", "is")
    other_attribute = slot_tokens("api inventory version", "is")
    assert slot_bonus(asked, [named]) == SLOT_BONUS
    assert slot_bonus(asked, [neighbour]) == slot_bonus(asked, [other_attribute]) == 0.0
    assert slot_bonus(question_tokens("What did Caroline say?"), [slot_tokens("caroline", "lives in")]) == 0.0
    owner = slot_tokens("api billing owner", "is")
    assert slot_bonus(question_tokens("Who owns the billing API?"), [owner]) == SLOT_BONUS
    taste = slot_tokens("丽 孙", "吃牛奶")  # a taste's attribute names its slot
    assert slot_bonus(question_tokens("孙丽喜欢喝什么？"), [taste]) < slot_bonus(
        question_tokens("孙丽喜欢喝什么？"), [slot_tokens("drink 丽 孙", "is")]
    )


@given(st.lists(st.text(min_size=1, max_size=6), max_size=5), st.text(max_size=40))
def test_the_bonus_is_bounded_and_none_without_a_slot(tokens: list[str], query: str) -> None:
    asked = question_tokens(query)
    bonus = slot_bonus(asked, [frozenset(tokens)])
    assert 0.0 <= bonus <= SLOT_BONUS
    assert slot_bonus(asked, []) == 0.0


def test_find_answers_the_named_slot_first(app: LedgerApp) -> None:
    when = "2026-01-05T09:00:00Z"
    port = app.remember("The inventory API port is 5152", event_time=when)["memory_id"]
    app.remember("The staging API listens on port 5963", event_time=when)
    version = app.remember("The inventory API is on v2.5.7", event_time=when)["memory_id"]
    owner = app.remember("The owner of the inventory API is Carol", event_time=when)["memory_id"]
    assert app.find("What port does the inventory API listen on?")["results"][0]["memory_id"] == port
    assert app.find("Which version does the inventory API run?")["results"][0]["memory_id"] == version
    assert app.find("Who owns the inventory API?")["results"][0]["memory_id"] == owner
