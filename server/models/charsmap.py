"""SentencePiece's ``precompiled_charsmap``, rebuilt from a plain map of replacements.

llama.cpp's UGM (``t5``) tokenizer normalises text with the blob SentencePiece stores in its model:
``uint32 trie_size`` (bytes, little endian), a Darts-clone double array of ``trie_size / 4`` units
keyed by the UTF-8 bytes of the text to replace, then the replacements as NUL-terminated UTF-8
strings; a key's value is the offset of its replacement in that string pool. At each position the
tokenizer takes the longest key that matches (``llama-vocab.cpp``, ``normalize_prefix``).

Some packages ship only the per-codepoint map the charsmap was compiled from; this module compiles
it back. A unit is ``offset << 10 | has_leaf << 8 | label`` for an inner node and
``1 << 31 | value`` for a value; the children of node ``i`` sit at ``i ^ offset(i) ^ label`` and a
key's value is the child at label 0. Offsets stay below 2**21, so bit 9 (the "shifted offset"
flag) is never needed.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

_VALUE_BIT = 1 << 31
_MAX_OFFSET = 1 << 21


def _string_pool(replacements: Mapping[str, str]) -> tuple[bytes, dict[bytes, int]]:
    """Each distinct replacement once, NUL-terminated, in sorted order (stable output)."""
    pool = bytearray()
    where: dict[str, int] = {}
    for text in sorted(set(replacements.values())):
        where[text] = len(pool)
        pool += text.encode("utf-8") + b"\0"
    return bytes(pool), {key.encode("utf-8"): where[value] for key, value in replacements.items()}


def _trie(keys: Mapping[bytes, int]) -> dict:
    """A byte trie as nested dicts; ``None`` holds a key's value."""
    root: dict = {}
    for key, value in keys.items():
        if not key or b"\0" in key:
            raise ValueError(f"charsmap keys must be non-empty and free of NUL: {key!r}")
        node = root
        for byte in key:
            node = node.setdefault(byte, {})
        node[None] = value
    return root


class _DoubleArray:
    """First-fit placement of each node's children in one growing array of units.

    Every node gets its own base: the walk checks only a child's label, so two parents sharing a
    base would see each other's children. The array covers ``base | 0xFF`` for every base, since
    llama.cpp throws (and the process aborts) on a lookup past its end.
    """

    def __init__(self) -> None:
        self.units: list[int] = [0]
        self.used: list[bool] = [True]  # unit 0 is the root
        self.search_from = 1
        self.bases: set[int] = set()

    def _grow(self, size: int) -> None:
        if size > len(self.units):
            extra = max(size - len(self.units), 4096)
            self.units += [0] * extra
            self.used += [False] * extra

    def _next_free(self, position: int) -> int:
        """The first free slot at or after ``position`` (list.index skips used ones at C speed)."""
        while True:
            try:
                return self.used.index(False, position)
            except ValueError:
                self._grow(len(self.used) + 1)

    def _free_base(self, labels: list[int]) -> int:
        """The lowest base whose slots ``base ^ label`` are all free (never slot 0, the root).

        Candidates come from free slots for the first label, so used stretches cost nothing.
        """
        first, position = labels[0], self.search_from
        while True:
            position = self._next_free(position)
            base = position ^ first
            if base not in self.bases:
                self._grow((base | 0xFF) + 1)
                if all(base ^ label and not self.used[base ^ label] for label in labels):
                    return base
            position += 1

    def place(self, index: int, node: dict) -> None:
        labels = sorted(0 if label is None else label for label in node)
        base = self._free_base(labels)
        offset = base ^ index
        if offset >= _MAX_OFFSET:
            raise ValueError("charsmap too large for an unshifted double array")
        has_leaf = None in node
        self.bases.add(base)
        self._grow((base | 0xFF) + 1)  # llama.cpp throws on an index past the array
        self.units[index] |= offset << 10 | (1 << 8 if has_leaf else 0)
        for label in labels:
            self.used[base ^ label] = True
        self.search_from = self._next_free(self.search_from)
        for label in labels:
            slot = base ^ label
            if label == 0:
                self.units[slot] = _VALUE_BIT | node[None]
            else:
                self.units[slot] = label
                child = node[label]
                self.place(slot, child)


def _covered_length(array: _DoubleArray) -> int:
    """Trim the growth slack, keeping every base's block of 256 inside the array."""
    last_used = max(i for i, used in enumerate(array.used) if used)
    return max([last_used + 1, 256, *((base | 0xFF) + 1 for base in array.bases)])  # 256: an empty root


def build_charsmap(replacements: Mapping[str, str]) -> bytes:
    """Compile ``{text: replacement}`` into a ``precompiled_charsmap`` blob (deterministic)."""
    pool, keys = _string_pool(replacements)
    array = _DoubleArray()
    root = _trie(keys)
    if root:
        array.place(0, root)
    length = _covered_length(array)
    array._grow(length)
    units = array.units[:length]
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + pool


def normalize_prefix(charsmap: bytes, data: bytes) -> tuple[bytes, int] | None:
    """The longest key at the start of ``data``: ``(replacement, bytes consumed)``, or None.

    The same walk as llama.cpp's ``normalize_prefix``, so tests can check a compiled map without
    loading a model.
    """
    (size,) = struct.unpack_from("<I", charsmap, 0)
    units = struct.unpack_from(f"<{size // 4}I", charsmap, 4)
    pool = charsmap[4 + size :]

    def offset(unit: int) -> int:
        return (unit >> 10) << ((unit & (1 << 9)) >> 6)

    best: tuple[bytes, int] | None = None
    node = offset(units[0])
    for consumed, byte in enumerate(data, start=1):
        if byte == 0:
            break
        node ^= byte
        if node >= len(units) or units[node] & (_VALUE_BIT | 0xFF) != byte:
            break
        is_leaf = (units[node] >> 8) & 1
        node ^= offset(units[node])
        if is_leaf:
            start = units[node] & (_VALUE_BIT - 1)
            best = (pool[start : pool.index(b"\0", start)], consumed)
    return best
