"""What a person reads from the CLI (issue 29, point 19): ``read --sections`` shows the asked
sections under the memory's header, ``find`` keeps each hit short and marks conflicted ones,
and content from stdin or a file does not keep the newline that carried it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Settings
from tests.test_erasure import promoted_across

STEP = "Restart the billing service, then check that it answers on port 8080. "


def cli(db: Path, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], input=input)


def _runbook(db: Path) -> int:
    text = "# Runbook\n\n" + "".join(f"## Step {n}\n\n{STEP * 15}\n\n" for n in range(1, 9))
    assert len(text) > 8000
    return json.loads(cli(db, "--json", "remember", "-", "--subject", "runbook", input=text).stdout)["memory_id"]


def test_read_with_sections_prints_the_header_and_those_sections_only(db_path: Path) -> None:
    mid = _runbook(db_path)
    out = cli(db_path, "read", str(mid), "--sections", "6").stdout
    lines = out.splitlines()
    assert lines[0] == f"#{mid} v1 user_confirmed (active) runbook"
    assert "## Step 6" in out and "## Step 5" not in out and "## Step 7" not in out
    assert "# Runbook" not in out  # the content is not printed before the section
    assert len(out) < 2000
    whole = cli(db_path, "read", str(mid)).stdout  # without --sections: the whole memory and the catalog
    assert "## Step 1" in whole and "## Step 8" in whole and "§6 Runbook › Step 6" in whole


def test_a_short_memory_read_with_all_sections_still_shows_its_text(db_path: Path) -> None:
    short = json.loads(cli(db_path, "--json", "remember", "the staging port is 8443").stdout)["memory_id"]
    for sections in ("all", "catalog"):
        out = cli(db_path, "read", str(short), "--sections", sections).stdout
        assert out.splitlines()[1].strip() == "the staging port is 8443", (sections, out)


def test_find_hits_are_short_and_conflicted_ones_are_marked(db_path: Path) -> None:
    _runbook(db_path)
    cli(db_path, "remember", "The billing service listens on port 8080", "--subject", "billing")
    cli(
        db_path,
        "remember",
        "The billing service listens on port 9090",
        "--subject",
        "billing",
        "--source-type",
        "agent_generated",
    )
    doc = json.loads(cli(db_path, "--json", "find", "billing port", "--limit", "10").stdout)
    out = cli(db_path, "find", "billing port", "--limit", "10").stdout
    headers = [line for line in out.splitlines() if line.startswith("#")]
    assert len(headers) == len(doc["results"]) == 3
    for line in out.splitlines():
        assert len(line) <= 320, line
    conflicted = {r["memory_id"]: r for r in doc["results"] if r["conflict_ids"]}
    assert len(conflicted) == 2
    for mid, r in conflicted.items():
        header = next(h for h in headers if h.startswith(f"#{mid} "))
        assert f"⚠ conflict {r['conflict_ids'][0]}" in header
    leader = next(r for r in conflicted.values() if r["source_type"] == "user_confirmed")
    challenger = next(r for r in conflicted.values() if r["source_type"] == "agent_generated")
    assert next(h for h in headers if h.startswith(f"#{leader['memory_id']} ")).endswith("(leads)")
    assert f"(#{leader['memory_id']} leads)" in next(h for h in headers if h.startswith(f"#{challenger['memory_id']} "))
    assert not any("⚠" in h for h in headers if "runbook" in h)


def test_content_from_stdin_or_a_file_loses_its_trailing_newline(db_path: Path, tmp_path: Path) -> None:
    piped = json.loads(cli(db_path, "--json", "remember", "-", input="the vpn gateway is 10.0.0.1\n").stdout)
    note = tmp_path / "note.txt"
    note.write_text("deploys freeze on Fridays\n\n", encoding="utf-8")
    filed = json.loads(cli(db_path, "--json", "remember", "--file", str(note)).stdout)
    kept = json.loads(cli(db_path, "--json", "remember", "keep my spaces  ").stdout)
    contents = {
        mid: json.loads(cli(db_path, "--json", "read", str(mid)).stdout)["memory"]["content"]
        for mid in (piped["memory_id"], filed["memory_id"], kept["memory_id"])
    }
    assert list(contents.values()) == ["the vpn gateway is 10.0.0.1", "deploys freeze on Fridays", "keep my spaces  "]


def test_a_found_fact_that_stopped_holding_says_until_when(db_path: Path) -> None:
    old = json.loads(cli(db_path, "--json", "remember", "The gateway port is 8000").stdout)["memory_id"]
    new = json.loads(cli(db_path, "--json", "remember", "The gateway port is 8001").stdout)["memory_id"]
    assert cli(db_path, "supersede", str(old), str(new)).exit_code == 0
    doc = json.loads(cli(db_path, "--json", "find", "gateway port", "--include-inactive").stdout)
    ended = {r["memory_id"]: r.get("valid_to") for r in doc["results"]}
    assert ended[new] is None and ended[old]  # the current one holds; the old one ended
    headers = [line for line in cli(db_path, "find", "gateway port", "--include-inactive").stdout.splitlines()]
    assert any(h.startswith(f"#{old} ") and f"until {ended[old]}" in h for h in headers)
    assert not any(h.startswith(f"#{new} ") and "until" in h for h in headers)


def test_stdin_that_is_not_utf8_is_named_as_such(db_path: Path) -> None:
    result = CliRunner().invoke(main, ["--db", str(db_path), "remember", "-"], input=b"bad \xff\xfe")
    assert result.exit_code == 1 and result.stderr == "error (invalid_input): stdin is not UTF-8 text\n"
    fine = CliRunner().invoke(main, ["--db", str(db_path), "remember", "-"], input="北京的天气很好\n".encode())
    assert fine.exit_code == 0 and fine.stdout.startswith("remembered #1")


def test_audit_refuses_an_event_type_it_does_not_know(db_path: Path) -> None:
    assert cli(db_path, "remember", "the staging port is 8443").exit_code == 0
    bogus = cli(db_path, "audit", "--type", "Bogus")
    refusal = "error (invalid_input): --type: 'Bogus' is not an event type; the log writes "
    assert bogus.exit_code == 1 and bogus.stderr.startswith(refusal)
    shown = cli(db_path, "audit", "--type", "MemoryRecorded").stdout
    assert "cli MemoryRecorded" in shown
    nothing = cli(db_path, "audit", "--since", "2030-01-01")  # it printed nothing at all
    assert nothing.exit_code == 0 and nothing.stdout == "no events match\n"


def test_a_value_that_arrives_late_says_it_was_superseded_on_arrival(db_path: Path) -> None:
    """It printed "remembered #2 … supersedes #2": the memory itself, as if it had won."""
    env = {"LEDGER_POLICY_SETTLE_CHANGES": "1"}  # the shipped default (tests pin review mode)
    runner = CliRunner()
    base = ["--db", str(db_path), "remember", "--subject", "staging", "--source-type", "agent_generated"]
    newer = runner.invoke(main, [*base, "The staging API listens on port 9090", "--event-time", "2026-11-20"], env=env)
    assert newer.exit_code == 0, newer.output
    late = runner.invoke(main, [*base, "The staging API listens on port 7070", "--event-time", "2026-11-01"], env=env)
    assert late.exit_code == 0, late.output
    assert "arrived late: superseded on arrival by #1, which states a later value" in late.output, late.output
    assert "supersedes #2" not in late.output


def test_sweep_and_archive_speak_plainly(db_path: Path) -> None:
    """ "did expire 1 idle conversation(s) …", "archived 1 memories"."""
    cli(db_path, "remember", "The wiki is at wiki.a.com")
    retired = cli(db_path, "--json", "remember", "The wiki moved to wiki.b.com")
    assert retired.exit_code == 0
    assert cli(db_path, "retire", "1", "--reason", "moved").exit_code == 0
    swept = cli(db_path, "sweep").output
    assert "0 idle conversation(s) expired and 0 memory(ies) cooled" in swept and "did " not in swept
    assert "would expire" in cli(db_path, "sweep", "--dry-run").output
    assert "1 memory would be archived" in cli(db_path, "archive", "--dry-run", "--older-than-days", "0").output
    assert "archived 1 memory" in cli(db_path, "archive", "--older-than-days", "0").output


def test_health_tells_a_person_the_command_that_decides_a_set_no_rule_settles(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The health pass's explanation names the MCP call; at the terminal it names the command."""
    monkeypatch.setenv("LEDGER_POLICY_REVIEW_AGENT_CONFLICTS", "true")
    monkeypatch.setenv("LEDGER_POLICY_SETTLE_CHANGES", "false")
    for port in ("8080", "9090"):
        said = cli(db_path, "remember", f"The staging API listens on port {port}", "--source-type", "agent_generated")
        assert said.exit_code == 0, said.output
    report = cli(db_path, "health")
    assert report.exit_code == 0 and "the rules favour #2" in report.output
    assert "(ledger resolve 3 --winner ID, or --keep-all)" in report.output and "resolve_conflict" not in report.output


