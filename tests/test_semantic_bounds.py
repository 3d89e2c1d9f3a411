"""Semantic notices and status's vectors report at their edges: the notices page (its kinds, its
exact-limit page, its cursor, a review and its undoing), status's vectors counts before any vector,
when caught up, when the stored vectors are another model's, while ``ledger serve`` still loads
the model, under strict isolation and with no model at all; and the doctor's count of
confirmations only an agent asserted. The full mutation run found each of these unchecked
(docs/testing.md).

The tiny test model's cosines mean nothing, so every pair of a workspace is made close and every
pair that does not disagree a near-duplicate (tests/test_notices.py explains the thresholds).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.ledger.disagree import DISAGREEMENTS
from fact_ledger.ledger.log.events import AUTH_AGENT, AUTH_USER
from fact_ledger.projections import notices
from fact_ledger.projections.indexer import Indexer
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from tests.conftest import REVIEW

EVERY_PAIR = notices.Thresholds(similarity=-1.0, duplicate_similarity=-1.0)
DB = "ledger.db"
NO_MODEL = "no embedding model installed (ledger model install)"
# Workspace w: a number pair, a date pair, two more that only near-duplicate; x: one memory.
MEMORIES = (
    ("the budget is 50k", "w"),
    ("the budget is 80k", "w"),
    ("the launch is on 2025-07-01", "w"),
    ("the launch is on 2025-07-03", "w"),
    ("the team likes coffee", "w"),
    ("the team likes coffee a lot", "w"),
    ("the budget is 90k", "x"),
)
LATE = ("the city is blue", "x")  # written after the vectors were built: pending


def _model_app(db: Path, model: Path, **kw: Any) -> LedgerApp:
    return LedgerApp(Settings(db=str(db), client="test", policy=REVIEW, embedding=Embedding(model=str(model)), **kw))


@pytest.fixture(scope="module")
def noticed(tmp_path_factory: pytest.TempPathFactory, tiny_gguf: Path) -> Iterator[tuple[LedgerApp, str]]:
    """A ledger whose vectors (and notices) cover MEMORIES, and one memory written since; with
    the id of the model that embedded them."""
    app = _model_app(tmp_path_factory.mktemp("noticed") / DB, tiny_gguf)
    for text, workspace in MEMORIES:
        app.remember(text, workspace=workspace)
    model = app.embedding_model()
    assert model is not None
    Indexer(app.store, model, thresholds=EVERY_PAIR).run()
    app.remember(LATE[0], workspace=LATE[1])
    yield app, model.model_id
    app.close()


def _db(app: LedgerApp) -> Path:
    return Path(app.settings.db)


def _all(app: LedgerApp) -> list[dict[str, Any]]:
    return app.notices(state="all", limit=100)["notices"]


def _ids(rows: list[dict[str, Any]]) -> list[int]:
    return [n["notice_id"] for n in rows]


# -- the notices page ----------------------------------------------------------------------------
def test_the_notices_are_every_pair_of_a_workspace_newest_first(noticed: tuple[LedgerApp, str]) -> None:
    app, _ = noticed
    every = _all(app)
    assert len(every) == 15  # 6 memories of w: 15 pairs; x's lone memory has none
    assert _ids(every) == list(range(15, 0, -1))
    assert {n["workspace"] for n in every} == {"w"}
    kinds = [n["kind"] for n in every]
    assert kinds.count("number") == 1 and kinds.count("date") == 1 and kinds.count("duplicate") == 13
    # the default (open) page holds near-duplicates too, not only disagreements
    assert app.notices(limit=100)["notices"] == every


def test_a_kind_lists_that_kind_only(noticed: tuple[LedgerApp, str]) -> None:
    app, _ = noticed
    every = _all(app)
    [number] = app.notices(kind="number", limit=100)["notices"]
    assert number == next(n for n in every if n["kind"] == "number")
    assert (number["left"]["value"], number["right"]["value"]) == ("50000", "80000")
    [date] = app.notices(kind="date", limit=100)["notices"]
    assert date["kind"] == "date" and date["notice_id"] == next(n for n in every if n["kind"] == "date")["notice_id"]
    duplicates = app.notices(kind="duplicate", limit=100)["notices"]
    assert duplicates == [n for n in every if n["kind"] == "duplicate"] and len(duplicates) == 13


def test_disagreement_lists_every_disagreeing_kind_and_no_duplicate(noticed: tuple[LedgerApp, str]) -> None:
    app, _ = noticed
    found = app.notices(kind="disagreement", limit=100)["notices"]
    assert [n["kind"] for n in found] == ["date", "number"]  # newest first
    assert found == [n for n in _all(app) if n["kind"] in DISAGREEMENTS]


def test_a_page_exactly_as_long_as_the_limit_has_no_more(noticed: tuple[LedgerApp, str]) -> None:
    app, _ = noticed
    page = app.notices(kind="number", limit=1)
    assert len(page["notices"]) == 1 and page["has_more"] is False and page["next_cursor"] is None
    page = app.notices(kind="disagreement", limit=2)
    assert len(page["notices"]) == 2 and page["has_more"] is False and page["next_cursor"] is None
    one = app.notices(kind="disagreement", limit=1)
    assert one["has_more"] is True and one["next_cursor"] == one["notices"][0]["notice_id"]


def test_the_cursor_pages_through_older_notices(noticed: tuple[LedgerApp, str]) -> None:
    app, _ = noticed
    first = app.notices(state="all", limit=6)
    assert _ids(first["notices"]) == list(range(15, 9, -1))
    assert first["has_more"] is True and first["next_cursor"] == 10
    second = app.notices(state="all", limit=6, cursor=first["next_cursor"])
    assert _ids(second["notices"]) == list(range(9, 3, -1)) and second["next_cursor"] == 4
    last = app.notices(state="all", limit=6, cursor=second["next_cursor"])
    assert _ids(last["notices"]) == [3, 2, 1] and last["has_more"] is False and last["next_cursor"] is None
    # a cursor is a notice id: only older ones follow, of the kind asked for
    assert _ids(app.notices(kind="disagreement", cursor=10)["notices"]) == [1]


def test_a_review_answers_the_notice_and_can_be_undone(noticed: tuple[LedgerApp, str]) -> None:
    app, _ = noticed
    [date] = app.notices(kind="date")["notices"]
    reviewed = app.review_notice(date["notice_id"], "dismissed", reason="two launches", authorization=AUTH_USER)
    assert reviewed["ok"] is True
    assert reviewed["notice"] == {**date, "state": "dismissed"}
    assert app.notices(kind="date")["notices"] == []  # no longer open
    assert app.notices(state="dismissed", limit=100)["notices"] == [reviewed["notice"]]
    reopened = app.review_notice(date["notice_id"], "open", authorization=AUTH_AGENT)
    assert reopened == {"ok": True, "notice": date}
    assert app.notices(kind="date")["notices"] == [date]


# -- status's vectors ------------------------------------------------------------------------------
def test_caught_up_vectors_leave_only_later_writes_pending(noticed: tuple[LedgerApp, str]) -> None:
    app, model_id = noticed
    status = app.status()
    assert status["ok"] is True
    vectors = status["vectors"]
    assert vectors["model"] == model_id and vectors["loading"] is False and vectors["problem"] is None
    assert vectors["vectors"] == len(MEMORIES) and vectors["lag"] == app.store.last_position() - vectors["position"]
    assert vectors["pending"] == 1  # LATE, written after the checkpoint; the rest are embedded
    assert app.vectors_status() == vectors


def test_a_status_change_or_an_erasure_awaits_no_embedding(tmp_path: Path, tiny_gguf: Path) -> None:
    """Retiring an embedded memory said "1 memories await embedding", and so did erasing one (an
    erased memory is never embedded again): ``pending`` counted changed rows, not texts."""
    app = _model_app(tmp_path / DB, tiny_gguf)
    try:
        ids = [app.remember(text, workspace=workspace)["memory_id"] for text, workspace in MEMORIES[:3]]
        model = app.embedding_model()
        assert model is not None
        Indexer(app.store, model).run(notices=False)
        assert app.status()["vectors"]["pending"] == 0
        app.retire(ids[0], reason="moved", authorization=AUTH_AGENT)
        app.erase(ids[1], reason="asked", authorization=AUTH_USER)
        assert app.status()["vectors"]["pending"] == 0
        app.update(ids[2], content="the sea is green today")
        assert app.status()["vectors"]["pending"] == 1  # a text changed: that one does await
    finally:
        app.close()


def test_strict_isolation_counts_only_the_callers_vectors(noticed: tuple[LedgerApp, str], tiny_gguf: Path) -> None:
    app, model_id = noticed
    db = _db(app)
    everyone = app.vectors_status()
    w = _model_app(db, tiny_gguf, workspace="w", isolation="strict")
    x = _model_app(db, tiny_gguf, workspace="x", isolation="strict")
    try:
        in_w, in_x = w.status()["vectors"], x.status()["vectors"]
    finally:
        w.close()
        x.close()
    assert in_w["model"] == in_x["model"] == model_id
    assert (in_w["vectors"], in_x["vectors"]) == (6, 1)
    assert in_w["context_vectors"] + in_x["context_vectors"] == everyone["context_vectors"]
    assert (in_w["pending"], in_x["pending"]) == (0, 1)  # LATE is x's
    assert in_w["index_memories"] == in_x["index_memories"] == 0  # no index loaded by these processes
    assert (everyone["vectors"], everyone["pending"]) == (7, 1)


def test_another_models_vectors_leave_every_memory_pending(
    noticed: tuple[LedgerApp, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    from tests.tiny_model import write_tiny_gguf

    app, model_id = noticed
    other_model = write_tiny_gguf(tmp_path_factory.mktemp("other") / "tiny-other.gguf", seed=1)
    other = _model_app(_db(app), other_model)
    try:
        status = other.vectors_status()
    finally:
        other.close()
    assert status["model"] == model_id  # the stored vectors are still the first model's
    assert status["pending"] == len(MEMORIES) + 1  # the configured model has to embed them all
    assert status["vectors"] == len(MEMORIES) and status["problem"] is None


def test_before_any_vector_every_memory_is_pending(sem: LedgerApp) -> None:
    for text, workspace in MEMORIES[:3]:
        sem.remember(text, workspace=workspace)
    assert sem.vectors_status() == {
        "model": None,
        "position": 0,
        "lag": sem.store.last_position(),
        "vectors": 0,
        "section_vectors": 0,
        "context_vectors": 0,
        "index_memories": 0,
        "pending": 3,  # the first memory (event 1) among them
        "loading": False,
        "configured": True,
        "problem": None,
    }


def test_without_a_model_nothing_is_pending_and_there_are_no_notices(app: LedgerApp) -> None:
    app.remember("the budget is 50k")
    app.remember("the budget is 80k")
    expected = {
        "model": None,
        "position": 0,
        "lag": app.store.last_position(),
        "vectors": 0,
        "section_vectors": 0,
        "context_vectors": 0,
        "index_memories": 0,
        "pending": None,  # no model to embed them
        "loading": False,
        "configured": False,
        "problem": NO_MODEL,
    }
    assert app.vectors_status() == expected
    status = app.status()
    assert status["ok"] is True and status["vectors"] == expected and status["memories"] == 2
    assert app.notices() == {"ok": True, "notices": [], "has_more": False, "next_cursor": None}
    assert app.notices(kind="disagreement", cursor=5) == {
        "ok": True,
        "notices": [],
        "has_more": False,
        "next_cursor": None,
    }


def test_while_serve_loads_the_model_pending_is_the_configured_models(
    tmp_path: Path, tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The background load is held where it reads the model digests (a named pipe in place of
    the file), so status is asked while it really is loading."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # a digests file of this test's own
    app = _model_app(tmp_path / DB, tiny_gguf)
    digests = tmp_path / "data" / "fact-ledger" / "models" / "digests.json"
    try:
        for text, workspace in MEMORIES[:2]:
            app.remember(text, workspace=workspace)
        assert app.vectors_status()["pending"] == 2  # reads the model file and records its digest
        assert digests.is_file()
        digests.unlink()
        os.mkfifo(digests)
        done = app.load_model_in_background()
        loading = app.vectors_status()
        assert loading["loading"] is True and loading["problem"] is None
        assert loading["pending"] == 2 and loading["model"] is None
        _release(digests)
        assert done.wait(30)
        loaded = app.vectors_status()
        assert loaded["loading"] is False and loaded["problem"] is None and loaded["pending"] == 2
    finally:
        if digests.exists() and not digests.is_file():  # a failed assertion above: free the load
            with contextlib.suppress(OSError):
                _release(digests)
        app.close()


def _release(fifo: Path) -> None:
    """Let the load read an empty digests file (it then reads the model itself)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO until the load opens it
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)
            continue
        os.write(fd, b"{}")
        os.close(fd)
        return


# -- confirmations only an agent asserted --------------------------------------------------------
def test_doctor_counts_confirmations_only_an_agent_asserted(app: LedgerApp) -> None:
    def check() -> dict[str, Any]:
        [found] = [c for c in app.doctor()["checks"] if c["name"] == "agent_asserted_confirmations"]
        return found

    assert check()["severity"] == "ok"
    by_user = app.remember("the office wifi is guest-5g")["memory_id"]
    app.confirm(by_user, authorization=AUTH_USER)
    assert check()["severity"] == "ok"
    for text in ("the prod region is eu-west-1", "the staging port is 8080"):
        app.confirm(app.remember(text)["memory_id"], authorization=AUTH_AGENT)
    found = check()
    assert found["severity"] == "warning" and found["count"] == 2
    assert found["message"].startswith("2 user_confirmed fact(s) were confirmed only by an agent")
