"""The page chrome in both languages where it once showed raw keys: the error page, the Audit
filter's memory label, an event's role and type on the Memory page, Doctor's check names. A
message the facade writes in English stays as written; the words around it are translated."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.server.console.i18n import TERMS, term_translator
from tests.conftest import ledger_cli
from tests.console.conftest import Console
from tests.console.test_console_guard import _request


def _get(console: Console, path: str, lang: str) -> tuple[int, str]:
    cookie = f"ledger_console_{console.port}={console.token}; ledger_console_lang={lang}"
    status, text, _ = _request(console, "GET", path, headers={"Cookie": cookie})
    return status, text


def _text(page: str) -> str:
    """What a person reads: the page without tags and without ``<code>`` identifiers."""
    return re.sub(r"<[^>]+>", " ", re.sub(r"<code[^>]*>.*?</code>", " ", page, flags=re.S))


def test_every_term_is_named_in_both_languages() -> None:
    for kind, names in TERMS.items():
        for name, (en, zh) in names.items():
            assert en and zh, (kind, name)
    tn = term_translator("zh")
    assert tn("event", "Superseded") == "被取代" and tn("event", "SomethingNew") == "SomethingNew"


def test_the_error_page_says_its_kind_in_the_chosen_language(console: Console) -> None:
    for lang, kind, field, heading in (
        ("en", "invalid input", "Memory id", "Refused"),
        ("zh", "输入无效", "记忆编号", "被拒绝"),
    ):
        status, page = _get(console, "/audit?memory_id=abc", lang)
        assert status == 400 and heading in page
        assert kind in page.split('id="error-kind">', 1)[1] and field in page.split('id="error-kind">', 1)[1]
    status, page = _get(console, "/memory/999999", "zh")
    assert status == 404 and "未找到" in page


def test_the_audit_filter_names_the_memory_in_words(console: Console) -> None:
    for lang, label in (("en", "Memory id"), ("zh", "记忆编号")):
        _, page = _get(console, "/audit", lang)
        form = page.split('id="audit-form"', 1)[1].split("</form>", 1)[0]
        assert f'<label>{label} <input name="memory_id"' in form and "<label>memory_id" not in form


def test_event_roles_and_types_on_the_memory_page_are_words_in_chinese(console: Console) -> None:
    _, page = _get(console, f"/memory/{console.ids['old_db']}", "zh")
    shown = _text(page.split('id="versions"', 1)[1])
    assert "本记忆" in shown and "记录" in shown and "被取代" in shown
    assert not re.search(r"\b(stream|MemoryRecorded|Superseded)\b", shown)
    _, page = _get(console, f"/memory/{console.ids['old_db']}", "en")
    assert "this memory" in page and "MemoryRecorded" in page


def test_doctor_names_its_checks_in_the_chosen_language(console: Console) -> None:
    _, page = _get(console, "/doctor?run=1", "zh")
    checks = _text(page.split('id="checks"', 1)[1].split("</table>", 1)[0])
    assert "哈希链" in checks and "完整性" in checks and "hash_chain" not in checks
    _, page = _get(console, "/doctor", "en")
    assert "hash_chain" in page


def test_every_doctor_check_and_the_audit_s_event_types_are_words_in_chinese(console: Console) -> None:
    """``semantic_search`` (and a new check) had no Chinese name; the Audit table printed raw event
    type names (``MemoryRecorded``) where the Memory and Conflict pages translate them."""
    import fact_ledger.server.app.semantic  # noqa: F401  (registers its check, as the console does)
    from fact_ledger.server.doctor import CHECKS

    names = {fn.__name__.removeprefix("check_") for fn in CHECKS}
    assert names <= set(TERMS["check"]), names - set(TERMS["check"])
    _, page = _get(console, "/audit", "zh")
    table = page.split('class="event-row"', 1)[1].split("</table>", 1)[0]
    assert "记录" in _text(table) and not re.search(r"\b(MemoryRecorded|ClaimCollided)\b", _text(table))


def test_a_count_of_one_reads_in_the_singular() -> None:
    """ "1 memories holding another value would be superseded", "1 memories are reinstated"."""
    from fact_ledger.server.console.i18n import translator

    t = translator("en")
    assert "1 memory holding another value is superseded" in t("apply_describe", conflict=3, winner=2, n=1)
    assert "2 memories holding another value are superseded" in t("apply_describe", conflict=3, winner=2, n=2)
    assert "1 memory is reinstated" in t("undo_describe", position=9, conflict=3, n=1)
    assert t("health_members_values", n=1, v=2) == "1 memory, 2 values"
    assert "1 条记忆" in translator("zh")("undo_describe", position=9, conflict=3, n=1)


def test_who_authorised_an_act_is_said_in_the_chosen_language(console: Console) -> None:
    """The supersession's channel showed as the raw ``user_channel`` on the Chinese page."""
    _, page = _get(console, f"/memory/{console.ids['old_db']}", "zh")
    assert "用户渠道" in page and "user_channel" not in page
    _, page = _get(console, f"/memory/{console.ids['old_db']}", "en")
    assert "user_channel" in page


