"""Edges of deterministic claim extraction (:mod:`ledger.claims`): which clauses yield a claim,
what the claim reads as (subject, attribute, value) and what it is keyed by, in English and
Chinese. Pure functions, no ledger: input text in, exact claims out."""

from __future__ import annotations

import pytest

from fact_ledger.ledger.claims import clause_count, collides, explicit_claim, extract_claims


def claims(content: str, subject: str = "") -> list[tuple[str, str, str, str, tuple[str, str, str]]]:
    """Every claim as (subject, attribute, value, kind, key)."""
    return [(c.subject, c.attribute, c.value, c.kind, c.key) for c in extract_claims(content, subject)]


def one(content: str, subject: str = ""):
    found = claims(content, subject)
    assert len(found) == 1, found
    return found[0]


# -- what a claim reads as ----------------------------------------------------------------------


def test_a_claim_shows_its_subject_attribute_and_value():
    (claim,) = extract_claims("The build server is ci-7")
    assert claim.view() == {"subject": "the build server", "attribute": "is", "value": "ci-7"}


@pytest.mark.parametrize(
    ("content", "subject", "expected"),
    [
        # a plain value: attribute "is", key = the subject's words
        ("The build server is ci-7", "", ("the build server", "is", "ci-7", "text", ("build server", "is", "text"))),
        # the memory's own subject written again before the relation adds nothing to the attribute
        (
            "The build server is ci-7",
            "build server",
            ("build server", "is", "ci-7", "text", ("build server", "is", "text")),
        ),
        # the words the memory's subject lacks name the attribute, in front of the relation
        (
            "The staging API returns 200",
            "staging",
            ("staging", "api returns", "200", "number", ("api staging", "returns", "number")),
        ),
        # a preposition before a text value is part of the relation: "in Berlin" is not "on vacation"
        ("Bob is in Berlin", "", ("bob", "is", "berlin", "text", ("bob", "is in", "text"))),
        # a version value is keyed as a version even when the sentence never says "version"
        ("The API is v2.3", "", ("the api", "is", "v2.3", "version", ("api version", "is", "version"))),
        # a role one person holds reads its value as a name, even one that reads as a date
        (
            "The on-call engineer is Jun 9",
            "",
            ("the on-call engineer", "is", "jun 9", "text", ("on-call", "is", "text")),
        ),
        # "Bob moved to Berlin" is where Bob lives
        ("Bob moved to Berlin", "", ("bob", "lives in", "berlin", "text", ("bob", "lives in", "text"))),
        # an address a thing moved to is not a home
        (
            "VPN门户搬到了 https://vpn.example.com",
            "",
            ("vpn门户", "is", "https://vpn.example.com", "text", ("vpn 户 门", "is", "text")),
        ),
        # a value with no subject of its own is about the memory's subject
        (
            "returns 200",
            "GET /status",
            ("GET /status", "returns", "200", "number", ("/status get", "returns", "number")),
        ),
        # a six-word label before a colon is still a label
        (
            "Number of staging deploys that failed: 12",
            "",
            (
                "number of staging deploys that failed",
                "is",
                "12",
                "number",
                ("deploys failed number staging", "is", "number"),
            ),
        ),
        # eight words before the relation are still a subject
        (
            "The port of the old staging api box is 8080",
            "",
            (
                "the port of the old staging api box",
                "is",
                "8080",
                "number",
                ("api box old port staging", "is", "number"),
            ),
        ),
    ],
)
def test_claim_reads_as(content, subject, expected):
    assert one(content, subject) == expected


def test_an_unversioned_and_a_versioned_statement_of_one_version_collide():
    (a,) = extract_claims("The API is v2.3")
    (b,) = extract_claims("The API version is 2.4")
    assert collides(a, b)


def test_words_that_say_how_a_value_is_given_do_not_split_the_key():
    """ "the billing link" and "the billing" are one thing to own."""
    (a,) = extract_claims("Alice owns the billing link")
    (b,) = extract_claims("Bob owns the billing")
    assert (a.subject, a.attribute, a.value, a.kind) == ("billing link", "owner", "alice", "text")
    assert a.key == b.key == ("billing owner", "is", "text")
    assert collides(a, b)


