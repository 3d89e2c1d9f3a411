"""The embedder: real llama.cpp on the tiny test model; bad model files never reach llama.cpp."""

from __future__ import annotations

import mmap
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fact_ledger.projections.runtime.embedding import Embedder, EmbedderUnavailable, load_embedder
from fact_ledger.projections.runtime.gguf_header import GGUFHeaderError, read_gguf_header
from tests.tiny_model import CONTEXT, HIDDEN, write_tiny_gguf


@pytest.fixture(scope="module")
def embedder(tiny_gguf: Path):
    loaded = load_embedder(str(tiny_gguf))
    yield loaded
    loaded.close()


def _vector(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")


def test_vectors_are_normalised_float32_of_the_model_dimension(embedder: Embedder) -> None:
    assert embedder.dim == HIDDEN
    query = embedder.embed_query("what is the budget")
    passages = embedder.embed_passages(["the budget is 50k", "项目预算是五万元"])
    for blob in [query, *passages]:
        assert isinstance(blob, bytes) and len(blob) == HIDDEN * 4
        assert abs(float(np.linalg.norm(_vector(blob))) - 1.0) < 1e-5
    assert embedder.embed_passages([]) == []


def test_embeddings_are_deterministic_and_depend_on_the_text(embedder: Embedder, tiny_gguf: Path) -> None:
    first = embedder.embed_passages(["the staging server listens on port 8080"])[0]
    assert embedder.embed_passages(["the staging server listens on port 8080"])[0] == first
    assert embedder.embed_passages(["my dog likes coffee in the morning"])[0] != first
    other = load_embedder(str(tiny_gguf))
    try:
        assert other.embed_passages(["the staging server listens on port 8080"])[0] == first
    finally:
        other.close()


def test_query_and_passage_prefixes_come_from_the_model(embedder: Embedder) -> None:
    assert (embedder.query_prefix, embedder.passage_prefix) == ("query: ", "passage: ")
    text = "the budget is 50k"
    assert embedder.embed_query(text) != embedder.embed_passages([text])[0]
    # the prefix is applied inside: the same as asking for the prefixed text with no prefix
    bare = Embedder(
        embedder._encoder,
        model_id="x",
        dim=embedder.dim,
        n_ctx=embedder.n_ctx,
        query_prefix="",
        passage_prefix="",
        path=embedder.path,
    )
    assert bare.embed_passages(["query: " + text])[0] == embedder.embed_query(text)


def test_text_is_stripped_before_embedding(embedder: Embedder) -> None:
    assert embedder.embed_query("  the budget\n\t ") == embedder.embed_query("the budget")
    assert embedder.embed_passages(["the budget \n"]) == embedder.embed_passages(["the budget"])


def test_a_text_longer_than_the_context_is_embedded_in_windows(embedder: Embedder) -> None:
    long_text = " ".join(["the budget is 50k and the team meets on monday"] * 30)
    assert len(embedder.tokenize(long_text)) > CONTEXT
    vector = _vector(embedder.embed_passages([long_text])[0])
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    # the mean over windows of one repeated sentence stays close to that sentence's own vector
    single = _vector(embedder.embed_passages(["the budget is 50k and the team meets on monday " * 3])[0])
    assert float(vector @ single) > 0.9


def test_model_id_names_the_model_and_its_content(embedder: Embedder, tiny_gguf: Path, tmp_path: Path) -> None:
    assert embedder.model_id.startswith("tiny-e5@") and len(embedder.model_id.split("@")[1]) == 12
    copy = tmp_path / "copy.gguf"
    shutil.copy(tiny_gguf, copy)
    same = load_embedder(str(copy))
    other = load_embedder(str(write_tiny_gguf(tmp_path / "other.gguf", seed=7)))
    try:
        assert same.model_id == embedder.model_id  # content, not path
        assert other.model_id != embedder.model_id
    finally:
        same.close()
        other.close()


def _corrupt_files(tiny_gguf: Path, tmp_path: Path) -> dict[str, Path]:
    data = tiny_gguf.read_bytes()
    files = {
        "empty": b"",
        "text": b"this is not a model at all, just some text " * 10,
        "bad magic": b"GGUX" + data[4:],
        "bad version": data[:4] + struct.pack("<I", 99) + data[8:],
        "truncated header": data[:200],
        "truncated tensors": data[: len(data) - 1000],
        "huge tensor count": data[:8] + struct.pack("<Q", 1 << 40) + data[16:],
        "random": np.random.default_rng(3).bytes(len(data)),
    }
    paths = {}
    for name, content in files.items():
        path = tmp_path / (name.replace(" ", "_") + ".gguf")
        path.write_bytes(content)
        paths[name] = path
    return paths


def test_missing_and_corrupt_files_raise_unavailable(tiny_gguf: Path, tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="not found"):
        load_embedder(str(tmp_path / "nope.gguf"))
    with pytest.raises(EmbedderUnavailable):
        load_embedder("")
    for path in _corrupt_files(tiny_gguf, tmp_path).values():
        with pytest.raises(EmbedderUnavailable):
            load_embedder(str(path))
        with pytest.raises(GGUFHeaderError):
            read_gguf_header(str(path))


def test_a_charsmap_of_the_wrong_type_is_refused_by_the_header_check(tiny_gguf: Path, tmp_path: Path) -> None:
    """llama.cpp asserts on a non-byte precompiled_charsmap; the header check refuses it first, by name."""
    data = bytearray(tiny_gguf.read_bytes())
    key = b"tokenizer.ggml.precompiled_charsmap"
    at = data.index(key) + len(key)
    assert struct.unpack_from("<II", data, at) == (9, 0)  # ARRAY of UINT8
    struct.pack_into("<I", data, at + 4, 7)  # now an array of BOOL (same width, so the file still parses)
    path = tmp_path / "charsmap_int32.gguf"
    path.write_bytes(bytes(data))
    with pytest.raises(EmbedderUnavailable, match="precompiled_charsmap"):
        load_embedder(str(path))


def test_llama_cpp_not_importable_raises_unavailable(tiny_gguf: Path) -> None:
    code = (
        "import sys; sys.modules['llama_cpp'] = None\n"
        "from projections.runtime.embedding import load_embedder, EmbedderUnavailable\n"
        f"try:\n    load_embedder({str(tiny_gguf)!r})\nexcept EmbedderUnavailable as e:\n    print('unavailable:', e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0, done.stderr
    assert "unavailable: llama-cpp-python is not importable" in done.stdout


def test_tiny_model_is_deterministic_and_small(tiny_gguf: Path, tmp_path: Path) -> None:
    again = write_tiny_gguf(tmp_path / "again.gguf")
    assert again.read_bytes() == tiny_gguf.read_bytes()
    assert write_tiny_gguf(tmp_path / "seed1.gguf", seed=1).read_bytes() != tiny_gguf.read_bytes()
    assert 20_000 < tiny_gguf.stat().st_size < 500_000


def test_the_encoder_gives_llama_cpp_pythons_own_vectors_from_a_one_sequence_context(
    embedder: Embedder, tiny_gguf: Path
) -> None:
    """The embedder skips ``llama_cpp.Llama`` (whose embedding context is sized for a batch of
    sequences, each with a vocabulary of output floats) but must give the vectors it gives."""
    import llama_cpp

    reference = llama_cpp.Llama(
        model_path=str(tiny_gguf),
        embedding=True,
        pooling_type=1,
        n_ctx=CONTEXT,
        n_batch=CONTEXT,
        n_ubatch=CONTEXT,
        verbose=False,
    )
    try:
        for text in ["the budget is 50k", "项目预算是五万元", "x"]:
            prefixed = embedder.passage_prefix + text
            expected = np.asarray(reference.embed(prefixed), dtype=np.float64)
            assert embedder.tokenize(prefixed) == reference.tokenize(prefixed.encode("utf-8"))
            assert _vector(embedder.embed_passages([text])[0]).tolist() == pytest.approx(
                (expected / np.linalg.norm(expected)).tolist(), abs=1e-6
            )
        ids = embedder.tokenize("the budget 预算")
        assert embedder.detokenize(ids) == reference.detokenize(ids).decode("utf-8")
    finally:
        reference.close()
    assert llama_cpp.llama_n_seq_max(embedder._encoder._ctx) == 1


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="pages are counted in /proc/self/pagemap")
def test_a_long_passage_leaves_no_vocabulary_sized_output_buffer_resident(tmp_path: Path) -> None:
    """llama.cpp zeroes one vocabulary of logits floats per output whenever its output buffer
    grows, and an encoder's every token is an output: 200k pieces x 64 tokens is 49 MiB that the
    encoder must not keep resident. Counted page by page (``/proc/self/pagemap``) in a fresh
    process, after a window-long passage."""
    path = write_tiny_gguf(tmp_path / "wide.gguf", filler=200_000)
    script = (
        "import mmap, struct, sys\n"
        "from fact_ledger.projections.runtime.embedding import load_embedder\n"
        "embedder = load_embedder(sys.argv[1])\n"
        "embedder.embed_passages([' '.join(['the budget is 50k and the team meets on monday'] * 20)])\n"
        "embedder.embed_query('what is the budget')\n"
        "encoder = embedder._encoder\n"
        "encoder.embed(encoder.tokenize(b'budget ' * 200)[: encoder.n_ctx])  # the views at full size again\n"
        "start, end = encoder.output_views()\n"
        "first, last = start // mmap.PAGESIZE, end // mmap.PAGESIZE\n"
        "with open('/proc/self/pagemap', 'rb') as pagemap:\n"
        "    pagemap.seek(first * 8)\n"
        "    entries = struct.unpack(f'{last - first}Q', pagemap.read((last - first) * 8))\n"
        "print(last - first, sum(entry >> 63 for entry in entries))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True)
    pages, resident = (int(field) for field in done.stdout.split())
    assert pages * mmap.PAGESIZE >= CONTEXT * 200_000 * 4 * 0.9  # the view is the vocabulary-sized one
    assert resident <= pages // 100


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pages are handed back on Linux only")
def test_pages_are_handed_back_only_between_views_that_lie_where_expected() -> None:
    """Every call stays inside the test's own block, so a wrong release fails here and cannot
    zero anyone else's memory."""
    import ctypes

    from fact_ledger.projections.runtime.llama_encoder import _release

    size, page = 4 * 1024 * 1024, mmap.PAGESIZE
    block = (ctypes.c_char * size)()
    ctypes.memset(block, 1, size)
    start = ctypes.addressof(block) + 100  # not on a page boundary, as a view need not be
    end = start + size - 2 * page
    _release(start, end, end - start + 64)  # the views lie elsewhere than the layout says: refused
    _release(start, end, end - start - 64)
    assert block.raw.count(0) == 0
    _release(start, end, end - start)
    raw = block.raw
    zeroed = raw.count(0)  # the whole pages inside read back as zeros, nothing outside
    assert end - start - 2 * page <= zeroed <= end - start
    assert raw[:100] == b"\x01" * 100 and raw[end - start + 100 :] == b"\x01" * (size - (end - start) - 100)
