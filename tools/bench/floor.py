"""The least a rebuild and a ``remember`` can cost on this machine, printed as one JSON document.

Both floors keep the SQL work the ledger does and drop all of its Python. They answer "how much
of the budget is SQLite's own, for exactly what the read models hold?", next to what the ledger
measures on the same corpus:

* **rebuild**: every projection table of a corpus is written into a fresh file with the same
  schema straight from the finished tables (``INSERT … SELECT``; the FTS5 indexes built by FTS5
  from the stored index text), in one transaction under the ledger's pragmas, after one read of
  the log. Nothing is decoded or computed: this is the cost of writing what a rebuild produces.
* **remember**: the SQL statements of real ``remember`` calls are recorded with their bindings
  (APSW's ``exec_trace``) and replayed, one transaction each, on an identical copy of the
  ledger opened as the ledger opens it (``EventStore``: WAL, ``synchronous=FULL``, background
  checkpoints). Validation, decisions, fingerprints and the projections' code are gone; the
  statements, the pages they touch and the commit remain. A second copy replays only the
  statements on the log and the core read models (``CORE``). The same is measured in the
  default two-file layout (``two_files``: the log fsynced alone, the read models with their copy
  of the log in ``*.views.db``), the layout the budget is set for: both connections' statements
  are recorded and replayed in the order they ran.

    python -m tools.bench.floor                  # 100,000 memories, 300 remembers, 3 repetitions
    python -m tools.bench.floor --quick          # tiny sizes (smoke test)
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from fact_ledger.ledger.log.store import EventStore
from fact_ledger.projections.runner import REBUILD_CACHE_KIB
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.views_file import VIEWS_SYNCHRONOUS
from tools.bench.corpus import Corpus, Memory
from tools.bench.run import BUDGETS, bench_remember, build, latency_summary, median_of, remember, timed

# How each FTS5 index is filled in the copy. The floor refuses a schema with any other virtual
# table rather than leave a read model out of the figure.
_FTS_FILL = {
    "search_fts": "INSERT INTO search_fts(search_fts) VALUES('rebuild')",  # external content: search_docs
    # Contentless; the corpus only creates memories, so text version i is memory i's indexed text.
    "tt_fts": "INSERT INTO tt_fts(rowid, subject, body, tags) SELECT t.text_id, d.subject, d.body, d.tags "
    "FROM tt_texts t JOIN search_docs d ON d.memory_id = t.memory_id ORDER BY t.text_id",
    "section_fts": "INSERT INTO section_fts(section_fts) VALUES('rebuild')",  # external content: sections
}
_NOT_REBUILT = {"events", "derived_cache"}  # the log is read, not written; the cache is kept
# The core read models alone (current memories, their versions for history, full-text search):
# the floor without governance (claims, conflicts, near-duplicates) and time travel.
CORE = frozenset({"memories", "memory_versions", "search_docs", "search_fts"})
_CORE_WRITES = CORE | {"events", "projection_checkpoints"}
_TABLES = re.compile(r"\b(?:FROM|INTO|UPDATE|JOIN)\s+([A-Za-z_]\w*)", re.IGNORECASE)

# (the file it ran on, its SQL, its bindings); a script is one remember's, in order
Statement = tuple[str, str, Any]
Script = list[Statement]


def projection_schema(conn: apsw.Connection) -> tuple[list[str], list[str], list[str]]:
    """(CREATE statements, plain tables to copy, FTS tables to fill) of the read models."""
    rows = conn.execute(
        "SELECT type, name, tbl_name, sql FROM src.sqlite_schema WHERE sql IS NOT NULL "
        "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
    ).fetchall()
    virtual = [name for kind, name, _, sql in rows if kind == "table" and sql.upper().startswith("CREATE VIRTUAL")]
    unknown = sorted(set(virtual) - set(_FTS_FILL))
    if unknown:
        raise SystemExit(f"floor: no fill rule for the virtual table(s) {', '.join(unknown)}")
    shadow = tuple(f"{name}_" for name in virtual)
    creates, tables = [], []
    for kind, name, table, sql in rows:
        if table in _NOT_REBUILT or name.startswith(shadow) or kind not in ("table", "index"):
            continue
        creates.append(sql)
        if kind == "table" and name not in virtual:
            tables.append(name)
    return creates, tables, virtual


def _remove_database(path: Path) -> None:
    """The file and its WAL and shared-memory files, so nothing of an earlier run is read again."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def rebuild_floor(src_path: Path, dst_path: Path, only: frozenset[str] | None = None) -> dict[str, Any]:
    """Seconds to write the finished read models of ``src_path`` (or the tables in ``only``) into
    a fresh file, by table."""
    _remove_database(dst_path)
    conn = apsw.Connection(str(dst_path))
    try:
        conn.execute(f"PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size={REBUILD_CACHE_KIB}")
        conn.execute("ATTACH ? AS src", (str(src_path),))
        creates, tables, fts = projection_schema(conn)
        if only is not None:
            tables, fts = [t for t in tables if t in only], [t for t in fts if t in only]
        conn.execute(";".join(creates))
        by_table: dict[str, float] = {}
        started = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        by_table["read the log"] = timed(lambda: sum(1 for _ in conn.execute("SELECT * FROM src.events")))
        for table in tables:
            by_table[table] = timed(lambda t=table: conn.execute(f'INSERT INTO main."{t}" SELECT * FROM src."{t}"'))
        for table in fts:
            by_table[table] = timed(lambda t=table: conn.execute(_FTS_FILL[t]))
        by_table["COMMIT"] = timed(lambda: conn.execute("COMMIT"))
        seconds = time.perf_counter() - started
    finally:
        conn.close()
        _remove_database(dst_path)
    top = sorted(by_table.items(), key=lambda kv: -kv[1])
    return {"seconds": round(seconds, 3), "by_table_s": {k: round(v, 3) for k, v in top}}


