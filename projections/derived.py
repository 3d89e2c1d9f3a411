"""Expensive pure derivations of a memory's text, cached by the hash of their inputs.

Claim extraction and the MinHash signature are pure Python and cost ~100 µs each per memory:
together they were two thirds of a rebuild. The design's rule for expensive derived data
applies (cached by content hash so a rebuild reuses it): each value is stored under a hash of
the function's kind, its version and its inputs, written when the value is first computed (in
the write transaction that projects the memory), and read back by a rebuild.

The cache never changes what a projection holds: a value is exactly what the pure function
returns for those inputs, and a changed function carries a new version, so old entries simply
stop matching. It is not a projection: ``ledger rebuild`` keeps it (that is its point), and
``verify`` folds with it switched off, since a fresh fold must not trust a cache.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import apsw
import msgspec

from fact_ledger.ledger import fingerprint
from fact_ledger.ledger.claims import Claim, extract_claims

T = TypeVar("T")

# Created by projections.runner on open, beside the projection checkpoints.
SCHEMA = """
CREATE TABLE IF NOT EXISTS derived_cache(
    key   BLOB PRIMARY KEY,
    value BLOB NOT NULL
) WITHOUT ROWID
"""
# Bump when the function behind a kind changes its output for some input.
# 2: no trait of a named person as a value; 3: likes, where one lives and works; 4: who owns a
# thing, a role's value read as a name, attributes without leftover grammar; 5: a possessive
# subject's attribute ("phone number", not "s phone number"), "10:30 on Mondays" a time, "is at"
# an address is "is", "X reports to Y" X's manager; 6: "X No longer reports to Y" (any case) is
# no claim; 7: spelled-out byte units and weeks, a boss/supervisor/上级 a manager, "X 向 Y 汇报";
# 8: 经理/上级/老板/领导 the key "manager" of either language; "Erin is the team lead" the lead's slot;
# "uses port N" a port; "we moved X to Y" X's slot; a negated verb before a value no claim;
# 9: "we upgraded Postgres to 17" the version's slot; "moved from A to B" states B; 10: "we're on
# Postgres 16" the version's slot, "Carol is my manager" the manager's, "Alice负责…" Alice; an
# undone change ("… but rolled it back") no value, a change back ("… back to 8080", 改回) its value;
# a chat's lead-in ("FYI …") is not read; 11: a remark on a note ("that note is obsolete") no
# claim, a correction's preamble ("that was wrong, …", "correction: …") not read; "send the report
# to Alice" nobody's manager, "I report to Dana" the subject's; 12: a time before the fact ("since
# Monday", "as of today", "from now on") not read, "now runs on port", "moved to port", "listens
# on 9091" a port, "date" a filler of a date ("the launch date" is the launch's), "ownership" the
# owner, "string" a value, "starts at/on" a time only; 13: "new"/"updated" before one thing its
# replacement ("Alice's new phone number"), a migration what a thing uses ("we migrated X to
# Postgres 16"), 提高到/降到/换成 a change, "我们把X…" X's slot; 14: "max_connections" is "max
# connections", "X set/raised to Y" a change, "12 Main Street" an address, "the office (has) moved
# to Denver" where it is ("is in"), "we moved offices to …" the office; "Dave is on call (this
# week)" the on-call role's holder, "on-call engineer/person" the on-call; 15: a date in May (read
# as a hedge), "renamed to engineering" a value, "4B" no byte count, "moved to desk 7A" the desk,
# "ends/expires on", "lasts", "rescheduled for", "promoted to" (a title), "took over as" (a role);
# 16: "costs" the price, "ends" the end, "expires" the expiry, "lasts" the duration (one slot either
# way said), "$20/month" $20, "has 3 nodes" a count, "departs at", "delayed to 11:40am", a CEO a role;
# 17: "went up to", 从今天起, 每天早上9点半 the
# time, 换了新手机号…, 迁移到 (uses), 团队有8个人 / 扩大到12个人
# 18: a migration to a product only, an office's move to a named place (not a plan), a street
# address its own slot, months and years one unit, a person's leaving no slot, "took over as" no
# ownership, a date said first no subject, "promoted to" an office no title, a leading 把
# 19: "new" before a one-value attribute ("the new CEO", "new support email:"), "Alice changed her
# phone number to …", extended/scaled/located, 调大到/削减到, 在每天…, "LOG_LEVEL" no name, 将/要
# (still to come) and 吗 (asked) no value
# 20: a rate's period part of the slot ("$20 per month" is not "$200 per year" nor "$20 per user")
# 21: "extended to" a deadline's or an end's only, "new" right before a one-value attribute and
# not before another's ("our new client's contact"), a condition after a price or a duration part of
# its slot, a departure of one schedule among several none, 在<time><activity> none, "promoted to" a
# title word, "She changed her …" none
# 22: "is taking over as", a count of people, HQ the headquarters
# 23: claims 25 (projections/claims.py)
# 24: claims 26
# 25: claims 27
# 26: claims 28
# 27: claims 29
# 28: claims 30
CLAIMS_KIND = b"claims/28"
FINGERPRINT_KIND = b"minhash/2"  # packed signature + band keys
EMBEDDING_KIND = b"embedding/1"  # float32 vector of (model id, passage text)

_KEYS = struct.Struct(f">{fingerprint.BANDS}q")  # band keys: signed 64-bit, as SQLite stores them
_SIGNATURE_BYTES = len(fingerprint.pack((0,) * fingerprint.SLOTS))
_msgpack = msgspec.msgpack.Encoder().encode  # for the key's inputs and for claims
_decode_claims = msgspec.msgpack.Decoder(tuple[Claim, ...]).decode


class _Switch:
    on = True
    read = True  # off while a write folds its own events (:func:`writing_through`)
    sink: dict[bytes, bytes] | None = None  # where such a write's new values wait to be stored
    touched: set[bytes] | None = None  # keys a rebuild used (an erasure keeps only those)


_switch = _Switch()


@contextmanager
def bypassed() -> Iterator[None]:
    """Compute every value afresh (neither read nor written) inside the block."""
    _switch.on = False
    try:
        yield
    finally:
        _switch.on = True


@contextmanager
def writing_through(sink: dict[bytes, bytes]) -> Iterator[None]:
    """Keep values in ``sink`` without looking for them first, inside the block: a write
    folding the events it just decided. Its texts are new to the cache but for a repeat, and
    the decision has just computed their values (the pure functions are memoised), so a lookup
    would cost a statement to find nothing. The owner stores ``sink`` after the write commits
    (:func:`store`), off the write's transaction; a repeat replaces an equal value."""
    _switch.read, _switch.sink = False, sink
    try:
        yield
    finally:
        _switch.read, _switch.sink = True, None


