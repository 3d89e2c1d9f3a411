"""Edge validation (docs/contract.md "Limits"): every limit, typo suggestions, refusals, ignored fields."""

from __future__ import annotations

from typing import Any

import pytest

from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.server.mcp.routes import TOOLS
from fact_ledger.server.schemas import admin as a
from fact_ledger.server.schemas import memory as s


def refused(model: type[s.EdgeModel], data: Any) -> InvalidInput:
    with pytest.raises(InvalidInput) as info:
        model.parse(data)
    return info.value


MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"content": "x" * (2 * MIB + 1)}, "content"),
        ({"content": "é" * (MIB + 1)}, "content"),  # 2 MiB + 2 bytes of UTF-8, only ~1M characters
        ({"content": "   "}, "content"),
        ({"content": ""}, "content"),
        ({"content": "ok", "subject": "s" * 2001}, "subject"),
        ({"content": "ok", "tags": ["t"] * 101}, "tags"),
        ({"content": "ok", "tags": ["t" * 257]}, "tags.0"),
        ({"content": "ok", "tags": [""]}, "tags.0"),
        ({"content": "ok", "tags": "infra"}, "tags"),
        ({"content": "ok", "metadata": {"blob": "m" * (256 * 1024)}}, "metadata"),
        ({"content": "ok", "metadata": {"x": float("nan")}}, "metadata"),
        ({"content": "ok", "metadata": {"x": float("inf")}}, "metadata"),
        ({"content": "ok", "confidence": float("nan")}, "confidence"),
        ({"content": "ok", "confidence": float("inf")}, "confidence"),
        ({"content": "ok", "confidence": "NaN"}, "confidence"),
        ({"content": "ok", "confidence": 1.01}, "confidence"),
        ({"content": "ok", "confidence": -0.1}, "confidence"),
        ({"content": "ok", "confidence": True}, "confidence"),
        ({"content": "ok", "source_type": "trusted"}, "source_type"),
        ({"content": "ok", "event_time": "yesterday"}, "event_time"),
        ({"content": "ok", "event_time": "2024-13-01"}, "event_time"),
        ({"content": "ok", "event_time": 1700000000}, "event_time"),
        ({"content": "ok", "ref_id": True}, "ref_id"),
        ({"content": "ok", "ref_id": 0}, "ref_id"),
        ({"content": "ok", "ref_id": "12"}, "ref_id"),
        ({"content": "ok", "ref_id": 1.5}, "ref_id"),
        ({"content": "ok", "retracts": "yes"}, "retracts"),
        ({"content": "ok", "claims": [{"subject": "a", "attribute": "b", "value": "c", "extra": 1}]}, "claims.0.extra"),
        ({"content": "bad \ud800 surrogate"}, "content"),
    ],
)
def test_remember_limits_are_refused_with_the_field(data: dict[str, Any], field: str) -> None:
    err = refused(s.RememberData, data)
    assert err.code == "invalid_input"
    assert err.field == field


def test_values_exactly_at_the_limits_pass() -> None:
    model = s.RememberData.parse(
        {
            "content": "x" * (2 * MIB),
            "subject": "s" * 2000,
            "tags": [f"{i:0>256}" for i in range(100)],
            "metadata": {"blob": "m" * (256 * 1024 - 20)},
            "confidence": 1,
            "ref_id": 2**63 - 1,
        }
    )
    assert len(model.content) == 2 * MIB and len(model.tags) == 100
    assert s.FindData.parse({"query": "q" * 32000, "limit": 50}).limit == 50


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"query": "q" * 32001}, "query"),
        ({"limit": 0}, "limit"),
        ({"limit": 51}, "limit"),
        ({"limit": "5"}, "limit"),
        ({"limit": True}, "limit"),
        ({"source_type": "USER"}, "source_type"),
        ({"after_time": "not a time"}, "after_time"),
        ({"as_of_recorded": -1}, "as_of_recorded"),
        ({"as_of_recorded": "last tuesday"}, "as_of_recorded"),
        ({"include_inactive": 1}, "include_inactive"),
    ],
)
def test_find_limits(data: dict[str, Any], field: str) -> None:
    assert refused(s.FindData, data).field == field


@pytest.mark.parametrize(
    ("model", "typo", "known"),
    [
        (s.RememberData, "sorce_type", "source_type"),
        (s.RememberData, "contnet", "content"),
        (s.RememberData, "tag", "tags"),
        (s.RememberData, "Subject", "subject"),
        (s.FindData, "querry", "query"),
        (s.FindData, "tag_filter", "tags_filter"),
        (s.UpdateData, "expected_versoin", "expected_version"),
        (a.RetireData, "authorised", "authorized"),
    ],
)
def test_a_misspelt_known_field_is_refused_with_did_you_mean(model: type[s.EdgeModel], typo: str, known: str) -> None:
    data = {"content": "ok", "memory_id": 1, typo: "x"}
    err = refused(model, data)
    assert err.details["did_you_mean"] == known
    assert err.field == typo
    assert err.to_dict()["did_you_mean"] == known


def test_harmless_unknown_fields_are_ignored_and_listed() -> None:
    model = s.RememberData.parse({"content": "ok", "mood": "happy", "x_trace": 1})
    assert model.ignored == ["mood", "x_trace"]
    assert "mood" not in model.to_kwargs()
    assert s.RememberData.parse({"content": "ok"}).ignored == []