def test_the_time_word_in_a_subject_does_not_split_its_key():
    (a,) = extract_claims("The current version is 2.3")
    (b,) = extract_claims("The version is 2.4")
    assert a.key == b.key == ("version", "is", "version")


# -- labels and colons ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        # a generic label is read past: what follows is the claim
        ("Note: the API returns 200", ("the api", "returns", "200", "number", ("api", "returns", "number"))),
        # the words after the label keep their case: Bob is a named person with an employer
        ("Note: Bob works at Google", ("bob", "works at", "google", "text", ("bob", "works at", "text"))),
        # a Chinese label with an ASCII colon and no space
        ("备注:Bob works at Google", ("bob", "works at", "google", "text", ("bob", "works at", "text"))),
        ("注意:端口是8080", ("端口", "is", "8080", "number", ("port", "is", "number"))),
    ],
)
def test_a_label_before_a_colon_is_read_past(content, expected):
    assert one(content) == expected


def test_a_five_word_value_after_a_colon_is_a_value_not_speech():
    assert one("Backup host: Host 7 in rack B") == (
        "backup host",
        "is",
        "host 7 in rack b",
        "text",
        ("backup host", "is", "text"),
    )


# -- clauses that state no claim --------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "subject"),
    [
        ("if the port is 8080", ""),  # a condition
        ("预算没有改为5万", ""),  # negated: the budget was not changed to 50k
        ("The port of the old legacy staging api box is 8080", ""),  # nine words: prose, not a subject
        ("Times the staging deploy failed this week: 12", ""),  # a seven-word lead-in is no label
        ("The port is 8080?", ""),  # a question
        ("该由张三负责", ""),  # "should be handled by Zhang San": no thing is named
        ("Bob prefers the window seat", ""),  # not a drink
        ("Bob probably prefers tea", ""),  # hedged
        ("who prefers tea", ""),  # a question without its mark
        ("I switched to coffee", ""),  # nobody to hold the drink
        ("我平时喝咖啡", ""),
        ("Bob prefers oat milk vanilla hazelnut latte", ""),  # 31 characters: too long for one drink
        ("Bob probably likes jazz", ""),  # hedged taste
        ("does Bob like jazz", ""),  # a question without its mark
        ("The sky looks like rain", ""),  # "like" as a preposition
        ("Bob likes it", ""),  # no thing named
        ("Bob likes ...", ""),
        ("I like jazz", ""),  # nobody to hold the taste
        ("Bob likes jazz from the late nineteen fifties", ""),  # six words: a description
        ("Bob likes extremely brutal Scandinavian death metal", ""),  # 41 characters
        ("张三最喜欢的书丢了", ""),  # a favourite thing, not a taste
    ],
)
def test_no_claim(content, subject):
    assert claims(content, subject) == []


def _cjk_left(n: int) -> str:
    return ("甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥" * 2)[: n - 2] + "预算"


def test_a_chinese_subject_of_24_characters_is_read_and_of_25_is_not():
    assert one(_cjk_left(24) + "是5万")[2:4] == ("5万", "number")
    assert claims(_cjk_left(25) + "是5万") == []


# -- qualifiers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "attribute"),
    [
        ("staging uses Rust for the CLI", "uses for cli"),
        ("staging uses Rust for the big command line tool", "uses for big command line tool"),
        # five words after "for" are a remark, not a narrower attribute
        ("staging uses Rust for the big command line tool thing", "uses"),
        # nothing left after "for": no qualifier
        ("staging uses Rust for my", "uses"),
    ],
)
def test_for_what_narrows_the_attribute(content, attribute):
    subject, attr, value, _, key = one(content)
    assert (subject, attr, value) == ("staging", attribute, "rust")
    assert key == ("staging", attribute, "text")


