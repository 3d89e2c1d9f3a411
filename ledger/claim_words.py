"""The words and patterns claim extraction reads sentences with (English and Chinese).

Data only: the grammar that uses them is :mod:`ledger.claims`; a new relation, filler or value
ending is added here."""

from __future__ import annotations

import re

from fact_ledger.ledger.regex_scan import leftmost_search, match_where_possible

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
CJK_SPLIT = re.compile(f"([{_CJK}]+)")


# -- keys --------------------------------------------------------------------------------------
ALIASES = (
    (re.compile(r"端口号?|port number"), " port "),
    (re.compile(r"负责人|\bowners?(?:hip)?\b"), " owner "),  # "ownership of X moved to Bob": X's owner
    (re.compile(r"版本号?"), " version "),
    (re.compile(r"'s\b|’s\b"), " "),  # a possessive (POSSESSIVE below, on one word)
    (re.compile(r"现在的?|目前的?|当前的?|如今的?"), " "),  # when it holds is not what it is
    # whom one reports to, said another way and in either language: "Bob's boss", "Bob的经理",
    # "张三的上级", "张三的老板" are all "Bob's manager" / "张三's manager"
    (re.compile(r"\bboss\b|\bsupervisor\b|\bline manager\b|直属上级|上级|上司|经理|老板|直属领导|领导"), " manager "),
    # a manager's manager is another person: "Bob's boss's boss" is Bob's skip-level manager, not his manager
    (re.compile(r"\bmanager\s*(?:的\s*)?manager\b"), " skip-level manager "),
    # a slot a relation also names: "the price of X" / "X costs", "X's expiry date" / "X expires on",
    # "the trial length" / "the trial lasts" (RELATION_SLOTS)
    (re.compile(r"\bcosts?\b|\bpric(?:e|es|ing)\b"), " price "),
    (re.compile(r"价格|价钱|售价|定价"), " price "),  # apart: a pattern of both scripts is scanned slower
    (re.compile(r"\bexpir(?:y|ation|es)\b"), " expiry "),
    (re.compile(r"\bduration\b|\blength\b"), " duration "),
    (re.compile(r"\bhq\b|\bheadquarters\b|\bhead office\b"), " headquarters "),
    # a team's standup is the standup, and a standup is daily: "our team standup", "the daily
    # standup", "团队站会" and "the standup" are one meeting ("the leadership standup" is another)
    (re.compile(r"\b(?:team|daily)\s+(?=stand-?ups?\b)"), " "),
    (re.compile(r"(?:团队|每日|每天的?)(?=站会|站(?![\u4e00-\u9fff]))"), " "),
    # who is on call: "the on-call engineer", "the on-call person", "the on call" are one role
    (re.compile(r"\bon[- ]call(?:\s+(?:engineer|person|dev|developer|sre|contact))?\b"), " on-call "),
)
POSSESSIVE = re.compile(r"['’]s$")
# "X reports to Y" (now, still, directly): who X's manager is
REPORTS_TO = re.compile(
    r"^(?P<x>.+?)\s+(?:(?:now|still|currently|directly)\s+)*reports?\s+(?:directly\s+)?to\s+(?P<y>\S.*)$",
    re.IGNORECASE,
)
# A value raised, lowered, extended or swapped to another ("预算提高到8万元", "数据库换成了MySQL"): the
# value it has now, as 改成 says it
ZH_CHANGED_TO = (
    r"(?:提高|增加|提升|上调|下调|降低|减少|延长|缩短|扩大|缩小|扩充|增长|下降|调大|调小|削减|涨价|降价)(?:到|至|为)"
    r"|(?:增|降|减|涨|调)(?:到|至)|换成|换为"
)
# "We moved the standup to 11am", "we upgraded Postgres to 17": said of its object, as "the standup
# was moved to 11am" (a change of the object's value; who made it is not part of the slot)
CHANGED_BY = re.compile(
    r"^(?:(?:we|i|they|the team|someone|ops)\s+)?(?:(?:have|has|just|finally|already)\s+)*"
    r"(?P<verb>moved|changed|pushed back|pushed|delayed|rescheduled|postponed|upgraded|downgraded|bumped|raised|"
    r"increased|lowered|reduced|cut|renamed|switched|updated|reverted|rolled|set|extended|shortened|scaled)"
    r"\s+(?P<x>.+?)(?:\s+back)?\s+to\s+"
    r"(?P<y>\S.*)$",
    re.IGNORECASE,
)
# "Alice changed her phone number to 555-0199", "Acme relocated its office to Denver": the named
# someone's own value, as "Alice's phone number was changed to …"
CHANGED_OWN = re.compile(
    r"^(?P<who>[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,2})\s+(?:(?:has|have|just|finally|already)\s+)*"
    r"(?P<verb>changed|updated|moved|switched|relocated|renamed|raised|lowered|increased|reduced|extended)\s+"
    r"(?:her|his|its|their)\s+(?P<x>.+?)\s+to\s+(?P<y>\S.*)$"
)
# "We upgraded Postgres (from 16) to 17", "Postgres was upgraded to 17", "Postgres升级到17了",
# "我们把Postgres升级到了17": a new version of it, the slot "the Postgres version is 16" states (only
# with a version for a value: "we upgraded the plan to Pro" is no version)
# (when it was done may follow: "… to 17 yesterday", "… last night", "… on Monday")
_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_DONE_WHEN = (
    r"(?:\s+(?:yesterday|today|earlier|recently|on\s+" + _DAY + r"|(?:last|this)\s+(?:night|week|weekend|month|"
    r"morning|afternoon|evening|sprint|" + _DAY + r")))?\s*[.!]?$"
)
_VERSION_TO = r"(?:\s+from\s+v?\d[\d.]*)?\s+to\s+(?:version\s+)?(?P<y>v?\d+(?:\.\d+)*)" + _DONE_WHEN
_WHO_DID = r"^(?:(?:we|i|they|the team|someone|ops)\s+)?(?:(?:have|has|just|finally|already)\s+)*"
VERSION_CHANGED = (
    re.compile(_WHO_DID + r"(?:upgraded|downgraded)\s+(?P<x>.+?)" + _VERSION_TO, re.IGNORECASE),
    re.compile(
        r"^(?P<x>.+?)\s+(?:(?:was|were|is|are|has|have|had|got|just|finally|now|been)\s+)+(?:upgraded|downgraded)"
        + _VERSION_TO,
        re.IGNORECASE,
    ),
    # "we upgraded to Postgres 17", "we migrated to Postgres 17": a name and its version
    re.compile(
        _WHO_DID
        + r"(?:upgraded|downgraded|migrated)\s+(?:over\s+)?to\s+(?P<x>[A-Za-z][\w.+-]*)\s+v?(?P<y>\d+(?:\.\d+)*)"
        + _DONE_WHEN,
        re.IGNORECASE,
    ),
    # "we rolled Postgres back to 16", "we reverted Postgres to 16": a version again, like any other
    re.compile(_WHO_DID + r"(?:rolled\s+back|reverted)\s+(?P<x>.+?)" + _VERSION_TO, re.IGNORECASE),
    re.compile(_WHO_DID + r"rolled\s+(?P<x>.+?)\s+back" + _VERSION_TO, re.IGNORECASE),
    re.compile(
        r"^(?:我们|我|他们)?把?(?P<x>[^，。,;；\s从]+?)(?:已经|刚)?(?:从v?\d[\d.]*)?(?:升级|降级)(?:到|至)了?(?:版本)?"
        r"(?P<y>v?\d+(?:\.\d+)*)(?:版本?)?了?[。.!！]?$"
    ),
)
# "We migrated the billing service to Postgres 16", "the billing service was migrated to Postgres
# 16": what it runs on now, the slot "the billing service uses Postgres 14" states (the auxiliaries
# of a change made: "will be", "is being" or "not" migrated is none)
MIGRATED = (
    re.compile(_WHO_DID + r"migrated\s+(?P<x>.+?)\s+(?:over\s+)?to\s+(?P<y>\S.*)$", re.IGNORECASE),
    re.compile(
        r"^(?P<x>.+?)\s+(?:(?:was|were|has|have|had|been|got|is|are|just|now|finally|fully)\s+)*migrated"
        r"\s+(?:over\s+)?to\s+(?P<y>\S.*)$",
        re.IGNORECASE,
    ),
)
# "Alice's new phone number", "Alice has a new phone number", "the updated budget": the value that
# replaced the old one, in the slot "Alice's phone number" names. "new" only after a possessive or
# "a": "the new user limit", "the new office", "new customers" name other things; of one thing only
# "The new CEO is Evan", "New wifi password: tulip": "new" before an attribute that holds one value
# at a time names its replacement, wherever it stands
NEW_BEFORE_ONE_VALUE = re.compile(
    r"\bnew\s+(?=(?:phone\s+|email\s+|e-mail\s+)?(?:ceo|cto|cfo|coo|manager|boss|lead|owner|contact|password|passcode|"
    r"pin|port|address|email|e-mail|phone|number|url|link|domain|host|hostname|ip|version|deadline|title|name)$"
    # … and before a role one person holds, named by what it is of: "the new project manager is Jordan"
    r"|[a-z]+\s+(?:manager|lead|leader|director|coordinator)$"
    # … and before someone's one coach, landlord, doctor: "the new coach is Ms. Rivera"
    r"|(?:coach|landlord|principal|treasurer|secretary|president|chair|captain|pediatrician|doctor|dentist"
    r"|therapist|accountant)$)"
)
# "新房东是王女士", "新经理是小李", "我们的新负责人是王五": "新" before a role one person holds names its
# new holder, as "new" does ("新加坡办公室的经理" is Singapore's)
ZH_NEW_ROLE = re.compile(
    r"(?:^|(?<=的))新的?(?!加坡|西兰|疆)(?=[\u4e00-\u9fff]{0,2}(?:经理|负责人|联系人|主管|组长|房东|班主任|教练|对接人)$)"
)
REPLACEMENT_WORD = re.compile(
    r"(?:\b(?:updated|revised|corrected)|(?:(?<=['’]s )|(?<=\bmy )|(?<=\bour )|(?<=\byour )|(?<=\bhis )|(?<=\bher )"
    r"|(?<=\bits )|(?<=\btheir )|(?<=\ba ))new)\s+(?=[a-z])(?!\w*[^\Wsu]s\b)(?![\w-]+['’]s\b)"
)
# "We're on Postgres 16", "we run Postgres 16", "I'm using Python 3.12": the version of a named thing
# the speaker runs, the slot of "our Postgres version is 16" (a capitalised name: "we're on floor 3",
# "we use 2 servers" name no software)
RUNS_VERSION = re.compile(
    r"^(?i:(?:we|i)(?:\s+are|\s+am|['’]re|['’]m)?\s+(?:(?:now|still|currently|already|all)\s+)*"
    r"(?:on|running|using|run|use)\s+)(?P<x>[A-Z][\w.+-]*)\s+(?i:version\s+)?v?(?P<y>\d+(?:\.\d+)*)"
    r"(?i:\s+(?:now|today|again|instead))?\s*[.!]?$"
)
# "The staging API moved from port 8080 to port 9090", "…的端口从8080改成了9090": the value it has
# now is the one after "to" (the old one was read as the value, or into the key)
_MOVED_VERB = (
    r"^(?P<x>.+?)\s+(?P<verb>(?:was\s+|has\s+been\s+|got\s+)?(?:moved|changed|switched|shifted|rescheduled|"
    r"updated|bumped|raised|lowered|increased|reduced|renamed|migrated))"
)
FROM_OLD_VALUE = (
    re.compile(_MOVED_VERB + r"\s+from\s+\S.*?\s+to\s+(?P<y>\S.*)$", re.IGNORECASE),
    # "… moved to Denver from Boston": the value before "from"
    re.compile(_MOVED_VERB + r"\s+to\s+(?P<y>\S.*?)\s+from\s+\S.*$", re.IGNORECASE),
    re.compile(
        r"^(?P<x>.+?)从[^，。,;；]+?(?P<verb>(?:改成|改为|调整为|调整到|变成|搬到|改到|"
        + ZH_CHANGED_TO
        + r")了?)(?P<y>.+)$"
    ),
)
# A change undone ("… and back", "but we reverted it", 又改回), still to come (将, 要, 计划),
# temporary (暂时, 临时) or asked (…吗): no value it holds now
NOT_A_CHANGE_MADE = re.compile(
    r"\b(?:and|then)\s+back\b|\brevert(?:ed)?\b|\brolled\s+back\b|\bundone\b|"
    r"将|要|会|计划|打算|准备|暂时|临时|改回|回滚|[吗么][\s。！!？?]*$",
    re.IGNORECASE,
)
# A sentence that says its change was undone ("… but rolled it back", "… and moved it back",
# "…，后来又改回来了"): the change it states left no value, so no clause of it that makes a change
# ("upgraded Postgres to 17", "moved the standup to 11am") states one
# ... unless it says what the value went back to ("we moved the staging API back to port 8080",
# "we rolled Postgres back to 16", "站会改回10点了"): that is a change to a value like any other
RETURNS_TO = re.compile(r"\bback\s+to\s+\S|\brevert(?:ed)?\s+\S.*?\bto\s+\S|改回(?:到|成|为)?\s*\S", re.IGNORECASE)
# A chat's lead-in before a statement ("FYI we moved the standup to 11am", "heads up: …")
# Since when a value holds, said before the fact ("Since Monday the API runs on port 9091", "As of
# today, …", "From now on …"): when, not what; the event time says when. Only a time already come:
# "Starting next week the standup will be at 11am" is a change still to come (no value yet), and
# "After 6pm, the door code is 4321" a condition, not a time (both keep their words, so no slot)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_SINCE_WHEN = (
    r"(?:today|tonight|yesterday|now|(?:this|last)\s+(?:week|weekend|month|quarter|year|sprint|release|"
    r"morning|afternoon|evening|" + _DAY + r")|" + _DAY + r"|" + _MONTH + r"\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?|"
    r"\d{1,2}(?:st|nd|rd|th)?\s+" + _MONTH + r"(?:\s+\d{4})?|\d{4}-\d{2}-\d{2})"
)
_TIME_LEAD = (
    r"(?:since|as\s+of)\s+" + _SINCE_WHEN + r"|from\s+now\s+on|going\s+forward|moving\s+forward|these\s+days|nowadays"
)
LEAD_IN = re.compile(
    r"^(?:(?:fyi|heads[\s-]up|btw|psa|quick\s+update|update|just\s+so\s+you\s+know|ok(?:ay)?|so|also|"
    + _TIME_LEAD
    # a correction's own preamble: "that was wrong, the standup is at 11am", "correction: …"
    + r"|correction|quick\s+correction|to\s+clarify|just\s+to\s+confirm|actually|sorry|oops|my\s+(?:mistake|bad)"
    + r"|(?:scratch|scrap|forget|disregard|ignore)\s+that|never\s?mind|(?:no|wait)(?=,)"
    + r"|(?:that|this|it)(?:\s+was|'s|’s|\s+is)\s+"
    r"(?:wrong|incorrect|a\s+mistake|not\s+right|outdated|obsolete))\b[\s,:;!.]+)+",
    re.IGNORECASE,
)
UNDONE = re.compile(
    r"\b(?:(?:moved|changed|switched|put|set|turned)\s+(?:it|them|that)\s+back|(?:and|then)\s+back|"
    r"revert(?:ed)?|rolled\s+(?:it\s+|them\s+|that\s+)?back|undone|undid)\b|改回|回滚|撤销了|又改回",
    re.IGNORECASE,
)
MAKES_A_CHANGE = re.compile(
    r"\b(?:moved|changed|switched|shifted|rescheduled|postponed|pushed|upgraded|downgraded|bumped|raised|"
    r"lowered|increased|reduced|renamed|updated|migrated|slipped)\b|升级|降级|改成|改为|改到|搬到|调整",
    re.IGNORECASE,
)
# "X（现在）向 Y 汇报": X's manager is Y, as "X reports to Y"; "不再向 Y 汇报" says no claim
REPORTS_TO_ZH = re.compile(
    r"^(?P<x>[^，。,;；\s]+?)(?:现在|目前|如今|仍然|还是|直接)*向(?P<y>[^，。,;；\s]+?)汇报(?:工作)?[。.!！]?$"
)
NEGATED_ZH = re.compile(r"不再|不|没有|没")
# A value that is where something is reached: a URL, a host name, an e-mail address. "The VPN
# portal is at vpn.example.com" and "Link to the VPN portal is https://…" are one slot: "at"
# says nothing more about an address (it does about a place: "Bob is at home", "in Berlin").
ADDRESS = re.compile(r"\S+://\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:[\w-]+\.)+[a-z]{2,}(?::\d+)?(?:/\S*)?", re.IGNORECASE)
STOP_TOKENS = frozenset("the a an of for to on at in our my your its this that these those".split())
STOP_CHARS = frozenset("的之该这那个本")
# Words that say how a value is given, not what it is the value of: "the VPN portal" and "link
# to the VPN portal", "runs version 2.3" and "version is 2.3", "当前版本" and "版本" are one slot.
SLOT_FILLERS = frozenset(
    "link links address url runs running current currently now time has 当 前 现 地 址 链 接 时 间 改 会".split()
)
# Said of a date, "date" says how the value is given: "the launch date is March 3" and "the launch
# slipped to March 10" are one slot, while "the export date format" is not "the export format"
DATE_FILLERS = frozenset("date dates 日 期".split())
TOKEN_PUNCT = ",.;:!?()[]{}\"'“”‘’「」《》，。：；！？、"