def test_the_ledgers_own_reasons_are_said_in_the_chosen_language(console: Console) -> None:
    """A retraction's reason ("retracted") and a policy's settlement showed in English on the
    Chinese page; a person's own reason ("upgrade finished") stays as written."""
    for lang, status_word, said in (("zh", "已停用", "已撤回"), ("en", "retired", "retracted")):
        _, page = _get(console, f"/memory/{console.ids['meeting']}", lang)
        status = _text(page.split('id="status">', 1)[1].split("</td>", 1)[0])
        # the status and the reason in words of their own: Chinese read "已撤回 — 已撤回"
        assert status_word in status and said in status and status_word != said, (lang, status)
    _, page = _get(console, f"/memory/{console.ids['old_db']}", "zh")
    assert "upgrade finished" in page


def test_reason_translator_knows_every_fixed_reason_and_leaves_a_persons_words() -> None:
    from fact_ledger.ledger.decide import ENDED, LEFT_BY_RETRACTION, REINSTATED, RETRACTED_BY_WORDS
    from fact_ledger.ledger.settlement import CHANGE_REASON
    from fact_ledger.server.console.i18n import reason_translator

    tr = reason_translator("zh")
    for reason in (ENDED, LEFT_BY_RETRACTION, REINSTATED, RETRACTED_BY_WORDS):
        assert tr(reason) != reason and not re.search(r"[a-z]{4,}", tr(reason)), reason
    assert tr(CHANGE_REASON + "event_time") == "依策略 settle_changes 了结：事件时间"
    assert tr("the vendor changed its API") == "the vendor changed its API"
    # a person's own words stay as typed, even when they read like a word the ledger knows
    assert [tr(r) for r in ("policy", "erase", "true", "user")] == ["policy", "erase", "true", "user"]
    # codes the ledger records as reasons: a resolution's, a supersession's rule, an undo's
    assert [tr(r) for r in ("resolve_conflict", "manual", "undo of change 01a2407b-13c1")] == [
        "由人选定（解决）",
        "由人选定",
        "撤销了一项更改（健康页）",
    ]
    assert reason_translator("en")(ENDED) == ENDED


def test_roles_resolutions_and_rules_the_ledger_records_are_words_in_chinese(console: Console) -> None:
    """A member's role ("members"), a person's resolution ("conflict 33 resolved", "keep all
    values") and the rule of a supersession ("manual") stayed English on the Chinese pages."""
    loser, cid = console.ids["rules_favour"], console.ids["resolved_conflict"]
    _, page = _get(console, f"/memory/{loser}", "zh")
    status = _text(page.split('id="status">', 1)[1].split("</td>", 1)[0])
    assert f"冲突 {cid} 已解决" in status and "resolved" not in status, status
    shown = _text(page.split('id="versions"', 1)[1])
    assert "成员" in shown and not re.search(r"\b(members|manual|resolve_conflict)\b", shown), shown
    _, page = _get(console, f"/conflict/{console.ids['kept_conflict']}", "zh")
    assert "保留全部值" in page and "keep all values" not in _text(page)
    _, page = _get(console, f"/memory/{console.ids['old_db']}", "zh")
    assert "由人选定" in page and not re.search(r"\bmanual\b", _text(page.split('id="versions"', 1)[1]))
    _, page = _get(console, f"/memory/{loser}", "en")
    assert f"conflict {cid} resolved" in page and "a member" in page


