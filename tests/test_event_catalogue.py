"""docs/events.md is generated from the event Structs and cannot drift from them; the
operations it says write each type really do (and write nothing else)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.ledger import clock
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.events import AUTH_USER, EVENT_TYPES, Event, MemoryRetired
from fact_ledger.projections import notices
from fact_ledger.server.app.facade import LedgerApp, default_projectors
from fact_ledger.server.app.transfer import export_jsonl, import_jsonl
from fact_ledger.server.config import Settings
from tools.docs import events as catalogue

T0 = "2026-07-01T00:00:00.000000Z"
DOC = Path(__file__).resolve().parent.parent / "docs" / "events.md"


def test_the_catalogue_is_up_to_date() -> None:
    assert DOC.read_text(encoding="utf-8") == catalogue.render(), "stale: run python -m tools.docs.events"
    assert catalogue.main(["--check"]) == 0


class MemoryUpdated(Event, frozen=True, kw_only=True, omit_defaults=True):
    """A stand-in for the real type with one field added and one field's type changed."""

    memory: str
    content: int = 0
    note: str = ""


def test_a_changed_event_field_makes_the_catalogue_stale() -> None:
    changed = catalogue.render({**EVENT_TYPES, "MemoryUpdated": MemoryUpdated})
    assert changed != DOC.read_text(encoding="utf-8")
    assert "| `note` | string |" in changed and "| `content` | integer |" in changed
    assert "| `note` |" not in DOC.read_text(encoding="utf-8")


def test_every_type_is_documented_with_version_writers_and_read_models() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert {t for ts in catalogue.WRITERS.values() for t in ts} == set(EVENT_TYPES)
    for name, cls in EVENT_TYPES.items():
        section = text.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        assert f"- **Version**: {cls.V}." in section
        assert "- **Written by**: `" in section and "- **Folded by**: no read model" not in section
    assert "`MemoryRemembered` (those rows keep that name" in text
    assert "v1 → v2 (`upcast_memory_recorded_v1_v2`)" in text


