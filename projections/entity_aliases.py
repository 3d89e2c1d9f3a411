"""``entity_aliases``: the entity aliases a person accepted or rejected (``EntityAliasSet``).

The last event about a pair decides it. The claims projection and the write path read the
accepted ones (:func:`accepted`) to key claims (:func:`ledger.entity_alias.rekey`); the health
report reads every decided pair (:func:`decided`) so that it never proposes one again.
"""

from __future__ import annotations

import apsw

from fact_ledger.ledger.entity_alias import Alias, tokens
from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import EntityAliasSet, Event
from fact_ledger.projections import unchanged

_ALIASES = "entity_aliases"  # the table, and its answer's name in unchanged.memo

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entity_aliases(
    alias     TEXT PRIMARY KEY,
    canonical TEXT NOT NULL,
    accepted  INTEGER NOT NULL,
    position  INTEGER NOT NULL
);
"""


class EntityAliasesProjector:
    name = "entity_aliases"
    version = 1
    tables = ("entity_aliases",)
    handles = frozenset({"EntityAliasSet"})

    def create(self, conn: apsw.Connection) -> None:
        unchanged.changed(conn, _ALIASES)
        conn.execute(_SCHEMA)

    def drop(self, conn: apsw.Connection) -> None:
        unchanged.changed(conn, _ALIASES)
        conn.execute("DROP TABLE IF EXISTS entity_aliases")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        unchanged.changed(conn, _ALIASES)
        assert isinstance(data, EntityAliasSet)
        conn.execute(
            "INSERT OR REPLACE INTO entity_aliases(alias, canonical, accepted, position) VALUES(?,?,?,?)",
            (data.alias, data.canonical, int(data.accepted), event.position),
        )


def rows(conn: apsw.Connection) -> list[tuple[str, str, bool]]:
    """Every decided pair: ``(alias, canonical, accepted)``, by alias (read once per state of
    the file: a write asks for them several times)."""
    return unchanged.alias_rows(conn, _ALIASES)


def accepted(conn: apsw.Connection) -> list[Alias]:
    """The accepted aliases as token sets, in a stable order."""
    return [(tokens(a), tokens(c)) for a, c, ok in rows(conn) if ok]


def canonical(conn: apsw.Connection, name: str) -> str:
    """The name an accepted alias stands for (itself when it is none)."""
    for a, c, ok in rows(conn):
        if ok and a == name:
            return c
    return name


def decided(conn: apsw.Connection) -> list[tuple[str, str]]:
    return [(a, c) for a, c, _ in rows(conn)]
