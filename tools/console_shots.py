"""Screenshots of the console's main pages for docs/console/, taken by the browser tests.

    python -m tools.console_shots [DIR]

Runs ``tests/console/test_console_browser.py`` on its seeded ledger with
``LEDGER_CONSOLE_SHOTS=DIR`` (default ``docs/console``); prints the files as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    target = Path(sys.argv[1] if len(sys.argv) > 1 else REPO / "docs" / "console").resolve()
    env = {**os.environ, "LEDGER_CONSOLE_SHOTS": str(target)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "tests/console/test_console_browser.py"], cwd=REPO, env=env, check=False
    )
    print(json.dumps({"dir": str(target), "files": sorted(p.name for p in target.glob("*.png"))}))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
