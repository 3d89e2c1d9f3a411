"""Claims and near-duplicate fingerprints of current memories, and the lookups a write needs.

Both read models hold *current* (active) memories only: a memory that is superseded, retired
or archived drops out, so the collision check and the near-duplicate probe never see the dead
and their cost does not grow with history. Both are folded from the memories row (the memories
projector runs first), with the same pure functions the facade uses before a write
(:func:`ledger.claims.extract_claims`, :func:`ledger.fingerprint.signature`), so a rebuild
yields the same rows as the incremental path.

The lookups are indexed: claims by ``(key_subject, key_attribute, kind, workspace)``, and
near-duplicates by MinHash band keys (scoped by workspace) with a bounded posting list per band,
so a write costs the same at 100 memories and at 100,000.
"""

from __future__ import annotations

import json
from typing import Any

import apsw

from fact_ledger.ledger import fingerprint
from fact_ledger.ledger.claims import Claim
from fact_ledger.ledger.decide import ENDED
from fact_ledger.ledger.entity_alias import Alias, rekey, tokens
from fact_ledger.ledger.log.chain import StoredEvent
from fact_ledger.ledger.log.events import (
    EntityAliasSet,
    Erased,
    Event,
    MemoryRecorded,
    MemoryRetired,
    MemoryUpdated,
    Reinstated,
)
from fact_ledger.ledger.negation import ended_claims
from fact_ledger.ledger.sql import insert_rows, marks
from fact_ledger.projections import derived, entity_aliases
from fact_ledger.projections.memories import memory_id_of
from fact_ledger.projections.runner import DeferringProjector

_CLAIMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS claims(
    memory_id     INTEGER NOT NULL,
    ord           INTEGER NOT NULL,
    key_subject   TEXT NOT NULL,
    key_attribute TEXT NOT NULL,
    kind          TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    subject       TEXT NOT NULL,
    attribute     TEXT NOT NULL,
    value         TEXT NOT NULL,
    value_norm    TEXT NOT NULL,
    origin        TEXT NOT NULL,
    PRIMARY KEY(memory_id, ord)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS claims_key ON claims(key_subject, key_attribute, kind, workspace, memory_id, value_norm);
CREATE INDEX IF NOT EXISTS claims_value ON claims(key_subject, key_attribute, kind, workspace, value_norm, memory_id);
-- A value a denial ended ("Alice is no longer the owner …" retired "Alice owns …"), and when: a
-- memory stating it again with an earlier event time arrives late, and is ended on arrival
CREATE TABLE IF NOT EXISTS denied_values(
    key_subject   TEXT NOT NULL,
    key_attribute TEXT NOT NULL,
    kind          TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    value_norm    TEXT NOT NULL,
    event_time    TEXT NOT NULL,
    denial_id     INTEGER NOT NULL,
    ended_id      INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS denied_values_key ON denied_values(key_subject, key_attribute, kind, value_norm);
"""
_NEAR_SCHEMA = """
CREATE TABLE IF NOT EXISTS near_dup_sigs(
    memory_id INTEGER PRIMARY KEY,
    workspace TEXT NOT NULL,
    sig       BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS near_dup_bands(
    band_key  INTEGER NOT NULL,
    memory_id INTEGER NOT NULL,
    PRIMARY KEY(band_key, memory_id DESC)
) WITHOUT ROWID;
"""
_LEAVING = frozenset({"Superseded", "MemoryRetired", "MemoryArchived", "Erased"})
_BACK = frozenset({"Reinstated"})  # current again (an undo): its claims and fingerprint come back
_ALIAS = "EntityAliasSet"  # claims keyed by the alias's or the canonical name's tokens are derived again
# The ended memory's claims, kept as the values its denial ended
_DENY = (
    "INSERT INTO denied_values SELECT key_subject, key_attribute, kind, workspace, value_norm, ?, ?, memory_id "
    "FROM claims WHERE memory_id=?"
)
# The values a denial itself denies (ended_id: the denial), whether or not it ended a memory
_DENIED_COLUMNS = "key_subject, key_attribute, kind, workspace, value_norm, event_time, denial_id, ended_id"
_DENIED_HEAD = f"INSERT INTO denied_values({_DENIED_COLUMNS})"
_CLAIM_COLUMNS = "subject, attribute, value, kind, key_subject, key_attribute, value_norm, origin"
_CLAIM_HEAD = f"INSERT INTO claims(memory_id, ord, workspace, {_CLAIM_COLUMNS})"
_INSERT_CLAIM = f"{_CLAIM_HEAD} VALUES(?,?,?,?,?,?,?,?,?,?,?)"
CANDIDATES_PER_KEY = 64
BAND_POSTINGS = 8  # newest memories per band: bounds a probe when many texts look alike
VERIFIED = 12  # candidates (most shared bands first) whose signatures are compared


_ROW_COLUMNS = ("memory_id", "status", "content", "subject", "workspace")
_ROW_SQL = f"SELECT {', '.join(_ROW_COLUMNS)} FROM memories WHERE stream_id=?"


def _memory_row(conn: apsw.Connection, event: StoredEvent, data: Event) -> dict[str, Any] | None:
    """The columns of the event's memory row that claims and fingerprints are folded from.

    A creation carries them all (a new memory is active), so it reads nothing: during a
    rebuild the memories projection may not have written its row yet.
    """
    if isinstance(data, MemoryRecorded):
        return {
            "memory_id": event.position,
            "status": "active",
            "content": data.content,
            "subject": data.subject,
            "workspace": event.workspace,
        }
    stream = getattr(data, "loser", None) or getattr(data, "memory", None)
    row = conn.execute(_ROW_SQL, (stream,)).fetchone()
    return dict(zip(_ROW_COLUMNS, row, strict=True)) if row else None


_DERIVE_BATCH = 2048  # new memories whose claims a rebuild derives together (bounds what it holds)


class ClaimsProjector(DeferringProjector):
    """``claims``: one row per claim key of each current memory."""

    name = "claims"
    # 2: no trait of a named person ("Bob is tall"); 3: likes, where one lives and works;
    # 4: the key index covers each claim's value (see values_and_members); 5: ownership ("X owns
    # Y"), a role's value read as a name ("the on-call engineer is Jun 9"), attribute names;
    # 6: slots (fillers out of keys, change verbs, eat/drink polarity, the drink slot) and the
    # claims_value index (a restatement's probe seeks its value instead of walking the key);
    # 7: a possessive subject leaves the attribute whole ("Carol's phone number" under Carol:
    # "phone number", not "s phone number"); a time with a weekday after it ("at 10:30 on
    # Mondays") is that time, not the number 10; "at" before an address (a host name, an e-mail)
    # is "is", as before a URL; "X reports to Y" is X's manager; 8: a capitalised negation before
    # "reports to" ("Bob No longer reports to Carol") says no claim; 9: byte units and weeks spelled
    # out ("5 megabytes" is "5 MB"), "boss", "supervisor", "上级" are a manager, "X 向 Y 汇报" is X's manager;
    # 10: "经理", "上级", "老板", "领导" are the English key "manager" (one set across the languages);
    # "Erin is the team lead", "Dan is Bob's manager", "李四是张三的经理": the role is the slot;
    # "uses port 9090" a port (not a team's or a host's); "we moved the standup to 11am" the
    # standup's slot; a negated verb before the value ("doesn't listen on port 9090") no claim;
    # 11: "we upgraded Postgres to 17", "Postgres升级到17了": the version's slot; "moved from A to B" B;
    # 12: "we're on Postgres 16" the version's slot, "Carol is my manager" the manager's, a Latin
    # name against Chinese ("Alice负责计费服务") a name; a change its sentence says was undone none
    # ("… back to 8080", "rolled Postgres back to 16", 改回 state one); "FYI …" read without it;
    # denied_values: the values a denial ended, and when; "… and the billing service owner is
    # Alice": a clause after "and" with a subject of up to three words; 13: a denial's own values
    # are denied from its event time, also when it ended no memory (it arrived first); a remark on
    # a note ("that note is obsolete") states no claim, a correction's preamble is not read; 14:
    # a change said in other words ("now runs on port 9091", "since Monday, …", "the launch
    # slipped to March 10", "ownership of X moved to Bob") states the slot it changes; "string" a value;
    # 15: "Alice's new phone number" Alice's phone number, "we migrated X to Postgres 16" what X uses,
    # "预算提高到8万元", "数据库换成了MySQL", "我们把会议时间调到…" the slot they change; 16:
    # "max_connections" is "max connections", "X set/raised to Y" a change, "12 Main Street" an
    # address, "the office (has) moved to Denver" where it is, "we moved offices to …" the office;
    # "Dave is on call (this week)" the on-call role's holder, "a team is on call" no value; 17: a
    # date in May (read as "may", a hedge), "renamed to engineering", "desk 4B" (4 bytes), "moved to
    # desk 7A", "ends/expires on", "lasts", "rescheduled for", "promoted to", "took over as"; 18:
    # "costs" the price, "ends" the end, "expires" the expiry, "lasts" the duration, "$20/month" $20,
    # "has 3 nodes" a count, "departs at", "delayed to 11:40am", a CEO a role one person holds; 19:
    # "went up to", 从今天起…, 每天早上9点半, 换了新手机号…, 迁移到,
    # 团队有8个人
    # 20: a migration to a product only, an office's move to a named place (not a plan), a street
    # address its own slot, months and years one unit, "Bob leaves at 5pm" no slot, "took over as" no
    # ownership, "May 3 is the deadline" no claim, "promoted to the London office" no title, 把…
    # 21: "the new CEO", "Alice changed her phone number to …", "extended/scaled to", "is located in",
    # 调大到, 削减到, 在每天…, "LOG_LEVEL" a setting, 将改成 / …吗 no value
    # 22: a rate's period part of the slot ("$20 per month", "$200 per year", "$20 per user")
    # 23: "the meeting was extended to 4pm" none, "the new server IP" the new server's, "costs $50
    # online" / "$60 at the door" two prices, "leaves at 9:40 on Sundays" none, 在…吃药 none, "promoted
    # to Level 5" no title, "She changed her …" none
    # 24: "Sarah is taking over as project lead", "the team grew to 12 people", HQ the headquarters
    # 25: "is $X" of a thing its price (any written currency), 涨价到, "extended the trial to 30 days",
    # a flight's time its departure, "lives at" a street address, "meet our new CEO, X", "team"/"daily"
    # standup, interim holders apart, a stand-in's "while … is away" clause none, a price's condition
    # 26: what a place, a plan or a service allows, accepts, supports or requires, yes or no (允许); "is
    # 14 days" how long it lasts
    # 27: a rule's object whole ("requires two approvals for hotfixes"); how many a plan or a place
    # allows, supports or accepts one count ("allows 10 users" / "allows 5 users"); "Dr. Lee" whole (a
    # title's full stop ends no sentence), "lands at" the arrival, "charges $X" the price, "was replaced
    # by X as" the holder, "opens at" the opening, "moved up to" a time, "is off tonight" none
    # 28: an event's place ("is in Denver", "is at Jenna's house", "moved to Austin") one slot, "the new
    # project manager" the role's holder, "comes at" / "is coming on" the arrival, "meets on" when; a
    # subscription's price, a coach/treasurer/landlord a role, 新房东, "is in progress" no place,
    # 每月25元 / 25元/月 / 3000元一个月 a price per month, "is in Room 4" the room, "the Hulu plan" Hulu's
    # price, "standup's at 9:30", 新物业经理
    # 29: "Bob's manager's manager" the skip-level manager; "is on the 3rd floor" the floor; "in Bob's
    # hands", "in H2", "in round 2", "in D minor" no place; "the trip is in May", "the manual is in
    # English" when and in what language, not where
    # 30: "on hold", "in progress", "on holiday hours" a status of their own; "in chaos", "on sale", "on
    # vacation", "lives in fear" no value; "moved to the night shift", "… to Product" no new home;
    # "on the 15th" a day of the month (a when); an event moved to no place named none; "the BBQ" no one;
    # "in public beta", "on hold indefinitely", "in escrow", "in transit", "in stock", "on the market", "on
    # mute" statuses and "on paternity leave" passing; a move to a floor, a desk, an office, a project, a
    # class, a grade or "customer success" no new home, nor "moved to the 3rd"; "is 2nd" no day; "lives in
    # constant fear", "… the moment" no home; the AGM, the QBR events; "Marseille", "Mayfair" no month;
    # "the team moved to kanban", "… to two-week sprints" no place
    version = 30
    tables = ("claims", "denied_values")
    handles = frozenset({"MemoryRecorded", "MemoryUpdated", *_LEAVING, *_BACK, _ALIAS})

    deferrable = frozenset({"MemoryRecorded"})  # a new memory has no claims to read or delete
    _aliases: list[Alias] | None = None  # during a rebuild: the accepted entity aliases so far

    # During a rebuild: (memory_id, workspace, content, subject, explicit) of the new memories
    # since the last flush, derived together (one cache look-up per batch, not per memory).
    _to_derive: list[tuple[int, str, str, str, tuple[tuple[str, str, str], ...]]]

    def __init__(self) -> None:
        self._to_derive = []  # an open ledger whose tables exist never calls create

    def create(self, conn: apsw.Connection) -> None:
        self._pending = None
        self._aliases = None
        self._to_derive = []
        conn.execute(_CLAIMS_SCHEMA)

    def _current_aliases(self, conn: apsw.Connection) -> list[Alias]:
        """The accepted entity aliases (the entity_aliases projection folds an
        ``EntityAliasSet`` before this one does)."""
        if self._pending is None:  # another process may have folded an alias: read it now
            return entity_aliases.accepted(conn)
        if self._aliases is None:  # a rebuild: this projector folds every event, its copy stays current
            self._aliases = entity_aliases.accepted(conn)
        return self._aliases

    def _derive(self, conn: apsw.Connection, content: str, subject: str, explicit: Any) -> tuple[Claim, ...]:
        """The memory's claims keyed through the accepted entity aliases."""
        aliases = self._current_aliases(conn)
        claims = derived.claims(conn, content, subject, explicit)
        return rekey(claims, aliases) if aliases else claims

    def _derive_deferred(self, conn: apsw.Connection) -> None:
        """Turn the new memories kept during a rebuild into pending claim rows. Runs before any
        event that could change the aliases or read the claims (the runner flushes first)."""
        if not self._to_derive or self._pending is None:
            return
        todo, self._to_derive = self._to_derive, []
        aliases = self._current_aliases(conn)
        made = derived.claims_many(conn, [(content, subject, explicit) for _, _, content, subject, explicit in todo])
        for (memory_id, workspace, *_), claims in zip(todo, made, strict=True):
            self._pending.add(
                _INSERT_CLAIM, *_claim_rows(memory_id, workspace, rekey(claims, aliases) if aliases else claims)
            )

    def flush(self, conn: apsw.Connection) -> None:
        self._derive_deferred(conn)
        super().flush(conn)

    def cancel_rebuild(self) -> None:
        self._to_derive = []
        super().cancel_rebuild()

    def _realias(self, conn: apsw.Connection, data: EntityAliasSet) -> None:
        """Derive again the claims of every memory keyed by either name's tokens."""
        self._aliases = None
        names = [tokens(data.alias), tokens(data.canonical)]
        affected: set[int] = set()
        for name in names:
            if not name:
                continue
            probe = min(name)
            for memory_id, key in conn.execute(
                "SELECT memory_id, key_subject FROM claims WHERE ' ' || key_subject || ' ' LIKE ?", (f"% {probe} %",)
            ):
                if name <= set(key.split()):
                    affected.add(memory_id)
        for memory_id in sorted(affected):
            row = conn.execute(
                "SELECT content, subject, workspace, status FROM memories WHERE memory_id=?", (memory_id,)
            ).fetchone()
            explicit = tuple(
                conn.execute(
                    "SELECT subject, attribute, value FROM claims WHERE memory_id=? AND origin='explicit' ORDER BY ord",
                    (memory_id,),
                )
            )
            conn.execute("DELETE FROM claims WHERE memory_id=?", (memory_id,))
            if row is not None and row[3] == "active":
                insert_rows(
                    conn, _CLAIM_HEAD, _claim_rows(memory_id, row[2], self._derive(conn, row[0], row[1], explicit))
                )

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS claims; DROP TABLE IF EXISTS denied_values")

    @staticmethod
    def _denials(conn: apsw.Connection, event: StoredEvent, data: Event, memory_id: int) -> None:
        """A denial that ends a memory keeps its values as denied from its event time on; a denial
        retracted or erased no longer denies anything, and an ended memory brought back (an
        undo) holds its values again."""
        if isinstance(data, MemoryRetired):
            if data.reason == ENDED and data.by:
                conn.execute(_DENY, (event.event_time, memory_id_of(conn, data.by), memory_id))
            conn.execute("DELETE FROM denied_values WHERE denial_id=?", (memory_id,))
        elif isinstance(data, Erased):
            conn.execute("DELETE FROM denied_values WHERE denial_id=? OR ended_id=?", (memory_id, memory_id))
        elif isinstance(data, Reinstated):  # the ending undone: its denial denies nothing any more
            conn.execute(
                "DELETE FROM denied_values WHERE denial_id IN "
                "(SELECT denial_id FROM denied_values WHERE ended_id=? AND denial_id<>?)",
                (memory_id, memory_id),
            )

    def _own_denials(self, conn: apsw.Connection, when: str, row: dict[str, Any]) -> None:
        """A denial denies its values from its event time (``when``) on, also when it arrives first
        and ends no memory: a value stated as of an earlier time that arrives after it is ended on
        arrival."""
        ended = ended_claims(row["content"], row["subject"])
        if not ended:
            return
        aliases = self._current_aliases(conn)
        memory_id, workspace = row["memory_id"], row["workspace"]
        insert_rows(
            conn,
            _DENIED_HEAD,
            [
                (
                    c.key_subject,
                    c.key_attribute,
                    c.kind,
                    workspace,
                    c.value_norm,
                    when,
                    memory_id,
                    memory_id,
                )
                for c in (rekey(ended, aliases) if aliases else ended)
            ],
        )

    def _denials_after_update(self, conn: apsw.Connection, row: dict[str, Any]) -> None:
        """An edited denial denies what its text says now, from its event time now ("Alice is no
        longer the owner" edited to name Bob denied Alice still)."""
        memory_id = row["memory_id"]
        conn.execute("DELETE FROM denied_values WHERE denial_id=? AND ended_id=?", (memory_id, memory_id))
        if row["status"] == "active":
            when = conn.execute("SELECT event_time FROM memories WHERE memory_id=?", (memory_id,)).fetchone()
            if when is not None:
                self._own_denials(conn, when[0], row)

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if isinstance(data, EntityAliasSet):
            self.flush(conn)
            self._realias(conn, data)
            return
        row = _memory_row(conn, event, data)
        if row is None:
            return
        memory_id = row["memory_id"]
        if isinstance(data, MemoryRecorded):
            self._own_denials(conn, event.event_time, row)
            explicit = tuple((c.subject, c.attribute, c.value) for c in data.claims)
            if self._pending is not None:
                self._to_derive.append((memory_id, row["workspace"], row["content"], row["subject"], explicit))
                if len(self._to_derive) >= _DERIVE_BATCH:
                    self._derive_deferred(conn)
                return
            rows = _claim_rows(
                memory_id, row["workspace"], self._derive(conn, row["content"], row["subject"], explicit)
            )
            insert_rows(conn, _CLAIM_HEAD, rows)
            return
        if isinstance(data, MemoryUpdated):
            self._denials_after_update(conn, row)
            if data.content is None and data.subject is None:
                return
            explicit = tuple(
                conn.execute(
                    "SELECT subject, attribute, value FROM claims WHERE memory_id=? AND origin='explicit' ORDER BY ord",
                    (memory_id,),
                )
            )
        else:
            explicit = ()
            self._denials(conn, event, data, memory_id)
        conn.execute("DELETE FROM claims WHERE memory_id=?", (memory_id,))
        if row["status"] != "active":
            return
        claims = self._derive(conn, row["content"], row["subject"], explicit)
        insert_rows(conn, _CLAIM_HEAD, _claim_rows(memory_id, row["workspace"], claims))


def _claim_rows(memory_id: int, workspace: str, claims: tuple[Claim, ...]) -> list[tuple[Any, ...]]:
    return [
        (
            memory_id,
            i,
            workspace,
            c.subject,
            c.attribute,
            c.value,
            c.kind,
            c.key_subject,
            c.key_attribute,
            c.value_norm,
            c.origin,
        )
        for i, c in enumerate(claims)
    ]


class NearDuplicatesProjector:
    """``near_dup_sigs`` + ``near_dup_bands``: MinHash signatures and their LSH band keys."""

    name = "near_duplicates"
    version = 2
    tables = ("near_dup_sigs", "near_dup_bands")
    handles = frozenset({"MemoryRecorded", "MemoryUpdated", *_LEAVING, *_BACK})

    deferrable = frozenset({"MemoryRecorded"})  # folded into ``_bulk`` during a rebuild

    def __init__(self) -> None:
        # During a rebuild: memory_id -> (content, workspace) of each active memory, fingerprinted
        # and written once at the end (the cached values read in batches). Band keys are random,
        # so 16 inserts per memory at random places of the band b-tree cost more than the
        # signatures; inserted in key order they are an append. The rows are the same set the
        # incremental path leaves behind.
        self._bulk: dict[int, tuple[str, str]] | None = None

    def create(self, conn: apsw.Connection) -> None:
        self._bulk = None
        conn.execute(_NEAR_SCHEMA)

    def drop(self, conn: apsw.Connection) -> None:
        conn.execute("DROP TABLE IF EXISTS near_dup_sigs; DROP TABLE IF EXISTS near_dup_bands")

    def cancel_rebuild(self) -> None:
        self._bulk = None

    def begin_rebuild(self, conn: apsw.Connection) -> None:
        self._bulk = {}

    def end_rebuild(self, conn: apsw.Connection) -> None:
        texts, self._bulk = sorted((self._bulk or {}).items()), None
        made = derived.fingerprints_many(conn, [text for _, text in texts])
        bulk = {m: (ws, packed, keys) for (m, (_, ws)), (packed, keys) in zip(texts, made, strict=True)}
        conn.executemany(
            "INSERT INTO near_dup_sigs(memory_id, workspace, sig) VALUES(?,?,?)",
            [(m, ws, packed) for m, (ws, packed, _) in bulk.items()],
        )
        # SQLite explodes and sorts the 16 keys per memory in C: at 100k memories that is 2 s
        # instead of 7 s for a sort of 1.6M Python tuples and their executemany.
        conn.execute("CREATE TEMP TABLE near_dup_load(memory_id INTEGER NOT NULL, keys TEXT NOT NULL)")
        conn.executemany(
            "INSERT INTO temp.near_dup_load(memory_id, keys) VALUES(?, ?)",
            [(m, f"[{','.join(map(str, keys))}]") for m, (_, _, keys) in bulk.items()],
        )
        conn.execute(
            "INSERT OR IGNORE INTO near_dup_bands(band_key, memory_id) SELECT j.value, l.memory_id "
            "FROM temp.near_dup_load AS l, json_each(l.keys) AS j ORDER BY 1, 2 DESC"
        )
        conn.execute("DROP TABLE temp.near_dup_load")

    def apply(self, conn: apsw.Connection, event: StoredEvent, data: Event) -> None:
        if isinstance(data, MemoryUpdated) and data.content is None:
            return
        row = _memory_row(conn, event, data)
        if row is None:
            return
        memory_id = row["memory_id"]
        if self._bulk is not None:
            self._bulk.pop(memory_id, None)
            if row["status"] == "active":
                self._bulk[memory_id] = (row["content"], row["workspace"])
            return
        old = (
            None
            if isinstance(data, MemoryRecorded)
            else conn.execute("SELECT workspace, sig FROM near_dup_sigs WHERE memory_id=?", (memory_id,)).fetchone()
        )
        if old is not None:
            keys = fingerprint.band_keys(fingerprint.unpack(old[1]), old[0])
            conn.execute(
                f"DELETE FROM near_dup_bands WHERE memory_id=? AND band_key IN ({marks(len(keys))})", (memory_id, *keys)
            )
            conn.execute("DELETE FROM near_dup_sigs WHERE memory_id=?", (memory_id,))
        if row["status"] != "active":
            return
        packed, keys = derived.fingerprints(conn, row["content"], row["workspace"])
        conn.execute(
            "INSERT INTO near_dup_sigs(memory_id, workspace, sig) VALUES(?,?,?)", (memory_id, row["workspace"], packed)
        )
        insert_rows(conn, "INSERT OR IGNORE INTO near_dup_bands(band_key, memory_id)", [(k, memory_id) for k in keys])


# -- lookups used inside the write transaction ---------------------------------------------------
def _claim(row: tuple[Any, ...]) -> Claim:
    subject, attribute, value, kind, key_subject, key_attribute, value_norm, origin = row
    return Claim(
        subject=subject,
        attribute=attribute,
        value=value,
        kind=kind,
        key_subject=key_subject,
        key_attribute=key_attribute,
        value_norm=value_norm,
        origin=origin,
    )


def claims_of(conn: apsw.Connection, memory_id: int) -> list[Claim]:
    return [
        _claim(r)
        for r in conn.execute(f"SELECT {_CLAIM_COLUMNS} FROM claims WHERE memory_id=? ORDER BY ord", (memory_id,))
    ]


def slot_keys(conn: apsw.Connection, memory_ids: list[int]) -> dict[int, list[str]]:
    """Each memory's claim keys as ``workspace␟subject␟attribute`` (its value's kind left out:
    one slot whatever its values' types), for those of ``memory_ids`` with current claims."""
    out: dict[int, list[str]] = {}
    rows = conn.execute(
        "SELECT DISTINCT c.memory_id, c.workspace, c.key_subject, c.key_attribute FROM json_each(?) j "
        "CROSS JOIN claims c ON c.memory_id = j.value ORDER BY c.memory_id, c.key_subject, c.key_attribute",
        (json.dumps(memory_ids),),
    )
    for memory_id, workspace, subject, attribute in rows:
        out.setdefault(memory_id, []).append(f"{workspace}\x1f{subject}\x1f{attribute}")
    return out


def matching_claims(
    conn: apsw.Connection, claims: tuple[Claim, ...] | list[Claim], workspace: str, exclude: int | None = None
) -> list[tuple[int, Claim]]:
    """Current claims of other memories with one of ``claims``' keys and a different stored value."""
    out: list[tuple[int, Claim]] = []
    for claim in claims:
        rows = conn.execute(
            f"SELECT memory_id, {_CLAIM_COLUMNS} FROM claims WHERE key_subject=? AND key_attribute=? AND kind=? "
            "AND workspace=? AND value_norm<>? AND memory_id<>? ORDER BY memory_id DESC LIMIT ?",
            (
                claim.key_subject,
                claim.key_attribute,
                claim.kind,
                workspace,
                claim.value_norm,
                exclude or 0,
                CANDIDATES_PER_KEY,
            ),
        )
        out.extend((r[0], _claim(r[1:])) for r in rows)
    return out


def disputing_others(conn: apsw.Connection, streams: list[str]) -> list[int]:
    """Of the memories of ``streams``, those with a current claim whose key a memory not among
    them holds with another value, in any workspace (oldest first): what an import's memories
    may dispute with the memories held before it (:mod:`ledger.imported` decides which they do).
    One statement, whatever the number of streams."""
    return [
        memory_id
        for (memory_id,) in conn.execute(
            "WITH came(memory_id) AS (SELECT m.memory_id FROM json_each(?) j JOIN memories m ON m.stream_id = j.value) "
            "SELECT DISTINCT c.memory_id FROM claims c JOIN came ON came.memory_id = c.memory_id WHERE EXISTS ("
            "SELECT 1 FROM claims o WHERE o.key_subject = c.key_subject AND o.key_attribute = c.key_attribute "
            "AND o.kind = c.kind AND o.value_norm <> c.value_norm AND o.memory_id NOT IN came) ORDER BY c.memory_id",
            (json.dumps(streams),),
        )
    ]


def holding_value(conn: apsw.Connection, claim: Claim, workspace: str, limit: int = 8) -> list[int]:
    """Memories (oldest first) with a claim of ``claim``'s key and its normalised value: those a
    restatement of it may confirm (:mod:`ledger.restatement`). A seek in ``claims_value``: what
    it costs does not grow with the key's history."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT memory_id FROM claims WHERE key_subject=? AND key_attribute=? AND kind=? AND workspace=? "
            "AND value_norm=? ORDER BY memory_id LIMIT ?",
            (claim.key_subject, claim.key_attribute, claim.kind, workspace, claim.value_norm, limit),
        )
    ]


def values_and_members(
    conn: apsw.Connection, claim: Claim, set_key: str, workspace: str, scope: tuple[str, ...]
) -> list[tuple[int, int, str, str | None]]:
    """``(memory_id, ord, value_norm, member value_norm or None)`` of the claims ``matching_claims``
    would return for ``claim``: whether each memory is a current member of the unresolved set
    filed under ``set_key`` in ``scope`` is read with it.

    The key index covers the value, so this walks index entries only (and one primary-key probe
    of the set's members per row): a write to a claim with a long history reads whole claims
    only for the few it needs (:func:`claims_at`)."""
    return conn.execute(
        "SELECT c.memory_id, c.ord, c.value_norm, cm.value_norm FROM claims c LEFT JOIN conflict_members cm "
        "ON cm.memory_id=c.memory_id AND +cm.active=1 AND cm.conflict_id=(SELECT conflict_id FROM conflicts "
        f"WHERE key=? AND workspace IN ({marks(len(scope))}) AND state<>'resolved' ORDER BY conflict_id LIMIT 1) "
        "WHERE c.key_subject=? AND c.key_attribute=? AND c.kind=? AND c.workspace=? AND c.value_norm<>? "
        "ORDER BY c.memory_id DESC LIMIT ?",
        (
            set_key,
            *scope,
            claim.key_subject,
            claim.key_attribute,
            claim.kind,
            workspace,
            claim.value_norm,
            CANDIDATES_PER_KEY,
        ),
    ).fetchall()


def claims_at(conn: apsw.Connection, places: list[tuple[int, int]]) -> dict[tuple[int, int], Claim]:
    """The claims stored at ``(memory_id, ord)``."""
    if not places:
        return {}
    rows = conn.execute(
        f"SELECT memory_id, ord, {_CLAIM_COLUMNS} FROM claims WHERE (memory_id, ord) IN "
        f"(VALUES {', '.join(['(?, ?)'] * len(places))})",
        [v for place in places for v in place],
    )
    return {(r[0], r[1]): _claim(r[2:]) for r in rows}


def near_duplicates(
    conn: apsw.Connection,
    content: str,
    workspace: str,
    *,
    exclude: int | None = None,
    limit: int = 5,
    threshold: float = fingerprint.NEAR_THRESHOLD,
) -> list[dict[str, Any]]:
    """Current memories of the workspace whose estimated similarity reaches ``threshold``."""
    sig = fingerprint.signature(content)
    packed = fingerprint.pack(sig)
    keys = fingerprint.band_keys(sig, workspace)
    # The primary key stores each band's postings newest first, so a bare LIMIT takes the newest;
    # an ORDER BY here makes SQLite run a sorter per band (measured 6x slower at 100k memories).
    # The memories sharing the most bands (newest first among equals) are verified against their
    # signatures, read in the same statement.
    one = f"SELECT memory_id FROM (SELECT memory_id FROM near_dup_bands WHERE band_key=? LIMIT {BAND_POSTINGS})"
    found = []
    for memory_id, blob in conn.execute(
        f"WITH b(memory_id) AS ({' UNION ALL '.join([one] * len(keys))}), "
        "r(memory_id, n) AS (SELECT memory_id, count(*) FROM b WHERE memory_id IS NOT ? GROUP BY memory_id "
        f"ORDER BY 2 DESC, 1 DESC LIMIT {VERIFIED}) "
        "SELECT r.memory_id, s.sig FROM r JOIN near_dup_sigs s ON s.memory_id = r.memory_id",
        (*keys, exclude),
    ):
        score = fingerprint.packed_similarity(packed, blob)
        if score >= threshold:
            found.append({"memory_id": memory_id, "similarity": round(score, 3)})
    found.sort(key=lambda d: (-d["similarity"], -d["memory_id"]))
    return found[:limit]


def denied_later(
    conn: apsw.Connection, claims: tuple[Claim, ...], workspaces: tuple[str, ...], event_time: str
) -> int | None:
    """The denial that ended one of ``claims``' values in ``workspaces`` after ``event_time``
    (the latest), if any: a memory stating that value as of an earlier time arrived late."""
    if not claims:
        return None
    pairs = json.dumps([[c.key_subject, c.key_attribute, c.kind, c.value_norm] for c in claims])
    row = conn.execute(
        "SELECT d.denial_id FROM json_each(?) j JOIN denied_values d ON d.key_subject=j.value->>0 "
        "AND d.key_attribute=j.value->>1 AND d.kind=j.value->>2 AND d.value_norm=j.value->>3 "
        f"WHERE d.workspace IN ({marks(len(workspaces))}) AND d.event_time > ? ORDER BY d.event_time DESC LIMIT 1",
        (pairs, *workspaces, event_time),
    ).fetchone()
    return None if row is None else int(row[0])


# Whether the memory ``memory_id`` names (a column of the outer query) states more than one fact:
# claims under two keys or more (``ledger.claims.states_several`` for claims in hand)
SEVERAL_FACTS_SQL = (
    "(SELECT count(DISTINCT k.key_subject || char(31) || k.key_attribute || char(31) || k.kind) > 1 "
    "FROM claims k WHERE k.memory_id={memory_id})"
)


def several_facts(conn: apsw.Connection, memory_ids: list[int]) -> set[int]:
    """Those of ``memory_ids`` that state more than one fact."""
    if not memory_ids:
        return set()
    wanted = SEVERAL_FACTS_SQL.format(memory_id="j.value")
    return {
        int(r[0])
        for r in conn.execute(f"SELECT j.value FROM json_each(?) j WHERE {wanted}", (json.dumps(sorted(memory_ids)),))
    }
