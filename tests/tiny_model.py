"""A tiny BERT embedding model for tests: random weights, a real unigram tokenizer, seeded.

Written with the same GGUF writer as ``ledger model install`` (Q4_0 matrices, F32 position and
token-type embeddings, a UGM tokenizer with a compiled ``precompiled_charsmap``, mean pooling,
e5-style prefixes), so tests run llama.cpp's real code path in a fraction of a second and
without downloading anything. The context is 64 tokens so long texts exercise windowing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fact_ledger.server.models.charsmap import build_charsmap
from fact_ledger.server.models.gguf_bert import BertModel, BertShape, Tensor, UnigramVocab, layer_tensor_names

HIDDEN, LAYERS, HEADS, FFN, CONTEXT = 64, 2, 4, 128, 64
Q4_0 = 2

_WORDS = (
    "the a an is are was of to in on for and or not with at by from as it this that be has have "
    "port staging api server listens budget meeting project team deploy database query passage "
    "memory ledger user agent note fact time date year month day week cost price number name "
    "blue green red city lives works moved likes book music dog cat coffee tea morning evening"
).split()
_CJK = "的是我你他她们在有不了人这个中大上来到说和要就也时预算会议项目团队服务器端口数据库"
_NORMAL, _UNKNOWN, _CONTROL = 1, 2, 3


def tiny_vocab(filler: int = 0) -> UnigramVocab:
    """Specials, whole words (▁word), single letters with and without ▁, digits, CJK characters;
    and ``filler`` pieces no text here uses (a vocabulary as wide as a real model's)."""
    pieces = ["<s>", "<pad>", "</s>", "<unk>"]
    scores = [0.0, 0.0, 0.0, 0.0]
    types = [_CONTROL, _CONTROL, _CONTROL, _UNKNOWN]

    def add(piece: str, score: float) -> None:
        if piece not in pieces:
            pieces.append(piece)
            scores.append(score)
            types.append(_NORMAL)

    add("▁", -2.0)
    for rank, word in enumerate(_WORDS):
        add("▁" + word, -3.0 - rank * 0.01)
    for char in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,:;!?'\"-()/%$":
        add(char, -8.0)
        add("▁" + char, -8.5)
    for char in _CJK:
        add(char, -6.0)
        add("▁" + char, -6.5)
    pieces += [f"\u2603{number}" for number in range(filler)]  # unique: no need for add's check
    scores += [-20.0] * filler
    types += [_NORMAL] * filler
    replacements = {chr(code): chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)}  # fullwidth ASCII
    replacements.update({"\t": " ", "\n": " ", "\r": " ", "\u3000": " ", "\u200b": ""})
    return UnigramVocab(
        pieces=pieces, scores=scores, types=types, charsmap=build_charsmap(replacements), bos=0, eos=2, unk=3, pad=1
    )


def tiny_model(seed: int = 0, filler: int = 0) -> BertModel:
    rng = np.random.default_rng(seed)
    vocab = tiny_vocab(filler)

    def q4(rows: int, columns: int) -> Tensor:
        import gguf

        values = rng.normal(0.0, 0.08, size=(rows, columns)).astype(np.float32)
        return Tensor(gguf.quants.quantize(values, gguf.GGMLQuantizationType.Q4_0), qtype=Q4_0)

    def f32(*shape: int, scale: float = 0.05, mean: float = 0.0) -> Tensor:
        return Tensor((mean + rng.normal(0.0, scale, size=shape)).astype(np.float32))

    tensors = {
        "token_embd.weight": q4(len(vocab.pieces), HIDDEN),
        "position_embd.weight": f32(CONTEXT, HIDDEN, scale=0.02),
        "token_types.weight": f32(2, HIDDEN, scale=0.02),
        "token_embd_norm.weight": f32(HIDDEN, scale=0.01, mean=1.0),
        "token_embd_norm.bias": f32(HIDDEN, scale=0.01),
    }
    for layer in range(LAYERS):
        names = layer_tensor_names(layer)
        for part in ("attn_q", "attn_k", "attn_v", "attn_output"):
            tensors[names[part] + ".weight"] = q4(HIDDEN, HIDDEN)
            tensors[names[part] + ".bias"] = f32(HIDDEN)
        tensors[names["attn_output_norm"] + ".weight"] = f32(HIDDEN, scale=0.01, mean=1.0)
        tensors[names["attn_output_norm"] + ".bias"] = f32(HIDDEN, scale=0.01)
        tensors[names["ffn_up"] + ".weight"] = q4(FFN, HIDDEN)
        tensors[names["ffn_up"] + ".bias"] = f32(FFN)
        tensors[names["ffn_down"] + ".weight"] = q4(HIDDEN, FFN)
        tensors[names["ffn_down"] + ".bias"] = f32(HIDDEN)
        tensors[names["layer_output_norm"] + ".weight"] = f32(HIDDEN, scale=0.01, mean=1.0)
        tensors[names["layer_output_norm"] + ".bias"] = f32(HIDDEN, scale=0.01)
    shape = BertShape(hidden=HIDDEN, layers=LAYERS, heads=HEADS, ffn=FFN, context=CONTEXT, token_types=2, eps=1e-12)
    return BertModel(
        name="tiny-e5", shape=shape, vocab=vocab, tensors=tensors, query_prefix="query: ", passage_prefix="passage: "
    )


def write_tiny_gguf(path: str | Path, seed: int = 0, filler: int = 0) -> Path:
    from fact_ledger.server.models.gguf_bert import write_bert_gguf

    write_bert_gguf(path, tiny_model(seed, filler))
    return Path(path)


def write_damaged_gguf(path: str | Path) -> Path:
    """The tiny model with one tensor of NaN: its header reads right and llama.cpp loads it, but
    every vector it gives is not a number (a model file whose weights were damaged)."""
    from fact_ledger.server.models.gguf_bert import write_bert_gguf

    model = tiny_model()
    model.tensors["token_embd_norm.bias"] = Tensor(np.full(HIDDEN, np.nan, dtype=np.float32))
    write_bert_gguf(path, model)
    return Path(path)
