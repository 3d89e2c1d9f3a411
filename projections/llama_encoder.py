"""A GGUF sentence encoder run through llama.cpp's C functions (the bindings llama-cpp-python ships).

Why not ``llama_cpp.Llama``: in embedding mode it sizes its context for as many sequences as
the batch holds tokens (128), and llama.cpp clears an output buffer of sequences x vocabulary
floats when it makes the context: 122 MiB of resident memory for a 250k-token vocabulary that an
encoder never reads logits from. It also tokenizes every text twice. Here the context holds one
sequence (a 1 MiB output buffer) and a text is tokenized once; the model, the pooled vector and
the thread settings are the same.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

_POOLING_MEAN = 1
_backend_lock = threading.Lock()
_backend_ready = False
_log_callback: Any = None  # kept alive: llama.cpp holds the pointer


class EncoderError(Exception):
    """llama.cpp refused the model or a call on it."""


def _init_backend(llama_cpp: Any) -> None:
    """Once per process: start llama.cpp and send its log to ours at debug level (the loader's
    progress would otherwise go to a stdio server's stderr; failures come back as return codes)."""
    global _backend_ready, _log_callback
    with _backend_lock:
        if _backend_ready:
            return

        def forward(level: int, text: bytes, _user: Any) -> None:
            log.debug("llama.cpp: %s", text.decode("utf-8", errors="replace").rstrip())

        _log_callback = llama_cpp.llama_log_callback(forward)
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
        llama_cpp.llama_backend_init()
        _backend_ready = True


class LlamaEncoder:
    """One model and one single-sequence context. Not thread-safe: the caller serialises calls."""

    def __init__(self, path: str, n_ctx: int, threads: int) -> None:
        try:
            import llama_cpp
        except Exception as exc:  # ImportError, or OSError when the shared library cannot load
            raise EncoderError(f"llama-cpp-python is not importable: {exc}") from None
        _init_backend(llama_cpp)
        self._c = llama_cpp
        self.n_ctx = n_ctx
        self._model = llama_cpp.llama_model_load_from_file(path.encode("utf-8"), llama_cpp.llama_model_default_params())
        if not self._model:
            raise EncoderError(f"llama.cpp could not load {path}")
        self._vocab = llama_cpp.llama_model_get_vocab(self._model)
        self.dim = int(llama_cpp.llama_model_n_embd(self._model))
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = params.n_batch = params.n_ubatch = n_ctx
        params.n_seq_max = 1
        params.flash_attn_type = 0  # off, as llama-cpp-python sets it: the same vectors as before
        params.embeddings = True
        params.pooling_type = _POOLING_MEAN
        params.n_threads = params.n_threads_batch = threads
        self._ctx = llama_cpp.llama_init_from_model(self._model, params)
        if not self._ctx:
            llama_cpp.llama_model_free(self._model)
            raise EncoderError(f"llama.cpp could not make a context for {path}")
        self._batch = llama_cpp.llama_batch_init(n_ctx, 0, 1)
        self._memory = llama_cpp.llama_get_memory(self._ctx)

    def tokenize(self, text: bytes) -> list[int]:
        """Token ids with BOS/EOS as the model adds them; special tokens are not parsed."""
        capacity = len(text) + 8
        while True:
            tokens = (self._c.llama_token * capacity)()
            n = self._c.llama_tokenize(self._vocab, text, len(text), tokens, capacity, True, False)
            if n >= 0:
                return tokens[:n]
            capacity = -n  # too small: llama.cpp says how many it needs

    def detokenize(self, tokens: Sequence[int]) -> bytes:
        """Each token's piece, special tokens left out; a leading space after BOS is dropped
        (what llama-cpp-python's ``Llama.detokenize`` gives, so windows cut the same text)."""
        buffer = ctypes.create_string_buffer(64)
        pieces = []
        for token in tokens:
            n = self._c.llama_token_to_piece(self._vocab, token, buffer, len(buffer), 0, False)
            if n < 0:  # a piece longer than the buffer
                buffer = ctypes.create_string_buffer(-n)
                n = self._c.llama_token_to_piece(self._vocab, token, buffer, len(buffer), 0, False)
            pieces.append(buffer.raw[:n])
        text = b"".join(pieces)
        if tokens and tokens[0] == self._c.llama_vocab_bos(self._vocab) and text.startswith(b" "):
            text = text[1:]
        return text

    def embed(self, tokens: Sequence[int]) -> np.ndarray:
        """The mean-pooled (not normalised) vector of at most ``n_ctx`` tokens, as float64."""
        if not 0 < len(tokens) <= self.n_ctx:
            raise EncoderError(f"{len(tokens)} tokens: an encoder call takes 1 to {self.n_ctx}")
        batch = self._batch
        batch.n_tokens = len(tokens)
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = True  # every token is an output of mean pooling
        self._c.llama_memory_clear(self._memory, True)
        status = self._c.llama_encode(self._ctx, batch)
        if status != 0:
            raise EncoderError(f"llama_encode returned {status}")
        pooled = self._c.llama_get_embeddings_seq(self._ctx, 0)
        if not pooled:
            raise EncoderError("llama.cpp returned no pooled embedding")
        return np.ctypeslib.as_array(pooled, shape=(self.dim,)).astype(np.float64)

    def close(self) -> None:
        if self._ctx:
            self._c.llama_batch_free(self._batch)
            self._c.llama_free(self._ctx)
            self._c.llama_model_free(self._model)
            self._ctx = self._model = None
