"""Text normalisation shared by duplicate detection, claims and search.

Unicode NFKC (full-width → half-width, compatibility forms), case folding, zero-width
characters removed, whitespace collapsed. Pure functions, no IO.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """The comparable form of a string: NFKC, casefolded, no zero-width, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH).casefold()
    return _SPACE.sub(" ", text).strip()


def content_hash(content: str) -> str:
    """Fingerprint of a memory's normalised content (duplicate detection key)."""
    return hashlib.sha256(normalize_text(content).encode()).hexdigest()[:32]
