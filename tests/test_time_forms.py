"""RFC 3339's lowercase ``t`` and ``z`` (``2026-12-04t19:15:00z``) are times like their uppercase
forms wherever a time is taken, and are stored in the one uppercase canonical form; ISO 8601's
``T24:00`` stays refused, with a refusal that says what to write instead."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fact_ledger.ledger.clock import parse_time
from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.server.cli import exit_codes
from fact_ledger.server.cli.main import main

LOWER = "2026-01-04t19:15:00z"
CANONICAL = "2026-01-04T19:15:00.000000Z"


def cli(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args])


@pytest.mark.parametrize("text", [LOWER, "2026-01-04T19:15:00z", "2026-01-04t19:15:00Z", "2026-01-04t20:15:00+01:00"])
def test_lowercase_t_and_z_are_the_uppercase_forms(text: str) -> None:
    assert parse_time(text, field="event_time") == CANONICAL


def test_remember_stores_a_lowercase_event_time_in_the_canonical_form(db_path: Path) -> None:
    said = cli(db_path, "--json", "remember", "The staging API listens on port 8080", "--event-time", LOWER)
    assert said.exit_code == 0, said.output
    memory = json.loads(said.output)["memory_id"]
    assert json.loads(cli(db_path, "--json", "read", str(memory)).output)["memory"]["event_time"] == CANONICAL
    assert f"valid from {CANONICAL}" in cli(db_path, "read", str(memory)).output


def test_every_time_option_of_the_cli_takes_the_lowercase_form(db_path: Path) -> None:
    cli(db_path, "remember", "The staging API listens on port 8080", "--event-time", "2026-01-01T00:00:00Z")
    before, after = "2026-01-01t00:00:00z", "2999-01-01t00:00:00z"
    for args in (
        ("find", "staging", "--after-time", before, "--before-time", "2026-01-02t00:00:00z"),
        ("find", "staging", "--as-of-event-time", "2026-01-02t00:00:00z", "--as-of-recorded", after),
        ("read", "1", "--as-of-event-time", "2026-01-02t00:00:00z", "--as-of-recorded", after),
        ("timeline", "1", "--as-of-recorded", after),
        ("audit", "--since", before, "--until", after),
    ):
        human = cli(db_path, *args)
        assert human.exit_code == 0 and ("port 8080" in human.output or "#1" in human.output), (args, human.output)
        answer = json.loads(cli(db_path, "--json", *args).output)
        assert answer["ok"] is True, (args, answer)
    found = json.loads(cli(db_path, "--json", "find", "staging", "--as-of-event-time", "2026-01-02t00:00:00z").output)
    assert found["as_of"]["event_time"] == "2026-01-02T00:00:00.000000Z"  # said back in the canonical form
    audit = json.loads(cli(db_path, "--json", "audit", "--since", before, "--until", after).output)
    assert [e["memory_id"] for e in audit["events"]] == [1]
    exported = cli(db_path, "export", "--since", before, "--until", after)
    assert exported.exit_code == 0 and len(exported.output.splitlines()) == 1, exported.output


@pytest.mark.parametrize(
    ("text", "instead"),
    [
        ("2026-01-04T24:00:00Z", "2026-01-05T00:00Z"),
        ("2026-01-04t24:00z", "2026-01-05T00:00Z"),
        ("2026-01-04T24:00+05:30", "2026-01-05T00:00+05:30"),
    ],
)
def test_the_end_of_a_day_is_refused_saying_what_to_write(db_path: Path, text: str, instead: str) -> None:
    said = cli(db_path, "remember", "The staging API listens on port 8080", "--event-time", text)
    assert said.exit_code == exit_codes.REFUSED and "Traceback" not in said.output
    assert f"the end of a day (24:00), which is not taken: write the next day's 00:00 ({instead})" in said.output
    assert "--event-time is" in said.output  # the CLI's option name
    refused = json.loads(cli(db_path, "--json", "find", "staging", "--before-time", text).output)
    assert refused["error"]["code"] == "invalid_input" and refused["error"]["field"] == "before_time"
    assert "the end of a day (24:00)" in refused["error"]["message"]
    assert json.loads(cli(db_path, "--json", "status").output)["events"] == 0  # nothing written


def test_a_text_that_is_no_time_is_still_refused_as_before(db_path: Path) -> None:
    said = cli(db_path, "find", "staging", "--as-of-recorded", "2.0")
    assert said.exit_code == exit_codes.REFUSED
    assert "--as-of-recorded is a log position (a whole number >= 0) or an ISO 8601 timestamp, not '2.0'" in said.output
    said = cli(db_path, "audit", "--since", "2026-02-30T24:00")  # no such date: not "the end of a day"
    assert said.exit_code == exit_codes.REFUSED and "--since is not an ISO 8601 timestamp" in said.output


@pytest.mark.parametrize(
    ("text", "instead"),
    [
        ("2026-01-04T24", "2026-01-05T00:00"),
        ("20260104T2400Z", "2026-01-05T00:00Z"),
        ("2026-01-04 24:00:00,000z", "2026-01-05T00:00Z"),
        ("2026-01-04T24:00:00.000000Z", "2026-01-05T00:00Z"),
    ],
)
def test_every_spelling_of_the_end_of_a_day_names_the_instant_to_write(text: str, instead: str) -> None:
    with pytest.raises(InvalidInput, match=re.escape(f"write the next day's 00:00 ({instead}), the same instant")):
        parse_time(text, field="before_time")


@pytest.mark.parametrize("text", ["2026-01-04T24:00:01", "2026-02-30T24:00", "2026-01-04T25:00"])
def test_what_is_no_end_of_a_day_is_refused_as_no_time(text: str) -> None:
    with pytest.raises(InvalidInput, match="before_time is not an ISO 8601 timestamp"):
        parse_time(text, field="before_time")


def test_the_last_day_of_the_calendar_has_no_next_day_to_name() -> None:
    with pytest.raises(InvalidInput, match=re.escape("(24:00), which is not taken: write a time within")):
        parse_time("9999-12-31T24:00Z", field="before_time")
