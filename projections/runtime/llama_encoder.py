"""A GGUF sentence encoder run through llama.cpp's C functions (the bindings llama-cpp-python ships).

llama.cpp keeps an output buffer of logits, one vocabulary of floats per output (250k floats,
1 MB, for e5), and zeroes it whenever it grows; an encoder never reads it. ``llama_cpp.Llama``
sizes it for 128 sequences when it makes an embedding context (122 MiB resident from the
start), and mean pooling makes every token an output, so any context grows it to that size on
its first 128-token passage. Here the context holds one sequence, is grown to its largest once
when the model loads, and the buffer's pages are then handed back to the system
(:func:`_release`): they are never written again, so they stay unmapped (RSS 380 -> 250 MB with
e5 loaded). A text is also tokenized once instead of twice. The vectors are the same, bit for
bit.
"""

from __future__ import annotations

import ctypes
import logging
import mmap
import sys
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

_POOLING_MEAN = 1
_MADV_DONTNEED = 4  # Linux: the pages read back as zeros, which is what llama.cpp left in them
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


def _release(start: int, end: int, expected: int) -> None:
    """Hand back the whole pages inside ``[start, end)`` (Linux; elsewhere a no-op) when the two
    pointers llama.cpp gave lie exactly ``expected`` bytes apart: the logits view ends where the
    embeddings view begins, in the same buffer, so any other layout is refused, not applied. (The
    system's map of mappings cannot bound a buffer: the kernel merges neighbouring anonymous
    mappings into one.)"""
    if not sys.platform.startswith("linux") or end - start != expected:
        return
    page = mmap.PAGESIZE
    first = -(-start // page) * page
    last = end // page * page
    if last <= first:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    if libc.madvise(first, last - first, _MADV_DONTNEED) != 0:
        log.debug("madvise failed: errno %d", ctypes.get_errno())


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
        self._grow_outputs_once()

    def _grow_outputs_once(self) -> None:
        """Encode one full window so the output buffer reaches its final size, then release the
        pages of its logits view (from ``llama_get_logits`` to ``llama_get_embeddings``, where
        the next view begins), which an encoder's graph never writes."""
        bos = self._c.llama_vocab_bos(self._vocab)
        self.embed([max(bos, 0)] * self.n_ctx)
        logits, embeddings = self.output_views()
        if logits and embeddings:
            _release(logits, embeddings, self.n_ctx * self._c.llama_vocab_n_tokens(self._vocab) * 4)

    def output_views(self) -> tuple[int | None, int | None]:
        """Addresses of the output buffer's logits view and of the embeddings view after it
        (None: no such view), sized by the last call."""
        return (
            ctypes.cast(self._c.llama_get_logits(self._ctx), ctypes.c_void_p).value,
            ctypes.cast(self._c.llama_get_embeddings(self._ctx), ctypes.c_void_p).value,
        )

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
