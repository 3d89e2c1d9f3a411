"""Semantic notices: pairs of memories close in meaning, for a person to look at.

Two kinds of pair are proposed, both advice and never conflicts:

* **disagreements**: close in meaning (cosine at or above ``similarity``) *and* a deterministic
  difference (:func:`ledger.disagree.disagreement`: a number, a date, a negation, a name).
  "the budget is 50k" / "the budget is 80k" is one; a paraphrase is not.
* **near-duplicates** (``kind = "duplicate"``): closer still (``duplicate_similarity``) and no
  difference found: the same thing said twice in other words, which the shingle fingerprints
  of the write path cannot see.

Notices are part of the asynchronous vectors projection (:mod:`projections.indexer` finds them
when it writes a memory's vector, among the nearest vectors of the same workspace) and are
reset with it. Whether a person dismissed or resolved one is an event (``NoticeReviewed``),
folded inline into ``notice_reviews`` keyed by the pair, so a review survives any rebuild.
"""

from __future__ import annotations

from typing import Any

import apsw
import msgspec

from fact_ledger.ledger.disagree import disagreement
from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import Event, NoticeReviewed
from fact_ledger.ledger.sql import marks
from fact_ledger.projections import knn
from fact_ledger.projections.memories import memory_id_of

SIMILARITY = 0.89  # cosine at or above which two memories are "about the same thing" (tools/eval/notice_pairs.py)
DUPLICATE_SIMILARITY = 0.935  # cosine at or above which an undisputed pair is a near-duplicate
NEIGHBOURS = 8  # nearest vectors looked at per written memory

SCHEMA = """
CREATE TABLE IF NOT EXISTS notices(
    notice_id   INTEGER PRIMARY KEY,
    left_id     INTEGER NOT NULL,
    right_id    INTEGER NOT NULL,
    workspace   TEXT NOT NULL,
    similarity  REAL NOT NULL,
    kind        TEXT NOT NULL,
    left_value  TEXT NOT NULL,
    right_value TEXT NOT NULL,
    UNIQUE(left_id, right_id)
);
CREATE INDEX IF NOT EXISTS notices_right ON notices(right_id);
"""
_REVIEWS = """
CREATE TABLE IF NOT EXISTS notice_reviews(
    left_id  INTEGER NOT NULL,
    right_id INTEGER NOT NULL,
    state    TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY(left_id, right_id)
) WITHOUT ROWID
"""


class Thresholds(msgspec.Struct, frozen=True):
    similarity: float = SIMILARITY
    duplicate_similarity: float = DUPLICATE_SIMILARITY


def create(conn: apsw.Connection) -> None:
    conn.execute(SCHEMA)


def drop(conn: apsw.Connection) -> None:
    conn.execute("DROP TABLE IF EXISTS notices")


def pair_kind(left: str, right: str, similarity: float, thresholds: Thresholds) -> dict[str, str] | None:
    """What a close pair is worth proposing as, or None."""
    if similarity < thresholds.similarity:
        return None
    found = disagreement(left, right)
    if found is not None:
        return found
    if similarity >= thresholds.duplicate_similarity:
        return {"kind": "duplicate", "left": "", "right": ""}
    return None


def detect(
    conn: apsw.Connection, items: list[tuple[int, str, str, bytes]], thresholds: Thresholds, *, before_seq: int
) -> list[tuple[Any, ...]]:
    """Notice rows for memories ``(memory_id, workspace, content, embedding)`` written after
    ``before_seq``: against the vectors written up to it (same workspace) and each other."""
    fresh = {memory_id for memory_id, *_ in items}
    pairs: dict[tuple[int, int], float] = {}
    for memory_id, workspace, _content, embedding in items:
        for other, similarity in knn.nearest(
            conn, embedding, NEIGHBOURS, (workspace,), exclude=frozenset(fresh), max_seq=before_seq
        ):
            if similarity >= thresholds.similarity:
                pairs[(min(memory_id, other), max(memory_id, other))] = similarity
    for i, (left_id, left_ws, _, left_vec) in enumerate(items):
        for right_id, right_ws, _, right_vec in items[i + 1 :]:
            if left_ws == right_ws:
                similarity = 1.0 - conn.execute("SELECT vec_distance_cosine(?, ?)", (left_vec, right_vec)).get
                if similarity >= thresholds.similarity:
                    pairs[(min(left_id, right_id), max(left_id, right_id))] = similarity
    if not pairs:
        return []
    texts = {memory_id: (workspace, content) for memory_id, workspace, content, _ in items}
    wanted = sorted({i for pair in pairs for i in pair} - set(texts))
    texts.update(
        {
            r[0]: (r[1], r[2])
            for r in conn.execute(
                "SELECT m.memory_id, m.workspace, m.content FROM json_each(?) j CROSS JOIN memories m "
                "ON m.memory_id = j.value",
                (msgspec.json.encode(wanted).decode(),),
            )
        }
    )
    rows = []
    for (left_id, right_id), similarity in sorted(pairs.items()):
        if left_id not in texts or right_id not in texts:
            continue
        found = pair_kind(texts[left_id][1], texts[right_id][1], similarity, thresholds)
        if found is not None:
            rows.append(
                (
                    left_id,
                    right_id,
                    texts[left_id][0],
                    round(similarity, 4),
                    found["kind"],
                    found["left"],
                    found["right"],
                )
            )
    return rows


