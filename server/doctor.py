"""Health checks behind ``ledger doctor`` and the ``doctor`` review view.

Each check is a function ``(app) -> Check`` registered with :func:`check`; other modules may add
their own by importing this one and decorating a function. A check never writes. Severity is
the worst of the checks: ``ok`` < ``info`` < ``warning`` < ``critical``; the CLI exits 0 when
nothing is worse than ``info``, 1 on warnings, 2 on critical findings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

import apsw

from fact_ledger.ledger.errors import ChainBroken, LogUnreachable
from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections import forget
from fact_ledger.projections.conflicts import queries as conflicts_model
from fact_ledger.projections.conflicts.queries import count_by_state
from fact_ledger.server.write_lock import busy, replay_then

SEVERITIES = ("ok", "info", "warning", "critical")


class Check(TypedDict, total=False):
    name: str
    severity: str
    message: str
    count: int


CheckFn = Callable[[Any], Check]
CHECKS: list[CheckFn] = []


def check(fn: CheckFn) -> CheckFn:
    """Register a doctor check (in definition order)."""
    CHECKS.append(fn)
    return fn


def run_checks(app: Any) -> dict[str, Any]:
    results: list[Check] = []
    for fn in CHECKS:
        try:
            result = fn(app)
        except Exception as exc:  # a broken check is itself a finding, never a crash
            result = Check(severity="critical", message=f"check failed: {type(exc).__name__}: {exc}"[:300])
        result.setdefault("name", fn.__name__.removeprefix("check_"))
        results.append(result)
    worst = max((SEVERITIES.index(r["severity"]) for r in results), default=0)
    return {"ok": True, "checks": results, "severity": SEVERITIES[worst]}


def exit_code(severity: str) -> int:
    return {"warning": 1, "critical": 2}.get(severity, 0)


@check
def check_integrity(app: Any) -> Check:
    """SQLite's ``quick_check`` of the log's file and the read models' file (:func:`damaged_files`).
    Only the read models' file was checked: a log file with corrupt pages passed."""
    damaged = damaged_files(app)
    if not damaged:
        return Check(severity="ok", message="SQLite quick_check passed")
    return Check(
        severity="critical",
        message="; ".join(f"SQLite quick_check of {path}: {found(rows)}" for path, rows in damaged),
    )


def damaged_files(app: Any) -> list[tuple[str, list[str]]]:
    """``(path, what quick_check found)`` for each of the ledger's SQLite files that fails it: the
    log's (when the log is a file of its own) and the read models'."""
    conns = [app.conn]
    log = app.storage.log
    # Only a SQLite log has a file to check: a team log's ``conn`` connects to its server (and
    # raised, in an outage, what read as a corrupt file: integrity critical)
    log_conn = log.conn if isinstance(log, EventStore) else None
    if log_conn is not None and log_conn.filename != app.conn.filename:
        conns.insert(0, log_conn)
    out = []
    for conn in conns:
        rows = _quick_check(conn)
        if rows != ["ok"]:
            out.append((conn.filename or ":memory:", rows))
    return out


def found(rows: list[str]) -> str:
    """What quick_check found, in one line (its first three findings)."""
    return " ".join("; ".join(rows[:3]).split())


def _quick_check(conn: apsw.Connection) -> list[str]:
    """On a connection of its own: FTS5's check on a long-lived connection (a console's, a
    server's) read the index through the structure it had cached, and called the file corrupt
    once another process had merged its segments (only a file read-only to this process is
    checked on its connection)."""
    path = conn.filename
    # An in-memory file has no other connection; a file opened read-only (a read-only folder or
    # mount, storage.Storage._open_read_only) may admit no plain open beside it: checked on its own.
    if not path or conn.readonly("main"):
        return [r[0] for r in conn.execute("PRAGMA quick_check")]
    fresh = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [r[0] for r in fresh.execute("PRAGMA quick_check")]
    except apsw.Error as exc:  # a file too damaged to read at all
        return [f"{type(exc).__name__}: {exc}"]
    finally:
        fresh.close()


@check
def check_hash_chain(app: Any) -> Check:
    """The log of record's chain (and the read models' copy of it), not the copy alone: a log
    tampered with past what the copy holds is found here while the other checks still run."""
    try:
        count = app.storage.verify_log()
    except LogUnreachable as exc:  # an outage is a warning to follow up, not a broken chain
        return Check(
            severity="warning",
            message=f"the log of record cannot be reached, its chain is not checked: {exc.message}; "
            "run ledger doctor again once it is back",
        )
    except ChainBroken as exc:
        return Check(
            severity="critical",
            message=f"hash chain broken: {exc.message}; restore the database from a copy "
            "(ledger verify names the first bad position)",
        )
    return Check(severity="ok", message=f"hash chain intact over {count} events", count=count)


@check
def check_projection_lag(app: Any) -> Check:
    lagging = {name: p["lag"] for name, p in app.runner.status().items() if p["lag"]}
    if not lagging:
        return Check(severity="ok", message="every projection is caught up")
    names = ", ".join(f"{n} ({lag})" for n, lag in sorted(lagging.items()))
    return Check(
        severity="warning",
        message=f"projections behind the log: {names}; reopen or run ledger rebuild",
        count=sum(lagging.values()),
    )


