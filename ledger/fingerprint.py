"""Near-duplicate fingerprints: one-permutation MinHash over CJK-aware character shingles.

Shingles are character bigrams inside CJK runs (most Chinese words have two characters, so a
one-character typo such as 张工 → 章工 changes only the bigrams that touch it) and character
4-grams elsewhere (a timestamp 200 ms later changes a handful of them). Each shingle is hashed
once (CRC-32, stable across processes, unlike ``hash()``) and falls into one of ``SLOTS``
buckets whose minimum is kept; empty buckets borrow from the next filled one (rotation
densification), which keeps short texts comparable. The fraction of equal slots estimates the
Jaccard similarity of the shingle sets.

For lookup the signature is cut into ``BANDS`` bands of ``ROWS`` slots: two texts with Jaccard
0.7 share at least one band with probability ~0.99, unrelated ones almost never — an indexed
table of band keys finds candidates without scanning the memories. Only the first
``MAX_CHARS`` characters count, which bounds the cost of a write with a huge content.
"""

from __future__ import annotations

import hashlib
import re
import struct
import zlib
from functools import lru_cache

from ledger.normalize import normalize_text

SLOTS = 64
BANDS = 16
ROWS = SLOTS // BANDS
MAX_CHARS = 4000
NEAR_THRESHOLD = 0.6  # estimated Jaccard at or above which a memory is reported as a near-duplicate

_MASK = 0xFFFFFFFF
_EMPTY = _MASK + 1
_CJK_SPLIT = re.compile("([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+)")
_PACK = struct.Struct(f">{SLOTS}I")


def shingles(text: str) -> set[str]:
    """CJK bigrams and 4-grams of the rest, over the normalised text."""
    out: set[str] = set()
    for i, part in enumerate(_CJK_SPLIT.split(normalize_text(text[:MAX_CHARS]))):
        if i % 2:
            size = 2
        else:
            part = part.strip()
            size = 4
        if not part:
            continue
        if len(part) <= size:
            out.add(part)
            continue
        out.update(part[j : j + size] for j in range(len(part) - size + 1))
    return out


@lru_cache(maxsize=256)
def signature(text: str) -> tuple[int, ...]:
    """``SLOTS`` minima (the same text always yields the same signature)."""
    slots = [_EMPTY] * SLOTS
    crc = zlib.crc32
    for shingle in shingles(text):
        # CRC-32 is linear; a multiplicative (Fibonacci) step spreads it before the top 6 bits
        # pick the bucket and the low 26 bits are the value.
        h = crc(shingle.encode()) * 0x9E3779B1 & _MASK
        bucket, value = h >> 26, h & 0x3FFFFFF
        if value < slots[bucket]:
            slots[bucket] = value
    if all(v == _EMPTY for v in slots):
        return tuple([0] * SLOTS)
    out = list(slots)
    following, distance = _EMPTY, 0
    for i in range(2 * SLOTS - 1, -1, -1):  # rotation densification: borrow the next filled minimum
        k = i % SLOTS
        if slots[k] != _EMPTY:
            following, distance = slots[k], 0
            continue
        distance += 1
        if i < SLOTS:
            out[k] = (following + distance * 0x9E3779B1) & _MASK
    return tuple(out)


def band_keys(sig: tuple[int, ...], scope: str = "") -> list[int]:
    """One signed 64-bit key per band (SQLite INTEGER), scoped (e.g. by workspace)."""
    scope_bytes = scope.encode()
    keys = []
    for band in range(BANDS):
        chunk = sig[band * ROWS : (band + 1) * ROWS]
        digest = hashlib.blake2b(struct.pack(f">B{ROWS}I", band, *chunk) + scope_bytes, digest_size=8).digest()
        keys.append(int.from_bytes(digest, "big", signed=True))
    return keys


def pack(sig: tuple[int, ...]) -> bytes:
    return _PACK.pack(*sig)


def unpack(blob: bytes) -> tuple[int, ...]:
    return _PACK.unpack(blob)


def similarity(left: tuple[int, ...], right: tuple[int, ...]) -> float:
    """Estimated Jaccard similarity: the fraction of equal slots."""
    return sum(a == b for a, b in zip(left, right, strict=True)) / SLOTS
