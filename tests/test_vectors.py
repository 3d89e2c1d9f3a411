"""The vectors read model on the real llama-cpp-python path (a tiny random-weight GGUF).

The tiny model's embeddings carry no meaning, so these tests check what does not depend on
meaning: vectors follow the log asynchronously (worker, lag, resumable reembed), a rebuild
reuses cached embeddings and gives the same content, every filter reaches the vector candidates
(strict isolation never leaks), a missing or corrupt model degrades to full text without
failing a write, and exact wording stays on top.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.projections import hybrid, vectors
from fact_ledger.projections.indexer import Indexer
from fact_ledger.projections.search.queries import SearchFilters
from fact_ledger.server.app import semantic as semantic_service
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings
from fact_ledger.server.doctor import run_checks

NONSENSE = "qqzx vvkw"  # no memory contains these words: every result comes from the vectors


def _app(db: Path, model: str | None, **extra: Any) -> LedgerApp:
    return LedgerApp(
        Settings(db=str(db), client="test", embedding=Embedding(model=model or "", enabled=bool(model)), **extra)
    )


@pytest.fixture
def sem(tmp_path: Path, tiny_gguf: Path) -> Any:
    app = _app(tmp_path / "ledger.db", str(tiny_gguf))
    yield app
    app.close()


def _fill(app: LedgerApp, n: int = 12, start: int = 0, **kwargs: Any) -> list[int]:
    return [
        app.remember(f"note {i}: the deploy window of service s{i} is {i} pm", **kwargs)["memory_id"]
        for i in range(start, start + n)
    ]


class Counting:
    """The shared model, with its passage calls counted (the real model still runs)."""

    def __init__(self, inner: Any, stop_after: int | None = None) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.calls = 0
        self.stop_after = stop_after
        self.stop = threading.Event()

    def embed_passages(self, texts: list[str]) -> list[bytes]:
        self.calls += len(texts)
        if self.stop_after is not None and self.calls >= self.stop_after:
            self.stop.set()
        return self.inner.embed_passages(texts)


# -- asynchronous upkeep ---------------------------------------------------------------------------
def test_writes_land_without_vectors_and_reembed_catches_up(sem: LedgerApp) -> None:
    ids = _fill(sem, 5)
    status = sem.status()
    assert status["vectors"]["vectors"] == 0 and status["vectors"]["lag"] > 0  # the write path never embeds
    assert status["search_mode"] == "fts"  # no vectors of this model yet
    assert sem.find("deploy window")["results"]  # full text finds every write at once
    result = sem.reembed()
    assert result["memories"] == 5 and result["embedded"] == 5 and result["lag"] == 0
    status = sem.status()
    assert status["search_mode"] == "vector+fts"
    assert status["vectors"]["vectors"] == 5 and status["vectors"]["lag"] == 0
    found = sem.find(NONSENSE, limit=5)["results"]
    assert {r["memory_id"] for r in found} <= set(ids) and len(found) == 5


def test_the_worker_embeds_after_commit(sem: LedgerApp) -> None:
    _fill(sem, 3)
    sem.reembed()
    assert sem.start_vector_worker()
    _fill(sem, 4, start=3)
    deadline = time.monotonic() + 60
    while sem.vectors_status()["lag"] and time.monotonic() < deadline:
        time.sleep(0.05)
    status = sem.vectors_status()
    assert status["lag"] == 0 and status["vectors"] == 7


def test_reembed_is_resumable(sem: LedgerApp) -> None:
    _fill(sem, 40)
    Indexer(sem.store, sem.embedding_model()).prepare()  # the model's centre, once per generation
    model = Counting(sem.embedding_model(), stop_after=16)
    first = Indexer(sem.store, model, batch=8).run(stop=model.stop)
    assert 0 < first["memories"] < 40 and sem.vectors_status()["lag"] > 0
    rest = Indexer(sem.store, Counting(sem.embedding_model()), batch=8).run()
    assert first["embedded"] + rest["embedded"] == 40  # nothing embedded twice
    assert sem.vectors_status()["lag"] == 0 and sem.vectors_status()["vectors"] == 40


def test_a_status_change_does_not_embed_again(sem: LedgerApp) -> None:
    ids = _fill(sem, 3)
    sem.reembed()
    sem.retire(ids[0], reason="obsolete", authorization="user_channel")
    assert sem.reembed()["embedded"] == 0
    sem.update(ids[1], content="the deploy window of s1 moved to 9 pm")
    assert sem.reembed()["embedded"] == 1


def test_rebuild_reuses_cached_embeddings_and_is_deterministic(sem: LedgerApp) -> None:
    _fill(sem, 10)
    sem.update(3, content="an edited note about the release train")
    sem.reembed()
    before = vectors.content_checksum(sem.conn)
    model = Counting(sem.embedding_model())
    result = Indexer(sem.store, model).run(rebuild=True)
    assert model.calls == 0 and result["embedded"] == 0 and result["cached"] == 10
    assert vectors.content_checksum(sem.conn) == before
    assert sem.rebuild("vectors")["vectors"]["embedded"] == 0
    assert vectors.content_checksum(sem.conn) == before


# -- filters on vector candidates ------------------------------------------------------------------
def test_strict_isolation_never_leaks_vector_candidates(tmp_path: Path, tiny_gguf: Path) -> None:
    db = tmp_path / "ledger.db"
    writer = _app(db, str(tiny_gguf))
    mine = [writer.remember(f"alpha note {i}", workspace="alpha")["memory_id"] for i in range(5)]
    theirs = [writer.remember(f"beta note {i}", workspace="beta")["memory_id"] for i in range(20)]
    writer.reembed()
    writer.close()
    strict = _app(db, str(tiny_gguf), workspace="alpha", isolation="strict")
    try:
        assert strict.search_mode() == "vector+fts"
        found = strict.find(NONSENSE, limit=20)["results"]
        assert {r["memory_id"] for r in found} == set(mine)
        # Even before SQL filtering, the scan only scores the caller's workspace.
        model = strict.embedding_model()
        assert model is not None
        query = strict.semantic._query_vector(model, NONSENSE)
        near = dict(hybrid.vector_candidates(strict.conn, query, SearchFilters(workspace=("alpha",)), 20))
        assert set(near) == set(mine)
        unfiltered = dict(hybrid.vector_candidates(strict.conn, query, SearchFilters(), 25))
        assert set(unfiltered) & set(theirs)  # the filter, not the data, kept them out
    finally:
        strict.close()


def test_every_filter_applies_to_vector_candidates(sem: LedgerApp) -> None:
    tagged = [
        sem.remember(f"tagged {i}", tags=["ops"], source_type="document_extracted", event_time="2024-03-01T00:00:00Z")[
            "memory_id"
        ]
        for i in range(4)
    ]
    plain = [sem.remember(f"plain {i}", event_time="2023-01-01T00:00:00Z")["memory_id"] for i in range(8)]
    retired = sem.remember(
        "tagged but retired", tags=["ops"], source_type="document_extracted", event_time="2024-03-02T00:00:00Z"
    )["memory_id"]
    sem.retire(retired, reason="obsolete", authorization="user_channel")
    sem.reembed()
    everything = {r["memory_id"] for r in sem.find(NONSENSE, limit=50)["results"]}
    assert set(plain) <= everything and retired not in everything
    cases = [
        ({"tags_filter": ["ops"]}, set(tagged)),
        ({"source_type": "document_extracted"}, set(tagged)),
        ({"after_time": "2024-01-01T00:00:00Z"}, set(tagged)),
        ({"before_time": "2023-06-01T00:00:00Z"}, set(plain)),
        ({"include_inactive": True, "tags_filter": ["ops"]}, {*tagged, retired}),
    ]
    for kwargs, expected in cases:
        got = {r["memory_id"] for r in sem.find(NONSENSE, limit=50, **kwargs)["results"]}
        assert got == expected, kwargs


def test_a_verbatim_phrase_stays_on_top(sem: LedgerApp) -> None:
    _fill(sem, 30)
    target = sem.remember("the quarterly budget review moved to the blue meeting room")["memory_id"]
    sem.reembed()
    found = sem.find("budget review moved to the blue meeting room", limit=10)["results"]
    assert found[0]["memory_id"] == target


# -- degradation -----------------------------------------------------------------------------------
@pytest.mark.parametrize("problem", ["missing", "corrupt"])
def test_a_broken_model_never_fails_a_write(tmp_path: Path, problem: str) -> None:
    model = tmp_path / "model.gguf"
    if problem == "corrupt":
        model.write_bytes(b"GGUF" + b"\x00garbage" * 64)
    app = _app(tmp_path / "ledger.db", str(model))
    try:
        memory_id = app.remember("the staging API listens on port 8080")["memory_id"]
        assert app.find("staging port")["results"][0]["memory_id"] == memory_id
        status = app.status()
        assert status["search_mode"] == "fts" and status["vectors"]["problem"]
        check = next(c for c in run_checks(app)["checks"] if c["name"] == "semantic_search")
        assert check["severity"] == "warning"
        first, second = app.semantic_notice(), app.semantic_notice()
        assert first and "semantic search off" in first and second is None  # said once
        with pytest.raises(Exception, match="no embedding model"):
            app.reembed()
    finally:
        app.close()


def test_a_working_model_without_its_vectors_yet_says_what_to_run(tmp_path: Path, tiny_gguf: Path) -> None:
    """A one-shot CLI process embeds nothing: doctor said "search: fts only: None"."""
    app = _app(tmp_path / "ledger.db", str(tiny_gguf))
    try:
        app.remember("the staging API listens on port 8080")
        check = next(c for c in run_checks(app)["checks"] if c["name"] == "semantic_search")
        assert check["severity"] == "warning" and "None" not in check["message"]
        assert "not yet embedded" in check["message"] and "ledger reembed" in check["message"], check
        app.reembed()
        check = next(c for c in run_checks(app)["checks"] if c["name"] == "semantic_search")
        assert check["severity"] == "ok" and check["message"].startswith("search: vector+fts"), check
    finally:
        app.close()


def test_a_model_with_damaged_weights_is_off_and_stores_no_vector(tmp_path: Path) -> None:
    """Its header reads right and llama.cpp loads it, but its vectors are NaN: ``reembed`` was a
    traceback, NaN vectors were stored, and status and doctor said all was well."""
    from tests.conftest import ledger_cli
    from tests.tiny_model import write_damaged_gguf

    model = write_damaged_gguf(tmp_path / "damaged.gguf")
    app = _app(tmp_path / "ledger.db", str(model))
    try:
        memory_id = app.remember("the staging API listens on port 8080")["memory_id"]
        assert app.find("staging port")["results"][0]["memory_id"] == memory_id  # full text answers
        status = app.status()
        assert status["search_mode"] == "fts" and "not a number" in status["vectors"]["problem"], status["vectors"]
        check = next(c for c in run_checks(app)["checks"] if c["name"] == "semantic_search")
        assert check["severity"] == "warning" and "not a number" in check["message"]
        with pytest.raises(Exception, match="no embedding model"):
            app.reembed()
        assert app.status()["vectors"]["vectors"] == 0  # nothing stored
    finally:
        app.close()
    cli = ledger_cli("reembed", "--db", str(tmp_path / "ledger.db"), env={"LEDGER_EMBEDDING_MODEL": str(model)})
    assert cli.returncode == 5 and "Traceback" not in cli.stderr and "not a number" in cli.stderr, cli.stderr


def test_cli_status_names_a_damaged_model_once_a_load_found_it(tmp_path: Path) -> None:
    """``reembed`` exits 5 on a model whose weights give NaN, yet a later ``ledger status`` (a
    process that does not load the model) said N memories "await embedding … by ledger
    reembed" with ``problem: null``, while doctor and MCP status named the problem. What a load
    found is recorded by the file's digest: status names it without loading the model."""
    import json

    from click.testing import CliRunner

    from fact_ledger.server.cli.main import main
    from tests.tiny_model import write_damaged_gguf

    model = write_damaged_gguf(tmp_path / "damaged.gguf")
    db = tmp_path / "ledger.db"

    def cli(*args: str) -> Any:
        return CliRunner().invoke(main, ["--db", str(db), *args], env={"LEDGER_EMBEDDING_MODEL": str(model)})

    assert cli("remember", "the staging API listens on port 8080").exit_code == 0
    assert cli("reembed").exit_code == 5
    status = json.loads(cli("--json", "status").stdout)
    assert status["search_mode"] == "fts" and "not a number" in (status["vectors"]["problem"] or ""), status
    assert status["vectors"]["pending"] is None  # this model embeds nothing: nothing awaits it
    human = cli("status").stdout
    assert "semantic search off: " in human and "not a number" in human and "await embedding" not in human
    write_damaged_gguf(model)  # written again (another time): a load must find out anew
    assert json.loads(cli("--json", "status").stdout)["vectors"]["problem"] is None