def test_read_of_a_working_note_says_what_it_is(db_path: Path) -> None:
    """The human ``read`` of a note showed no tier, conversation, score or promotion."""
    said = cli(db_path, "--json", "remember", "Trying port 8081", "--tier", "working", "--session", "s1", "--turn", "1")
    note = json.loads(said.output)["memory_id"]
    assert cli(db_path, "reinforce", str(note), "tool_succeeded", "--session", "s1", "--turn", "2").exit_code == 0
    shown = cli(db_path, "read", str(note)).output
    assert "working note of conversation s1; score 2 (last turn 2)" in shown
    promoted = json.loads(cli(db_path, "--json", "promote", str(note)).output)["promoted_to"]
    assert f"promoted to #{promoted}" in cli(db_path, "read", str(note)).output


def test_an_as_of_answer_says_which_point_answered(db_path: Path) -> None:
    """The point was in ``--json`` only: a person read a past answer as the present one. A negative
    position was refused as "not an ISO 8601 timestamp"."""
    cli(db_path, "remember", "The staging API listens on port 8080", "--event-time", "2024-01-01T00:00:00Z")
    cli(db_path, "update", "1", "The staging API listens on port 9090")
    out = cli(db_path, "find", "staging", "--as-of-event-time", "2024-03-01T00:00:00Z", "--as-of-recorded", "1").stdout
    assert out.splitlines()[0] == "as of: true at 2024-03-01T00:00:00.000000Z, as the ledger knew it at position 1"
    assert "port 8080" in out
    out = cli(db_path, "read", "1", "--as-of-recorded", "1").stdout
    assert out.splitlines()[0] == "as of: as the ledger knew it at position 1"
    assert "as of:" not in cli(db_path, "find", "staging").stdout
    refused = cli(db_path, "find", "staging", "--as-of-recorded", "-1")
    assert refused.exit_code == 1 and "a position must be >= 0" in refused.output  # invalid input, as -1 as a number is
    refused = cli(db_path, "find", "staging", "--as-of-recorded", "2.0")  # was "not an ISO 8601 timestamp"
    assert (
        refused.exit_code == 1
        and "--as-of-recorded is a log position (a whole number >= 0) or an ISO 8601" in refused.output
    )


