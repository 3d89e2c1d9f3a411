"""Check a GGUF file's header before llama.cpp sees it, and read the metadata the embedder needs.

llama.cpp refuses the broken files we tried (truncated, wrong head count, a charsmap of the wrong
type) with an error, but it is C++ reading a memory-mapped file on the assumption that it is
well formed, and its source still asserts on some metadata types: one abort would take the whole
server down. So this reader walks the header first, with bounds checks on every read — magic,
version, every key/value, every tensor's extent inside the file — and raises
:class:`GGUFHeaderError` naming what is wrong, so only well-formed files reach llama.cpp. Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from typing import Any

_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
_U64 = struct.Struct("<Q")
_MAX_STRING = 1 << 24  # no key or value of a real model comes near 16 MiB
_KEPT_ARRAYS = ("tokenizer.ggml.precompiled_charsmap",)  # arrays whose bytes we keep; others skipped


class GGUFHeaderError(ValueError):
    """The file is not a GGUF model this process is willing to hand to llama.cpp."""


@dataclass(frozen=True)
class GGUFInfo:
    """What the header says: scalar metadata, array lengths and element types, tensor count."""

    version: int
    metadata: dict[str, Any]
    arrays: dict[str, tuple[int, int]]  # key -> (element type, count)
    tensor_count: int

    def get_int(self, key: str, default: int | None = None) -> int | None:
        value = self.metadata.get(key, default)
        return value if isinstance(value, int) and not isinstance(value, bool) else default

    def get_str(self, key: str, default: str = "") -> str:
        value = self.metadata.get(key, default)
        return value if isinstance(value, str) else default


class _Reader:
    """Bounds-checked little-endian reads over the mapped file."""

    def __init__(self, data: mmap.mmap) -> None:
        self.data, self.pos, self.size = data, 0, len(data)

    def read(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.size:
            raise GGUFHeaderError("truncated GGUF header")
        self.pos += n
        return self.data[self.pos - n : self.pos]

    def unpack(self, fmt: str) -> Any:
        width = struct.calcsize("<" + fmt)
        if self.pos + width > self.size:
            raise GGUFHeaderError("truncated GGUF header")
        self.pos += width
        return struct.unpack_from("<" + fmt, self.data, self.pos - width)[0]

    def string(self) -> str:
        length = self.unpack("Q")
        if length > _MAX_STRING:
            raise GGUFHeaderError("GGUF string too long")
        try:
            return self.read(length).decode("utf-8")
        except UnicodeDecodeError:
            raise GGUFHeaderError("GGUF string is not UTF-8") from None

    def skip(self, n: int) -> None:
        if n < 0 or self.pos + n > self.size:
            raise GGUFHeaderError("truncated GGUF header")
        self.pos += n

    def skip_strings(self, count: int) -> None:
        """Skip ``count`` length-prefixed strings (a 250k-token vocabulary: one tight loop)."""
        data, pos, size, length_at = self.data, self.pos, self.size, _U64.unpack_from
        for _ in range(count):
            if pos + 8 > size:
                raise GGUFHeaderError("truncated GGUF header")
            pos += 8 + length_at(data, pos)[0]
        if pos > size:
            raise GGUFHeaderError("truncated GGUF header")
        self.pos = pos

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        raise GGUFHeaderError(f"unknown GGUF value type {kind}")


def _array(reader: _Reader, key: str, arrays: dict[str, tuple[int, int]]) -> Any:
    kind, count = reader.unpack("I"), reader.unpack("Q")
    if count > reader.size:
        raise GGUFHeaderError(f"GGUF array {key} is longer than the file")
    arrays[key] = (kind, count)
    if kind in _SCALARS:
        width = struct.calcsize(_SCALARS[kind])
        if key in _KEPT_ARRAYS:
            return reader.read(width * count)
        reader.skip(width * count)
    elif kind == _STRING:
        reader.skip_strings(count)
    else:
        raise GGUFHeaderError(f"GGUF array {key} has unsupported element type {kind}")
    return None


# (elements per block, bytes per block) of ggml's common tensor types, as in gguf's
# GGML_QUANT_SIZES: that package imports numpy (~0.4 s), and ``ledger status`` reads this header
# on every call. Other types are looked up there.
_BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 30: (1, 2)}


def _tensor_bytes(ggml_type: int, elements: int) -> int:
    if ggml_type in _BLOCKS:
        block, size = _BLOCKS[ggml_type]
    else:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        try:
            block, size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
        except (ValueError, KeyError):
            raise GGUFHeaderError(f"unknown tensor type {ggml_type}") from None
    if elements % block:
        raise GGUFHeaderError("tensor size is not a whole number of blocks")
    return elements // block * size


def read_gguf_header(path: str) -> GGUFInfo:
    """Validate ``path`` as GGUF v2/v3 and return its metadata; raise :class:`GGUFHeaderError`."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size < 24:
            raise GGUFHeaderError("not a GGUF file (too short)")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _read(_Reader(data))


