"""Erasure: a memory (or a whole workspace) gone from the log's rows, the read models, the
caches and the backup, with a receipt the log can prove (docs/governance.md#erasure).

The log keeps an ``Erased`` event per memory naming every row it cleared with that row's seal
(``ledger.erasure``); the rows keep their hashes, so ``verify`` still proves the whole chain.
Erasure is the user's own act: only the user channel (the CLI, the console, an elicitation the
user answered) may erase, never an agent's ``authorized: true``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

from fact_ledger.ledger import clock, erasure
from fact_ledger.ledger.decide import settle
from fact_ledger.ledger.errors import ChainBroken, InvalidInput, NotFound, Unauthorized, Unavailable
from fact_ledger.ledger.facts import ConflictFacts
from fact_ledger.ledger.ids import is_id
from fact_ledger.ledger.log.chain import NewEvent, StoredEvent, needs_seal, resealed
from fact_ledger.ledger.log.events import AUTH_USER, Erased, ErasedRow, current_type, decode_payload, stored_names
from fact_ledger.ledger.sql import marks
from fact_ledger.projections import derived, forget
from fact_ledger.projections import workspaces as ws
from fact_ledger.projections.write_state import conflicts_of
from fact_ledger.server.app import credentials

Progress = Callable[[int, int], None]
logger = logging.getLogger(__name__)
RECEIPT_KIND = "fact-ledger erasure receipt"
_RECORDED = (*stored_names("MemoryRecorded"), "WorkingNoted")  # a memory id is this event's position


def erase(
    app: Any,
    memory_id: int | None = None,
    workspace: str | None = None,
    reason: str = "",
    authorization: str = "",
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Erase one memory or every memory of a workspace; answer the receipt."""
    if authorization != AUTH_USER:
        raise Unauthorized(
            "erase is the user's own act: run ledger erase, use the console, or answer the client's "
            "confirmation; an agent's authorized: true is not enough. Nothing was erased",
            field="authorized",
        )
    credentials.refuse_in_note("reason", reason)
    storage = app.storage  # unreachable or unreadable: the storage seam refuses, nothing erased
    targets = erasable(app, memory_id, workspace)
    if any(needs_seal(row) for _m, stream, _w in targets for row in _rows_of(storage.store, stream)):
        seal_log(storage, progress)  # a log written before sealing: re-sealed once, verified first

    def work() -> tuple[list[StoredEvent], list[int]]:
        return _erase_in_transaction(storage, targets, reason)

    stored, positions = storage.transaction(work)
    memory_ids = [t[0] for t in targets]
    wiped = forget_everywhere(storage, memory_ids, {t[1] for t in targets})
    receipt = _receipt(storage, stored, targets, reason)
    out: dict[str, Any] = {"ok": True, "erased": memory_ids, "rows": len(positions), "receipt": receipt}
    if wiped:
        out["notices"] = [wiped]
    return out


# -- what to erase -----------------------------------------------------------------------------
def erasable(app: Any, memory_id: int | None, workspace: str | None) -> list[tuple[int, str, str]]:
    """What an erase of ``memory_id`` or ``workspace`` would erase: (memory id, stream id,
    workspace) each; refused as the erase would be (no such memory, erased already, none in the
    workspace, another workspace's). Asked before the user is asked to confirm it."""
    if (memory_id is None) == (workspace is None):
        raise InvalidInput("give memory_id or workspace (one of them)", field="memory_id")
    # The default workspace ("") is a workspace as any other: read as "no workspace" it found
    # nothing and said there was no memory to erase in it, while its memories were there.
    named = workspace is not None
    targets = _targets(app.storage.store, memory_id, app.workspace_scope(workspace) if named else None)
    if not targets:
        raise NotFound(f"no memory to erase in {ws.words(workspace or '')}", field="workspace")
    for _id, _stream, held_in in targets:  # strict isolation: only the caller's own workspace
        app.workspace_service.check_workspace(held_in, field="workspace" if named else "memory_id")
    return targets


def erasable_by_name(app: Any, workspace: str) -> list[tuple[int, str, bool]]:
    """What an erase of ``workspace`` would erase, for the question the user is asked first:
    (memory id, the workspace it is recorded in, whether that is a name of ``workspace``: itself
    or an alias; not, for what a promotion ties to it from another workspace)."""
    scope = app.workspace_scope(workspace)
    return [(memory_id, held_in, held_in in scope) for memory_id, _s, held_in in erasable(app, None, workspace)]