def test_a_timeline_with_nothing_to_show_says_so(db_path: Path) -> None:
    """``timeline --subject Bob`` printed nothing at all (exit 0) when no memory was stored under
    that subject: a person could not tell an empty answer from a command that did nothing."""
    cli(db_path, "remember", "Bob's manager is Carol")
    out = cli(db_path, "timeline", "--subject", "Bob").stdout
    assert out.startswith("no intervals for the subject 'Bob'") and "--subject" in out


def test_a_chinese_claim_reads_its_relation_in_chinese(db_path: Path) -> None:
    """ "预发环境端口 is: '9090'": the bare relation of a Chinese claim printed in English."""
    cli(db_path, "remember", "预发环境端口是8080", "--source-type", "agent_generated")
    out = cli(db_path, "remember", "预发环境端口是9090", "--source-type", "agent_generated").stdout
    assert "预发环境端口 是: #2 says '9090'" in out and " is:" not in out
    listed = cli(db_path, "conflicts").stdout
    assert "预发环境端口 是:" in listed


def test_history_says_what_each_version_changed_beside_its_text(db_path: Path) -> None:
    """An update of the event time alone showed two versions that read the same."""
    cli(db_path, "remember", "The standup is at 10am", "--event-time", "2026-11-01T09:00:00Z")
    cli(db_path, "update", "1", "--event-time", "2026-11-02T09:00:00Z")
    cli(db_path, "update", "1", "--subject", "standup", "--tag", "team")
    out = cli(db_path, "history", "1").stdout.splitlines()
    assert out[2] == "  event time 2026-11-01T09:00:00.000000Z"
    assert out[5] == "  event time 2026-11-01T09:00:00.000000Z → 2026-11-02T09:00:00.000000Z"
    assert out[8] == "  subject (none) → standup; tags (none) → team"
    assert len(out) == 9
    # a later page says what its first version changed too (it said when it was true instead)
    first = json.loads(cli(db_path, "--json", "history", "1", "--limit", "2").stdout)
    later = cli(db_path, "history", "1", "--limit", "2", "--cursor", first["next_cursor"]).stdout.splitlines()
    assert later[0].startswith("v3 ") and later[2] == "  subject (none) → standup; tags (none) → team"
    page = json.loads(cli(db_path, "--json", "history", "1", "--limit", "2", "--cursor", first["next_cursor"]).stdout)
    assert page["versions"][0]["changed_from"] == {"subject": "", "tags": []}
    assert "changed_from" not in first["versions"][0]


