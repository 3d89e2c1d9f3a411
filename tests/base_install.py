"""The real ``ledger`` CLI as the base install has it: without the semantic extra.

The test environment has numpy, gguf, llama-cpp-python and sqlite-vec; a subprocess that puts
``None`` in ``sys.modules`` for each before the CLI starts cannot import them (``import numpy``
raises ImportError), which is what a ``pip install .`` without ``[semantic]`` gives.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

SEMANTIC_MODULES = ("numpy", "llama_cpp", "sqlite_vec", "gguf")
_BOOTSTRAP = (
    "import sys\n"
    f"for name in {SEMANTIC_MODULES!r}:\n"
    "    sys.modules[name] = None\n"
    "from fact_ledger.server.cli.main import main\n"
    "main(prog_name='ledger')\n"
)


def base_cli(
    *args: str, env: dict[str, str] | None = None, input: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``ledger ARGS`` in a subprocess that cannot import the semantic extra."""
    return subprocess.run(
        [sys.executable, "-c", _BOOTSTRAP, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        input=input,
        timeout=timeout,
        cwd=REPO,
    )
