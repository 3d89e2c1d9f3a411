"""What a GGUF embedding model is, read from its file without loading it.

:func:`inspect_model` checks the header (:mod:`projections.runtime.gguf_header`) and returns the model's
identity, dimension, context and prefixes. It imports neither numpy nor llama.cpp and reads no
weights, so ``ledger status`` can say whether the stored vectors are the configured model's
without paying for a model load (seconds); :func:`projections.runtime.embedding.load_embedder` uses it
before it hands the file to llama.cpp.

The identity is ``name@hash``: the model's name and the first 12 hex digits of the file's
sha256, which takes ~0.1 s for a 74 MB model. A caller that asks often passes ``digests``, a
small JSON file keyed by the file's path, size and modification time, so the hash (and, for
``status``, the header's facts) is computed once per model file rather than once per command.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fact_ledger.projections.runtime.gguf_header import GGUFHeaderError, GGUFInfo, read_gguf_header

QUERY_PREFIX_KEY = "fact_ledger.embedding.query_prefix"
PASSAGE_PREFIX_KEY = "fact_ledger.embedding.passage_prefix"
MAX_CONTEXT = 128  # tokens per window (docs/search.md says why)


class EmbedderUnavailable(Exception):
    """No embeddings: the model is missing, corrupt or cannot be run here (defined here, where
    no numpy is imported, so a caller can catch it without loading the runtime)."""


class ModelFileError(Exception):
    """The file is missing or is not a GGUF embedding model this process will hand to llama.cpp."""


@dataclass(frozen=True)
class ModelFile:
    path: str
    model_id: str
    dim: int
    n_ctx: int
    query_prefix: str
    passage_prefix: str


def inspect_model(path: str, n_ctx: int | None = None, digests: str | None = None, *, reread: bool = True) -> ModelFile:
    """The model at ``path`` as :func:`projections.runtime.embedding.load_embedder` would load it (``n_ctx``
    tokens per window, at most the model's context), or :class:`ModelFileError` saying why not.

    With ``digests``, the file's sha256 is taken from there when the file is unchanged (and
    recorded otherwise); with ``reread=False`` too, so are the header's facts, whose check
    then passed before (the header of a 250k-token vocabulary takes ~0.1 s to walk). A load
    always rereads the header and hashes the file again: only a file checked now reaches
    llama.cpp, and a file swapped under the same size and time (``cp -p``, ``touch -r``, a
    quantisation of the same size) gets its own id, so its vectors never pass for the old
    model's in the cache (~0.1-0.3 s beside a load of seconds).

    A file that gave a vector that is not a number (:func:`mark_broken`) is refused with that
    reason when ``reread`` is False: ``status`` then names the problem ``doctor`` and a load
    find, without loading the model (seconds) to find it again. A load (``reread``) tries anew."""
    _require_file(path)
    try:
        stamp = _stamp(path)
        known = _read_digests(digests) if digests else {}
        entry = known.get(os.path.realpath(path))
        entry = entry if isinstance(entry, dict) and entry.get("stamp") == stamp else {}
        if not reread and isinstance(entry.get("broken"), str):  # a load or a run found its weights damaged
            raise ModelFileError(str(entry["broken"]))
        facts = entry.get("facts") if not reread else None
        if not isinstance(facts, dict) or not isinstance(entry.get("sha256"), str):
            facts = _header_facts(path)
            digest = _sha256(path) if reread else entry.get("sha256") or _sha256(path)
            changed = entry.get("sha256") != digest or entry.get("facts") != facts
            entry = {"stamp": stamp, "sha256": digest, "facts": facts}
            if digests and changed:
                known[os.path.realpath(path)] = entry
                _write_digests(digests, known)
        name, dim, context = str(facts["name"]), int(facts["dim"]), int(facts["context"])
        query_prefix, passage_prefix = str(facts["query_prefix"]), str(facts["passage_prefix"])
    except OSError as exc:
        raise _unreadable(path, exc) from None
    except (KeyError, TypeError, ValueError):  # a cache entry of another shape: read the file
        return inspect_model(path, n_ctx, None)
    window = min(n_ctx or MAX_CONTEXT, context)
    model_id = f"{name or Path(path).stem}@{entry['sha256'][:12]}"
    if window < context:  # longer texts are cut into other windows: other vectors, another id
        model_id += f"/w{window}"
    return ModelFile(path, model_id, dim, window, query_prefix, passage_prefix)


def mark_broken(path: str, digests: str | None, problem: str) -> None:
    """Record in ``digests`` that the file at ``path``, as it is now (its size and time), gave a
    vector that is not a number: damaged weights, which give the same NaN every time it loads.
    :func:`inspect_model` (``reread=False``, what ``status`` asks) then refuses it with
    ``problem``; a file changed since is a new entry, without the mark."""
    if not digests:
        return
    try:
        stamp = _stamp(path)
    except OSError:
        return
    known = _read_digests(digests)
    entry = known.get(os.path.realpath(path))
    if isinstance(entry, dict) and entry.get("stamp") == stamp and entry.get("broken") != problem:
        known[os.path.realpath(path)] = {**entry, "broken": problem}
        _write_digests(digests, known)


def file_state(path: str) -> tuple[int, ...] | None:
    """What changes whenever the file at ``path`` is written or replaced: its device and inode,
    size, and modification and change times. The change time cannot be set back (``cp -p`` and
    ``touch -r`` set the modification time only), so a file overwritten in place under the same
    size and time still shows. None: it cannot be read."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def check_file(path: str) -> None:
    """:class:`ModelFileError` when ``path`` is missing or its header is not a usable GGUF
    embedding model: what :func:`inspect_model` refuses first, without hashing the file (a
    reply can say it while the model loads)."""
    _require_file(path)
    try:
        _header_facts(path)
    except OSError as exc:
        raise _unreadable(path, exc) from None


def _require_file(path: str) -> None:
    if not path or not os.path.isfile(path):
        raise ModelFileError(f"embedding model not found: {path}")


def _unreadable(path: str, exc: OSError) -> ModelFileError:
    return ModelFileError(f"embedding model {path} cannot be read: {exc}")


def _header_facts(path: str) -> dict[str, object]:
    try:
        info = read_gguf_header(path)
    except GGUFHeaderError as exc:
        raise ModelFileError(f"embedding model {path} is not usable: {exc}") from None
    arch = info.get_str("general.architecture")
    dim = info.get_int(f"{arch}.embedding_length")
    if not arch or not dim:
        raise ModelFileError(f"embedding model {path} has no architecture or embedding length")
    return {
        "name": info.get_str("general.name"),
        "dim": dim,
        "context": info.get_int(f"{arch}.context_length") or MAX_CONTEXT,
        "query_prefix": info.get_str(QUERY_PREFIX_KEY),
        "passage_prefix": info.get_str(PASSAGE_PREFIX_KEY),
    }


def model_id_for(path: str, info: GGUFInfo) -> str:
    """``name@hash``: the model's name and the first 12 hex digits of the file's sha256."""
    return f"{info.get_str('general.name') or Path(path).stem}@{_sha256(path)[:12]}"


def _stamp(path: str) -> list[int]:
    stat = os.stat(path)
    return [stat.st_size, stat.st_mtime_ns]


def _sha256(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _read_digests(path: str) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as handle:
            loaded = json.load(handle)
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _write_digests(path: str, known: dict[str, object]) -> None:
    """Replace the file at once (a reader never sees half of it; of two writers, one wins)."""
    try:
        folder = os.path.dirname(path) or "."
        os.makedirs(folder, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".digests-", suffix=".json")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(known, out)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
