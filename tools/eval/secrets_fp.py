"""How often ordinary text trips the credential scan (server/app/credentials.py): false positives.

Two corpora without credentials: every turn of the LoCoMo conversations (content as
tools/eval/locomo.py remembers it, source_ref the dia_id) and every paragraph of the project's
own docs (docs/*.md and README.md, split at blank lines). Prints JSON with the count of units,
the flagged ones and the rate, and each flag with its kind and the text around it (to judge it).

The LoCoMo data is CC BY-NC (evaluation only): it is read here and nowhere else.

    python -m tools.eval.secrets_fp [--data ../shared/data/locomo-dev]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

from fact_ledger.server.app import credentials
from tools.eval.locomo import DEFAULT_DATA, REPO, turns


def _units_locomo(data: Path) -> list[tuple[str, dict[str, Any]]]:
    units = []
    for path in sorted(data.glob("*.json")):
        conversation = json.loads(path.read_text(encoding="utf-8"))
        units += [
            (f"{path.stem}:{t['dia_id']}", {"content": t["content"], "source_ref": t["dia_id"]})
            for t in turns(conversation)
        ]
    return units


def _units_docs() -> list[tuple[str, dict[str, Any]]]:
    units = []
    for path in [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]:
        text = path.read_text(encoding="utf-8")
        for number, paragraph in enumerate(re.split(r"\n\s*\n", text)):
            if paragraph.strip():
                units.append((f"{path.relative_to(REPO)}#{number}", {"content": paragraph}))
    return units


def measure(units: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    flagged = []
    started = time.perf_counter()
    for name, fields in units:
        found = credentials.scan(fields)
        if found:
            text = fields[found[0].field]
            s = found[0]
            flagged.append({"unit": name, "kind": s.kind, "text": text[max(0, s.start - 40) : s.end + 40]})
    elapsed = time.perf_counter() - started
    return {
        "units": len(units),
        "flagged": len(flagged),
        "rate": round(len(flagged) / len(units), 6) if units else 0.0,
        "scan_us_per_unit": round(elapsed / max(1, len(units)) * 1e6, 1),
        "flags": flagged,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    report = {"locomo": measure(_units_locomo(args.data)), "docs": measure(_units_docs())}
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
