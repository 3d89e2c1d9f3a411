"""Sections of long memories get their own vectors (tiny random-weight GGUF, real llama.cpp).

The tiny model's vectors carry no meaning, so a query is made to sit exactly on one section's
vector (its stored embedding is used as the query vector): that section must then be the
memory's match by meaning, found through the section vectors alone (the query's words are in
no memory), and ``find`` must answer with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fact_ledger.projections import hybrid, knn, vectors
from fact_ledger.projections.indexer import Indexer
from fact_ledger.projections.search.queries import SearchFilters
from fact_ledger.projections.sections import catalog
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

NONSENSE = "qqzx vvkw"
THRESHOLD = 400


def _doc(topic: str) -> str:
    """A Markdown document of four sections, each long enough to be its own section."""
    parts = []
    for i, heading in enumerate(("Install", "Configure", "Operate", "Retire")):
        body = " ".join(f"{topic} step {i}.{j} covers the {heading.lower()} work in detail." for j in range(6))
        parts.append(f"## {heading}\n\n{body}\n")
    return "\n".join(parts)


def _app(db: Path, model: Path, **extra: Any) -> LedgerApp:
    return LedgerApp(
        Settings(db=str(db), client="test", embedding=Embedding(model=str(model)), section_threshold=THRESHOLD, **extra)
    )


@pytest.fixture
def sem(tmp_path: Path, tiny_gguf: Path) -> Any:
    app = _app(tmp_path / "ledger.db", tiny_gguf)
    yield app
    app.close()


def _section_vectors(app: LedgerApp, memory_id: int) -> dict[int, bytes]:
    return {
        rowid & ((1 << 20) - 1): bytes(blob)
        for rowid, blob in app.conn.execute(
            "SELECT section_rowid, embedding FROM section_vectors WHERE memory_id=? ORDER BY section_rowid",
            (memory_id,),
        )
    }


def test_every_section_of_a_long_memory_is_embedded_with_its_heading(sem: LedgerApp) -> None:
    content = _doc("the gateway")
    long_id = sem.remember(content)["memory_id"]
    sem.remember("a short note stays whole")
    sem.reembed()
    sections = catalog(sem.conn, long_id)
    assert len(sections) >= 4
    stored = _section_vectors(sem, long_id)
    assert sorted(stored) == [s.section_id for s in sections]
    model = sem.embedding_model()
    assert model is not None
    for s in sections:
        text = vectors.section_passage(content, s.heading_path, s.start, s.end)
        assert text.startswith(" › ".join(s.heading_path).lower())
        assert stored[s.section_id] == model.embed_passages([text])[0]
    assert sem.vectors_status()["section_vectors"] == len(sections)  # the short memory has none


def test_find_answers_with_the_section_nearest_in_meaning(sem: LedgerApp) -> None:
    long_id = sem.remember(_doc("the gateway"))["memory_id"]
    for i in range(6):
        sem.remember(f"note {i}: the deploy window of service s{i} is {i} pm")
    sem.reembed()
    target = 3
    on_section = _section_vectors(sem, long_id)[target]
    pooled = hybrid.candidates(sem.conn, NONSENSE, SearchFilters(), 10, on_section)
    assert not pooled.text  # no word of the query is in any memory: meaning alone found it
    assert pooled.section[long_id] == target and pooled.similarity[long_id] == pytest.approx(1.0, abs=1e-5)
    sem.semantic._query_vector(sem.embedding_model(), NONSENSE)
    sem.semantic._query_vectors[NONSENSE] = on_section  # the query sits exactly on section 3's vector
    top = sem.find(NONSENSE, limit=3)["results"][0]
    assert top["memory_id"] == long_id
    assert top["section"]["section_id"] == target
    chosen = catalog(sem.conn, long_id)[target - 1]
    assert top["content"] == _doc("the gateway")[chosen.start : chosen.end]


def test_section_vectors_obey_the_filters(tmp_path: Path, tiny_gguf: Path) -> None:
    db = tmp_path / "ledger.db"
    app = _app(db, tiny_gguf)
    mine = app.remember(_doc("alpha"), workspace="alpha")["memory_id"]
    theirs = app.remember(_doc("beta"), workspace="beta")["memory_id"]
    retired = app.remember(_doc("gamma"), workspace="alpha")["memory_id"]
    app.retire(retired, reason="obsolete", authorization="user_channel")
    app.reembed()
    on_theirs = _section_vectors(app, theirs)[2]
    everywhere = hybrid.vector_candidates(app.conn, on_theirs, SearchFilters(), 50, table="section_vectors")
    assert {rowid >> 20 for rowid, _ in everywhere} == {mine, theirs}  # retired: filtered out by status
    inside = hybrid.vector_candidates(
        app.conn, on_theirs, SearchFilters(workspace=("alpha",)), 50, table="section_vectors"
    )
    assert {rowid >> 20 for rowid, _ in inside} == {mine}
    # The scan itself only scores the caller's workspace.
    assert {r >> 20 for r in knn.index_for(app.conn, "section_vectors").nearest(on_theirs, 50, ("alpha",))} <= {
        mine,
        retired,
    }
    app.close()


def test_an_edit_replaces_the_section_vectors_and_a_rebuild_reuses_them(sem: LedgerApp) -> None:
    long_id = sem.remember(_doc("the gateway"))["memory_id"]
    sem.reembed()
    before = _section_vectors(sem, long_id)
    sem.update(long_id, content=_doc("the gateway")[: THRESHOLD + 200])  # fewer sections now
    result = sem.reembed()
    after = _section_vectors(sem, long_id)
    assert len(after) == len(catalog(sem.conn, long_id)) < len(before)
    assert result["embedded"] >= 1
    checksum = vectors.content_checksum(sem.conn)

    class Counting:
        def __init__(self, inner: Any) -> None:
            self.inner, self.model_id, self.dim, self.calls = inner, inner.model_id, inner.dim, 0

        def embed_passages(self, texts: list[str]) -> list[bytes]:
            self.calls += len(texts)
            return self.inner.embed_passages(texts)

    counting = Counting(sem.embedding_model())
    Indexer(sem.store, counting).run(rebuild=True)
    assert counting.calls == 0 and vectors.content_checksum(sem.conn) == checksum
    # The index in process forgets the sections that are gone.
    index = knn.index_for(sem.conn, "section_vectors")
    assert sorted(int(i) for i in index.ids) == sorted(
        r[0] for r in sem.conn.execute("SELECT section_rowid FROM section_vectors")
    )


def test_a_new_section_threshold_starts_the_vectors_over(tmp_path: Path, tiny_gguf: Path) -> None:
    db = tmp_path / "ledger.db"
    app = _app(db, tiny_gguf)
    long_id = app.remember(_doc("the gateway"))["memory_id"]
    app.reembed()
    count = len(_section_vectors(app, long_id))
    app.close()
    app = LedgerApp(
        Settings(db=str(db), client="test", embedding=Embedding(model=str(tiny_gguf)), section_threshold=100_000)
    )
    try:
        assert app.search_mode() == "vector+fts"
        app.reembed()
        assert count and _section_vectors(app, long_id) == {}  # no longer long: no sections, no vectors
    finally:
        app.close()


def test_reembed_counts_passages_in_one_unit_never_negative(tmp_path: Path, tiny_gguf: Path) -> None:
    """``cached`` was memories looked at less passages embedded: a memory of several sections
    gave a negative count ("7 embedded, -6 from the cache"), and a rebuild that took every
    vector from the cache said "embedded 0, cached 1". Both count passages now (a memory's own
    text and each section), ``embedded + cached`` is the vectors written, and the CLI line and
    ``memory_repair reembed`` (the same answer) say so."""
    from click.testing import CliRunner

    from fact_ledger.server.cli.main import main

    db = tmp_path / "ledger.db"
    env = {"LEDGER_EMBEDDING_MODEL": str(tiny_gguf), "LEDGER_SECTION_THRESHOLD": str(THRESHOLD)}

    def cli(*args: str) -> str:
        result = CliRunner().invoke(main, ["--db", str(db), *args], env=env)
        assert result.exit_code == 0, result.output
        return result.stdout

    app = _app(db, tiny_gguf)
    long_id = app.remember(_doc("the gateway"))["memory_id"]
    app.close()
    passages = 1 + len(_doc_sections(db, tiny_gguf, long_id))
    out = cli("reembed")
    assert f"vectors for 1 memory ({passages} passages embedded, 0 from the cache)" in out
    out = cli("reembed", "--rebuild")
    assert f"vectors for 1 memory (0 passages embedded, {passages} from the cache)" in out
    rebuilt = json.loads(cli("--json", "rebuild", "--projection", "vectors"))["vectors"]
    assert (rebuilt["embedded"], rebuilt["cached"], rebuilt["memories"]) == (0, passages, 1)
    app = _app(db, tiny_gguf)
    try:
        app.retire(long_id, reason="obsolete", authorization="user_channel")
        unchanged = app.reembed()  # a status change writes no vector: counted in neither
        assert (unchanged["memories"], unchanged["embedded"], unchanged["cached"]) == (1, 0, 0)
    finally:
        app.close()


def _doc_sections(db: Path, model: Path, memory_id: int) -> list[Any]:
    app = _app(db, model)
    try:
        return catalog(app.conn, memory_id)
    finally:
        app.close()
