"""The vectors read model: one embedding per memory, kept in step with the log asynchronously.

At ~30 ms a passage the model cannot sit on the write path, so this projection is not folded
inside the append transaction like the others: it has its own checkpoint and is fed after
commit (:mod:`projections.indexer`, run by a worker thread in ``ledger serve`` and by ``ledger
reembed``). Full text keeps every write findable at once; vectors follow.

What it holds is still a pure function of the log and the model: for every memory, the
embedding of its current content (``memories``), under one model. Embeddings are cached in
``derived_cache`` by (model id, passage text), so a rebuild, or a switch back to a model used
before, recomputes nothing it has seen. ``seq`` numbers writes so that readers holding an
in-memory copy (:mod:`projections.knn`) reload only what changed; it is bookkeeping, not
content, and is left out of :func:`content_checksum`.

The ``vec0`` module is not needed to read these tables (plain tables of BLOBs); sqlite-vec's
scalar function ``vec_distance_cosine`` is, on every connection that searches them:
:func:`load_vec`.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import uuid
import weakref
from array import array
from typing import Any, NamedTuple

import apsw

from fact_ledger.projections.derived import embedding_key

NAME = "vectors"
VERSION = 4  # 2: sections get their own vectors; 3: a short memory in a session gets a context vector;
# 4: the model's centre is stored (projections.centre) and the sign bits leave the tables (the index cuts them)

SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors(
    memory_id INTEGER PRIMARY KEY,
    workspace TEXT NOT NULL,
    key       BLOB NOT NULL,
    seq       INTEGER NOT NULL,
    embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS vectors_seq ON vectors(seq);
CREATE TABLE IF NOT EXISTS section_vectors(
    section_rowid INTEGER PRIMARY KEY,
    memory_id     INTEGER NOT NULL,
    workspace     TEXT NOT NULL,
    key           BLOB NOT NULL,
    seq           INTEGER NOT NULL,
    embedding     BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS section_vectors_seq ON section_vectors(seq);
CREATE INDEX IF NOT EXISTS section_vectors_memory ON section_vectors(memory_id);
CREATE TABLE IF NOT EXISTS context_vectors(
    memory_id INTEGER PRIMARY KEY,
    workspace TEXT NOT NULL,
    key       BLOB NOT NULL,
    seq       INTEGER NOT NULL,
    embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS context_vectors_seq ON context_vectors(seq);
CREATE TABLE IF NOT EXISTS vectors_meta(
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
TABLES = ("vectors", "section_vectors", "context_vectors")


class State(NamedTuple):
    model_id: str
    dim: int
    generation: int


_loaded: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()
_unavailable: list[str] = []


def load_vec(conn: apsw.Connection) -> bool:
    """Load sqlite-vec into ``conn`` once; False (and :func:`vec_problem` says why) without it."""
    if conn in _loaded:
        return True
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        try:
            conn.load_extension(sqlite_vec.loadable_path())
        finally:
            conn.enable_load_extension(False)
    except (ImportError, apsw.Error, OSError) as exc:
        _unavailable[:] = [f"sqlite-vec unavailable ({type(exc).__name__}: {exc})"[:200]]
        return False
    _loaded.add(conn)
    return True


def vec_problem() -> str | None:
    return _unavailable[0] if _unavailable else None


def create(conn: apsw.Connection) -> None:
    conn.execute(SCHEMA)


def state(conn: apsw.Connection) -> State | None:
    """The model the stored vectors belong to, or None when there are none yet (or only vectors
    of an earlier version of this read model, which the indexer starts over)."""
    meta = dict(stamp(conn))
    return _state_of(meta) if meta.get("version") == VERSION else None


def stamp(conn: apsw.Connection) -> tuple[tuple[str, Any], ...]:
    """The vectors' bookkeeping in one statement: model, generation, this read model's version,
    and each table's write and delete counters. Every change to the tables moves it, so a reader
    whose stamp is unchanged has nothing to look at again (:mod:`projections.knn`)."""
    try:
        return tuple(
            conn.execute(
                "SELECT name, value FROM vectors_meta WHERE name <> 'centre' "
                "UNION ALL SELECT 'version', version FROM projection_checkpoints WHERE name = ? ORDER BY 1",
                (NAME,),
            )
        )
    except apsw.SQLError:
        return ()


def _state_of(meta: dict[str, Any]) -> State | None:
    if "model_id" not in meta:
        return None
    return State(meta["model_id"], int(meta["dim"]), int(meta.get("generation", "0")))


def _stored(conn: apsw.Connection) -> State | None:
    return _state_of(dict(stamp(conn)))


def centre(conn: apsw.Connection) -> bytes:
    """The stored vectors' model centre (float32, :mod:`projections.centre`); empty when none."""
    return bytes.fromhex(meta(conn, "centre") or "")