@contextmanager
def recording(keys: set[bytes]) -> Iterator[None]:
    """Add every cache key read or written inside the block to ``keys``."""
    _switch.touched = keys
    try:
        yield
    finally:
        _switch.touched = None


def claims(
    conn: apsw.Connection, content: str, subject: str, explicit: tuple[tuple[str, str, str], ...]
) -> tuple[Claim, ...]:
    """:func:`ledger.claims.extract_claims`, through the cache."""
    return _cached(
        conn,
        CLAIMS_KIND,
        (content, subject, explicit),
        lambda: extract_claims(content, subject, explicit),
        _msgpack,
        _decode_claims,
    )


def claims_many(
    conn: apsw.Connection, texts: list[tuple[str, str, tuple[tuple[str, str, str], ...]]]
) -> list[tuple[Claim, ...]]:
    """:func:`claims` of many (content, subject, explicit claims), one cache look-up per batch."""
    return _cached_many(conn, CLAIMS_KIND, texts, extract_claims, _msgpack, _decode_claims)


def fingerprints(conn: apsw.Connection, content: str, scope: str) -> tuple[bytes, tuple[int, ...]]:
    """The packed :func:`ledger.fingerprint.signature` of ``content`` and its band keys in ``scope``."""
    return _cached(
        conn,
        FINGERPRINT_KIND,
        (content, scope),
        lambda: _fingerprint(content, scope),
        _encode_fingerprints,
        _decode_fingerprints,
    )


def fingerprints_many(conn: apsw.Connection, texts: list[tuple[str, str]]) -> list[tuple[bytes, tuple[int, ...]]]:
    """:func:`fingerprints` of many (content, scope) pairs, with one cache look-up per batch
    instead of one per text (a rebuild folds every memory: a statement each was ~5 % of it)."""
    return _cached_many(conn, FINGERPRINT_KIND, texts, _fingerprint, _encode_fingerprints, _decode_fingerprints)