# -- drinks -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "subject", "expected"),
    [
        ("Bob prefers tea", "", ("bob", "drink", "tea")),
        ("Bob prefers green tea", "", ("bob", "drink", "green tea")),
        ("Bob's favourite drink is coffee", "", ("bob", "drink", "coffee")),
        ("he prefers tea", "Bob", ("Bob", "drink", "tea")),  # a pronoun is the memory's subject
        ("张三平时喝咖啡", "", ("张三", "drink", "咖啡")),
        ("用户最喜欢的饮料是绿茶", "", ("用户", "drink", "绿茶")),
        ("我平时喝咖啡", "用户", ("用户", "drink", "咖啡")),
        # 30 characters is still one drink
        ("Bob prefers oat milk vanilla caramel latte", "", ("bob", "drink", "oat milk vanilla caramel latte")),
    ],
)
def test_drink_claim(content, subject, expected):
    s, attribute, value, kind, key = one(content, subject)
    assert (s, attribute, value, kind) == (*expected, "text")
    assert key[1:] == ("is", "text") and "drink" in key[0].split()


def test_a_switched_drink_collides_with_the_preferred_one():
    (a,) = extract_claims("Bob prefers tea")
    (b,) = extract_claims("Bob switched to coffee")
    assert a.key == b.key == ("bob drink", "is", "text")
    assert collides(a, b)


# -- tastes -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "subject", "expected"),
    [
        ("I like jazz", "Bob", ("Bob", "likes jazz", "yes", "bool", ("bob", "likes jazz", "bool"))),
        (
            "Bob likes jazz from the nineteen fifties",
            "",
            (
                "bob",
                "likes jazz from the nineteen fifties",
                "yes",
                "bool",
                ("bob", "likes jazz from the nineteen fifties", "bool"),
            ),
        ),
        (
            "Bob likes extremely heavy Scandinavian death metal",  # 40 characters
            "",
            (
                "bob",
                "likes extremely heavy scandinavian death metal",
                "yes",
                "bool",
                ("bob", "likes extremely heavy scandinavian death metal", "bool"),
            ),
        ),
    ],
)
def test_taste_claim(content, subject, expected):
    assert one(content, subject) == expected


# -- explicit claims ----------------------------------------------------------------------------


def test_an_explicit_claim_keeps_its_subject_and_attribute_as_given():
    claim = explicit_claim("Staging", "Port", "8080")
    assert (claim.subject, claim.attribute, claim.value, claim.kind, claim.origin) == (
        "Staging",
        "Port",
        "8080",
        "number",
        "explicit",
    )
    assert claim.key == ("port staging", "is", "number")


@pytest.mark.parametrize(
    ("subject", "attribute"),
    [("payments", "on-call engineer"), ("on-call engineer", "is")],
)
def test_an_explicit_role_reads_its_value_as_a_name(subject, attribute):
    claim = explicit_claim(subject, attribute, "Jun 9")
    assert (claim.kind, claim.value_norm) == ("text", "jun 9")


# -- clauses and the read limit -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "count"),
    [
        ("Is it done? Yes it is.", 1),  # the question is not counted
        ("端口是8080， ，版本是2", 2),  # an empty clause is not counted
        ("", 0),
    ],
)
def test_clause_count(content, count):
    assert clause_count(content) == count


def test_only_the_first_20000_characters_are_read():
    content = "x" * 19982 + ". The port is 8080"
    assert len(content) == 20_000
    assert one(content + "0")[2] == "8080"
    assert claims("x" * 20_000 + ". The port is 8080") == []


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("The VPN portal is at vpn.example.com", "Link to the VPN portal is https://vpn2.example.com"),
        ("Support is at help@acme.com", "Support is help-desk@acme.com"),
        ("The wiki is at wiki.acme.io/start", "The wiki is https://docs.acme.io"),
    ],
)
def test_at_an_address_is_the_same_slot_as_is(first: str, then: str) -> None:
    """docs/governance.md names these wordings as one slot: "at" said "is at" before a host name
    or an e-mail address (only a URL with "://" was read as an address), so no set formed."""
    (a,) = extract_claims(first)
    (b,) = extract_claims(then)
    assert a.key == b.key and collides(a, b), (a, b)