# -- relations ---------------------------------------------------------------------------------
# (pattern, relation, value kinds accepted or None for any). Earliest match in a clause wins;
# at one position the longer alternative is listed first.
_EN = r"(?<![\w/-])(?:{})(?![\w-])"
RELATIONS: tuple[tuple[re.Pattern[str], str, frozenset[str] | None], ...] = tuple(
    (re.compile(p), rel, kinds)
    for p, rel, kinds in (
        (
            _EN.format(
                r"(?:(?:now|still|currently)\s+)?(?:listens|listening|runs|running|is running|is served|serves|"
                r"is exposed|is reachable|is available|binds|is bound|is listening)\s+(?:on|at|to)\s+port|"
                r"(?:(?:has|have|was|were)\s+(?:been\s+)?)?moved\s+to\s+port(?=\s*\d+\s*(?:now)?\s*[.!]?\s*$)|"
                r"(?:(?:now|still|currently)\s+)?(?:listens|is listening)\s+on"
                r"(?=\s*\d{2,5}\s*(?:now|instead|again|today)?\s*[.!]?\s*$)|"
                r"(?:now\s+)?(?:uses|use|is using|are using|is now using|switched to|has switched to)\s+port"
                r"(?=\s*\d+\s*(?:now|instead|again|today)?\s*[.!]?\s*$)"
            ),
            "port",
            None,
        ),
        (r"(?:监听在?|运行在|跑在)(?:\s*端口号?)?|(?:改用|使用|用)(?=\s*\d+\s*端口)", "port", None),
        (_EN.format(r"(?:now\s+)?(?:returns|responds with|replies with|is returning|answers with)"), "returns", None),
        (r"返回(?:的是|值为|值是|了)?", "returns", None),
        (_EN.format(r"(?:now\s+)?(?:uses|is using|relies on|is built on|is written in|runs on)"), "uses", None),
        (
            r"改用|使用|采用|用的是|(?:迁移|迁|切换|切)到了?(?=\s*[A-Za-z])|(?<![费作应有运启适通信占])用(?![户于来法途到])",
            "uses",
            None,
        ),
        (_EN.format(r"costs|is priced at|will cost"), "costs", None),
        # what someone charges, an amount only ("the babysitter charges $18 an hour"; "charges EVs" is none)
        (_EN.format(r"(?:now\s+)?charges"), "costs", frozenset({"number"})),
        (
            _EN.format(
                # where someone lives, or their street address ("lives at 12 Main Street"; "at home" is none)
                r"(?:lives|live|is living|has lived|resides|is based|now lives)\s+(?:in|at(?=\s+\d+[a-z]?\s+[a-z]))|"
                r"(?:relocated|has relocated|has moved|is moving|will move)\s+to"
            ),
            "lives in",
            frozenset({"text"}),
        ),
        (r"住在|居住在|定居在?|搬到了?|搬去了?|移居到?", "lives in", frozenset({"text"})),
        (
            _EN.format(
                r"(?:works|work|is working|am working|now works|started working|(?:is|am|are) employed)"
                r"\s+(?:at|for|by)"
            ),
            "works at",
            frozenset({"text"}),
        ),
        # when something starts or leaves: a time or a date only ("the cleanup script starts on boot"
        # is none); a time pushed or delayed to, said as a headline ("Flight delayed to 11:40am")
        (
            _EN.format(
                r"(?:now\s+)?(?:starts|begins)\s+(?:at|on)|"
                r"(?:pushed|delayed|postponed|rescheduled|pushed back|moved back)\s+(?:to|until)|"
                # a time brought earlier ("the recital was moved up to 5pm")
                r"(?:(?:has been|was|is|got|been)\s+)?(?:moved up|moved forward|brought forward|pulled forward)\s+to"
            ),
            "is",
            frozenset({"when"}),
        ),
        # when it leaves, a slot of its own ("Bob starts at 9am" is not when he leaves)
        (_EN.format(r"(?:now\s+)?(?:departs|leaves|takes off)\s+(?:at|on)"), "departs", frozenset({"when"})),
        # when it opens, a slot of its own ("the gym opens at 6am" is not when it closes)
        (_EN.format(r"(?:now\s+)?opens\s+(?:at|on)"), "opens", frozenset({"when"})),
        # when it arrives, another slot ("the flight lands at 5pm" is not when it leaves)
        # … or comes ("the dog walker comes at noon", "the movers are coming on Tuesday"): when they get there
        (
            _EN.format(
                r"(?:now\s+)?(?:arrives|lands|gets\s+in|comes|(?:is|are)\s+(?:now\s+)?coming|will\s+come)\s+(?:at|on)"
            ),
            "arrives",
            frozenset({"when"}),
        ),
        # when a group meets: "the book club meets on Tuesdays", "… now meets on the second Tuesday" (a
        # day of the month, read in ledger.claims), as "the book club is on Tuesdays" says
        (_EN.format(r"(?:now\s+)?(?:meets|meet)\s+(?:on|every)"), "meets", frozenset({"when", "text"})),
        # an amount gone up or down to, a number only ("Bob went up to the roof" is none)
        (_EN.format(r"(?:went\s+up|went\s+down|rose|dropped|fell|jumped|climbed)\s+to"), "is", frozenset({"number"})),
        # when it ends or expires, how long it lasts: slots of their own ("the sprint ends on Friday"
        # is not when it starts), said now or before a change ("… now expires on April 1")
        (_EN.format(r"(?:now\s+)?(?:ends|finishes|closes)\s+(?:at|on|by)"), "ends", frozenset({"when"})),
        (
            _EN.format(r"(?:now\s+)?(?:expires|will expire|is valid until|is good until)(?:\s+(?:at|on|in))?"),
            "expires",
            frozenset({"when"}),
        ),
        (_EN.format(r"(?:now\s+)?(?:lasts|will last|is valid for)"), "lasts", frozenset({"number"})),
        (
            _EN.format(
                r"(?:has been|was|is|got|been)\s+(?:now\s+)?(?:changed|moved|set|updated|rescheduled|postponed|"
                r"delayed|pushed|bumped|switched|upgraded|downgraded|raised|increased|lowered|reduced|cut|renamed|"
                r"pushed back|moved back|reverted|rolled back)\s+to|(?:has\s+)?slipped\s+to|"
                r"(?:has been|was|is|got|been)\s+(?:rescheduled|moved|postponed)\s+for|"
                r"(?:upgraded|downgraded|set|bumped|raised|increased|lowered|reduced|updated|extended|shortened)\s+to|"
                r"(?:has been|was|is|got|been)\s+(?:extended|shortened|scaled)\s+to|is located|is situated|"
                r"is scheduled (?:for|on|at)|is set (?:for|to)|is now|is currently|"
                r"is still|will be|equals|is equal to|becomes|moved to|changed to|is held at|is|are"
            ),
            "is",
            None,
        ),
        (
            r"已?(?:改回到|改回成|改回|改为|改成|改到|变为|变成|变更为|调整为|调整到|更新为|升级到|升级为|升到|设为|设置为|设定为|定在|定于|安排在|挪到|"
            r"推迟到|提前到|延期到|等于|就是|" + ZH_CHANGED_TO + r")了?|(?<![但还于总可只要凡倒真老不否])是(?![否不])|"
            r"(?<![因作认成以称行视为更较极最])为(?![了什何止主])",
            "is",
            None,
        ),
        (
            r"(?<![现正存所实自好])在(?=每天|每日|周|星期|礼拜|\d|上午|下午|晚上|中午|早上|凌晨|[一二三四五六七八九十]+月)",
            "is",
            frozenset({"when"}),
        ),
        (r"\s*(?:==|=)\s*", "is", None),
        (rf":\s+|：\s*|(?<=[{_CJK}]):", "colon", None),
    )
)


