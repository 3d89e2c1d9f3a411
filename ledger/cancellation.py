"""Cancellations without a ``ref_id``: which statements cancel an instruction, and which one.

"不要发邮件了", "don't send the minutes", "cancel the standup", "the nightly orders backup is
cancelled": an agent often records that an instruction no longer holds without naming the
memory that gave it. The write then looks for its target itself, and precision comes first — a
wrong retraction silently removes a live instruction, a missed one leaves the instruction to be
retracted explicitly:

* the statement must have a cancellation's form, anchored at its start ("don't …", "stop …",
  "cancel …", "no need to …", "不要…", "别…了", "取消…", "不再…") or its predicate ("… is
  cancelled / called off / no longer needed", "…取消了", "…不用了"); a condition ("… until",
  "unless", "除非") or a reminder ("don't forget", "别忘了") is not one;
* what is cancelled is the statement's content words once the cancellation's own words are
  taken out (:func:`cancelled_words`); there must be at least one;
* a target is an active memory in the writer's workspace that is instruction-like
  (:func:`is_instruction`: an imperative, a habit or a schedule — not a report of the past), is
  not itself a cancellation, and holds every one of those words (the full-text index matches
  them, stemmed);
* exactly one target is retracted; with several the write answers with the candidates and
  retracts nothing (:func:`choose`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from fact_ledger.ledger.claim_words import MAKES_A_CHANGE
from fact_ledger.ledger.text import STOP_WORDS, fold

MAX_CANDIDATES = 5  # shown when several instructions match (the answer lists at most 5)
MAX_MATCHES = 50  # memories holding the words that are looked at; more than this: ambiguous

# -- English ---------------------------------------------------------------------------------
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"  # "monday" … "sunday"
_LEAD = r"^(?:(?:ok|okay|actually|so|hey|please|and|also|from now on|going forward)[,\s]+)*"
_EN_OPENERS = re.compile(
    _LEAD
    + r"(?:(?:you|we|i)\s+)?"
    + r"(?:do\s+not|don'?t|dont|no\s+need\s+to|no\s+longer|stop|quit|cancel|call\s+off|scrap|forget\s+about"
    + r"|never\s+mind(?:\s+about)?|(?:(?:you|we|i)\s+)?(?:don'?t|do\s+not|no\s+longer)\s+(?:need|have)\s+to)\b"
)
# "We're not doing yoga anymore", "I'm no longer going to the gym": a habit the speaker has given
# up (said without "anymore" or "no longer" it may be one day's: "we're not doing yoga, it rains")
_EN_GIVEN_UP = re.compile(
    _LEAD
    + r"(?:we|i|they)(?:'re|'m|\s+are|\s+am)\s+(?:no\s+longer|not)\s+"
    + r"(?:doing|having|holding|hosting|going(?!\s+to\s+be\b))\b"  # "no longer going to be the lead": a role
)
# An event that is off ("the team lunch is off"): said of a meeting, a meal, a class or a booking
# only, since a thing that is off ("the heating is off", "the alarm is off") is a state, not a
# cancellation
_EVENTS = (
    r"lunch|lunches|dinner|dinners|breakfast|brunch|meeting|meetings|standup|stand-up|sync|retro|party|game|match"
    r"|trip|class|classes|lesson|lessons|session|sessions|call|event|practice|rehearsal|yoga|workout|show"
    r"|concert|workshop|offsite|demo|meetup|review|training|appointment|reservation|booking|drinks|hike|tour"
    r"|visit|1:1|one-on-one|catch-up|huddle|club|walk|run|dance|gig|wedding|ceremony|celebration|picnic|bbq|outing"
)
# "My 1:1 with Bob is off", "dinner with the Smiths is off", "the farewell party for Tom is off": whom
# the event is with or for, between it and "is"
_WITH_WHOM = r"(?:\s+(?:with|for)\s+(?:the\s+)?[\w'’.&-]+(?:\s+[\w'’.&-]+){0,2}?)?"
# "off" ends the statement or is followed by when or why ("the game is off tonight", "…, sadly"):
# "off-site", "off the table", "off Main Street" say where a thing is or what it is off
_OFF_END = (
    r"(?=\s*$|\s*[,;:—]|\s+(?:for\s+now|for\s+good|now|again|this|next|today|tonight|tomorrow|because|due|as|since|sadly"
    r"|unfortunately|though|too|anyway|altogether|completely|after\s+all)\b)"
)
_EN_PREDICATE = re.compile(
    r"\b(?:is|are|was|were|has\s+been|have\s+been|got|'s(?:\s+been)?)\s+(?:now\s+|also\s+)?"
    r"(?:cancell?ed|called\s+off|no\s+longer\s+(?:needed|required|necessary|happening)"
    r"|not\s+needed\s+any\s*more|discontinued|scrapped)\b"
    r"|\b(?:" + _EVENTS + r")" + _WITH_WHOM + r"(?:\s+(?:is|are)|'s)\s+(?:now\s+|also\s+)?off" + _OFF_END
)
_EN_NOT_CANCEL = re.compile(
    r"\b(?:forget\s+to|hesitate|worry)\b"
    r"|^(?:(?:you|we|i)\s+)?(?:don'?t|do\s+not)\s+(?:know|think|remember|like|want|care|understand|see"
    r"|(?:have|need)(?!\s+to))\b"
)
# A condition ("don't deploy before Friday", "… until Bob approves") makes an instruction, not a
# cancellation; one said to hold no more ("we don't need to run the linter before committing
# anymore") is the instruction's own words, cancelled
_EN_CONDITION = re.compile(r"\b(?:until|unless|without|except|if|before|instead)\b")
_EN_NO_MORE = re.compile(r"\b(?:any\s*more|no\s+longer)\b")
_EN_CANCEL_WORDS = frozenset(
    """don't dont do not no need needed needs longer stop stopped quit cancel cancelled canceled
    cancelling canceling cancellation call called off scrap scrapped forget about never mind
    anymore any more please ok okay actually so hey also now going forward from required got permanently
    indefinitely
    necessary happening discontinued you we i have has been is are was were s we're i'm they're""".split()
)

