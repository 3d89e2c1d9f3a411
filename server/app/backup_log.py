"""The JSONL backup file: where a command's events go when SQLite cannot take them.

Each line is the docs/design.md envelope (``{"schema": 1, "event": {...}}``, no position, no hash)
plus additive keys: ``command`` (an id shared by the lines of one command), ``command_size``
(how many lines it has) and, on the first line, ``request`` (the call that made it: ``{"op",
"args", "kwargs"}``), which replay decides again against the log as it is then
(:mod:`server.app.backup`). A command is replayed whole or not at all: a crash in the middle of
an append, or a damaged line, must not leave half of a retraction in the log. A command's
identity is its first event's id (its *head*): it is in the log when that id is.

Appends take an exclusive ``flock`` (several agent processes share one backup), write the whole
command in one ``write``, ``fsync`` it, and truncate back to the previous size if anything fails,
so a caller told ``unavailable`` has left nothing behind. The file is rewritten only by an
erasure (:meth:`BackupLog.forget`: the lines that name an erased memory go, under the same lock;
an append that waited on the file it replaced writes to the new one). Replay only reads it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import msgspec

from fact_ledger.ledger import clock
from fact_ledger.ledger.ids import uuid7
from fact_ledger.ledger.log.chain import NewEvent
from fact_ledger.ledger.log.envelope import EnvelopeError, backup_envelope, from_envelope


class Command(msgspec.Struct):
    """The events of one backed-up command, or why its lines cannot be replayed."""

    first_line: int
    events: list[NewEvent] = []
    errors: list[dict[str, Any]] = []
    command_id: str | None = None
    request: dict[str, Any] | None = None

    @property
    def head(self) -> str:
        """The command's identity: its first event's id."""
        return self.events[0].event_id


def encode_command(events: Sequence[NewEvent], request: dict[str, Any] | None = None) -> bytes:
    command, size, now = uuid7(), len(events), clock.now()
    lines = []
    for n, new in enumerate(events):
        doc = msgspec.json.decode(backup_envelope(new, now))
        doc.update(command=command, command_size=size)
        if n == 0 and request is not None:
            doc["request"] = request
        lines.append(msgspec.json.encode(doc) + b"\n")
    return b"".join(lines)


class BackupLog:
    """One backup file. Keeps a small cache so ``pending`` is cheap to ask on every status call."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._reset(None)

    def _reset(self, identity: tuple[int, int] | None) -> None:
        self._identity = identity
        self._offset = 0
        self._lines = 0
        self._pending: dict[str, Command] = {}  # by head event id
        self._heads: set[str] = set()  # every command's head read so far, landed or not
        self._bad = 0
        self._checked_at: int | None = None

    def why_unwritable(self) -> str | None:
        """Why an append would fail, by looking (nothing is created), or None when nothing
        shows: the file, or the nearest folder it would be made in, cannot be written (a
        read-only folder or mount)."""
        target = self.path if self.path.exists() else self.path.parent
        while not target.exists() and target != target.parent:
            target = target.parent
        try:
            read_only_mount = bool(os.statvfs(target).f_flag & os.ST_RDONLY)
        except OSError:
            return None
        if read_only_mount or not os.access(target, os.W_OK):
            return f"the JSONL backup {self.path} cannot be written either ({target} is read-only)"
        return None

    def where_writes_go(self, *, then: str = "", one: bool = False) -> str:
        """Where writes go while the log takes none, in words: the JSONL backup, or nowhere when it
        cannot be written either (it said "writes go to the JSONL backup" while every write was
        refused, nothing stored). The one wording of that rule: ``status`` and doctor
        (``BackupState.where_writes_go``), the CLI's offline warning and the write lock's busy
        message all say it from here. ``then`` follows the backup (" until it is back");
        ``one`` says it of one write ("… then goes to the JSONL backup")."""
        why = self.why_unwritable()
        if one:
            return f"is refused, nothing stored: {why}" if why else f"goes to the JSONL backup{then}"
        return f"writes are refused: {why}" if why else f"writes go to the JSONL backup{then}"

    # -- write -------------------------------------------------------------------------------
    def append(self, events: Sequence[NewEvent], request: dict[str, Any] | None = None) -> list[str]:
        """Append one command's events durably; raise OSError (file untouched) if that fails."""
        data = encode_command(events, request)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        fd = self._locked_for_append()
        try:
            size = os.fstat(fd).st_size
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except OSError:
                try:
                    os.ftruncate(fd, size)
                    os.fsync(fd)
                except OSError:
                    pass  # the partial command is incomplete, so replay skips and reports it
                raise
        finally:
            os.close(fd)
        if created:
            _fsync_dir(self.path.parent)
        return [e.event_id for e in events]

    def _locked_for_append(self) -> int:
        """The file, open for appending under its exclusive lock: the file at the path once the
        lock is held (an erasure may have replaced the one this opened while it waited)."""
        while True:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if os.stat(self.path).st_ino == os.fstat(fd).st_ino:
                    return fd
            except FileNotFoundError:
                pass
            os.close(fd)

    def forget(self, streams: Iterable[str]) -> int:
        """Rewrite the file without what names one of ``streams`` (erased memories), under the
        appenders' lock; returns how many lines went.

        A command is several lines. One about an erased memory (its first line names it) goes
        whole. Another write that only mentions it (a collision with it, which holds its value)
        keeps its other lines, its size said again: replay decides it anew from its ``request``
        (or pastes what is left), and it is neither lost nor left an incomplete command."""
        wanted = [s.encode() for s in streams if s]
        if not wanted or not self.path.is_file():
            return 0
        with self.path.open("rb") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            lines = fh.readlines()
            kept = _without_naming(lines, wanted)
            if len(kept) == len(lines):
                return 0
            tmp = self.path.with_name(self.path.name + ".erasing")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.writelines(kept)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
            _fsync_dir(self.path.parent)
        self._reset(None)
        return len(lines) - len(kept)

    # -- read --------------------------------------------------------------------------------
    def count_lines(self) -> int:
        if not self.path.exists():
            return 0
        with self.path.open("rb") as fh:
            return sum(1 for line in fh if line.strip())

    def commands(self, offset: int = 0, first_line: int = 1) -> Iterator[tuple[int, int, Command]]:
        """``(end_offset, last_line, command)`` for each command from byte ``offset`` on.

        Only complete lines (ending in a newline) are read: a line still being written is left
        for the next call. ``last_line`` counts non-blank lines from ``first_line``.
        """
        group: list[tuple[int, int, NewEvent | None, str | None]] = []
        group_id: Any = None
        size: int | None = None
        request: dict[str, Any] | None = None
        for number, end, line in self._lines_from(offset, first_line):
            command, command_size, new, error, line_request = _parse(line)
            if group and (command is None or command != group_id):
                yield group[-1][1], group[-1][0], _close(group, size, group_id, request)
                group = []
            if not group:
                group_id, size, request = command, command_size, line_request
            group.append((number, end, new, error))
            if command is None or len(group) == size:
                yield end, number, _close(group, size, group_id, request)
                group = []
        if group:
            yield group[-1][1], group[-1][0], _close(group, size, group_id, request)

    def _lines_from(self, offset: int, first_line: int) -> Iterator[tuple[int, int, bytes]]:
        if not self.path.exists():
            return
        number = first_line - 1
        with self.path.open("rb") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH)  # never read half of an append
            fh.seek(offset)
            for line in fh:
                if not line.endswith(b"\n"):
                    return
                offset += len(line)
                if line.strip():
                    number += 1
                    yield number, offset, line

    # -- pending -----------------------------------------------------------------------------
    def scan(self) -> bool:
        """Read what was appended since the last call (a stat when nothing was); True when some
        backed-up command is not yet known to be in the log. Never asks the log."""
        try:
            st = self.path.stat()
        except OSError:
            self._reset(None)
            return False
        identity = (st.st_dev, st.st_ino)
        if identity != self._identity or st.st_size < self._offset:
            self._reset(identity)  # a new or truncated file: start over
        if st.st_size > self._offset:
            for end, last_line, command in self.commands(self._offset, self._lines + 1):
                self._offset, self._lines, self._checked_at = end, last_line, None
                self._bad += len(command.errors)
                if command.events:
                    self._pending[command.head] = command
                    self._heads.add(command.head)
        return bool(self._pending)

    def heads(self) -> AbstractSet[str]:
        """The head of every command in the file, landed in the log or not: this machine's own
        writes. Read with :meth:`scan`, so only what was appended since the last call is read
        (a replay asks once per replayed write; the file is read once)."""
        self.scan()
        return self._heads  # not copied: a replay asks for it once per write

    def pending_commands(self) -> list[Command]:
        """The backed-up commands not known to be in the log, oldest first (as of the last check)."""
        self.scan()
        return list(self._pending.values())

    def pending(self, present: Callable[[list[str]], set[str]] | None, position: int) -> dict[str, Any] | None:
        """Backed-up writes not yet in the log, by their head event id (``present=None``: the
        log cannot be read, so what was not seen in it yet counts).

        Scans only bytes appended since the last call and rechecks ids only when the log moved.
        """
        self.scan()
        if present is not None and self._pending and position != self._checked_at:
            for chunk in _chunks(list(self._pending), 500):
                for event_id in present(chunk):
                    self._pending.pop(event_id, None)
            self._checked_at = position
        if not self._pending:
            return None
        return {
            "path": str(self.path),
            "writes": len(self._pending),
            "events": sum(len(c.events) for c in self._pending.values()),
            "bad_lines": self._bad,
            "checked": present is not None,
        }