def test_null_means_absent_and_data_must_be_an_object() -> None:
    assert s.RememberData.parse({"content": "ok", "subject": None}).subject == ""
    assert s.Empty.parse(None).to_kwargs() == {}
    assert refused(s.RememberData, ["content"]).field == "data"
    assert refused(s.RememberData, {}).field == "content"


def test_timestamps_are_canonicalised() -> None:
    model = s.RememberData.parse({"content": "ok", "event_time": "2024-03-01T10:00:00+02:00"})
    assert model.event_time == "2024-03-01T08:00:00.000000Z"
    assert s.FindData.parse({"as_of_recorded": "42"}).as_of_recorded == 42
    assert s.FindData.parse({"as_of_recorded": "2024-03-01"}).as_of_recorded == "2024-03-01T00:00:00.000000Z"


@pytest.mark.parametrize(
    ("model", "data", "field"),
    [
        (s.ReadData, {"memory_id": True}, "memory_id"),
        (s.ReadData, {"memory_id": False}, "memory_id"),
        (s.ReadData, {"memory_id": -3}, "memory_id"),
        (s.ReadData, {"memory_id": 2**63}, "memory_id"),
        (s.ReadData, {}, "memory_id"),
        (s.UpdateData, {"memory_id": 1, "expected_version": True}, "expected_version"),
        (s.UpdateData, {"memory_id": 1, "authorized": "true"}, "authorized"),
        (s.UpdateData, {"memory_id": 1, "content": " "}, "content"),
        (s.JudgeData, {"conflict_id": 1, "winner_id": 2, "pins": {"abc": 1}}, "pins"),
        (s.JudgeData, {"conflict_id": 1, "winner_id": 2, "pins": {"3": 0}}, "pins"),
        (s.JudgeData, {"conflict_id": 1, "winner_id": 2, "pins": {"3": True}}, "pins.3"),
        (a.ConflictsData, {"state": "closed"}, "state"),
        (a.ConflictsData, {"limit": 201}, "limit"),
        (a.AuditData, {"type": "NotAnEvent"}, "type"),
        (a.AuditData, {"since": "soon"}, "since"),
        (a.TimelineData, {}, "memory_id"),  # a rule across fields still names one (issue 29)
        (a.CompareData, {"left_id": 3, "right_id": 3}, "right_id"),
        (a.ArbitrateData, {"left_id": 3, "right_id": 3}, "right_id"),
        (a.SupersedeData, {"loser_id": 3, "winner_id": 3}, "winner_id"),
        (a.ResolveConflictData, {"conflict_id": 1}, "winner_id"),
        (a.ResolveConflictData, {"conflict_id": 1, "winner_id": 2, "resolution": "keep_both"}, "winner_id"),
        (a.ResolveConflictData, {"conflict_id": 1, "resolution": "merge"}, "resolution"),
        (a.AliasData, {"alias": "", "canonical": "x"}, "alias"),
        (a.RebuildData, {"projection": "p" * 65}, "projection"),
        (a.ReplayBackupData, {"dry_run": "no"}, "dry_run"),
    ],
)
def test_admin_models_refuse_bad_values(model: type[s.EdgeModel], data: dict[str, Any], field: str | None) -> None:
    assert refused(model, data).field == field


def test_judge_pins_become_integer_keyed() -> None:
    kwargs = s.JudgeData.parse({"conflict_id": 2, "winner_id": 5, "pins": {"5": 1, "7": 3}}).to_kwargs()
    assert kwargs["pins"] == {5: 1, 7: 3}


def test_governance_models_carry_authorized_and_memory_ids() -> None:
    model = a.SupersedeData.parse({"loser_id": 3, "winner_id": 4, "authorized": True})
    assert model.authorized is True and "authorized" not in model.to_kwargs()
    assert sorted(a.memory_ids(model)) == [3, 4]


def test_every_route_has_a_model_and_an_example_that_validates() -> None:
    for spec in TOOLS.values():
        for name, route in spec.routes.items():
            if route.example:
                route.model.parse(route.example)  # the documented example is valid input
            assert route.summary, (spec.name, name)


def test_a_confidence_of_nan_is_named_as_such() -> None:
    for bad in (float("nan"), float("inf")):
        with pytest.raises(InvalidInput) as info:
            s.RememberData.parse({"content": "the staging port is 8443", "confidence": bad})
        assert "not NaN or an infinity" in str(info.value) and info.value.field == "confidence"


@pytest.mark.parametrize("value", [True, [1], {"p": 1}, 1.5])
def test_a_union_field_of_the_wrong_type_is_refused_under_its_own_name(value: object) -> None:
    """``as_of_recorded`` (a position or a time) was refused as ``as_of_recorded.str``: a name the
    caller never gave (docs/contract.md: a refusal names the field the caller gave)."""
    from fact_ledger.server.schemas.memory import FindData

    with pytest.raises(InvalidInput) as refused:
        FindData.parse({"query": "x", "as_of_recorded": value})
    assert refused.value.to_dict()["field"] == "as_of_recorded"
    assert refused.value.to_dict()["message"].startswith("as_of_recorded: ")


def test_a_conflicts_member_offset_past_any_integer_is_invalid_input() -> None:
    """10**20 passed the edge and overflowed SQLite's integer in the query: an internal error."""
    with pytest.raises(InvalidInput) as caught:
        a.ConflictDetailData.parse({"conflict_id": 3, "offset": 10**20})
    assert caught.value.field == "offset"
    assert a.ConflictDetailData.parse({"conflict_id": 3, "offset": 2**63 - 1}).offset == 2**63 - 1