def _read(reader: _Reader) -> GGUFInfo:
    size = reader.size
    if reader.read(4) != b"GGUF":
        raise GGUFHeaderError("not a GGUF file (bad magic)")
    version = reader.unpack("I")
    if version not in (2, 3):
        raise GGUFHeaderError(f"unsupported GGUF version {version}")
    tensor_count, kv_count = reader.unpack("Q"), reader.unpack("Q")
    if tensor_count > size or kv_count > size:
        raise GGUFHeaderError("GGUF counts exceed the file size")
    metadata: dict[str, Any] = {}
    arrays: dict[str, tuple[int, int]] = {}
    for _ in range(kv_count):
        key = reader.string()
        kind = reader.unpack("I")
        metadata[key] = _array(reader, key, arrays) if kind == _ARRAY else reader.value(kind)
    extents = []
    for _ in range(tensor_count):
        reader.string()
        dims = reader.unpack("I")
        if dims > 4:
            raise GGUFHeaderError("tensor with more than 4 dimensions")
        elements = 1
        for _ in range(dims):
            elements *= reader.unpack("Q")
        ggml_type, offset = reader.unpack("I"), reader.unpack("Q")
        extents.append((offset, _tensor_bytes(ggml_type, elements)))
    alignment = metadata.get("general.alignment", 32)
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise GGUFHeaderError("bad general.alignment")
    data_start = -(-reader.pos // alignment) * alignment
    for offset, nbytes in extents:
        if offset % alignment or data_start + offset + nbytes > size:
            raise GGUFHeaderError("tensor data lies outside the file (truncated?)")
    _check_tokenizer(metadata, arrays)
    return GGUFInfo(version=version, metadata=metadata, arrays=arrays, tensor_count=tensor_count)


def _check_tokenizer(metadata: dict[str, Any], arrays: dict[str, tuple[int, int]]) -> None:
    """The metadata llama.cpp asserts on instead of reporting."""
    charsmap = metadata.get("tokenizer.ggml.precompiled_charsmap")
    if "tokenizer.ggml.precompiled_charsmap" in arrays:
        kind, count = arrays["tokenizer.ggml.precompiled_charsmap"]
        if kind not in (0, 1) or count < 4:
            raise GGUFHeaderError("precompiled_charsmap must be a byte array")
        (trie_size,) = struct.unpack_from("<I", charsmap, 0)
        if trie_size + 4 >= count:
            raise GGUFHeaderError("precompiled_charsmap is truncated")
    tokens = arrays.get("tokenizer.ggml.tokens")
    if tokens is None or tokens[0] != _STRING or tokens[1] == 0:
        raise GGUFHeaderError("no tokenizer.ggml.tokens in the model")
    for key in ("tokenizer.ggml.scores", "tokenizer.ggml.token_type"):
        if key in arrays and arrays[key][1] != tokens[1]:
            raise GGUFHeaderError(f"{key} does not match the token list")
