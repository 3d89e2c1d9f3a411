"""Workspace aliases: which workspace names the user has said are the same workspace.

Agents name workspaces loosely (``Fact Ledger``, ``fact-ledger``, ``fact_ledger``). A user
accepts an alias (``WorkspaceAliasSet(accepted=True)``) and from then on every name in the
alias class means the canonical workspace — for new writes, filters and isolation checks —
while memories already stored under the alias keep their recorded name (events are never
rewritten), so readers match the whole class. A rejection is kept too: it silences the
suggestion for that pair and undoes an earlier acceptance of it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

import apsw

from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import Event, WorkspaceAliasSet
from fact_ledger.ledger.normalize import normalize_text
from fact_ledger.projections import unchanged

_ALIASES = "workspace_aliases"  # the table, and its answer's name in unchanged.memo

_SCHEMA = """
CREATE TABLE IF NOT EXISTS workspace_aliases(
    alias     TEXT NOT NULL,
    canonical TEXT NOT NULL,
    accepted  INTEGER NOT NULL,
    position  INTEGER NOT NULL,
    PRIMARY KEY(alias, canonical)
) WITHOUT ROWID;
"""

_SEPARATORS = re.compile(r"[\s\-_./:]+")
MAX_HOPS = 8  # alias chains are short; the bound only guards against a corrupt cycle


def workspace_key(name: str) -> str:
    """The comparable form used to *suggest* aliases: normalised, separators dropped."""
    return _SEPARATORS.sub("", normalize_text(name))


class WorkspacesProjector:
    name = "workspaces"
    version = 1
    tables = ("workspace_aliases",)
    handles = frozenset({"WorkspaceAliasSet"})

    def create(self, conn: apsw.Connection) -> None:
        unchanged.changed(conn, _ALIASES)
        conn.execute(_SCHEMA)

    def drop(self, conn: apsw.Connection) -> None:
        unchanged.changed(conn, _ALIASES)
        conn.execute("DROP TABLE IF EXISTS workspace_aliases")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        unchanged.changed(conn, _ALIASES)
        assert isinstance(data, WorkspaceAliasSet)
        if data.accepted:  # an alias names exactly one canonical workspace
            conn.execute("DELETE FROM workspace_aliases WHERE alias=? AND accepted=1", (data.alias,))
        conn.execute(
            "INSERT INTO workspace_aliases(alias, canonical, accepted, position) VALUES(?,?,?,?) "
            "ON CONFLICT(alias, canonical) DO UPDATE SET accepted=excluded.accepted, position=excluded.position",
            (data.alias, data.canonical, int(data.accepted), event.position),
        )


def alias_rows(conn: apsw.Connection) -> list[tuple[str, str, bool]]:
    """Every decided pair of workspace names: ``(alias, canonical, accepted)``."""
    return unchanged.alias_rows(conn, _ALIASES)


def _accepted(conn: apsw.Connection) -> dict[str, str]:
    return {alias: canonical for alias, canonical, accepted in alias_rows(conn) if accepted}


def _resolve(aliases: dict[str, str], name: str) -> str:
    for _ in range(MAX_HOPS):
        if name not in aliases:
            break
        name = aliases[name]
    return name


def canonical(conn: apsw.Connection, name: str) -> str:
    """The canonical workspace for ``name`` (itself when it is no alias)."""
    return _resolve(_accepted(conn), name)


def resolver(conn: apsw.Connection, *, without: str | None = None) -> Callable[[str], str]:
    """:func:`canonical` for many names: the aliases are read once (``without``: as it will be once
    that alias is no longer accepted, a rejection deciding)."""
    aliases = {a: c for a, c in _accepted(conn).items() if a != without}
    return lambda name: _resolve(aliases, name)


def scope(conn: apsw.Connection, name: str) -> tuple[str, ...]:
    """Every recorded name that means the same workspace as ``name`` (canonical first)."""
    aliases = _accepted(conn)
    target = _resolve(aliases, name)
    return (target, *sorted(a for a in aliases if _resolve(aliases, a) == target))


def recorded_name(conn: apsw.Connection, name: str) -> str:
    """The workspace name as memories or aliases recorded it, for a name a person typed or a
    suggestion carried: itself when recorded, else the one recorded name equal to it but for
    surrounding whitespace ("Aurora" → "Aurora "), else the name without that whitespace."""
    if not name.strip():
        return ""
    try:
        rows = conn.execute(
            "SELECT DISTINCT workspace FROM memories WHERE trim(workspace)=?1 UNION "
            "SELECT alias FROM workspace_aliases WHERE trim(alias)=?1 UNION "
            "SELECT canonical FROM workspace_aliases WHERE trim(canonical)=?1",
            (name.strip(),),
        ).fetchall()
    except apsw.SQLError:  # projection not created yet
        rows = []
    found = sorted(r[0] for r in rows)
    if name in found:
        return name
    return found[0] if len(found) == 1 else name.strip()


def rejected(conn: apsw.Connection) -> set[tuple[str, str]]:
    try:
        return {(a, c) for a, c in conn.execute("SELECT alias, canonical FROM workspace_aliases WHERE accepted=0")}
    except apsw.SQLError:
        return set()


def listing(conn: apsw.Connection) -> dict[str, object]:
    """Workspaces with memory counts, accepted aliases, and suggested aliases not yet decided."""
    counts = dict(conn.execute("SELECT workspace, count(*) FROM memories WHERE status='active' GROUP BY workspace"))
    aliases = _accepted(conn)
    no = rejected(conn)
    by_key: dict[str, list[str]] = {}
    for name in counts:
        by_key.setdefault(workspace_key(name), []).append(name)
    suggestions = []
    for names in by_key.values():
        roots = sorted({_resolve(aliases, n) for n in names}, key=lambda n: (-counts.get(n, 0), n))
        for other in roots[1:]:
            if (other, roots[0]) not in no:
                suggestions.append({"alias": other, "canonical": roots[0]})
    return {
        "workspaces": [
            {"name": n, "memories": c, "canonical": _resolve(aliases, n)} for n, c in sorted(counts.items())
        ],
        "aliases": [{"alias": a, "canonical": _resolve(aliases, a)} for a in sorted(aliases)],
        "suggestions": suggestions,
    }


def holds_memory(conn: apsw.Connection, names: tuple[str, ...]) -> bool:
    """Whether a memory was ever stored under one of ``names``: a long-term memory in any status
    (archived and erased ones keep their row) or a working note."""
    marks = ",".join("?" * len(names))
    try:
        row = conn.execute(
            f"SELECT 1 FROM memories WHERE workspace IN ({marks}) UNION ALL "
            f"SELECT 1 FROM working_memories WHERE workspace IN ({marks}) LIMIT 1",
            (*names, *names),
        ).fetchone()
    except apsw.SQLError:  # read models not created yet: nothing was stored
        return False
    return row is not None


def nearest(conn: apsw.Connection, name: str) -> str | None:
    """The workspace a mistyped ``name`` most likely meant: one written the same way but for case
    and separators (``Fact Ledger`` for ``fact-ledger``), else the closest by difflib's ratio
    (0.6 or more); None when no recorded name is close."""
    try:
        names = sorted(
            {r[0] for r in conn.execute("SELECT DISTINCT workspace FROM memories")}
            | {r[0] for r in conn.execute("SELECT DISTINCT workspace FROM working_memories")}
        )
    except apsw.SQLError:
        return None
    names = [n for n in names if n.strip() and n != name]
    key = workspace_key(name)
    same = [n for n in names if workspace_key(n) == key]
    if same:
        return same[0]
    by_key = {workspace_key(n).lower(): n for n in reversed(names)}
    close = difflib.get_close_matches(key.lower(), list(by_key), n=1, cutoff=0.6)
    return by_key[close[0]] if close else None


def words(name: str) -> str:
    """A workspace as a person reads its name: the default one is named as such, not as ``''``."""
    return 'the default workspace ("")' if name == "" else f"workspace {name!r}"


def empty_notice(name: str, nearest: str | None) -> str:
    """The notice of a search in a workspace no memory was ever stored in (``workspace_empty``)."""
    near = f"; did you mean {nearest!r}?" if nearest is not None else ""
    return f"{words(name)} holds no memory: none was ever stored in it{near}"