def current(conn: apsw.Connection, model_id: str, dim: int) -> bool:
    """Whether the stored vectors are this model's, of this version, for the sections as cut now
    (a changed section threshold re-cuts them); otherwise they start over (from the cache)."""
    found = state(conn)
    if found is None or found.model_id != model_id or found.dim != dim:
        return False
    meta = conn.execute("SELECT value FROM vectors_meta WHERE name='sections'").fetchone()
    return meta is not None and meta[0] == sections_version(conn)


def sections_version(conn: apsw.Connection) -> str:
    row = conn.execute("SELECT version FROM projection_checkpoints WHERE name='sections'").fetchone()
    return str(row[0]) if row else ""


def checkpoint(conn: apsw.Connection) -> int:
    """The log position the vectors are complete up to (0 when never built)."""
    try:
        row = conn.execute("SELECT version, position FROM projection_checkpoints WHERE name=?", (NAME,)).fetchone()
    except apsw.SQLError:
        return 0
    return row[1] if row is not None and row[0] == VERSION else 0


def set_checkpoint(conn: apsw.Connection, position: int) -> None:
    conn.execute(
        "INSERT INTO projection_checkpoints(name, version, position) VALUES(?,?,?) ON CONFLICT(name) "
        "DO UPDATE SET version=excluded.version, position=max(position, excluded.position)",
        (NAME, VERSION, position),
    )


def reset(conn: apsw.Connection, model_id: str, dim: int, centre: bytes) -> None:
    """Start over for ``model_id`` (a new model, or a rebuild): no vectors, checkpoint 0; its
    ``centre`` (float32, :mod:`projections.centre`) is kept with them.

    The derived cache is kept: what was embedded before under this model comes back for free.
    """
    old = _stored(conn)
    conn.execute(
        "DROP TABLE IF EXISTS vectors; DROP TABLE IF EXISTS section_vectors; DROP TABLE IF EXISTS context_vectors; "
        "DROP TABLE IF EXISTS vectors_meta"
    )
    create(conn)
    conn.executemany(
        "INSERT INTO vectors_meta(name, value) VALUES(?, ?)",
        [
            ("model_id", model_id),
            ("dim", str(dim)),
            ("generation", str((old.generation + 1) if old else 1)),
            ("sections", sections_version(conn)),
            ("centre", centre.hex()),
            ("index_id", uuid.uuid4().hex),  # names these vectors for the index's snapshot
        ],
    )
    conn.execute(
        "INSERT INTO projection_checkpoints(name, version, position) VALUES(?,?,0) "
        "ON CONFLICT(name) DO UPDATE SET version=excluded.version, position=0",
        (NAME, VERSION),
    )


def passage_text(content: str) -> str:
    """What is embedded for a memory: its content, lower-cased, without the trailing whitespace
    the SentencePiece tokenizer would keep as a token.

    The e5 tokenizer is cased, and an agent's question rarely matches the case of what was
    written ("what did Caroline research" vs "Researching adoption agencies"): lower-casing both
    sides raised nearest-vector recall on the LoCoMo development conversations from R@5 0.514 to
    0.610, and hybrid recall from 0.696 to 0.718 (docs/search.md). Chinese has no case.
    """
    return content.strip().lower()


