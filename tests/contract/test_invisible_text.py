"""A text that shows nothing is blank, however it is spelled.

``str.strip`` keeps the invisible format characters (zero-width space U+200B, word joiner
U+2060, the byte-order mark U+FEFF): a content of only those was stored as a memory with no
visible words, and the next invisible text was absorbed as its duplicate. Driven through the
real stdio client, as an agent sends it.
"""

from __future__ import annotations

import pytest

from tests.contract.conftest import LedgerServer

INVISIBLE = ["\u200b\u200b", "\ufeff", " \u200b\n\u2060\t", "\u3000\u200d"]


@pytest.mark.parametrize("text", INVISIBLE, ids=[f"{ord(t.strip()[0]):04X}" for t in INVISIBLE])
def test_an_invisible_content_is_refused_as_blank_and_nothing_is_written(srv: LedgerServer, text: str) -> None:
    before = srv.events()
    r = srv.memory("remember", {"content": text})
    assert r.code == "invalid_input" and r.error["field"] == "content", r.body
    assert "blank" in r.error["message"]
    working = srv.memory("remember", {"content": text, "tier": "working", "session_id": "conv-1"})
    assert working.code == "invalid_input" and working.error["field"] == "content", working.body
    assert srv.events() == before


def test_an_update_to_invisible_text_and_an_invisible_conversation_id_are_refused(srv: LedgerServer) -> None:
    memory_id = srv.memory("remember", {"content": "The loading dock closes at 6pm"})["memory_id"]
    before = srv.events()
    r = srv.memory("update", {"memory_id": memory_id, "content": "\u200b"})
    assert r.code == "invalid_input" and r.error["field"] == "content", r.body
    r = srv.memory("remember", {"content": "a note", "tier": "working", "session_id": "\u200b"})
    assert r.code == "invalid_input" and r.error["field"] == "session_id", r.body
    assert srv.events() == before
    assert srv.memory("read", {"memory_id": memory_id})["memory"]["content"] == "The loading dock closes at 6pm"


def test_visible_words_with_invisible_characters_inside_are_kept_as_written(srv: LedgerServer) -> None:
    r = srv.memory("remember", {"content": "\ufeffThe badge\u200b printer is on level 3"})
    assert r.ok, r.body
    read = srv.memory("read", {"memory_id": r["memory_id"]})["memory"]
    assert read["content"] == "\ufeffThe badge\u200b printer is on level 3"
