"""Entity aliases: one person or thing under several names (张工 / 张伟, Jon / John, k8s /
kubernetes). Pure functions.

An accepted alias (``EntityAliasSet``, recorded only when a person accepts it) feeds the claims'
subject normalisation: a claim key whose subject tokens hold the alias's tokens is keyed by the
canonical name's tokens instead (:func:`rekey`), so a later statement about 张工's phone meets
张伟's in one claim set. A rejection (or an accepted alias undone) takes it out again; claims
are re-derived from their memories' text either way, so a rebuild folds the same keys.

:func:`propose` finds likely pairs for the health report — never applied by itself:

- **a title for a name**: a CJK surname with a title (张工, 张总, 张老师) and exactly one full
  name with that surname (张伟);
- **a near-identical spelling**: two Latin names one edit apart (Jon / John), at least three
  letters each, or a numeronym (k8s: k, eight letters, s = kubernetes);
- **the same values for several attributes**: two subjects holding the same value for at least
  :data:`SHARED_VALUES` attributes (the same e-mail and the same office).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from fact_ledger.ledger.claims import Claim, key_tokens

TITLES = ("老师", "经理", "先生", "女士", "医生", "教授", "工", "总", "哥", "姐", "师傅")
SHARED_VALUES = 2
MAX_HOLDERS = 20  # a value held by more subjects than this (a city, "yes") says nothing about identity
_CJK_NAME = re.compile(r"^[\u4e00-\u9fff]{2,3}$")
_LETTERS = re.compile(r"^[a-z][a-z .-]*[a-z]$")
_NUMERONYM = re.compile(r"^([a-z])(\d{1,2})([a-z])$")

Alias = tuple[frozenset[str], frozenset[str]]  # (alias tokens, canonical tokens)


def tokens(name: str) -> frozenset[str]:
    return frozenset(key_tokens(name))


def rekey(claims: Iterable[Claim], aliases: Sequence[Alias]) -> tuple[Claim, ...]:
    """The claims with each accepted alias's tokens in a key subject replaced by its canonical
    name's (aliases in the given order, each once: an alias always names a final canonical)."""
    out = []
    for claim in claims:
        held = set(claim.key_subject.split())
        changed = False
        for alias, canonical in aliases:
            if alias and alias <= held and not alias <= canonical:
                held = (held - alias) | canonical
                changed = True
        out.append(msgspec.structs.replace(claim, key_subject=" ".join(sorted(held))) if changed else claim)
    return tuple(out)


def _edit_one(a: str, b: str) -> bool:
    """One insertion, deletion or substitution apart."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i + (len(a) == len(b)) :] == b[i + 1 :]


def _spelled_alike(names: Sequence[str]) -> list[tuple[str, str]]:
    """Pairs of letter-only names one edit apart: names sharing a one-deletion variant are the
    candidates (an index, not every pair), each checked by :func:`_edit_one`."""
    by_variant: dict[str, list[str]] = defaultdict(list)
    for name in names:
        low = name.lower()
        if len(low) < 3 or len(low) > 40 or not _LETTERS.match(low):
            continue
        for variant in {low, *(low[:i] + low[i + 1 :] for i in range(len(low)))}:
            by_variant[variant].append(name)
    found: set[tuple[str, str]] = set()
    for group in by_variant.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if a != b and _edit_one(a.lower(), b.lower()):
                    found.add((min(a, b), max(a, b)))
    return sorted(found)


def _numeronyms(names: Sequence[str]) -> list[tuple[str, str]]:
    """(numeronym, the word it abbreviates): k8s and kubernetes (first letter, last letter, length)."""
    by_shape: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    for name in names:
        low = name.lower()
        if _LETTERS.match(low) and " " not in low and len(low) > 3:
            by_shape[(low[0], low[-1], len(low))].append(name)
    out = []
    for name in names:
        m = _NUMERONYM.match(name.lower())
        if m:
            out += [(name, long) for long in by_shape.get((m.group(1), m.group(3), int(m.group(2)) + 2), [])]
    return out


def propose(
    subjects: Mapping[str, int],
    values: Iterable[tuple[str, str, str]],
    decided: Iterable[tuple[str, str]] = (),
    limit: int = 10,
) -> list[dict[str, Any]]:
    """Likely alias pairs, most evidence first: ``{alias, canonical, reasons, shared}``.

    ``subjects``: each subject name of the current memories and how many memories use it;
    ``values``: ``(subject, attribute, value_norm)`` of their claims; ``decided``: pairs already
    accepted or rejected (either direction), never proposed again. The canonical name is the
    full name (not the title), the spelled-out word (not the numeronym), else the name more
    memories use (then the longer spelling).
    """
    skip = {frozenset(p) for p in decided}
    found: dict[frozenset[str], dict[str, Any]] = {}

    def add(alias: str, canonical: str, reason: str, shared: int = 0) -> None:
        pair = frozenset((alias, canonical))
        if alias == canonical or pair in skip or tokens(alias) == tokens(canonical):
            return
        entry = found.setdefault(pair, {"alias": alias, "canonical": canonical, "reasons": [], "shared": 0})
        entry["reasons"].append(reason)
        entry["shared"] = max(entry["shared"], shared)

    names = sorted(s.strip() for s in subjects if s.strip())
    full_by_surname: dict[str, list[str]] = defaultdict(list)
    titled: list[tuple[str, str]] = []
    for name in names:
        if not _CJK_NAME.match(name):
            continue
        title = next((t for t in TITLES if name.endswith(t) and len(name) - len(t) == 1), None)
        if title:
            titled.append((name, name[0]))
        else:
            full_by_surname[name[0]].append(name)
    for name, surname in titled:
        full = full_by_surname.get(surname, [])
        if len(full) == 1:
            add(name, full[0], f"{name} is the surname {surname} with a title; {full[0]} is the one full name with it")
    for a, b in _spelled_alike(names):
        alias, canonical = sorted((a, b), key=lambda n: (subjects.get(n, 0), len(n), n))  # the fuller spelling
        add(alias, canonical, f"{a} and {b} are spelled one letter apart")
    for short, long in _numeronyms(names):
        add(short, long, f"{short} abbreviates {long}")
    holders: dict[tuple[str, str], set[str]] = defaultdict(set)
    for subject, attribute, value in values:
        if subject.strip():
            holders[(attribute, value)].add(subject.strip())
    pairs: dict[tuple[str, str], set[str]] = defaultdict(set)  # the attributes two subjects agree on
    for (attribute, _), held in holders.items():
        if 2 <= len(held) <= MAX_HOLDERS:
            ordered = sorted(held)
            for i, a in enumerate(ordered):
                for b in ordered[i + 1 :]:
                    pairs[(a, b)].add(attribute)
    for (a, b), attributes in pairs.items():
        n = len(attributes)
        if n >= SHARED_VALUES:
            alias, canonical = sorted((a, b), key=lambda x: (subjects.get(x, 0), len(x), x))
            if _CJK_NAME.match(a) and _CJK_NAME.match(b) and a[0] == b[0]:
                title_a = any(a.endswith(t) for t in TITLES)
                alias, canonical = (
                    (a, b) if title_a else (b, a) if any(b.endswith(t) for t in TITLES) else (alias, canonical)
                )
            add(alias, canonical, f"{a} and {b} hold the same value for {n} attributes", shared=n)
    ranked = sorted(found.values(), key=lambda e: (-len(e["reasons"]), -e["shared"], e["alias"], e["canonical"]))
    return ranked[:limit]
