"""The facade's common refusals in the console's chosen language (docs/console.md, "Languages").

An error's message is the facade's, in English, the words MCP and the CLI answer with. On a
Chinese page the common ones are said in Chinese: invalid input on a field, an unknown id, a
version conflict, a locked memory, a call that is not authorised, a time out of range, a memory
erased already; a stale suggestion, a range that holds no time, the working tier's and
promotion's refusals, and those of the console's own actions and forms. Each whole message is
a pattern, as Doctor's messages are (``i18n.CHECK_MESSAGES``); what the person sent (a quoted
time, an id) is kept as it is, a field is named by its label on the page and a status or
protection by its word. A message no pattern holds is shown as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fact_ledger.server.console.i18n import LANGUAGES, STRINGS, VALUES, catalogue_translator

_FIELD = r"(?P<field>[a-z_]+)"
_ID = r"(?P<id>\d+)"

# (pattern, Chinese): a group named ``field`` (or ``last``, a range's other end) reads as the
# field's label, ``status`` and ``protection`` as their words, ``action`` as the button's name;
# every other group as sent.
REFUSALS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), zh)
    for pattern, zh in (
        # invalid input on a field
        (
            rf"{_FIELD} must be a whole number from (?P<least>\d+) to (?P<most>\d+), in the digits 0-9",
            "{field}必须是 {least} 到 {most} 之间的整数，只用数字 0-9",
        ),
        (rf"{_FIELD} must be an ISO 8601 timestamp", "{field}必须是 ISO 8601 时间"),
        (rf"{_FIELD} is not an ISO 8601 timestamp: (?P<sent>.+)", "{field}不是 ISO 8601 时间：{sent}"),
        (rf"{_FIELD} is required to (?P<action>[a-z]+) a memory: say why", "{action}记忆需要填写{field}：请说明原因"),
        (
            r"(?P<what>source_type) must be one of (?P<names>[a-z_, ]+)",
            "{what} 必须是以下之一：{names}",
        ),
        (
            r"the suggestion is not among the report's clusters; look at the report again",
            "该建议不在报告的矛盾簇中；请重新查看报告",
        ),
        (
            rf"{_FIELD} (?P<sent>'.*') is no event type; choose one from the list \(e\.g\. (?P<example>[A-Za-z]+)\)",
            "{field} {sent} 不是事件类型；请从列表中选择一个（例如 {example}）",
        ),
        # a stale suggestion of the health report
        (
            r"suggestion (?P<id>\S+) is stale: conflict (?P<conflict>\d+) is already settled",
            "建议 {id} 已过时：冲突 {conflict} 已经了结",
        ),
        (r"suggestion (?P<id>\S+) is stale: the set has no dispute", "建议 {id} 已过时：该矛盾簇已没有争议"),
        (
            r"suggestion (?P<id>\S+) is stale: the set changed since the report \(now (?P<now>\S+); run health again\)",
            "建议 {id} 已过时：报告之后该矛盾簇有了变化（现在是 {now}；请重新运行健康检查）",
        ),
        (
            r"suggestion (?P<id>\S+) is stale: the set changed since the report \(it now needs a person: (?P<why>.+)\)",
            "建议 {id} 已过时：报告之后该矛盾簇有了变化（现在需要人来决定：{why}）",
        ),
        (r"suggestion (?P<id>\S+) needs a person: (?P<why>.+)", "建议 {id} 需要人来决定：{why}"),
        # a range that holds no time
        (
            rf"{_FIELD} \((?P<start>[^)]+)\) is after (?P<last>[a-z_]+) \((?P<end>[^)]+)\): the range holds no "
            r"time, so nothing could answer; swap them\?",
            "{field}（{start}）晚于{last}（{end}）：这个范围不含任何时间，不会有结果；要把两者对调吗？",
        ),
        (
            rf"{_FIELD} \((?P<start>[^)]+)\) is not before (?P<last>[a-z_]+) \((?P<end>[^)]+)\): the range "
            r"\[[a-z_]+, [a-z_]+\) holds no time, so nothing could answer; swap them\?",
            "{field}（{start}）不早于{last}（{end}）：这个范围不含任何时间，不会有结果；要把两者对调吗？",
        ),
        # a conversation's working set, which has no past
        (
            r"conversation (?P<sent>.+) has no past: its working notes are not kept as of a point\. Clear the "
            r"conversation to search the past, or clear the time-travel point to see it now",
            "对话 {sent} 没有过去：它的工作记忆不按时间点保存。清除对话即可搜索过去，或清除时间点以查看现在",
        ),
        (
            r"session_only asks a conversation's working set, which has no past: ask without an as-of point",
            "session_only 查询的是一个对话的工作集，它没有过去：请不带时间点查询",
        ),
        # the working tier and promotion
        (
            rf"memory {_ID} is not a working note: it is long-term already",
            "记忆 {id} 不是工作记忆：它已经是长期记忆",
        ),
        (
            rf"memory {_ID} is a working note, not long-term memory: promote it first",
            "记忆 {id} 是工作记忆，不是长期记忆：请先转为长期记忆",
        ),
        (
            r"#(?P<id>\d+) was already promoted: it is long-term memory #(?P<long>\d+)",
            "#{id} 已经转为长期记忆：它是长期记忆 #{long}",
        ),
        (
            r"#(?P<id>\d+) is a long-term memory: only working memories take this",
            "#{id} 是长期记忆：只有工作记忆才能这样操作",
        ),
        (
            r"#(?P<id>\d+) expired with its idle conversation \(still in history\)",
            "#{id} 已随闲置的对话过期（仍在历史中）",
        ),
        (
            r"#(?P<id>\d+) is a working memory: this is a long-term act \(promote it first\)",
            "#{id} 是工作记忆：这是长期记忆的操作（请先转为长期记忆）",
        ),
        (
            r"#(?P<id>\d+) is a working memory: this is a long-term act \(it was promoted: act on #(?P<long>\d+)\)",
            "#{id} 是工作记忆：这是长期记忆的操作（它已转为长期记忆：请对 #{long} 操作）",
        ),
        (
            r"#(?P<id>\d+) is a working memory: this is a long-term act \(it is (?P<status>[a-z]+)\)",
            "#{id} 是工作记忆：这是长期记忆的操作（它的状态是“{status}”）",
        ),
        (rf"memory {_ID} is erased", "记忆 {id} 已被永久删除"),
        # what a console action names that is not there, or not so any more
        (rf"conflict {_ID} is already resolved", "冲突 {id} 已经解决"),
        (
            rf"memory {_ID} is not a member of conflict (?P<conflict>\d+)",
            "记忆 {id} 不是冲突 {conflict} 的成员",
        ),
        (
            rf"pins name memory {_ID}, not a member of conflict (?P<conflict>\d+)",
            "固定版本指定的记忆 {id} 不是冲突 {conflict} 的成员",
        ),
        (rf"pins name memory {_ID}, not a member of the conflict", "固定版本指定的记忆 {id} 不是该冲突的成员"),
        (
            r"a memory cannot supersede itself: name another memory as the winner",
            "记忆不能取代它自己：请指定另一条记忆为胜者",
        ),
        (r"no action (?P<sent>.+)", "没有操作 {sent}"),
        (r"decision must be accept or reject", "决定必须是 accept 或 reject"),
        (r"status is empty \(current memories\) or all", "状态须为空（当前记忆）或 all"),
        (r"export format is jsonl or csv", "导出格式为 jsonl 或 csv"),
        (
            rf"{_FIELD} must be a number from 1 to (?P<most>\d+); narrow the filters to go further",
            "{field}必须是 1 到 {most} 之间的数字；要看得更多，请缩小筛选范围",
        ),
        (
            rf"{_FIELD} holds what looks like a credential \((?P<kind>[^,]+), "
            r"characters (?P<start>\d+)–(?P<end>\d+)\); nothing was "
            r"written: a [a-z_]+ stays in the log for good, so leave the credential out",
            "{field}中似乎有凭据（{kind}，第 {start}–{end} 个字符）；没有写入任何内容：{field}会永久留在日志中，"
            "请去掉凭据",
        ),
        # the health report's suggestions, undo and entity aliases
        (
            r"suggestion_id is not a suggestion of the health report",
            "建议编号不是健康报告中的建议",
        ),
        (
            r"no rule decides this set: a person chooses on its conflict page",
            "没有规则能决定这个矛盾簇：请在它的冲突页面上由人来选择",
        ),
        (
            r"(?P<change>change @\d+ \(\S+\)) is an undo; apply the suggestion again instead",
            "{change} 本身是一次撤销；请改为再次应用该建议",
        ),
        (
            r"(?P<change>change @\d+ \(\S+\)) was already undone by (?P<by>.+)",
            "{change} 已被 {by} 撤销",
        ),
        (
            rf"memory {_ID} changed since (?P<change>change @\d+ \(\S+\)) \(now (?P<status>[a-z]+)\); undo would "
            r"overwrite that",
            "记忆 {id} 在 {change} 之后有了变化（现在是“{status}”）；撤销会覆盖这一变化",
        ),
        (
            rf"memory {_ID}, the winner of (?P<change>change @\d+ \(\S+\)), is (?P<status>[a-z]+) since; undo "
            r"would re-open the set led by it",
            "记忆 {id} 是 {change} 的胜者，之后已变为“{status}”；撤销会重新打开以它为首的矛盾簇",
        ),
        (
            rf"memory {_ID}, the winner of (?P<change>change @\d+ \(\S+\)), no longer states the value it won "
            r"with; undo would re-open the set with a value it does not hold",
            "记忆 {id} 是 {change} 的胜者，但已不再陈述它胜出时的值；撤销会以它不再持有的值重新打开矛盾簇",
        ),
        (
            r"claim set (?P<conflict>\d+) opened on this fact since (?P<change>change @\d+ \(\S+\)); settle it "
            r"first \(an undo would leave two open sets for one fact\)",
            "自 {change} 之后，这一事实上打开了矛盾簇 {conflict}；请先了结它（撤销会让同一事实有两个未决的矛盾簇）",
        ),
        (
            r"(?P<alias>'.*') and (?P<canonical>'.*') are already one key",
            "{alias} 和 {canonical} 已经是同一个键",
        ),
        (
            r"(?P<alias>'.*') and (?P<canonical>'.*') are already rejected",
            "{alias} 和 {canonical} 已经被拒绝合并",
        ),
        (r"(?P<canonical>'.*') is already an alias of (?P<alias>'.*')", "{canonical} 已经是 {alias} 的别名"),
        (
            r"alias and canonical must be two different non-empty names",
            "别名和规范名称必须是两个不同的非空名称",
        ),
        # the end of a day (24:00), which the calendar takes as the next day's 00:00
        (
            rf"{_FIELD} is (?P<sent>'.*'), the end of a day \(24:00\), which is not taken: "
            r"write the next day's 00:00 \((?P<instead>\S+)\), the same instant",
            "{field} {sent} 是一天的结束（24:00），不能这样写：请写下一天的 00:00（{instead}），是同一时刻",
        ),
        (
            rf"{_FIELD} is (?P<sent>'.*'), the end of a day \(24:00\), which is not taken: "
            r"write a time within the years 1 to 9999",
            "{field} {sent} 是一天的结束（24:00），不能这样写：请写公元 1 年到 9999 年之间的时间",
        ),
        # a time out of range
        (
            rf"{_FIELD} is out of range: (?P<sent>.+) falls outside the years 1 to 9999 in UTC",
            "{field}超出范围：{sent} 换算为 UTC 后不在公元 1 年到 9999 年之间",
        ),
        (
            rf"{_FIELD} is before (?P<floor>[\d-]+): state older history in the content",
            "{field}早于 {floor}：更早的历史请写在内容里",
        ),
        (
            rf"{_FIELD} is more than (?P<s>[\d.e+]+) s ahead of now: a planned event belongs in the content, "
            r"not in the fact's event_time",
            "{field}比现在晚了 {s} 秒以上：计划中的事件请写在内容里，而不是作为事实的 event_time",
        ),
        # an unknown id
        (rf"no memory {_ID}", "没有记忆 {id}"),
        (rf"no conflict {_ID}", "没有冲突 {id}"),
        (rf"no notice {_ID}", "没有提示 {id}"),
        (r"no change (?P<id>.+)", "没有变更 {id}"),
        (r"no such change among the latest ones", "最近的变更中没有这一项"),
        (
            r"no suggestion (?P<id>\S+): its conflict (?P<conflict>\d+) is not in this ledger",
            "没有建议 {id}：它的冲突 {conflict} 不在此账本中",
        ),
        # a version conflict
        (
            rf"memory {_ID} is at version (?P<now>\d+), not (?P<expected>\d+)",
            "记忆 {id} 现在是版本 {now}，不是版本 {expected}",
        ),
        (
            rf"memory {_ID} is at version (?P<now>\d+), the judgment pinned (?P<pinned>\d+)",
            "记忆 {id} 现在是版本 {now}，评判固定的是版本 {pinned}",
        ),
        # locked
        (
            rf"memory {_ID} is (?P<protection>locked|protected); (?P<what>this change|retracting it) needs "
            r"authorized: true",
            "记忆 {id} {protection}；此更改需要 authorized: true",
        ),
        (
            rf"memory {_ID} is locked and policy locked_requires_user_channel accepts changes only through a user "
            r"channel \(the CLI or a user-answered prompt\)",
            "记忆 {id} 已锁定，策略 locked_requires_user_channel 只接受经由用户渠道的更改（命令行或用户回答的提示）",
        ),
        # not authorised
        (
            r"this action changes governed state; it needs authorized: true",
            "此操作会改变受治理的状态，需要 authorized: true",
        ),
        (
            r"(?P<name>[a-z_]+) needs authorized: true \(only when the user asked for it\)",
            "{name} 需要 authorized: true（仅当用户要求时）",
        ),
        (
            r"erase is the user's own act: run ledger erase, use the console, or answer the client's confirmation; "
            r"an agent's authorized: true is not enough\. Nothing was erased",
            "永久删除只能由用户本人执行：运行 ledger erase、使用控制台，或回答客户端的确认；"
            "代理的 authorized: true 不够。没有删除任何内容",
        ),
        # erased already, or no longer current
        (rf"memory {_ID} is erased already", "记忆 {id} 已被永久删除"),
        (
            rf"memory {_ID} is erased: nothing of it is left to (?P<action>[a-z]+)",
            "记忆 {id} 已被永久删除：没有留下任何内容可以{action}",
        ),
        (rf"memory {_ID} is (?P<status>[a-z]+), no longer current", "记忆 {id} 的状态是“{status}”，不再是当前记忆"),
    )
)


def refusal_translator(lang: str) -> Callable[[object], str]:
    """``te(message)``: a refusal's message in the chosen language (as written when no pattern
    holds it, and always in English: the facade's words)."""
    return catalogue_translator(lang, REFUSALS, lambda group, value: _word(group, value, lang))


def _word(group: str, value: str, lang: str) -> str:
    """A group of a refusal as the page says it: a field by its label, an action by its button's
    name, a status or protection by its word; anything else (what was sent, an id) as it is."""
    index = LANGUAGES.index(lang)
    if group in ("field", "last", "action"):
        pair = STRINGS.get(value)
        return pair[index] if pair else value
    if group in ("status", "protection"):
        pair = VALUES.get(value)
        return pair[index] if pair else value
    return value