def test_at_or_in_a_place_still_qualifies_the_relation() -> None:
    (claim,) = extract_claims("Bob is in Berlin")
    assert claim.key_attribute == "is in"


def test_reports_to_is_the_slot_of_who_the_manager_is() -> None:
    """ "Bob's manager is Carol", later "Bob now reports to Dan": the second said no claim, so no
    set formed and ``find`` answered the old manager first."""
    (manager,) = extract_claims("Bob's manager is Carol")
    (reports,) = extract_claims("Bob now reports to Dan")
    assert collides(manager, reports) and reports.value_norm == "dan"
    (first,) = extract_claims("Eve reports to Frank")
    (then,) = extract_claims("Eve now reports directly to Grace")
    assert collides(first, then)
    (under,) = extract_claims("Bob reports to Dan", "Bob")
    assert (under.subject, under.attribute, under.value) == ("Bob", "manager", "dan")
    (mine,) = extract_claims("I report to Dana", "Bob")  # the speaker: the memory's subject
    assert collides(mine, under) and mine.value_norm == "dana"
    assert extract_claims("I report to Dana") == ()  # nobody named: no slot
    (since,) = extract_claims("Since the reorg I report to Dana", "Bob")
    assert collides(since, under) and since.value_norm == "dana"


@pytest.mark.parametrize(
    "content",
    [
        "Send the report to Alice on Monday",
        "Email the weekly report to the CFO",
        "Forward this report to Bob",
        "Please submit the expense report to finance",
        "Bob's report to Dana is late",
        "I will report to Dana",
    ],
)
def test_a_report_sent_to_someone_names_nobody_s_manager(content: str) -> None:
    """ "Send the report to Alice on Monday" was "send the's manager is alice on monday": two
    instructions sending reports to two people formed a claim set."""
    assert extract_claims(content) == ()


@pytest.mark.parametrize(
    "content",
    [
        "Bob no longer reports to Carol",
        "Bob No longer reports to Carol",
        "Bob NEVER reports to Carol",
        "Bob doesn't report to Carol",
        "Who does Bob report to?",
        "Bob might report to Dan",
    ],
)
def test_reports_to_says_nothing_when_negated_hedged_or_asked(content: str) -> None:
    assert extract_claims(content) == ()


def test_whom_one_reports_to_said_another_way_is_the_same_slot() -> None:
    """ "Bob's boss is now Erin", "张三的上级是王五" and "张三现在向王五汇报" each stood apart from
    "… manager is …" / "…的经理是…": no set formed, and ``find`` answered the old manager first."""
    (manager,) = extract_claims("Bob's manager is Carol")
    for other in ("Bob's boss is now Erin", "Bob's supervisor is Erin"):
        (said,) = extract_claims(other)
        assert collides(manager, said) and said.value_norm == "erin", other
    (jingli,) = extract_claims("张三的经理是李四")
    for other in ("张三的上级是王五", "张三现在向王五汇报", "张三向王五汇报工作"):
        (said,) = extract_claims(other)
        assert collides(jingli, said) and said.value_norm == "王五", other
    for unsaid in ("张三不再向王五汇报", "张三可能向王五汇报", "The boss wants a report"):
        assert extract_claims(unsaid) == (), unsaid


@pytest.mark.parametrize(
    ("said", "again", "same"),
    [
        ("The upload limit is 5 MB", "The upload limit is 5 megabytes", True),
        ("The upload limit is 5 MB", "The upload limit is 5120 kilobytes", True),
        ("The disk quota is 1 gigabyte", "The disk quota is 1 terabyte", False),
        ("The disk quota is 1 GB", "The disk quota is 1 gigabyte", True),
        ("The sprint is 2 weeks", "The sprint is 14 days", True),
    ],
)
def test_units_spelled_out_are_the_units(said: str, again: str, same: bool) -> None:
    """ "5 megabytes" read as the number 5: a restatement of "5 MB" was a change (the older one
    superseded), and "1 gigabyte" against "1 terabyte" was no disagreement at all."""
    (first,) = extract_claims(said)
    (second,) = extract_claims(again)
    assert first.key == second.key
    assert (first.value_norm == second.value_norm) is same, (first.value_norm, second.value_norm)