def test_every_reason_storage_can_be_degraded_for_is_named_in_both_languages() -> None:
    """The banner every page carries while the ledger is degraded names the reason in words."""
    from fact_ledger.server.app.storage_errors import REASONS

    reasons = {reason for _, reason in REASONS} | {"not_a_ledger"}  # NotALedger's own reason
    assert reasons <= set(TERMS["degraded"]), reasons - set(TERMS["degraded"])


def test_doctor_s_messages_and_the_overview_s_chain_line_are_chinese_in_chinese(page: Any, console: Console) -> None:
    """The Chinese Doctor page named each check in Chinese and then said all it found in English
    ("hash chain intact over 112 events", "every projection is caught up", "2 open and 1 judged
    conflict(s) await a decision"), and so did the Overview's chain line. The messages of the
    healthy state and the common warnings are Chinese; commands and identifiers stay as written."""
    page.goto(f"{console.base}/lang/zh?next=/doctor?run=1")
    messages = [m.inner_text() for m in page.locator("#checks .check-message").all()]
    assert len(messages) >= 10
    untranslated = [m for m in messages if not re.search(r"[\u4e00-\u9fff]", m)]
    assert not untranslated, untranslated
    assert any(re.fullmatch(r"哈希链完整，共 \d+ 个事件", m) for m in messages), messages
    assert any("个未决" in m and "ledger conflicts" in m for m in messages), messages  # the seed's open sets
    page.goto(f"{console.base}/")
    assert re.search(r"哈希链完整，共 \d+ 个事件", page.inner_text("#chain-state"))
    page.goto(f"{console.base}/lang/en?next=/doctor?run=1")  # English as the ledger writes it
    assert any(m.startswith("hash chain intact over") for m in page.locator("#checks .check-message").all_inner_texts())