def test_audit_names_the_memory_each_event_is_about(db_path: Path) -> None:
    """ "MemoryRetired  reason: moved": a person could not tell what was retired."""
    cli(db_path, "remember", "Bob's desk is on floor 3")
    cli(db_path, "retire", "1", "--reason", "moved")
    lines = cli(db_path, "audit", "--limit", "2").stdout.splitlines()
    assert " MemoryRetired #1 (event time " in lines[0] and " MemoryRecorded #1 (event time " in lines[2]


def test_a_write_that_joins_a_set_counts_its_members_not_values(db_path: Path) -> None:
    """ "conflict 3 (3 values)" for three members holding two values: it counted members."""
    for port in (8080, 9090, 8080):
        out = cli(db_path, "remember", f"The staging API listens on port {port}", "--source-type", "agent_generated")
    assert "(3 members)" in out.stdout and "values)" not in out.stdout


def test_brackets_in_what_a_person_wrote_are_printed_as_written(db_path: Path) -> None:
    """A subject "svc[/]" was read as rich markup: a traceback (exit 1) after the write had been
    stored, in remember, conflicts, conflict, health, read, review and alias; "[red]music[/red]"
    lost its brackets."""
    subject, colour = "svc[/]", "x [red]music[/red] y"
    for port in ("8080", "9090"):
        done = cli(
            db_path, "remember", f"The API port is {port}", "--subject", subject, "--source-type", "agent_generated"
        )
        assert done.exit_code == 0, done.output
    assert subject in done.stdout  # the set the second write opened names its subject
    done = cli(db_path, "remember", colour, "--subject", "[bold]", "--workspace", "ops[/]")
    assert done.exit_code == 0 and 'in workspace "ops[/]"' in done.stdout, done.output
    conflict = json.loads(cli(db_path, "--json", "conflicts").stdout)["conflicts"][0]["conflict_id"]
    for args in (
        ("conflicts",),
        ("conflict", str(conflict)),
        ("health",),
        ("read", "1"),
        ("review",),
        ("history", "1"),
        ("audit", "--limit", "3"),
        ("find", "music", "--workspace", "ops[/]"),
    ):
        shown = cli(db_path, *args)
        assert shown.exit_code in (0, 1) and isinstance(shown.exception, SystemExit | None), args
        assert "Traceback" not in shown.output and "MarkupError" not in shown.output, (args, shown.output)
    assert subject in cli(db_path, "read", "1").stdout
    found = cli(db_path, "find", "music", "--workspace", "ops[/]").stdout
    assert colour in found and "[bold]" in found
    assert "ops[/] 1" in cli(db_path, "review").stdout
    aliased = cli(db_path, "alias", "Bo[/]b", "Robert")
    assert aliased.exit_code == 0 and "Bo[/]b is now an alias of Robert" in aliased.stdout


def test_a_masked_write_says_what_was_masked_never_the_secret(db_path: Path) -> None:
    """``remember … --on-secret mask`` printed only "remembered #1": the stored text differed from
    what the person typed and only --json said so (secrets_masked)."""
    out = cli(db_path, "remember", "postgres://app:hunter2x@db:5432/main", "--on-secret", "mask").stdout
    assert out.splitlines() == [
        'remembered #1 in the default workspace ("")',
        "  masked 1 credential: connection-password in content (characters 15–23), "
        "stored as [secret:connection-password]",
    ]
    token = "ghp_" + "a1B2c3D4e5" * 4
    out = cli(db_path, "update", "1", f"CI token {token}, db postgres://a:pw12345678@h/x", "--on-secret", "mask").stdout
    assert out.splitlines()[0] == "updated #1 to v2"
    assert out.splitlines()[1].startswith("  masked 2 credentials: github-token in content (characters 9–")
    assert "hunter2x" not in out and token not in out and "pw12345678" not in out
    plain = cli(db_path, "remember", "The staging API listens on port 8080").stdout
    assert "masked" not in plain  # nothing found: nothing said


