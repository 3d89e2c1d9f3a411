"""What the disk alone charges for a commit, printed as one JSON document.

A WAL commit with ``synchronous=FULL`` writes one frame per page the transaction touched, each
as two ``pwrite`` calls (the 24-byte frame header, then the page), and syncs the WAL. This
replays exactly that pattern on a pre-sized file, without SQLite or the ledger, for a few
frame counts, next to the same bytes written in one call. The difference between the two is
what the system calls cost on this machine; the figure for ~60 frames is the floor under a
``remember`` that touches ~60 pages (see docs/performance.md).

    python -m tools.bench.io_floor                    # 2000 commits per pattern
    python -m tools.bench.io_floor --commits 200      # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.bench.run import latency_summary

PAGE = 4096
HEADER = 24
FRAME = HEADER + PAGE
RING_FRAMES = 16000  # the ledger's WAL restarts after at most this many frames


def _measure(fd: int, frames: int, commits: int, write: Callable[[int, int], None]) -> dict[str, float]:
    """Milliseconds per commit (``latency_summary``) and the share of commits over 5 ms."""
    samples = []
    offset = 0
    for _ in range(commits):
        if offset + frames * FRAME > RING_FRAMES * FRAME:
            offset = 0
        started = time.perf_counter()
        write(offset, frames)
        os.fsync(fd)
        samples.append((time.perf_counter() - started) * 1000)
        offset += frames * FRAME
    return {**latency_summary(samples), "over_5ms": round(sum(x > 5 for x in samples) / len(samples), 4)}


def run(directory: Path, commits: int, frame_counts: list[int]) -> dict[str, Any]:
    path = directory / "io-floor.bin"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.pwrite(fd, bytes(RING_FRAMES * FRAME), 0)  # overwrite, as a WAL after its first cycle
        os.fsync(fd)
        header, page = b"h" * HEADER, b"p" * PAGE

        def two_calls_per_frame(offset: int, frames: int) -> None:
            for i in range(frames):
                os.pwrite(fd, header, offset + i * FRAME)
                os.pwrite(fd, page, offset + i * FRAME + HEADER)

        def one_call(offset: int, frames: int) -> None:
            os.pwrite(fd, (header + page) * frames, offset)

        out: dict[str, Any] = {}
        for frames in frame_counts:
            out[f"{frames}_frames"] = {
                "sqlite_wal_pattern": _measure(fd, frames, commits, two_calls_per_frame),
                "one_pwrite": _measure(fd, frames, commits, one_call),
            }
        return out
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="fsync cost of WAL-commit-shaped writes (JSON on stdout)")
    parser.add_argument("--commits", type=int, default=2000, help="commits per pattern and frame count")
    parser.add_argument("--frames", default="5,20,60", help="frames per commit, comma-separated")
    parser.add_argument("--dir", type=Path, help="where the scratch file goes (default: a temp dir)")
    args = parser.parse_args(argv)
    frame_counts = [int(f) for f in args.frames.split(",") if f.strip()]
    if args.commits < 1 or not frame_counts or min(frame_counts) < 1:
        parser.error("--commits and --frames must be positive")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        result = {"commits": args.commits, "results": run(Path(tmp), args.commits, frame_counts)}
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
