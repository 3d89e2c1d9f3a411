"""The nearest-neighbour index kept in a file beside the read models, for the next process.

A process that searches vectors builds :class:`projections.knn.BitIndex` from the vectors read
model: every row's float32 embedding read, centred, cut to sign bits, blended with its context
vector and quantised. At 100k memories that is ~1.3 s of a cold CLI ``find``, at 1M ~13 s and a
few hundred MB of heap. The snapshot keeps what that work produced, so the next process reads
the sign bits (48 bytes a memory for each of the two scans) and reads the int8 blends (388
bytes a memory) from the file a row at a time, for a ``find``'s ~50 candidates, instead of
holding them: they cost the server's memory nothing. (Mapped, they did: the kernel maps the
pages around each one a reader touches, 64 KB a candidate, and 200 ``find``s at 1M memories
had added 300 MB to the RSS.)

The file is a cache, never a source: ``<read-model file>.knn``, written whole to a temporary
name and renamed over the old one (a reader keeps the file it opened, complete, whatever
replaces it). It is used only when it was cut from the same vectors: the same
``index_id`` (a random id each start-over of the vectors gets) and generation (an erasure moves
it), the same counts of deletes, and no write sequence number past what the tables hold. Rows
written since it was saved are then read from the tables as usual. Anything else, or any flaw
in the file, and it is ignored and deleted; an erasure deletes it too (``forget.prune_views``),
since it holds the erased memories' blends.

Layout: ``MAGIC``, the header's length (8 bytes, little-endian), the header (JSON), then each
array at a 4096-byte boundary, as the header lists it (offset, dtype, shape).
"""

from __future__ import annotations

import contextlib
import math
import os
import struct
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

MAGIC = b"FLKNN\x00\x00\x02"  # the format's version is its last byte
ALIGN = 4096


class Header(msgspec.Struct, frozen=True):
    """What the arrays were cut from, and where each array lies in the file."""

    index_id: str
    generation: int
    own_seq: int  # the newest own-vector write the index had read
    own_deleted: int  # vectors.deletions("vectors") then
    context_seq: int
    context_deleted: int
    words: int
    codes: dict[str, int]  # workspace -> code
    arrays: dict[str, tuple[int, str, tuple[int, ...]]]  # name -> (offset, dtype, shape)
    cells_trained: int = 0  # the memories the cells were trained on (0: no cells)


def path_for(conn: Any) -> Path | None:
    """Where the snapshot of ``conn``'s vectors lives; None for an in-memory database."""
    return beside(conn.filename) if conn.filename else None


def beside(views: str) -> Path:
    """The snapshot's path for the read-model file ``views``."""
    return Path(f"{views}.knn")


def save(path: Path, header: dict[str, Any], arrays: dict[str, tuple[tuple[int, ...], Any, list[Any]]]) -> None:
    """Write ``header`` (the :class:`Header` fields but ``arrays``) and each array, given as
    (shape, numpy dtype, chunks whose bytes in turn make it up: the index holds its rows in
    blocks and never has them in one piece), to ``path``: a temporary file in the same folder,
    renamed over it once complete."""
    layout: dict[str, tuple[int, str, tuple[int, ...]]] = {}
    offset = 0
    for name, (shape, dtype, chunks) in arrays.items():
        size = sum(chunk.nbytes for chunk in chunks)
        if size != dtype.itemsize * math.prod(shape):
            raise ValueError(f"{name}: {size} bytes do not make an array of {shape}")
        layout[name] = (offset, dtype.str, tuple(int(d) for d in shape))
        offset += _aligned(size)
    encoded = msgspec.json.encode(Header(**header, arrays=layout))
    start = _aligned(len(MAGIC) + 8 + len(encoded))
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as out:
            out.write(MAGIC + struct.pack("<Q", len(encoded)) + encoded)
            for name, (_shape, _dtype, chunks) in arrays.items():
                out.seek(start + layout[name][0])
                for chunk in chunks:
                    out.write(memoryview(chunk.ravel(order="C")).cast("B"))
            out.truncate(start + offset)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def load(
    np: Any, path: Path, *, by_offset: frozenset[str] = frozenset(), offsets_only: bool = False
) -> tuple[Header, dict[str, Any], BinaryIO] | None:
    """The header, the arrays (read into this process's memory; for the names in ``by_offset``,
    or all with ``offsets_only``, their position in the file instead, to be read a row at a
    time), and the open file (the snapshot these offsets are of, whatever replaces the path
    later); None when there is no usable snapshot at ``path``."""
    try:
        f = open(path, "rb")  # noqa: SIM115  (handed to the caller, who keeps it to read rows)
    except OSError:  # none there (or unreadable): the index is read from the tables
        return None
    try:
        head = f.read(len(MAGIC) + 8)
        if len(head) < len(MAGIC) + 8 or head[: len(MAGIC)] != MAGIC:
            raise ValueError("not a snapshot of this format")
        (length,) = struct.unpack("<Q", head[len(MAGIC) :])
        header = msgspec.json.decode(f.read(length), type=Header)
        size = os.fstat(f.fileno()).st_size
        start = _aligned(len(MAGIC) + 8 + length)
        arrays: dict[str, Any] = {}
        for name, (offset, dtype, shape) in header.arrays.items():
            count = math.prod(shape)
            if start + offset + count * np.dtype(dtype).itemsize > size:
                raise ValueError(f"{name} runs past the end of the file")
            if offsets_only or name in by_offset:
                arrays[name] = start + offset
            else:
                f.seek(start + offset)
                arrays[name] = np.fromfile(f, dtype=dtype, count=count).reshape(shape)
        return header, arrays, f
    except (OSError, ValueError, msgspec.DecodeError, msgspec.ValidationError, TypeError):
        f.close()
        discard(path)
        return None


def discard(path: Path | None) -> None:
    """Delete the snapshot at ``path`` (nothing when there is none)."""
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def _aligned(size: int) -> int:
    return (size + ALIGN - 1) // ALIGN * ALIGN