def write(conn: apsw.Connection, rewritten: list[int], rows: list[tuple[Any, ...]]) -> None:
    """Forget the notices of memories whose text changed, then record the new ones."""
    if rewritten:
        ids = msgspec.json.encode(rewritten).decode()
        conn.execute(
            "DELETE FROM notices WHERE left_id IN (SELECT value FROM json_each(?1)) "
            "OR right_id IN (SELECT value FROM json_each(?1))",
            (ids,),
        )
    conn.executemany(
        "INSERT OR REPLACE INTO notices(left_id, right_id, workspace, similarity, kind, left_value, right_value) "
        "VALUES(?,?,?,?,?,?,?)",
        rows,
    )


# -- reviews (inline projection) -----------------------------------------------------------------
class NoticeReviewsProjector:
    """``notice_reviews``: the last review (dismissed / resolved / open again) of each pair."""

    name = "notice_reviews"
    version = 1
    tables = ("notice_reviews",)
    handles = frozenset({"NoticeReviewed"})

    def create(self, conn: apsw.Connection) -> None:
        conn.execute(_REVIEWS)

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS notice_reviews")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if not isinstance(data, NoticeReviewed):
            return
        left, right = memory_id_of(conn, data.left), memory_id_of(conn, data.right)
        if left is None or right is None:
            return
        conn.execute(
            "INSERT OR REPLACE INTO notice_reviews(left_id, right_id, state, position) VALUES(?,?,?,?)",
            (min(left, right), max(left, right), data.state, event.position),
        )


# -- reading -------------------------------------------------------------------------------------
_VIEW = """
SELECT n.notice_id, n.left_id, n.right_id, n.workspace, n.similarity, n.kind, n.left_value, n.right_value,
       coalesce(r.state, 'open') AS state, l.content, rt.content
FROM notices n
JOIN memories l ON l.memory_id = n.left_id AND l.status = 'active'
JOIN memories rt ON rt.memory_id = n.right_id AND rt.status = 'active'
LEFT JOIN notice_reviews r ON r.left_id = n.left_id AND r.right_id = n.right_id
"""


def listing(
    conn: apsw.Connection,
    *,
    state: str = "open",
    kinds: tuple[str, ...] = (),
    limit: int,
    before: int | None = None,
    workspaces: tuple[str, ...] | None = None,
) -> list[dict[str, Any]]:
    """Notices between current memories, newest first (``before``: a notice id, for paging)."""
    clauses, params = ["1"], []
    if state != "all":
        clauses.append("coalesce(r.state, 'open') = ?")
        params.append(state)
    if kinds:
        clauses.append(f"n.kind IN ({marks(len(kinds))})")
        params.extend(kinds)
    if before is not None:
        clauses.append("n.notice_id < ?")
        params.append(before)
    if workspaces is not None:
        clauses.append(f"n.workspace IN ({marks(len(workspaces))})")
        params.extend(workspaces)
    try:
        rows = conn.execute(
            f"{_VIEW} WHERE {' AND '.join(clauses)} ORDER BY n.notice_id DESC LIMIT ?", (*params, limit)
        ).fetchall()
    except apsw.SQLError:  # never built (no model yet)
        return []
    return [_view(r) for r in rows]


def load(conn: apsw.Connection, notice_id: int) -> dict[str, Any] | None:
    try:
        row = conn.execute(f"{_VIEW} WHERE n.notice_id = ?", (notice_id,)).fetchone()
    except apsw.SQLError:
        return None
    return _view(row) if row else None


def _view(row: tuple[Any, ...]) -> dict[str, Any]:
    (
        notice_id,
        left_id,
        right_id,
        workspace,
        similarity,
        kind,
        left_value,
        right_value,
        state,
        left_content,
        right_content,
    ) = row
    return {
        "notice_id": notice_id,
        "kind": kind,
        "state": state,
        "similarity": similarity,
        "workspace": workspace,
        "left": {"memory_id": left_id, "content": _snippet(left_content), "value": left_value},
        "right": {"memory_id": right_id, "content": _snippet(right_content), "value": right_value},
    }


def summary(notice: dict[str, Any]) -> str:
    """What a notice says in a few words: ``number: 50000 vs 80000``, or for a near-duplicate
    (which holds no values: nothing differs) ``the same thing in other words``."""
    left, right = notice["left"]["value"], notice["right"]["value"]
    if not (left and right):
        return "the same thing in other words" if notice["kind"] == "duplicate" else notice["kind"]
    return f"{notice['kind']}: {left} vs {right}"


def _snippet(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
