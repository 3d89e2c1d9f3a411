"""A short memory in a session gets a second vector over the memory before it and itself.

Real llama.cpp with the tiny random-weight GGUF: its vectors carry no meaning, so the tests
check which passages are embedded (each stored context vector must equal the model's embedding
of :func:`vectors.context_passage` of the session's previous memory and the memory), that they
follow edits of either memory, that a query sitting exactly on a context vector finds the memory
through that vector alone, and that the filters reach context candidates as they reach the
others.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fact_ledger.projections import hybrid, knn, vectors
from fact_ledger.projections.indexer import Indexer
from fact_ledger.projections.search.queries import SearchFilters
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

NONSENSE = "qqzx vvkw"  # no memory contains these words
AT = "2025-05-08T13:00:00Z"


def _app(db: Path, model: Path, **extra: Any) -> LedgerApp:
    return LedgerApp(Settings(db=str(db), client="test", embedding=Embedding(model=str(model)), **extra))


@pytest.fixture
def sem(tmp_path: Path, tiny_gguf: Path) -> Any:
    app = _app(tmp_path / "ledger.db", tiny_gguf)
    yield app
    app.close()


def _contexts(app: LedgerApp) -> dict[int, bytes]:
    return {m: bytes(e) for m, e in app.conn.execute("SELECT memory_id, embedding FROM context_vectors")}


def _embedded(app: LedgerApp, text: str) -> bytes:
    model = app.embedding_model()
    assert model is not None
    return model.embed_passages([text])[0]


def test_context_passage_is_the_previous_memory_then_this_one_for_short_memories() -> None:
    assert vectors.context_passage("How long have you been MARRIED? ", "5 years already!") == (
        "how long have you been married?\n5 years already!"
    )
    assert vectors.context_passage("question", "x" * (vectors.CONTEXT_MAX_CHARS + 1)) is None


def test_a_short_memory_in_a_session_is_embedded_with_the_one_before_it(sem: LedgerApp) -> None:
    question = sem.remember("Melanie: How long have you been married?", event_time=AT)["memory_id"]
    answer = sem.remember("Caroline: 5 years already!", event_time=AT)["memory_id"]
    elsewhere = sem.remember("a note of another workspace", workspace="other", event_time=AT)["memory_id"]
    later = sem.remember("Caroline: a day later", workspace="other", event_time="2025-05-09T13:00:00Z")["memory_id"]
    long = sem.remember(
        "word " * (vectors.CONTEXT_MAX_CHARS // 4), workspace="other", event_time="2025-05-09T13:01:00Z"
    )
    result = sem.reembed()
    assert result["embedded"] == 5 and result["context_embedded"] == 1
    stored = _contexts(sem)
    # The first of a session, one after another workspace's memory, one after a long gap and a
    # long memory have none; the reply has the question before it.
    assert set(stored) == {answer}
    assert question not in stored and elsewhere not in stored and later not in stored
    assert long["memory_id"] not in stored
    expected = vectors.context_passage("Melanie: How long have you been married?", "Caroline: 5 years already!")
    assert expected is not None and stored[answer] == _embedded(sem, expected)
    assert sem.vectors_status()["context_vectors"] == 1


def test_context_vectors_follow_edits_of_either_memory(sem: LedgerApp) -> None:
    first = sem.remember("Melanie: what is the budget?", event_time=AT)["memory_id"]
    second = sem.remember("Caroline: fifty thousand", event_time=AT)["memory_id"]
    third = sem.remember("Melanie: and the deadline?", event_time=AT)["memory_id"]
    sem.reembed()
    before = _contexts(sem)
    assert set(before) == {second, third}
    sem.update(first, content="Melanie: what is the travel budget?")
    result = sem.reembed()  # the edited memory's own vector, and the context of the one after it
    assert result["embedded"] == 1 and result["context_embedded"] == 1
    after = _contexts(sem)
    assert after[third] == before[third] and after[second] != before[second]
    edited = vectors.context_passage("Melanie: what is the travel budget?", "Caroline: fifty thousand")
    assert edited is not None and after[second] == _embedded(sem, edited)
    sem.update(second, content="Caroline: " + "a long answer " * 40)  # now too long for a context
    sem.reembed()
    assert set(_contexts(sem)) == {third}
    scan = knn.index_for(sem.conn, contexts=True)  # the in-process bits follow the deletion
    assert scan.blends is not None
    own = {m: bytes(e) for m, e in sem.conn.execute("SELECT memory_id, embedding FROM vectors")}
    assert (scan.blends.bits[:, scan.slot[second]] == scan.code([own[second]])[:, 0]).all()  # its own alone
    mean = (np.frombuffer(own[third], dtype=np.float32) + np.frombuffer(_contexts(sem)[third], dtype=np.float32)) / 2
    assert (scan.blends.bits[:, scan.slot[third]] == scan.code([mean.tobytes()])[:, 0]).all()
    sem.retire(first, reason="obsolete", authorization="user_channel")
    assert sem.reembed()["context_embedded"] == 0  # a status change embeds nothing


def test_a_rebuild_reuses_cached_context_embeddings(sem: LedgerApp) -> None:
    for i in range(6):
        sem.remember(f"Caroline: turn {i} of the talk", event_time=AT)
    sem.reembed()
    checksum = vectors.content_checksum(sem.conn)

    class Counting:
        def __init__(self, inner: Any) -> None:
            self.inner, self.model_id, self.dim, self.calls = inner, inner.model_id, inner.dim, 0

        def embed_passages(self, texts: list[str]) -> list[bytes]:
            self.calls += len(texts)
            return self.inner.embed_passages(texts)

    counting = Counting(sem.embedding_model())
    result = Indexer(sem.store, counting).run(rebuild=True)
    assert counting.calls == 0 and result["context_embedded"] == 0
    assert len(_contexts(sem)) == 5 and vectors.content_checksum(sem.conn) == checksum


def test_an_erased_memory_gets_no_context_vector_from_a_rebuild(sem: LedgerApp) -> None:
    """``reembed --rebuild`` after an erasure gave the erased memory a context vector again (its
    text "[erased]" after the memory before it): 19 context vectors for 18 vectors."""
    from fact_ledger.ledger.log.events import AUTH_USER

    ids = [sem.remember(f"Caroline: turn {i} of the talk", event_time=AT)["memory_id"] for i in range(4)]
    sem.reembed()
    sem.erase(ids[2], reason="asked", authorization=AUTH_USER)
    assert ids[2] not in _contexts(sem)
    sem.reembed(rebuild=True)
    # Nor the memory after it one of the erased text: the erasure dropped it (the incremental state).
    assert ids[2] not in _contexts(sem) and set(_contexts(sem)) == {ids[1]}


def test_a_rebuild_after_an_erasure_gives_the_incremental_state_and_never_embeds_the_placeholder(
    sem: LedgerApp,
) -> None:
    """The memory after an erased one had its context (the erased text) dropped by the erasure,
    but a rebuild embedded it again from the placeholder: "[erased]\nyes that one"."""
    from fact_ledger.ledger.log.events import AUTH_USER
    from fact_ledger.projections import derived

    erased = sem.remember("Alice codeword zebrafish", event_time=AT)["memory_id"]
    after = sem.remember("Yes that one", event_time=AT)["memory_id"]
    sem.reembed()
    assert set(_contexts(sem)) == {after}
    sem.erase(erased, reason="asked", authorization=AUTH_USER)
    sem.reembed()
    incremental = vectors.content_checksum(sem.conn)
    assert _contexts(sem) == {}
    model = sem.embedding_model()
    assert model is not None
    placeholder = derived.embedding_key(model.model_id, "[erased]\nyes that one")
    rebuilt = sem.rebuild("vectors")["vectors"]
    assert _contexts(sem) == {} and rebuilt["context_embedded"] == 0
    assert vectors.content_checksum(sem.conn) == incremental
    assert sem.conn.execute("SELECT count(*) FROM derived_cache WHERE key = ?", (placeholder,)).get == 0
    # An edit of the memory after it does not bring the placeholder back either.
    sem.update(after, content="Yes that one, the blue one")
    sem.reembed()
    assert _contexts(sem) == {}


def test_a_memory_in_context_is_as_close_as_the_mean_of_its_two_vectors(sem: LedgerApp) -> None:
    question = sem.remember("Melanie: How long have you been married?", event_time=AT)["memory_id"]
    answer = sem.remember("Caroline: 5 years already!", event_time=AT)["memory_id"]
    for i in range(8):
        sem.remember(f"note {i}: the deploy window of service s{i} is {i} pm", event_time=f"2024-01-0{i + 1}T00:00:00Z")
    sem.reembed()
    on_context = _contexts(sem)[answer]
    own = knn.cosines(sem.conn, on_context, [answer, question])
    pooled = hybrid.candidates(sem.conn, NONSENSE, SearchFilters(), 10, on_context)
    assert not pooled.text  # no word of the query is in any memory: meaning alone found them
    assert answer in pooled.nearest
    # The answer has a context vector (the query sits on it): the mean of both cosines; the
    # question opens the session and has none: its own cosine.
    assert pooled.similarity[answer] == pytest.approx((own[answer] + 1.0) / 2, abs=5e-3)  # int8 blends
    assert pooled.similarity[question] == pytest.approx(own[question], abs=5e-3)


def test_context_vectors_obey_the_filters(tmp_path: Path, tiny_gguf: Path) -> None:
    app = _app(tmp_path / "ledger.db", tiny_gguf)
    try:
        pairs = {}
        for i, space in enumerate(("alpha", "beta", "alpha")):
            app.remember(f"{space}: what did you decide about {i}?", workspace=space, event_time=AT)
            pairs.setdefault(space, []).append(
                app.remember(f"{space}: we go ahead with {i}", workspace=space, event_time=AT)["memory_id"]
            )
        retired = pairs["alpha"][1]
        app.retire(retired, reason="obsolete", authorization="user_channel")
        app.reembed()
        stored = _contexts(app)
        assert set(stored) == {*pairs["alpha"], *pairs["beta"]}
        active = {m for (m,) in app.conn.execute("SELECT memory_id FROM memories WHERE status = 'active'")}
        in_alpha = {m for (m,) in app.conn.execute("SELECT memory_id FROM memories WHERE workspace = 'alpha'")}
        on_theirs = stored[pairs["beta"][0]]
        everywhere, _ = hybrid.memories_near(app.conn, on_theirs, SearchFilters(), 50)
        assert {m for m, _ in everywhere} == active and retired not in active  # retired: filtered by status
        inside, _ = hybrid.memories_near(app.conn, on_theirs, SearchFilters(workspace=("alpha",)), 50)
        assert {m for m, _ in inside} == active & in_alpha
        # The scan itself only scores the caller's workspace.
        scan = knn.index_for(app.conn, contexts=True)
        assert set(scan.nearest_in_context(on_theirs, 50, ("alpha",))) == in_alpha
    finally:
        app.close()


def test_a_text_candidate_the_scan_missed_gets_its_exact_closeness(
    sem: LedgerApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(6):
        sem.remember(f"note {i}: the deploy window of service s{i} is {i} pm", event_time=AT)
    target = sem.remember("Caroline: the quarterly budget review moved", event_time=AT)["memory_id"]
    sem.reembed()
    own = {m: bytes(e) for m, e in sem.conn.execute("SELECT memory_id, embedding FROM vectors")}
    query = own[1]  # sits on memory 1: the scan's single candidate
    monkeypatch.setattr(knn, "OVERSAMPLE", 1)
    pooled = hybrid.candidates(sem.conn, "quarterly budget", SearchFilters(), 1, query)
    assert pooled.nearest == [1] and set(pooled.text) == {target}
    mine = np.frombuffer(own[target], dtype=np.float32)
    theirs = np.frombuffer(_contexts(sem)[target], dtype=np.float32)  # it follows a note in its session
    q = np.frombuffer(query, dtype=np.float32)
    assert pooled.similarity[target] == pytest.approx(float(q @ mine + q @ theirs) / 2, abs=1e-3)


def test_a_first_find_in_a_workspace_with_no_memory_answers_empty(tmp_path: Path, tiny_gguf: Path) -> None:
    """A fresh index asked first about a scope that holds no row: no result, not an IndexError
    (the scan's reusable buffers started empty and looked the right width for none)."""
    app = _app(tmp_path / "ledger.db", tiny_gguf)
    try:
        app.remember("alpha: we go ahead with the launch", workspace="alpha", event_time=AT)
        app.reembed()
        fresh = knn.BitIndex("vectors")
        fresh.refresh(app.conn, contexts=True)
        assert fresh.nearest_in_context(_embedded(app, "the launch"), 10, ("nowhere",)) == []
        assert fresh.nearest_in_context(_embedded(app, "the launch"), 10, ("alpha",))  # the buffers still work
        assert app.find("launch", workspace="nowhere")["results"] == []
    finally:
        app.close()
