"""Claim extraction and value normalisation (issue point 3), with a labelled collision table.

The table holds 49 pairs that state contradicting values for one thing and
65 that do not (different subjects, the same value written differently, descriptions,
questions, hedges, negations), in English and Chinese. Precision is measured over the whole table
and the non-colliding half must produce no collision at all.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fact_ledger.ledger import claims as claims_module
from fact_ledger.ledger.claim_words import ANY_RELATION, RELATIONS
from fact_ledger.ledger.claims import collides, explicit_claim, extract_claims
from fact_ledger.ledger.normalize import normalize_text, normalize_value, same_value

# (left content, left subject, right content, right subject)
COLLIDING = [
    ("The staging API listens on port 8080", "", "The staging API listens on port 9090", ""),
    ("staging port: 8080", "", "The port of staging is 9090", ""),
    ("port is 8080", "staging", "staging port: 9090", ""),
    ("GET /health returns 200", "", "GET /health returns 503", ""),
    ("The project budget is $50,000", "", "The project budget is $65,000", ""),
    ("The release date is July 1, 2025", "", "The release date is 2025-07-08", ""),
    ("The team meeting is on Wednesday at 3pm", "", "The team meeting is moved to Thursday", ""),
    ("The API version is v2.3", "", "The API version is 2.4", ""),
    ("The build server is ci-7", "", "The build server is ci-9", ""),
    ("Deploy freeze time: 18:00", "", "Deploy freeze time: 8pm", ""),
    ("The capital of Australia is Canberra", "", "The capital of Australia is Sydney", ""),
    ("Request timeout = 30s", "", "Request timeout = 45s", ""),
    ("The cache uses Redis 6", "", "The cache uses Memcached", ""),
    ("Feature flag new-checkout is enabled", "", "Feature flag new-checkout is disabled", ""),
    ("The primary database is Postgres 15", "", "The primary database is MySQL 8", ""),
    ("Max upload size: 10MB", "", "Max upload size: 25MB", ""),
    ("The on-call engineer is Priya", "", "The on-call engineer is Marco", ""),
    ("It returns 200", "GET /status", "GET /status returns 500", ""),
    ("接口 /api/foo 返回 200", "", "接口 /api/foo 返回 404", ""),
    ("项目预算是5万", "", "项目预算为8万元", ""),
    ("会议定在周三下午3点", "", "会议改为周四下午3点", ""),
    ("服务端口是8080", "", "服务监听9090端口", ""),
    ("负责人是张工", "", "负责人是李工", ""),
    ("发布日期是2025年7月1日", "", "发布日期为2025年7月8日", ""),
    ("数据库用的是 PostgreSQL", "", "数据库使用 MySQL", ""),
    ("缓存过期时间为30秒", "", "缓存过期时间为60秒", ""),
    ("API 版本是 v2.3", "", "API 版本为 2.5", ""),
    ("新结账开关为开启", "", "新结账开关为关闭", ""),
    ("值班工程师是王伟", "", "值班工程师是刘洋", ""),
    ("上传大小上限为10MB", "", "上传大小上限为20MB", ""),
    ("构建服务器是 ci-7", "", "构建服务器是 ci-9", ""),
    ("年度预算：100万", "", "年度预算：120万元", ""),
    ("截止日期 2025年8月1日", "", "截止日期 2025年8月15日", ""),
    ("预算 5万", "项目", "项目预算为6万", ""),
    ("The staging DB host is db-1.internal", "", "The staging DB host is db-2.internal", ""),
    ("Our Slack channel for incidents is #ops-alerts", "", "Our Slack channel for incidents is #incidents", ""),
    ("The default branch is main", "", "The default branch is master", ""),
    ("Node version: 18", "", "Node version: 20", ""),
    ("The launch is scheduled for 2025-09-01", "", "The launch was moved to 2025-09-15", ""),
    ("测试环境地址是 http://10.0.0.5:8080", "", "测试环境地址是 http://10.0.0.6:8080", ""),
    ("周报截止时间为周五下午5点", "", "周报截止时间改为周五下午6点", ""),
    ("客户联系人是陈经理", "", "客户联系人改为赵经理", ""),
    ("The rate limit is 100 requests per minute", "", "The rate limit is 200 requests per minute", ""),
    ("预算上限为3000美元", "", "预算上限为5000美元", ""),
    ("The meeting is in room 4", "", "The meeting is in room 5", ""),
    ("The service is written in Go", "", "The service is written in Rust", ""),
    ("The release manager is Sterling", "", "The release manager is Ming", ""),
    ("The user likes coffee", "", "The user does not like coffee", ""),
    ("用户喜欢喝咖啡，不喜欢茶", "", "用户不喜欢喝咖啡", ""),
    ("用户喜欢喝咖啡，不喜欢茶", "", "用户现在也喜欢茶了", ""),
    ("Bob loves jazz", "", "Bob hates jazz", ""),
    ("I like hiking", "user", "I don't like hiking anymore", "user"),
    ("Bob lives in Paris", "", "Bob moved to Berlin", ""),
    ("鲍勃住在巴黎", "", "鲍勃去年搬到了柏林", ""),
    ("I moved to Berlin last year", "Caroline", "I live in Lisbon now", "Caroline"),
    ("The meeting room is Atlas", "", "The meeting room is Orion", ""),
    ("Bob works at Google", "", "Bob now works for Meta", ""),
    ("I work for Acme Corp", "Caroline", "I am employed by Initech", "Caroline"),
    ("It listens on port 8080", "staging api", "It listens on port 9090", "staging api"),
    ("The deploy strategy is blue green", "", "The deploy strategy is canary", ""),  # lowercase values
    ("Owner: platform team", "billing", "Owner: data team", "billing"),
    # A qualifier narrows the attribute, and the same qualifier still collides.
    ("The deploy script uses Python 3.11 for the CLI", "", "The deploy script uses Python 3.12 for the CLI", ""),
    ("The API returns 200 for GET", "", "The API returns 404 for GET", ""),
]
NOT_COLLIDING = [
    ("The user likes coffee", "", "The user likes tea", ""),
    ("Bob likes jazz", "", "Alice does not like jazz", ""),
    ("It looks like rain", "", "It does not look like rain", ""),
    ("I like hiking", "", "I don't like hiking", ""),  # who "I" is, without a subject, is unknown
    ("Bob would like a coffee", "", "Bob does not like coffee", ""),
    ("Maybe Bob likes jazz", "", "Bob hates jazz", ""),
    ("Bob moved to Berlin", "", "Bob is Canadian", ""),
    # Chat lines, the speaker as subject: what "this" and "that" point at is not the speaker.
    ("That is what makes me smile", "John", "This is where I practice", "John"),
    ("Dance is my stress relief", "Gina", "Dance is my stress fix too", "Gina"),
    ("我是老师", "小明", "我是妈妈", "小明"),  # what someone is: many things at once
    ("这是我最喜欢的书", "小明", "这是我最喜欢的电影", "小明"),
    ("今天是星期五", "站会", "今天是星期一", "站会"),  # a remark about today, not the stand-up's day
    ("Today is Friday", "standup", "Today is Monday", "standup"),
    ("Seattle is definitely a great city", "Tim", "Seattle is definitely too rainy", "Tim"),
    ("Going there is definitely on my to-do list", "John", "Going there is definitely a dream", "John"),
    ("My goal is to give kids a loving home", "Caroline", "My goal is to stay positive", "Caroline"),
    ("Success is almost here", "Jon", "Success is truly magical", "Jon"),
    ("问题是时间不够", "项目", "问题是人手不够", "项目"),
    ("The problem is the deadline", "launch", "The problem is the budget", "launch"),
    ("Bob works at Google", "", "Bob works at the hospital on weekends", ""),  # an employer is a name
    ("The fix works for Chrome", "", "The fix works for Firefox", ""),  # things do not have jobs
    ("Bob works at Google", "", "Bob joined the LGBTQ support group", ""),
    ("Bob is in Berlin this week", "", "Bob lives in Paris", ""),  # a trip, not a move
    ("The standup moved to 10am", "", "The standup moved to Berlin office", ""),
    ("The staging API listens on port 8080", "", "The production API listens on port 9090", ""),
    ("The project budget is $50,000", "", "The project budget is 50000 USD", ""),
    ("The team meeting is on Wednesday", "", "The team meeting is at 3pm", ""),
    ("The team meeting is on Wednesday", "", "The team meeting is in room 4", ""),
    ("The API is fast", "", "The API is stable", ""),
    ("Alice is a developer", "", "Alice is a manager", ""),
    ("Bob is tall", "", "Bob is vegetarian", ""),  # traits of a named person, many at once
    ("Alice Chen is left-handed", "", "Alice Chen is vegan", ""),
    ("GET /health returns 200", "", "GET /users returns 404", ""),
    ("Request timeout = 30s", "", "Request timeout = 30000ms", ""),
    ("The release date is July 1, 2025", "", "The release date is 2025-07-01", ""),
    ("The build server is ci-7", "", "The build server is CI-7", ""),
    ("The API version is v2.0", "", "The API version is 2", ""),
    ("Max upload size: 1GB", "", "Max upload size: 1024MB", ""),
    ("Is the staging port 8080?", "", "The staging port is 9090", ""),
    ("Maybe the staging port is 8080", "", "The staging port is 9090", ""),
    ("The API does not return 500", "", "The API returns 200", ""),
    ("The staging database is Postgres", "", "The staging cache is Redis", ""),
    ("Feature flag new-checkout is enabled", "", "Feature flag dark-mode is disabled", ""),
    ("The on-call engineer is Priya", "", "The backup engineer is Marco", ""),
    ("port is 8080", "staging", "port is 9090", "production"),
    ("The deploy window is Friday", "", "The deploy window is on Friday", ""),
    ("接口 /api/foo 返回 200", "", "接口 /api/bar 返回 404", ""),
    ("项目预算是5万", "", "项目预算为50,000元", ""),
    ("会议在周三", "", "会议在三楼", ""),
    ("会议定在周三", "", "会议定在下午3点", ""),
    ("前端负责人是张工", "", "后端负责人是李工", ""),
    ("这个接口是稳定的", "", "这个接口是很快的", ""),
    ("服务端口是8080", "", "数据库端口是5432", ""),
    ("发布日期是2025年7月1日", "", "发布日期为2025-07-01", ""),
    ("缓存过期时间为30秒", "", "缓存过期时间为30000毫秒", ""),
    ("用户数量为1200人", "", "用户数量是1200", ""),
    ("新功能开关是开启", "", "新功能开关为启用", ""),
    ("据说端口可能是8080", "", "端口是9090", ""),
    ("因为网络问题，部署推迟了", "", "部署已经完成", ""),
    ("API 版本是 v2.0", "", "API 版本为 2", ""),
    ("项目预算是５万", "", "项目预算为 5\u200b万", ""),
    ("The default branch is main", "", "The default branch is Main.", ""),
    ("Node version: 18", "", "Node version: v18.0", ""),
    ("The launch is scheduled for 2025-09-01", "", "The launch is scheduled for Sept 1, 2025", ""),
    ("The staging DB host is db-1.internal", "", "The prod DB host is db-2.internal", ""),
    ("客户联系人是陈经理", "", "供应商联系人是赵经理", ""),
    ("The rate limit is 100 requests per minute", "", "The timeout is 100 seconds", ""),
    ("I think the office is nice", "", "The office is big", ""),
    ("The demo went well", "", "The demo was rescheduled", ""),
    ("The login page returns 200 for valid users", "", "The login page returns 200 quickly", ""),
    ("预算上限为3000美元", "", "预算上限为 $3,000", ""),
    ("Bob is on vacation", "", "Bob is in Berlin", ""),
    ("The service is deployed on Kubernetes", "", "The service is maintained by Team A", ""),
    ("The meeting room is booked", "", "The meeting room is Atlas", ""),
    ("Bob is in Berlin", "", "Bob is in a meeting", ""),
    # Relations that hold several values at once (people and teams use, speak, like, know, own,
    # visit many things), and claims narrowed by a different qualifier ("for the CLI").
    ("The team uses Python for the backend", "", "The team uses Rust for the CLI", ""),
    ("The team uses Python", "", "The team uses Rust", ""),
    ("We use Slack for chat", "", "We use Zoom for calls", ""),
    ("Bob uses vim", "", "Bob uses VS Code", ""),
    ("The deploy script uses Python 3.11 for the CLI", "", "The deploy script uses Python 3.12 for the backend", ""),
    ("The service listens on port 8080 for HTTP", "", "The service listens on port 8443 for HTTPS", ""),
    ("Bob speaks English", "", "Bob speaks French", ""),
    ("Bob likes jazz", "", "Bob likes rock", ""),
    ("Alice knows Bob", "", "Alice knows Carol", ""),
    ("Bob owns a Tesla", "", "Bob owns a bike", ""),
    ("Bob visited Paris last year", "", "Bob visited Rome", ""),
    ("团队使用 Python 开发后端", "", "团队使用 Rust 开发命令行工具", ""),
    ("我们使用飞书", "", "我们使用钉钉", ""),
    ("鲍勃会说英语", "", "鲍勃会说法语", ""),
    ("爱丽丝认识鲍勃", "", "爱丽丝认识卡罗尔", ""),
    ("鲍勃去过巴黎", "", "鲍勃去过罗马", ""),
]


def pair_collides(left: str, left_subject: str, right: str, right_subject: str) -> bool:
    return any(collides(a, b) for a in extract_claims(left, left_subject) for b in extract_claims(right, right_subject))


def test_the_labelled_table_is_large_enough_and_bilingual() -> None:
    rows = COLLIDING + NOT_COLLIDING
    assert len(rows) >= 60
    zh = [r for r in rows if any("\u4e00" <= ch <= "\u9fff" for ch in r[0] + r[2])]
    assert len(zh) >= 20 and len(rows) - len(zh) >= 20
    assert len(COLLIDING) >= 30 and len(NOT_COLLIDING) >= 30


def test_precision_over_the_table_and_no_false_collision_on_the_non_colliding_half() -> None:
    true_positive = sum(pair_collides(*row) for row in COLLIDING)
    false_positives = [row for row in NOT_COLLIDING if pair_collides(*row)]
    precision = true_positive / max(1, true_positive + len(false_positives))
    recall = true_positive / len(COLLIDING)
    assert false_positives == []
    assert precision == 1.0
    assert recall >= 0.9, f"recall {recall:.2f}"


@pytest.mark.parametrize("row", COLLIDING, ids=lambda r: r[0][:30])
def test_each_colliding_pair_collides_in_both_directions(row: tuple[str, str, str, str]) -> None:
    left, ls, right, rs = row
    assert pair_collides(left, ls, right, rs)
    assert pair_collides(right, rs, left, ls)


@pytest.mark.parametrize("row", NOT_COLLIDING, ids=lambda r: r[0][:30])
def test_each_non_colliding_pair_does_not_collide(row: tuple[str, str, str, str]) -> None:
    assert not pair_collides(*row)


@pytest.mark.parametrize(
    "values",
    [
        ("5万", "50000", "50,000元", "五万", "50000 元", "５万"),
        ("$5k", "5000 USD", "5,000美元"),
        ("30s", "30000ms", "30 秒", "30 seconds"),
        ("2025-07-01", "2025/7/1", "2025年7月1日", "July 1, 2025", "1 July 2025", "Jul 1st, 2025"),
        ("下午3点", "3pm", "15:00", "3:00 PM", "下午三点"),
        ("周三", "Wednesday", "星期三", "wed"),
        ("v2.0", "2", "version 2.0.0"),
        ("enabled", "on", "开启", "true"),
    ],
)
def test_equal_values_normalise_to_the_same_thing(values: tuple[str, ...]) -> None:
    hint = "version" if values[0] == "v2.0" else ""
    forms = [normalize_value(v, hint=hint) for v in values]
    kind = forms[0][0]
    assert all(f[0] == kind for f in forms), forms
    assert all(same_value(kind, forms[0][1], f[1]) for f in forms), forms


def test_text_normalisation_folds_width_case_whitespace_and_zero_width() -> None:
    assert normalize_text("  ＡＰＩ\u200b  Port\t\n８０８０ ") == "api port 8080"


def test_different_values_stay_different() -> None:
    assert normalize_value("5万")[1] != normalize_value("6万")[1]
    assert not same_value("number", normalize_value("50000 USD")[1], normalize_value("50000 EUR")[1])
    assert same_value("number", normalize_value("30")[1], normalize_value("30s")[1])  # a bare number: same
    assert not same_value("when", normalize_value("周三下午3点")[1], normalize_value("周四")[1])
    assert same_value("when", normalize_value("周三")[1], normalize_value("下午3点")[1])  # no shared part
    assert same_value("when", normalize_value("2025-07-02")[1], normalize_value("Wednesday")[1])
    assert not same_value("when", normalize_value("2025-07-03")[1], normalize_value("Wednesday")[1])


@pytest.mark.parametrize(
    ("content", "subject", "expected"),
    [
        ("X returns 404", "", ("x", "returns", "404")),
        ("The cache uses Redis", "", ("the cache", "uses", "redis")),
        ("ratio equals 0.5", "", ("ratio", "is", "0.5")),
        ("timeout: 30s", "", ("timeout", "is", "30s")),
        ("max_conn = 100", "", ("max_conn", "is", "100")),
        ("数据库是 PostgreSQL", "", ("数据库", "is", "postgresql")),
        ("汇率为7.2", "", ("汇率", "is", "7.2")),
        ("接口返回 200", "", ("接口", "returns", "200")),
        ("缓存用 Redis", "", ("缓存", "uses", "redis")),
        ("端口改为 9090", "", ("端口", "is", "9090")),
        ("会议定在周三", "", ("会议", "is", "周三")),
        ("The web app listens on port 3000", "", ("the web app", "port", "3000")),
        ("Budget: 5万", "Apollo", ("Apollo", "budget", "5万")),
        ("It returns 200", "GET /health", ("GET /health", "returns", "200")),
        ("The license costs 500 dollars", "", ("the license", "costs", "500 dollars")),
        ("The upgrade will cost 3000", "", ("the upgrade", "costs", "3000")),
        ("the license is priced at 900元", "", ("the license", "costs", "900元")),
    ],
)
def test_patterns_extract_subject_attribute_value(content: str, subject: str, expected: tuple[str, str, str]) -> None:
    claims = extract_claims(content, subject)
    assert claims, content
    first = claims[0]
    assert (first.subject, first.attribute, first.value) == expected


def test_explicit_claims_share_keys_with_extracted_ones() -> None:
    explicit = explicit_claim("staging", "port", "8080")
    assert explicit is not None
    extracted = extract_claims("The staging API listens on port 9090")
    assert not collides(explicit, extracted[0])  # "staging api" is not "staging"
    (other,) = extract_claims("staging port: 9090")
    assert collides(explicit, other)
    (same,) = extract_claims("port is 8080", "staging")
    assert not collides(explicit, same) and explicit.key == same.key


def test_explicit_claims_come_first_and_one_claim_per_key() -> None:
    claims = extract_claims("The port is 8080. The port is 9090.", "staging", [("staging", "port", "7000")])
    assert [c.value for c in claims] == ["7000"]
    assert claims[0].origin == "explicit"


def test_extraction_is_deterministic_and_bounded() -> None:
    text = "; ".join(f"service{i} port: {8000 + i}" for i in range(100))
    first = extract_claims(text)
    assert first == extract_claims(text) and len(first) == 20


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("abcXYZ 0123456789:=.,/-$%万元年月日号点周三下午是为返回用端口 \n\u200b")),
        max_size=60,
    ),
    st.sampled_from(["", "api", "项目"]),
)
def test_extraction_never_fails_and_is_deterministic(text: str, subject: str) -> None:
    first = extract_claims(text, subject)
    assert first == claims_module._extract.__wrapped__(text, subject, ())  # a fresh run, not the cache
    for claim in first:
        assert claim.key_subject and claim.key_attribute and claim.kind
        assert not collides(claim, claim)  # a claim never contradicts itself
        normalize_value(claim.value)


@given(st.text(max_size=40))
def test_value_normalisation_never_fails(value: str) -> None:
    kind, canonical = normalize_value(value)
    assert same_value(kind, canonical, canonical)


# Values of every kind, each with the kind it must normalise to (random text is nearly always
# "text", so a fuzzer of text alone never reaches the number, date, version and bool parsers).
_numbers = st.builds(
    lambda n, unit: (f"{n}{unit}", "number"),
    st.integers(0, 10**7),
    st.sampled_from(["", "元", " USD", "万", "s", "ms", "%", " GB"]),
)
_grouped = st.integers(1000, 10**7).map(lambda n: (f"{n:,}元", "number"))
_dates = st.dates().map(lambda d: (d.isoformat(), "when"))
_versions = st.builds(lambda a, b, c: (f"v{a}.{b}.{c}", "version"), *[st.integers(0, 99)] * 3)
_bools = st.sampled_from(["true", "yes", "on", "enabled", "false", "no", "off", "disabled", "开启", "关闭"]).map(
    lambda b: (b, "bool")
)
_typed_values = st.one_of(_numbers, _grouped, _dates, _versions, _bools)


@settings(max_examples=300, deadline=None)
@given(_typed_values, st.sampled_from(["", " ", "\u200b", "  \u200b "]))
def test_typed_values_normalise_to_their_kind_whatever_the_spacing(pair: tuple[str, str], noise: str) -> None:
    value, kind = pair
    normalised = normalize_value(value)
    assert normalised[0] == kind, value
    assert normalize_value(f"{noise}{value}{noise}") == normalised
    assert same_value(kind, normalised[1], normalised[1])


@pytest.mark.parametrize(
    "line",
    [
        "Caroline: Hey Mel! Good to see you! How have you been?",
        "Melanie: Bye, Caroline! Can't wait to hear about it. Have fun and stay safe!",
        "Melanie: Absolutely, Caroline! I cherish time with family.",
        "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
        "Jon: Thanks, Gina! That means a lot.",
    ],
)
def test_chat_lines_are_not_key_value_claims(line: str) -> None:
    speaker = line.split(":")[0].lower()
    assert not [c for c in extract_claims(line) if c.subject == speaker]


def test_a_conversation_between_two_speakers_raises_no_collisions() -> None:
    lines = [
        "Caroline: Hey Mel! Good to see you!",
        "Melanie: Hey Caroline! I'm swamped with the kids.",
        "Caroline: Wow, that sounds busy.",
        "Melanie: Yeah, but it's worth it.",
        "Caroline: Totally agree, Mel.",
        "Melanie: Thanks, Caroline!",
    ]
    claims = [c for line in lines for c in extract_claims(line)]
    assert not any(collides(a, b) for i, a in enumerate(claims) for b in claims[i + 1 :])


def test_a_label_with_a_short_value_is_still_a_claim() -> None:
    owner_a, owner_b = extract_claims("Owner: Alice"), extract_claims("Owner: Bob")
    assert owner_a and owner_b and collides(owner_a[0], owner_b[0])


_RELATION_WORDS = st.sampled_from(
    [
        "the staging api",
        "now runs on port",
        "runs on",
        "now uses port",
        "uses",
        "is now",
        "is",
        "was",
        "has been moved to",
        "was changed to",
        "has moved to port",
        "moved to",
        "is set to",
        "set to",
        "costs",
        "now ends on",
        "ends at",
        "expires on",
        "now lasts",
        "departs at",
        "leaves at",
        "went up to",
        "rose to",
        "is located in",
        "returns",
        "now returns",
        "lives in",
        "lives at",
        "12 main street",
        "has moved to",
        "works for",
        "starts at",
        "was rescheduled for",
        "delayed to",
        "=",
        ":",
        "8080",
        "9:30am",
        "$20",
        "march 3",
        "bob",
        "是",
        "改成",
        "提高到",
        "涨价到",
        "用",
        "返回",
        "在",
        "周三",
        "端口",
        ",",
        ".",
        "-",
        "/",
        "监听",
    ]
)


@given(st.lists(_RELATION_WORDS, min_size=1, max_size=12))
def test_the_one_pass_relation_search_finds_what_the_entries_in_order_find(words: list[str]) -> None:
    """``ANY_RELATION`` shares one word-boundary check among the English entries; it must find the
    same leftmost relation, and the same entry at that position, as the entries tried one by one in
    order (the plain alternation)."""
    plain = re.compile("|".join(f"(?P<r{i}>{p.pattern})" for i, (p, _, _) in enumerate(RELATIONS)))
    for text in (" ".join(words), "".join(words)):
        mine, theirs = ANY_RELATION.search(text), plain.search(text)
        assert (mine and (mine.span(), mine.lastgroup)) == (theirs and (theirs.span(), theirs.lastgroup))


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        # a title before a name ends no sentence ...
        (
            "Our doctor is Dr. Lee. The clinic opens at 9am.",
            [("our doctor", "is", "dr. lee"), ("the clinic", "opens", "9am")],
        ),
        # ... but an address's "St." and a name's "Jr." may end one: the next sentence is a fact of its own
        ("I live on Main St. The office is in Denver.", [("the office", "is", "denver")]),
        (
            "Alice lives at 12 Main St. Bob lives in Boston.",
            [("alice", "lives in", "12 main st"), ("bob", "lives in", "boston")],
        ),
        ("We met Martin Luther King Jr. The venue is in Atlanta.", [("the venue", "is", "atlanta")]),
    ],
)
def test_a_full_stop_after_a_title_or_an_abbreviation(content: str, expected: list[tuple[str, str, str]]) -> None:
    """ "Dr. Lee" is one name; "Main St." and "… Jr." ended a sentence before titles were read,
    and must still (the office's place became "I live on Main St. the office"'s)."""
    assert [(c.subject, c.attribute, c.value) for c in extract_claims(content)] == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        # a status, said "on" or "in" (one word of the list, or "<x> hours", "<x> mode"): its own slot
        ("The project is on hold", ("project", "is in status", "hold")),
        ("The project is in progress", ("project", "is in status", "progress")),
        ("The gym is on holiday hours", ("gym", "is in status", "holiday hours")),
        ("The printer is in maintenance mode", ("printer", "is in status", "maintenance mode")),
        ("The pull request is in review", ("pull request", "is in status", "review")),
        # … said with an adjective or an adverb, or only "on" ("on the market"; "in the market" is a place)
        ("The app is in public beta", ("app", "is in status", "public beta")),
        ("The project is on hold indefinitely", ("project", "is in status", "hold indefinitely")),
        ("The house is on the market", ("house", "is in status", "market")),
        ("The house is in escrow", ("house", "is in status", "escrow")),
        ("The package is in transit", ("package", "is in status", "transit")),
        ("The stall is in the market", ("stall", "is in", "market")),
        # where it is, even when a status word is part of a longer name
        ("The office is in Boston", ("office", "is in", "boston")),
        ("The cafe is on Elm Street", ("cafe", "is on", "elm street")),
        ("The lab is on hold street", ("lab", "is on", "hold street")),
        ("The store is in holiday mode now", ("store", "is in status", "holiday mode")),
        ("The shop is on Sale Street", ("shop", "is on", "sale street")),
        # a home, and a move of home, as before
        ("Bob lives in Denver", ("bob", "lives in", "denver")),
        ("Bob moved to the Bay Area", ("bob", "lives in", "bay area")),
        ("Bob lives in hope street", ("bob", "lives in", "hope street")),
        ("Bob moved to sales town", ("bob", "lives in", "sales town")),
        ("Bob lives in Port Hope", ("bob", "lives in", "port hope")),
    ],
)
def test_a_status_is_a_slot_and_a_place_stays_a_place(content: str, expected: tuple[str, str, str]) -> None:
    """ "On hold" and "in progress" are how a thing stands, one slot whichever preposition says it,
    and no place: "The library is on holiday hours" superseded "The library is on Elm Street"."""
    (claim,) = extract_claims(content)
    assert (claim.key_subject, claim.key_attribute, claim.value_norm) == expected


@pytest.mark.parametrize(
    "content",
    [
        "The office is in chaos",
        "The store is on sale",
        "The office is on the fire",
        "The cafe is on strike",
        "Bob is on vacation",
        "Bob moved to the night shift",
        "Bob moved to nights",
        "Bob moved to Product",
        "Bob moved to the evening shifts",
        "Bob lives in fear of spiders",
        "Bob lives in denial",
        "Bob is on paternity leave",
        "Sam moved to the front desk",
        "Sam moved to the Tokyo office",
        "Sam moved to customer success",
        "Sam moved to the 3rd",
        "My daughter moved to 2nd grade",
        "Bob lives in constant fear",
    ],
)
def test_a_passing_state_a_move_at_work_or_no_home_states_no_claim(content: str) -> None:
    """Each formed one slot with where the thing is or where the person lives ("The office is in
    chaos" superseded "The office is in Boston", "Bob moved to the night shift" "Bob moved to Denver")."""
    assert extract_claims(content) == ()
