"""Edges of what counts as a claim's value and how it is typed (ledger.claim_values).

A value is one thing (a number, a version, a name, a short phrase), never a description or a
remark: these cases pin where extraction draws that line, end to end through ``extract_claims``,
and the typed form ``parse_value`` gives a value (its kind, canonical form and the noun or
preposition folded into its key).
"""

from __future__ import annotations

import pytest

from fact_ledger.ledger.claim_values import is_named, is_value, parse_value
from fact_ledger.ledger.claims import extract_claims

BRANCH_80 = "feature/" + "x" * 72  # one token, exactly 80 characters
ADDRESS_30 = "上海市浦东新区张江高科技园区碧波路六百九十号三号楼五层〇一室"
ADDRESS_31 = "上海市浦东新区张江高科技园区碧波路六百九十号三号楼五层五〇一室"


def claims(content: str) -> list[tuple[str, str, str]]:
    return [(c.subject, c.attribute, c.value) for c in extract_claims(content)]


def test_the_fixtures_have_the_lengths_the_limits_are_about() -> None:
    assert (len(BRANCH_80), len(ADDRESS_30), len(ADDRESS_31)) == (80, 30, 31)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        # A value of up to 80 characters is one value; a longer one is a passage, not a value.
        (f"The release branch is {BRANCH_80}", [("the release branch", "is", BRANCH_80)]),
        (f"The release branch is {BRANCH_80}y", []),
        # A Chinese value holds up to 30 characters.
        (f"办公地址是{ADDRESS_30}", [("办公地址", "is", ADDRESS_30)]),
        (f"办公地址是{ADDRESS_31}", []),
        # Up to five words after "is" name one value; six words are a sentence about it.
        ("The palette is blue green red yellow orange", [("the palette", "is", "blue green red yellow orange")]),
        ("The palette is blue green red yellow orange purple", []),
        # One word is never a remark, even a word that opens remarks ("all", "almost …").
        ("The log level is all", [("the log level", "is", "all")]),
        # A phrase that opens on an adverb or quantifier, or ends on a description, is a remark.
        ("The sky is almost blue", []),
        ("The weekend is beach fun", []),
        # "red" ends like a participle but a two-word value is read as a whole: a value.
        ("The codename is red fox", [("the codename", "is", "red fox")]),
        # One descriptive-looking word is a description ("colorful") unless it carries the
        # marks of an identifier (a hyphen, a digit, a dot, a slash).
        ("The office is colorful", []),
        ("The bucket is assets-staging", [("the bucket", "is", "assets-staging")]),
        # A description that starts with an article or a negation is no value.
        ("The status is a mess", []),
        ("The plan is no deploys", []),
        # An employer is a name: a lowercase phrase is something done, not a job.
        ("Bob works at the book club", []),
        ("Bob works at Initech", [("bob", "works at", "initech")]),
        # A name with an accent is a name like any other: José has an employer, and "tall" or
        # "uses Python" is one of many things true of him, not an attribute's one value.
        ("José Alvarez works at Acme", [("josé alvarez", "works at", "acme")]),
        ("José is tall", []),
        ("José uses Python", []),
    ],
)
def test_what_a_clause_states_as_a_value(content: str, expected: list[tuple[str, str, str]]) -> None:
    assert claims(content) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # Six words after a speaker's name are what the speaker said, read as its own clause.
        ("Caroline: staging api port is now 8080", [("staging api port", "is", "8080")]),
        ("Caroline: the staging api port is 8080", [("the staging api port", "is", "8080")]),
    ],
)
def test_a_speakers_sentence_is_read_as_what_was_said(line: str, expected: list[tuple[str, str, str]]) -> None:
    assert claims(line) == expected


@pytest.mark.parametrize(
    ("display", "relation", "cased", "left", "expected"),
    [
        ("8080", "port", "The API listens on port 8080", "the api", True),  # a typed value is one
        ("—", "is", "The status is —", "the status", False),  # no letter or digit: nothing stated
        ("a developer", "is", "Bob is a developer", "bob", False),
        ("blue green red yellow orange", "is", "The palette is blue green red yellow orange", "the palette", True),
        ("blue green red yellow orange purple", "is", "x", "the palette", False),
        ("the book club", "works at", "Bob works at the book club", "bob", False),
        ("almost here", "is", "The release is almost here", "the release", False),
        ("Sterling", "is", "The codename is Sterling", "the codename", True),  # capitalised: a name
        ("tall", "is", "Bob is tall", "bob", False),  # a trait of a named someone
        ("main", "is", "The default branch is main", "the default branch", True),
    ],
)
def test_is_value_answers_a_plain_yes_or_no(display: str, relation: str, cased: str, left: str, expected: bool) -> None:
    assert is_value("number" if display == "8080" else "text", display, relation, cased, left) is expected


@pytest.mark.parametrize(
    ("left", "cased", "expected"),
    [
        ("bob", "Bob is tall", True),
        ("alice chen", "Alice Chen is tall", True),
        ("the team", "The team is tall", False),  # an article: not a name
        ("bob", "bob is tall", False),  # written lowercase: not a name
        ("josé", "José is tall", True),
        ("renée dubois", "Renée Dubois lives in Paris", True),
        ("", "Bob is tall", False),  # nothing stood there
        ("张三", "张三是老师", False),
    ],
)
def test_is_named_means_written_as_a_capitalised_name(left: str, cased: str, expected: bool) -> None:
    assert is_named(left, cased) is expected


@pytest.mark.parametrize(
    ("raw", "hint", "expected"),
    [
        # A noun before the number is folded into the key: "port 8080" is the port, "version 2.3" the version.
        ("port 8080", "service", ("8080", "number", "8080", "port")),
        ("version 2.3", "api", ("2.3", "version", "2.3", "version")),
        ("端口 8080", "服务", ("8080", "number", "8080", "port")),
        ("版本 2.3", "接口", ("2.3", "version", "2.3", "version")),
        # Without as_name a date reads as a date.
        ("2025-07-01", "release date", ("2025-07-01", "when", "2025-07-01", "")),
        # A text value keeps the preposition it came with: "in Berlin" and "on vacation" differ.
        ("in Berlin", "bob", ("berlin", "text", "berlin", "in")),
    ],
)
def test_parse_value_types_the_leading_value(raw: str, hint: str, expected: tuple[str, str, str, str]) -> None:
    assert parse_value(raw, hint) == expected


def test_a_role_holder_is_a_name_even_when_it_reads_as_a_date() -> None:
    # "the on-call engineer is Jun 9": Jun 9 is someone's handle, so one key never splits by type.
    assert parse_value("Jun 9", "on-call engineer", as_name=True) == ("jun 9", "text", "jun 9", "")
    # ... but a port stated with its noun is a number whoever's attribute it is.
    assert parse_value("port 8080", "on-call engineer", as_name=True) == ("8080", "number", "8080", "port")
