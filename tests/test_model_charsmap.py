"""The precompiled_charsmap compiler: every key maps to its replacement under llama.cpp's walk."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from fact_ledger.server.models.charsmap import build_charsmap, normalize_prefix

_chars = st.characters(min_codepoint=1, max_codepoint=0x2FFFF, blacklist_categories=("Cs",))
_maps = st.dictionaries(st.text(_chars, min_size=1, max_size=3), st.text(_chars, max_size=4), max_size=60)


def _units(charsmap: bytes) -> tuple[int, ...]:
    (size,) = struct.unpack_from("<I", charsmap, 0)
    return struct.unpack_from(f"<{size // 4}I", charsmap, 4)


@settings(max_examples=150, deadline=None)
@given(_maps)
def test_every_key_yields_its_replacement(mapping: dict[str, str]) -> None:
    charsmap = build_charsmap(mapping)
    for key, value in mapping.items():
        assert normalize_prefix(charsmap, key.encode()) == (value.encode(), len(key.encode()))


@settings(max_examples=150, deadline=None)
@given(_maps, st.text(_chars, min_size=1, max_size=4))
def test_text_without_a_key_prefix_is_left_alone(mapping: dict[str, str], text: str) -> None:
    charsmap = build_charsmap(mapping)
    expected = max((k for k in mapping if text.startswith(k)), key=len, default=None)
    found = normalize_prefix(charsmap, text.encode())
    if expected is None:
        assert found is None
    else:
        assert found == (mapping[expected].encode(), len(expected.encode()))


@settings(max_examples=100, deadline=None)
@given(_maps)
def test_every_lookup_stays_inside_the_array(mapping: dict[str, str]) -> None:
    """llama.cpp throws (aborting the process) on an index past the array: every child block fits."""
    units = _units(build_charsmap(mapping))

    def offset(unit: int) -> int:
        return (unit >> 10) << ((unit & (1 << 9)) >> 6)

    for index, unit in enumerate(units):
        if unit & (1 << 31) or (index and unit & 0xFF == 0):
            continue  # a value, or an empty slot
        assert (index ^ offset(unit)) | 0xFF < len(units)


def test_nfkc_style_map_and_determinism() -> None:
    mapping = {"Ａ": "A", "①": "1", "ﬁ": "fi", "\t": " ", "\u200b": "", "ab": "X"}
    charsmap = build_charsmap(mapping)
    assert charsmap == build_charsmap(dict(reversed(list(mapping.items()))))
    assert normalize_prefix(charsmap, "Ａbc".encode()) == (b"A", 3)
    assert normalize_prefix(charsmap, "\u200bx".encode()) == (b"", 3)
    assert normalize_prefix(charsmap, b"abc") == (b"X", 2)
    assert normalize_prefix(charsmap, b"a") is None
    assert normalize_prefix(charsmap, b"zz") is None
    pool = charsmap[4 + struct.unpack_from("<I", charsmap)[0] :]
    assert pool.count(b"\0") == len(set(mapping.values()))
