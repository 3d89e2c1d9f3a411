"""An operation is declared once, in its edge model: ``help``'s field lines and the CLI options of
``remember`` are generated from it, and ``remember``'s fields pass through the facade and the
service to the command, each one a rule does not read recorded on the event as given."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from pydantic import Field

from fact_ledger.ledger.decide import RememberCommand, decide_remember
from fact_ledger.ledger.log.events import MemoryRecorded
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.writes import Writes
from fact_ledger.server.cli.main import main
from fact_ledger.server.cli.model_options import ModelOption, model_options
from fact_ledger.server.config import Settings
from fact_ledger.server.mcp.routes import TOOLS
from fact_ledger.server.schemas.describe import field_line
from fact_ledger.server.schemas.memory import RememberData

T = "2025-01-01T00:00:00Z"


class WithWhy(RememberData):
    """A field added to ``remember``'s model, as a change would add one."""

    why: str = Field("", description="what made it worth keeping")


@pytest.mark.parametrize(
    ("tool", "name"), [(t, n) for t, spec in TOOLS.items() for n in spec.routes], ids=lambda v: str(v)
)
def test_help_names_every_field_of_the_model(tool: str, name: str) -> None:
    route = TOOLS[tool].routes[name]
    line = route.fields
    for field in route.model.model_fields:
        assert field in line, (tool, name, field)
    required = {n for n, f in route.model.model_fields.items() if f.is_required()}
    assert {w.split("*")[0].split("[")[0] for w in line.split(", ") if "*" in w.split(" ")[0]} >= required


def test_a_field_added_to_the_model_is_in_help_with_its_description() -> None:
    line = field_line(WithWhy)
    assert "why (what made it worth keeping)" in line
    assert line.startswith("content*, subject (what the memory is about)")
    assert "confidence 0..1" in line and "event_time ISO" in line
    assert "source_type (user_confirmed|document_extracted|agent_generated|unknown; agent_generated)" in line
    assert "claims[{subject,attribute,value}]" in line and "metadata{}" in line
    assert field_line(WithWhy, governed=True).endswith("authorized*")


def test_a_field_added_to_the_model_is_a_cli_option_passed_to_the_model() -> None:
    seen: dict[str, Any] = {}

    @click.command()
    @model_options(WithWhy, skip=("content", "tags", "claims", "metadata", "authorized"))
    def cmd(**fields: Any) -> None:
        seen.update(WithWhy.parse({"content": "x", **fields}).to_kwargs())

    result = CliRunner().invoke(cmd, ["--why", "the user asked", "--confidence", "0.5", "--tier", "working"])
    assert result.exit_code == 0, result.output
    assert seen["why"] == "the user asked" and seen["confidence"] == 0.5 and seen["tier"] == "working"
    refused = CliRunner().invoke(cmd, ["--confidence", "2"])  # the model's bound, as click's range
    assert refused.exit_code == 2 and "0.0<=x<=1.0" in refused.output
    assert "What made it worth keeping." in CliRunner().invoke(cmd, ["--help"]).output


def test_remember_s_generated_options_are_its_model_fields() -> None:
    generated = [p for p in main.commands["remember"].params if isinstance(p, ModelOption)]
    assert {p.field for p in generated} >= {"subject", "confidence", "event_time", "turn", "tier", "sticky"}
    assert {p.field for p in generated} <= set(RememberData.model_fields)


def test_every_field_of_remember_reaches_the_command_or_the_event() -> None:
    """Nothing validated at the edge is dropped on the way: each field is taken by the facade or
    the service by name, or is the command's, or is recorded on ``MemoryRecorded``."""
    by_name = set(inspect.signature(LedgerApp.remember).parameters) | set(inspect.signature(Writes.remember).parameters)
    carried = by_name | set(RememberCommand.__struct_fields__) | set(MemoryRecorded.__struct_fields__)
    assert set(RememberData.model_fields) - {"authorized"} <= carried


