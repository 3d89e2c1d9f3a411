"""The real ``ledger`` CLI with the embedding model's load made observable (tests/test_model_startup.py).

``python tests/model_probe.py MARKER GATE -- ARGS…`` runs ``ledger ARGS…`` in this process.
Every construction of the encoder (:class:`projections.runtime.llama_encoder.LlamaEncoder`, the one
place llama.cpp loads a model) appends ``load PATH`` to the file MARKER, then, when GATE is not
``-``, waits until the file GATE exists before the real load runs (a model slow to load, as a real
one is on a busy host), and appends ``loaded`` after it. At exit, ``llama_cpp imported`` is
appended if the process ever imported llama.cpp's bindings. Nothing else changes: the load itself
is llama.cpp's.
"""

from __future__ import annotations

import atexit
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _note(marker: str, line: str) -> None:
    with open(marker, "a", encoding="utf-8") as out:
        out.write(line + "\n")


def main() -> None:
    marker, gate, separator, *args = sys.argv[1:]
    assert separator == "--", "usage: model_probe.py MARKER GATE -- ARGS…"
    from fact_ledger.projections.runtime import llama_encoder

    real_init = llama_encoder.LlamaEncoder.__init__

    def observed_init(self: Any, path: str, n_ctx: int, threads: int) -> None:
        _note(marker, f"load {path}")
        while gate != "-" and not os.path.exists(gate):
            time.sleep(0.02)
        real_init(self, path, n_ctx, threads)
        _note(marker, "loaded")

    llama_encoder.LlamaEncoder.__init__ = observed_init  # type: ignore[method-assign]
    atexit.register(lambda: "llama_cpp" in sys.modules and _note(marker, "llama_cpp imported"))
    sys.argv = ["ledger", *args]
    from fact_ledger.server.cli.main import main as ledger

    ledger()


if __name__ == "__main__":
    main()
