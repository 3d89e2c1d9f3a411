"""Sentence embeddings from a local GGUF model through llama-cpp-python.

The :class:`Embedder` turns text into the bytes the vectors read model stores: float32 little
endian, L2-normalised, ``dim * 4`` bytes. Texts are stripped (llama.cpp's UGM normaliser drops
trailing whitespace that the model's reference tokenizer keeps) and prefixed with the model's
query or passage prefix, read from the GGUF metadata the converter writes (e5's ``"query: "`` /
``"passage: "``); a model without them embeds the bare text.

:func:`load_embedder` never lets a bad model take the process down: a missing file, a file whose
GGUF header does not check out (:mod:`projections.runtime.gguf_header`), a model llama.cpp refuses, or no
importable ``llama_cpp`` all raise :class:`EmbedderUnavailable`, which callers turn into
lexical-only search and a notice.

Texts longer than the context are embedded in windows of whole tokens and averaged by token
count before normalising — the mean over the whole text, up to windowed attention.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

from fact_ledger.projections.runtime.llama_encoder import EncoderError, LlamaEncoder
from fact_ledger.projections.runtime.model_file import (  # noqa: F401 (re-exported: the writer and install use them)
    MAX_CONTEXT,
    PASSAGE_PREFIX_KEY,
    QUERY_PREFIX_KEY,
    EmbedderUnavailable,
    ModelFileError,
    file_state,
    inspect_model,
    mark_broken,
    model_id_for,
)


def embedding_threads(configured: int = 0) -> int:
    """Threads per llama.cpp call: ``configured`` (``embedding.threads`` in the settings) when
    above 0, else one per CPU.

    ggml's worker threads spin while they wait for each other; on a machine whose cores are
    busy with other work that spinning costs far more than it saves (measured on a loaded
    2-core VM: 3.2 passages/s with one thread, 0.16 with two), so busy hosts should set 1.
    """
    return configured if configured > 0 else os.cpu_count() or 1


class Embedder:
    """One loaded model. Thread-safe: calls into llama.cpp are serialised by a lock."""

    def __init__(
        self,
        encoder: LlamaEncoder,
        model_id: str,
        dim: int,
        n_ctx: int,
        query_prefix: str,
        passage_prefix: str,
        path: str,
        digests: str | None = None,
        loaded_from: tuple[int, ...] | None = None,
    ) -> None:
        self._encoder = encoder
        self._lock = threading.Lock()
        self.model_id = model_id
        self.dim = dim
        self.n_ctx = n_ctx
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.path = path
        self.digests = digests  # where a file found damaged is recorded (model_file.mark_broken)
        # The file as it was when loaded (model_file.file_state); None: never checked.
        self.loaded_from = loaded_from

    def embed_query(self, text: str) -> bytes:
        vector = self._embed(self.query_prefix + text.strip())
        self._check_file()
        return vector

    def embed_passages(self, texts: Sequence[str]) -> list[bytes]:
        # One text per call: batching sequences in one llama.cpp call measured slower here.
        vectors = [self._embed(self.passage_prefix + text.strip()) for text in texts]
        self._check_file()
        return vectors

    def _check_file(self) -> None:
        """Refuse what was just embedded when the model file changed since it was loaded (looked
        at after embedding, so a change during it counts too; one ``stat``, a few µs). llama.cpp
        maps the file: overwritten in place, the weights change under the loaded model, and its
        vectors would match neither model yet be stored, cached and lent under the old model's id."""
        if self.loaded_from is not None and file_state(self.path) != self.loaded_from:
            raise EmbedderUnavailable(
                f"the embedding model file {self.path} changed on disk after it was loaded; its vectors "
                "would match neither model, so none is stored or lent: start the process again to load it"
            )

    def tokenize(self, text: str) -> list[int]:
        """Token ids as the model sees ``text`` (with BOS/EOS, no prefix added)."""
        with self._lock:
            return self._encoder.tokenize(text.encode("utf-8"))

    def detokenize(self, ids: Sequence[int]) -> str:
        with self._lock:
            return self._encoder.detokenize(list(ids)).decode("utf-8", errors="replace")

    def _embed(self, text: str) -> bytes:
        with self._lock:
            tokens = self._encoder.tokenize(text.encode("utf-8"))
            vector = self._encoder.embed(tokens) if len(tokens) <= self.n_ctx else self._windowed(tokens)
        if not np.isfinite(vector).all():  # a file whose header reads right but whose weights are damaged
            problem = (
                f"the embedding model {self.path} gave a vector that is not a number (are its weights damaged?); "
                "nothing was stored"
            )
            if self.loaded_from is None or file_state(self.path) == self.loaded_from:  # this file's fault
                mark_broken(self.path, self.digests, problem)
            raise EmbedderUnavailable(problem)
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            vector = vector / norm
        return vector.astype("<f4").tobytes()

    def _windowed(self, tokens: list[int]) -> np.ndarray:
        """Token-count-weighted mean of whole-token windows, each re-wrapped in BOS/EOS (the
        window's text tokenized again, cut to the context)."""
        content = tokens[1:-1]  # the tokenizer adds BOS and EOS (add_bos/add_eos metadata)
        width = self.n_ctx - 2
        total = np.zeros(self.dim, dtype=np.float64)
        for start in range(0, len(content), width):
            window = content[start : start + width]
            # a window's edges can split a character: its broken bytes are dropped, not embedded
            text = self._encoder.detokenize(window).decode("utf-8", errors="ignore").encode("utf-8")
            total += len(window) * self._encoder.embed(self._encoder.tokenize(text)[: self.n_ctx])
        return total

    def close(self) -> None:
        with self._lock:
            encoder, self._encoder = self._encoder, None
            if encoder is not None:
                encoder.close()


def load_embedder(path: str, n_ctx: int | None = None, threads: int = 0, digests: str | None = None) -> Embedder:
    """Load the GGUF at ``path`` (``threads`` per call, 0: one per CPU) or raise
    :class:`EmbedderUnavailable` saying why; ``digests``: see :func:`projections.runtime.model_file.inspect_model`."""
    loaded_from = file_state(path)  # before it is read: a change from here on shows
    try:
        found = inspect_model(path, n_ctx, digests)
    except ModelFileError as exc:
        raise EmbedderUnavailable(str(exc)) from None
    try:
        encoder = LlamaEncoder(path, found.n_ctx, embedding_threads(threads))
    except EncoderError as exc:
        raise EmbedderUnavailable(str(exc)) from None
    embedder = Embedder(
        encoder,
        model_id=found.model_id,
        dim=found.dim,
        n_ctx=found.n_ctx,
        query_prefix=found.query_prefix,
        passage_prefix=found.passage_prefix,
        path=path,
        digests=digests,
        loaded_from=loaded_from,
    )
    try:  # damaged weights load without a word and give NaN: one passage shows it before any is stored
        embedder.embed_passages(["a probe passage"])
    except EmbedderUnavailable:
        embedder.close()
        raise
    return embedder