def _cli_json(console: Console, *args: str) -> dict[str, Any]:
    return dict(json.loads(ledger_cli(*args, "--db", console.db, "--json", check=True).stdout))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_common_refusals_are_said_in_the_page_s_language(page: Any, console: Console, lang: str) -> None:
    """The Chinese pages showed every refusal's message in English (only its kind was translated).
    The common ones read in Chinese there; the English pages keep the facade's words."""
    base = console.base
    if lang == "zh":
        page.goto(f"{base}/lang/zh?next=/")
    word = {"en": "Orca", "zh": "Puma"}[lang]  # the two runs write apart
    erased = _cli_json(console, "remember", f"The {word} locker code is 5512", "--source-type", "agent_generated")
    first = _cli_json(console, "remember", f"The {word} relay listens on port 7301", "--source-type", "agent_generated")
    second = _cli_json(
        console, "remember", f"The {word} relay listens on port 7302", "--source-type", "agent_generated"
    )
    member, conflict = first["memory_id"], second["conflicts"][0]["conflict_id"]

    page.goto(f"{base}/memory/{erased['memory_id']}")  # a tab opened before the memory was erased elsewhere
    ledger_cli("erase", str(erased["memory_id"]), "--reason", "asked", "--db", console.db, check=True)
    page.fill("#retire-reason", "old")
    page.click("#act-retire")
    page.wait_for_load_state()
    shown = {"erased": page.inner_text("#error")}
    page.goto(f"{base}/conflict/{conflict}")  # a conflict page opened before a member changed
    ledger_cli("update", str(member), "--confidence", "0.4", "--db", console.db, check=True)
    page.click(f"#judge-{member}")
    page.wait_for_load_state()
    shown["version"] = page.inner_text("#error")
    for key, path in (
        ("field", "/audit?memory_id=abc"),
        ("unknown", "/memory/999999"),
        ("range", "/memories?at=0001-01-01T00:00:00%2B05:00"),
    ):
        page.goto(base + path)
        shown[key] = page.inner_text("#error")
    expected = {
        "en": {
            "field": "memory_id must be a whole number from 1 to 9223372036854775807, in the digits 0-9",
            "unknown": "no memory 999999",
            "range": "falls outside the years 1 to 9999 in UTC",
            "erased": f"memory {erased['memory_id']} is erased: nothing of it is left to retire",
            "version": f"memory {member} is at version 2, the judgment pinned 1",
        },
        "zh": {
            "field": "记忆编号必须是 1 到 9223372036854775807 之间的整数，只用数字 0-9",
            "unknown": "没有记忆 999999",
            "range": "事件时间超出范围：",
            "erased": f"记忆 {erased['memory_id']} 已被永久删除：没有留下任何内容可以停用",
            "version": f"记忆 {member} 现在是版本 2，评判固定的是版本 1",
        },
    }[lang]
    for key, words in expected.items():
        assert words in shown[key], (key, shown[key])
    if lang == "zh":  # nothing of the English message is left, but what was sent and the field's code
        assert "out of range" not in shown["range"] and "0001-01-01T00:00:00+05:00" in shown["range"]
        assert not any(re.search(r"\bmemory\b", shown[k]) for k in ("field", "unknown", "erased", "version")), shown


def test_the_facade_s_common_refusals_have_chinese_words(tmp_path: Path) -> None:
    """What the facade itself answers (locked, not authorised, a version conflict, an unknown id,
    erased already, a time out of range) reads in Chinese on a Chinese page, and as written on an
    English one: the catalogue follows the facade's words, not a copy of them."""
    from fact_ledger.ledger.errors import LedgerError
    from fact_ledger.ledger.log.events import AUTH_USER
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings
    from fact_ledger.server.console.refusals import refusal_translator

    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        mid = app.remember("The lobby door code is 4471")["memory_id"]
        app.confirm(mid, authorization=AUTH_USER)
        calls = {
            "记忆 1 已锁定；此更改需要 authorized: true": lambda: app.retire(mid, reason="old"),
            "记忆 1 现在是版本 2，不是版本 1": lambda: app.update(
                mid, content="The lobby door code is 4472", expected_version=1
            ),
            "永久删除只能由用户本人执行": lambda: app.erase(mid, reason="asked"),
            "没有记忆 999": lambda: app.read(999),
            "事件时间超出范围：'0001-01-01T00:00:00+05:00' 换算为 UTC 后不在公元 1 年到 9999 年之间": lambda: app.find(
                "door", as_of_event_time="0001-01-01T00:00:00+05:00"
            ),
            "事件时间 '2026-01-04T24:00Z' 是一天的结束（24:00），不能这样写：请写下一天的 00:00（2026-01-05T00:00Z）": (
                lambda: app.find("door", as_of_event_time="2026-01-04T24:00Z")
            ),
            "事件时间 '9999-12-31T24:00' 是一天的结束（24:00），不能这样写：请写公元 1 年到 9999 年之间的时间": (
                lambda: app.find("door", as_of_event_time="9999-12-31T24:00")
            ),
            "记忆 1 已被永久删除": lambda: [app.erase(mid, reason="asked", authorization=AUTH_USER) for _ in range(2)],
        }
        for words, call in calls.items():
            with pytest.raises(LedgerError) as refused:
                call()
            message = refused.value.to_dict()["message"]
            assert refusal_translator("en")(message) == message
            assert refusal_translator("zh")(message).startswith(words), (message, refusal_translator("zh")(message))
    finally:
        app.close()


