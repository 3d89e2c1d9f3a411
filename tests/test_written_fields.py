"""Tags and metadata are recorded the same way by every write (``ledger.decide.written_fields``):
a long-term memory, a working note and a note's revision."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fact_ledger.ledger.decide import RememberCommand, written_fields
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

tags = st.lists(st.sampled_from(["ops", "net", "staging", "Ops", "db"]), max_size=8)


@given(tags)
def test_tags_are_kept_once_each_in_the_order_first_given(given_tags: list[str]) -> None:
    out = written_fields({"tags": given_tags})["tags"]
    assert isinstance(out, tuple) and len(out) == len(set(out)) and set(out) == set(given_tags)
    assert list(out) == sorted(set(given_tags), key=given_tags.index)


@given(st.one_of(st.none(), st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2)))
def test_no_metadata_is_an_empty_object_and_absent_keys_stay_absent(metadata: dict[str, int] | None) -> None:
    assert written_fields({"metadata": metadata})["metadata"] == (metadata or {})
    assert written_fields({"content": "x"}) == {"content": "x"}


def test_a_memory_and_a_working_note_record_the_same_tags(tmp_path: Path) -> None:
    given_tags = ["net", "ops", "net", "db", "ops"]
    command = RememberCommand.of({"content": "x", "tags": given_tags}, event_time="2026-01-10T09:00:00.000000Z")
    assert command.tags == ("net", "ops", "db")
    app = LedgerApp(Settings(db=str(tmp_path / "t.db"), client="test"))
    try:
        kept = app.remember("The gateway port is 8000", tags=given_tags)["memory_id"]
        note = app.remember("Trying port 9000 for now", tags=given_tags, session_id="s1", tier="working")
        events = {e["type"]: e for e in app.audit(limit=5)["events"]}
        assert app.read(kept)["memory"]["tags"] == ["net", "ops", "db"]
        assert list(events["WorkingNoted"]["payload"]["tags"]) == ["net", "ops", "db"], note
    finally:
        app.close()