def _targets(store: Any, memory_id: int | None, scope: tuple[str, ...] | None) -> list[tuple[int, str, str]]:
    """(memory id, stream id, workspace) of each memory to erase, read from the log's copy: a
    memory's id is the position of its MemoryRecorded event (archived memories included). A
    workspace is every name recorded for it (``scope``: an accepted alias's memories are its
    own); either way, what a promotion ties to them goes with them."""
    conn = store.conn
    if memory_id is not None:
        row = conn.execute(
            f"SELECT position, stream_id, workspace FROM events WHERE position=? AND type IN ({marks(len(_RECORDED))})",
            (memory_id, *_RECORDED),
        ).fetchone()
        if row is None:
            raise NotFound(f"no memory {memory_id}", field="memory_id")
        if _already_erased(conn, row[1]):
            raise InvalidInput(f"memory {memory_id} is erased already", field="memory_id")
        return _with_promotions(conn, [(row[0], row[1], row[2])])
    assert scope is not None
    rows = conn.execute(
        f"SELECT position, stream_id, workspace FROM events WHERE workspace IN ({marks(len(scope))}) "
        f"AND type IN ({marks(len(_RECORDED))}) ORDER BY position",
        (*scope, *_RECORDED),
    ).fetchall()
    return _with_promotions(conn, [(r[0], r[1], r[2]) for r in rows if not _already_erased(conn, r[1])])


