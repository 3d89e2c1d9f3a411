"""Each vocabulary is spelled once (issue 28): source types, statuses, claim-set states and
resolutions, working tiers and signals, notice states and kinds, the secret policies. Every
other place (edge models, CLI choices, listings, checks) reads that one tuple, so a word added
there reaches them all and a word spelled again somewhere cannot drift from it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, get_args

import pytest

from fact_ledger.ledger.disagree import DISAGREEMENTS, NOTICE_KIND_FILTERS, NOTICE_LISTINGS, NOTICE_STATES
from fact_ledger.ledger.facts import CONFLICT_LISTINGS, CONFLICT_STATES
from fact_ledger.ledger.govern import KEEP_RESOLUTIONS
from fact_ledger.ledger.promotion import SIGNALS
from fact_ledger.ledger.trust import SOURCE_TYPES, STATUSES
from fact_ledger.ledger.working import TIERS
from fact_ledger.server.app.credentials import ON_SECRET
from fact_ledger.server.console.i18n import VALUES
from fact_ledger.server.schemas import admin, memory

REPO = Path(__file__).resolve().parents[1]
# The console's translation table is keyed by the words it shows (checked below to cover them).
TRANSLATIONS = REPO / "server" / "console" / "i18n.py"
VOCABULARIES = {
    "SOURCE_TYPES": SOURCE_TYPES,
    "STATUSES": STATUSES,
    "CONFLICT_STATES": CONFLICT_STATES,
    "KEEP_RESOLUTIONS": KEEP_RESOLUTIONS,
    "SIGNALS": SIGNALS,
    "TIERS": TIERS,
    "NOTICE_STATES": NOTICE_STATES,
    "DISAGREEMENTS": DISAGREEMENTS,
    "ON_SECRET": ON_SECRET,
}


def _string_sequences(path: Path) -> list[tuple[int, frozenset[str]]]:
    """(line, words) of every tuple, list or set of two or more string literals in ``path``, and
    of every dict whose keys are (a vocabulary may be the keys of its table)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else None
        items = node.keys if isinstance(node, ast.Dict) else items
        if items is not None and len(items) >= 2:
            words = [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(words) == len(items):
                found.append((node.lineno, frozenset(words)))
    return found


@pytest.mark.parametrize("name", sorted(VOCABULARIES))
def test_each_vocabulary_is_written_out_once(name: str) -> None:
    words = frozenset(VOCABULARIES[name])
    spelled = [
        f"{path.relative_to(REPO)}:{line}"
        for folder in ("ledger", "projections", "server")
        for path in sorted((REPO / folder).rglob("*.py"))
        if path != TRANSLATIONS
        for line, seq in _string_sequences(path)
        if words <= seq
    ]
    assert len(spelled) == 1, f"{name} is spelled out in {spelled}: read the one tuple instead"


def _choices(model: Any, field: str) -> tuple[Any, ...]:
    annotation = model.model_fields[field].annotation
    return tuple(a for arg in get_args(annotation) or (annotation,) for a in (get_args(arg) or (arg,)) if a is not None)


@pytest.mark.parametrize(
    ("model", "field", "vocabulary"),
    [
        (memory.RememberData, "source_type", SOURCE_TYPES),
        (memory.RememberData, "tier", TIERS),
        (memory.RememberData, "on_secret", ON_SECRET),
        (memory.ReinforceData, "signal", SIGNALS),
        (admin.ConflictsData, "state", CONFLICT_LISTINGS),
        (admin.ResolveConflictData, "resolution", KEEP_RESOLUTIONS),
        (admin.NoticesData, "state", NOTICE_LISTINGS),
        (admin.NoticesData, "kind", NOTICE_KIND_FILTERS),
        (admin.ReviewNoticeData, "state", NOTICE_STATES),
    ],
    ids=lambda v: getattr(v, "__name__", None) or (v if isinstance(v, str) else "vocabulary"),
)
def test_the_edge_models_accept_exactly_the_vocabulary(model: Any, field: str, vocabulary: tuple[str, ...]) -> None:
    assert set(_choices(model, field)) - {type(None)} == set(vocabulary)
    assert set(CONFLICT_LISTINGS) == {*CONFLICT_STATES, "all"}


@pytest.mark.parametrize("name", ["SOURCE_TYPES", "STATUSES", "CONFLICT_STATES", "KEEP_RESOLUTIONS"])
def test_the_console_has_a_word_for_every_value_it_shows(name: str) -> None:
    missing = [w for w in VOCABULARIES[name] if w not in VALUES or not all(VALUES[w])]
    assert missing == [], f"server/console/i18n.py VALUES lacks {missing}"