def test_arbitrate_names_the_conflict_it_marked(db_path: Path) -> None:
    """``--mark-conflict`` printed the verdict only: the conflict id was in ``--json`` alone."""
    cli(db_path, "remember", "the cache is redis", "--subject", "cache")
    cli(db_path, "remember", "the cache uses memcached now", "--subject", "cache")
    doc = json.loads(cli(db_path, "--json", "arbitrate", "1", "2", "--mark-conflict").stdout)
    out = cli(db_path, "arbitrate", "1", "2", "--mark-conflict").stdout.splitlines()
    assert f"conflict {doc['conflict_id']} holds the pair (ledger conflict {doc['conflict_id']})" in out


def test_a_repeated_confirm_or_unlock_says_unchanged(db_path: Path) -> None:
    cli(db_path, "remember", "the vpn is up", "--source-type", "agent_generated")
    for command in ("confirm", "unlock"):
        first, again = (cli(db_path, command, "1").stdout.strip() for _ in range(2))
        assert not first.endswith("unchanged") and again.endswith(" — unchanged"), (first, again)


def test_a_refusal_names_the_options_a_person_gives_not_the_mcp_fields(db_path: Path) -> None:
    """``pass on_secret: "mask"``, ``needs session_id``: a person at the terminal types
    ``--on-secret mask`` and ``--session``. ``--json`` keeps the service's words."""
    cli(db_path, "remember", "the vpn is up")
    secret = cli(db_path, "remember", "the aws key is AKIAIOSFODNN7EXAMPLE")
    assert "or pass --on-secret mask to store it as [secret:aws-access-key]" in secret.stderr, secret.stderr
    expected = {
        ("--tier", "working"): "a working memory needs --session (the conversation it belongs to)",
        ("--sticky",): "--sticky applies to the working tier (--tier working)",
        ("--tier", "working", "--session", "s", "--retracts", "1"): "--retracts is a long-term act",
    }
    for options, words in expected.items():
        refused = cli(db_path, "remember", "maybe use redis", *options)
        assert refused.exit_code == 1 and words in refused.stderr, (options, refused.stderr)
        assert "_id" not in refused.stderr and ': "' not in refused.stderr
    assert "--session-only needs --session" in cli(db_path, "find", "vpn", "--session-only").stderr
    # a positional argument by the name the usage line gives it
    assert "LEFT_ID and RIGHT_ID are the same memory" in cli(db_path, "arbitrate", "1", "1").stderr
    assert "or MEMORY_ID" in cli(db_path, "timeline").stderr
    as_json = json.loads(cli(db_path, "--json", "remember", "x", "--sticky").stdout)
    assert as_json["error"]["message"] == 'sticky applies to the working tier (tier: "working")'


def test_migrate_given_both_targets_says_so(db_path: Path, tmp_path: Path) -> None:
    """``--seal --to copy.db`` answered ``give --to URL … or --seal``, as if neither were given."""
    cli(db_path, "remember", "the vpn is up")
    both = cli(db_path, "migrate", "--seal", "--to", f"sqlite:///{tmp_path / 'copy.db'}")
    assert both.exit_code == 64 and "not both" in both.stderr
    neither = cli(db_path, "migrate")
    assert neither.exit_code == 64 and "not both" not in neither.stderr and "give --to URL" in neither.stderr


def test_brackets_and_backslashes_in_values_shown_as_json_or_quoted(db_path: Path) -> None:
    """A tag or metadata value "[/]" was a traceback in audit (json.dumps of an escaped text made
    the tag again); a claim value "carol[/]" was one in remember, after the write; a text ending
    in a backslash printed two."""
    assert cli(db_path, "remember", "plain", "--tag", "[/]").exit_code == 0
    assert cli(db_path, "remember", "plain two", "--metadata", '{"k": "[/]"}').exit_code == 0
    shown = cli(db_path, "audit", "--limit", "2")
    assert shown.exit_code == 0 and 'tags: ["[/]"]' in shown.stdout and 'metadata: {"k": "[/]"}' in shown.stdout
    cli(db_path, "remember", "The api owner is alice", "--subject", "api")
    later = cli(db_path, "remember", "The api owner is carol[/]", "--subject", "api")
    assert later.exit_code == 0 and "'carol[/]'" in later.stdout, later.output
    cli(db_path, "remember", "ends with a backslash\\")
    assert "  ends with a backslash\\\n" in cli(db_path, "find", "backslash").stdout


