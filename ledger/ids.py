"""Time-ordered identifiers (UUIDv7 layout, RFC 9562).

Random UUIDs scattered through a B-tree index cost about 6x on appends; a 48-bit millisecond
prefix keeps new keys at the right edge of the index.
"""

from __future__ import annotations

import os
import threading
import time
import uuid

MAX_ID = 2**63 - 1  # SQLite's largest integer: ids and log positions are 1..MAX_ID (a larger one overflows a bind)


def is_id(value: object) -> bool:
    """``value`` is an id or a log position: an integer in 1..MAX_ID, and not a boolean (``True``
    is an ``int`` in Python)."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_ID


def ascii_digits(text: str) -> bool:
    """``text`` is digits 0-9 only: ``str.isdigit`` also takes ``²`` (which ``int`` refuses) and
    other scripts' digits (``٣``, which ``int`` reads as 3), neither of which names an id here."""
    return text.isascii() and text.isdigit()


def position_in(digits: str) -> int:
    """The log position ASCII ``digits`` name, at most MAX_ID: a longer number lies past the end
    of any log (which is the end), and Python refuses to read one of over 4,300 digits."""
    digits = digits.lstrip("0") or "0"
    return MAX_ID if len(digits) > len(str(MAX_ID)) else min(int(digits), MAX_ID)


def typed_key(text: str) -> str:
    """A key as a person types or pastes it: the spaces copied around it dropped, and in lower
    case, as the ledger writes its own (change ids, suggestion ids, rule names); a key typed in
    capitals names the same thing."""
    return text.strip().lower()


_lock = threading.Lock()
_last_ms = 0
_seq = 0


def uuid7() -> str:
    """Return a new UUIDv7 string, monotonic within this process."""
    global _last_ms, _seq
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            ms = _last_ms
            _seq = (_seq + 1) & 0xFFF
            if _seq == 0:  # 4096 ids in one millisecond: borrow the next one
                ms += 1
        else:
            _seq = int.from_bytes(os.urandom(2), "big") & 0x3FF
        _last_ms = ms
        seq = _seq
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms << 80) | (0x7 << 76) | (seq << 64) | (0b10 << 62) | rand
    return str(uuid.UUID(int=value))