def _any_relation() -> re.Pattern[str]:
    """One pass finds the leftmost relation; at one position the earlier entry above wins. The
    English entries share one word-boundary check (one look-behind per position instead of one per
    entry): no other entry can match where an English one starts (a letter), so their order among
    themselves is all the grouping must keep."""
    head, tail = _EN.split("{}")
    english = [(i, p.pattern[len(head) : -len(tail)]) for i, (p, _, _) in enumerate(RELATIONS) if _is_english(p)]
    others = [f"(?P<r{i}>{p.pattern})" for i, (p, _, _) in enumerate(RELATIONS) if not _is_english(p)]
    grouped = head + "|".join(f"(?P<r{i}>{inner})" for i, inner in english) + tail
    return re.compile("|".join([grouped, *others]))


def _is_english(pattern: re.Pattern[str]) -> bool:
    head, tail = _EN.split("{}")
    return pattern.pattern.startswith(head) and pattern.pattern.endswith(tail)


ANY_RELATION = _any_relation()
find_relation = leftmost_search(ANY_RELATION)  # ANY_RELATION.search, tried only where a relation can start
IMPLICIT = re.compile(
    r"^(?P<left>.*?(?:预算|金额|价格|费用|截止日期|截止时间|日期|端口号?|版本号?|budget|price|deadline|due date|"
    r"(?<![a-z])port|(?<![a-z])version))\s*(?:of\s+)?(?P<value>.+)$"
)
match_implicit = match_where_possible(IMPLICIT)
NEGATED_LEFT = re.compile(r"(?:\bnot|n't|\bno longer|\bnever|不|没|没有|并非|非|不再|未)\s*$")
# "may" is a hedge before a verb ("we may launch on June 3"), the month before or after a day,
# after a preposition or last ("the launch is May 3", "3 May", "in May": a date, no hedge)
_MAY_MODAL = (  # the look-behinds follow "may" (they include it): tried only where "may" stands
    r"\bmay\b(?=\s+[^\W\d])(?<!\d may)(?<!\bin may)(?<!\bof may)(?<!\bby may)(?<!since may)(?<!until may)"
    r"(?<!early may)(?<!\bmid may)(?<!\bmid-may)(?<!\blate may)(?<!\bend may)(?<!from may)(?<!after may)"
    r"(?<!before may)"
)
HEDGED = re.compile(
    r"(?:\b(?:maybe|perhaps|probably|might|could|should|would|if|whether|unless)\b|" + _MAY_MODAL + r"|可能|也许|"
    r"大概|或许|如果|假如|是否|应该|估计)"
)
hedged = leftmost_search(HEDGED)  # HEDGED.search, tried only where a hedge can start
LEFT_FILLERS = re.compile(
    r"^(?:(?:note that|note|fyi|i think|we think|i believe|it seems|so|also|and|but|now|currently|today|"
    r"update|correction|actually|apparently|confirmed|heads up|btw|现在|目前|当前|如今|今天|据说|注意|另外|然后|"
    r"其实|最新|更新|确认|听说|已经|所以|而且|并且|但是|不过|经确认|我们的|咱们的|我的|(?:我们|我|他们|咱们|大家)?把|"
    # since when it holds, said first (as "from now on"): "从今天起站会改成10点" is the standup's time
    r"从今天起|从今天开始|从现在起|从现在开始|从今以后|自即日起|即日起|今后)[\s:,，：]*)+"
)
LEFT_TRAILERS = re.compile(
    r"(?:\s*(?:现在|目前|已经|已|也|还|都|将|会|仍然|仍|依然|一直|则|就|正在|现|暂时|统一|"
    r"去年|今年|前年|最近|上个月|上周|刚刚|刚|now|currently|still|also|recently|just))+$"
)
# When a thing happened is not part of what happened: "moved to Berlin last year" is Berlin.
TRAILING_TIME = re.compile(
    r"(?:\s+(?:(?:last|this|next)\s+(?:year|month|week|weekend|summer|winter|spring|fall|"
    r"autumn)|recently|yesterday|today|lately|now|currently|these days|"
    r"(?:a|one|two|three|a few|\d+)\s+(?:years?|months?|weeks?|days?)\s+ago|in\s+\d{4}))+$"
)
PRONOUNS = frozenset(
    "it this that he she they there here we i you these those we're i'm they're you're 这 那 它 他 她 这个 那个 此 "
    "我 我们 你 你们 他们 她们".split()
)
# "a developer", "not ready", "my stress relief", "our top priority": a description, not a value.
NOT_A_VALUE_START = (
    "a ",
    "an ",
    "not ",
    "no ",
    "my ",
    "our ",
    "his ",
    "her ",
    "their ",
    "your ",
    "不",
    "没",
    "非",
    "我的",
    "我们的",
    "他的",
    "她的",
)
# "The team lunch is off tonight", "… off this Friday": one occurrence called off, no value of its
# schedule (which is a cancellation's, ledger.cancellation); "off Main Street" is where it is
OFF_FOR_A_TIME = re.compile(
    r"^off\s+(?:tonight|today|tomorrow|again|(?:this|next|on)\s+\w+|for\s+(?:now|today|tonight|(?:this|next)\s+\w+))\b",
    re.IGNORECASE,
)
VAGUE_START = frozenset(
    """almost just really so super very both also always still one like why how what where
    when who whom which whose most more less such quite pretty kind sort all too even the on in at for to from with
    of about by into over under like as than there here everything something nothing anything going doing getting
    being having making""".split()
)
DEMONSTRATIVES = frozenset("it this that these those there here 这 那 它 这个 那个 此".split())
PERSONS = frozenset("i we he she they 我 我们 你 你们 他 她 他们 她们".split())  # pronouns that stand for people
# Remarks, not attributes: "the problem is …", "the reason is …", "重点是 …".
DISCOURSE = frozenset(
    """problem issue point reason thing idea truth question answer catch trick plan result
    difference fact 问题 重点 原因 关键 结果 意思 目的 好处 坏处 事实 情况 答案 区别 麻烦 难点""".split()
)
MOVED = re.compile(r"\bmoved to$")
# Things that have a place rather than a home: "the office has moved to Denver" is where it is
PLACES_OF_WORK = frozenset(
    "office offices headquarters hq company store shop warehouse lab clinic branch campus factory studio "
    "datacenter server servers cluster".split()
)
# What a thing is "in" or "on" that is how it stands, not where it is: "the project is on hold" and
# "… is in progress" are one slot (its status), apart from "the office is on Elm Street"; "<x> hours"
# and "<x> mode" are of it too ("the library is on holiday hours", "the printer is in maintenance mode")
STATUSES = frozenset(
    """hold progress track schedule time pause ice backburner beta alpha preview maintenance production staging
    development testing review draft escrow transit stock silent mute""".split()
)
STATUS_ENDINGS = ("hours", "mode")
# A status said only "on": "the house is on the market" ("the stall is in the market" is where it is)
STATUSES_ON = frozenset({"market"})
# A passing state, which states no value ("the office is in chaos", "the store is on sale", "Bob is on
# vacation"): it neither replaces where a thing is nor is replaced by another state it is also in
PASSING_STATES = frozenset(
    """chaos turmoil disarray shambles lockdown quarantine trouble crisis debt fire sale strike break vacation
    holiday holidays leave recess alert standby display loan offer backorder fear""".split()
)
# Where someone works or when, not where they live: "Bob moved to the night shift", "… moved to Product"
WORK_MOVES = frozenset(
    """product marketing sales engineering finance design support operations ops hr legal research it qa
    security accounting management recruiting infra infrastructure platform analytics nights days weekends
    mornings evenings part-time full-time remote devops sre backend frontend success contracting consulting""".split()
)
# What a move at work is to, named last: "Sam moved to the 5th floor", "… to the front desk", "… to the Tokyo
# office", "… to the billing project", "… to the evening class", "my daughter moved to 2nd grade"
WORK_MOVE_HEADS = frozenset("shift shifts floor desk seat office project rotation class grade".split())
# What someone lives in that is no place: "Bob lives in fear of spiders", "… in denial"
NOT_A_HOME = frozenset(
    "fear denial hope dread terror misery poverty luxury sin peace harmony limbo comfort moment".split()
)
# "Jenny moved to desk 7A", "the meeting moved to room Kilimanjaro": Jenny's desk, the meeting's room
# Events, which have a place too: "the team offsite is in Denver", "book club is at Jenna's house" and
# "the offsite moved to Austin", "book club moved to Mia's house" say where the event is, one slot
EVENTS = frozenset(
    """offsite retreat party meetup meeting club wedding reception dinner lunch brunch breakfast picnic barbecue
    bbq reunion shower ceremony conference summit workshop recital concert gala fundraiser potluck hangout playdate
    sleepover seminar tournament festival celebration night agm qbr""".split()
)
# People by who they are to someone: "my mom comes on Sundays" is a person's habit, not a visit's one time
KIN = frozenset(
    """mom mum mother dad father parents grandma grandpa grandmother grandfather sister brother wife husband son
    daughter aunt uncle cousin friend boyfriend girlfriend partner kids kid neighbor neighbour""".split()
)
# What is not where an event is, though said "in" and capitalised: "the wedding is in June", "… in Q3", "… in
# two weeks" say when
NOT_A_PLACE = re.compile(
    # a month, named or cut short ("Marseille", "Mayfair", "the market" are none)
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?"
    r"|nov(?:ember)?|dec(?:ember)?)\b|q[1-4]\b|(?:spring|summer|fall|autumn|winter)\b"
    r"|\d{1,2}(?:st|nd|rd|th)\b"  # "moved to the 22nd": a day of the month
    r"|h[12]\b"  # "the offsite is in H2": a half of the year
    r"|(?:19|20)\d\d$|(?:a|an|one|two|three|four|five|six|a few|several|\d+)\s+"
    r"(?:minutes?|hours?|days?|weeks?|months?|years?)\b"
)
# What a price is of, said or not: "the Spotify subscription costs $10.99" and "Spotify now costs
# $11.99", "the gym membership is $40" and "the gym went up to $45" are one price
PRICE_FILLERS = frozenset("subscription membership plan".split())
# Languages, capitalised as names: "the conference is in English" says in what, not where
LANGUAGES = frozenset(
    """english spanish french german italian portuguese chinese mandarin cantonese japanese korean russian
    arabic hindi dutch""".split()
)
MOVED_TO_A_PLACE = re.compile(
    r"^(?P<x>.+?)\s+(?i:(?:(?:has|have|was|were|got)\s+(?:been\s+)?)?moved\s+to)\s+"
    r"(?P<noun>(?i:desk|room|floor|seat|building|table|channel|suite|gate|platform|track|bay|aisle|row|site))\s+"
    r"(?P<y>(?:\d|[A-Z]|#)\S*.*)$",
)
# "The meeting is in Room 4", "my flight is at gate B12": the meeting's room, the flight's gate, the slot
# "the meeting moved to Room 7" changes
IN_A_PLACE = re.compile(
    r"^(?P<x>.+?)\s+(?i:(?:is|are)\s+(?:now\s+)?(?:in|at|on))\s+"
    r"(?P<noun>(?i:desk|room|floor|suite|gate|platform|track|bay))\s+"
    r"(?P<y>(?:\d|[A-Z]|#)\S*)[.!]?$",
)
QUESTION_START = re.compile(
    r"^(?:what|which|who|how|why|when|where|whether|is|are|does|do|哪|什么|谁|如何|为什么|怎么)\b"
)
GENERIC_LABELS = frozenset(
    "note notes todo tip tips update reminder warning summary example question answer context status update "
    "fyi result results 注意 备注 提醒 更新 总结 例如 问题 回答 说明 结论".split()
)
# What a person says, not a value: "Caroline: Hey Mel!", "Bob: I think so". A colon followed by
# one of these (or by a long clause) marks a speaker label, and only the utterance is read.
UTTERANCE_START = frozenset(
    "i i'm i've i'd i'll me my we we're we've our you you're you've you'd your he he's she she's they "
    "they're it it's its that that's this there there's here what what's hey hi hello wow thanks thank yeah "
    "yes yep yup no nope oh ok okay sure well so totally haha lol omg aw aww awesome cool great nice sounds "
    "good congrats congratulations sorry please hmm um just really gonna wanna let's can could would "
    "did do does have had was were".split()
)
SPEAKER_LINE_WORDS = 5
# Relations that hold several values at once when people hold them ("uses"); the verbs that are
# always several-valued (speaks, knows, owns, visited, 会说 …) are no relation here at all.
GROUPS = frozenset(
    """team teams we us everyone people company companies org organization organisation
    department group squad crew staff engineers developers devs users customers family""".split()
)
GROUPS_ZH = ("团队", "我们", "公司", "小组", "部门", "大家", "组里", "家里")
QUALIFIER_END = re.compile(r"\s*[,.;:!?()]|\s+(?:because|since|but|which|and|so|while|when|until)\b")
LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
EVERY_DAY = re.compile(r"^(?:每天|每日|每晚|每个工作日|工作日)\s*")
VALUE_PREPOSITIONS = re.compile(r"^(?:(?:on|at|in|for|by|to|until|around|about)\b|约|大约|大概|在|于)\s*")
VALUE_NOUN = re.compile(r"^(?P<noun>port|version|端口号?|版本号?)\s*(?=[v\d])")
# "12 Main Street", "40 Elm St": an address, not the number 12 ("the office is at 12 Main Street"
# and "… moved to 40 Elm Street" are two addresses, not 12 and 40)
STREET_ADDRESS = re.compile(
    r"^\d+[a-z]?\s+(?:[\w.'-]+\s+){1,3}(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|way|place|pl"
    r"|court|ct|square|sq|parkway|pkwy|terrace|highway|hwy)\b\.?"
)
EN_VALUE_END = re.compile(
    r"\s+(?:because|since|so that|so|but|which|where|when|while|for|in order|and|until|"
    r"after|before|unless|if|as)\b|,\s|\s\(|\s[-–—]\s"
)
ZH_VALUE_END = re.compile(r"因为|所以|但是|而且|并且|以便|（|\(|，")
ZH_PARTICLES = re.compile(r"(?:了|啦|呢|吧|哦|呀|的话|左右|上下)+$")
DESCRIPTIVE = frozenset(
    """fast slow quick easy hard difficult simple complex important critical urgent stable unstable flaky broken
    fixed ready done finished complete incomplete good bad great fine ok okay nice better worse best worst big
    small large huge tiny high low long short new old late early busy full empty safe unsafe secure insecure
    correct wrong right valid invalid experimental expensive cheap available unavailable required optional
    necessary possible impossible likely unlikely happy sad tired healthy sick clean dirty messy reliable
    unreliable responsive weird strange confusing clear unclear very really quite too so pretty extremely
    not no never always usually sometimes often mostly fully partly deprecated legacy slower faster
    awesome amazing awful terrible wonderful fantastic cool fun funny lovely beautiful gorgeous sweet kind
    special vital key crucial essential inspiring exciting interesting boring tough cute adorable scary rough
    worth gonna tenuous""".split()
)
PARTICIPLES = frozenset(
    """written taken given broken chosen hidden frozen forgotten driven proven spoken stolen
    shaken known shown done gone seen run built set put kept held made paid sent spent""".split()
)
NAMED = re.compile(r"[A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*){0,2}")  # "Bob", "Alice Chen": no article
DESCRIPTIVE_SUFFIX = re.compile(r"(?:ed|ing|ly|ful|ous|ive|able|ible|less|ish)$")
# a value that only ends like a participle: "the field type is string" (as "… is integer")
SUFFIXED_VALUES = frozenset({"string"})
# a title's full stop ends no sentence: "Our doctor is Dr. Lee" was "our doctor is Dr" (so "Dr. Gomez"
# was the same value). Only titles that stand before a name: "St." ends an address ("I live on Main
# St. The office is in Denver") and "Jr."/"Sr." a name as often as not.
_TITLES = "".join(rf"(?<!\b{t}\.)" for t in ("Mr", "Mrs", "Ms", "Dr", "Prof", "Mt"))
SENTENCES = re.compile(r"(?<=[。！？!?；;\n])|(?<=[.])" + _TITLES + r"(?=\s)")
# "while" before someone's absence is when, not a second fact: "Alice took over as lead while Bob
# is on leave" is one clause (a stand-in, no new holder), "the API uses port 80 while the worker
# uses port 81" two
_AWAY_PHRASE = (
    r"\s+(?:[\w'’.-]+\s+){1,3}(?:is|are)\s+(?:(?:still|currently|now)\s+)?(?i:on\s+(?:[\w-]+\s+)?leave|away|out|off"
    r"|on\s+(?:vacation|holiday|sabbatical|pto)|sick|travell?ing|recovering|unavailable|ooo)\b"
)
_AWAY = f"(?!{_AWAY_PHRASE})"
# a stand-in's clause: "Bob is the team lead while Alice is on leave" names no holder of the role
WHILE_AWAY = re.compile(r"\bwhile" + _AWAY_PHRASE, re.IGNORECASE)
CLAUSES = re.compile(
    r"[，]|,?\s+(?:and|but|while" + _AWAY + r"|whereas)\s+"
    r"(?=(?:the\s+|our\s+|my\s+)?(?:[\w/.-]+\s+){1,3}(?:is|are|returns|uses)\b)"
)


