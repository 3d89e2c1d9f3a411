"""What claim extraction costs a new memory: microseconds per text on the ``tools.bench`` corpus.

A new memory's claims are extracted once, in Python, inside its ``remember`` (and once per memory
in a rebuild with a cold derived cache). The memo that spares a repeated text is cleared before
each pass, so every text is extracted anew. Prints JSON: the passes' µs per text and their median.
To compare two trees, run it in each, alternately (``python -m tools.bench.extraction`` in one
checkout, then the other, and again).

    python -m tools.bench.extraction [--texts 5000] [--passes 3] [--seed 99]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from fact_ledger.ledger import claims
from tools.bench.corpus import Corpus


def microseconds_per_text(texts: list[tuple[str, str]]) -> float:
    claims._extract.cache_clear()  # type: ignore[attr-defined]  # the memo behind extract_claims
    started = time.perf_counter()
    for content, subject in texts:
        claims.extract_claims(content, subject)
    return (time.perf_counter() - started) / len(texts) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=5000)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--seed", type=int, default=99)
    args = parser.parse_args(argv)
    texts = [(m.content, m.subject) for m in Corpus(seed=args.seed).memories(args.texts)]
    passes = [round(microseconds_per_text(texts), 1) for _ in range(args.passes)]
    json.dump(
        {
            "benchmark": "extraction",
            "texts": len(texts),
            "us_per_text": passes,
            "median_us_per_text": statistics.median(passes),
        },
        sys.stdout,
        indent=2,
    )
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