def test_a_model_file_overwritten_in_place_is_neither_used_nor_lent(tmp_path: Path) -> None:
    """``ledger serve`` maps the model file: copied over in place, its weights changed under the
    loaded model, whose vectors then matched neither model and were stored (and cached, and lent
    to CLI finds) under the old model's id. Now every embedding checks the file first: the
    worker stops and says why, nothing is stored or cached, the lender answers nothing (the CLI
    loads the model itself) and find answers from full text."""
    from fact_ledger.projections import derived
    from fact_ledger.server.app.model_lender import borrow_query_vector
    from tests.tiny_model import write_tiny_gguf

    model = write_tiny_gguf(tmp_path / "model.gguf")
    other = write_tiny_gguf(tmp_path / "other.gguf", seed=1)
    assert model.stat().st_size == other.stat().st_size and model.read_bytes() != other.read_bytes()
    app = _app(tmp_path / "ledger.db", str(model))
    try:
        app.remember("the staging API listens on port 8080")
        app.reembed()
        assert app.lend_model() and app.start_vector_worker()
        assert borrow_query_vector(app.storage.views_path, "staging port") is not None
        model_id = app.embedding_model().model_id
        with open(model, "r+b") as handle:  # ``cp other.gguf model.gguf``: the same inode, rewritten
            handle.write(other.read_bytes())
        memory_id = app.remember("the budget meeting moved to friday")["memory_id"]
        deadline = time.monotonic() + 20
        while "changed on disk" not in (app.vectors_status()["problem"] or "") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "changed on disk" in (app.vectors_status()["problem"] or ""), app.vectors_status()
        assert app.vectors_status()["vectors"] == 1  # nothing stored for the new memory
        passage = vectors.passage_text("the budget meeting moved to friday")
        key = derived.embedding_key(model_id, passage)
        assert app.conn.execute("SELECT count(*) FROM derived_cache WHERE key = ?", (key,)).get == 0  # nor cached
        assert borrow_query_vector(app.storage.views_path, "budget meeting") is None  # nor lent
        assert app.find("budget meeting")["results"][0]["memory_id"] == memory_id  # full text answers
        assert app.search_mode() == "fts"
        with pytest.raises(Exception, match="changed on disk"):
            app.reembed()
    finally:
        app.close()


