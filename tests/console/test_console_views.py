"""The pure shaping behind the pages: version changes, word diffs, verdict rows, the timeline
strip, the two languages, and where each setting came from."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fact_ledger.server.config import load_settings, settings_sources
from fact_ledger.server.console.i18n import STRINGS, translator, value_translator
from fact_ledger.server.console.views import (
    known_then,
    rule_text,
    timeline_strip,
    verdict_rows,
    version_changes,
    word_diff,
)
from tests.console.conftest import Console

WORDS = st.lists(st.sampled_from(["port", "8080", "8081", "staging", "api", "is", "on"]), max_size=8)


@given(WORDS, WORDS)
def test_a_word_diff_rebuilds_both_texts(before: list[str], after: list[str]) -> None:
    ops = word_diff(" ".join(before) + " ", " ".join(after) + " ")
    old = [w for op, text in ops if op != "added" for w in text.split()]
    new = [w for op, text in ops if op != "removed" for w in text.split()]
    assert old == before and new == after


def test_a_chinese_diff_works_by_character() -> None:
    assert word_diff("张伟住在上海", "张伟住在北京") == [("same", "张伟住在"), ("removed", "上海"), ("added", "北京")]


def test_version_changes_name_the_fields_that_differ() -> None:
    v1 = {"version": 1, "content": "port 8080", "subject": "api", "tags": [], "status": "active"}
    v2 = {**v1, "version": 2, "content": "port 8081", "tags": ["infra"]}
    shaped = version_changes([v1, v2])
    assert shaped[0]["changed"] == [] and shaped[0]["diff"] == []
    assert shaped[1]["changed"] == ["content", "tags"]
    assert ("added", "8081") in shaped[1]["diff"] and ("removed", "8080") in shaped[1]["diff"]


def test_a_past_view_lists_only_the_events_known_then() -> None:
    v1 = {"version": 1, "position": 3, "events": [{"position": 3}, {"position": 9}]}
    v2 = {"version": 2, "position": 7, "events": [{"position": 7}]}
    assert known_then([v1, v2], None) == [v1, v2]
    assert known_then([v1, v2], 8) == [{**v1, "events": [{"position": 3}]}, v2]
    assert known_then([v1, v2], 3) == [{**v1, "events": [{"position": 3}]}]


def test_the_memory_page_as_of_its_first_position_shows_none_of_its_retraction(console: Console) -> None:
    """The cancelled meeting's page as of when it was written listed the cancellation's event
    (its future) under version 1."""
    meeting, cancel = console.ids["meeting"], console.ids["cancel"]
    now, then = console.get(f"/memory/{meeting}"), console.get(f"/memory/{meeting}?as_of={meeting}")
    assert f">@{cancel}</a>" in now
    assert f">@{meeting}</a>" in then and f">@{cancel}</a>" not in then


def test_verdict_rows_follow_the_rule_order_and_mark_the_deciding_rule() -> None:
    verdict = {
        "rule_order": ["user_confirmed/locked protection", "event_time", "source_type"],
        "reasons": ["user_confirmed/locked protection: tie", "event_time: the right side is newer"],
        "rule": "event_time",
    }
    rows = verdict_rows(verdict)
    assert [r["rule"] for r in rows] == verdict["rule_order"]
    assert [r["decides"] for r in rows] == [False, True, False]
    assert rows[1]["reason"] == "the right side is newer" and rows[2]["reason"] == ""
    assert verdict_rows(None) == []


def test_a_rule_row_is_said_in_the_pages_language_and_marked_once() -> None:
    verdict = {
        "rule_order": ["user_confirmed/locked protection", "event_time", "source_type"],
        "reasons": [
            "user_confirmed/locked protection: tie (normal on both sides)",
            "event_time: the #24 side has the newer event_time (2024-03-05 > 2024-03-04) — this rule decides",
        ],
        "rule": "event_time",
    }
    rows = verdict_rows(verdict)
    assert rows[1]["reason"] == "the #24 side has the newer event_time (2024-03-05 > 2024-03-04)"  # no "decides" twice
    zh, en = (translator("zh"), value_translator("zh")), (translator("en"), value_translator("en"))
    assert rule_text(rows[0], *zh) == "平局（双方均为 普通）"
    assert rule_text(rows[1], *zh) == "#24 的事件时间更新（2024-03-05 > 2024-03-04）"
    assert rule_text(rows[1], *en) == "#24 has the newer event time (2024-03-05 > 2024-03-04)"
    locked = verdict_rows(
        {
            **verdict,
            "reasons": [
                "user_confirmed/locked protection: the #3 side is locked and "
                "the #4 side is user_confirmed (agent_asserted) — this rule decides"
            ],
        }
    )
    assert rule_text(locked[0], *zh) == "#3 为 已锁定，#4 为 用户确认（代理声称）"
    source = verdict_rows({**verdict, "reasons": ["source_type: tie (agent_generated (45) on both sides)"]})
    assert rule_text(source[2], *zh) == "平局（双方均为 代理生成 (45)）"
    pair = verdict_rows(
        {**verdict, "reasons": ["source_type: tie (user_confirmed (45) and agent_generated (45) rank the same)"]}
    )
    assert pair[2]["kind"] == "tie_pair"
    assert rule_text(pair[2], *zh) == "平局（用户确认 (45) 与 代理生成 (45) 等级相同）"


def test_the_timeline_strip_places_intervals_on_one_axis() -> None:
    intervals = [
        {
            "memory_id": 1,
            "valid_from": "2023-01-01T00:00:00Z",
            "valid_to": "2024-01-01T00:00:00Z",
            "status": "superseded",
            "ended": "superseded",
            "superseded_by": 2,
            "content": "PostgreSQL 14",
        },
        {
            "memory_id": 2,
            "valid_from": "2024-01-01T00:00:00Z",
            "valid_to": None,
            "status": "active",
            "ended": None,
            "superseded_by": None,
            "content": "PostgreSQL 16",
        },
    ]
    strip = timeline_strip(intervals, "2025-01-01T00:00:00Z")
    first, second = strip.bars
    assert first.x == 0 and abs(first.x + first.width - second.x) < 0.2  # one ends where the next begins
    assert second.x + second.width <= strip.width and second.open_ended and not first.open_ended
    assert first.y < second.y and len(strip.arrows) == 1
    assert strip.ticks[0][1] == "2023-01-01"
    assert timeline_strip([], "2025-01-01T00:00:00Z").bars == []


def test_both_languages_name_every_key() -> None:
    for key, (en, zh) in STRINGS.items():
        assert en and zh, key
        assert sorted(_fields(en)) == sorted(_fields(zh)), key
    assert translator("zh")("memories") == "记忆" and translator("en")("memories") == "Memories"
    assert translator("fr")("memories") == "Memories" and translator("en")("no such key") == "no such key"


def _fields(text: str) -> list[str]:
    import string

    return [f for _, f, _, _ in string.Formatter().parse(text) if f]


def test_settings_sources_follow_the_precedence(tmp_path: Path) -> None:
    config = tmp_path / "ledger.json"
    config.write_text(
        json.dumps({"workspace": "from-file", "client": "file-client", "policy": {"review_agent_conflicts": True}})
    )
    env = {"LEDGER_CONFIG": str(config), "LEDGER_CLIENT": "env-client"}
    overrides = {"db": str(tmp_path / "x.db")}
    sources = settings_sources(overrides, env)
    settings = load_settings(overrides, env)
    assert sources["workspace"] == "file" and settings.workspace == "from-file"
    assert sources["client"] == "env" and settings.client == "env-client"
    assert sources["db"] == "flag" and sources["isolation"] == "default"
    assert sources["policy.review_agent_conflicts"] == "file" and settings.policy.review_agent_conflicts
    assert sources["policy.locked_requires_user_channel"] == "default"
    env = {"LEDGER_CONFIG": str(config), "LEDGER_EMBEDDING_THREADS": "3", "LEDGER_POLICY_AUTO_SETTLE": " "}
    config.write_text(json.dumps({"embedding": {"notice_similarity": 0.9}}))
    sources = settings_sources({}, env)  # every section, as load_settings reads it (a blank variable is unset)
    assert (sources["embedding.threads"], load_settings({}, env).embedding.threads) == ("env", 3)
    assert sources["embedding.notice_similarity"] == "file" and sources["embedding.model"] == "default"
    assert sources["policy.auto_settle"] == "default"
