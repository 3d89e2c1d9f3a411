"""Write a BERT-architecture sentence-embedding model as GGUF for llama.cpp.

One writer for every model the ledger makes: the converted registry models and the tiny random
model the tests write. The tokenizer is always SentencePiece unigram (llama.cpp's ``t5``/UGM) with
a ``precompiled_charsmap``; pooling is mean. Query and passage prefixes (e5's ``"query: "`` /
``"passage: "``) travel as metadata under ``fact_ledger.embedding.*`` so the embedder applies the
prefixes the model was trained with, whatever file it is given.

Tensors are given as numpy arrays: float32 for F32 tensors, or the raw ``uint8`` rows of an
already-quantised tensor with its ``GGMLQuantizationType`` (the Q4_0 blocks of a registry model
are copied unchanged).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fact_ledger.projections.runtime.embedding import PASSAGE_PREFIX_KEY, QUERY_PREFIX_KEY


@dataclass(frozen=True)
class UnigramVocab:
    """SentencePiece unigram pieces in id order, with their scores and llama token types."""

    pieces: Sequence[str]
    scores: Sequence[float]
    types: Sequence[int]
    charsmap: bytes
    bos: int
    eos: int
    unk: int
    pad: int


@dataclass(frozen=True)
class BertShape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    context: int
    token_types: int
    eps: float


@dataclass
class Tensor:
    """One tensor: float32 values, or raw quantised rows with their ggml type."""

    data: np.ndarray
    qtype: int | None = None  # a gguf.GGMLQuantizationType for raw uint8 rows; None = F32


@dataclass
class BertModel:
    name: str
    shape: BertShape
    vocab: UnigramVocab
    tensors: dict[str, Tensor]
    query_prefix: str = ""
    passage_prefix: str = ""
    extra: dict[str, str] = field(default_factory=dict)


def layer_tensor_names(layer: int) -> dict[str, str]:
    """The llama.cpp names of one encoder layer's tensors (``.weight`` / ``.bias`` appended)."""
    base = f"blk.{layer}."
    return {
        part: base + part
        for part in (
            "attn_q",
            "attn_k",
            "attn_v",
            "attn_output",
            "attn_output_norm",
            "ffn_up",
            "ffn_down",
            "layer_output_norm",
        )
    }


def write_bert_gguf(path: str | Path, model: BertModel) -> None:
    """Write ``model`` to ``path`` (overwrites). Deterministic: same model, same bytes."""
    import gguf

    shape, vocab = model.shape, model.vocab
    writer = gguf.GGUFWriter(str(path), "bert")
    writer.add_name(model.name)
    writer.add_context_length(shape.context)
    writer.add_embedding_length(shape.hidden)
    writer.add_feed_forward_length(shape.ffn)
    writer.add_block_count(shape.layers)
    writer.add_head_count(shape.heads)
    writer.add_layer_norm_eps(shape.eps)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)
    writer.add_tokenizer_model("t5")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(list(vocab.pieces))
    writer.add_token_scores([float(s) for s in vocab.scores])
    writer.add_token_types([int(t) for t in vocab.types])
    writer.add_token_type_count(shape.token_types)
    writer.add_bos_token_id(vocab.bos)
    writer.add_eos_token_id(vocab.eos)
    writer.add_unk_token_id(vocab.unk)
    writer.add_pad_token_id(vocab.pad)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    writer.add_add_space_prefix(True)
    writer.add_remove_extra_whitespaces(True)
    writer.add_precompiled_charsmap(vocab.charsmap)
    writer.add_string(QUERY_PREFIX_KEY, model.query_prefix)
    writer.add_string(PASSAGE_PREFIX_KEY, model.passage_prefix)
    for key, value in sorted(model.extra.items()):
        writer.add_string(key, value)
    for name, tensor in model.tensors.items():
        if tensor.qtype is None:
            writer.add_tensor(name, np.ascontiguousarray(tensor.data, dtype=np.float32))
        else:
            writer.add_tensor(
                name,
                np.ascontiguousarray(tensor.data, dtype=np.uint8),
                raw_dtype=gguf.GGMLQuantizationType(tensor.qtype),
            )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
