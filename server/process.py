"""What a long-running server process does once it has started (``ledger serve``, ``ledger console``)."""

from __future__ import annotations

import gc


def freeze_start_up() -> None:
    """Take what start-up built out of the collector's sight: the modules, the facade, the server
    (~100k objects that live as long as the process). Otherwise every full collection walks them
    all, a pause of tens of milliseconds inside whichever call happens to trigger it
    (``python -m tools.bench.gc_pause``). What is created later is collected as usual.

    No collection first: it would walk all of them once more before the first answer (60-80 ms
    at 10k memories) to free the few hundred objects of start-up's garbage, which stay frozen."""
    gc.freeze()
