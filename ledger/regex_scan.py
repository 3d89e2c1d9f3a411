"""``pattern.search`` for a long alternation, tried only where one of its alternatives can start.

Python's regular expressions try every alternative of an alternation at every position of the
text. For the claims' relation pattern (hundreds of verbs behind a word-boundary check) that is
most of claim extraction's time, though few positions of a clause start any of them ("listens on",
"is running", "改成"). :func:`leftmost_search` reads the pattern's own syntax tree for what each
alternative's match begins with (a literal run, or a character class), builds one small pattern
that finds those places (literals as a trie, so each position costs a few comparisons), and tries
the original pattern there only, left to right: the first match is the one ``search`` returns,
since ``search`` is that same ``match`` tried at every position and none can match elsewhere.
A pattern whose start it cannot read (a bare ``.``, a back reference, an empty alternative) keeps
its own ``search``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from re import _constants as sre  # type: ignore[attr-defined]  # the parser's opcodes
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}
_CATEGORIES = {
    sre.CATEGORY_SPACE: r"\s",
    sre.CATEGORY_NOT_SPACE: r"\S",
    sre.CATEGORY_DIGIT: r"\d",
    sre.CATEGORY_NOT_DIGIT: r"\D",
    sre.CATEGORY_WORD: r"\w",
    sre.CATEGORY_NOT_WORD: r"\W",
}


class _Unreadable(Exception):
    """A start this module cannot turn into a pattern: the caller keeps ``search``."""


def _class(items: Iterable[tuple[Any, Any]]) -> str:
    """A character class (``IN``) written back as pattern text."""
    parts: list[str] = []
    for op, av in items:
        if op is sre.NEGATE:
            parts.insert(0, "^")
        elif op is sre.LITERAL:
            parts.append(re.escape(chr(av)))
        elif op is sre.RANGE:
            parts.append(f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}")
        elif op is sre.CATEGORY and av in _CATEGORIES:
            parts.append(_CATEGORIES[av])
        else:
            raise _Unreadable(op)
    return f"[{''.join(parts)}]"


Start = tuple[str, str, str]  # (a look-behind the start must pass, "literal" or "pattern", the text)


def _guard(op: Any, av: Any) -> str | None:
    """A one-character look-behind (``(?<![\\w/-])``) written back as pattern text: kept with the
    starts after it, so that only positions that pass it are tried (None: not such a look-behind)."""
    direction, inner = av
    nodes = list(inner.data)
    if direction != -1 or len(nodes) != 1 or nodes[0][0] is not sre.IN:
        return None
    return f"(?<!{_class(nodes[0][1])})" if op is sre.ASSERT_NOT else f"(?<={_class(nodes[0][1])})"


def _starts(nodes: list[tuple[Any, Any]], folded: list[bool], guard: str = "") -> set[Start]:
    """What a match of ``nodes`` can begin with: for each path, the run of literal characters it
    starts with, or the character class, with the one-character look-behinds before it. Raises
    :class:`_Unreadable` when a path can start with anything, or with nothing at all (then every
    position is a start). ``folded`` becomes ``[True]`` where a group ignores case: the starts
    are then looked for ignoring case too."""
    for i, (op, av) in enumerate(nodes):
        rest = nodes[i + 1 :]
        if op in (sre.ASSERT, sre.ASSERT_NOT):
            guard += _guard(op, av) or ""  # another assertion: left out, so more positions are tried
            continue
        if op is sre.AT:
            continue  # it consumes nothing: the match starts where what follows it starts
        if op is sre.LITERAL:
            run = []
            for op2, av2 in nodes[i:]:
                if op2 is not sre.LITERAL:
                    break
                run.append(chr(av2))
            return {(guard, "literal", "".join(run))}
        if op is sre.IN:
            return {(guard, "pattern", _class(av))}
        if op is sre.SUBPATTERN:
            if av[1] & sre.SRE_FLAG_IGNORECASE:
                folded[0] = True
            return _starts(list(av[-1].data) + rest, folded, guard)
        if op is sre.BRANCH:
            return {start for alternative in av[1] for start in _starts(list(alternative.data) + rest, folded, guard)}
        if op in _REPEATS:
            low, _high, inner_pattern = av
            inner = list(inner_pattern.data)
            found = _starts(inner + rest, folded, guard)
            if low != 0:
                return found
            after = _starts(rest, folded, guard)  # it may be skipped: what follows it may start the match
            if len(inner) == 1 and inner[0][0] is sre.IN:  # "\s*=": the run of the class before what follows
                cls = _class(inner[0][1])
                return {
                    (g, "pattern", f"{cls}*{re.escape(text) if kind == 'literal' else text}") for g, kind, text in after
                }
            return found | after
        raise _Unreadable(op)
    raise _Unreadable("empty")  # a path that may match nothing starts anywhere


def _trie(words: Iterable[str]) -> str:
    """One alternation over ``words``, grouped by their first characters: ``l(?:istens|ives)``
    costs a position one comparison per distinct first character, not one per word."""
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}  # a word may end here

    def render(node: dict[str, Any]) -> str:
        if "" in node:  # a word ends here: what the longer words add is not needed to find a start
            return ""
        branches = [re.escape(ch) + render(child) for ch, child in sorted(node.items())]
        return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"

    return render(tree)


def leftmost_search(pattern: re.Pattern[str]) -> Callable[[str], re.Match[str] | None]:
    """A function that returns what ``pattern.search(text)`` returns, faster when few positions
    of a text can start a match."""
    folded = [bool(pattern.flags & re.IGNORECASE)]
    try:
        found = _starts(list(sre_parse.parse(pattern.pattern, pattern.flags).data), folded)
    except _Unreadable:
        return pattern.search
    alternatives = []
    for guard in sorted({g for g, _kind, _text in found}):
        words = [text for g, kind, text in found if g == guard and kind == "literal"]
        patterns = sorted(text for g, kind, text in found if g == guard and kind == "pattern")
        body = "|".join(([_trie(words)] if words else []) + patterns)
        alternatives.append(f"{guard}(?:{body})" if guard else body)
    starts = re.compile("|".join(alternatives), re.IGNORECASE if folded[0] else 0)
    find_start, match = starts.search, pattern.match

    def search(text: str) -> re.Match[str] | None:
        at = find_start(text)
        while at is not None:
            found = match(text, at.start())
            if found is not None:
                return found
            at = find_start(text, at.start() + 1)
        return None

    return search


def _required(nodes: list[tuple[Any, Any]]) -> set[str] | None:
    """Literals one of which every match of ``nodes`` contains (None: no such set is known): the
    longest run of literal characters the sequence must match, or of a group or an alternation
    it must match (each alternative giving its own). A group that ignores case gives none: its
    literals match other cases too."""
    best: set[str] | None = None

    def better(found: set[str] | None) -> None:
        nonlocal best
        if found and "" not in found and (best is None or min(map(len, found)) > min(map(len, best))):
            best = found

    run: list[str] = []
    for op, av in nodes:
        if op is sre.LITERAL:
            run.append(chr(av))
            continue
        better({"".join(run)} if run else None)
        run = []
        if op is sre.SUBPATTERN:
            if not av[1] & sre.SRE_FLAG_IGNORECASE:
                better(_required(list(av[-1].data)))
        elif op is sre.BRANCH:
            sets = [_required(list(alternative.data)) for alternative in av[1]]
            if all(sets):
                better(set().union(*(s for s in sets if s)))
        elif op in _REPEATS and av[0] >= 1:
            better(_required(list(av[2].data)))
    better({"".join(run)} if run else None)
    return best


def match_where_possible(pattern: re.Pattern[str]) -> Callable[[str], re.Match[str] | None]:
    """A function that returns what ``pattern.match(text)`` returns, without trying a text that
    holds none of the literals every match must contain (most texts, for a rule anchored on a
    lazy ``^(.+?)`` and a few words): one scan for the words instead of the rule's backtracking."""
    if pattern.flags & re.IGNORECASE:
        return pattern.match
    required = _required(list(sre_parse.parse(pattern.pattern, pattern.flags).data))
    if not required:
        return pattern.match
    hint = re.compile(_trie(required))
    find_hint, match = hint.search, pattern.match

    def guarded(text: str) -> re.Match[str] | None:
        return match(text) if find_hint(text) is not None else None

    return guarded
