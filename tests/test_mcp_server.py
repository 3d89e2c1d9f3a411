"""The MCP layer in-process (no subprocess): dispatch, elicitation on both protocol eras,
progress, identity fallback and result compaction. The subprocess contract is in tests/contract/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest
from mcp import Client

from fact_ledger.ledger.log.events import AUTH_AGENT, AUTH_USER
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from fact_ledger.server.mcp import compact as mcp_compact
from fact_ledger.server.mcp.server import build_server
from tests.test_erasure import promoted_across

pytestmark = pytest.mark.anyio
MODES = ["legacy", "2026-07-28"]  # the initialize handshake era, and the input_required era


def body(result: mcp_types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    assert result.is_error is (not result.structured_content["ok"])
    return result.structured_content


def payloads(db: Path, type_: str) -> list[dict[str, Any]]:
    store = EventStore(db)
    try:
        return [json.loads(e.payload) for e in store.read() if e.type == type_]
    finally:
        store.close()


class Answers:
    """An elicitation callback that records the questions and answers from a script."""

    def __init__(self, *answers: mcp_types.ElicitResult) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    async def __call__(self, ctx: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        self.questions.append(params.message)
        assert params.requested_schema["properties"]["approve"]["type"] == "boolean"
        return self.answers.pop(0)


ACCEPT = mcp_types.ElicitResult(action="accept", content={"approve": True})
SAY_NO = mcp_types.ElicitResult(action="accept", content={"approve": False})
DECLINE = mcp_types.ElicitResult(action="decline")


def locked_memory(app: LedgerApp) -> int:
    """A fact the user stated through a user channel (the CLI calls the facade so): locked. Through
    the agent's tool the label alone locks nothing."""
    r = app.remember("The user's birthday is 4 May", source_type="user_confirmed", authorization=AUTH_USER)
    return int(r["memory_id"])


@pytest.mark.parametrize("mode", MODES)
async def test_user_confirmation_through_elicitation_is_recorded_as_user_channel(
    app: LedgerApp, db_path: Path, mode: str
) -> None:
    answers = Answers(ACCEPT, DECLINE, SAY_NO)
    async with Client(build_server(app), mode=mode, elicitation_callback=answers) as c:
        memory_id = locked_memory(app)
        update = {
            "action": "update",
            "data": {"memory_id": memory_id, "content": "The birthday is 5 May", "authorized": True},
        }
        assert body(await c.call_tool("memory", update))["version"] == 2
        assert f"#{memory_id}" in answers.questions[0] and "locked" in answers.questions[0]
        for _ in range(2):  # declined, then accepted with the box unticked
            refused = body(await c.call_tool("memory", update))
            assert refused["error"]["code"] == "unauthorized"
        assert len(answers.questions) == 3
        # Not authorised by the agent: the user is not bothered, the lock answers.
        plain = body(
            await c.call_tool("memory", {"action": "update", "data": {"memory_id": memory_id, "content": "6 May"}})
        )
        assert plain["error"]["code"] == "locked" and len(answers.questions) == 3
    updates = payloads(db_path, "MemoryUpdated")
    assert [u["authorization"] for u in updates] == [AUTH_USER]  # refusals wrote nothing


@pytest.mark.parametrize("mode", MODES)
async def test_without_elicitation_authorized_true_is_agent_asserted(app: LedgerApp, db_path: Path, mode: str) -> None:
    async with Client(build_server(app), mode=mode) as c:
        memory_id = locked_memory(app)
        r = body(
            await c.call_tool(
                "memory",
                {
                    "action": "update",
                    "data": {"memory_id": memory_id, "content": "The birthday is 5 May", "authorized": True},
                },
            )
        )
        assert r["ok"]
    assert [u["authorization"] for u in payloads(db_path, "MemoryUpdated")] == [AUTH_AGENT]


async def test_normal_memories_and_unrelated_actions_ask_nobody(app: LedgerApp) -> None:
    answers = Answers()
    async with Client(build_server(app), elicitation_callback=answers) as c:
        r = body(await c.call_tool("memory", {"action": "remember", "data": {"content": "plain fact"}}))
        await c.call_tool(
            "memory", {"action": "update", "data": {"memory_id": r["memory_id"], "content": "x", "authorized": True}}
        )
        await c.call_tool(
            "memory_govern", {"action": "accept", "data": {"alias": "a", "canonical": "b", "authorized": True}}
        )
    assert answers.questions == []