@check
def check_read_models_head(app: Any) -> Check:
    """The read models answer every read: they must never hold events their log does not."""
    head = app.storage.log_status()["events"]
    if head is None:
        return Check(severity="info", message="the log of record cannot be reached: nothing to compare with")
    ahead = app.storage.views_ahead(head)
    if ahead:
        return Check(severity="critical", message=ahead, count=app.store.last_position() - head)
    return Check(severity="ok", message="the read models hold nothing the log does not")


@check
def check_erasures_unfinished(app: Any) -> Check:
    """An erasure whose process died after the log cleared its rows is finished on open; one
    that could not be finished (the file busy, the disk full) leaves the erased words in the read
    models until it is: a person must know."""
    left = forget.unfinished(app.conn)
    if not left:
        return Check(severity="ok", message="every erasure is finished")
    return Check(
        severity="critical",
        message=f"{len(left)} erased memories may still show their words in the read models (an erasure "
        "did not finish); every open of the ledger tries again: run any ledger command when nothing else "
        "writes to it",
        count=len(left),
    )


def _scope(app: Any) -> tuple[str, ...] | None:
    """Strict isolation: the caller's workspace names, so that no count tells of another's."""
    return app.workspace_service.find_scope(None)[0]


@check
def check_agent_asserted_confirmations(app: Any) -> Check:
    from fact_ledger.projections.confirmations import agent_asserted_confirmations

    count = agent_asserted_confirmations(app.conn, _scope(app))
    if not count:
        return Check(severity="ok", message="every user_confirmed fact was confirmed through a user channel")
    return Check(
        severity="warning",
        count=count,
        message=f"{count} user_confirmed fact(s) were confirmed only by an agent (agent_asserted); "
        "confirm them from the CLI (ledger confirm ID) or retire them",
    )


@check
def check_open_conflicts(app: Any) -> Check:
    counts = count_by_state(app.conn, _scope(app))
    total = counts["open"] + counts["judged"]
    if not total:
        return Check(severity="ok", message="no open conflicts")
    return Check(
        severity="info",
        count=total,
        message=f"{counts['open']} open and {counts['judged']} judged conflict(s) await a decision (ledger conflicts)",
    )


@check
def check_conflicts_with_inactive_members(app: Any) -> Check:
    """An unresolved conflict whose member is no longer current should have been settled."""
    count = conflicts_model.count_unresolved_with_inactive_members(app.conn, _scope(app))
    if not count:
        return Check(severity="ok", message="every unresolved conflict is between current memories")
    named: dict[int, list[str]] = {}
    for conflict_id, memory_id, status in conflicts_model.unresolved_with_inactive_members(app.conn, _scope(app)):
        named.setdefault(conflict_id, []).append(f"#{memory_id} {status}")
    listed = "; ".join(f"conflict {cid} ({', '.join(members)})" for cid, members in named.items())
    more = f"; and {count - len(named)} more" if count > len(named) else ""
    return Check(
        severity="warning",
        count=count,
        message=f"{count} unresolved conflict(s) involve a memory that is no longer current: {listed}{more}; "
        "settle each (ledger conflict ID, then ledger resolve ID)",
    )


@check
def check_writable(app: Any) -> Check:
    """Whether a write reaches the log: a file this process opened read-only (immutable, mode=ro,
    no write permission), or storage degraded as ``status`` says (a team log out of reach, a
    locked or full file). Either way every write goes to the JSONL backup; this check said "take
    writes" while status said ``log_unreachable``, and docs/teams.md promises they agree, so the
    degraded state is read from the one place status reads it (``Storage.health``)."""
    degraded = app.storage.health()["degraded"]  # a read-only file too, named as status names it
    # only ``ledger serve`` replays by itself; a CLI or console process leaves it to replay-backup
    then = replay_then(app.storage)
    nowhere = app.storage.backup_log.why_unwritable() if degraded else None
    if nowhere:  # no write lands at all: the backup beside the log cannot be written either
        return Check(
            severity="warning",  # reads answer (an archive on a read-only mount is read on purpose)
            message=f"degraded ({degraded['reason']}): {degraded['message']}; every write is refused: {nowhere} "
            "(make the folder writable, or set LEDGER_BACKUP to a writable path)",
        )
    if degraded and degraded["message"].startswith("read-only:"):
        return Check(
            severity="warning",
            message=f"{degraded['message']}; every write goes to the JSONL backup until the file can be written "
            f"again (check its permissions and attributes), {then}",
        )
    if degraded:
        return Check(
            severity="warning",
            message=f"degraded ({degraded['reason']}): {degraded['message']}; every write goes to the JSONL "
            f"backup until the log takes writes again, {then} (ledger status says the same)",
        )
    held = busy(app.storage, then)
    if held:
        return Check(severity="warning", message=f"busy: {held['message']}")
    return Check(severity="ok", message="the log and the read models take writes")


@check
def check_pending_backup(app: Any) -> Check:
    pending = app.pending_backup()  # the same state status reports (Storage.health)
    if not pending or not pending.get("writes"):
        return Check(severity="ok", message="no backed-up writes await replay")
    return Check(
        severity="warning",
        count=pending["writes"],
        message=(
            f"{pending['writes']} backed-up write(s) ({pending['events']} event(s)) await replay "
            "(ledger serve replays them once the log is reachable; or ledger replay-backup --apply)"
        ),
    )


__all__ = ["CHECKS", "SEVERITIES", "Check", "check", "exit_code", "run_checks"]
