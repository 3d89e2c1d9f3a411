"""``python -m tools.bench``: run the benchmarks (see ``tools/bench/run.py``)."""

from tools.bench.run import main

raise SystemExit(main())
