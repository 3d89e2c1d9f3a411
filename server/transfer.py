"""Export and import of the log as JSONL envelopes (see ``ledger.envelope``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ledger.envelope import EnvelopeError, from_envelope, to_envelope
from server.app import LedgerApp

Progress = Callable[[int, int], None]
IMPORT_BATCH = 500


def export_jsonl(app: LedgerApp, out: IO[bytes], *, since: str | None = None, until: str | None = None,
                 progress: Progress | None = None) -> int:
    """Write every event (optionally recorded within [since, until]) as one envelope per line."""
    count = 0
    total = app.store.last_position()
    with app.store.snapshot():
        for event in app.store.read():
            if (since and event.recorded_at < since) or (until and event.recorded_at > until):
                continue
            out.write(to_envelope(event) + b"\n")
            count += 1
            if progress and count % 1000 == 0:
                progress(event.position, total)
    return count


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                yield number, line


def import_jsonl(app: LedgerApp, path: Path, *, progress: Progress | None = None) -> dict[str, Any]:
    """Append every envelope through the normal path in bounded batches; idempotent by event_id."""
    total_lines = sum(1 for _ in _lines(path))
    appended = skipped = 0
    bad: list[dict[str, Any]] = []
    batch = []
    done = 0

    def flush() -> None:
        nonlocal appended, skipped
        if not batch:
            return
        before = app.store.last_position()
        stored = app.store.write(lambda: app.runner.append(batch))
        fresh = sum(1 for e in stored if e.position > before)
        appended += fresh
        skipped += len(stored) - fresh
        batch.clear()

    for number, line in _lines(path):
        done += 1
        try:
            batch.append(from_envelope(line))
        except EnvelopeError as exc:
            bad.append({"line": number, "error": str(exc)})
        if len(batch) >= IMPORT_BATCH:
            flush()
            if progress:
                progress(done, total_lines)
    flush()
    if progress:
        progress(done, total_lines)
    return {"ok": True, "appended": appended, "already_present": skipped, "bad_lines": bad[:20],
            "bad_total": len(bad)}


CSV_COLUMNS = ("position", "event_id", "stream_id", "stream_version", "type", "v", "event_time",
               "recorded_at", "actor", "workspace", "payload", "hash")


def export_csv(app: LedgerApp, out: IO[bytes], *, since: str | None = None, until: str | None = None,
               progress: Progress | None = None) -> int:
    """The same events as CSV (one row each, payload as JSON text) for spreadsheets."""
    import csv
    import io

    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    writer = csv.writer(text)
    writer.writerow(CSV_COLUMNS)
    count = 0
    with app.store.snapshot():
        for event in app.store.read():
            if (since and event.recorded_at < since) or (until and event.recorded_at > until):
                continue
            writer.writerow([getattr(event, c) for c in CSV_COLUMNS])
            count += 1
    text.detach()
    return count
