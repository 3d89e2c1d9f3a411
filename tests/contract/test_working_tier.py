"""Conversations and the working tier over stdio (docs/contract.md; issue 25, the acceptance
scenarios): a working note stays out of long-term ``find`` and other conversations and answers
first in its own; a bounded working set keeps the sticky note and evicts the oldest; three
signals over three turns promote (history shows ``Promoted`` with its score); finds alone never
promote; a contradicted note is not promoted; a promoted note that disagrees with a long-term
fact opens a conflict then, not before."""

from __future__ import annotations

from typing import Any

import pytest

from tests.contract.conftest import LedgerServer

pytestmark = pytest.mark.slow


def _ids(reply: Any) -> list[int]:
    return [r["memory_id"] for r in reply["results"]]


def test_a_working_note_is_invisible_to_long_term_find_and_to_another_conversation(srv: LedgerServer) -> None:
    long_term = srv.memory("remember", {"content": "今天的会是需求评审会", "session_id": "conv-a", "turn": 1})
    assert long_term.ok and long_term.body.get("tier", "long") == "long", long_term.body
    note = srv.memory(
        "remember", {"content": "今天的会是UI走查会", "session_id": "conv-b", "turn": 1, "tier": "working"}
    )
    assert note.ok and note["tier"] == "working" and note["session_id"] == "conv-b", note.body
    assert "notices" not in note.body  # session_id is a known field now, not an ignored one

    plain = srv.memory("find", {"query": "今天的会"})
    assert note["memory_id"] not in _ids(plain) and long_term["memory_id"] in _ids(plain)
    other = srv.memory("find", {"query": "今天的会", "session_id": "conv-a"})
    assert note["memory_id"] not in _ids(other)
    own = srv.memory("find", {"query": "今天的会", "session_id": "conv-b"})
    assert _ids(own)[0] == note["memory_id"] and own["results"][0]["tier"] == "working"
    assert long_term["memory_id"] in _ids(own)  # the rest follows unless session_only
    only = srv.memory("find", {"query": "今天的会", "session_id": "conv-b", "session_only": True})
    assert _ids(only) == [note["memory_id"]]
    # No claim and no conflict: the two meetings are different facts of different conversations.
    assert srv.call("memory_review", "conflicts", {"state": "all"})["conflicts"] == []
    read = srv.memory("read", {"memory_id": note["memory_id"]})
    assert read["memory"]["tier"] == "working" and read["memory"]["session_id"] == "conv-b"


def test_thirty_notes_leave_a_bounded_set_with_the_sticky_one_kept_and_the_oldest_evicted(srv: LedgerServer) -> None:
    sticky = srv.memory(
        "remember",
        {"content": "The user is called Mira", "session_id": "conv-30", "turn": 0, "tier": "working", "sticky": True},
    )["memory_id"]
    ids = [
        srv.memory(
            "remember",
            {"content": f"scratch note {i}: tried step {i}", "session_id": "conv-30", "turn": i, "tier": "working"},
        )["memory_id"]
        for i in range(1, 31)
    ]
    repeat = srv.memory(
        "remember", {"content": "scratch note 30: tried step 30", "session_id": "conv-30", "tier": "working"}
    )
    assert repeat["duplicate_of"] == ids[-1]  # an exact repeat inside the set is absorbed

    working = srv.call("memory_review", "working", {"session_id": "conv-30"})
    kept = [m["memory_id"] for m in working["memories"]]
    assert len(kept) == 20 and working["limit"] == 20
    assert sticky in kept
    assert set(kept) - {sticky} == set(ids[-19:])  # the 19 most recently touched; the 11 oldest evicted
    assert ids[0] not in kept


def _note(srv: LedgerServer, content: str, session: str) -> int:
    reply = srv.memory("remember", {"content": content, "session_id": session, "turn": 1, "tier": "working"})
    assert reply.ok, reply.body
    return int(reply["memory_id"])


def _signal(srv: LedgerServer, memory_id: int, signal: str, turn: int, session: str) -> Any:
    reply = srv.memory("reinforce", {"memory_id": memory_id, "signal": signal, "turn": turn, "session_id": session})
    assert reply.ok, reply.body
    return reply