def _with_promotions(conn: Any, found: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """``found``, then what a promotion ties to them and is not erased yet, wherever it is held:
    the working note a memory among them was promoted from (the memory's first version is the
    note's words, so the note goes too, and then reads erased, not promoted), and the memory
    promoted from a note among them (a note is promoted once: a note found here became the memory
    that found it). A memory the promotion only repeated or restated was not recorded from the
    note and stays."""
    streams = {t[1] for t in found}
    tied = [*_notes_of(conn, streams), *_promoted_from(conn, streams)]
    return [*found, *{t[1]: t for t in tied if t[1] not in streams}.values()]


def _promoted_from(conn: Any, notes: Iterable[str]) -> list[tuple[int, str, str]]:
    """The long-term memories a promotion recorded from the working notes ``notes`` (their first
    version is a note's words), unless erased already. A memory the promotion only repeated or
    restated was not recorded from the note."""
    rows = conn.execute(
        f"SELECT position, stream_id, workspace FROM events WHERE type IN ({marks(len(_RECORDED))}) "
        "AND json_extract(payload, '$.promoted_from') IN (SELECT value FROM json_each(?)) ORDER BY position",
        (*_RECORDED, json.dumps(sorted(notes))),
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows if not _already_erased(conn, r[1])]


def _notes_of(conn: Any, memories: Iterable[str]) -> list[tuple[int, str, str]]:
    """The working notes the long-term memories ``memories`` were promoted from, unless erased
    already."""
    rows = conn.execute(
        "SELECT position, stream_id, workspace FROM events WHERE type='WorkingNoted' AND stream_id IN ("
        "SELECT json_extract(payload, '$.promoted_from') FROM events WHERE type IN "
        f"({marks(len(_RECORDED))}) AND stream_id IN (SELECT value FROM json_each(?))) ORDER BY position",
        (*_RECORDED, json.dumps(sorted(memories))),
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows if not _already_erased(conn, r[1])]


def _already_erased(conn: Any, stream_id: str) -> bool:
    return erased_among(conn, {stream_id})


def erased_among(conn: Any, streams: Iterable[str]) -> bool:
    """Whether the log (``conn``: a SQLite copy of it) holds an ``Erased`` event of one of ``streams``."""
    return (
        conn.execute(
            "SELECT 1 FROM events WHERE type='Erased' AND stream_id IN (SELECT value FROM json_each(?)) LIMIT 1",
            (json.dumps(sorted(set(streams))),),
        ).fetchone()
        is not None
    )


def _rows_of(store: Any, stream_id: str) -> list[StoredEvent]:
    """The rows that hold a memory's words: its own stream, and the claim-set rows that name it
    (its value in a ClaimCollided, a judgment that pins it)."""
    own = list(_select(store, "stream_id=?", (stream_id,)))
    for ev in list(own):  # a memory promoted from a working note: the note held the same words
        source = getattr(ev.data, "promoted_from", "") if current_type(ev.type) == "MemoryRecorded" else ""
        if source:
            own += _select(store, "stream_id=?", (source,))
    like = f'%"{stream_id}"%'
    shared = [
        ev
        for ev in _select(store, "type IN ('ClaimCollided','JudgmentSubmitted') AND payload LIKE ?", (like,))
        if _names(ev, stream_id)
    ]
    return sorted({ev.position: ev for ev in own + shared}.values(), key=lambda e: e.position)


def _select(store: Any, where: str, params: tuple[Any, ...]) -> Iterable[StoredEvent]:
    from fact_ledger.ledger.log.chain import COLUMNS, event_from_row

    for row in store.conn.execute(f"SELECT {COLUMNS} FROM events WHERE {where} ORDER BY position", params):
        yield event_from_row(row)


def _names(ev: StoredEvent, stream_id: str) -> bool:
    data = decode_payload(ev.type, ev.v, ev.payload)
    if current_type(ev.type) == "ClaimCollided":
        return any(m.memory == stream_id for m in data.members)  # type: ignore[attr-defined]
    return stream_id in data.pins or data.winner == stream_id  # type: ignore[attr-defined]


# -- the write ---------------------------------------------------------------------------------
def _erase_in_transaction(
    storage: Any, targets: list[tuple[int, str, str]], reason: str
) -> tuple[list[StoredEvent], list[int]]:
    claimed: set[int] = set()
    events: list[NewEvent] = []
    redactions: list[tuple[int, str]] = []
    sets: dict[str, ConflictFacts] = {}  # each set once: settle() updates it as members leave
    now = clock.now()
    streams = {t[1] for t in targets}
    for memory_id, stream_id, workspace in targets:
        # it leaves its open claim sets as a retired memory does (a set left with one value settles)
        held = [sets.setdefault(c.stream_id, c) for c in conflicts_of(storage.conn, memory_id)]
        left = settle(stream_id, held, resolution="retired", reason=erasure.SETTLED_BY_ERASURE, authorization=AUTH_USER)
        events += [
            NewEvent(data=data, stream_id=stream, event_time=now, actor=storage.settings.actor, workspace=workspace)
            for stream, data in left
        ]
        # each erased memory's Erased names its own rows (a promoted memory's rows name its note's
        # too, but when the note is erased with it, the note's own event names them)
        rows = [
            r
            for r in _rows_of(storage.store, stream_id)
            if r.seal and r.salt is not None and (r.stream_id == stream_id or r.stream_id not in streams)
        ]
        rows = [r for r in rows if r.position not in claimed]
        claimed.update(r.position for r in rows)
        events.append(
            NewEvent(
                data=Erased(
                    memory=stream_id,
                    reason=reason,
                    rows=tuple(ErasedRow(r.position, r.event_id, r.seal) for r in rows),
                    authorization=AUTH_USER,
                ),
                stream_id=stream_id,
                event_time=now,
                actor=storage.settings.actor,
                workspace=workspace,
            )
        )
        redactions += [(r.position, erasure.redact(r.type, r.payload)) for r in rows]
    stored = storage.runner.append(events)
    _clear(storage, redactions)
    forget.mark_unfinished(storage.store.conn, (t[1] for t in targets))
    return [ev for ev in stored if ev.type == "Erased"], [p for p, _ in redactions]


def _clear(storage: Any, redactions: list[tuple[int, str]]) -> None:
    """The rows' erasable fields out of the log and, where it is another store, its copy."""
    storage.log.erase_rows(redactions)
    if storage.log is not storage.store:
        storage.store.erase_rows(redactions)


def clear_named(storage: Any, stored: Iterable[StoredEvent]) -> set[str]:
    """In the caller's write transaction, after ``stored`` was appended: the rows the ``Erased``
    events among them name (by event id, with their seals) that still hold their fields here,
    cleared in the log and its copy. That is an import of another ledger's erasure, whose rows
    this ledger holds at its own positions. Returns the erased memories' stream ids."""
    named: dict[str, str] = {}
    streams: set[str] = set()
    for ev in stored:
        if current_type(ev.type) == "Erased":
            streams.add(ev.stream_id)
            named.update((r.event_id, r.seal) for r in ev.data.rows)  # type: ignore[attr-defined]
    if not named:  # no erasure among them: nothing to look up (every import batch asks)
        return streams
    live = _select(
        storage.store, "salt IS NOT NULL AND event_id IN (SELECT value FROM json_each(?))", (json.dumps(sorted(named)),)
    )
    redactions = [(r.position, erasure.redact(r.type, r.payload)) for r in live if named[r.event_id] == r.seal]
    if redactions:
        _clear(storage, redactions)
    forget.mark_unfinished(storage.store.conn, streams)
    return streams


def memory_ids_of(store: Any, streams: Iterable[str]) -> list[int]:
    """The memory ids (positions of their recording events) of ``streams`` in this log."""
    rows = store.conn.execute(
        f"SELECT position FROM events WHERE type IN ({marks(len(_RECORDED))}) "
        "AND stream_id IN (SELECT value FROM json_each(?)) ORDER BY position",
        (*_RECORDED, json.dumps(sorted(streams))),
    )
    return [r[0] for r in rows]


def seal_log(storage: Any, progress: Progress | None = None) -> dict[str, Any]:
    """``ledger migrate --seal``: check the old chain, chain every row again with seals, check the
    new chain, swap it in (and the read models' copy), then rebuild the read models."""
    from fact_ledger.ledger.log.store import EventStore

    log = storage.log
    if not isinstance(log, EventStore):
        raise Unavailable(
            "re-sealing a team's PostgreSQL log is not supported: copy it into a new log (ledger migrate)",
            reason="unsupported",
        )
    total = log.last_position()
    report = (lambda n: progress(n, total)) if progress else None
    count = log.verify_chain(progress=report)
    if progress:
        progress(count, total)  # the old chain holds
    pending = sum(1 for ev in log.read() if needs_seal(ev))
    if not pending:
        return {"ok": True, "events": count, "sealed": 0}
    log.replace_all(resealed(log.read()))  # each batch checked to chain before the swap
    if storage.store is not log:
        storage.store.replace_all(log.read())
    log.verify_chain(progress=report)
    storage.runner.rebuild(progress=progress)
    return {"ok": True, "events": count, "sealed": pending, "head": next(iter(log.read(after=count - 1))).hash}


# -- everywhere else ----------------------------------------------------------------------------
def forget_everywhere(storage: Any, memory_ids: list[int], streams: set[str]) -> str | None:
    """After the rows were cleared: the read models, the derived cache, the backup and the files'
    old bytes; a notice when the log's own store could not be wiped (a PostgreSQL role). The
    erasure's marks go last: a process that dies before leaves them for the next open."""
    _forget_read_models(storage, memory_ids)
    storage.forget_backed_up(streams)
    notice = _wipe(storage)
    conn = storage.store.conn
    storage.store.write(lambda: forget.mark_finished(conn, streams))
    return notice


def finish_unfinished(storage: Any) -> list[str]:
    """On open: an erasure whose process died (or failed) after the log cleared its rows, and
    before the read models, the caches, the backup and the files' old bytes followed, is
    finished now. Returns the memories' stream ids (none: nothing to do)."""
    streams = forget.unfinished(storage.store.conn)
    if streams:
        logger.warning("finishing the erasure of %d memories that a process began and did not finish", len(streams))
        forget_everywhere(storage, memory_ids_of(storage.store, streams), set(streams))
    return streams


def _forget_read_models(storage: Any, memory_ids: list[int]) -> None:
    """Fold the read models again from the cleared log (what ``rebuild`` gives), drop the erased
    memories' vectors, and keep in the derived cache only what the remaining memories use."""
    touched: set[bytes] = set()
    with derived.recording(touched):
        storage.runner.rebuild()
    conn = storage.store.conn
    storage.store.write(lambda: forget.prune_views(conn, memory_ids, touched))


def _wipe(storage: Any) -> str | None:
    """Old bytes out of the files: free pages and WAL frames (SQLite), old row versions (PostgreSQL)."""
    storage.store.wipe()
    if storage.log is not storage.store:
        return storage.log.wipe()
    return None


# -- the receipt -------------------------------------------------------------------------------
def _receipt(
    storage: Any, stored: list[StoredEvent], targets: list[tuple[int, str, str]], reason: str
) -> dict[str, Any]:
    last = stored[-1]
    return {
        "kind": RECEIPT_KIND,
        "log": getattr(storage.log, "log_id", None) or storage.log_location(),
        "reason": reason,
        "actor": last.actor,
        "recorded_at": last.recorded_at,
        "head": {"position": last.position, "hash": last.hash},
        "erasures": [
            {
                "memory_id": memory_id,
                "memory": ev.stream_id,
                "position": ev.position,
                "event_id": ev.event_id,
                "hash": ev.hash,
                "rows": [
                    {"position": r.position, "event_id": r.event_id, "seal": r.seal}
                    for r in ev.data.rows  # type: ignore[attr-defined]
                ],
            }
            for (memory_id, _s, _w), ev in zip(targets, stored, strict=True)
        ],
    }


def verify_receipt(storage: Any, receipt: Any, progress: Progress | None = None) -> dict[str, Any]:
    """Check a receipt against this log: the whole chain verifies, the chain passes through the
    receipt's head (its actor and time are the head's), and each erasure's event is at its
    position with its hash and id, erases the memory the receipt names (stream and id) for the
    receipt's reason and names exactly the receipt's rows with their seals, all of them erased;
    on a team's log, the receipt names that log's id. Every field a person reads on the receipt
    is checked but a file's path (the same log may be read from a copy elsewhere): an edited one
    is refused."""
    if not isinstance(receipt, dict) or receipt.get("kind") != RECEIPT_KIND:
        raise InvalidInput("not an erasure receipt (kind is missing or different)", field="receipt")
    _check_shape(receipt)
    log_id = getattr(storage.log, "log_id", None)  # a team's log has an id; a file is named by its path
    if log_id is not None and receipt.get("log") != log_id:
        raise ChainBroken(f"the receipt names log {str(receipt.get('log'))[:80]!r}, not this log ({log_id})")
    count = storage.verify_log(progress=(lambda n: progress(n, 0)) if progress else None)
    head = receipt["head"]
    last = _expect(storage, head.get("position"), head.get("hash"), "the receipt's head")
    if (receipt.get("actor"), receipt.get("recorded_at")) != (last.actor, last.recorded_at):
        raise ChainBroken(
            f"the receipt's actor or time is not the head's at position {last.position}", position=last.position
        )
    for item in receipt.get("erasures") or []:
        what = f"the Erased event of memory {item.get('memory')}"
        ev = _expect(storage, item.get("position"), item.get("hash"), what)
        data = ev.data
        named = [{"position": r.position, "event_id": r.event_id, "seal": r.seal} for r in getattr(data, "rows", ())]
        said = (
            item.get("memory"),
            item.get("event_id"),
            item.get("memory_id"),
            receipt.get("reason"),
            item.get("rows"),
        )
        if not isinstance(data, Erased) or said != (
            data.memory,
            ev.event_id,
            _memory_id(storage.store.conn, data.memory),
            data.reason,
            named,
        ):
            raise ChainBroken(
                f"the receipt does not match the Erased event at position {ev.position}", position=ev.position
            )
    return {"ok": True, "events": count, "receipt": "valid", "erasures": len(receipt["erasures"])}


def _check_shape(receipt: dict[str, Any]) -> None:
    """A receipt whose head or erasures are not even of their kind (a number too large for a
    position, an erasure that is a bare number) is refused as input before any is looked up; one
    of the right kind that the log does not hold is a receipt that fails (``ChainBroken``)."""
    head, erasures = receipt.get("head"), receipt.get("erasures")
    if not _names_an_event(head):
        raise InvalidInput("the receipt's head must be an object with a position and a hash", field="receipt")
    if not isinstance(erasures, list) or not erasures:
        raise InvalidInput("the receipt names no erasure", field="receipt")
    if not all(_names_an_event(item) for item in erasures):
        raise InvalidInput(
            "each of the receipt's erasures must be an object with a position and a hash", field="receipt"
        )


def _names_an_event(item: Any) -> bool:
    return isinstance(item, dict) and is_id(item.get("position")) and isinstance(item.get("hash"), str)


def _memory_id(conn: Any, stream_id: str) -> int | None:
    """A memory's id: the position of its ``MemoryRecorded`` event (in the log's copy)."""
    row = conn.execute(
        f"SELECT min(position) FROM events WHERE stream_id=? AND type IN ({marks(len(_RECORDED))})",
        (stream_id, *_RECORDED),
    ).fetchone()
    return None if row is None else row[0]


def _expect(storage: Any, position: Any, hash_: Any, what: str) -> StoredEvent:
    from fact_ledger.server.app.views_file import event_at

    ev = event_at(storage.log, position) if isinstance(position, int) and position > 0 else None
    if ev is None or ev.hash != hash_:
        raise ChainBroken(f"{what} (position {position}) is not in this log as the receipt says", position=position)
    return ev