def test_a_masked_credential_s_field_is_named_as_written(db_path: Path) -> None:
    """The fields came escaped for rich and were escaped again: a metadata key "a[b]" read "a\\[b]"."""
    done = cli(
        db_path, "remember", "a note", "--on-secret", "mask", "--metadata", '{"a[b]": {"password": "zz9' + 'Secret"}}'
    )
    assert done.exit_code == 0 and "password in metadata.a[b].password (characters 0–9)" in done.stdout, done.stdout
    assert "stored as [secret:password]" in done.stdout


def test_promote_says_what_the_long_term_write_retracted(db_path: Path) -> None:
    """``promote`` printed only the promotion; the note's denial had retired #1 (``--json``:
    ``retracted``), which ``remember`` says at once."""
    cli(db_path, "remember", "Alice is the owner of the billing service")
    cli(
        db_path,
        "remember",
        "Alice is no longer the owner of the billing service",
        "--tier",
        "working",
        "--session",
        "s",
        "--turn",
        "1",
    )
    out = cli(db_path, "promote", "2").output
    assert "promoted to long-term #3" in out and "retracted #1" in out


def test_apply_of_a_set_a_person_decides_says_why_in_the_command_lines_words(db_path: Path) -> None:
    """The refusal said "no rule decides; use resolve_conflict" where the report said #2 leads
    but #1 states other facts too, and health's human lines dropped that leader."""
    notes = "Notes from sync: staging API listens on port 8080. Standup is at 10am. Billing owner is Alice."
    cli(db_path, "remember", notes, "--source-type", "agent_generated")
    cli(db_path, "remember", "The staging API listens on port 9090", "--source-type", "agent_generated")
    report = json.loads(cli(db_path, "--json", "health").stdout)["clusters"][0]
    assert report["leader_id"] == 2 and report["suggestion"]["kind"] == "needs_person"
    assert "9090  (#2; agent_generated) ← leader" in cli(db_path, "health").output
    refused = cli(db_path, "apply", report["suggestion"]["suggestion_id"])
    assert refused.exit_code != 0
    assert "#1 states other facts too" in refused.stderr and "no rule decides" not in refused.stderr
    assert "ledger resolve 3 --winner ID, or --keep-all" in refused.stderr and "resolve_conflict" not in refused.stderr


def test_a_conflict_line_says_whose_value_it_shows(db_path: Path) -> None:
    """'budget is: '65000 eur' → #1 leads' put the newcomer's value beside another leader."""
    cli(db_path, "remember", "The budget is 50000 EUR", "--subject", "budget")
    out = cli(
        db_path,
        "remember",
        "The budget is 65000 EUR",
        "--subject",
        "budget",
        "--source-type",
        "agent_generated",
        "--event-time",
        "2025-01-01T00:00:00Z",
    ).output
    assert "#2 says '65000 eur' → #1 leads" in out