def test_three_signals_over_three_turns_promote_and_history_shows_promoted(srv: LedgerServer) -> None:
    note = _note(srv, "The build runs with make ci", "conv-p")
    assert not _signal(srv, note, "tool_succeeded", 2, "conv-p").body.get("promoted")
    assert not _signal(srv, note, "tool_succeeded", 3, "conv-p").body.get("promoted")
    done = _signal(srv, note, "user_affirmed", 4, "conv-p")
    assert done["promoted"] is True and done["tier"] == "long" and done["score"] == 5
    long_id = done["promoted_to"]

    history = srv.call("memory_review", "history", {"memory_id": note})
    events = history["versions"][0]["events"]
    promoted = [e for e in events if e["type"] == "Promoted"]
    assert len(promoted) == 1 and promoted[0]["payload"]["score"] == 5
    assert [s["turn"] for s in promoted[0]["payload"]["signals"]] == [2, 3, 4]
    assert promoted[0]["payload"]["long_term_id"] == long_id
    assert long_id in _ids(srv.memory("find", {"query": "build make ci"}))  # long-term now, everywhere
    assert srv.memory("read", {"memory_id": long_id})["memory"]["memory_id"] == long_id


def test_finds_alone_never_promote(srv: LedgerServer) -> None:
    note = _note(srv, "Trying port 8081 for the preview server", "conv-f")
    for _ in range(6):
        assert note in _ids(srv.memory("find", {"query": "preview server port", "session_id": "conv-f"}))
        srv.memory("read", {"memory_id": note})
    assert srv.memory("read", {"memory_id": note})["memory"]["status"] == "active"
    assert note not in _ids(srv.memory("find", {"query": "preview server port"}))
    audit = srv.call("memory_review", "audit", {"type": "Promoted"})
    assert all(e["payload"].get("memory") != note for e in audit["events"])


def test_a_contradicted_note_is_not_promoted(srv: LedgerServer) -> None:
    note = _note(srv, "The user prefers dark mode", "conv-c")
    _signal(srv, note, "tool_succeeded", 2, "conv-c")
    _signal(srv, note, "tool_succeeded", 3, "conv-c")
    _signal(srv, note, "contradicted", 4, "conv-c")
    after = _signal(srv, note, "user_affirmed", 5, "conv-c")
    assert not after.body.get("promoted") and after["score"] == 1
    assert note not in _ids(srv.memory("find", {"query": "dark mode"}))


def test_a_promoted_note_that_disagrees_opens_a_conflict_then_not_before(srv: LedgerServer) -> None:
    fact = srv.memory("remember", {"content": "The staging API listens on port 8080", "subject": "staging api"})
    note = srv.memory(
        "remember",
        {
            "content": "The staging API listens on port 8081",
            "subject": "staging api",
            "session_id": "conv-k",
            "tier": "working",
        },
    )["memory_id"]
    open_before = srv.call("memory_review", "conflicts", {"state": "open"})["total"]
    _signal(srv, note, "user_affirmed", 2, "conv-k")
    assert srv.call("memory_review", "conflicts", {"state": "open"})["total"] == open_before  # not before
    promoted = srv.call("memory_govern", "promote", {"memory_id": note, "authorized": True})
    assert promoted.ok and promoted["promoted"] is True, promoted.body
    assert promoted["conflicts"] and promoted["conflicts"][0]["other_id"] == fact["memory_id"]
    assert any("conflict" in n for n in promoted["notices"])  # said in the reply
    assert srv.call("memory_review", "conflicts", {"state": "open"})["total"] == open_before + 1
    again = srv.call("memory_govern", "promote", {"memory_id": note, "authorized": True})
    assert again.code == "invalid_input"  # promoted once


def test_a_note_that_restates_a_long_term_memory_is_promoted_into_it(srv: LedgerServer) -> None:
    """The long-term memory already holds what the note says, in other words (a restatement):
    the promotion lands on it, as ``remember`` would absorb the same text. It answered an
    internal error, with the events written and the ``Promoted`` event naming no memory."""
    fact = srv.memory("remember", {"content": "The lobby door code is 4471", "subject": "lobby"})["memory_id"]
    note = _note(srv, "The lobby door code is 4471", "conv-r")
    promoted = srv.call("memory_govern", "promote", {"memory_id": note, "authorized": True})
    assert promoted.ok, promoted.body
    assert promoted["promoted_to"] == fact and promoted["restatement_of"] == fact
    history = srv.call("memory_review", "history", {"memory_id": note})
    event = next(e for e in history["versions"][0]["events"] if e["type"] == "Promoted")
    assert event["payload"]["long_term_id"] == fact
    read = srv.memory("read", {"memory_id": note})["memory"]
    assert read["status"] == "promoted" and read["promoted_to"] == fact, read
    again = _note(srv, "The lobby door code is 4471", "conv-s")  # by the rule: signals over turns
    for turn in (2, 3):
        assert not _signal(srv, again, "tool_succeeded", turn, "conv-s").body.get("promoted")
    done = _signal(srv, again, "user_affirmed", 4, "conv-s")
    assert done.ok and done["promoted"] is True and done["promoted_to"] == fact, done.body