def record_remembers(app: LedgerApp, memories: list[Memory], files: dict[str, apsw.Connection]) -> list[Script]:
    """Each remember's statements with their bindings, BEGIN IMMEDIATE to COMMIT, on every
    connection in ``files`` (by name), in the order they ran."""
    scripts: list[Script] = []

    def tracer(name: str) -> Callable[[apsw.Cursor, str, Any], bool]:
        def trace(_cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
            scripts[-1].append((name, sql, bindings))
            return True

        return trace

    for name, conn in files.items():
        conn.exec_trace = tracer(name)
    try:
        for m in memories:
            scripts.append([])
            remember(app, m)
    finally:
        for conn in files.values():
            conn.exec_trace = None
    return scripts


def replay(stores: dict[str, EventStore], scripts: list[Script]) -> dict[str, Any]:
    """Run recorded transactions on ``stores`` (by the name each statement was recorded under);
    latency per transaction, each file's COMMIT and the WAL frames a transaction wrote."""
    whole, per_commit = [], []
    commits: dict[str, list[float]] = {name: [] for name in stores}
    for script in scripts:
        before = {name: store.wal_frames for name, store in stores.items()}
        started = time.perf_counter()
        for name, sql, bindings in script:
            began = time.perf_counter()
            for _ in stores[name].conn.execute(sql, bindings):
                pass
            if sql == "COMMIT":
                commits[name].append((time.perf_counter() - began) * 1000)
        whole.append((time.perf_counter() - started) * 1000)
        grown = [store.wal_frames - before[name] for name, store in stores.items()]
        if all(g >= 0 for g in grown):  # not across a WAL restart
            per_commit.append(sum(grown))
    return {
        "transaction_ms": latency_summary(whole),
        "commit_ms": {name: latency_summary(times) for name, times in commits.items() if times},
        "statements": statistics.median(len(s) for s in scripts),
        "wal_frames": statistics.median(per_commit) if per_commit else 0,
    }


def core_only(script: Script) -> Script:
    """The statements of ``script`` that touch only the core read models (and the log): what a
    ``remember`` would cost with no governance or time-travel read model to keep."""
    return [(name, sql, bindings) for name, sql, bindings in script if set(_TABLES.findall(sql)) <= _CORE_WRITES]


def _log_tail(conn: apsw.Connection) -> tuple[Any, ...]:
    """The last event's position and chain hash, and the memory count: equal when a replay wrote what the ledger did."""
    return (
        *conn.execute("SELECT position, hash FROM events ORDER BY position DESC LIMIT 1").fetchone(),
        conn.execute("SELECT count(*) FROM memories").fetchone()[0],
    )


def _copy_database(conn: apsw.Connection, path: Path) -> None:
    """A consistent copy of ``conn``'s database at ``path`` (SQLite's online backup)."""
    _remove_database(path)
    copy = apsw.Connection(str(path))
    try:
        with copy.backup("main", conn, "main") as backup:
            backup.step()
    finally:
        copy.close()


def remember_floor(app: LedgerApp, workdir: Path, corpus: Corpus, count: int, reps: int) -> dict[str, Any]:
    """Per repetition: remember ``count`` memories through the facade (timed), record ``count``
    more and replay their statements on a copy taken just before them (one file: the log and
    the read models on one connection)."""
    copy_path, core_path = workdir / "replay.db", workdir / "replay-core.db"
    app_reps, replay_reps, core_reps, faithful = [], [], [], []
    for _ in range(reps):
        app_reps.append(bench_remember(app, corpus, count))
        _copy_database(app.conn, copy_path)
        _remove_database(core_path)
        shutil.copyfile(copy_path, core_path)
        scripts = record_remembers(app, list(corpus.memories(count)), {"file": app.conn})
        for path, run_scripts, out in (
            (copy_path, scripts, replay_reps),
            (core_path, [core_only(s) for s in scripts], core_reps),
        ):
            store = EventStore(path)
            try:
                out.append(replay({"file": store}, run_scripts))
                faithful.append(_log_tail(store.conn) == _log_tail(app.conn))
            finally:
                store.close()
    return {
        "ledger_ms": median_of(app_reps),
        "replayed_sql_ms": median_of([r["transaction_ms"] for r in replay_reps]),
        "core_replayed_sql_ms": median_of([r["transaction_ms"] for r in core_reps]),
        "core_wal_frames_per_remember": statistics.median(r["wal_frames"] for r in core_reps),
        "commit_ms": median_of([r["commit_ms"]["file"] for r in replay_reps]),
        "replay_reached_the_same_log": all(faithful),
        "statements_per_remember": statistics.median(r["statements"] for r in replay_reps),
        "wal_frames_per_remember": statistics.median(r["wal_frames"] for r in replay_reps),
        "reps": [
            {"ledger_p50": a["p50"], "replay_p50": r["transaction_ms"]["p50"]}
            for a, r in zip(app_reps, replay_reps, strict=True)
        ],
    }


def two_file_remember_floor(workdir: Path, seed: int, memories: int, count: int, reps: int) -> dict[str, Any]:
    """The same floor in the default layout, which the budget is set for: the log in its own file
    (``synchronous=FULL``), the read models with their copy of the log in ``*.views.db``
    (``synchronous=NORMAL``), one connection each. The recorded statements of both connections
    are replayed in the order they ran, on copies of both files opened the same way."""
    corpus = Corpus(seed=seed)
    app, _, _ = build(workdir / "two.db", corpus, memories)
    log, views = app.storage.log, app.storage.store
    assert isinstance(log, EventStore) and log is not views, "the default layout keeps two files"
    copies = {"log": workdir / "replay-log.db", "views": workdir / "replay-log.views.db"}
    app_reps, replay_reps, faithful = [], [], []
    try:
        for _ in range(reps):
            app_reps.append(bench_remember(app, corpus, count))
            app.storage.settle()  # the copies start from folded read models, as the recording does
            _copy_database(log.conn, copies["log"])
            _copy_database(views.conn, copies["views"])
            scripts = record_remembers(app, list(corpus.memories(count)), {"log": log.conn, "views": views.conn})
            stores = {
                "log": EventStore(copies["log"]),
                "views": EventStore(copies["views"], synchronous=VIEWS_SYNCHRONOUS),
            }
            try:
                replay_reps.append(replay(stores, scripts))
                faithful.append(
                    _log_tail(stores["views"].conn) == _log_tail(views.conn) and stores["log"].tail() == log.tail()
                )
            finally:
                for store in stores.values():
                    store.close()
    finally:
        app.close()
        for path in (*copies.values(), workdir / "two.db", workdir / "two.views.db"):
            _remove_database(path)
    return {
        "ledger_ms": median_of(app_reps),
        "replayed_sql_ms": median_of([r["transaction_ms"] for r in replay_reps]),
        "commit_ms": {name: median_of([r["commit_ms"][name] for r in replay_reps]) for name in ("log", "views")},
        "replay_reached_the_same_log": all(faithful),
        "statements_per_remember": statistics.median(r["statements"] for r in replay_reps),
        "wal_frames_per_remember": statistics.median(r["wal_frames"] for r in replay_reps),
    }


def run(workdir: Path, memories: int, remembers: int, reps: int, seed: int) -> dict[str, Any]:
    corpus = Corpus(seed=seed)
    # The floor is the SQL of the single-file layout (the read models in the log's file, one
    # connection, one commit): tools.bench.layouts compares it with the two-file default.
    app, _, _ = build(workdir / "corpus.db", corpus, memories, views=str(workdir / "corpus.db"))
    try:
        events = app.store.last_position()
        ledger_s, floor_s, core_s, by_table = [], [], [], []
        for _ in range(reps):
            ledger_s.append(timed(app.rebuild))
            floor = rebuild_floor(workdir / "corpus.db", workdir / "floor.db")
            floor_s.append(floor["seconds"])
            by_table.append(floor["by_table_s"])
            core_s.append(rebuild_floor(workdir / "corpus.db", workdir / "floor.db", CORE)["seconds"])
        rebuild = {
            "events": events,
            "ledger_events_per_s": round(events / statistics.median(ledger_s), 1),
            "floor_events_per_s": round(events / statistics.median(floor_s), 1),
            "floor_seconds": [round(s, 3) for s in floor_s],
            "floor_by_table_s": median_of(by_table),
            "core_floor_events_per_s": round(events / statistics.median(core_s), 1),
        }
        remember = remember_floor(app, workdir, corpus, remembers, reps)
    finally:
        app.close()
    remember["two_files"] = two_file_remember_floor(workdir, seed, memories, remembers, reps)
    budget_rebuild, budget_p50 = BUDGETS["rebuild_events_per_s"][0], BUDGETS["remember_p50_ms"][0]
    return {
        "memories": memories,
        "rebuild": rebuild,
        "remember": remember,
        "floor_vs_budget": {
            "rebuild_events_per_s": {
                "floor": rebuild["floor_events_per_s"],
                "budget": budget_rebuild,
                "ratio": round(rebuild["floor_events_per_s"] / budget_rebuild, 3),
            },
            "remember_p50_ms": {
                "floor": remember["replayed_sql_ms"]["p50"],
                "budget": budget_p50,
                "ratio": round(remember["replayed_sql_ms"]["p50"] / budget_p50, 3),
            },
            "remember_p50_ms_two_files": {
                "floor": remember["two_files"]["replayed_sql_ms"]["p50"],
                "budget": budget_p50,
                "ratio": round(remember["two_files"]["replayed_sql_ms"]["p50"] / budget_p50, 3),
            },
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="SQL-only floors under rebuild and remember (JSON on stdout)")
    parser.add_argument("--memories", type=int, default=100_000, help="corpus size")
    parser.add_argument("--remembers", type=int, default=300, help="remember calls per repetition")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="where the databases go (default: a temp dir)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        args.memories, args.remembers, args.reps = 300, 10, 1
    if min(args.memories, args.remembers, args.reps) < 1:
        parser.error("--memories, --remembers and --reps must be positive")
    with tempfile.TemporaryDirectory(prefix="ledger-floor-", dir=args.workdir) as tmp:
        started = time.perf_counter()
        report = run(Path(tmp), args.memories, args.remembers, args.reps, args.seed)
        report["seconds"] = round(time.perf_counter() - started, 1)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