SPEAKER_LABEL = re.compile(r"^\s*[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}:\s+(?P<said>\S.*)", re.DOTALL)


# -- ownership ---------------------------------------------------------------------------------
# "X owns Y", "Y is owned by X", "Y 的负责人是 X", "X 负责 Y": one owner per thing, so the thing is
# the subject and the owner the value ("Alice Chen owns the billing service" and "Carol Diaz owns
# the billing service" collide). Things one owns many of ("Bob owns a Tesla") are no claim: the
# thing must be definite ("the …"), a name, or a system-like noun; co-owners and lists are none.
OWNS_EN = re.compile(
    r"^(?P<x>.+?)\s+(?:now\s+|also\s+)?(?:owns|is the (?:new |current )?owner of|is (?:now )?responsible for|"
    r"is (?:now )?in charge of|(?:has )?took over|has taken over)\s+(?!as\b)(?P<y>.+)$"
)
OWNED_EN = re.compile(r"^(?P<y>.+?)\s+(?:is|are)\s+(?:now\s+)?(?:owned by|the responsibility of)\s+(?P<x>.+)$")
OWNER_OF_EN = re.compile(
    r"^(?:the\s+)?(?:current\s+|new\s+)?owner of\s+(?P<y>.+?)\s+(?:is|is now|has become|became)\s+(?P<x>.+)$|"
    r"^(?P<y2>.+?)(?:'s|’s)\s+(?:current\s+|new\s+)?owner\s+(?:is|is now|has become|became)\s+(?P<x2>.+)$"
)
OWNER_ZH = re.compile(r"^(?P<y>.+?)的?负责人(?:现在|目前|已经|已)?(?:是|为|改为|换成了?|变成了?|换为)(?P<x>.+)$")
OWNS_ZH = re.compile(r"^(?P<x>.+?)(?:现在|目前|已经|开始)?(?:负责|接手了?)(?![人任的])(?P<y>.+)$")
OWNED_ZH = re.compile(r"^(?P<y>.+?)(?:现在|目前|已经|已)?由(?P<x>.+?)(?:负责|接手)了?$")
# "计费服务现在归Dana管", "the billing service is Dana's now": whose the thing is
BELONGS_ZH = re.compile(r"^(?P<y>.+?)(?:现在|目前|已经|已)?归(?P<x>[^，。,;；\s]+?)(?:管理?|负责)?了?$")
BELONGS_EN = re.compile(r"^(?P<y>.+?)\s+is\s+(?:now\s+)?(?P<x>[a-z][\w.-]*(?:\s+[a-z][\w.-]*)?)['’]s(?:\s+now)?$")
OWNER_WORD = re.compile(r"own|owner|responsib|in charge|took over|taken over|负责|接手|归|['’]s(?:\s+now)?$")
OWNED_THING = re.compile(
    r"(?:^the |^our |(?:service|api|repo|repository|module|component|project|pipeline|system|database|db|cluster|"
    r"server|app|application|library|package|product|feature|platform|codebase|backend|frontend|infra|"
    r"infrastructure|budget|account|domain|dashboard|website|site|job|queue|integration|sdk|cli|roadmap|"
    r"migration|rollout|launch|release|process)$)"
)
OWNER_GROUP = re.compile(r"(?:team|squad|group|guild|org|团队|小组|组|部门)$")
MANY = re.compile(r"\band\b|&|,|、|和|及|与|以及|跟")
NOT_OWNED_START = re.compile(r"^(?:a|an|some|many|several|all|two|three|\d+|any|every|no|it|this|that|them)\b")
# A role held by one person at a time ("the on-call engineer is …"): its values are names, even
# one that reads as a date ("Jun 9") or a number, so one key never splits by the value's type.
ROLE_WORDS = frozenset(
    """owner engineer manager lead leader captain contact assignee reviewer maintainer approver on-call
    oncall champion sponsor coordinator dri ceo cto cfo coo cio ciso cpo president chair chairperson
    head treasurer secretary coach principal landlord""".split()
)
ROLE_ZH = (
    "负责人",
    "联系人",
    "值班",
    "经理",
    "组长",
    "主管",
    "工程师",
    "对接人",
    "审批人",
    "维护人",
    "管理员",
    "房东",
    "班主任",
    "教练",
)
# "Erin is the team lead", "Dan is Bob's new manager", "李四是张三的经理": the person named first holds
# the role, the slot is the role ("the team lead is Erin"); only a definite role ("the …", "X's …",
# "my …", "…的…"), never "Erin is a lead engineer" (what someone is). An interim or acting holder is a
# role of its own: "Bob is the interim CTO" stands in, it does not replace "Alice is the CTO"
HOLDS_ROLE = re.compile(
    r"^(?P<x>[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,2})\s+is\s+(?:(?:now|still|currently)\s+)*"
    r"(?:(?P<whose>[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*){0,2})['’]s|the|(?P<mine>my|our))\s+(?:(?:new|current)\s+)?"
    r"(?P<role>[\w-]+(?:\s+[\w-]+){0,3}?)(?P<rest>\s+(?:of|for|on|this|next)\b.*)?[.!]?$"
)
# "Meet our new CEO, Evan", "Please welcome our new CTO, Dana Lee": the role's new holder, as "our CEO
# is Evan" (a role one person holds: "meet our new engineer, Bob" names one engineer of many)
MEET_NEW = re.compile(
    r"^(?i:(?:(?:please|let['’]s|everyone,?)\s+)?(?:meet|welcome|say\s+(?:hello|hi)\s+to|introducing)\s+"
    r"(?:our|the|your)\s+new\s+)(?P<role>(?i:[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})),?\s+"
    r"(?P<x>[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,2})\s*[.!]*$"
)
ONE_HOLDER_ROLES = frozenset(
    "ceo cto cfo coo cio ciso cpo president chair chairperson head manager lead leader captain".split()
)
# roles a team has many of, unless what they lead is named ("our new manager, Bob" is one of several)
MANY_HOLDER_ROLES = frozenset({"manager", "lead", "leader"})
# "The cluster has 3 nodes", "the team grew to 10 engineers", "we scaled the cluster to 5 nodes": how
# many of one thing it has, the slot "the cluster's nodes count" (a number and one plural noun)
_COUNT = (
    r"\s+(?:(?:about|around|roughly|over|under|only|just|exactly)\s+)?(?P<n>\d[\d,.]*)\s+"
    r"(?P<noun>[a-z][a-z-]*[^\Wsu]s|people|children|staff)"
)
_COUNT_END = r"(?:\s+(?:now|today|in total|total))?[.!]?$"
HAS_COUNT = (
    re.compile(
        r"^(?P<x>.+?)\s+(?:(?:now|currently|still|already)\s+)*(?:has|have|(?:has\s+|have\s+)?(?:grown|grew|scaled|"
        r"shrunk|shrank|expanded|dropped|fallen|fell)\s+(?:up\s+|down\s+)?to)" + _COUNT + _COUNT_END,
        re.IGNORECASE,
    ),
    re.compile(
        r"^(?:we|they|i|ops|the team)\s+(?:(?:have|has|just)\s+)*(?:scaled|grew|expanded|increased|reduced|shrank|cut)"
        r"\s+(?P<x>.+?)\s+(?:up\s+|down\s+)?to" + _COUNT + _COUNT_END,
        re.IGNORECASE,
    ),
)
# "The plan allows 10 users", "the venue accepts up to 200 guests": how many a rule lets in is one
# count, the slot "the plan's allowed users count" ("allows 5 users" changes it; "allows dogs" and a
# count said with more after it, "5 users per team", stay yes/no facts of their own object)
ALLOWS_COUNT = re.compile(
    r"^(?P<x>.+?)\s+(?:(?:now|currently|still)\s+)*(?P<verb>allows|permits|supports|accepts)"
    r"(?:\s+(?:up\s+to|a\s+maximum\s+of|at\s+most))?" + _COUNT + _COUNT_END,
    re.IGNORECASE,
)
ALLOWED = {"allows": "allowed", "permits": "allowed", "supports": "supported", "accepts": "accepted"}
# "张三换了新手机号13900000000": 张三's phone number is the new one ("张三的手机号是…")
ZH_NEW_VALUE = re.compile(
    r"^(?P<x>[^，。,;；\s]+?)(?:换了|有了|用了|改了)(?:一?个)?新的?(?P<y>[^\s\d:：，。,;；]{1,8}?)[:：\s]*"
    r"(?P<v>[A-Za-z0-9@+#][\w@.+#/-]*)[。.!！]?$"
)
# "团队有8个人", "团队扩大到12个人": how many of one thing the team has ("团队有2个实习生" counts
# another)
ZH_HAS_COUNT = re.compile(
    r"^(?P<x>[^，。,;；\s]+?)(?:现在|目前|如今)?(?:共有|一共有|有|(?:扩大|缩小|增加|减少|扩充|增长|下降|增|减|降)(?:到|至)了?)"
    r"(?P<n>\d+|[一二两三四五六七八九十百千万]+)(?P<unit>个|名|位|台|条|家)(?P<noun>[^\s，。,;；]{0,4}?)了?[。.!！]?$"
)
# "Sarah took over as project lead", "Sarah replaced Tom as project lead": the role's holder, as
# "Sarah is the project lead"
TEMPORARY = re.compile(r"\b(?:while|until|during|temporarily|for now|covering|in the meantime)\b", re.IGNORECASE)
TOOK_OVER = re.compile(
    r"^(?P<x>[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,2})\s+(?:(?:has|have|just|now|officially)\s+)*"
    r"(?:took\s+over|taken\s+over|takes\s+over|is\s+taking\s+over|replaced\s+[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)?)\s+as\s+"
    r"(?:(?:the|our|their|his|her)\s+)?(?:new\s+)?(?P<role>[\w-]+(?:\s+[\w-]+){0,3}?)(?P<rest>\s+(?:of|for|on)\b.*)?[.!]?$"
)
# "Daniel was replaced by Aisha as our account manager": Aisha holds the role, as TOOK_OVER reads it
REPLACED_BY = re.compile(
    r"^[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,2}\s+(?:was|has\s+been|have\s+been|got|just\s+got)\s+replaced\s+by\s+"
    r"(?P<x>[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,2})\s+as\s+"
    r"(?:(?:the|our|their|his|her)\s+)?(?:new\s+)?(?P<role>[\w-]+(?:\s+[\w-]+){0,3}?)(?P<rest>\s+(?:of|for|on)\b.*)?[.!]?$"
)
# "Bob got promoted to Staff Engineer", "Bob was promoted to Staff Engineer": Bob's title now
PROMOTED = re.compile(
    r"^(?P<x>[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,2})\s+(?:(?:was|got|has|been|just|recently|finally)\s+)*"
    r"promoted\s+to\s+(?:(?:a|the)\s+)?(?P<y>[^\W\d][^,;]*?)(?:\s+(?:last|this)\s+\w+|\s+yesterday|\s+today)?[.!]?$"
)
TITLE_WORDS = re.compile(
    r"\b(?:engineer|manager|director|lead|principal|vp|president|head|chief|officer|partner|associate|analyst|"
    r"architect|designer|scientist|developer|supervisor|specialist|consultant|coordinator|administrator|editor|"
    r"professor|counsel|ceo|cto|cfo|coo|cio|sre|fellow|captain)$",
    re.IGNORECASE,
)
# A rate: "$20 per month", "100 requests/minute", "每月20元": the period is part of the slot ("$20 per
# month" is not "$200 per year", nor "$20 per user")
RATE = re.compile(
    r"(?:/\s*|\bper\s+|\ba\s+|\ban\s+|\beach\s+)(?P<period>month|mo|year|yr|annum|week|day|night|hour|hr|minute|min"
    r"|second|sec|user|seat|person|head|request)s?\b|每个?(?P<zh>月|年|周|天|晚|小时|分钟|秒|人)"
    # "25元/月", "3000元一个月": a Chinese period after the amount
    r"|(?:/\s*|一个?)(?P<zh_after>月|年|周|天|晚|小时)"
)
# "每月25元": the period said before the amount ("是每月25元", "涨价到每月30元")
ZH_RATE_FIRST = re.compile(r"^\s*每个?(?:月|年|周|天|晚|小时)(?=\s*\d)")
RATE_PERIODS = {
    "mo": "month",
    "yr": "year",
    "annum": "year",
    "hr": "hour",
    "min": "minute",
    "sec": "second",
    "head": "person",
    "月": "month",
    "年": "year",
    "周": "week",
    "天": "day",
    "晚": "night",
    "小时": "hour",
    "分钟": "minute",
    "秒": "second",
    "人": "person",
}
# A journey: its time is when it leaves ("my flight is at 9:15am" is its departure, as "… departs at")
DEPARTURES = frozenset("flight flights train bus ferry plane shuttle coach boat cruise 航班 火车 高铁 大巴".split())
# An amount of money named by its attribute ("the budget is $50k", "Alice's salary is $100k"): "is $X"
# states that amount, not the price of a thing ("the Pro plan is $25/month")
AMOUNTS = frozenset(
    """price budget budgets salary salaries pay wage wages rent fee fees fare fares rate rates revenue income
    balance spend spending funding fine deposit tip tips bill total amount limit cap valuation bonus payment
    payments loan debt savings premium deductible raise refund charge charges commission allowance stipend
    grant profit loss sales arr mrr margin invoice donation prize award payout subsidy tax taxes discount
    credit earnings worth value cash money estimate quote offer bid reward bounty pension interest mortgage
    retainer threshold minimum maximum max min floor ceiling reserve runway burn spent cost costs
    预 算 费 薪 资 额 金 款""".split()
)
# Relations that name a slot of their subject: "the Pro plan costs $20" is the slot "the Pro plan
# price is $20", "the sprint ends on Friday" of "the sprint end date is Friday"
RELATION_SLOTS = {
    "costs": "price",
    "ends": "end",
    "expires": "expiry",
    "lasts": "duration",
    "departs": "departure",
    "arrives": "arrival",
    "opens": "opening",
}
# "Dave is on call (this week)": the on-call role's holder, as "Dave is the on-call engineer"
ON_CALL_HOLDER = re.compile(
    r"^(?P<x>[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,2})\s+is\s+(?:(?:now|still|currently)\s+)*on[- ]call\b(?P<rest>.*)$"
)
HOLDS_ROLE_ZH = re.compile(
    r"^(?P<x>[^，。,;；\s的是]{1,12}?)(?:现在|目前|如今)?是(?P<role>[^，。,;；\s]{1,24}?的?[^，。,;；\s的]*?)[。.!！]?$"
)


