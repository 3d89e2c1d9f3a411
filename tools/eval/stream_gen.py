"""A generated stream of facts as agents write them, with its ground truth (English and Chinese).

150 facts of eight kinds — service ports, portal URLs, versions, budgets (``$50k`` / ``$50,000``,
``5万元`` / ``50000元``), meeting times, owners, diet and drink preferences, standing
instructions — are stated over 40 conversations the way agents keep them: the first statement,
restatements of the same value in other words and formats, value changes (some announced: "moved
to", "改为", "now"; some not), late arrivals (an older value, with its older event time, written
after the newer one), and cancellations of instructions. Every statement carries its fact, its
value, its subject, its source type and its event time; the truth (each fact's current value)
comes from the generator alone, never from the ledger.

Deterministic: one seed, one stream. :mod:`tools.eval.stream` writes it into a ledger and asks
one natural question per fact.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

CANCELLED = "<cancelled>"
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Statement:
    fact: str  # the fact's id
    value: str  # the canonical value it states (CANCELLED for a cancellation)
    content: str
    subject: str  # what an agent that sends subjects would send
    source_type: str
    event_time: str
    conversation: str
    kind: str  # first | restate | change | late | cancel


@dataclass
class Fact:
    fact_id: str
    kind: str
    language: str
    subject: str
    question: str
    values: list[str] = field(default_factory=list)  # in event-time order; the last is current
    changed: bool = False
    late: bool = False
    cancelled: bool = False

    @property
    def current(self) -> str:
        return CANCELLED if self.cancelled else self.values[-1]


# -- entities ------------------------------------------------------------------------------------
SERVICES_EN = [
    "billing API", "orders service", "auth gateway", "search service", "payments worker",
    "inventory API", "staging API", "metrics collector", "email relay", "report builder",
]  # fmt: skip
SERVICES_ZH = [
    "支付服务",
    "订单服务",
    "认证网关",
    "搜索服务",
    "库存服务",
    "报表服务",
    "消息队列",
    "日志服务",
    "推送服务",
    "用户中心",
]
PORTALS_EN = [
    "VPN portal", "team wiki", "status page", "design system docs", "on-call runbook", "CI dashboard",
    "expense portal", "hiring tracker",
]  # fmt: skip
PORTALS_ZH = ["VPN门户", "团队知识库", "状态页", "设计规范文档", "值班手册", "构建看板", "报销系统", "招聘看板"]
PROJECTS_EN = [
    "Apollo project", "Q3 marketing campaign", "data platform migration", "mobile redesign", "office move",
    "security audit",
]  # fmt: skip
PROJECTS_ZH = ["阿波罗项目", "三季度营销活动", "数据平台迁移", "移动端改版", "客服系统升级", "年会筹备"]
MEETINGS_EN = [
    "platform team standup", "weekly design review", "sprint planning", "security sync", "sales all-hands",
    "product demo",
]  # fmt: skip
MEETINGS_ZH = ["平台组站会", "设计评审会", "迭代计划会", "安全周会", "销售例会", "产品演示会"]
PEOPLE_EN = ["Alice", "Bob", "Carol", "David", "Erin", "Frank", "Grace", "Henry", "Ivy", "Jack", "Kate", "Liam"]
PEOPLE_ZH = ["小王", "张伟", "李娜", "刘洋", "陈静", "杨帆", "赵磊", "黄敏", "周杰", "吴芳", "徐强", "孙丽"]
FOODS_EN = ["cilantro", "spicy food", "peanuts", "seafood", "pork", "dairy"]
FOODS_ZH = ["香菜", "辣", "花生", "海鲜", "猪肉", "牛奶"]
DRINKS_EN = ["tea", "black coffee", "green tea", "sparkling water", "oat latte", "hot chocolate"]
DRINKS_ZH = ["绿茶", "美式咖啡", "乌龙茶", "气泡水", "燕麦拿铁", "热可可"]
INSTRUCTIONS_EN = [
    ("send the weekly status report to Carol every Friday", "Don't send the weekly status report to Carol anymore",
     "Should I send the weekly status report to Carol?"),
    ("back up the orders database every night", "The nightly orders database backup is cancelled",
     "Do we back up the orders database every night?"),
    ("post the release notes in the announcements channel",
     "No need to post the release notes in the announcements channel",
     "Where should the release notes be posted?"),
    ("remind Bob about the expense reports on Mondays", "Stop reminding Bob about the expense reports",
     "Should I remind Bob about the expense reports?"),
    ("cc the legal team on every vendor contract email", "Don't cc the legal team on vendor contract emails",
     "Should the legal team be cc'd on vendor contract emails?"),
    ("run the smoke tests before each deploy to staging", "Cancel the smoke tests before staging deploys",
     "Do we run the smoke tests before each deploy to staging?"),
    ("summarise the support tickets every morning", "Stop summarising the support tickets every morning",
     "Should I summarise the support tickets every morning?"),
    ("archive the finished Jira tickets every Sunday", "Don't archive the finished Jira tickets anymore",
     "Should I archive the finished Jira tickets?"),
]  # fmt: skip
INSTRUCTIONS_ZH = [
    ("每周五把周报发给李娜", "不要再把周报发给李娜了", "周报还要发给李娜吗？"),
    ("每天早上提醒我喝水", "不用再提醒我喝水了", "每天早上要提醒我喝水吗？"),
    ("每晚备份订单数据库", "取消每晚备份订单数据库", "每晚要备份订单数据库吗？"),
    ("会议纪要抄送给法务组", "会议纪要不要再抄送给法务组了", "会议纪要要抄送给法务组吗？"),
    ("每周一整理客服工单", "别再整理客服工单了", "每周一要整理客服工单吗？"),
    ("发布前通知测试组", "发布前不用再通知测试组了", "发布前要通知测试组吗？"),
    ("每月初更新值班表", "取消每月初更新值班表", "每月初要更新值班表吗？"),
]  # fmt: skip


# -- how each kind is said ------------------------------------------------------------------------
Say = Callable[[str, str, random.Random, bool], str]  # (entity, value, rng, announcing a change) -> text


def _pick(rng: random.Random, options: list[str]) -> str:
    return options[rng.randrange(len(options))]


def _port_en(e: str, v: str, rng: random.Random, change: bool) -> str:
    if change and rng.random() < 0.6:
        return _pick(
            rng, [f"The {e} moved to port {v}", f"The {e} now listens on port {v}", f"The {e} port changed to {v}"]
        )
    return _pick(rng, [f"The {e} listens on port {v}", f"The {e} runs on port {v}", f"Port for the {e}: {v}",
                       f"The {e} port is {v}", f"The {e} is served on port {v}"])  # fmt: skip


def _port_zh(e: str, v: str, rng: random.Random, change: bool) -> str:
    if change and rng.random() < 0.6:
        return _pick(rng, [f"{e}的端口改为{v}", f"{e}现在的端口是{v}", f"{e}端口改成了{v}"])
    return _pick(rng, [f"{e}的端口是{v}", f"{e}监听在{v}端口", f"{e}端口号为{v}", f"{e}运行在端口{v}"])


def _url_en(e: str, v: str, rng: random.Random, change: bool) -> str:
    if change and rng.random() < 0.6:
        return _pick(rng, [f"The {e} moved to {v}", f"The {e} is now at {v}", f"The {e} changed to {v}"])
    return _pick(rng, [f"The {e} is {v}", f"Link to the {e} is {v}", f"The {e} is at {v}", f"{e}: {v}"])


def _url_zh(e: str, v: str, rng: random.Random, change: bool) -> str:
    if change and rng.random() < 0.6:
        return _pick(rng, [f"{e}的地址改为{v}", f"{e}搬到了{v}", f"{e}现在的地址是{v}"])
    return _pick(rng, [f"{e}的地址是{v}", f"{e}的链接是{v}", f"{e}：{v}"])


def _version_en(e: str, v: str, rng: random.Random, change: bool) -> str:
    if change and rng.random() < 0.6:
        return _pick(rng, [f"The {e} was upgraded to version {v}", f"The {e} is now on version {v}"])
    return _pick(rng, [f"The {e} runs version {v}", f"The {e} version is {v}", f"The {e} is on v{v}"])


def _version_zh(e: str, v: str, rng: random.Random, change: bool) -> str:
    if change and rng.random() < 0.6:
        return _pick(rng, [f"{e}升级到了{v}版本", f"{e}的版本改为{v}"])
    return _pick(rng, [f"{e}的版本是{v}", f"{e}版本号为v{v}", f"{e}当前版本{v}"])


def _budget_en(e: str, v: str, rng: random.Random, change: bool) -> str:
    n = int(v)
    amount = _pick(rng, [f"${n // 1000}k", f"${n:,}", f"{n:,} dollars"])
    if change and rng.random() < 0.6:
        return _pick(rng, [f"The {e} budget was changed to {amount}", f"The {e} budget is now {amount}"])
    return _pick(
        rng, [f"The {e} budget is {amount}", f"Budget for the {e}: {amount}", f"The {e} has a budget of {amount}"]
    )


def _budget_zh(e: str, v: str, rng: random.Random, change: bool) -> str:
    n = int(v)
    amount = _pick(rng, [f"{n // 10000}万元", f"{n}元", f"{n // 10000}万"])
    if change and rng.random() < 0.6:
        return _pick(rng, [f"{e}的预算改为{amount}", f"{e}预算调整为{amount}"])
    return _pick(rng, [f"{e}的预算是{amount}", f"{e}预算为{amount}", f"{e}的预算定在{amount}"])


def _time_en(e: str, v: str, rng: random.Random, change: bool) -> str:
    hour, minute = (int(x) for x in v.split(":"))
    h12 = hour % 12 or 12
    suffix = "am" if hour < 12 else "pm"
    said = _pick(rng, [f"{h12}:{minute:02d}{suffix}" if minute else f"{h12}{suffix}", f"{hour:02d}:{minute:02d}"])
    if change and rng.random() < 0.6:
        return _pick(rng, [f"The {e} moved to {said}", f"The {e} is now at {said}"])
    return _pick(rng, [f"The {e} is at {said}", f"The {e} starts at {said}"])


def _time_zh(e: str, v: str, rng: random.Random, change: bool) -> str:
    hour, minute = (int(x) for x in v.split(":"))
    said = _pick(rng, [f"{hour}:{minute:02d}", f"{hour}点" + (f"{minute}分" if minute else "")])
    if change and rng.random() < 0.6:
        return _pick(rng, [f"{e}改到{said}", f"{e}的时间改为{said}"])
    return _pick(rng, [f"{e}定在{said}", f"{e}的时间是{said}"])


def _owner_en(e: str, v: str, rng: random.Random, change: bool) -> str:
    if change and rng.random() < 0.6:
        return _pick(rng, [f"{v} took over the {e}", f"The {e} is now owned by {v}"])
    return _pick(rng, [f"{v} owns the {e}", f"The {e} is owned by {v}", f"The owner of the {e} is {v}"])


def _owner_zh(e: str, v: str, rng: random.Random, change: bool) -> str:
    if change and rng.random() < 0.6:
        return _pick(rng, [f"{e}改由{v}负责", f"{e}现在由{v}负责"])
    return _pick(rng, [f"{e}由{v}负责", f"{e}的负责人是{v}"])


def _diet_en(e: str, v: str, rng: random.Random, change: bool) -> str:
    person, food = e.split("|")
    if v == "no":
        return _pick(
            rng, [f"{person} doesn't eat {food}", f"{person} does not eat {food}", f"{person} no longer eats {food}"]
        )
    return _pick(rng, [f"{person} eats {food} now", f"{person} eats {food}", f"{person} is fine with {food} now"])


def _diet_zh(e: str, v: str, rng: random.Random, change: bool) -> str:
    person, food = e.split("|")
    if v == "no":
        return _pick(rng, [f"{person}不吃{food}", f"{person}不再吃{food}了", f"{person}从来不吃{food}"])
    return _pick(rng, [f"{person}现在吃{food}了", f"{person}能吃{food}了", f"{person}吃{food}"])


def _drink_en(e: str, v: str, rng: random.Random, change: bool) -> str:
    if change and rng.random() < 0.6:
        return _pick(rng, [f"{e} switched to {v}", f"{e} now prefers {v}"])
    return _pick(rng, [f"{e} prefers {v}", f"{e}'s favourite drink is {v}", f"{e}'s usual drink is {v}"])


def _drink_zh(e: str, v: str, rng: random.Random, change: bool) -> str:
    if change and rng.random() < 0.6:
        return _pick(rng, [f"{e}改喝{v}了", f"{e}现在最喜欢喝{v}"])
    return _pick(rng, [f"{e}最喜欢喝{v}", f"{e}平时喝{v}", f"{e}最爱的饮料是{v}"])


@dataclass(frozen=True)
class Kind:
    name: str
    say_en: Say
    say_zh: Say
    question_en: str
    question_zh: str


KINDS = {
    "port": Kind("port", _port_en, _port_zh, "What port does the {e} listen on?", "{e}的端口是多少？"),
    "url": Kind("url", _url_en, _url_zh, "What is the link to the {e}?", "{e}的地址是什么？"),
    "version": Kind("version", _version_en, _version_zh, "Which version does the {e} run?", "{e}是什么版本？"),
    "budget": Kind("budget", _budget_en, _budget_zh, "What is the budget of the {e}?", "{e}的预算是多少？"),
    "meeting": Kind("meeting", _time_en, _time_zh, "What time is the {e}?", "{e}几点开？"),
    "owner": Kind("owner", _owner_en, _owner_zh, "Who owns the {e}?", "{e}由谁负责？"),
    "diet": Kind("diet", _diet_en, _diet_zh, "Does {p} eat {f}?", "{p}吃{f}吗？"),
    "drink": Kind("drink", _drink_en, _drink_zh, "What does {e} like to drink?", "{e}喜欢喝什么？"),
}


def _values(kind: str, rng: random.Random, language: str, n: int) -> list[str]:
    """``n`` distinct canonical values of a kind (the order is the order they become true in)."""
    pools: dict[str, Callable[[], str]] = {
        "port": lambda: str(rng.randrange(3000, 9900)),
        "url": lambda: (
            f"https://{rng.choice(['intra', 'go', 'portal', 'docs'])}.acme-{rng.randrange(10, 99)}.dev/"
            f"{rng.choice(['home', 'start', 'v2', 'main'])}"
        ),
        "version": lambda: f"{rng.randrange(1, 6)}.{rng.randrange(0, 20)}.{rng.randrange(0, 10)}",
        "budget": lambda: str(rng.randrange(2, 40) * (10000 if language == "zh" else 5000)),
        "meeting": lambda: f"{rng.randrange(8, 18)}:{rng.choice([0, 30])}",
        "owner": lambda: rng.choice(PEOPLE_ZH if language == "zh" else PEOPLE_EN),
        "drink": lambda: rng.choice(DRINKS_ZH if language == "zh" else DRINKS_EN),
    }
    out: list[str] = []
    while len(out) < n:
        v = pools[kind]()
        if v not in out:
            out.append(v)
    return out


def _entities(rng: random.Random) -> list[tuple[str, str, str, str]]:
    """(kind, language, entity, question) for the 150 facts (no entity twice within a kind)."""
    out: list[tuple[str, str, str, str]] = []

    def add(kind: str, language: str, entities: list[str], count: int) -> None:
        for e in rng.sample(entities, min(count, len(entities))):
            k = KINDS[kind]
            question = (k.question_zh if language == "zh" else k.question_en).format(e=e)
            out.append((kind, language, e, question))

    for kind, en, zh in (
        ("port", SERVICES_EN, SERVICES_ZH),
        ("version", SERVICES_EN, SERVICES_ZH),
        ("owner", SERVICES_EN, SERVICES_ZH),
        ("url", PORTALS_EN, PORTALS_ZH),
        ("budget", PROJECTS_EN, PROJECTS_ZH),
        ("meeting", MEETINGS_EN, MEETINGS_ZH),
        ("drink", PEOPLE_EN, PEOPLE_ZH),
    ):
        add(kind, "en", en, 10)
        add(kind, "zh", zh, 10)
    for language, people, foods in (("en", PEOPLE_EN, FOODS_EN), ("zh", PEOPLE_ZH, FOODS_ZH)):
        pairs = [(p, f) for p in people for f in foods]
        for p, f in rng.sample(pairs, 8):
            k = KINDS["diet"]
            question = (k.question_zh if language == "zh" else k.question_en).format(p=p, f=f)
            out.append(("diet", language, f"{p}|{f}", question))
    return out


def generate(seed: int = 7, conversations: int = 40) -> tuple[list[Fact], list[Statement]]:
    """The facts (with their truth) and the statements in the order an agent writes them."""
    rng = random.Random(seed)
    facts: list[Fact] = []
    timeline: list[tuple[datetime, int, Statement]] = []  # (ingest moment, tie, statement)
    tie = 0

    def emit(fact: Fact, value: str, when: datetime, kind: str, ingest: datetime | None = None) -> None:
        nonlocal tie
        language = fact.language
        if value == CANCELLED:
            content = next(
                c for i, c, _ in (INSTRUCTIONS_ZH if language == "zh" else INSTRUCTIONS_EN) if i == fact.subject
            )
        elif fact.kind == "instruction":
            content = fact.subject if language == "zh" else fact.subject[0].upper() + fact.subject[1:]
        else:
            say = KINDS[fact.kind].say_zh if language == "zh" else KINDS[fact.kind].say_en
            content = say(fact.subject, value, rng, kind == "change")
        subject = fact.subject.split("|")[0] if fact.kind != "instruction" else ""
        source = rng.choices(["agent_generated", "document_extracted", "user_confirmed"], [0.8, 0.12, 0.08])[0]
        statement = Statement(
            fact=fact.fact_id,
            value=value,
            content=content,
            subject=subject,
            source_type=source,
            event_time=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            conversation=f"conv-{rng.randrange(conversations):02d}",
            kind=kind,
        )
        timeline.append((ingest or when, tie, statement))
        tie += 1

    for n, (kind, language, entity, question) in enumerate(_entities(rng)):
        changed = (n % 3 == 0 and kind != "diet") or (kind == "diet" and n % 2 == 0)
        fact = Fact(f"f{n:03d}", kind, language, entity, question, changed=changed)
        fact.late = changed and rng.random() < 0.3
        count = 2 if changed else 1
        fact.values = ["no", "yes"] if kind == "diet" and changed else (
            [rng.choice(["no", "yes"])] if kind == "diet" else _values(kind, rng, language, count)
        )  # fmt: skip
        facts.append(fact)
        first = START + timedelta(days=rng.randrange(0, 20), minutes=rng.randrange(0, 600))
        emit(fact, fact.values[0], first, "first")
        for _ in range(rng.choice([0, 1, 2, 3, 4])):
            emit(
                fact,
                fact.values[0],
                first + timedelta(days=rng.randrange(1, 10), minutes=rng.randrange(1, 300)),
                "restate",
            )
        if changed:
            moment = first + timedelta(days=rng.randrange(12, 40))
            emit(fact, fact.values[1], moment, "change")
            for _ in range(rng.choice([0, 1, 2, 3])):
                emit(fact, fact.values[1], moment + timedelta(days=rng.randrange(1, 8)), "restate")
            if fact.late:  # the old value, stated before the change, reaches the ledger after it
                earlier = moment - timedelta(days=rng.randrange(1, 5))
                emit(fact, fact.values[0], earlier, "late", ingest=moment + timedelta(days=rng.randrange(9, 15)))
    base = len(facts)
    for language, table in (("en", INSTRUCTIONS_EN), ("zh", INSTRUCTIONS_ZH)):
        for j, (instruction, _, question) in enumerate(table):
            fact = Fact(f"f{base:03d}", "instruction", language, instruction, question, values=["active"])
            fact.cancelled = j % 2 == 0
            base += 1
            facts.append(fact)
            first = START + timedelta(days=rng.randrange(0, 20))
            emit(fact, "active", first, "first")
            if fact.cancelled:
                emit(fact, CANCELLED, first + timedelta(days=rng.randrange(3, 30)), "cancel")
    timeline.sort(key=lambda t: (t[0], t[1]))
    return facts, [s for _, _, s in timeline]


__all__ = ["CANCELLED", "Fact", "Statement", "generate"]