def _without_naming(lines: list[bytes], wanted: list[bytes]) -> list[bytes]:
    """``lines`` without what names one of ``wanted`` (stream ids), command by command (see
    :meth:`BackupLog.forget`)."""
    groups: list[tuple[Any, list[bytes]]] = []  # (command id or None, its lines), in file order
    for line in lines:
        try:
            doc = msgspec.json.decode(line)
            command = doc.get("command") if isinstance(doc, dict) else None
        except msgspec.DecodeError:
            command = None
        if command is not None and groups and groups[-1][0] == command:
            groups[-1][1].append(line)
        else:
            groups.append((command, [line]))
    kept: list[bytes] = []
    for command, group in groups:
        naming = [any(w in line for w in wanted) for line in group]
        if not any(naming):
            kept += group
        elif command is None or naming[0]:
            continue  # about an erased memory (or a line that cannot say what it belongs to)
        else:
            rest = [line for line, named in zip(group, naming, strict=True) if not named]
            for line in rest:
                doc = msgspec.json.decode(line)
                doc["command_size"] = len(rest)
                kept.append(msgspec.json.encode(doc) + b"\n")
    return kept


def _parse(line: bytes) -> tuple[Any, int | None, NewEvent | None, str | None, dict[str, Any] | None]:
    command = size = request = None
    try:
        doc = msgspec.json.decode(line)
        if isinstance(doc, dict):
            command = doc.get("command")
            raw_size = doc.get("command_size")
            size = raw_size if isinstance(raw_size, int) and raw_size > 0 else None
            raw_request = doc.get("request")
            request = raw_request if isinstance(raw_request, dict) and isinstance(raw_request.get("op"), str) else None
        return command, size, from_envelope(line), None, request
    except (msgspec.DecodeError, EnvelopeError) as exc:
        return command, size, None, str(exc), request


def _close(
    group: list[tuple[int, int, NewEvent | None, str | None]],
    size: int | None,
    command_id: Any = None,
    request: dict[str, Any] | None = None,
) -> Command:
    first = group[0][0]
    bad = [n for n, _, _, e in group if e is not None]
    if not bad and (size is None or len(group) == size):
        return Command(
            first,
            events=[new for _, _, new, _ in group if new is not None],
            command_id=command_id if isinstance(command_id, str) else None,
            request=request,
        )
    if not bad:
        reason = f"incomplete command: {len(group)} of {size} lines"
        return Command(first, errors=[{"line": n, "error": reason} for n, _, _, _ in group])
    return Command(
        first, errors=[{"line": n, "error": e or "part of a command with a bad line"} for n, _, _, e in group]
    )


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