def test_stale_suggestions_ranges_and_the_working_tier_s_refusals_have_chinese_words(tmp_path: Path) -> None:
    """A stale suggestion of the health report, a range that holds no time, a conversation's
    working set asked of the past, and the refusals of the working tier and of promotion read
    in English on a Chinese page; each is said in Chinese there, as written on an English one."""
    from fact_ledger.ledger.errors import LedgerError
    from fact_ledger.ledger.log.events import AUTH_USER
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings
    from fact_ledger.server.console.actions import preview
    from fact_ledger.server.console.refusals import refusal_translator

    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        for name, minute in (("Alice", "00"), ("Bob", "10")):
            app.remember(
                f"The deploy target owner is {name}",
                source_type="agent_generated",
                event_time=f"2026-03-01T00:{minute}:00Z",
            )
        [cluster] = app.health()["clusters"]
        settled = cluster["suggestion"]["suggestion_id"]
        app.apply_suggestion(settled, authorization=AUTH_USER)
        for name, minute in (("Alice", "00"), ("Bob", "10"), ("Carol", "20")):
            app.remember(
                f"The billing service owner is {name}",
                source_type="agent_generated",
                event_time=f"2026-03-01T00:{minute}:00Z",
            )
        [cluster] = app.health()["clusters"]
        shown, cid, alice = cluster["suggestion"]["suggestion_id"], cluster["conflict_id"], min(cluster["members"])
        app.judge(cid, alice, rationale="Alice really")
        [cluster] = app.health()["clusters"]
        needs_person = cluster["suggestion"]["suggestion_id"]
        long_term = app.remember("The lobby door code is 4471")["memory_id"]
        note = app.remember("The draft title is Tides", tier="working", session_id="s1")["memory_id"]
        promoted = app.remember("The draft subtitle is Ebb", tier="working", session_id="s1")["memory_id"]
        became = app.promote(promoted, authorization=AUTH_USER)["promoted_to"]
        erased = app.remember("The draft tagline is Neap", tier="working", session_id="s1")["memory_id"]
        app.erase(erased, reason="asked", authorization=AUTH_USER)
        calls = {
            f"建议 {settled} 已过时：冲突": lambda: app.apply_suggestion(settled, authorization=AUTH_USER),
            f"建议 {shown} 已过时：报告之后该矛盾簇有了变化（现在需要人来决定：": lambda: app.apply_suggestion(
                shown, authorization=AUTH_USER
            ),
            f"建议 {needs_person} 需要人来决定：": lambda: app.check_suggestion(needs_person),
            "起始（2026-02-01T00:00:00.000000Z）晚于截止（2026-01-01T00:00:00.000000Z）：这个范围": lambda: app.audit(
                since="2026-02-01T00:00:00Z", until="2026-01-01T00:00:00Z"
            ),
            "after_time（2026-02-01T00:00:00.000000Z）不早于before_time（": lambda: app.find(
                "door", after_time="2026-02-01T00:00:00Z", before_time="2026-01-01T00:00:00Z"
            ),
            "session_only 查询的是一个对话的工作集，它没有过去": lambda: app.find(
                "draft", session_id="s1", session_only=True, as_of_recorded=1
            ),
            f"#{long_term} 是长期记忆：只有工作记忆才能这样操作": lambda: app.promote(
                long_term, authorization=AUTH_USER
            ),
            f"#{promoted} 已经转为长期记忆：它是长期记忆 #{became}": lambda: app.promote(
                promoted, authorization=AUTH_USER
            ),
            f"#{note} 是工作记忆：这是长期记忆的操作（请先转为长期记忆）": lambda: app.retire(note, reason="old"),
            f"#{promoted} 是工作记忆：这是长期记忆的操作（它已转为长期记忆：请对 #{became} 操作）": lambda: app.retire(
                promoted, reason="old"
            ),
            f"记忆 {erased} 已被永久删除": lambda: app.promote(erased, authorization=AUTH_USER),
            f"#{erased} 是工作记忆：这是长期记忆的操作（它的状态是“已删除”）": lambda: app.retire(erased, reason="old"),
            f"记忆 {long_term} 不是工作记忆：它已经是长期记忆": lambda: preview(app, "promote", long_term, {}),
            f"记忆 {note} 是工作记忆，不是长期记忆：请先转为长期记忆": lambda: preview(app, "retire", note, {}),
        }
        for words, call in calls.items():
            with pytest.raises(LedgerError) as refused:
                call()
            message = refused.value.to_dict()["message"]
            assert refusal_translator("en")(message) == message
            assert refusal_translator("zh")(message).startswith(words), (message, refusal_translator("zh")(message))
    finally:
        app.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_event_type_a_range_and_a_conversation_s_past_are_refused_in_the_page_s_language(
    page: Any, console: Console, lang: str
) -> None:
    """The Chinese pages said in English that a type is no event type, that a range holds no
    time, and that a conversation has no past; they say it in Chinese, the English pages as
    before, and what the person typed is kept as typed."""
    base = console.base
    page.goto(f"{base}/lang/{lang}?next=/")
    shown = {}
    for key, path in (
        ("type", "/audit?type=memoryrecorded"),
        ("range", "/audit?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z"),
        ("past", "/memories?session=planning&as_of=1"),
    ):
        page.goto(base + path)
        shown[key] = page.inner_text("#error")
    expected = {
        "en": {
            "type": "type 'memoryrecorded' is no event type; choose one from the list (e.g. MemoryRecorded)",
            "range": "since (2026-02-01T00:00:00.000000Z) is after until (2026-01-01T00:00:00.000000Z): the range "
            "holds no time, so nothing could answer; swap them?",
            "past": "conversation 'planning' has no past",
        },
        "zh": {
            "type": "类型 'memoryrecorded' 不是事件类型；请从列表中选择一个（例如 MemoryRecorded）",
            "range": "起始（2026-02-01T00:00:00.000000Z）晚于截止（2026-01-01T00:00:00.000000Z）："
            "这个范围不含任何时间，不会有结果；要把两者对调吗？",
            "past": "对话 'planning' 没有过去：",
        },
    }[lang]
    for key, words in expected.items():
        assert words in shown[key], (key, shown[key])
    if lang == "zh":
        assert not any(re.search(r"\b(?:no event type|holds no time|has no past)\b", v) for v in shown.values()), shown