class Stub:
    """A facade with almost nothing on it: capabilities appear as methods are added."""

    def __init__(self, db: Path) -> None:
        self.settings = Settings(db=str(db), client="stub")
        self.calls: list[dict[str, Any]] = []

    def status(self) -> dict[str, Any]:
        return {"ok": True, "events": 0}


@pytest.mark.parametrize("mode", MODES)
async def test_confirm_asks_the_user_and_is_wired_when_the_method_lands(db_path: Path, mode: str) -> None:
    """Routes are bound when the server starts: a facade without ``confirm`` answers
    ``unavailable``; once the method exists, the next server wires it."""
    stub = Stub(db_path)
    stub.read = lambda memory_id, **_: {
        "ok": True,
        "memory": {  # type: ignore[attr-defined]
            "memory_id": memory_id,
            "content": "Deploys freeze on Fridays",
            "protection": "normal",
        },
    }
    answers = Answers(ACCEPT, ACCEPT)
    call = {"action": "confirm", "data": {"memory_id": 7, "authorized": True}}
    async with Client(build_server(stub), mode=mode, elicitation_callback=answers) as c:  # type: ignore[arg-type]
        missing = body(await c.call_tool("memory_govern", call))
        assert missing["error"] == {
            "code": "unavailable",
            "message": "memory_govern confirm is not available yet",
            "field": "action",
        }

    def confirm(memory_id: int, authorization: str = "") -> dict[str, Any]:
        stub.calls.append({"memory_id": memory_id, "authorization": authorization})
        return {"ok": True, "memory_id": memory_id, "protection": "locked"}

    stub.confirm = confirm  # type: ignore[attr-defined]
    async with Client(build_server(stub), mode=mode, elicitation_callback=answers) as c:  # type: ignore[arg-type]
        assert body(await c.call_tool("memory_govern", call))["protection"] == "locked"
    assert stub.calls == [{"memory_id": 7, "authorization": AUTH_USER}]
    assert "#7" in answers.questions[0] and "Deploys freeze" in answers.questions[0]


async def test_a_crash_while_preparing_the_question_refuses_instead_of_skipping_the_user(
    db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stub = Stub(db_path)
    confirmed: list[int] = []

    def read(memory_id: int, **_: Any) -> dict[str, Any]:
        raise RuntimeError("disk on fire")

    stub.read = read  # type: ignore[attr-defined]
    stub.confirm = lambda memory_id, authorization="": confirmed.append(memory_id)  # type: ignore[attr-defined]
    async with Client(build_server(stub), elicitation_callback=Answers()) as c:  # type: ignore[arg-type]
        r = body(
            await c.call_tool("memory_govern", {"action": "confirm", "data": {"memory_id": 3, "authorized": True}})
        )
    assert r["error"]["code"] == "error" and confirmed == []
    assert "disk on fire" in caplog.text and "disk on fire" not in json.dumps(r)


def test_a_method_that_cannot_take_a_validated_field_stops_the_start(db_path: Path) -> None:
    """A field the edge validated is never dropped on the way to the facade: a method without
    it is a mistake the server refuses to start with, not a silent loss on every call."""
    stub = Stub(db_path)

    def conflicts(state: str = "open") -> dict[str, Any]:  # an older signature without `limit`
        return {"ok": True, "conflicts": []}

    stub.conflicts = conflicts  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match=r"conflicts \(memory_review conflicts\) does not accept cursor, limit"):
        build_server(stub)  # type: ignore[arg-type]


