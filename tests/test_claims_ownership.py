"""Who owns what, and attributes as a person names them (issue 29, points 16 and 17).

"Alice Chen owns the billing service" and "Carol Diaz owns the billing service" state two
owners of one thing: one claim (subject the thing, attribute ``owner``, value the owner) keyed
the same whichever way it is said, in English and Chinese, so the two form one claim set.
Precision first: things one owns many of, co-owners, other things, hedges and negations form
none. A role held by one person at a time reads its value as a name, so "Jun 9" does not split
one key into two sets; attribute names carry no leftover grammar (``的端口``, ``for q3``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.ledger.claims import collides, extract_claims
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

SAME_OWNER_SLOT = [
    ("Alice Chen owns the billing service", "Carol Diaz owns the billing service"),
    ("Alice Chen owns the billing service", "The billing service is owned by Carol Diaz"),
    ("The owner of the billing service is Alice Chen", "Carol Diaz owns the billing service"),
    ("The billing service's owner is Alice Chen", "Billing service owner: Carol Diaz"),
    ("Carol took over the billing service from Alice", "Alice Chen owns the billing service"),
    ("The platform team owns the deploy pipeline", "The data team owns the deploy pipeline"),
    ("Alice is responsible for the billing service", "Carol Diaz is now in charge of the billing service"),
    ("billing 服务的负责人是张三", "李四负责 billing 服务"),
    ("支付服务的负责人是王伟", "支付服务由刘洋负责"),
    ("王伟负责支付服务", "刘洋现在负责支付服务"),
    ("负责人是张工", "负责人是李工"),
]
NOT_ONE_SLOT = [
    ("Alice Chen owns the billing service", "Alice Chen owns the payments service"),  # two things
    ("Alice Chen owns the billing service", "Carol Diaz owns the billing dashboard"),
    ("Bob owns a Tesla", "Alice owns a Tesla"),  # one of many: no claim
    ("Bob owns cars", "Alice owns cars"),
    ("Bob owns a Tesla", "Bob owns a bike"),
    ("Alice and Bob own the billing service", "Carol owns the billing service"),  # co-owners
    ("Maybe Carol owns the billing service", "Alice owns the billing service"),  # a hedge
    ("Alice no longer owns the billing service", "Carol owns the billing service"),  # a negation
    ("Who owns the billing service", "Carol owns the billing service"),  # a question
    ("It owns the billing service", "Carol owns the billing service"),  # nobody named
    ("Alice is responsible for reviewing pull requests", "Bob is responsible for reviewing pull requests"),
    ("张三负责前端", "李四负责后端"),
    ("张三很负责", "李四很负责"),  # responsible as a trait
    ("张三不再负责支付服务", "李四负责支付服务"),
    ("我负责支付服务", "李四负责支付服务"),
    ("前端负责人是张工", "后端负责人是李工"),
    ("This is Bob's", "The billing service is Dana's now"),  # nothing named
    ("这个问题归我管", "计费服务现在归Dana管"),  # no one named
]


def _collide(left: str, right: str) -> bool:
    return any(collides(a, b) for a in extract_claims(left) for b in extract_claims(right))


@pytest.mark.parametrize(("left", "right"), SAME_OWNER_SLOT, ids=lambda v: v[:28])
def test_two_owners_of_one_thing_collide(left: str, right: str) -> None:
    assert _collide(left, right) and _collide(right, left)


@pytest.mark.parametrize(("left", "right"), NOT_ONE_SLOT, ids=lambda v: v[:28])
def test_ownership_that_is_not_one_slot_never_collides(left: str, right: str) -> None:
    assert not _collide(left, right)


@pytest.mark.parametrize(
    "content",
    [
        "Alice Chen owns the billing service",
        "The billing service is owned by Alice Chen",
        "The owner of the billing service is Alice Chen",
        "Alice Chen took over the billing service last week",
    ],
)
def test_an_ownership_claim_reads_thing_owner_name(content: str) -> None:
    (claim,) = extract_claims(content)
    assert (claim.subject, claim.attribute, claim.value) == ("billing service", "owner", "alice chen")


def test_a_chinese_ownership_claim_reads_thing_owner_name() -> None:
    for content in ("billing 服务的负责人是张三", "张三负责 billing 服务", "billing 服务由张三负责"):
        (claim,) = extract_claims(content)
        assert (claim.subject, claim.attribute, claim.value) == ("billing 服务", "owner", "张三"), content


@pytest.mark.parametrize(
    ("content", "subject", "expected"),
    [
        ("staging api 的端口是 8080", "staging api", ("staging api", "端口", "8080")),
        ("billing 服务的负责人是 张三", "billing 服务", ("billing 服务", "owner", "张三")),
        ("The port of staging is 9090", "staging", ("staging", "port", "9090")),
        ("The budget for Q3 is $50k", "project", ("project (q3)", "budget", "$50k")),
        ("The budget for Q3 is $50k", "budget", ("budget (q3)", "is", "$50k")),
        ("项目预算为6万", "项目", ("项目", "预算", "6万")),
        # a possessive subject: the attribute was "s phone number" (the subject cut off as a prefix)
        ("Carol's phone number is 555-0100", "Carol", ("Carol", "phone number", "555-0100")),
        ("Carol’s phone number is 555-0100", "carol", ("carol", "phone number", "555-0100")),
        ("Bob's manager is Dana", "Bob", ("Bob", "manager", "dana")),
    ],
)
def test_attributes_carry_no_leftover_grammar(content: str, subject: str, expected: tuple[str, str, str]) -> None:
    (claim,) = extract_claims(content, subject)
    assert (claim.subject, claim.attribute, claim.value) == expected


def test_the_narrowed_budget_keeps_its_key_and_two_quarters_stay_apart() -> None:
    q3 = extract_claims("The budget for Q3 is $50k", "project")
    assert _collide("The project budget for Q3 is $50k", "The project budget for Q3 is $60k")
    assert not _collide("The project budget for Q3 is $50k", "The project budget for Q4 is $60k")
    assert q3[0].key == extract_claims("The budget for Q3 is $60k", "project")[0].key


@pytest.mark.parametrize("value", ["Jun 9", "April", "June", "2025", "Mar 3"])
def test_a_role_reads_its_value_as_a_name_so_one_key_has_one_kind(value: str) -> None:
    (named,) = extract_claims(f"The on-call engineer is {value}")
    (other,) = extract_claims("The on-call engineer is Priya")
    assert named.kind == other.kind == "text" and named.key == other.key and collides(named, other)


def test_a_date_is_still_a_date_where_the_attribute_is_no_role() -> None:
    (claim,) = extract_claims("The release date is Jun 9")
    assert claim.kind == "when"
    (rotation,) = extract_claims("The on-call rotation is 7 days")  # a rotation is no person
    assert rotation.kind == "number"
    (week,) = extract_claims("On-call this week: Jun 9")  # the role, then when it holds
    assert week.kind == "text"


@pytest.mark.parametrize("content", ["张三负责任地完成了工作", "张三负责的项目延期了", "他很负责任"])
def test_responsible_as_a_word_is_no_ownership(content: str) -> None:
    assert [c for c in extract_claims(content) if c.attribute == "owner"] == []


# -- on the ledger: one claim set per slot --------------------------------------------------------
@pytest.fixture
def app(db_path: Path) -> Iterator[LedgerApp]:
    app = LedgerApp(Settings(db=str(db_path), client="test"))
    yield app
    app.close()


def test_two_owners_form_one_claim_set_and_find_says_so(app: LedgerApp) -> None:
    alice = app.remember("Alice Chen owns the billing service", event_time="2025-02-01T00:00:00Z")["memory_id"]
    carol = app.remember("Carol Diaz owns the billing service", event_time="2025-05-01T00:00:00Z")
    assert carol["conflicts"] and carol["conflicts"][0]["other_id"] == alice
    claim = carol["conflicts"][0]["claim"]
    assert (claim["subject"], claim["attribute"], claim["value"]) == ("billing service", "owner", "carol diaz")
    [conflict] = app.conflicts()["conflicts"]
    found = app.find("who owns billing")["results"]
    assert {r["memory_id"] for r in found} == {alice, carol["memory_id"]}
    assert all(r["conflict_ids"] == [conflict["conflict_id"]] for r in found)
    assert {r["standing"]["role"] for r in found} == {"leader", "challenger"}


def test_owners_of_different_things_form_no_set(app: LedgerApp) -> None:
    app.remember("Alice Chen owns the billing service")
    assert app.remember("Alice Chen owns the payments service")["conflicts"] == []
    assert app.remember("Bob owns a Tesla")["conflicts"] == []
    assert app.remember("Alice owns a Tesla")["conflicts"] == []
    assert app.conflicts()["conflicts"] == []


def test_a_name_that_reads_as_a_date_joins_the_one_set_of_its_key(app: LedgerApp) -> None:
    for name in ("Priya", "Jun 9", "Marco", "Jun 10"):
        app.remember(f"The on-call engineer is {name}")
    [conflict] = app.conflicts()["conflicts"]
    assert conflict["member_count"] == 4


def test_explicit_claims_share_the_keys_of_ownership_and_roles() -> None:
    from fact_ledger.ledger.claims import explicit_claim

    owner = explicit_claim("billing service", "owner", "Alice Chen")
    (said,) = extract_claims("Carol Diaz owns the billing service")
    assert owner is not None and owner.key == said.key and collides(owner, said)
    on_call = explicit_claim("on-call", "engineer", "Jun 9")
    (named,) = extract_claims("The on-call engineer is Priya")
    assert on_call is not None and on_call.kind == "text" and collides(on_call, named)
    port = explicit_claim("staging", "port", "8080")
    assert port is not None and port.kind == "number"  # no role: typed as before