def test_promote_of_a_value_that_arrived_late_says_so(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It printed "supersedes #3" of the promoted memory itself, superseded on arrival, and the
    notice named the conflict "(#4)" as if it were a memory."""
    monkeypatch.setenv("LEDGER_POLICY_SETTLE_CHANGES", "true")  # the shipped default
    note = ("--tier", "working", "--session", "s1", "--event-time", "2024-01-01T00:00:00Z")
    cli(db_path, "remember", "The deploy region is us-east", "--source-type", "agent_generated", *note)
    later = ("--event-time", "2024-06-01T00:00:00Z", "--source-type", "agent_generated")
    cli(db_path, "remember", "The deploy region is eu-west", *later)
    out = cli(db_path, "promote", "1").output
    assert "arrived late: superseded on arrival by #2" in out and "supersedes #3" not in out
    assert "as a later value leads (conflict #4)" in out


def test_turn_without_session_is_a_usage_error_naming_both_options(db_path: Path) -> None:
    """``--turn`` without ``--session`` was dropped without a word (``remember … --turn 3`` stored
    no turn, ``read`` showed none). It names no conversation: a usage error (exit 64) naming both
    options, nothing written. A working note's revision still takes ``--turn`` alone (the note
    has its conversation)."""
    said = "--turn needs --session (the conversation the turn belongs to)"
    kept = json.loads(cli(db_path, "--json", "remember", "The deploy window is Tuesday").stdout)["memory_id"]
    for args in (
        ("remember", "The deploy window is Friday", "--turn", "3"),
        ("update", str(kept), "The deploy window is Monday", "--turn", "3"),
        ("find", "deploy", "--turn", "3"),
        ("read", str(kept), "--turn", "3"),
    ):
        r = cli(db_path, *args)
        assert r.exit_code == 64 and said in r.stderr and "Usage: " in r.stderr, (args, r.output)
        doc = json.loads(cli(db_path, "--json", *args).stdout)
        assert doc["error"]["reason"] == "usage" and doc["error"]["message"] == said, args
    assert [r["content"] for r in json.loads(cli(db_path, "--json", "find", "deploy").stdout)["results"]] == [
        "The deploy window is Tuesday"
    ]  # nothing written
    with_session = cli(db_path, "remember", "The deploy window is Friday", "--session", "s1", "--turn", "3")
    assert with_session.exit_code == 0 and with_session.stdout.startswith("remembered #")
    note = json.loads(
        cli(
            db_path, "--json", "remember", "Trying port 8081", "--tier", "working", "--session", "s1", "--turn", "4"
        ).stdout
    )["memory_id"]
    revised = cli(db_path, "update", str(note), "Trying port 8082", "--turn", "5")
    assert revised.exit_code == 0 and revised.stdout == f"updated #{note} to v2\n", revised.output


def test_audit_type_lists_only_the_types_the_log_writes(db_path: Path) -> None:
    """``ledger audit --type X`` with an unknown type listed ``MemoryRemembered`` and
    ``MemoryConfirmed``, names nothing writes any more: only written types are listed now (with
    the near miss), and an old name still filters the rows stored under it and its new name."""
    cli(db_path, "remember", "The office is in Boston")
    wrong = cli(db_path, "audit", "--type", "Supersede")
    assert wrong.exit_code == 1 and wrong.stdout == ""
    said = " ".join(wrong.stderr.split())
    assert said.startswith(
        "error (invalid_input): --type: 'Supersede' is not an event type; the log writes MemoryRecorded,"
    )
    assert said.endswith("(did you mean 'Superseded'?)") and "WriteReplayed" in said
    assert "MemoryRemembered" not in said and "MemoryConfirmed" not in said
    old = cli(db_path, "audit", "--type", "MemoryRemembered")
    assert old.exit_code == 0 and " MemoryRecorded #1 " in old.stdout


def test_erasing_a_memory_promoted_from_a_note_erases_the_note(db_path: Path) -> None:
    """Erasing the long-term memory cleared the note's words, yet the note read "promoted"; a
    later erase of the note wrote an Erased event naming no row. The note reads erased, and a
    second erase is refused as a long-term memory's is."""
    said = cli(db_path, "--json", "remember", "Rex's gate code is 5521", "--tier", "working", "--session", "s1")
    note = json.loads(said.output)["memory_id"]
    promoted = json.loads(cli(db_path, "--json", "promote", str(note)).output)["promoted_to"]
    erased = cli(db_path, "erase", str(promoted), "--reason", "asked")
    assert erased.exit_code == 0, erased.output
    assert f"#{promoted}" in erased.output and f"#{note}" in erased.output
    shown = cli(db_path, "read", str(note)).output
    # the erasure is the note's second version, as a long-term memory's erasure is its last
    assert shown.splitlines()[0] == f"#{note} v2 user_confirmed (erased)" and "5521" not in shown, shown
    assert "Erased" in cli(db_path, "history", str(note)).output
    again = cli(db_path, "erase", str(note), "--reason", "asked")
    assert again.exit_code == 1 and f"memory {note} is erased already" in again.output, again.output
    assert cli(db_path, "erase", str(promoted), "--reason", "asked").exit_code == 1
    assert json.loads(cli(db_path, "--json", "verify").output)["chain"] == "intact"