def test_a_field_no_rule_reads_is_recorded_as_given() -> None:
    cmd = RememberCommand.of({"content": "the vpn is up", "promoted_from": "s-1"}, event_time=T)
    assert cmd.recorded == {"promoted_from": "s-1"}
    [(_, event), *_] = decide_remember(cmd, new_stream="stream-1", duplicate=None, target=None)
    assert isinstance(event, MemoryRecorded) and event.promoted_from == "s-1"


def test_a_field_the_event_cannot_hold_is_a_mistake_in_the_code() -> None:
    with pytest.raises(TypeError, match="no place on MemoryRecorded: bogus"):
        RememberCommand.of({"content": "x", "bogus": 1}, event_time=T)


def test_a_direct_caller_s_misspelt_field_is_not_dropped(tmp_path: Path) -> None:
    app = LedgerApp(Settings(db=str(tmp_path / "d.db"), client="test"))
    try:
        with pytest.raises(TypeError, match="subjet"):
            app.remember("the vpn is up", subjet="vpn")
        assert app.status()["events"] == 0
    finally:
        app.close()


def test_the_facade_names_a_service_s_method_without_writing_it_again(tmp_path: Path) -> None:
    from fact_ledger.server.app.governance import Governance
    from fact_ledger.server.app.service_method import ServiceMethod

    assert LedgerApp.confirm is Governance.confirm  # one signature, on the service
    app = LedgerApp(Settings(db=str(tmp_path / "s.db"), client="test"))
    try:
        assert app.confirm.__self__ is app.governance  # type: ignore[attr-defined]
        assert app.conflicts()["ok"]  # the facade's defaults now live on the service
    finally:
        app.close()
    with pytest.raises(TypeError, match=r"LedgerApp\.approve would answer Governance\.confirm: name them alike"):
        ServiceMethod("governance", Governance.confirm).__set_name__(LedgerApp, "approve")


def test_a_storage_called_service_method_answers_unavailable_when_degraded(tmp_path: Path) -> None:
    from fact_ledger.ledger.errors import Unavailable

    (tmp_path / "bad.db").write_bytes(b"not a database" * 100)
    app = LedgerApp(Settings(db=str(tmp_path / "bad.db"), backup=str(tmp_path / "b.jsonl"), client="test"))
    try:
        assert app.degraded is not None
        for call in (app.workspaces, app.audit, lambda: app.timeline("vpn")):
            with pytest.raises(Unavailable):
                call()
    finally:
        app.close()


def test_find_s_filters_reach_the_terminal_from_the_declaration(tmp_path: Path) -> None:
    """``ledger find`` gains every filter of the tool's ``find`` (source, workspace, times, tags),
    each filtering as it does for an agent, in the human form a person reads."""
    from tests.conftest import ledger_cli

    db = str(tmp_path / "f.db")
    assert ledger_cli("init", "--db", db).returncode == 0
    ledger_cli("remember", "Deploys freeze on Fridays", "--tag", "ops", "--db", db, check=True)
    ledger_cli("remember", "Deploys need two approvals", "--source-type", "document_extracted", "--db", db, check=True)
    tagged = ledger_cli("find", "deploys", "--tag", "ops", "--db", db)
    assert tagged.returncode == 0 and "Fridays" in tagged.stdout and "approvals" not in tagged.stdout
    sourced = ledger_cli("find", "deploys", "--source-type", "document_extracted", "--db", db)
    assert "approvals" in sourced.stdout and "Fridays" not in sourced.stdout
    before = ledger_cli("find", "deploys", "--before-time", "2000-01-01", "--db", db)
    assert before.returncode == 0 and before.stdout.strip() == "no memories found"
    bad = ledger_cli("find", "deploys", "--after-time", "next tuesday", "--db", db)
    assert bad.returncode == 1 and "--after-time" in bad.stderr and "Traceback" not in bad.stderr  # the option