async def test_dispatch_hides_crashes(db_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    stub = Stub(db_path)
    seen: dict[str, Any] = {}

    def conflicts(state: str = "open", limit: int = 20, cursor: str | None = None) -> dict[str, Any]:
        seen.update(state=state, limit=limit)
        return {"ok": True, "conflicts": []}

    def doctor() -> dict[str, Any]:
        raise RuntimeError("secret internals /etc/passwd")

    stub.conflicts, stub.doctor = conflicts, doctor  # type: ignore[attr-defined]
    async with Client(build_server(stub)) as c:  # type: ignore[arg-type]
        assert body(await c.call_tool("memory_review", {"view": "conflicts", "data": {"limit": 3}}))["ok"]
        crashed = body(await c.call_tool("memory_review", {"view": "doctor"}))
    assert seen == {"state": "open", "limit": 3}
    assert crashed["error"]["message"] == "internal error (RuntimeError); see the server log"
    assert "secret" not in json.dumps(crashed)
    assert "secret internals" in caplog.text  # the operator still gets the traceback


async def test_pending_work_rides_along_as_one_notice(db_path: Path) -> None:
    stub = Stub(db_path)
    stub.backup_notice = lambda: "2 backed-up events await replay"  # type: ignore[attr-defined]
    async with Client(build_server(stub)) as c:  # type: ignore[arg-type]
        r = body(await c.call_tool("memory", {"action": "status", "data": {"colour": "red"}}))
    assert r["notices"] == ["ignored unknown field(s): colour", "2 backed-up events await replay"]


async def test_long_tasks_report_progress(app: LedgerApp) -> None:
    for i in range(5):
        app.remember(f"fact number {i}")
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async with Client(build_server(app), mode="legacy") as c:
        r = body(await c.call_tool("memory_repair", {"task": "rebuild"}, progress_callback=on_progress))
    assert r["ok"] and r["events"] == 5
    assert progress and progress[-1] == (5, 5)


async def test_an_unnamed_client_is_identified_by_its_client_info(db_path: Path) -> None:
    app = LedgerApp(Settings(db=str(db_path)))  # LEDGER_CLIENT unset
    try:
        info = mcp_types.Implementation(name="cursor", version="1.0")
        async with Client(build_server(app), mode="legacy", client_info=info) as c:
            await c.call_tool("memory", {"action": "remember", "data": {"content": "named by clientInfo"}})
        assert [e.actor for e in app.store.read()] == ["cursor"]
    finally:
        app.close()


async def test_tools_advertise_every_contract_name(app: LedgerApp) -> None:
    async with Client(build_server(app)) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == {"memory", "memory_review", "memory_govern", "memory_repair"}
    enum = {
        name: set(t.input_schema["properties"][key]["enum"])
        for name, t, key in (
            ("memory", tools["memory"], "action"),
            ("memory_review", tools["memory_review"], "view"),
            ("memory_govern", tools["memory_govern"], "action"),
            ("memory_repair", tools["memory_repair"], "task"),
        )
    }
    assert enum["memory"] == {"remember", "find", "read", "update", "reinforce", "judge", "status", "help"}
    assert enum["memory_review"] >= {
        "overview",
        "history",
        "conflicts",
        "conflict_detail",
        "compare",
        "audit",
        "timeline",
        "doctor",
        "help",
    }
    assert enum["memory_govern"] >= {
        "arbitrate",
        "confirm",
        "retire",
        "supersede",
        "resolve_conflict",
        "unlock",
        "accept",
        "reject",
        "help",
    }
    assert enum["memory_repair"] == {"rebuild", "verify", "replay_backup", "reembed", "archive", "sweep", "help"}
    assert tools["memory_review"].annotations.read_only_hint is True
    for tool in tools.values():  # memory: 5000 since conversations, tiers and reinforce (issue 25)
        assert len(json.dumps(tool.input_schema)) < 5000 and len(tool.description or "") < 600


# -- compaction (pure) ----------------------------------------------------------------------------
def find_result(contents: list[str]) -> dict[str, Any]:
    return {
        "ok": True,
        "has_more": False,
        "total_estimate": len(contents),
        "results": [
            {
                "memory_id": i + 1,
                "subject": "s",
                "content": c,
                "tags": ["t"],
                "source_type": "agent_generated",
                "trust": 45,
                "confidence": 0.45,
                "protection": "normal",
                "status": "active",
                "event_time": "2025-01-01T00:00:00.000000Z",
                "recorded_at": "2025-01-01T00:00:00.000000Z",
                "version": 1,
                "source_ref": "",
                "score": 1.23456789,
                "conflict_ids": [],
            }
            for i, c in enumerate(contents)
        ],
    }


def test_find_results_fit_the_budget_and_keep_short_contents_whole() -> None:
    short = "The staging API listens on port 8080"
    long = "background " * 400 + "the answer is 42 " + "trailing " * 400
    out = mcp_compact.compact("memory", "find", find_result([short, long, long, short, long]), query="answer")
    assert mcp_compact.size(out) <= mcp_compact.FIND_BUDGET_BYTES + 100
    results = out["results"]
    assert results[0]["content"] == short and "truncated" not in results[0]
    assert results[1]["truncated"] is True and "the answer is 42" in results[1]["content"]
    assert results[1]["content"].startswith("…")
    assert results[0]["score"] == 1.235
    untouched = mcp_compact.compact("memory", "find", find_result([short] * 5), query="port")
    assert [r["content"] for r in untouched["results"]] == [short] * 5


def test_snippets_cut_on_character_boundaries() -> None:
    text = "记忆" * 2000
    piece = mcp_compact.snippet(text, "", 301)
    assert len(piece.encode("utf-8")) <= 301 and piece.endswith("…")
    body = piece[:-1]
    assert text.startswith(body)  # whole characters only: no half-cut byte sequence dropped or replaced
    assert len(body) == (301 - 6) // 3  # as many 3-byte characters as the budget (less the ellipses) holds


def test_notices_are_merged_deduplicated_and_capped() -> None:
    out = mcp_compact.compact(
        "memory", "remember", {"ok": True, "notices": ["a", "b"]}, notices=["a", "c"], after=["d", "x" * 500]
    )
    assert out["notices"] == ["a", "c", "b"]  # the call's own first, then the result's, then pending work
    long = mcp_compact.compact("memory", "status", {"ok": True}, notices=["x" * 500])["notices"][0]
    assert len(long) == mcp_compact.MAX_NOTICE_CHARS
    assert "notices" not in mcp_compact.compact("memory", "status", {"ok": True, "notices": []})


def test_listed_verdicts_drop_boilerplate_but_compare_keeps_it() -> None:
    verdict = {
        "winner_side": "right",
        "winner_id": 2,
        "loser_id": 1,
        "manual_review": False,
        "rule": "event_time",
        "reasons": ["user_confirmed/locked protection: tie", "event_time: right is newer — this rule decides"],
        "rule_order": ["user_confirmed/locked protection", "event_time", "source_type", "confidence", "ingest_time"],
    }
    remembered = {
        "ok": True,
        "memory_id": 2,
        "version": 1,
        "status": "active",
        "conflicts_total": 1,
        "conflicts": [
            {
                "conflict_id": 3,
                "other_id": 1,
                "claim": {"subject": "api", "attribute": "port", "value": "9090"},
                "verdict": verdict,
            }
        ],
    }
    out = mcp_compact.compact("memory", "remember", remembered)
    brief = out["conflicts"][0]["verdict"]
    assert "rule_order" not in brief and brief["reasons"] == ["event_time: right is newer — this rule decides"]
    assert brief["winner_id"] == 2 and out["conflicts"][0]["claim"] == remembered["conflicts"][0]["claim"]
    assert mcp_compact.size(out) < mcp_compact.size(remembered) - 100
    compared = {"ok": True, "verdict": verdict}
    assert mcp_compact.compact("memory_review", "compare", compared) == compared


def test_the_find_budget_holds_and_pathological_results_stay_bounded() -> None:
    result = find_result(["word " * 300] * 5)
    for item in result["results"]:
        item["subject"], item["tags"] = "deployment pipeline of the billing service", ["infra", "billing", "ci"]
    out = mcp_compact.compact("memory", "find", result, query="word")
    assert mcp_compact.size(out) <= mcp_compact.FIND_BUDGET_BYTES
    assert all(r["truncated"] and len(r["content"]) >= mcp_compact.FLOOR_SNIPPET_BYTES - 6 for r in out["results"])
    huge = find_result(["word " * 300] * 5)
    for item in huge["results"]:
        item["subject"], item["tags"] = "s" * 2000, ["t" * 256] * 100
    out = mcp_compact.compact("memory", "find", huge, query="word")
    assert mcp_compact.size(out) < 6000  # 100 tags of 256 characters each would be 130 kB
    first = out["results"][0]
    assert len(first["subject"]) == mcp_compact.MAX_SUBJECT_CHARS and len(first["tags"]) == 10


@pytest.mark.parametrize("mode", MODES)
async def test_nobody_is_asked_to_approve_a_change_that_cannot_happen(app: LedgerApp, mode: str) -> None:
    """The user was asked "Erase memory #999 for good?" (or to confirm an erased memory as their
    own fact), approved, and the call then answered not_found / invalid_input."""
    answers = Answers(ACCEPT)
    async with Client(build_server(app), mode=mode, elicitation_callback=answers) as c:
        gone = app.remember("a fact to erase")["memory_id"]
        app.erase(gone, reason="test", authorization=AUTH_USER)

        async def govern(action: str, **data: Any) -> dict[str, Any]:
            return body(await c.call_tool("memory_govern", {"action": action, "data": {**data, "authorized": True}}))

        assert (await govern("erase", memory_id=999))["error"]["code"] == "not_found"
        assert (await govern("erase", workspace="nowhere"))["error"]["code"] == "not_found"
        already = await govern("erase", memory_id=gone)
        assert already["error"]["code"] == "invalid_input" and "erased already" in already["error"]["message"]
        assert (await govern("confirm", memory_id=gone))["error"]["code"] == "invalid_input"
        assert answers.questions == []
        kept = app.remember("a fact the user erases")["memory_id"]
        assert (await govern("erase", memory_id=kept))["erased"] == [kept]  # a possible one is asked
        assert len(answers.questions) == 1 and f"#{kept}" in answers.questions[0]


async def test_the_user_is_asked_about_the_memory_promoted_from_a_note_it_erases(app: LedgerApp) -> None:
    """Erasing a promoted note erases the memory promoted from it (its first version is the
    note's words): the question names that memory too, so nobody approves more than they read."""
    answers = Answers(ACCEPT)
    async with Client(build_server(app), elicitation_callback=answers) as c:
        note = app.remember("Vera's locker is 17", session_id="conv", tier="working")["memory_id"]
        promoted = app.promote(note, authorization=AUTH_USER)["promoted_to"]
        data = {"memory_id": note, "authorized": True}
        out = body(await c.call_tool("memory_govern", {"action": "erase", "data": data}))
    assert sorted(out["erased"]) == sorted([note, promoted])
    assert len(answers.questions) == 1 and f"#{promoted}" in answers.questions[0], answers.questions


async def test_the_user_is_asked_about_the_note_a_memory_it_erases_was_promoted_from(app: LedgerApp) -> None:
    """Erasing a memory promoted from a working note erases the note too (it read "promoted"
    with its words gone): the question names the note as the note."""
    answers = Answers(ACCEPT)
    async with Client(build_server(app), elicitation_callback=answers) as c:
        note = app.remember("Vera's locker is 17", session_id="conv", tier="working")["memory_id"]
        promoted = app.promote(note, authorization=AUTH_USER)["promoted_to"]
        data = {"memory_id": promoted, "authorized": True}
        out = body(await c.call_tool("memory_govern", {"action": "erase", "data": data}))
    assert sorted(out["erased"]) == sorted([note, promoted])
    assert f"With it: #{note}, the working note it was promoted from." in answers.questions[0], answers.questions
    assert app.read(note)["memory"]["status"] == "erased"


async def test_the_user_is_asked_about_a_workspace_with_its_aliases_and_its_promotions(app: LedgerApp) -> None:
    """A workspace's erase takes what is recorded under its aliases (a note written as "proj-a"
    and the memory promoted from it): they were left, and the question said only "proja"."""
    answers = Answers(ACCEPT)
    async with Client(build_server(app), elicitation_callback=answers) as c:
        note = app.remember("Vera's locker is 17", session_id="conv", tier="working", workspace="proj-a")["memory_id"]
        promoted = app.promote(note, authorization=AUTH_USER)["promoted_to"]
        own = app.remember("Ivo lives in Quito", workspace="proja")["memory_id"]
        app.accept_alias("proj-a", "proja", authorization=AUTH_USER)
        data = {"workspace": "proja", "authorized": True}
        out = body(await c.call_tool("memory_govern", {"action": "erase", "data": data}))
    assert out["erased"] == [note, promoted, own]
    assert answers.questions == [
        "Erase every memory of workspace 'proja' (and what is recorded as 'proj-a', the same workspace) for good? "
        "Only an Erased record stays."
    ]
    assert app.read(note)["memory"]["status"] == "erased"


async def test_the_user_is_asked_about_the_memory_elsewhere_a_workspace_erase_takes(tmp_path: Path) -> None:
    """A note promoted into a memory held in another workspace (a log written elsewhere): the
    workspace's erase takes that memory too, and the question names it by id and workspace."""
    db = tmp_path / "l.db"
    note, memory = promoted_across(db, note_in="notes", memory_in="proj")
    app = LedgerApp(Settings(db=str(db)))
    answers = Answers(ACCEPT)
    try:
        async with Client(build_server(app), elicitation_callback=answers) as c:
            data = {"workspace": "notes", "authorized": True}
            out = body(await c.call_tool("memory_govern", {"action": "erase", "data": data}))
        assert out["erased"] == [note, memory]
        assert answers.questions == [
            "Erase every memory of workspace 'notes' for good? Only an Erased record stays. With it: "
            f"#{memory} of workspace 'proj', a working note or the memory promoted from it, "
            "tied to one of its memories."
        ]
        assert app.read(memory)["memory"]["status"] == "erased"
    finally:
        app.close()


async def test_what_the_call_itself_got_wrong_is_never_cut_from_the_notices(app: LedgerApp) -> None:
    """With three notices of the write's own (agent_asserted, a target already retired, a field
    beside data), the one naming an ignored unknown field was the fourth and was dropped."""
    async with Client(build_server(app)) as c:
        gone = app.remember("Send the minutes")["memory_id"]
        app.remember("Stop sending the minutes", ref_id=gone, retracts=True)
        data = {"content": "probe", "bar": 2, "source_type": "user_confirmed", "ref_id": gone, "retracts": True}
        r = body(await c.call_tool("memory", {"action": "remember", "subject": "s", "data": data}))
    assert r["ok"] and len(r["notices"]) == 3
    assert any("bar" in n and "unknown" in n for n in r["notices"]), r["notices"]
    assert any("beside data" in n or "under data" in n for n in r["notices"]), r["notices"]


async def test_on_a_path_with_no_ledger_only_a_write_is_told_nothing_was_stored(tmp_path: Path) -> None:
    """``ledger serve --db`` on a mistyped path: ``memory find`` answered "…; nothing was stored",
    which sends a person looking for a write that never was; a write is still told so."""
    db = tmp_path / "none.db"
    app = LedgerApp(Settings(db=str(db), client="test", create=False))
    try:
        async with Client(build_server(app)) as c:
            found = body(await c.call_tool("memory", {"action": "find", "data": {"query": "port"}}))
            wrote = body(await c.call_tool("memory", {"action": "remember", "data": {"content": "The port is 80"}}))
            updated = body(await c.call_tool("memory", {"action": "update", "data": {"memory_id": 5, "content": "x"}}))
    finally:
        app.close()
    assert found["error"]["code"] == "unavailable" and found["error"]["message"].startswith(f"no ledger at {db}; ")
    assert "nothing was stored" not in found["error"]["message"]
    for refused in (wrote, updated):  # a write, refused before or after it was decided
        assert refused["error"]["code"] == "unavailable" and refused["error"]["message"].endswith(
            "; nothing was stored"
        )
    assert not db.exists()


async def test_nobody_is_asked_about_a_locked_memory_no_longer_current_or_a_working_note(app: LedgerApp) -> None:
    """Confirming a working note, or unlocking / retiring a locked memory already retired, asked
    the user first; the call then answered invalid_input."""
    answers = Answers()
    async with Client(build_server(app), elicitation_callback=answers) as c:
        locked = locked_memory(app)
        app.retire(locked, reason="moved", authorization=AUTH_USER)
        note = app.remember("a scratch idea", tier="working", session_id="s1", turn=1)["memory_id"]

        async def govern(action: str, **data: Any) -> dict[str, Any]:
            return body(await c.call_tool("memory_govern", {"action": action, "data": {**data, "authorized": True}}))

        for action, data in (
            ("confirm", {"memory_id": note}),
            ("unlock", {"memory_id": locked}),
            ("retire", {"memory_id": locked, "reason": "again"}),
        ):
            refused = await govern(action, **data)
            assert refused["error"]["code"] == "invalid_input", (action, refused)
        assert answers.questions == []
