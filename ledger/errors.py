"""The error tree every layer shares; each class carries the wire ``code`` agents receive.

LedgerError
├── InvalidInput        invalid_input
├── NotFound            not_found
├── Locked              locked
├── VersionConflict     version_conflict
│   └── StreamVersionConflict   (the store's UNIQUE(stream_id, stream_version) fired)
├── ForbiddenWorkspace  forbidden_workspace
├── Unauthorized        unauthorized
├── Unavailable         unavailable
└── ChainBroken         chain_broken (verify found a bad position)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any


def closest(name: object, known: Iterable[str], *, cutoff: float = 0.75) -> str | None:
    """The known name ``name`` was probably meant to be (a ``did_you_mean``), or None.

    One helper for every place that refuses an unknown name (tool fields, routes, config keys),
    so that a typo gets the same kind of hint wherever it is made.
    """
    close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=cutoff)
    return close[0] if close else None


def quoted(text: str, limit: int = 40) -> str:
    """``text`` quoted for a refusal that names what was sent, at most ``limit`` characters, a
    longer one cut and marked ``…``. A word of 16 characters or more that the limit falls in (the
    shape of a token, a key) is left out whole: a credential pasted there (a token in a time
    field) is then quoted whole or not at all, so that the answer's scrub
    (server/app/credentials.py) finds it; cut inside, its head would pass as a word."""
    if len(text) <= limit:
        return repr(text)
    head = text[:limit]
    for word in re.finditer(r"\S+", text):
        if word.start() < limit < word.end() and word.end() - word.start() >= 16:  # the word the cut falls in
            head = text[: word.start()]
            break
    return repr(head.rstrip() + "…")


class LedgerError(Exception):
    """Base class: a failure with a stable code, a short message and optional details."""

    code = "error"

    def __init__(self, message: str, *, field: str | None = None, names: tuple[str, ...] = (), **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        # other fields the message names with their value ("until (2026-01-01…)"), besides
        # ``field``: the command line says each as its option; no part of the answer
        self.names = names
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field:
            out["field"] = self.field
        out.update({k: v for k, v in self.details.items() if v is not None})
        return out


class InvalidInput(LedgerError):
    """The request broke a limit or a rule; nothing was written."""

    code = "invalid_input"


class NotFound(LedgerError):
    """No memory, conflict or event with that id (in the caller's reach)."""

    code = "not_found"


class Locked(LedgerError):
    """The memory is protected or locked and the call carried no authorisation."""

    code = "locked"


class VersionConflict(LedgerError):
    """The caller's expected version (or a judgment pin) is stale."""

    code = "version_conflict"


class StreamVersionConflict(VersionConflict):
    """Another writer appended to the same stream version first."""


class ForbiddenWorkspace(LedgerError):
    """Strict isolation refuses access to another workspace's memory."""

    code = "forbidden_workspace"


class Unauthorized(LedgerError):
    """A governance action without ``authorized: true`` (or refused by policy)."""

    code = "unauthorized"


class Unavailable(LedgerError):
    """The capability or the storage is unavailable; nothing was claimed stored."""

    code = "unavailable"


class LogUnreachable(Unavailable):
    """The log of record (a PostgreSQL server) cannot be reached; the next call reconnects.

    Storage treats it like a locked file: writes go to the JSONL backup and reads are answered
    from the local read models, which hold everything up to the last position they caught up to.
    """


class ChainBroken(LedgerError):
    """The hash chain or a projection disagrees with the events at ``position``."""

    code = "chain_broken"