def query_text(query: str) -> str:
    """What is embedded for a query: folded like a passage (:func:`passage_text`)."""
    return query.strip().lower()


def section_passage(content: str, heading_path: list[str], start: int, end: int) -> str:
    """What is embedded for a section: its heading path (the context a reader has), then its text."""
    body = passage_text(content[start:end])
    return passage_text(f"{' › '.join(heading_path)}\n{body}") if heading_path else body


CONTEXT_MAX_CHARS = 500  # a memory this short also gets a context vector (about one embedding window)


def context_passage(previous: str, content: str) -> str | None:
    """What is embedded as a memory's context: the memory before it in its session, then the
    memory itself; None for a memory long enough to stand on its own.

    A short turn of a conversation often means little alone ("5 years already!" answers "How
    long have you been married?"). A second vector over the turn with the one before it lets a
    question find the reply by what it replies to; the memory is as close as the nearer of its
    two vectors (:mod:`projections.hybrid`). Only the previous memory is used: it exists when
    the memory is written, so the context never waits for a later write.
    """
    if len(content) > CONTEXT_MAX_CHARS:
        return None
    return passage_text(f"{previous.strip()}\n{content}")


def changed(conn: apsw.Connection, after: int, limit: int) -> list[tuple[int, str, str, int]]:
    """(memory_id, workspace, content, last_position) of memories changed after ``after``,
    oldest change first; rows sharing the last one's position are all included. An erased
    memory is never embedded again."""
    rows = conn.execute(
        "SELECT memory_id, workspace, content, last_position FROM memories WHERE last_position > ? "
        "AND status <> 'erased' ORDER BY last_position, memory_id LIMIT ?",
        (after, limit),
    ).fetchall()
    if len(rows) == limit:
        last = rows[-1][3]
        rows = [r for r in rows if r[3] < last] + conn.execute(
            "SELECT memory_id, workspace, content, last_position FROM memories WHERE last_position = ? "
            "AND status <> 'erased' ORDER BY memory_id",
            (last,),
        ).fetchall()
    return rows


def awaiting(conn: apsw.Connection, after: int, scope: tuple[str, ...] | None = None) -> int:
    """How many memories have text the vectors after position ``after`` do not hold yet: new
    ones, and those whose content changed since (the versions say). A status change (retire,
    supersede) or an erasure embeds nothing, so it is not counted; ``after`` 0 (another model's
    vectors, or none): every memory that is not erased. ``scope``: those workspaces only."""
    where = "" if scope is None else f" AND m.workspace IN ({', '.join('?' * len(scope))})"
    if after <= 0:
        return int(conn.execute(f"SELECT count(*) FROM memories m WHERE m.status <> 'erased'{where}", scope or ()).get)
    return int(
        conn.execute(
            "SELECT count(*) FROM memories m WHERE m.last_position > ? AND m.status <> 'erased'"
            f"{where} AND EXISTS (SELECT 1 FROM memory_versions v WHERE v.memory_id = m.memory_id "
            "AND v.position > ? AND (v.version = 1 OR v.content IS NOT (SELECT p.content FROM memory_versions p "
            "WHERE p.memory_id = v.memory_id AND p.version = v.version - 1)))",
            (after, *(scope or ()), after),
        ).get
    )


def keys_of(conn: apsw.Connection, ids: list[int]) -> dict[int, bytes]:
    """The cache key each memory's stored vector was computed from."""
    import msgspec

    rows = conn.execute(
        "SELECT v.memory_id, v.key FROM json_each(?) j CROSS JOIN vectors v ON v.memory_id = j.value",
        (msgspec.json.encode(ids).decode(),),
    )
    return {memory_id: bytes(key) for memory_id, key in rows}


def write(conn: apsw.Connection, rows: list[tuple[int, str, bytes, bytes]]) -> None:
    """Upsert (memory_id, workspace, key, embedding) rows."""
    _upsert(conn, "vectors", rows)