def test_each_operation_writes_exactly_the_types_the_catalogue_names(app: LedgerApp, tmp_path: Path) -> None:
    """Every operation run on a real ledger, through each branch that writes another type."""
    written: dict[str, set[str]] = defaultdict(set)

    def run(op: str, *args: Any, **kw: Any) -> Any:
        return run_as(op, getattr(app, op), *args, **kw)

    def run_as(key: str, call: Any, *args: Any, **kw: Any) -> Any:
        before = app.store.last_position()
        result = call(*args, **kw)
        written[key].update(e.type for e in app.store.read(after=before))
        return result

    def pair(name: str, first: str, second: str) -> tuple[int, int, int]:
        """Two memories about where ``name`` lives: the second opens a conflict."""
        a = run("remember", f"{name} lives in {first}", subject=name, event_time="2026-01-01")["memory_id"]
        b = run("remember", f"{name} lives in {second}", subject=name, event_time="2026-02-01")
        assert b["conflicts"], b
        return a, b["memory_id"], b["conflicts"][0]["conflict_id"]

    user = {"authorization": AUTH_USER}
    _, bob2, bob_conflict = pair("Bob", "Berlin", "Paris")
    # an exact duplicate, said as of its first time (said later, a repeat of a value that does not
    # lead its set is stored and joins: governance, "Restatements confirm")
    run("remember", "Bob lives in Berlin", subject="Bob", event_time="2026-01-01")
    # a value that changed, then the change cancelled: what it replaced holds again (Reinstated)
    old_day = run("remember", "the offsite is on 2026-03-03", subject="Ivy", event_time="2026-01-01")["memory_id"]
    moved = run("remember", "the offsite is on 2026-03-10", subject="Ivy", event_time="2026-02-01")["memory_id"]
    run("supersede", old_day, moved, **user)
    run("remember", "the move of the offsite is cancelled", subject="Ivy", ref_id=moved, retracts=True)
    run("remember", "the staging port is 8080", subject="Dee", event_time="2026-01-01")
    run("remember", "staging listens on port 8080", subject="Dee", event_time="2026-01-02")  # restated
    run("judge", bob_conflict, bob2)
    run("update", bob2, content="Bob lives in Rome", **user)  # a judged conflict re-opens
    run("update", bob2, content="Bob likes tea", **user)  # the open one dissolves
    alice = run("remember", "Alice lives in Oslo", subject="Alice")["memory_id"]
    alice2 = run("remember", "Alice enjoys chess", subject="Alice")["memory_id"]
    opened = run("update", alice2, content="Alice lives in Lima", **user)["conflicts"][0]["conflict_id"]
    run("judge", opened, alice2)
    run("confirm", alice2, **user)
    run("judge", opened, alice2)
    run("unlock", alice2, **user)
    run("retire", alice, reason="moved away", **user)
    carol, _, _ = pair("Carol", "Rome", "Madrid")
    run("remember", "Carol never lived there", subject="Carol", ref_id=carol, retracts=True)
    dave, dave2, _ = pair("Dave", "Kyiv", "Lviv")
    run("supersede", dave, dave2, **user)
    hana, hana2, _ = pair("Hana", "Oslo", "Bergen")
    run("remember", "Hana lives in Tromso", subject="Hana", event_time="2026-03-01")  # joins the set
    run("supersede", hana, hana2, **user)  # two values remain: the loser only leaves the set
    _, eve2, eve_conflict = pair("Eve", "Lima", "Quito")
    run("resolve_conflict", eve_conflict, winner_id=eve2, **user)
    finn, finn2, _ = pair("Finn", "Bern", "Basel")
    run("arbitrate", finn, finn2, apply=True, **user)
    gus = run("remember", "Gus likes tea", subject="Gus", event_time="2026-01-01")["memory_id"]
    gus2 = run("remember", "Gus reads novels", subject="Gus", event_time="2026-02-01")["memory_id"]
    run("arbitrate", gus, gus2, mark_conflict=True, **user)
    # A health report suggestion applied as one change, then undone (server/app/hindsight.py).
    _, _, jay_conflict = pair("Jay", "Turin", "Milan")
    cluster = next(c for c in app.health(limit=200)["clusters"] if c["conflict_id"] == jay_conflict)
    change = run("apply_suggestion", cluster["suggestion"]["suggestion_id"], **user)["change_id"]
    run("undo", change, **user)
    # An entity alias: claims about 张工 meet 张伟's, and part again when it is rejected.
    run("remember", "张伟的电话是13812345678", subject="张伟")
    run("remember", "张工的电话是13987654321", subject="张工")
    run("accept_entity_alias", "张工", "张伟", **user)
    run("remember", "张伟的电话是13700000000", subject="张伟")  # one set of three
    run("reject_entity_alias", "张工", "张伟", **user)  # 张工's number leaves it
    run("record_health")  # a point of the report's trend
    # Policy auto_settle: a write that opens a set a rule decides supersedes the loser itself.
    app.settings = replace(app.settings, policy=replace(app.settings.policy, auto_settle=True))
    pair("Ivy", "Pisa", "Siena")
    ivy = run("remember", "Ivy enjoys chess", subject="Ivy", event_time="2026-03-01")["memory_id"]
    run("update", ivy, content="Ivy lives in Lucca", **user)
    # import: the file's events as they were decided, then the sets its memories dispute here
    # (server/app/transfer.py), settled at once under this policy
    run("remember", "Zed lives in Oslo", subject="Zed", event_time="2026-01-01")
    theirs = LedgerApp(Settings(db=str(tmp_path / "theirs.db"), client="test"))
    theirs.remember("Zed lives in Porto", subject="Zed", event_time="2026-05-01")
    with (tmp_path / "theirs.jsonl").open("wb") as fh:
        export_jsonl(theirs, fh)
    theirs.close()
    before = app.store.last_position()
    import_jsonl(app, tmp_path / "theirs.jsonl")
    written["import"].update(e.type for e in app.store.read(after=before + 1))  # besides the file's one event
    app.settings = replace(app.settings, policy=replace(app.settings.policy, auto_settle=False))
    run("archive", older_than_days=0)
    run("accept_alias", "the-ledger", "fact-ledger", **user)
    run("reject_alias", "the-ledger", "fact-ledger", **user)
    # A semantic notice between two current memories (as the vectors indexer records one).
    hal = run("remember", "the budget is 50k", subject="Hal")["memory_id"]
    hal2 = run("remember", "the budget is 80k", subject="Hal budget")["memory_id"]
    notices.create(app.conn)
    app.conn.execute(
        "INSERT INTO notices(left_id, right_id, workspace, similarity, kind, left_value, right_value) "
        "VALUES(?, ?, '', 0.95, 'number', '50000', '80000')",
        (hal, hal2),
    )
    run("review_notice", app.conn.execute("SELECT max(notice_id) FROM notices").get, "dismissed", **user)
    # A backed-up retire replayed after the memory was retired anyway: decided again, it has
    # nothing left to write, so only its WriteReplayed record lands (server/app/backup.py).
    stream = app.conn.execute("SELECT stream_id FROM memories WHERE memory_id=?", (alice,)).get
    retired = NewEvent(data=MemoryRetired(memory=stream, reason="again"), stream_id=stream, event_time=T0)
    request = {"op": "retire", "args": [alice], "kwargs": {"reason": "again", "authorization": AUTH_USER}}
    app.backup_log.append([retired], request)
    run("replay_backup", dry_run=False, authorization=AUTH_USER)
    run("erase", hal2, reason="asked to forget", **user)
    # an erased member of a set of three values leaves it, which goes on (ConflictMemberLeft)
    _, uma2, _ = pair("Uma", "Oslo", "Rome")
    run("remember", "Uma lives in Lima", subject="Uma", event_time="2026-03-01")
    run("erase", uma2, reason="asked to forget", **user)
    # The working tier (server/app/conversations.py): a note, its exact repeat, a revision, signals
    # that promote one into a conflict, a direct promotion, the periodic pass, a cold one warmed.
    working = {"tier": "working", "session_id": "conv"}
    note = run_as("remember_working", app.remember, "Jo lives in Oslo", subject="Jo", **working)["memory_id"]
    run_as("remember_working", app.remember, "Jo lives in Oslo", subject="Jo", **working)
    run_as("update_working", app.update, note, content="Jo lives in Bergen", turn=2)
    run("remember", "Jo lives in Oslo", subject="Jo")
    for turn, signal in ((3, "tool_succeeded"), (4, "tool_succeeded"), (5, "user_affirmed")):
        run("reinforce", note, signal, session_id="conv", turn=turn)
    kim = run_as("remember_working", app.remember, "Kim likes tea", subject="Kim", **working)["memory_id"]
    run("remember", "Kim likes tea", subject="Kim")
    run("promote", kim, **user)  # the same text long-term already: a sighting of it
    lee = run_as("remember_working", app.remember, "Lee lives in Graz", subject="Lee", **working)["memory_id"]
    run("remember", "Lee lives in Linz", subject="Lee")
    run("promote", lee, **user)  # recorded long-term, where it disagrees
    mo = run_as("remember_working", app.remember, "Mo likes jazz", subject="Mo", **working)["memory_id"]
    run("remember", "Mo likes jazz", subject="Mo")
    for turn, signal in ((3, "tool_succeeded"), (4, "tool_succeeded"), (5, "user_affirmed")):
        run("reinforce", mo, signal, session_id="conv", turn=turn)  # promoted onto the same text
    run_as("remember_working", app.remember, "a passing thought", session_id="idle", tier="working")
    later = clock.format_time(clock.to_datetime(clock.now()) + timedelta(days=400))
    run_as("sweep", app.conversations.sweep, now=later)
    run_as("warm", app.find, "Oslo", include_cold=True)
    assert dict(written) == {op: set(types) for op, types in catalogue.WRITERS.items()}


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_each_type_names_the_read_models_that_fold_it(name: str) -> None:
    folding = [p.name for p in default_projectors() if name in p.handles]
    section = DOC.read_text(encoding="utf-8").split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
    assert f"- **Folded by**: {', '.join(folding)}." in section
