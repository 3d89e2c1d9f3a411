"""What an erasure takes out of the read models' file besides the fold: the erased memories'
vectors, the context vector embedded with their text, and every derived-cache entry no
remaining memory uses (claims, fingerprints and embeddings are cached by their input text).

Run by the erasing process (``server.app.erasure``) and by a runner whose pull brings an
erasure another machine made, each time right after the read models were folded again.

The erasing process marks each memory it erases in ``erasures_unfinished`` inside the write that
clears the log's rows, and drops the mark when every step after it is done: a process killed in
between leaves the read models folded from the rows as they were, and the next open finishes
the job from the marks (``server.app.erasure.finish_unfinished``). The runner creates the table
beside its checkpoints."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import apsw

from fact_ledger.ledger.log.events import stored_names
from fact_ledger.ledger.sql import marks
from fact_ledger.projections import knn_snapshot, vectors
from fact_ledger.projections.search.queries import session_neighbours

_RECORDED = stored_names("MemoryRecorded")


def mark_unfinished(conn: Any, streams: Iterable[str]) -> None:
    """In the write that clears the log's rows: these memories' erasure is not finished yet."""
    conn.executemany("INSERT OR IGNORE INTO erasures_unfinished VALUES(?)", [(s,) for s in sorted(streams)])


def unfinished(conn: Any) -> list[str]:
    """The memories whose erasure a process began and did not finish (it died, or a step failed)."""
    try:
        return [r[0] for r in conn.execute("SELECT stream FROM erasures_unfinished ORDER BY stream")]
    except apsw.SQLError:  # a file from before the table: nothing was marked
        return []


def mark_finished(conn: Any, streams: Iterable[str]) -> None:
    conn.execute(
        "DELETE FROM erasures_unfinished WHERE stream IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(streams)),),
    )


def pulled(conn: Any, streams: list[str], touched: set[bytes]) -> None:
    """A pull brought an erasure another machine made (``ProjectionRunner._copy``): the read
    models were folded again; the erased memories' vectors and cache entries follow."""
    ids = [
        r[0]
        for r in conn.execute(
            f"SELECT position FROM events WHERE type IN ({marks(len(_RECORDED))}) AND stream_id IN "
            "(SELECT value FROM json_each(?))",
            (*_RECORDED, json.dumps(streams)),
        )
    ]
    prune_views(conn, ids, touched)


def prune_views(conn: Any, memory_ids: list[int], touched: set[bytes]) -> None:
    """Inside a write transaction on the read models: the erased memories' vectors (and the
    context vector of the memory after each, embedded with its text) go, and the derived cache
    keeps only ``touched`` (what the fold just used) and the keys of the vectors that stay."""
    ids = json.dumps(sorted(memory_ids))
    if conn.execute("SELECT 1 FROM sqlite_schema WHERE name='context_vectors'").fetchone():
        followers = [f for _p, f in session_neighbours(conn, memory_ids).values() if f is not None]
        conn.execute(
            "DELETE FROM context_vectors WHERE memory_id IN (SELECT value FROM json_each(?))",
            (json.dumps(followers),),
        )
    if conn.execute("SELECT 1 FROM sqlite_schema WHERE name='notices'").fetchone():
        # a semantic notice quotes both memories' values
        conn.execute(
            "DELETE FROM notices WHERE left_id IN (SELECT value FROM json_each(?)) "
            "OR right_id IN (SELECT value FROM json_each(?))",
            (ids, ids),
        )
    kept = set(touched)
    for table in vectors.TABLES:
        if conn.execute("SELECT 1 FROM sqlite_schema WHERE name=?", (table,)).fetchone():
            conn.execute(f"DELETE FROM {table} WHERE memory_id IN (SELECT value FROM json_each(?))", (ids,))
            kept.update(bytes(r[0]) for r in conn.execute(f"SELECT key FROM {table}"))
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS keep_keys(key BLOB PRIMARY KEY)")
    conn.execute("DELETE FROM keep_keys")
    conn.executemany("INSERT OR IGNORE INTO keep_keys VALUES(?)", [(k,) for k in kept])
    conn.execute("DELETE FROM derived_cache WHERE key NOT IN (SELECT key FROM keep_keys)")
    conn.execute("DROP TABLE keep_keys")
    knn_snapshot.discard(knn_snapshot.path_for(conn))  # it holds the erased memories' blends
    if conn.execute("SELECT 1 FROM sqlite_schema WHERE name='vectors_meta'").fetchone():
        # A running server's nearest-neighbour index loads itself again at a new generation.
        conn.execute(
            "UPDATE vectors_meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE name = 'generation'"
        )