def test_a_promoted_note_that_cancels_an_instruction_retracts_it_as_remember_would(srv: LedgerServer) -> None:
    """A note "stop sending the report" promoted was recorded beside the instruction it cancels,
    both active; remembered directly, the same words retract it."""
    instruction = srv.memory("remember", {"content": "Send the weekly report to Dana every Friday"})["memory_id"]
    note = _note(srv, "Stop sending the weekly report to Dana", "conv-c")
    promoted = srv.call("memory_govern", "promote", {"memory_id": note, "authorized": True})
    assert promoted.ok and promoted["retracted"] == [instruction], promoted.body
    assert srv.memory("read", {"memory_id": instruction})["memory"]["status"] == "retired"


def test_the_schemas_are_typed_for_conversations_tiers_and_signals(srv: LedgerServer) -> None:
    tools = {t.name: t.input_schema for t in srv.list_tools()}
    text = str(tools["memory"])
    for name in ("reinforce", "session_id", "session_only", "sticky", "include_cold", "user_affirmed", "working"):
        assert name in text, name
    assert "promote" in str(tools["memory_govern"]) and "working" in str(tools["memory_review"])
    bad = srv.memory("reinforce", {"memory_id": 1, "signal": "recalled", "turn": 1})
    assert bad.code == "invalid_input" and bad.error["field"] == "signal"
    no_session = srv.memory("remember", {"content": "a provisional note", "tier": "working"})
    assert no_session.code == "invalid_input" and no_session.error["field"] == "session_id"


def test_read_of_an_erased_note_gives_the_erasure_time_as_a_memory_does(srv: LedgerServer) -> None:
    """``read`` of an erased working note had no ``valid_to``; an erased long-term memory's has the
    erasure's time. The person erases at the CLI (the user channel); the agent reads over stdio."""
    from tests.conftest import ledger_cli

    note = srv.memory("remember", {"content": "maybe pin redis 7.2", "session_id": "conv-erase", "tier": "working"})
    memory = srv.memory("remember", {"content": "the cache host is cache-2"})
    for memory_id in (note["memory_id"], memory["memory_id"]):
        ledger_cli("erase", str(memory_id), "--reason", "asked", "--db", str(srv.db), check=True)
    for memory_id in (note["memory_id"], memory["memory_id"]):
        read = srv.memory("read", {"memory_id": memory_id})["memory"]
        erasure = srv.call("memory_review", "audit", {"memory_id": memory_id, "type": "Erased"})["events"][0]
        assert (read["status"], read.get("valid_to")) == ("erased", erasure["event_time"]), read
        # an agent gets each cleared row as it is (the CLI's human audit says only count and positions)
        assert all(set(row) == {"position", "event_id", "seal"} for row in erasure["payload"]["rows"])


def test_read_of_an_erased_note_gives_the_erasure_reason_as_a_memory_does(srv: LedgerServer) -> None:
    """``read`` of an erased working note had no ``status_reason``; an erased long-term memory's
    gives the erasure's reason. The person erases at the CLI; the agent reads over stdio."""
    from tests.conftest import ledger_cli

    note = srv.memory("remember", {"content": "maybe pin redis 7.2", "session_id": "conv-why", "tier": "working"})
    memory = srv.memory("remember", {"content": "the cache host is cache-2"})
    for memory_id in (note["memory_id"], memory["memory_id"]):
        ledger_cli("erase", str(memory_id), "--reason", "asked by the user", "--db", str(srv.db), check=True)
    for memory_id in (note["memory_id"], memory["memory_id"]):
        read = srv.memory("read", {"memory_id": memory_id})["memory"]
        assert (read["status"], read.get("status_reason")) == ("erased", "asked by the user"), read
