"""Read your own writes while the log is unreachable: this machine's backed-up writes that the
log does not hold yet, shown by ``find`` and ``read`` marked ``pending: true``.

They come from the JSONL backup (:mod:`server.app.backup_log`), not from the read models: a
backed-up write has no memory id until it lands (replay decides it again then, so it may still
be absorbed as a duplicate). ``find`` lists a pending new memory when every word of the query
is in its content or subject (an empty query lists them all); ``read`` lists the pending
changes to the memory it shows.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from fact_ledger.ledger.log.events import MemoryRecorded, encode_payload, type_name
from fact_ledger.server.app.backup_log import Command
from fact_ledger.server.app.storage import Storage

_WORD = re.compile(r"\w+", re.UNICODE)


def _pending_commands(storage: Storage) -> list[Command]:
    if not storage.backup_log.scan():  # a stat of the file when nothing is pending
        return []
    storage.pending_backup()  # drop what the log holds by now (when it can be asked)
    return storage.backup_log.pending_commands()


def pending_finds(storage: Storage, query: str, scope: tuple[str, ...] | None) -> list[dict[str, Any]]:
    """New memories in the backup that match ``query`` within ``scope`` (None: every workspace)."""
    words = [w.lower() for w in _WORD.findall(query)]
    out = []
    for command in _pending_commands(storage):
        head = command.events[0]
        data = head.data
        if not isinstance(data, MemoryRecorded):
            continue
        if scope is not None and head.workspace not in scope:
            continue
        text = f"{data.content} {data.subject}".lower()
        if not all(w in text for w in words):
            continue
        out.append(
            {
                "memory_id": None,
                "pending": True,
                "content": data.content,
                "subject": data.subject,
                "tags": list(data.tags),
                "source_type": data.source_type,
                "workspace": head.workspace,
                "event_time": head.event_time,
                "recorded_at": head.recorded_at,
                "event_id": head.event_id,
            }
        )
    return out[::-1]  # newest first


def pending_changes(storage: Storage, stream_id: str) -> list[dict[str, Any]]:
    """The backed-up events about one memory (by its stream) that the log does not hold yet."""
    out = []
    for command in _pending_commands(storage):
        for ev in command.events:
            if ev.stream_id == stream_id:
                out.append(
                    {
                        "pending": True,
                        "type": type_name(ev.data),
                        "event_time": ev.event_time,
                        "recorded_at": ev.recorded_at,
                        "event_id": ev.event_id,
                        "payload": msgspec.json.decode(encode_payload(ev.data)),
                    }
                )
    return out
