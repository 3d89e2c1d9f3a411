"""The console's words in English and Chinese. Ledger content is shown as written, never translated.

A missing key falls back to English, then to the key itself, so a new label never breaks a page;
``tests/console`` checks that both languages name every key.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fact_ledger.ledger.decide import ENDED, LEFT_BY_RETRACTION, REINSTATED, RETRACTED, RETRACTED_BY_WORDS
from fact_ledger.ledger.govern import KEPT_ALL
from fact_ledger.ledger.settlement import CHANGE_REASON, POLICY_REASON
from fact_ledger.server.app.hindsight import UNDO_PREFIX

LANGUAGES = ("en", "zh")

STRINGS: dict[str, tuple[str, str]] = {
    "title": ("Fact ledger console", "事实账本控制台"),
    "overview": ("Overview", "概览"),
    "memories": ("Memories", "记忆"),
    "memory": ("Memory", "记忆"),
    "conflicts": ("Conflicts", "冲突"),
    "conflict": ("Conflict", "冲突"),
    "timeline": ("Timeline", "时间线"),
    "audit": ("Audit", "审计"),
    "doctor": ("Doctor", "诊断"),
    "settings": ("Settings", "设置"),
    "health": ("Health", "健康"),
    "health_intro": (
        "A read-only pass over the whole memory: contradiction clusters with a suggested settlement each. "
        "Nothing is applied until you apply it, and every change can be undone in one step.",
        "对全部记忆的只读检查：矛盾簇及每簇的建议了结方案。你应用之前不会改动任何内容，每次更改都可一步撤销。",
    ),
    "health_clusters": ("Contradiction clusters", "矛盾簇"),
    "health_in_clusters": ("Memories in them", "其中的记忆"),
    "health_needs_person": ("Need a person", "需要人来决定"),
    "health_absorbed": ("Repeats absorbed per 1,000 writes", "每千次写入吸收的重复"),
    "health_near_groups": ("Near-duplicate groups", "近似重复组"),
    "health_superseded_ratio": ("Superseded or retired share", "已取代或停用的比例"),
    "health_stale": ("Stale (cooled for disuse)", "陈旧（因未使用而冷却）"),
    "health_pass": ("Time of the pass", "检查用时"),
    "health_members_values": ("{n} memories, {v} values", "{n} 条记忆，{v} 个值"),
    "health_members_values_one": ("{n} memory, {v} values", "{n} 条记忆，{v} 个值"),
    "health_value": ("Value", "值"),
    "health_trend": ("Over time", "随时间变化"),
    "health_find_latency": ("Search latency measured by this console", "本控制台测得的搜索延迟"),
    "health_passes": ("{n} recorded passes", "{n} 次已记录的检查"),
    "health_no_trend": (
        "The trend appears after two recorded passes (ledger serve records one daily; ledger health --record now).",
        "记录两次检查后显示趋势（ledger serve 每天记录一次；ledger health --record 立即记录）。",
    ),
    "health_sources": ("Sources", "来源"),
    "health_suggest_settle": (
        "Suggestion: #{winner} wins by {rule}; {n} memories holding another value would be superseded.",
        "建议：#{winner} 依据{rule}胜出；持有其他值的 {n} 条记忆将被取代。",
    ),
    "health_suggest_settle_one": (
        "Suggestion: #{winner} wins by {rule}; {n} memory holding another value would be superseded.",
        "建议：#{winner} 依据{rule}胜出；持有其他值的 {n} 条记忆将被取代。",
    ),
    "health_needs_person_line": (
        "No rule decides: a person chooses on the conflict page.",
        "没有规则能决定：请在冲突页面由人选择。",
    ),
    "health_apply": ("Apply the suggestion", "应用建议"),
    "health_changes": ("Changes", "更改"),
    "health_superseded": ("Superseded", "被取代"),
    "health_reinstated": ("Reinstated", "已恢复"),
    "health_changed_memories": ("Memories it changed", "改动的记忆"),
    "health_undo": ("Undo", "撤销"),
    "health_undone": ("undone", "已撤销"),
    "change_apply_suggestion": ("suggestion applied", "已应用建议"),
    "change_undo": ("undo", "撤销"),
    "apply_describe": (
        "Settle conflict #{conflict} for #{winner}: {n} memories holding another value are superseded, as one change.",
        "将冲突 #{conflict} 了结为 #{winner}：持有其他值的 {n} 条记忆被取代，作为一次更改。",
    ),
    "apply_describe_one": (
        "Settle conflict #{conflict} for #{winner}: {n} memory holding another value is superseded, as one change.",
        "将冲突 #{conflict} 了结为 #{winner}：持有其他值的 {n} 条记忆被取代，作为一次更改。",
    ),
    "undo_describe": (
        "Undo the change at position {position}: {n} memories are reinstated and conflict #{conflict} opens again.",
        "撤销位置 {position} 的更改：{n} 条记忆恢复，冲突 #{conflict} 重新打开。",
    ),
    "undo_describe_one": (
        "Undo the change at position {position}: {n} memory is reinstated and conflict #{conflict} opens again.",
        "撤销位置 {position} 的更改：{n} 条记忆恢复，冲突 #{conflict} 重新打开。",
    ),
    "will_be_reinstated": ("Will be reinstated", "将被恢复"),
    "health_aliases": ("Proposed aliases (one person or thing, two names)", "建议的别名（同一人或物的两个名字）"),
    "health_alias": ("Name", "名字"),
    "health_canonical": ("Means", "指的是"),
    "health_why": ("Why", "原因"),
    "health_alias_accept": ("Accept", "接受"),
    "health_alias_reject": ("Reject", "拒绝"),
    "alias_accept_describe": (
        "From now on claims about {alias} are about {canonical}: "
        "later statements about either name meet in one claim set.",
        "从现在起关于 {alias} 的陈述即关于 {canonical}：之后关于任一名字的陈述会进入同一个主张集。",
    ),
    "alias_reject_describe": (
        "{alias} is not {canonical}: the pair is never proposed again, and sets that met only through it part.",
        "{alias} 不是 {canonical}：不再建议这一对，仅因它相遇的主张集会分开。",
    ),
    "language": ("中文", "English"),
    "time_travel": ("Time travel", "时间旅行"),
    "as_of_recorded": ("As recorded by (position or time)", "截至记录（位置或时间）"),
    "as_of_event": ("As true at (event time)", "事件时间"),
    "apply": ("Go", "前往"),
    "back_to_now": ("Back to now", "回到现在"),
    "viewing_past": ("Viewing the past", "正在查看过去"),
    "present_at_end": (
        "This is the current state: the log ends at position {end}.",
        "这是当前状态：日志止于位置 {end}。",
    ),
    "degraded_banner": (
        "The database cannot be used right now: {reason}. Pages show what this machine already holds, "
        "and writes go to the JSONL backup until it takes writes again.",
        "数据库当前无法使用：{reason}。页面显示本机已有的内容，写入进入 JSONL 备份，直到数据库重新可写。",
    ),
    "degraded_banner_refused": (
        "The database cannot be used right now: {reason}. Pages show what this machine already holds, "
        "and every write is refused: the JSONL backup cannot be written either.",
        "数据库当前无法使用：{reason}。页面显示本机已有的内容，所有写入都被拒绝：JSONL 备份也无法写入。",
    ),
    "present_only": (
        "This page shows the present; time travel applies to memories, timelines and audit.",
        "本页显示当前状态；时间旅行适用于记忆、时间线和审计。",
    ),
    "counts_by_status": ("Memories by status", "按状态统计"),
    "counts_by_source": ("Current memories by source", "按来源统计"),
    "counts_by_workspace": ("Current memories by workspace", "按工作区统计"),
    "conflicts_by_state": ("Conflicts by state", "按状态统计冲突"),
    "open_conflicts": ("Open conflicts", "未决冲突"),
    "projection_lag": ("Projections", "投影"),
    "lag": ("lag", "滞后"),
    "pending_backup": ("Pending JSONL backup", "待重放的 JSONL 备份"),
    "pending_results": (
        "Written on this machine, waiting in the JSONL backup for the log",
        "本机已写入、在 JSONL 备份中等待写入日志",
    ),
    "pending_changes": (
        "Changes waiting in this machine's JSONL backup for the log",
        "本机 JSONL 备份中等待写入日志的更改",
    ),
    "pending_changes_intro": (
        "Not in the log yet: each is decided again when it replays, and may be refused then "
        "(another write changed the same fields later).",
        "尚未写入日志：重放时会重新判定，届时可能被拒绝（其他写入之后改了同样的字段）。",
    ),
    "backed_up_at": ("backed up at", "备份于"),
    "pending_no_id": ("pending: no id until it replays", "待重放：重放前没有编号"),
    # as status counts them: writes, each of one or more events
    "pending_writes": ("{n} writes ({e} events)", "{n} 次写入（{e} 个事件）"),
    "busy_banner": (
        "Busy: another process has held the write lock on {files} for over a second. Each write waits for "
        "it, then goes to the JSONL backup (or is refused when the backup cannot be written either). Let the "
        "process with the long write (a ledger serve, a script) finish.",
        "忙碌：另一个进程持有 {files} 的写锁已超过一秒。每次写入都会等待，然后进入 JSONL 备份"
        "（备份也无法写入时则被拒绝）。请让执行长时间写入的进程（ledger serve 或脚本）完成。",
    ),
    "pending_writes_one": ("1 write ({e} events)", "1 次写入（{e} 个事件）"),
    "none": ("none", "无"),
    "hash_chain": ("Hash chain", "哈希链"),
    "chain_head": ("head", "链头"),
    "not_checked": ("Not checked since the console started.", "控制台启动后尚未检查。"),
    "run_checks": ("Run the checks", "运行检查"),
    "checks_read_all": ("(recomputes the hash chain over the whole log)", "（对整个日志重新计算哈希链）"),
    "checked_at": ("Checked at", "检查时间"),
    "events": ("Events", "事件"),
    "search": ("Search", "搜索"),
    "query": ("Query", "查询"),
    "tags": ("Tags", "标签"),
    "source_type": ("Source", "来源"),
    "workspace": ("Workspace", "工作区"),
    "conversation": ("Conversation", "对话"),
    "working_memory": ("working memory", "工作记忆"),
    "working_note_intro": (
        "A working note: a provisional note of one conversation, not yet long-term memory. It meets no "
        "claims or conflicts and cannot be confirmed, retired or superseded; promote it to make it "
        "long-term. It can be erased for good as it is.",
        "工作记忆：某次对话中的临时笔记，尚未成为长期记忆。它不参与主张与冲突，不能确认、停用或取代；"
        "将其转为长期记忆后方可治理。它可以直接永久删除。",
    ),
    "working_note_erased": (
        "A working note of one conversation, erased for good: its text is gone; the record of its erasure stays.",
        "某次对话中的工作记忆，已永久删除：其文本已不存在，只保留删除记录。",
    ),
    "working_note_promoted": (
        "A working note of one conversation, promoted: the long-term memory it became is linked below; "
        "this note keeps what the conversation said.",
        "某次对话中的工作记忆，已转为长期记忆：下方链接到由它生成的长期记忆；本笔记保留对话中的原话。",
    ),
    "tier": ("Tier", "层级"),
    "sticky": ("sticky (never evicted)", "常驻（不会被逐出）"),
    "turn": ("turn", "轮次"),
    "promotion_score": ("Promotion score", "转长期得分"),
    "promoted_to": ("Promoted to", "已转为长期记忆"),
    "promoted_from": ("Promoted from working note", "转自工作记忆"),
    "promote": ("Promote to long-term memory", "转为长期记忆"),
    "action_promote": (
        "Promote working note #{id} to long-term memory: it is recorded as a long-term memory and meets "
        "claims and conflicts from then on.",
        "将工作记忆 #{id} 转为长期记忆：它将被记录为长期记忆，此后参与主张与冲突。",
    ),
    "status": ("Status", "状态"),
    "all": ("all", "全部"),
    "current_only": ("current", "当前"),
    "any": ("any", "任意"),
    "no_results": ("Nothing found.", "没有结果。"),
    "workspace_empty": (
        "Workspace “{name}” holds no memory: none was ever stored in it.",
        "工作区“{name}”中没有任何记忆：从未有记忆存入其中。",
    ),
    "workspace_nearest": ("Did you mean “{name}”?", "是否要找“{name}”？"),
    "next": ("Next", "下一页"),
    "previous": ("Previous", "上一页"),
    "page": ("Page", "页"),
    "trust": ("trust", "可信度"),
    "version": ("version", "版本"),
    "locked": ("locked", "已锁定"),
    "protected": ("protected", "受保护"),
    "in_conflict": ("in conflict", "存在冲突"),
    "content": ("Content", "内容"),
    "subject": ("Subject", "主题"),
    "confidence": ("Confidence", "置信度"),
    "protection": ("Protection", "保护"),
    "event_time": ("Event time", "事件时间"),
    "recorded_at": ("Recorded", "记录时间"),
    "valid_to": ("Valid until", "有效至"),
    "source_ref": ("Source ref", "来源引用"),
    "metadata": ("Metadata", "元数据"),
    "versions": ("Versions", "版本"),
    "changed": ("changed", "已更改"),
    "links": ("Links", "关联"),
    "supersedes": ("Supersedes", "取代了"),
    "superseded_by": ("Superseded by", "被取代于"),
    "retracts": ("Retracts", "撤回了"),
    "retired_by": ("Retired by", "被停用于"),
    "near_duplicates": ("Near-duplicates", "近似重复"),
    "similarity": ("similarity", "相似度"),
    "members": ("Members", "成员"),
    "more_members": ("and {n} more", "另有 {n} 条"),
    "left_set": ("left the set", "已离开此冲突"),
    "claim": ("Claim", "主张"),
    "state": ("State", "状态"),
    "verdict": ("Verdict", "裁决"),
    "rule": ("Rule", "规则"),
    "decided_by": ("decides", "起决定作用"),
    "winner": ("winner", "胜出"),
    "manual_review": ("Manual review needed", "需要人工审核"),
    "judgments": ("Judgments", "评判"),
    "rationale": ("Rationale", "理由"),
    "pins": ("Pinned versions", "固定版本"),
    "history": ("History", "历史"),
    "position": ("Position", "位置"),
    "type": ("Type", "类型"),
    "actor": ("Actor", "操作者"),
    "client": ("Client", "客户端"),
    "since": ("Since", "起始"),
    "memory_id": ("Memory id", "记忆编号"),
    # the fields an error page names (error.field), beside those above
    "conflict_id": ("Conflict id", "冲突编号"),
    "cursor": ("Page cursor", "翻页游标"),
    "session": ("Conversation", "对话"),  # the Memories filter's field, named in its refusals
    "suggestion_id": ("Suggestion id", "建议编号"),
    "change_id": ("Change id", "变更编号"),
    "decision": ("Decision", "决定"),
    "action": ("Action", "操作"),
    "as_of": ("Point in time", "时间点"),
    "as_of_event_time": ("Event time", "事件时间"),
    "loser_id": ("Memory id", "记忆编号"),
    "format": ("Format", "格式"),
    "alias": ("Alias", "别名"),
    "canonical": ("Canonical name", "规范名称"),
    "error_field": ("field", "字段"),
    "until": ("Until", "截止"),
    "hash": ("Hash", "哈希"),
    "export": ("Export", "导出"),
    "filter": ("Filter", "筛选"),
    "severity": ("Severity", "严重程度"),
    "check": ("Check", "检查项"),
    "message": ("Message", "信息"),
    "setting": ("Setting", "设置项"),
    "value": ("Value", "值"),
    "from_where": ("From", "来源"),
    "valid_from": ("Valid from", "有效自"),
    "timeline_for": ("Subject or memory id", "主题或记忆编号"),
    "show": ("Show", "显示"),
    "ongoing": ("ongoing", "持续"),
    "govern": ("Govern", "治理"),
    "confirm": ("Confirm", "确认"),
    "retire": ("Retire", "停用"),
    "erase": ("Erase for good", "永久删除"),
    "supersede": ("Supersede", "取代"),
    "resolve": ("Resolve: this one wins", "解决：此条胜出"),
    "keep_both": ("Keep both", "保留两者"),
    "judge": ("Judge: this one wins", "评判：此条胜出"),
    "unlock": ("Unlock", "解锁"),
    "reason": ("Reason", "原因"),
    "winner_id": ("Winner memory id", "胜出记忆编号"),
    "are_you_sure": ("Please confirm", "请确认"),
    "yes_do_it": ("Yes, record it", "是的，记录"),
    "cancel": ("Cancel", "取消"),
    "done": ("Recorded.", "已记录。"),
    "nothing_changed": (
        "Nothing was changed: it already was so. Nothing was recorded.",
        "未做任何更改：它本来就是这样。未记录任何内容。",
    ),
    "refused": ("Refused", "被拒绝"),
    "erased_title": ("Memory #{id} erased", "记忆 #{id} 已永久删除"),
    "erased_rows": (
        "{n} rows of the log were cleared; the Erased event is at position {position} (head {hash}).",
        "日志中有 {n} 行被清除；删除事件位于位置 {position}（链头 {hash}）。",
    ),
    "erased_rows_one": (
        "1 row of the log was cleared; the Erased event is at position {position} (head {hash}).",
        "日志中有 1 行被清除；删除事件位于位置 {position}（链头 {hash}）。",
    ),
    "receipt_note": (
        "Keep this receipt: ledger verify --receipt FILE proves against the log, on this machine or "
        "any machine of the team, that the erasure happened and what it cleared.",
        "请保存此回执：ledger verify --receipt FILE 可在本机或团队任一台机器上对照日志证明删除已发生以及清除了什么。",
    ),
    "download_receipt": ("Download the receipt", "下载回执"),
    "back_to_memory": ("Back to memory #{id}", "返回记忆 #{id}"),
    "recorded_as_user": (
        "Recorded as you (user channel, client console).",
        "以您的身份记录（用户渠道，客户端 console）。",
    ),
    "not_found": ("Not found", "未找到"),
    "action_confirm": (
        "Confirm memory #{id}: it becomes user_confirmed and locked.",
        "确认记忆 #{id}：它将成为用户确认并被锁定。",
    ),
    "action_unlock": ("Unlock memory #{id}.", "解锁记忆 #{id}。"),
    "action_retire": ("Retire memory #{id}.", "停用记忆 #{id}。"),
    "action_erase": (
        "Erase memory #{id} for good: its text leaves the log, the indexes, the caches and the backup; "
        "only a record that it was erased (when, by whom, why) stays.",
        "永久删除记忆 #{id}：其文本将从日志、索引、缓存和备份中移除；只保留删除记录（时间、操作者、原因）。",
    ),
    "action_supersede": ("Memory #{winner} supersedes memory #{id}.", "记忆 #{winner} 取代记忆 #{id}。"),
    "action_resolve": (
        "Resolve conflict #{id}: memory #{winner} wins, the others are superseded.",
        "解决冲突 #{id}：记忆 #{winner} 胜出，其余被取代。",
    ),
    "action_keep_both": ("Resolve conflict #{id}: keep every member.", "解决冲突 #{id}：保留所有成员。"),
    "action_keep_all": ("Resolve conflict #{id}: keep every member's value.", "解决冲突 #{id}：保留每个成员的值。"),
    "keep_all_n": ("Keep all {n}", "保留全部 {n} 条"),
    "will_win": ("Wins", "胜出"),
    "will_be_superseded": ("Will be superseded", "将被取代"),
    "the_memory": ("Memory", "记忆"),
    "guarded_warning": (
        "#{id} is a fact a person confirmed or locked: this supersedes it.",
        "#{id} 是经人确认或锁定的事实：此操作将取代它。",
    ),
    "guarded_intent": (
        "I mean to supersede what a person confirmed or locked.",
        "我确认要取代经人确认或锁定的事实。",
    ),
    "changed_since_shown": (
        "Nothing was recorded: what this action touches changed since the page was shown. Check it again.",
        "未记录任何内容：自页面显示以来，此操作涉及的内容已有变化。请再次核对。",
    ),
    "guarded_needed": (
        "Nothing was recorded: tick the box to supersede a memory a person confirmed or locked.",
        "未记录任何内容：如要取代经人确认或锁定的记忆，请勾选确认框。",
    ),
    "standing_leader": ("leads conflict #{c}", "在冲突 #{c} 中领先"),
    "standing_challenger": ("challenges #{leader} in conflict #{c}", "在冲突 #{c} 中挑战 #{leader}"),
    "standing_open": ("in conflict #{c}, no leader", "在冲突 #{c} 中，无领先者"),
    "pin_item": ("#{id} v{version}", "#{id} 第 {version} 版"),
    "leads": ("leads", "领先"),
    "judged_winner": ("judged winner", "评判胜出"),
    "verdict_leads": ("#{id} leads by {rule}.", "#{id} 依据「{rule}」领先。"),
    "verdict_no_leader": (
        "No rule separates the best members: a person should decide.",
        "没有规则能区分最靠前的成员：需要人来决定。",
    ),
    "verdict_won": ("#{id} won: {by}.", "#{id} 胜出：{by}。"),
    "verdict_won_rule": ("#{id} won: {by} ({rule}).", "#{id} 胜出：{by}（{rule}）。"),
    "verdict_kept_all": ("Every value stands (keep all).", "所有值均保留（全部保留）。"),
    "verdict_no_winner": ("Settled ({by}); no member won.", "已了结（{by}）；没有成员胜出。"),
    "verdict_judgment": (
        "Judgment {jid}: #{id} should win (guidance; no memory changed).",
        "评判 {jid}：#{id} 应胜出（仅为指导，未改变任何记忆）。",
    ),
    "verdict_rules_favour": (
        "The rules alone favour #{id}; the set was settled otherwise.",
        "仅按规则会选 #{id}；此冲突已按其他方式了结。",
    ),
    "rules_now": ("The rules, as the members stand now", "按成员当前状态的规则比较"),
    "tie": ("tie ({label} on both sides)", "平局（双方均为 {label}）"),
    "tie_pair": ("tie ({a} and {b} rank the same)", "平局（{a} 与 {b} 等级相同）"),
    "wins_rule_1": ("{w} is {wl}, {l} is {ll}", "{w} 为 {wl}，{l} 为 {ll}"),
    "wins_event_time": ("{w} has the newer event time ({wl} > {ll})", "{w} 的事件时间更新（{wl} > {ll}）"),
    "wins_source_type": ("{w} comes from the more trusted source ({wl} > {ll})", "{w} 的来源更可信（{wl} > {ll}）"),
    "wins_confidence": ("{w} has the higher confidence ({wl} > {ll})", "{w} 的置信度更高（{wl} > {ll}）"),
    "wins_ingest_time": ("{w} was recorded later ({wl} > {ll})", "{w} 记录得更晚（{wl} > {ll}）"),
    "bad_time_point": (
        "The time-travel point is not valid; showing the present.",
        "时间旅行的时间点无效；显示当前状态。",
    ),
    "action_judge": (
        "Judge conflict #{id}: memory #{winner} should win (no memory changes).",
        "评判冲突 #{id}：记忆 #{winner} 应胜出（不改变任何记忆）。",
    ),
}


# Values the ledger stores as identifiers (statuses, states, sources, protections, rules, ...):
# shown as words in the chosen language, the identifier itself in the English column.
VALUES: dict[str, tuple[str, str]] = {
    "active": ("active", "当前"),
    "superseded": ("superseded", "已被取代"),
    "retired": ("retired", "已停用"),
    "archived": ("archived", "已归档"),
    "erased": ("erased", "已删除"),
    "promoted": ("promoted", "已转为长期"),
    "expired": ("expired", "已过期"),
    "open": ("open", "未决"),
    "judged": ("judged", "已评判"),
    "resolved": ("resolved", "已解决"),
    "all": ("all", "全部"),
    "user_confirmed": ("user_confirmed", "用户确认"),
    "user_confirmed (agent_asserted)": ("user_confirmed (agent_asserted)", "用户确认（代理声称）"),
    "document_extracted": ("document_extracted", "文档提取"),
    "agent_generated": ("agent_generated", "代理生成"),
    "unknown": ("unknown", "未知"),
    "normal": ("normal", "普通"),
    "locked": ("locked", "已锁定"),
    "protected": ("protected", "受保护"),
    "ok": ("ok", "正常"),
    "info": ("info", "提示"),
    "warning": ("warning", "警告"),
    "critical": ("critical", "严重"),
    "winner": ("winner chosen", "选定胜者"),
    "keep_both": ("keep both", "保留两者"),
    "keep_all": ("keep all", "全部保留"),
    "policy": ("policy auto_settle", "策略自动了结"),
    "dissolved": ("dissolved", "已消解"),
    "rules": ("the rules", "规则"),
    "resolve_conflict": ("chosen by a person (resolve)", "由人选定（解决）"),
    "manual": ("chosen by a person", "由人选定"),
    "user": ("the user's decision", "用户的决定"),  # a promotion's rule (ledger.promotion.USER_RULE)
    "arbitrate": ("arbitration applied", "已应用仲裁"),
    "supersede": ("the other value was superseded", "另一个值已被取代"),
    "retire": ("the other value was retired", "另一个值已被停用"),
    "erase": ("the other value was erased", "另一个值已被永久删除"),
    "user_confirmed/locked protection": ("user_confirmed/locked protection", "用户确认/锁定保护"),
    "event_time": ("event_time", "事件时间"),
    "source_type": ("source_type", "来源类型"),
    "confidence": ("confidence", "置信度"),
    "ingest_time": ("ingest_time", "录入时间"),
    "leader": ("leader", "领先"),
    "challenger": ("challenger", "挑战者"),
    "default": ("default", "默认"),
    "env": ("env", "环境变量"),
    "file": ("file", "配置文件"),
    "flag": ("flag", "命令行参数"),
    "process": ("this process", "本进程"),  # a value the console sets itself (client: console)
    "true": ("yes", "是"),
    "false": ("no", "否"),
    "none": ("none", "无"),
    # who authorised an act (ledger.log.events AUTH_*); "policy" is above
    "user_channel": ("user_channel", "用户渠道"),
    "agent_asserted": ("agent_asserted", "代理声称"),
}


# Fixed vocabularies the pages name, each shown in the chosen language (the identifier itself in
# the English column, so an English page keeps the names the docs and the audit filter use).
TERMS: dict[str, dict[str, tuple[str, str]]] = {
    "error": {  # an error page's code, said as a phrase (the facade's message stays as written)
        "error": ("error", "错误"),
        "invalid_input": ("invalid input", "输入无效"),
        "not_found": ("not found", "未找到"),
        "locked": ("locked", "已锁定"),
        "version_conflict": ("version conflict", "版本冲突"),
        "forbidden_workspace": ("another workspace", "其他工作区"),
        "unauthorized": ("not authorized", "未授权"),
        "unavailable": ("the database is unavailable", "数据库不可用"),
        "chain_broken": ("the hash chain is broken", "哈希链已断裂"),
    },
    "role": {  # how an event touched the memory on its page
        "stream": ("this memory", "本记忆"),
        "winner": ("the winner", "胜出方"),
        "loser": ("the loser", "落败方"),
        # the field of another memory's event that names this one
        "members": ("a member", "成员"),
        "member": ("a member", "成员"),
        "ref": ("referred to", "被引用"),
        "by": ("by this memory", "由本记忆"),
        "left": ("one side", "一方"),
        "right": ("one side", "一方"),
        "long_term": ("the long-term memory", "长期记忆"),
        "promoted_from": ("the note promoted", "被提升的笔记"),
        "superseded": ("superseded", "被取代"),
        "pins": ("pinned", "被固定"),
        "memory": ("this memory", "本记忆"),
    },
    "event": {
        "MemoryRecorded": ("MemoryRecorded", "记录"),
        "MemoryUpdated": ("MemoryUpdated", "更新"),
        "DuplicateSighted": ("DuplicateSighted", "重复出现"),
        "Restated": ("Restated", "重述"),
        "Confirmed": ("Confirmed", "确认"),
        "MemoryUnlocked": ("MemoryUnlocked", "解锁"),
        "MemoryRetired": ("MemoryRetired", "停用"),
        "MemoryArchived": ("MemoryArchived", "归档"),
        "Superseded": ("Superseded", "被取代"),
        "ClaimCollided": ("ClaimCollided", "主张冲突"),
        "ConflictMemberLeft": ("ConflictMemberLeft", "离开冲突"),
        "JudgmentSubmitted": ("JudgmentSubmitted", "提交评判"),
        "ConflictResolved": ("ConflictResolved", "冲突已解决"),
        "ConflictReopened": ("ConflictReopened", "冲突重新打开"),
        "Reinstated": ("Reinstated", "恢复"),
        "ChangeRecorded": ("ChangeRecorded", "记录更改"),
        "WorkspaceAliasSet": ("WorkspaceAliasSet", "设置工作区别名"),
        "EntityAliasSet": ("EntityAliasSet", "设置实体别名"),
        "HealthChecked": ("HealthChecked", "健康检查"),
        "NoticeReviewed": ("NoticeReviewed", "审阅提示"),
        "WorkingNoted": ("WorkingNoted", "记下工作记忆"),
        "WorkingRepeated": ("WorkingRepeated", "工作记忆重复"),
        "WorkingRevised": ("WorkingRevised", "修改工作记忆"),
        "Reinforced": ("Reinforced", "强化"),
        "Promoted": ("Promoted", "转为长期"),
        "WorkingExpired": ("WorkingExpired", "工作记忆过期"),
        "Cooled": ("Cooled", "冷却"),
        "Warmed": ("Warmed", "回暖"),
        "Erased": ("Erased", "永久删除"),
        "WriteReplayed": ("WriteReplayed", "重放写入"),
    },
    "reason": {  # the reasons the ledger itself records (a person's own reason is shown as written)
        RETRACTED: (RETRACTED, "已撤回"),
        RETRACTED_BY_WORDS: (RETRACTED_BY_WORDS, "已撤回：一条取消按字词找到了它"),
        ENDED: (ENDED, "已撤回：后来的一条记忆说它的值不再成立"),
        REINSTATED: (REINSTATED, "取代它的记忆已被撤回"),
        LEFT_BY_RETRACTION: (LEFT_BY_RETRACTION, "被后来的记忆撤回"),
        "erased": ("erased", "已永久删除"),
        KEPT_ALL: (KEPT_ALL, "保留全部值"),
    },
    "settled_by": {  # a policy's settlement: its reason is the prefix and the deciding rule
        POLICY_REASON: (POLICY_REASON, "依策略 auto_settle 了结："),
        CHANGE_REASON: (CHANGE_REASON, "依策略 settle_changes 了结："),
    },
    "degraded": {  # why storage is degraded (server/app/storage_errors.py: REASONS, and NotALedger's)
        "log_unreachable": ("the team log cannot be reached", "无法连接团队日志"),
        "locked": ("the database is locked by another process", "数据库被另一个进程锁定"),
        "read_only": ("the database is read-only", "数据库为只读"),
        "disk_full": ("the disk is full", "磁盘已满"),
        "corrupt": ("the database file is damaged", "数据库文件已损坏"),
        "cant_open": ("the database cannot be opened", "无法打开数据库"),
        "io_error": ("the disk reported an I/O error", "磁盘报告输入输出错误"),
        "missing": ("there is no ledger at the path", "该路径下没有账本"),
        "not_a_ledger": ("the file is not a ledger", "该文件不是账本"),
    },
    "check": {  # the doctor's checks (server/doctor.py: one per check_ function)
        "integrity": ("integrity", "完整性"),
        "hash_chain": ("hash_chain", "哈希链"),
        "projection_lag": ("projection_lag", "投影滞后"),
        "read_models_head": ("read_models_head", "读模型链头"),
        "agent_asserted_confirmations": ("agent_asserted_confirmations", "代理声称的确认"),
        "open_conflicts": ("open_conflicts", "未决冲突"),
        "conflicts_with_inactive_members": ("conflicts_with_inactive_members", "含非当前成员的冲突"),
        "pending_backup": ("pending_backup", "待重放的备份"),
        "erasures_unfinished": ("erasures_unfinished", "未完成的删除"),
        "writable": ("writable", "可写"),
        "semantic_search": ("semantic_search", "语义检索"),
    },
}


# Doctor's messages (server/doctor.py, server/app/semantic.py) in Chinese, each whole message a
# pattern: the healthy state and the common warnings. A message that carries another's words (a
# degraded ledger's cause, a broken chain's detail) has no pattern and is shown as written.
CHECK_MESSAGES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), zh)
    for pattern, zh in (
        (r"SQLite quick_check passed", "SQLite 快速检查（quick_check）通过"),
        (r"hash chain intact over (?P<n>\d+) events", "哈希链完整，共 {n} 个事件"),
        (r"every projection is caught up", "所有投影都已跟上日志"),
        (
            r"projections behind the log: (?P<names>.+); reopen or run ledger rebuild",
            "投影落后于日志：{names}；请重新打开或运行 ledger rebuild",
        ),
        (r"the read models hold nothing the log does not", "读模型中没有日志之外的内容"),
        (r"every erasure is finished", "所有永久删除都已完成"),
        (
            r"(?P<n>\d+) erased memories may still show their words in the read models \(an erasure did not "
            r"finish\); every open of the ledger tries again: run any ledger command when nothing else writes to it",
            "{n} 条已删除记忆的文字可能仍留在读模型中（某次删除未完成）；每次打开账本都会重试："
            "请在没有其他写入时运行任一 ledger 命令",
        ),
        (r"every user_confirmed fact was confirmed through a user channel", "每条用户确认的事实都经由用户渠道确认"),
        (
            r"(?P<n>\d+) user_confirmed fact\(s\) were confirmed only by an agent \(agent_asserted\); confirm them "
            r"from the CLI \(ledger confirm ID\) or retire them",
            "{n} 条用户确认的事实仅由代理确认（agent_asserted）；请在命令行确认（ledger confirm ID）或停用它们",
        ),
        (r"no open conflicts", "没有未决冲突"),
        (
            r"(?P<o>\d+) open and (?P<j>\d+) judged conflict\(s\) await a decision \(ledger conflicts\)",
            "{o} 个未决、{j} 个已评判的冲突等待决定（ledger conflicts）",
        ),
        (r"every unresolved conflict is between current memories", "每个未解决的冲突都在当前记忆之间"),
        (r"the log and the read models take writes", "日志和读模型都可以写入"),
        (r"no backed-up writes await replay", "没有等待重放的备份写入"),
        (
            r"(?P<n>\d+) backed-up write\(s\) \((?P<e>\d+) event\(s\)\) await replay \(ledger serve replays them "
            r"once the log is reachable; or ledger replay-backup --apply\)",
            "{n} 次备份写入（{e} 个事件）等待重放（日志可达后 ledger serve 会重放；"
            "或运行 ledger replay-backup --apply）",
        ),
        (r"search: fts while the embedding model loads in the background", "搜索：嵌入模型在后台加载期间使用 fts"),
        (r"search: vector\+fts \((?P<n>\d+) events not yet embedded\)", "搜索：vector+fts（{n} 个事件尚未嵌入）"),
        (
            r"search: (?P<mode>[a-z+]+) \(no embedding model installed \(ledger model install\)\)",
            "搜索：{mode}（未安装嵌入模型：ledger model install）",
        ),
        (r"search: (?P<mode>[a-z+]+)", "搜索：{mode}"),
        (
            r"vectors are (?P<n>\d+) events behind the log; run ledger reembed \(or keep ledger serve running\)",
            "向量落后日志 {n} 个事件；请运行 ledger reembed（或保持 ledger serve 运行）",
        ),
    )
)


def catalogue_translator(
    lang: str,
    catalogue: tuple[tuple[re.Pattern[str], str], ...],
    word: Callable[[str, str], str] = lambda _group, value: value,
) -> Callable[[object], str]:
    """A message in the chosen language: on a Chinese page, the Chinese of the first pattern of
    ``catalogue`` that holds the whole message, each group put in as ``word(group, value)``; as
    written otherwise (English, the facade's words)."""

    def translate(message: object) -> str:
        text = "" if message is None else str(message)
        if lang != "zh":
            return text
        for pattern, zh in catalogue:
            found = pattern.fullmatch(text)
            if found is not None:
                return zh.format(**{group: word(group, value) for group, value in found.groupdict().items()})
        return text

    return translate


def check_message_translator(lang: str) -> Callable[[object], str]:
    """``tc(message)``: a Doctor check's message in the chosen language."""
    return catalogue_translator(lang, CHECK_MESSAGES)


def term_translator(lang: str) -> Callable[[str, object], str]:
    """``tn(kind, name)``: a name from one of :data:`TERMS`' vocabularies in the chosen language
    (a name the vocabulary does not hold, as it is: a new event type never breaks a page)."""
    index = LANGUAGES.index(lang) if lang in LANGUAGES else 0

    def tn(kind: str, name: object) -> str:
        pair = TERMS.get(kind, {}).get(str(name))
        return pair[index] if pair else str(name)

    return tn


_RESOLVED = re.compile(r"conflict (\d+) resolved")
_CODE_REASONS = frozenset({"resolve_conflict", "manual"})  # ledger.govern's reasons that are codes


def reason_translator(lang: str) -> Callable[[object], str]:
    """``tr(reason)``: a reason the ledger itself recorded, in the chosen language: one of its fixed
    reasons, or a policy's settlement with the deciding rule. Anything else is a person's own
    words (a retirement's reason) and stays as written."""
    tn, tv = term_translator(lang), value_translator(lang)
    index = LANGUAGES.index(lang) if lang in LANGUAGES else 0

    def tr(reason: object) -> str:
        text = "" if reason is None else str(reason)
        for prefix in TERMS["settled_by"]:
            if text.startswith(prefix):
                return tn("settled_by", prefix) + tv(text.removeprefix(prefix))
        resolved = _RESOLVED.fullmatch(text)  # "conflict 33 resolved" (ledger.govern.resolved_reason)
        if resolved is not None:
            return ("conflict {n} resolved", "冲突 {n} 已解决")[index].format(n=resolved[1])
        if text.startswith(UNDO_PREFIX):  # "undo of change 01a2…": the Health page lists changes by position
            return ("a change undone (Health)", "撤销了一项更改（健康页）")[index]
        if text in _CODE_REASONS:  # a code the ledger records as a reason (a person's words stay as written)
            return tv(text)
        return tn("reason", text)

    return tr


def value_translator(lang: str) -> Callable[[object], str]:
    """``tv(value)``: a stored identifier as a word in the chosen language (unknown ones as they are)."""
    index = LANGUAGES.index(lang) if lang in LANGUAGES else 0

    def tv(value: object) -> str:
        key = "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        pair = VALUES.get(key)
        return pair[index] if pair else key

    return tv


def translator(lang: str) -> Callable[..., str]:
    """``t(key, **fields)`` in the chosen language."""
    index = LANGUAGES.index(lang) if lang in LANGUAGES else 0

    def t(key: str, **fields: object) -> str:
        # a count of one reads with its own words where the language needs them ("1 memory holding …")
        pair = (fields.get("n") == 1 and STRINGS.get(key + "_one")) or STRINGS.get(key)
        text = pair[index] if pair else key
        return text.format(**fields) if fields else text

    return t