def test_no_model_configured_is_plain_full_text(tmp_path: Path) -> None:
    app = _app(tmp_path / "ledger.db", None)
    try:
        app.remember("a fact")
        assert app.status()["search_mode"] == "fts"
        assert app.semantic_notice() is None  # nothing was asked for, nothing to announce
        check = next(c for c in run_checks(app)["checks"] if c["name"] == "semantic_search")
        assert check["severity"] == "info"
    finally:
        app.close()


# -- a query embedding that fails -------------------------------------------------------------------
def test_a_query_embedding_that_fails_answers_from_full_text(sem: LedgerApp, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _fill(sem, 4)
    sem.reembed()
    model = sem.embedding_model()
    assert model is not None

    def broken(text: str) -> bytes:
        raise RuntimeError("decode failed")

    monkeypatch.setattr(model, "embed_query", broken)
    found = sem.find("deploy window of service s2", limit=3)["results"]
    assert found[0]["memory_id"] == ids[2]
    status = sem.status()
    assert status["search_mode"] == "fts" and "decode failed" in status["vectors"]["problem"]


def test_a_missing_explicit_database_starts_no_worker_and_loads_no_model(tmp_path: Path, tiny_gguf: Path) -> None:
    # `ledger serve` on a mistyped --db starts, says so and refuses writes; with a model set it
    # used to die starting the vectors worker (a traceback instead of a server).
    app = _app(tmp_path / "nowhere" / "ledger.db", str(tiny_gguf), create=False)
    try:
        assert app.start_vector_worker() is False
        assert app.warm_search() is False
        assert app.semantic._model is None and not app.semantic._model_tried  # nothing to embed for
        assert app.status()["ok"] is True
    finally:
        app.close()
    assert not (tmp_path / "nowhere").exists()


def test_the_reply_notice_does_not_look_for_the_model_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a model was configured is decided with the load it is about: every MCP reply asks
    for the notice, and asking the configuration again stats the default model file each time."""
    app = LedgerApp(Settings(db=str(tmp_path / "ledger.db"), client="test"))  # no model installed
    try:
        app.remember("the staging API listens on port 8080")
        assert app.semantic_notice() is None  # no model: nothing to say, and the load was tried
        looked: list[Settings] = []
        monkeypatch.setattr(semantic_service, "_model_configured", lambda settings: looked.append(settings) or False)
        for _ in range(5):
            app.remember("the staging API listens on port 8080 again")
            assert app.semantic_notice() is None
        assert looked == []
    finally:
        app.close()