def test_a_manager_is_one_slot_in_either_language() -> None:
    """ "Bob的经理是Dan" kept the Chinese key 经理 while "Bob's manager is Carol" kept "manager": a
    mixed-language team's two statements of who Bob reports to formed no set, and "老板" and
    "领导" (a boss) were no manager at all."""
    (manager,) = extract_claims("Bob's manager is Carol")
    for other in ("Bob的经理是Dan", "Bob的老板是Dan", "Bob的领导是Dan", "Bob向Dan汇报", "Bob reports to Dan"):
        (said,) = extract_claims(other)
        assert said.key == manager.key and collides(manager, said) and said.value_norm == "dan", other
    (zh,) = extract_claims("张三的经理是李四")
    (boss,) = extract_claims("张三的老板是王五")
    assert collides(zh, boss)


@pytest.mark.parametrize(
    ("holder", "slot"),
    [
        ("Erin is the team lead", "The team lead is Carol"),
        ("Erin is the new team lead for Apollo", "The team lead for Apollo is Carol"),
        ("Dan is Bob's new manager", "Bob's manager is Carol"),
        ("Dana is the on-call engineer this week", "The on-call engineer this week is Carol"),
        ("Erin是计费服务的负责人", "计费服务的负责人是Carol"),
        ("李四是张三的经理", "张三的经理是王五"),
        ("王五是这周的值班工程师", "这周的值班工程师是赵六"),
        ("Carol is my manager", "My manager is Dan"),
        ("Carol is our team lead", "Our team lead is Erin"),
    ],
)
def test_a_person_said_first_holds_the_role(holder: str, slot: str) -> None:
    """ "Erin is the team lead" made Erin the subject and the role its value, so it formed no set
    with "The team lead is Carol" (and "Dan is Bob's new manager" none with Bob's manager)."""
    (held,) = extract_claims(holder)
    (other,) = extract_claims(slot)
    assert collides(held, other), (held, other)


@pytest.mark.parametrize(
    "content",
    [
        "Erin is a lead engineer",
        "It is the team lead",
        "Maybe Erin is the team lead",
        "Is Erin the team lead?",
        "Python is the main language",
        "我是老师",
        "Carol is my friend",
        "She is my manager",
    ],
)
def test_no_role_holder_where_none_is_named(content: str) -> None:
    assert all(c.key_subject not in ("lead team", "owner") for c in extract_claims(content)), content