def test_erasing_a_workspace_erases_what_its_aliases_hold_with_the_notes_promoted_there(db_path: Path) -> None:
    """``erase --workspace proja`` said "erased #4" and left the note written as "proj-a" (an
    alias of it) and the memory promoted from it: read, and found in "proja"."""
    said = cli(db_path, "--json", "remember", "Rex's gate code is 5521")
    assert said.exit_code == 0, said.output  # the default workspace's memory stays
    args = ("--tier", "working", "--session", "s1", "--workspace", "proj-a")
    note = json.loads(cli(db_path, "--json", "remember", "Tom's alarm code is 7733", *args).output)["memory_id"]
    promoted = json.loads(cli(db_path, "--json", "promote", str(note)).output)["promoted_to"]
    own = json.loads(cli(db_path, "--json", "remember", "Ivo lives in Quito", "--workspace", "proja").output)
    app = LedgerApp(Settings(db=str(db_path)))
    app.accept_alias("proj-a", "proja", authorization=AUTH_USER)
    app.close()
    erased = cli(db_path, "erase", "--workspace", "proja", "--reason", "closed")
    assert erased.exit_code == 0, erased.output
    assert erased.output.startswith(f"erased #{note}, #{promoted}, #{own['memory_id']} (3 rows cleared)"), erased.output
    assert cli(db_path, "read", str(note)).output.splitlines()[0] == f"#{note} v2 user_confirmed (erased)"
    assert "7733" not in cli(db_path, "read", str(promoted)).output
    assert cli(db_path, "find", "Tom alarm", "--workspace", "proja").output.startswith("no memories found")
    assert "5521" in cli(db_path, "find", "Rex gate").output


def test_erasing_a_workspace_erases_the_memory_promoted_elsewhere_from_its_note(tmp_path: Path) -> None:
    """A note whose memory is held in another workspace (a log written elsewhere): ``--json``
    named the note alone and the memory stayed readable; now both, in the answer and receipt."""
    db = tmp_path / "l.db"
    note, memory = promoted_across(db, note_in="notes", memory_in="proj")
    out = cli(db, "--json", "erase", "--workspace", "notes", "--reason", "asked")
    assert out.exit_code == 0, out.output
    answer = json.loads(out.output)
    assert answer["erased"] == [note, memory]
    assert [e["memory_id"] for e in answer["receipt"]["erasures"]] == [note, memory]
    assert json.loads(cli(db, "--json", "read", str(memory)).output)["memory"]["status"] == "erased"


def test_whatif_reads_rule_names_typed_in_capitals(db_path: Path) -> None:
    """``--rules Protection,Source_Type,…`` was "unknown rule 'Protection'" (undo takes a change id
    in capitals, as a person types it)."""
    for port, source, when in (("7201", "document_extracted", "2026-01-01"), ("7202", "agent_generated", "2026-02-01")):
        args = ["--subject", "mizar", "--source-type", source, "--event-time", when]
        said = cli(db_path, "remember", f"The mizar port is {port}", *args)
        assert said.exit_code == 0, said.output
    out = cli(db_path, "whatif", "--rules", "Protection,SOURCE_TYPE,Event_Time,confidence,Ingest_Time")
    assert out.exit_code == 0, out.output
    assert out.output.startswith("rule order: user_confirmed/locked protection, source_type, event_time"), out.output
    assert "mizar · port: leader #2 by event_time → #1 by source_type" in out.output, out.output


def test_an_erasure_in_audit_says_which_memory_and_how_many_rows(db_path: Path) -> None:
    """An ``Erased`` event printed ``rows: [{"position": 1, "event_id": "01a2…", "seal": "f…`` cut
    at 80 characters: event UUIDs and digests a person cannot read, never how many rows were
    cleared. ``--json`` keeps every row as it was."""
    cli(db_path, "remember", "the staging port is 8080")
    cli(db_path, "update", "1", "the staging port is 9090")
    cli(db_path, "remember", "the build server is ci-3")
    assert cli(db_path, "erase", "1", "--reason", "asked").exit_code == 0
    assert cli(db_path, "erase", "3").exit_code == 0
    lines = cli(db_path, "audit", "--type", "Erased").stdout.splitlines()
    assert lines[1] == "  erased #3: 1 row cleared (position 3) · authorization: user_channel", lines
    assert lines[3] == "  erased #1: 2 rows cleared (positions 1, 2) · reason: asked · authorization: user_channel"
    assert "event_id" not in "\n".join(lines) and "seal" not in "\n".join(lines)
    events = json.loads(cli(db_path, "--json", "audit", "--type", "Erased").stdout)["events"]
    rows = events[1]["payload"]["rows"]
    assert [r["position"] for r in rows] == [1, 2] and all(set(r) == {"position", "event_id", "seal"} for r in rows)