def _fingerprint(content: str, scope: str) -> tuple[bytes, tuple[int, ...]]:
    sig = fingerprint.signature(content)
    return fingerprint.pack(sig), tuple(fingerprint.band_keys(sig, scope))


def _encode_fingerprints(value: tuple[bytes, tuple[int, ...]]) -> bytes:
    return value[0] + _KEYS.pack(*value[1])


def _decode_fingerprints(blob: bytes) -> tuple[bytes, tuple[int, ...]]:
    if len(blob) != _SIGNATURE_BYTES + _KEYS.size:
        raise ValueError("not a fingerprint entry")
    return blob[:_SIGNATURE_BYTES], _KEYS.unpack_from(blob, _SIGNATURE_BYTES)


def embedding_key(model_id: str, text: str) -> bytes:
    """The cache key of a passage's embedding under one model: (content hash, model id) in one."""
    return _key(EMBEDDING_KIND, (model_id, text))


def cached_values(conn: apsw.Connection, keys: list[bytes]) -> dict[bytes, bytes]:
    """The entries present for ``keys`` (embeddings are computed outside any transaction, so a
    caller looks them up first, computes the missing ones, then stores them with :func:`store`)."""
    if not keys or not _switch.on:
        return {}
    return _lookup(conn, keys)


def _lookup(conn: apsw.Connection, keys: list[bytes]) -> dict[bytes, bytes]:
    if len(keys) == 1:  # a fold event by event (a pull, an update): the plain primary-key read is 2x faster
        row = conn.execute("SELECT value FROM derived_cache WHERE key=?", (keys[0],)).fetchone()
        return {keys[0]: bytes(row[0])} if row is not None else {}
    rows = conn.execute(
        "SELECT d.key, d.value FROM json_each(?) j JOIN derived_cache d ON d.key = unhex(j.value)",
        (msgspec.json.encode([k.hex() for k in keys]).decode(),),
    )
    return {bytes(k): bytes(v) for k, v in rows}


def store(conn: apsw.Connection, items: list[tuple[bytes, bytes]]) -> None:
    if items and _switch.on:
        conn.executemany("INSERT OR REPLACE INTO derived_cache(key, value) VALUES(?, ?)", items)


def _key(kind: bytes, inputs: tuple[Any, ...]) -> bytes:
    return hashlib.blake2b(_msgpack(inputs), digest_size=16, person=kind[:16].ljust(16, b"\0")).digest()


def _cached(
    conn: apsw.Connection,
    kind: bytes,
    inputs: tuple[Any, ...],
    compute: Callable[[], T],
    encode: Callable[[T], bytes],
    decode: Callable[[bytes], T],
) -> T:
    return _cached_many(conn, kind, [inputs], lambda *_: compute(), encode, decode)[0]


_BATCH = 2048  # keys per look-up statement


def _cached_many(
    conn: apsw.Connection,
    kind: bytes,
    inputs: list[tuple[Any, ...]],
    compute: Callable[..., T],
    encode: Callable[[T], bytes],
    decode: Callable[[bytes], T],
) -> list[T]:
    """:func:`_cached` for many inputs at once, under the same switches."""
    if not _switch.on:
        return [compute(*i) for i in inputs]
    keys = [_key(kind, i) for i in inputs]
    if _switch.touched is not None:
        _switch.touched.update(keys)
    found: dict[bytes, bytes] = {}
    if _switch.read:
        for start in range(0, len(keys), _BATCH):
            found.update(_lookup(conn, keys[start : start + _BATCH]))
    out: list[T] = []
    fresh: dict[bytes, bytes] = {}
    for key, args in zip(keys, inputs, strict=True):
        blob = found.get(key)
        if blob is not None:
            try:
                out.append(decode(blob))
                continue
            except (msgspec.DecodeError, ValueError, struct.error):  # a damaged entry: compute it again
                pass
        value = compute(*args)
        out.append(value)
        fresh[key] = encode(value)
    if _switch.sink is not None:
        _switch.sink.update(fresh)
    elif fresh:
        conn.executemany("INSERT OR REPLACE INTO derived_cache(key, value) VALUES(?, ?)", list(fresh.items()))
    return out
