"""What counts as an exact duplicate of a new memory.

A memory repeats an existing one when its content hashes the same (``ledger.normalize``), it is
written to the same workspace, its subject normalises the same, and the existing memory is
still active: a retired, superseded or archived memory is history, and saying the same thing
again records it anew. The read model looks the candidate up by :class:`DuplicateKey`
(``projections.memories.exact_duplicate``); :func:`is_exact_duplicate` is the rule itself.
"""

from __future__ import annotations

from typing import NamedTuple

from fact_ledger.ledger.normalize import content_hash, normalize_text

DUPLICATE_STATUS = "active"  # only a current memory absorbs a repeat


class DuplicateKey(NamedTuple):
    """The fields two memories must share to be the same memory said twice."""

    content_hash: str
    workspace: str
    subject_norm: str


def duplicate_key(content: str, subject: str, workspace: str) -> DuplicateKey:
    return DuplicateKey(content_hash(content), workspace, normalize_text(subject))


def is_exact_duplicate(new: DuplicateKey, existing: DuplicateKey, existing_status: str) -> bool:
    """Whether a memory with key ``existing`` in ``existing_status`` absorbs a new one keyed ``new``."""
    return existing_status == DUPLICATE_STATUS and new == existing