@pytest.mark.parametrize(
    ("said", "changed"),
    [
        ("The staging API listens on port 8080", "The staging API now uses port 9090"),
        ("staging API的端口是8080", "staging API现在用9090端口"),
        ("The standup is at 10am", "We moved the standup to 11am"),
        ("The deadline is March 3", "They pushed back the deadline to March 10"),
        ("The standup is at 10am", "We moved the standup from 10am to 11am"),
        ("The default branch is main", "We renamed the default branch to trunk"),
        ("The default branch is main", "The default branch was renamed to trunk"),
        ("The release is scheduled for 2026-03-03", "The release slipped to 2026-03-10"),
        ("Our deploy day is Friday", "We changed our deploy day to Thursday"),
        # an upgrade gives the thing a new version
        ("Our Postgres version is 16", "We upgraded Postgres to 17"),
        ("The Postgres version is 16.1", "Postgres was upgraded to 16.4"),
        ("Our Postgres version is 16", "We upgraded Postgres from 16 to 17"),
        ("Node version is 20", "We downgraded Node to 18"),
        ("Postgres版本是16", "Postgres升级到17了"),
        ("Postgres的版本是16", "我们把Postgres升级到了17"),
        ("Our Postgres version is 16", "Postgres升级到17了"),
        ("Our Postgres version is 16", "We upgraded Postgres to 17 yesterday"),
        ("Our Postgres version is 16", "We upgraded to Postgres 17"),
        ("Postgres版本是16", "Postgres从16升级到17了"),
        ("我们的Postgres版本是16", "Postgres升级到17了"),  # 我们的 is "our": no part of the key
        ("我的经理是李四", "My manager is Carol"),
        # what it was, said too, is not what it is
        ("The staging API listens on port 8080", "The staging API moved from port 8080 to port 9090"),
        ("The staging API listens on port 8080", "The staging API port changed from 8080 to 9090"),
        ("The standup is at 10am", "The standup moved from 10am to 11am"),
        ("staging API的端口是8080", "staging API的端口从8080改成了9090"),
        # the version of what we run
        ("Our Postgres version is 16", "We're on Postgres 17"),
        ("Our Postgres version is 16", "We are now running Postgres 17."),
        ("The Python version is 3.11", "I'm using Python 3.12"),
        # a Latin name against Chinese is a name
        ("计费服务的负责人是Alice", "Bob负责计费服务"),
        # a change back to a value states it ("back" is no part of the slot)
        ("The staging API listens on port 9090", "We moved the staging API back to port 8080"),
        ("Our Postgres version is 17", "We rolled Postgres back to 16"),
        ("Our Postgres version is 17", "We reverted Postgres to 16"),
        ("站会时间是11点", "站会改回10点了"),
        ("The timeout is 60 seconds", "We reverted the timeout to 30 seconds"),
        # whose a thing is
        ("Alice owns the billing service", "The billing service is Dana's now"),
        ("计费服务的负责人是Alice", "计费服务现在归Dana管"),
        # a chat's lead-in before an active-voice change
        ("The standup is at 10am", "FYI we moved the standup to 11am"),
        ("The standup is at 10am", "heads up: we moved the standup to 11am"),
    ],
)
def test_a_change_said_with_another_verb_is_the_same_slot(said: str, changed: str) -> None:
    """Each pair formed no set: "uses port" was a "uses" relation, a change said in the active
    voice ("we moved X to Y") or with "renamed"/"slipped" held no claim, so the old value stayed
    current beside the new one."""
    (before,) = extract_claims(said)
    (after,) = extract_claims(changed)
    assert collides(before, after), (before, after)


def test_a_change_that_names_the_old_value_last_states_the_new_one() -> None:
    """ "I moved to Denver from Boston" was read as living in "denver from boston"."""
    (claim,) = extract_claims("I moved to Denver from Boston", "Caroline")
    assert (claim.attribute, claim.value_norm) == ("lives in", "denver")
    (before,) = extract_claims("Caroline lives in Boston")
    (after,) = extract_claims("Caroline moved to Denver from Boston")
    assert collides(before, after)