def context_keys_of(conn: apsw.Connection, ids: list[int]) -> dict[int, bytes]:
    """The cache key each memory's stored context vector was computed from."""
    import msgspec

    rows = conn.execute(
        "SELECT v.memory_id, v.key FROM json_each(?) j CROSS JOIN context_vectors v ON v.memory_id = j.value",
        (msgspec.json.encode(ids).decode(),),
    )
    return {memory_id: bytes(key) for memory_id, key in rows}


def write_contexts(conn: apsw.Connection, rows: list[tuple[int, str, bytes, bytes]], dropped: list[int]) -> None:
    """Upsert (memory_id, workspace, key, embedding) context vectors; delete those of ``dropped``
    (a memory that has no context any more: edited long, or its session changed)."""
    if dropped:
        _delete_of(conn, "context_vectors", dropped)
    _upsert(conn, "context_vectors", rows)


def _upsert(conn: apsw.Connection, table: str, rows: list[tuple[int, str, bytes, bytes]]) -> None:
    seq = _take_seqs(conn, table, len(rows))
    conn.executemany(
        f"INSERT INTO {table}(memory_id, workspace, key, seq, embedding) VALUES(?, ?, ?, ?, ?) "
        "ON CONFLICT(memory_id) DO UPDATE SET "
        "workspace=excluded.workspace, key=excluded.key, seq=excluded.seq, embedding=excluded.embedding",
        [
            (memory_id, workspace, key, seq + i, embedding)
            for i, (memory_id, workspace, key, embedding) in enumerate(rows)
        ],
    )


def write_sections(
    conn: apsw.Connection, memory_ids: list[int], rows: list[tuple[int, int, str, bytes, bytes]]
) -> None:
    """Replace the section vectors of ``memory_ids`` with (section_rowid, memory_id, workspace,
    key, embedding) rows (a memory that lost its sections keeps none)."""
    _delete_of(conn, "section_vectors", memory_ids)
    seq = _take_seqs(conn, "section_vectors", len(rows))
    conn.executemany(
        "INSERT INTO section_vectors(section_rowid, memory_id, workspace, key, seq, embedding) "
        "VALUES(?, ?, ?, ?, ?, ?)",
        [
            (rowid, memory_id, workspace, key, seq + i, embedding)
            for i, (rowid, memory_id, workspace, key, embedding) in enumerate(rows)
        ],
    )


