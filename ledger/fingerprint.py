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

import re
import struct
import zlib
from array import array
from bisect import bisect_right
from functools import lru_cache

from fact_ledger.ledger.memo import text_cache
from fact_ledger.ledger.normalize import normalize_text

SLOTS = 64
BANDS = 16
ROWS = SLOTS // BANDS
MAX_CHARS = 4000
NEAR_THRESHOLD = 0.6  # estimated Jaccard at or above which a memory is reported as a near-duplicate

_MASK = 0xFFFFFFFF
_EMPTY = _MASK + 1
_CJK_SPLIT = re.compile("([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+)")
_PACK = struct.Struct(f">{SLOTS}I")
assert array("I").itemsize == 4  # packed_similarity counts 32-bit lanes


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
        out.update(map(part.__getitem__, map(slice, range(len(part) - size + 1), range(size, len(part) + 1))))
    return out


@text_cache(maxsize=256)
def signature(text: str) -> tuple[int, ...]:
    """``SLOTS`` minima (the same text always yields the same signature)."""
    # CRC-32 is linear; a multiplicative (Fibonacci) step spreads it, then the top 6 bits pick
    # the bucket and the low 26 bits are the value. Within one bucket the order of the mixed
    # hashes is the order of their values, so assigning them in descending order leaves each
    # bucket's minimum (comprehensions and map keep this in C: it runs on every write).
    mixed = sorted((h * 0x9E3779B1 & _MASK for h in map(zlib.crc32, map(str.encode, shingles(text)))), reverse=True)
    minima = {h >> 26: h & 0x3FFFFFF for h in mixed}
    if not minima:
        return tuple([0] * SLOTS)
    if len(minima) == SLOTS:
        return tuple(minima[i] for i in range(SLOTS))
    # Rotation densification: an empty bucket borrows the next filled bucket's minimum (going
    # round), shifted by the distance so that borrowed slots differ from the lender's.
    filled = sorted(minima)
    out = []
    for i in range(SLOTS):
        if i in minima:
            out.append(minima[i])
            continue
        k = bisect_right(filled, i)
        j = filled[k] if k < len(filled) else filled[0] + SLOTS
        out.append((minima[j % SLOTS] + (j - i) * 0x9E3779B1) & _MASK)
    return tuple(out)


def band_keys(sig: tuple[int, ...], scope: str = "") -> list[int]:
    """One signed 64-bit key per band (SQLite INTEGER), scoped (e.g. by workspace).

    Two CRC-32s over the band's bytes make the key: stable across processes and versions, and
    a false match between two different bands only costs one extra candidate to verify.
    A write asks twice for the same keys (the near-duplicate lookup, then the projection).
    """
    return list(_band_keys(sig, scope))


@lru_cache(maxsize=256)
def _band_keys(sig: tuple[int, ...], scope: str) -> tuple[int, ...]:
    scope_crc = zlib.crc32(scope.encode())
    packed = _PACK.pack(*sig)
    keys = []
    for band in range(BANDS):
        chunk = bytes((band,)) + packed[band * ROWS * 4 : (band + 1) * ROWS * 4]
        key = zlib.crc32(chunk, scope_crc) << 32 | zlib.crc32(chunk[::-1], band)
        keys.append(key - (1 << 64) if key >= 1 << 63 else key)
    return tuple(keys)


def pack(sig: tuple[int, ...]) -> bytes:
    return _PACK.pack(*sig)


def unpack(blob: bytes) -> tuple[int, ...]:
    return _PACK.unpack(blob)


def similarity(left: tuple[int, ...], right: tuple[int, ...]) -> float:
    """Estimated Jaccard similarity: the fraction of equal slots."""
    return sum(a == b for a, b in zip(left, right, strict=True)) / SLOTS


def packed_similarity(left: bytes, right: bytes) -> float:
    """:func:`similarity` on packed signatures, in C: XOR them and count the all-zero 32-bit lanes."""
    xored = (int.from_bytes(left, "big") ^ int.from_bytes(right, "big")).to_bytes(len(left), "big")
    return array("I", xored).count(0) / SLOTS