def test_the_console_s_other_action_refusals_have_chinese_words(tmp_path: Path) -> None:
    """What the console's actions meet besides the common refusals (a conflict settled since the
    page was shown, a winner outside the set, pins of a non-member, a credential in a reason, an
    undo that cannot run, an entity alias decided already, a suggestion id the report never gave)
    read in English on a Chinese page; each is said in Chinese there, as written on an English one."""
    from fact_ledger.ledger.errors import LedgerError
    from fact_ledger.ledger.log.events import AUTH_USER
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.config import Settings
    from fact_ledger.server.console.actions import preview
    from fact_ledger.server.console.refusals import refusal_translator

    app = LedgerApp(Settings(db=str(tmp_path / "l.db")))
    try:
        for name, minute in (("Alice", "00"), ("Bob", "10")):
            app.remember(
                f"The deploy target owner is {name}",
                source_type="agent_generated",
                event_time=f"2026-03-01T00:{minute}:00Z",
            )
        [cluster] = app.health()["clusters"]
        change = app.apply_suggestion(cluster["suggestion"]["suggestion_id"], authorization=AUTH_USER)["change_id"]
        settled, winner = cluster["conflict_id"], max(cluster["members"])
        undo = app.undo(change, authorization=AUTH_USER)["change_id"]
        app.resolve_conflict(settled, winner, authorization=AUTH_USER)
        first = app.remember("The relay listens on port 7301", source_type="agent_generated")["memory_id"]
        second = app.remember("The relay listens on port 7302", source_type="agent_generated")
        open_set = second["conflicts"][0]["conflict_id"]
        app.accept_entity_alias("Robert Smith", "Bob Smith", authorization=AUTH_USER)
        key = "AKIA" + "Q3EGRFXL7PBN2MZD"
        calls = {
            f"冲突 {settled} 已经解决": lambda: preview(app, "resolve", settled, {"winner_id": winner}),
            f"记忆 999 不是冲突 {open_set} 的成员": lambda: preview(app, "resolve", open_set, {"winner_id": 999}),
            f"固定版本指定的记忆 999 不是冲突 {open_set} 的成员": lambda: preview(
                app, "judge", open_set, {"winner_id": first, "pin_999": "1"}
            ),
            "固定版本指定的记忆 999 不是该冲突的成员": lambda: app.judge(open_set, first, pins={"999": 1}),
            "记忆不能取代它自己": lambda: preview(app, "supersede", first, {"winner_id": first}),
            "原因中似乎有凭据（aws-access-key": lambda: app.retire(first, reason=f"key {key}", authorization=AUTH_USER),
            "建议编号不是健康报告中的建议": lambda: app.check_suggestion("bogus"),
            "本身是一次撤销；请改为再次应用该建议": lambda: app.undo(undo, authorization=AUTH_USER),
            "已被 change @": lambda: app.undo(change, authorization=AUTH_USER),
            "'Robert Smith' 和 'Bob Smith' 已经是同一个键": lambda: app.accept_entity_alias(
                "Robert Smith", "Bob Smith", authorization=AUTH_USER
            ),
            "别名和规范名称必须是两个不同的非空名称": lambda: app.accept_entity_alias(
                "Bob", "Bob", authorization=AUTH_USER
            ),
        }
        for words, call in calls.items():
            with pytest.raises(LedgerError) as refused:
                call()
            message = refused.value.to_dict()["message"]
            assert refusal_translator("en")(message) == message
            said = refusal_translator("zh")(message)
            assert words in said and said != message, (message, said)
    finally:
        app.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_console_s_own_form_refusals_are_said_in_the_page_s_language(console: Console, lang: str) -> None:
    """A status, a page, an export format, an action or an alias decision the forms never offer
    was refused in English on a Chinese page; it is refused in Chinese there, in English on an
    English one (over HTTP, with the page's language cookie, as a browser sends it)."""
    from html import unescape

    cookie = {"Cookie": f"ledger_console_{console.port}={console.token}; ledger_console_lang={lang}"}
    csrf = console.csrf()
    shown = {}
    for key, method, path, body in (
        ("status", "GET", "/memories?status=bogus", None),
        ("page", "GET", "/memories?page=26", None),
        ("format", "GET", "/audit/export.xml", None),
        ("action", "POST", "/act/bogus", {"csrf": csrf, "memory_id": "1"}),
        (
            "decision",
            "POST",
            "/health/alias",
            {"csrf": csrf, "alias": "Bob", "canonical": "Robert", "decision": "maybe"},
        ),
    ):
        status, text, _ = _request(console, method, path, headers=cookie, body=body)
        found = re.search(r'id="error"><code>[a-z_]+</code> (.*?)(?: \(<code>|</p>)', text, re.S)
        assert status >= 400 and found, (key, status, text[:400])
        shown[key] = unescape(found.group(1))
    expected = {
        "en": {
            "status": "status is empty (current memories) or all",
            "page": "page must be a number from 1 to 25; narrow the filters to go further",
            "format": "export format is jsonl or csv",
            "action": "no action 'bogus'",
            "decision": "decision must be accept or reject",
        },
        "zh": {
            "status": "状态须为空（当前记忆）或 all",
            "page": "页必须是 1 到 25 之间的数字",
            "format": "导出格式为 jsonl 或 csv",
            "action": "没有操作 'bogus'",
            "decision": "决定必须是 accept 或 reject",
        },
    }[lang]
    for key, words in expected.items():
        assert words in shown[key], (key, shown[key])