def counts(conn: apsw.Connection, workspaces: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Rows of each vector table (only those of ``workspaces`` when given: strict isolation)."""
    where = "" if workspaces is None else f" WHERE workspace IN ({', '.join('?' * len(workspaces))})"
    params = workspaces or ()
    try:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}{where}", params).get
            for table in ("vectors", "section_vectors", "context_vectors")
        }
    except apsw.SQLError:
        return {"vectors": 0, "section_vectors": 0, "context_vectors": 0}


def meta(conn: apsw.Connection, name: str) -> str | None:
    """One bookkeeping value of ``vectors_meta`` (None when absent)."""
    try:
        value = conn.execute("SELECT value FROM vectors_meta WHERE name = ?", (name,)).get
    except apsw.SQLError:
        return None
    return None if value is None else str(value)


def last_seq(conn: apsw.Connection) -> int:
    """The newest write sequence number of the memories' own vectors (0: none)."""
    return int(conn.execute("SELECT coalesce(max(seq), 0) FROM vectors").get)


def set_meta(conn: apsw.Connection, name: str, value: str | None) -> None:
    """Set (None: remove) one bookkeeping value of ``vectors_meta``."""
    if value is None:
        conn.execute("DELETE FROM vectors_meta WHERE name = ?", (name,))
    else:
        conn.execute("INSERT OR REPLACE INTO vectors_meta(name, value) VALUES(?, ?)", (name, value))


def own_checksum(conn: apsw.Connection) -> str:
    """sha256 of the memories' own vectors and the centre: what semantic notices are found on
    (sections and context vectors play no part in them)."""
    digest = hashlib.sha256()
    with contextlib.suppress(apsw.SQLError):
        _digest_own(digest, conn)
    return digest.hexdigest()


def _digest_own(digest: Any, conn: apsw.Connection) -> None:
    digest.update(b"centre" + centre(conn))
    for row in conn.execute("SELECT memory_id, workspace, key, embedding FROM vectors ORDER BY memory_id"):
        digest.update(repr(row).encode())


def content_checksum(conn: apsw.Connection) -> str:
    """sha256 of what the vectors hold (not their write order): equal iff equal content."""
    digest = hashlib.sha256()
    try:
        _digest_own(digest, conn)
        rows = conn.execute(
            "SELECT section_rowid, memory_id, workspace, key, embedding FROM section_vectors ORDER BY section_rowid"
        )
        for row in rows:
            digest.update(repr(row).encode())
        rows = conn.execute("SELECT memory_id, workspace, key, embedding FROM context_vectors ORDER BY memory_id")
        for row in rows:
            digest.update(b"context" + repr(row).encode())
    except apsw.SQLError:
        pass
    return digest.hexdigest()


def _take_seqs(conn: apsw.Connection, table: str, count: int) -> int:
    """The first of ``count`` write sequence numbers for a vectors table (the in-process index
    reads rows past the last it saw). Kept in ``vectors_meta`` rather than read as ``max(seq)``:
    once the newest row is deleted, ``max(seq)`` would hand its number out again and the index
    would never read the row written under it."""
    name = f"next_seq:{table}"
    stored = conn.execute("SELECT value FROM vectors_meta WHERE name = ?", (name,)).get
    first = max(int(stored or 0), int(conn.execute(f"SELECT max(seq) FROM {table}").get or 0) + 1)
    conn.execute("INSERT OR REPLACE INTO vectors_meta(name, value) VALUES(?, ?)", (name, str(first + count)))
    return first


def ensure_index_id(conn: apsw.Connection) -> None:
    """Name the stored vectors for the index's snapshot (:mod:`projections.knn_snapshot`) when
    they were started before names were given (inside a write transaction)."""
    if meta(conn, "model_id") is not None and meta(conn, "index_id") is None:
        set_meta(conn, "index_id", uuid.uuid4().hex)


def deletions(conn: apsw.Connection, table: str) -> int:
    """How many deletes ``table`` has seen (the in-process index drops rows when it changes)."""
    return int(conn.execute("SELECT value FROM vectors_meta WHERE name = ?", (f"deleted:{table}",)).get or 0)


def _delete_of(conn: apsw.Connection, table: str, memory_ids: list[int]) -> None:
    """Delete the rows of ``memory_ids`` from a vectors table (one statement, ids as JSON)."""
    import msgspec

    conn.execute(
        f"DELETE FROM {table} WHERE memory_id IN (SELECT value FROM json_each(?))",
        (msgspec.json.encode(memory_ids).decode(),),
    )
    if conn.changes():
        conn.execute(
            "INSERT OR REPLACE INTO vectors_meta(name, value) VALUES(?, ?)",
            (f"deleted:{table}", str(deletions(conn, table) + 1)),
        )


def cosine(conn: apsw.Connection, left: tuple[int, str], right: tuple[int, str]) -> float | None:
    """The cosine of two memories' stored vectors, each given as ``(memory_id, content)``; None
    unless both are stored and embed the content as it is now (``compare``'s ``closeness.vector``:
    a vector that the worker has not caught up with yet would compare an older text)."""
    found = state(conn)
    if found is None:
        return None
    blobs: list[bytes] = []
    for memory_id, content in (left, right):
        row = conn.execute("SELECT key, embedding FROM vectors WHERE memory_id=?", (memory_id,)).fetchone()
        if row is None or bytes(row[0]) != embedding_key(found.model_id, passage_text(content)):
            return None
        blobs.append(bytes(row[1]))
    a, b = array("f", blobs[0]), array("f", blobs[1])
    if len(a) != len(b):
        return None
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return round(sum(x * y for x, y in zip(a, b, strict=True)) / norm, 4) if norm else None