@pytest.mark.parametrize(
    "content",
    [
        "We moved Bob to the platform team",
        "We moved it to Friday",
        "I changed my mind to be honest",
        "We upgraded it to 17",
        "We might upgrade Postgres to 17",
        "We did not upgrade Postgres to 17",
        "We upgraded to the Pro plan",
        "We're on floor 3",
        "We reverted the change to the login page",
        "We're on version 2 of the payments API",
        "We reverted the config to fix the bug",
        # a change its sentence says was undone left no value
        "We upgraded Postgres to 17 but rolled it back",
        "We upgraded Postgres to 17, then rolled back",
        "We moved the standup to 11am but moved it back",
        "The staging API moved from port 8080 to port 9090 and back",
        "Postgres升级到17了，后来又回滚了",
        "We use 2 servers",
        "We're on Slack 24/7",
        "We are on Postgres 16, right?",
        "Maybe we are on Postgres 16",
    ],
)
def test_a_change_of_no_things_value_is_no_claim(content: str) -> None:
    assert extract_claims(content) == (), content


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("王五是工程师", "赵六是工程师"),  # what each is, not one role of someone
        ("李四是个好经理", "王五是个好经理"),
        ("王五是张三的经理", "李四以前是张三的经理"),  # a former holder
        ("王五是张三的经理", "李四下个月是张三的经理"),
        ("The API listens on port 8080", "The API uses port 5432 to reach Postgres"),  # a port it talks to
        ("The backend team uses port 8080", "The backend team uses port 9090"),  # a team uses many
        ("The staging host uses port 8080", "The staging host uses port 9090"),
        ("They moved him to the platform team", "They moved him to the infra team"),
        ("I changed the config to use TLS", "I changed the config to disable caching"),  # purposes
        ("We updated the README to mention the flag", "We updated the README to fix typos"),
        ("I pushed the changes to main", "I pushed the changes to the release branch"),  # git, not a value
        ("We switched from MySQL to Postgres", "We switched from MySQL to SQLite"),
        ("Our hosts use port 22", "Our hosts use port 2222"),
        ("团队用9090端口", "团队用8080端口"),
        ("The staging API doesn't listen on port 9090 anymore", "The staging API doesn't listen on port 8080 anymore"),
        ("My manager is Carol", "Their manager is Erin"),  # someone else's: "their" is no "my"
        ("Our Postgres version is 16", "Their Postgres version is 15"),
        ("Bob lives in Paris", "Bob moved from the platform team to the data team"),  # a team is no home
        ("Bob lives in Paris", "Bob moved to the data team"),
        # a change undone, still to come, temporary or asked holds no new value now
        ("The staging API listens on port 8080", "The staging API moved from port 8080 to port 9090 and back"),
        (
            "The staging API listens on port 8080",
            "The staging API moved from port 8080 to port 9090 but we reverted it",
        ),
        ("staging API的端口是8080", "staging API端口将从8080改成9090"),
        ("staging API的端口是8080", "staging API的端口从8080改成了9090吗"),
        ("staging API的端口是8080", "staging API的端口暂时从8080改成了9090"),
    ],
)
def test_statements_that_hold_no_common_value_form_no_set(first: str, second: str) -> None:
    assert not any(collides(a, b) for a in extract_claims(first) for b in extract_claims(second)), (first, second)


def test_an_undone_change_leaves_the_other_sentences_and_clauses_their_values() -> None:
    (standup,) = extract_claims("We moved the standup to 11am. Bob reverted the config.")
    assert standup.value_norm == "11:00"  # the undoing is another sentence's
    (port,) = extract_claims("The API listens on port 8080 and we reverted the cache change")
    assert port.value_norm == "8080"  # the clause that states a value makes no change


@pytest.mark.parametrize(
    ("said", "subject", "other", "other_subject"),
    [
        ("Her manager is Carol", "Alice", "manager: Erin", "Alice"),
        ("她的经理是李四", "王芳", "王芳的经理是张三", ""),
        ("His phone number is 555-1234", "Bob", "Bob's phone number is 555-9999", ""),
    ],
)
def test_his_or_hers_under_a_subject_is_the_subject_s(said: str, subject: str, other: str, other_subject: str) -> None:
    """ "Her manager is Carol" about Alice was keyed "alice her manager": no set with Alice's manager."""
    (mine,) = extract_claims(said, subject)
    (theirs,) = extract_claims(other, other_subject)
    assert collides(mine, theirs), (mine.key, theirs.key)
    assert extract_claims("Her manager is Carol")[0].key_subject == "her manager"  # no subject: whose is unsaid


@pytest.mark.parametrize(
    ("content", "subject"),
    [
        ("The statement of work deadline is March 3", ""),
        ("The message of the day on the bastion is 'welcome'", ""),
        ("This memory is DDR5", "build server"),
        ("That record is 9.58 seconds", "100m world record"),
        ("Those records are in Postgres", ""),
    ],
)
def test_a_fact_about_a_statement_or_a_record_keeps_its_claim(content: str, subject: str) -> None:
    """A remark judging a note states no claim ("that note is obsolete"); a fact whose subject
    merely is a statement, a message or a record does (they lost it, so a later value of "the
    statement of work deadline" superseded nothing)."""
    assert len(extract_claims(content, subject)) == 1


@pytest.mark.parametrize(
    "remark",
    ["That note is obsolete.", "The earlier statement is incorrect", "The note about the launch is wrong"],
)
def test_a_remark_judging_a_note_states_no_claim(remark: str) -> None:
    assert extract_claims(remark) == ()