# -- Chinese ---------------------------------------------------------------------------------
_ZH_OPENERS = re.compile(
    r"^(?:以后|今后|从现在起|从今天起|现在)?(?:不要再?|不用再?|不必再?|无需再?|不需要再?|停止|取消|不再)"
)
_ZH_BIE = re.compile(r"^(?:以后|今后)?别再?")  # 别 also starts words (别墅, 别人): only with 再 or a closing 了
_ZH_PREDICATE = re.compile(
    r"(?:取消了|已取消|被取消|取消掉了|不用了|不需要了|不必了|作废了?|停掉了|停了)[。！!.\s]*$"
    # an activity given up, said of the activity: "羽毛球不打了", "钢琴课不上了", "瑜伽不练了" (not of a person:
    # "我不去了", "他不打了")
    + r"|^(?!我|你|他|她|咱|大家)[^\s，。]{2,}不(?:打|练|学|上|踢)了[。！!.\s]*$"
)
_ZH_NOT_CANCEL = re.compile(r"别忘|不要忘|别担心|不要担心|不用担心|不用谢|不客气|除非|直到|如果|只有|否则|之前|以前")
_ZH_CANCEL_WORDS = re.compile(
    r"不(?:打|练|学|上|踢)了|以后|今后|从现在起|从今天起|现在|不要再|不要|不用再|不用|不必再|不必|无需再|无需|不需要再|不需要|停止|取消掉|取消|不再"
    r"|已经|已|被|作废|停掉|停了|别再|别|了|吧|啦|呢|哦|请|再|的"
)

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}](?:[^\W{_CJK}]|['’-])*")  # "给Bob发日报": 给, bob, 发日报
_SPEAKER = re.compile(r"^\s*[^\W\d_][\w'’.-]*(?: [^\W\d_][\w'’.-]*){0,2}:\s")  # "Caroline: …" is a turn


def _clean(text: str) -> str:
    return fold(text).replace("’", "'").strip().rstrip("。！!.?？ ")


def is_cancellation(content: str) -> bool:
    """Whether ``content`` has the form of a cancellation (see the module docstring)."""
    text = _clean(content)
    if _SPEAKER.match(content):
        return False
    if re.search(f"[{_CJK}]", text):
        if _ZH_NOT_CANCEL.search(text):
            return False
        bie = _ZH_BIE.match(text)
        return bool(
            _ZH_OPENERS.match(text)
            or _ZH_PREDICATE.search(text)
            or (bie and (text[bie.end() - 1] == "再" or text.endswith("了")))
        )
    if _EN_NOT_CANCEL.search(text) or (_EN_CONDITION.search(text) and not _EN_NO_MORE.search(text)):
        return False
    return bool(
        _EN_OPENERS.match(text) or _EN_PREDICATE.search(text) or (_EN_GIVEN_UP.match(text) and _EN_NO_MORE.search(text))
    )


# One occurrence named ("yoga is cancelled this Monday", "cancel tomorrow's standup", "Thursday's team
# lunch is off", "今天的站会取消了"): that one is off, the schedule or habit stays ("the Thursday team lunch
# is off" is the schedule)
_ONE_OCCURRENCE = re.compile(
    rf"\b(?:{_WEEKDAY}'s|(?:this|next|coming)\s+(?:{_WEEKDAY}|week(?:end)?|morning|afternoon|evening|time)"
    r"|today|tonight|tomorrow|this\s+once|just\s+once|on\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d"
    r"|on\s+\d{1,2}(?:st|nd|rd|th)?\b)|今天|今晚|明天|后天|这周|本周|下周|这次|本次|这个周",
    re.IGNORECASE,
)


def names_one_occurrence(content: str) -> bool:
    """Whether a cancellation names one occurrence ("this Monday", "tomorrow's", "Thursday's",
    今天): of a recurring schedule, that one is off and the schedule stays (:func:`recurs`); a
    one-off booking or reminder for that day is what it cancels."""
    return _ONE_OCCURRENCE.search(_clean(content)) is not None


_RECURS = re.compile(
    r"\b(?:every|each|daily|nightly|weekly|monthly|hourly|weekdays|weekends|mornings|evenings"
    rf"|{_WEEKDAY}s)\b|每|天天",
    re.IGNORECASE,
)


def recurs(content: str) -> bool:
    """Whether an instruction or schedule repeats ("every Monday", "on Mondays", 每天)."""
    return _RECURS.search(_clean(content)) is not None


# "The game's off": the contraction is "is" ("game", not "game's"; "Thursday's team lunch" keeps its day)
_EN_IS = re.compile(
    r"'s(?=\s+(?:now\s+|also\s+)?(?:off|cancell?ed|called\s+off|been|no\s+longer|not\s+needed|discontinued"
    r"|scrapped)\b)"
)
# why or how sadly an event is off names nothing cancelled ("the game is off because of the rain", "…,
# sadly"); "Class is off, students are on a field trip" says more than why: its words stay, and find nothing
_EN_OFF_REASON = re.compile(
    r"\boff(?:\s*[,;:—]\s*|\s+)(?:because|due\s+to|as|since|sadly|unfortunately|though|too|anyway|altogether"
    r"|completely|after\s+all|sorry|for\s+good)\b.*$"
)
# … and for good: "soccer practice is cancelled for good" cancels the practice, "good" is no word of it
_EN_FOR_GOOD = re.compile(r"\b(cancell?ed|called\s+off|scrapped|discontinued)\s+for\s+good\b")


def cancelled_words(content: str) -> tuple[str, ...]:
    """The words naming what ``content`` cancels (empty when it is no cancellation): its content
    words without stop words and cancellation words; a Chinese run as its bigrams."""
    if not is_cancellation(content):
        return ()
    text = _EN_FOR_GOOD.sub(r"\1", _EN_OFF_REASON.sub("off", _EN_IS.sub(" is", _clean(content))))
    text = _ZH_CANCEL_WORDS.sub(" ", text)
    words: list[str] = []
    for token in _WORD.findall(text):
        if re.fullmatch(f"[{_CJK}]+", token):
            words += [token] if len(token) == 1 else [token[i : i + 2] for i in range(len(token) - 1)]
        elif token not in STOP_WORDS and token not in _EN_CANCEL_WORDS and token.strip("'") not in _EN_CANCEL_WORDS:
            words.append(token)
    return tuple(dict.fromkeys(words))


# -- instruction-like targets ------------------------------------------------------------------
_IMPERATIVE = frozenset(
    """send email mail e-mail text message ping notify remind tell ask call phone run use book reserve schedule
    deploy post publish check keep add copy cc bcc include order buy pay make write update prepare share
    forward invite back backup archive delete remove clean print submit file report review sync restart
    reboot rotate renew water feed reply respond log record attach upload download pick bring take set
    turn lock close open join attend hold host test build release merge push pull tag label mark ship pin
    deliver charge invoice bill transfer move store save export import generate compile summarize
    summarise translate draft create organise organize arrange contact follow put leave give get start
    print walk wash pack collect drop""".split()
)
_CLOCK = r"(?:\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}|noon|midnight)"
_EN_HABIT = re.compile(
    rf"\b(?:always|every|each\s+(?:day|week|month|morning|evening|night|{_WEEKDAY})|daily|nightly|weekly|monthly"
    r"|hourly|should|must|need\s+to|needs\s+to|has\s+to|have\s+to"
    r"|make\s+sure|remember\s+to|be\s+sure\s+to|is\s+scheduled|are\s+scheduled|runs\s+at|reminder)\b"
    # an event's time: "the Friday retro is at 4pm", "the offsite is on Tuesday" (a schedule)
    # … or when someone is coming: "the babysitter is coming on Friday at 6pm"
    rf"|\b(?:is|are)\s+(?:coming\s+)?(?:at|on)\s+(?:{_CLOCK}|{_WEEKDAY}s?)\b"
    # "the game is Sunday at 4pm", "dinner with the Smiths is tomorrow at 7pm": a day, then its time
    rf"|\b(?:is|are)\s+(?:(?:this|next)\s+)?(?:{_WEEKDAY}|tomorrow|tonight)\s+(?:at|from)\s+{_CLOCK}"
)
_EN_LEAD_IN = re.compile(r"^(?:please|always|kindly|also|remember\s+to|make\s+sure\s+(?:to|you)|be\s+sure\s+to)\s+")
_ZH_HABIT = re.compile(
    r"请|每天|每日|每周|每星期|每月|每晚|每早|每天早上|每个|记得|务必|一定要|必须|需要|总是|定期|提醒|别忘|按时|都要|负责"
)
_ZH_IMPERATIVE = re.compile(
    r"^(?:要|发|寄|给|用|把|跑|运行|备份|部署|通知|订|预订|安排|检查|更新|提交|抄送|转发|打电话|联系|买|付|交|写|准备|上传|同步|重启)"
)


# A plan said with its day and time ("周五晚上8点和老张吃饭", "和老张明天下午3点见面"): a schedule, as
# "the game is Sunday at 4pm" is; a past one ("…吃饭了", 昨天) is none
_ZH_DAY = r"(?:(?:这|下|本)?(?:周|星期|礼拜)[一二三四五六日天]|[今明后]天|今晚|明晚|明早|\d{1,2}月\d{1,2}[日号])"
_ZH_CLOCK = r"(?:早上|上午|中午|下午|晚上|凌晨)?(?:\d{1,2}|[一二三四五六七八九十]{1,3})点"
_ZH_PLAN = re.compile(rf"{_ZH_DAY}{_ZH_CLOCK}")  # both: "明天下雨" is weather, no plan
_ZH_PAST = re.compile(r"了$|昨天|前天|上周|上个|过了|已经")


def is_instruction(content: str) -> bool:
    """Whether ``content`` reads as an instruction: an imperative, a habit or a schedule."""
    text = _clean(content)
    if not text or _SPEAKER.match(content) or is_cancellation(content):
        return False
    if re.search(f"[{_CJK}]", text) and (_ZH_HABIT.search(text) or _ZH_IMPERATIVE.match(text)):
        return True
    if re.search(f"[{_CJK}]", text) and _ZH_PLAN.search(text) and not _ZH_PAST.search(text):
        return True
    if _EN_HABIT.search(text):
        return True
    words = _WORD.findall(_EN_LEAD_IN.sub("", text))
    return bool(words) and words[0] in _IMPERATIVE


# An instruction's parts: its sentences and clauses, and "and"/"then" before more of it
_PARTS = re.compile(r"[。！？!?；;，,\n]+|\.\s+|\s+(?:and(?:\s+then)?|then)\s+|然后|并且")
_EN_SUBJECT = re.compile(r"^(?:(?:we|you|i|they|also|then|please|always|to)\s+)+")
_ZH_WHEN = re.compile(
    r"^(?:每|以后|今后|早上|晚上|下午|上午|中午|周|星期|天|晚|日|月|早|[0-9一二三四五六七八九十]+点?半?|[:：])+"
)


def _mentions_any(part: str, words: Sequence[str]) -> bool:
    """Whether a part of an instruction says one of ``words``, in any form ("sending" in "send",
    "fridays" in "Friday")."""
    tokens = _WORD.findall(part)
    return any(
        word in part if re.match(f"[{_CJK}]", word) else any(t.startswith(_stem(word)) for t in tokens)
        for word in words
    )


def _objects(words: Sequence[str]) -> list[str]:
    """The cancelled words that name what is done, not the doing ("sending" goes): a part that
    repeats the verb of the cancelled instruction for another object is another instruction."""
    kept = [w for w in words if w not in _IMPERATIVE and _stem(w) not in _IMPERATIVE]
    return kept or list(words)


def _stem(word: str) -> str:
    stem = re.sub(r"(?:ing|ed|es|s)$", "", word)
    if len(stem) > 3 and stem[-1] == stem[-2]:
        stem = stem[:-1]  # "running" → "run"
    return stem if len(stem) >= 3 else word


def _gives_an_instruction(part: str) -> bool:
    """A part of an instruction that is one of its own: a verb first ("run the backup every
    night", "每晚备份"), or a habit with a verb ("the backup runs every night"). A time alone
    ("every Monday", "每天早上9点") or a name ("… to Bob and Carol") is not one."""
    if re.search(f"[{_CJK}]", part):
        return _ZH_IMPERATIVE.match(_ZH_WHEN.sub("", part)) is not None
    words = _WORD.findall(_EN_SUBJECT.sub("", part))
    if words and words[0] in _IMPERATIVE:
        return True
    return _EN_HABIT.search(part) is not None and any(re.sub(r"e?s$", "", w) in _IMPERATIVE for w in words)


def holds_other_instructions(content: str, words: Sequence[str]) -> bool:
    """Whether the instruction ``content`` gives another one beside what ``words`` cancel: "We
    deploy on Fridays and run the backup every night" cancelled by "we no longer deploy on
    Fridays" would lose the backup with it, and "deploy to staging, then deploy to production"
    cancelled by "don't deploy to staging" production. A part counts when it names none of what
    the cancellation names (beside its verb) and gives an instruction of its own: "Send the
    minutes to Bob and Carol every Monday" and "Send the weekly report, with the metrics
    attached, to Bob every Monday" are one instruction each."""
    parts = [p.strip() for p in _PARTS.split(_clean(content)) if p and p.strip()]
    objects = _objects(words)
    return len(parts) > 1 and any(
        not _mentions_any(part, objects) and (_gives_an_instruction(part) or _states_a_time(part)) for part in parts
    )


_A_TIME = re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\bnoon\b|\bmidnight\b|\bevery\b|\bdaily\b")
_A_VERB = re.compile(r"\b(?:is|are|was|lands?|leaves?|starts?|begins?|ends?|runs?|opens?|closes?|arrives?|departs?)\b")


def _states_a_time(part: str) -> bool:
    """A part that keeps a schedule of its own, with its own verb ("Alice's flight lands at 6pm and
    her hotel check-in is at 8pm": cancelling the hotel must not take the landing with it; "… to
    Bob and Carol every Monday" is one instruction)."""
    if re.search(f"[{_CJK}]", part):  # a time alone ("每天早上9点，给Bob发日报") is part of the one instruction
        return _ZH_HABIT.search(part) is not None and bool(_ZH_WHEN.sub("", part).strip())
    return _A_TIME.search(part) is not None and _A_VERB.search(part) is not None


class Target(NamedTuple):
    """An active memory whose text holds every cancelled word (``denied``: found instead as the
    holder of a value a statement says no longer holds, ``ledger.negation``)."""

    memory_id: int
    stream_id: str
    content: str
    denied: bool = False


# What a cancellation of a change names it by ("the move of the launch review is cancelled")
_CHANGE_NOUNS = frozenset(
    """move moving change switch reschedule rescheduling upgrade downgrade migration rename postponement
    改期 改动 变更 调整 搬迁""".split()
)


_LONG_AGO = re.compile(
    r"\b(?:last\s+(?:year|month|quarter)|years?\s+ago|months?\s+ago|in\s+(?:19|20)\d\d|back\s+in)\b|去年|前年|年前",
    re.IGNORECASE,
)


# What an event's schedule is of, said first ("the launch party is at 6pm", "team lunch is every Thursday")
_SCHEDULE_OF = re.compile(
    r"^(?:the|our|my|a|an)?\s*(?P<thing>[\w'’:-]+(?:\s+[\w'’:-]+){0,4}?)\s+(?:is|are)\s+(?:at|on|every|each|held|scheduled)\b"
)

# What an activity is held as: "yoga class", "piano lessons", "tennis practice" are yoga, piano, tennis
# what names an event without naming which ("the client call", "the all-hands meeting", "the launch
# event" are the client's, the all-hands, the launch: "the client call is cancelled" finds it)
_ACTIVITY_HEADS = frozenset(
    """class classes session sessions lesson lessons practice training workout meeting meetings call calls
    event events sync syncs chat chats""".split()
)
_OF_WHOM = re.compile(r"\s+(?:with|for|of|about|at|in|on|by|from|to)\s+")


def _of_another_thing(content: str, words: Sequence[str]) -> bool:
    """ "The launch party is at 6pm" for "the launch is cancelled": the cancellation names a word
    of what the schedule is of, but not the thing itself (the party, not the launch). A cancellation
    that names it ("the party is cancelled", "the launch party is off") still finds it."""
    match = _SCHEDULE_OF.match(_clean(content))
    if match is None or not words:
        return False
    thing = _WORD.findall(_OF_WHOM.split(match["thing"], maxsplit=1)[0])  # "the 1:1 with Bob" is a 1:1
    stems = {_stem(w) for w in words}
    while len(thing) > 1 and thing[-1] in _ACTIVITY_HEADS:
        thing.pop()  # "the yoga class is at 6pm" is yoga's ("we're not doing yoga anymore" finds it)
    return any(_stem(w) in stems for w in thing) and _stem(thing[-1]) not in stems


# What a thing names when another word follows it: "the orders backup", "the client report", "订单数据库" are
# a backup, a report, a database; "the order is cancelled" and "订单取消了" cancel none of them
_HEADS = frozenset(
    """backup backups database databases db server servers system systems service report reports file files log
    logs table tables account accounts script scripts job jobs list lists page pages channel data record records
    invoice invoices inbox queue dashboard""".split()
)
_ZH_HEADS = re.compile(r"数据库|数据|系统|服务|文件|日志|报表|报告|记录|表|群|账号|账户|平台|网站|页面|脚本|任务|列表")


def _names_what_another_is_of(content: str, words: Sequence[str]) -> bool:
    """ "Run the nightly orders backup at 02:00" for "the order is cancelled", "每晚两点备份订单数据库" for
    "订单取消了": the last word cancelled is, wherever the instruction says it, what another thing it
    names is of (the backup of the orders, the orders database): it is listed, not retracted."""
    if not words:
        return False
    last = words[-1]
    if re.fullmatch(f"[{_CJK}]+", last):
        ends = [m.end() for m in re.finditer(re.escape(last), content)]
        return bool(ends) and all(_ZH_HEADS.match(content, end) for end in ends)
    tokens = _WORD.findall(_clean(content))
    stems = {_stem(w) for w in words}
    at = [i for i, t in enumerate(tokens) if _stem(t) == _stem(last)]
    return bool(at) and all(
        i + 1 < len(tokens) and tokens[i + 1] in _HEADS and _stem(tokens[i + 1]) not in stems for i in at
    )


_DAY = re.compile(rf"\b({_WEEKDAY})s?\b", re.IGNORECASE)
_EVERY_DAY = re.compile(r"\b(?:every\s+(?:day|weekday)|daily|weekdays|each\s+day)\b", re.IGNORECASE)


def _one_day_of_several(content: str, words: Sequence[str]) -> bool:
    """ "We're not doing yoga on Mondays anymore" for "Yoga is every Monday and Wednesday at 7pm":
    the cancellation gives up one of the schedule's days, the others stay (the schedule is listed,
    not retracted); "don't send the report on Fridays" still cancels "send the report every Friday"."""
    named = {m.group(1).lower() for w in words for m in [_DAY.fullmatch(w.strip("'"))] if m}
    if not named:
        return False
    held = {m.group(1).lower() for m in _DAY.finditer(content)}
    return bool(held - named) or _EVERY_DAY.search(content) is not None


_CONDITION_START = re.compile(r"\b(?:when|whenever|if|during|while|once)\b", re.IGNORECASE)


def _only_in_its_condition(content: str, words: Sequence[str]) -> bool:
    """ "Take ibuprofen when I have headaches" for "I'm no longer having headaches": the words name
    the instruction's condition, not what it says to do (the headaches stopped; the instruction is
    listed, not retracted)."""
    found = _CONDITION_START.search(content)
    return found is not None and not _mentions_any(content[: found.start()].lower(), _objects(words))


# A booking is cancelled by its noun, made by its verb: "cancel the Luigi's reservation" is "Book a
# table at Luigi's" ("reserve" is found by the stem the index gives both, "booking" is "book")
_BOOKED = frozenset({"reservation", "reservations"})


_MAKES_A_BOOKING = re.compile(
    r"^(?:(?:please|remember\s+to|also)\s+)*(?:book|reserve)\b|\b(?:booked|booking|reserved|reservation)\b",
    re.IGNORECASE,
)


def makes_a_booking(content: str) -> bool:
    """ "Book a table at Luigi's", "we booked the cabin": a booking, not "the guide book" a
    reservation's retried words ("book") would also find."""
    return _MAKES_A_BOOKING.search(content.strip()) is not None


def as_booked(words: Sequence[str]) -> tuple[str, ...]:
    """The cancelled ``words`` with a reservation read as what booked it ("book"), when they name
    more than the reservation; empty otherwise (nothing else to look for)."""
    if not any(w in _BOOKED for w in words) or all(w in _BOOKED for w in words):
        return ()
    return tuple(dict.fromkeys("book" if w in _BOOKED else w for w in words))


# An appointment is named by whom it is with: "the electrician appointment is cancelled" is "The
# electrician is scheduled for Friday at 10am", which never says "appointment"
_APPOINTMENT = frozenset({"appointment", "appointments", "appt", "visit"})


def as_scheduled(words: Sequence[str]) -> tuple[str, ...]:
    """The cancelled ``words`` without the appointment they name, when they name whom it is with;
    empty otherwise (nothing else to look for)."""
    if not any(w in _APPOINTMENT for w in words) or all(w in _APPOINTMENT for w in words):
        return ()
    return tuple(w for w in words if w not in _APPOINTMENT)


def schedules(content: str, words: Sequence[str]) -> bool:
    """Whether ``content`` is the schedule of exactly what ``words`` name ("The electrician is
    scheduled for Friday" for "electrician"; not "Bob's flight is at 9am" for "bob")."""
    match = _SCHEDULE_OF.match(_clean(content))
    return match is not None and [_stem(w) for w in _WORD.findall(match["thing"])] == [_stem(w) for w in words]


def choose(candidates: Sequence[Target], words: Sequence[str] = ()) -> tuple[Target | None, list[Target]]:
    """(the one instruction to retract, or None; the instructions that matched, at most
    :data:`MAX_CANDIDATES`). Only an instruction-like memory that is not itself a cancellation
    counts — or, when the cancellation names a change by a change's noun (``words``: "the move
    of the launch review is cancelled"), a memory that states a change ("… was moved to Dec 10")
    — and only exactly one of them is retracted, and not when its schedule is of another thing
    named after the one cancelled ("the launch party is at 6pm" for "the launch is cancelled": it is
    listed, not retracted). ``candidates`` are every memory holding the
    words, up to :data:`MAX_MATCHES`; one more than that and none is retracted (the one
    instruction seen could have others among the memories not looked at)."""
    # a change named by its noun and by what it changed ("the move of the launch review"), made
    # lately: "we migrated the DB to Postgres 17 last year" is history, not a change to call off
    of_a_change = any(w in _CHANGE_NOUNS for w in words) and any(w not in _CHANGE_NOUNS for w in words)
    instructions = [
        t
        for t in candidates[:MAX_MATCHES]
        if is_instruction(t.content)
        or (
            of_a_change
            and MAKES_A_CHANGE.search(t.content)
            and not _LONG_AGO.search(t.content)
            and not is_cancellation(t.content)
        )
    ]
    if (
        len(instructions) == 1
        and len(candidates) <= MAX_MATCHES
        and not _of_another_thing(instructions[0].content, words)
        and not _names_what_another_is_of(instructions[0].content, words)
        and not _only_in_its_condition(instructions[0].content, words)
        and not _one_day_of_several(instructions[0].content, words)
    ):
        return instructions[0], instructions
    return None, instructions[:MAX_CANDIDATES]


def find(
    words: Sequence[str], holding: Callable[[tuple[str, ...]], Sequence[Target]]
) -> tuple[Target | None, list[Target], tuple[str, ...]]:
    """:func:`choose` over the memories ``holding`` finds for the cancelled ``words`` (every one
    of them, up to :data:`MAX_MATCHES` + 1); when no instruction holds them and they name a
    reservation, again with it read as what booked it (:func:`as_booked`), among bookings only
    ("cancel the Luigi's reservation" is "Book a table at Luigi's", never "the guide book"); when
    they name an appointment, again without it among the schedules of what is left only
    (:func:`as_scheduled`: "the electrician appointment is cancelled" is "The electrician is
    scheduled for Friday at 10am", never "Bob's flight is at 9am" for "the Bob appointment"). Also
    returns the words the instructions were found by."""
    words = tuple(words)
    target, matched = choose(holding(words), words)
    if not matched and (booked := as_booked(words)):
        target, matched = choose([t for t in holding(booked) if makes_a_booking(t.content)], booked)
        words = booked
    if not matched and (bare := as_scheduled(words)):
        target, matched = choose([t for t in holding(bare) if schedules(t.content, bare)], bare)
        words = bare
    return target, matched, words