# -- preferences -------------------------------------------------------------------------------
# "Bob likes jazz" / "Bob doesn't like jazz", "用户喜欢咖啡" / "用户不喜欢咖啡": a yes/no claim keyed
# by what is liked, so a changed taste collides and two different tastes never do.
LIKE_EN = re.compile(
    r"^(?P<who>.*?)\s*(?<![\w'’])(?P<neg>does not|doesn['’]t|do not|don['’]t|no longer|never)?\s*"
    r"(?<![\w'’])(?P<verb>(?:likes|loves|enjoys|dislikes|hates|eats|drinks|allows|permits|accepts|supports|requires)"
    r"|(?:is fine with|is ok with|is okay with|can eat)"
    r"|(?:like|love|enjoy|dislike|hate|eat|drink|allow|permit|require|support|accept))"
    r"\s+(?P<what>.+)$"
)
match_like_en = match_where_possible(LIKE_EN)
LIKE_ZH = re.compile(
    r"^(?P<who>.*?)(?P<neg>不再|不太|并不|从来不|从不|不)?(?P<verb>喜欢|讨厌|爱吃|爱喝|允许|(?<![小好])吃|喝)(?P<what>.+)$"
)
# Eating and drinking are yes/no facts about one food ("不吃香菜" / "现在吃香菜了"), keyed by the verb.
TASTE_VERBS = {
    **dict.fromkeys(("eats", "eat", "is fine with", "is ok with", "is okay with", "can eat"), "eats"),
    **{"drinks": "drinks", "drink": "drinks", "吃": "吃", "喝": "喝"},
    # what a place, a plan or a service allows or asks for is a yes/no fact too ("the office allows
    # dogs" / "the office does not allow dogs"; 办公室允许带狗 / 不允许带狗), keyed by the verb and its object
    **dict.fromkeys(("allows", "allow", "permits", "permit"), "allows"),
    **dict.fromkeys(("accepts", "accept"), "accepts"),
    **dict.fromkeys(("supports", "support"), "supports"),
    **dict.fromkeys(("requires", "require"), "requires"),
    "允许": "允许",
}
WHO_TRAILERS = re.compile(r"(?:现在|如今|已经|能|可以|也|还|又|开始|平时|通常|一般|总是|每天|改)+$")
FIRST_PERSON = frozenset("i we you they 我 我们 你 你们 他们 她们".split())  # bare "like" follows these
DEGREE = re.compile(
    r"(?:最|很|非常|特别|比较|更|也|还|都|一直|真的)+$|(?:\s+(?:really|truly|absolutely|definitely|"
    r"actually|generally|usually|always|totally|genuinely|particularly|especially))+$"
)
TASTE_WORD = re.compile(
    r"(?i:like|love|enjoy|hate|eat|drink|fine with|ok with|okay with|allow|permit|accept|support|require)"
    r"|喜欢|讨厌|爱吃|爱喝|吃|喝|允许"
)
taste_word = leftmost_search(TASTE_WORD)
TASTE_TRAILERS = re.compile(
    r"(?:\s+(?:anymore|any more|now|too|either|a lot|very much|so much|at all|much|again|these days)|了|啦)+$"
)
NOT_A_TASTE = frozenset(
    "it this that them him her you me us 它 这 那 这个 那个 你 我 他 她 你们 我们 他们 她们".split()
)

