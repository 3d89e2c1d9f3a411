"""An agent's times over MCP: RFC 3339's lowercase ``t`` and ``z`` are taken as their uppercase
forms in every time field, and ``T24:00`` is refused saying which time to send instead."""

from __future__ import annotations

from tests.contract.conftest import LedgerServer


def test_lowercase_times_are_taken_in_every_time_field(srv: LedgerServer) -> None:
    done = srv.memory(
        "remember", {"content": "The staging API listens on port 8080", "event_time": "2026-01-04t19:15:00z"}
    )
    assert done.ok, done.body
    memory = done["memory_id"]
    assert srv.memory("read", {"memory_id": memory})["memory"]["event_time"] == "2026-01-04T19:15:00.000000Z"
    window = {"after_time": "2026-01-04t00:00:00z", "before_time": "2026-01-05t00:00:00z"}
    assert [r["memory_id"] for r in srv.memory("find", {"query": "staging", **window})["results"]] == [memory]
    past = {"as_of_event_time": "2026-01-05t00:00:00z", "as_of_recorded": "2999-01-01t00:00:00z"}
    assert [r["memory_id"] for r in srv.memory("find", {"query": "staging", **past})["results"]] == [memory]
    assert srv.memory("read", {"memory_id": memory, **past})["memory"]["memory_id"] == memory
    audit = srv.call("memory_review", "audit", {"since": "2000-01-01t00:00:00z", "until": "2999-01-01t00:00:00z"})
    assert memory in [e["memory_id"] for e in audit["events"]]


def test_the_end_of_a_day_is_refused_with_the_time_to_send(srv: LedgerServer) -> None:
    before = srv.events()
    refused = srv.memory("remember", {"content": "The build server is ci-3", "event_time": "2026-01-04T24:00:00Z"})
    assert refused.code == "invalid_input" and refused.error["field"] == "event_time"
    assert "the end of a day (24:00), which is not taken" in refused.error["message"]
    assert "2026-01-05T00:00Z" in refused.error["message"]
    assert srv.events() == before