# A drink someone usually has or prefers is one value at a time ("prefers tea" → "switched to coffee"):
# English needs the drink named (the lexicon), Chinese says 喝 with a habit or preference marker.
DRINK_WORDS = frozenset(
    """tea coffee latte espresso cappuccino americano mocha water juice milk chocolate cocoa beer wine
    soda cola lemonade smoothie kombucha matcha chai""".split()
)
DRINK_EN = re.compile(
    r"^(?P<who>.+?)(?:'s|’s)\s+(?:favou?rite|usual|preferred|go-to|daily)\s+drink\s+is\s+(?:now\s+)?(?P<what>.+)$"
    r"|^(?P<who2>.+?)\s+(?:now\s+)?(?:prefers|switched to|has switched to|now drinks|usually drinks)\s+(?P<what2>.+)$"
)
match_drink_en = match_where_possible(DRINK_EN)
DRINK_ZH = re.compile(
    r"^(?P<who>.+?)(?:最爱的饮料是|最喜欢的饮料是|常喝的饮料是|(?:现在|如今)?(?:平时|通常|一般|每天|最喜欢|最爱|改)喝)(?P<what>.+)$"
)
match_drink_zh = match_where_possible(DRINK_ZH)

# -- the rewrites of claims.py: who holds a role, what a change changed, what a denial is ---------
# a time or an adverb in a Chinese holder's name ("李四以前是…", "李四还是…"): no holder now
ZH_NOT_A_HOLDER = re.compile(
    r"以前|之前|曾经|原来|过去|以后|将来|下个?月|下周|明年|去年|还|也|就|将|已经|一直|仍然|依然|暂时|本来|从前|可能|一名|一个"
)
# a team or a machine that uses a port uses many ("uses" port relation only)
USES = re.compile(r"\bus(?:e|es|ing)\b|\bswitched\b|\bmoved\b|用")
HOSTS = re.compile(r"\b(?:host|hosts|machine|box|vm|laptop|node|nodes|cluster|firewall|router|proxy|container)$")
# a change of no thing's value: "they moved him to …"
OBJECT_PRONOUNS = frozenset("him her them me us it this that".split())
# "… the config to use TLS": a purpose, not a value (lower case: "to Go 1.22" is a value)
PURPOSE = re.compile(
    r"(?:be|do|have|make|get|go|say|see|keep|use|fix|mention|disable|enable|include|add|remove|support|allow|"
    r"avoid|handle|improve|prevent|reflect|match|show|read|write|run|stop|start|check|ensure|help|point|let|"
    r"reduce|increase|speed|clean|cover|test|work|reach|send|talk|call|drop)\b"
)
# a negated verb before the value: "… doesn't listen on port 9090" states no value
NEGATED_VERB = re.compile(
    r"\b(?:does|did|is|are|was|were|has|have|had|will|would|can|could|should)(?:\s+not|n't)\s+\w"
    r"|\b(?:don't|never|no longer)\s+\w|\b(?:i|we|you|they)\s+do\s+not\s+\w"
)
# "from 10am" in "we moved the standup from 10am to 11am": what it was, not part of the thing
FROM_VALUE = re.compile(r"(?:^|\s+)from\s+.*$", re.IGNORECASE)
