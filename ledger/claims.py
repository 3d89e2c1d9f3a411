"""Deterministic claim extraction: ``(subject, attribute, value)`` from English and Chinese text.

A claim is what makes two memories contradict each other, so precision matters more than
recall: a false collision interrupts an agent with a conflict that is not there, a missed one
only leaves the ledger as it was before claims existed. Each clause is matched against
relation patterns ("X returns/is/uses/equals Y", "X: Y", "X = Y", "X 是/为/返回/用/改为/定在 Y",
"X listens on port N", "预算 5万") and kept only when the value is a value — a number with its
unit, a date or time, a version, an on/off word, a name — rather than a description. A clause
with no such relation may still state a taste ("Bob doesn't like jazz", "用户喜欢咖啡"): a
yes/no claim keyed by who and what. Who owns a thing ("Alice owns the billing service",
"billing 服务由张三负责") is a claim about the thing, and a role one person holds ("the on-call
engineer") reads its value as a name: :mod:`ledger.claim_owner`.

Claims compare by key, not by wording: the key subject is the *set* of tokens of the memory's
subject and the phrase before the relation (articles, possessives and 的 dropped, CJK split
into characters, 端口 read as ``port``), the key attribute is the relation (``is``,
``returns``, ``uses``, ``costs``), and the value's kind (number, when, version, bool, text) is
part of the key. So "staging port: 8080", "The port of staging is 8080", "staging listens on
port 8080" and an explicit claim ``{subject: staging, attribute: port, value: 8080}`` share
one key, while "the meeting is on Wednesday" and "the meeting is in room 4" do not collide.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

import msgspec

from fact_ledger.ledger.claim_owner import attribute_words, is_role, owner_of
from fact_ledger.ledger.claim_values import is_named, is_value, name_value, parse_value, strip_left, value_text
from fact_ledger.ledger.claim_words import (
    ADDRESS,
    ALIASES,
    ALLOWED,
    ALLOWS_COUNT,
    AMOUNTS,
    CHANGED_BY,
    CHANGED_OWN,
    CJK_SPLIT,
    CLAUSES,
    DATE_FILLERS,
    DEGREE,
    DEMONSTRATIVES,
    DEPARTURES,
    DISCOURSE,
    DRINK_WORDS,
    EN_VALUE_END,
    EVENTS,
    FIRST_PERSON,
    FROM_OLD_VALUE,
    FROM_VALUE,
    GENERIC_LABELS,
    GROUPS,
    GROUPS_ZH,
    HAS_COUNT,
    HOLDS_ROLE,
    HOLDS_ROLE_ZH,
    HOSTS,
    IN_A_PLACE,
    KIN,
    LANGUAGES,
    LEAD_IN,
    LEADING_ARTICLE,
    LIKE_ZH,
    MAKES_A_CHANGE,
    MANY_HOLDER_ROLES,
    MEET_NEW,
    MIGRATED,
    MOVED,
    MOVED_TO_A_PLACE,
    NEGATED_LEFT,
    NEGATED_VERB,
    NEGATED_ZH,
    NEW_BEFORE_ONE_VALUE,
    NOT_A_CHANGE_MADE,
    NOT_A_HOME,
    NOT_A_PLACE,
    NOT_A_TASTE,
    OBJECT_PRONOUNS,
    ON_CALL_HOLDER,
    ONE_HOLDER_ROLES,
    PASSING_STATES,
    PERSONS,
    PLACES_OF_WORK,
    POSSESSIVE,
    PRICE_FILLERS,
    PROMOTED,
    PRONOUNS,
    PURPOSE,
    QUALIFIER_END,
    QUESTION_START,
    RATE,
    RATE_PERIODS,
    RELATION_SLOTS,
    RELATIONS,
    REPLACED_BY,
    REPLACEMENT_WORD,
    REPORTS_TO,
    REPORTS_TO_ZH,
    RETURNS_TO,
    ROLE_ZH,
    RUNS_VERSION,
    SENTENCES,
    SLOT_FILLERS,
    SPEAKER_LABEL,
    SPEAKER_LINE_WORDS,
    STATUS_ENDINGS,
    STATUSES,
    STATUSES_ON,
    STOP_CHARS,
    STOP_TOKENS,
    STREET_ADDRESS,
    TASTE_TRAILERS,
    TASTE_VERBS,
    TEMPORARY,
    TITLE_WORDS,
    TOKEN_PUNCT,
    TOOK_OVER,
    UNDONE,
    USES,
    UTTERANCE_START,
    VERSION_CHANGED,
    WHILE_AWAY,
    WHO_TRAILERS,
    WORK_MOVE_HEADS,
    WORK_MOVES,
    ZH_HAS_COUNT,
    ZH_NEW_ROLE,
    ZH_NEW_VALUE,
    ZH_NOT_A_HOLDER,
    ZH_RATE_FIRST,
    find_relation,
    hedged,
    match_drink_en,
    match_drink_zh,
    match_implicit,
    match_like_en,
    taste_word,
)
from fact_ledger.ledger.memo import text_cache
from fact_ledger.ledger.normalize import (
    KIND_BOOL,
    KIND_NUMBER,
    KIND_TEXT,
    KIND_VERSION,
    KIND_WHEN,
    leading_value,
    normalize_text,
)
from fact_ledger.ledger.normalize import normalize_value as _normalize_value

MAX_CLAIMS = 20


class Claim(msgspec.Struct, frozen=True, kw_only=True):
    subject: str  # as a person would read it
    attribute: str
    value: str
    kind: str  # number | when | version | bool | text
    key_subject: str  # sorted token set: what two claims must share to be about the same thing
    key_attribute: str
    value_norm: str
    origin: str = "content"  # content | explicit

    @property
    def key(self) -> tuple[str, str, str]:
        return self.key_subject, self.key_attribute, self.kind

    def view(self) -> dict[str, str]:
        return {"subject": self.subject, "attribute": self.attribute, "value": self.value}


def key_tokens(text: str) -> set[str]:
    """The order-free token set of a subject phrase (see the module docstring)."""
    text = normalize_text(text)
    for pattern, replacement in ALIASES:
        text = pattern.sub(replacement, text)
    tokens: set[str] = set()
    for i, part in enumerate(CJK_SPLIT.split(text)):
        if i % 2:
            tokens.update(ch for ch in part if ch not in STOP_CHARS)
        else:
            for word in part.replace("_", " ").split():  # "max_connections" is "max connections"
                word = word.strip(TOKEN_PUNCT)
                if word and word not in STOP_TOKENS:
                    tokens.add(word)
    return tokens


_SPEAKER_FIRST = re.compile(r"^(?:we're|we’re|i'm|i’m|they're|they’re|you're|you’re)\s")
# A note judging another note ("that note is obsolete", "the earlier statement is incorrect",
# "the note about the launch is wrong"): a remark on the ledger's own words, not a fact's value.
# Only a judgment counts: "the statement of work deadline is March 3", "that record is 9.58 s" and
# "this memory is DDR5" state facts.
_NOTE_WORDS = r"(?:note|statement|entry|entries|message|comment|remark|memory|memories|record|info|information|claim)"
_REMARK = re.compile(
    rf"^(?:that|this|those|these|the|my|your)\s+(?:(?:earlier|previous|last|above|old|other|first|former|prior)\s+)?"
    rf"{_NOTE_WORDS}s?(?:\s+(?:about|on|regarding)\s+[^,;:]{{1,60}}?)?\s+(?:is|was|are|were)\s+(?:now\s+|also\s+)?"
    r"(?:obsolete|outdated|out of date|wrong|incorrect|inaccurate|stale|withdrawn|invalid|mistaken|superseded"
    r"|deprecated|false|a mistake|an error|not (?:right|true|correct|valid|accurate))\b"
)
_HIS_OR_HERS = frozenset({"her", "his", "its", "their", "她", "他", "它"})


def _make(
    subject_text: str,
    left: str,
    relation: str,
    value: tuple[str, str, str, str],
    origin: str = "content",
    qualifier: str = "",
) -> Claim | None:
    display, kind, canonical, noun = value
    left = ZH_NEW_ROLE.sub("", NEW_BEFORE_ONE_VALUE.sub("", REPLACEMENT_WORD.sub("", left)))
    rel = "is" if relation in ("colon", "port") else relation
    if noun not in ("", "port", "version") and not ADDRESS.fullmatch(display) and not STREET_ADDRESS.match(display):
        # a preposition qualifies the relation ("is in Berlin", "is on vacation"), not an address
        rel, noun = f"{rel} {noun}", ""
    if qualifier:  # "uses Rust for the CLI" and "uses Python for the backend" are two attributes
        rel = f"{rel} {qualifier}"
    tokens = key_tokens(subject_text) | key_tokens(left)
    if subject_text.strip():  # "her manager" under subject Alice is Alice's manager
        tokens = (tokens - _HIS_OR_HERS) or tokens
    tokens = (tokens - SLOT_FILLERS) or tokens
    if kind == KIND_WHEN:
        tokens = (tokens - DATE_FILLERS) or tokens
    if (slot := RELATION_SLOTS.get(relation)) is not None:
        tokens.add(slot)  # "X costs $20" is X's price, "X ends on Friday" X's end: one slot either way said
        rel = "is" + rel[len(relation) :]
    # "the Spotify subscription costs …", "the Hulu plan costs …" are Spotify's, Hulu's price (a plan or
    # a subscription named by nothing else keeps its word: "the plan costs $20")
    priced = "price" in tokens or (kind == KIND_NUMBER and _MONEY.search(canonical) is not None)
    if priced and tokens - PRICE_FILLERS - {"price"}:
        tokens = tokens - PRICE_FILLERS
    if kind == KIND_TEXT and STREET_ADDRESS.match(display):
        tokens.add("address")  # "the hotel address is 5 Main St" is not "the hotel is the Hilton"
    if relation == "port" or noun == "port":
        tokens.add("port")
    if kind == KIND_VERSION or noun == "version":
        tokens.add("version")
    if not tokens:
        return None
    subject = subject_text.strip() or left
    attribute = {"colon": "is", "port": "port"}.get(relation, relation)
    if subject_text.strip() and left and not key_tokens(left) <= key_tokens(subject_text):
        own = key_tokens(subject_text)  # "the staging api" under subject "staging" reads "api"
        words = LEADING_ARTICLE.sub("", left).split()  # "carol's phone number" under "Carol" reads "phone number"
        kept = [w for w in words if POSSESSIVE.sub("", w.strip(TOKEN_PUNCT)) not in own]
        rest = " ".join(kept)
        prefix = normalize_text(subject_text)
        if len(kept) == len(words) and left.startswith(prefix):  # 项目预算 under subject 项目 reads 预算
            rest = left[len(prefix) :].strip()
        rest, narrower = attribute_words(rest or left)
        if narrower:  # "budget for q3" under subject "project": the budget of project (q3)
            subject = f"{subject} ({narrower})"
        if rest:
            attribute = rest if rel == "is" and relation != "port" else f"{rest} {attribute}"
    if qualifier:
        attribute = f"{attribute} {qualifier}"
    return Claim(
        subject=subject,
        attribute=attribute,
        value=display,
        kind=kind,
        key_subject=" ".join(sorted(tokens)),
        key_attribute=rel,
        value_norm=canonical,
        origin=origin,
    )


def _ownership_claim(clause: str) -> Claim | None:
    """(thing, ``owner``, owner) when the clause says who owns a thing (:mod:`ledger.claim_owner`)."""
    found = owner_of(clause, unicodedata.normalize("NFKC", clause).strip())
    if found is None:
        return None
    thing, owner = found
    tokens = (key_tokens(thing) - SLOT_FILLERS) or key_tokens(thing)
    if not tokens:
        return None
    return Claim(
        subject=thing,
        attribute="owner",
        value=owner,
        kind=KIND_TEXT,
        key_subject=" ".join(sorted(tokens | {"owner"})),
        key_attribute="is",
        value_norm=name_value(owner),
    )


def _reports_to_claim(clause: str, subject: str) -> Claim | None:
    """ "X reports to Y" is the slot of "X's manager is Y": "Bob's manager is Carol" and later
    "Bob now reports to Dan" form one set. Not a hedge, a negation ("no longer reports to") or a
    question."""
    text = unicodedata.normalize("NFKC", clause).strip()
    chinese = REPORTS_TO_ZH.match(text)
    if chinese is not None:
        if NEGATED_ZH.search(chinese["x"]) or hedged(text):
            return None
        return _clause_claim(f"{chinese['x']}的经理是{chinese['y']}", subject)
    match = REPORTS_TO.match(text)
    folded = text.lower()
    if match is None or hedged(folded) or QUESTION_START.match(folded):
        return None
    if NEGATED_LEFT.search(match["x"].lower()) or _A_REPORT.search(match["x"]):
        return None  # "send the report to Alice", "Bob's report to Dana": a document, nobody's manager
    words = match["x"].lower().split()
    if words[-1] in _NOT_YET:
        return None  # "I will report to Dana", "I have to report to …": not (yet) so
    if words[-1] in PERSONS:  # "(Since the reorg) I report to Dana": the memory's subject's, if it names one
        if not subject.strip():
            return None
        return _clause_claim(f"{subject}'s manager is {match['y']}", subject)
    return _clause_claim(f"{match['x']}'s manager is {match['y']}", subject)


# "report" as a noun before "to": after a determiner or a kind of report ("the report", "this
# weekly report"), or the object of a verb that sends one ("send …", "email …", "forward …")
_NOT_YET = frozenset("will would should might may could must can shall to".split())
_A_REPORT = re.compile(
    r"(?:['’]s$)|(?:\b(?:the|a|an|this|that|these|those|my|our|your|his|her|their|its|weekly|daily|monthly|quarterly"
    r"|annual|yearly|final|status|expense|incident|bug|sales|full)$)"
    r"|^(?:please\s+)?(?:send|email|e-mail|mail|forward|submit|give|hand|deliver|share|post|upload|attach|file"
    r"|bring|pass|show|present|sent|emailed|forwarded|submitted|gave|handed|delivered|shared)\b",
    re.IGNORECASE,
)


def _changed_by_claim(clause: str, subject: str) -> Claim | None:
    """ "We moved the standup to 11am" is the slot of "the standup is at 10am", as "the standup was
    moved to 11am" is: said in the active voice the change had no subject the slot could be.
    "Alice changed her phone number to …" is Alice's phone number."""
    text = unicodedata.normalize("NFKC", clause).strip()
    if _SAYS_TO.search(text) is None:  # most clauses: one scan instead of two patterns
        return None
    own = CHANGED_OWN.match(text)
    if own is not None and own["who"].lower() not in PRONOUNS and not hedged(text.lower()):
        verb = "moved" if own["verb"] == "relocated" else own["verb"]
        return _clause_claim(f"{own['who']}'s {own['x']} was {verb} to {own['y']}", subject)
    match = CHANGED_BY.match(text)
    folded = text.lower()
    if match is None or hedged(folded) or QUESTION_START.match(folded):
        return None
    # "from 10am" says what it was: "we moved the standup from 10am to 11am" moved the standup
    thing, verb, value = FROM_VALUE.sub("", match["x"]), match["verb"].lower(), match["y"]
    if verb == "set" and _PARTICLE.match(thing):
        return None  # "we set up the server to run nightly", "we set out to …": no value set
    if verb in ("moved", "changed", "switched") and _BARE_PLURAL.fullmatch(thing):
        thing = thing[:-1]  # "we moved offices to 40 Elm Street": the office moved
    folded_thing = normalize_text(thing)
    if not folded_thing or folded_thing in PRONOUNS or folded_thing in PERSONS or folded_thing in OBJECT_PRONOUNS:
        return None  # "we switched from MySQL to …", "we moved it to …": no slot of a thing
    if verb in ("moved", "changed", "switched") and is_named(folded_thing, text):
        return None  # "we moved Bob to the platform team": a person, not a value of a thing
    if folded_thing.startswith(("my mind", "mind")) or PURPOSE.match(value):
        return None  # "I changed my mind", "… the config to use TLS": a purpose, not a value
    claim = _clause_claim(f"{thing} was {verb} to {value}", subject)
    if claim is not None and verb in ("reverted", "rolled", "pushed") and claim.kind == KIND_TEXT:
        return None  # "we reverted the change to the login page", "we pushed the fix to prod": where, not a value
    return claim


def _count_claim(clause: str, subject: str) -> Claim | None:
    """ "The cluster has 3 nodes", "the team grew to 10 engineers", "we scaled the cluster to 5
    nodes": the count of one thing, a slot of its own (it stated no claim, so a new count formed no
    set with the old one); "the plan allows 10 users": how many it allows, the slot "the plan's
    allowed users count"."""
    text = unicodedata.normalize("NFKC", clause).strip()
    if _A_DIGIT.search(text) is None:  # most clauses: no count, no pattern run
        return None
    match = next((m for pattern in HAS_COUNT if (m := pattern.match(text)) is not None), None)
    match = match or ALLOWS_COUNT.match(text)  # "the plan allows 10 users": how many it lets in
    if match is None or hedged(text.lower()) or QUESTION_START.match(text.lower()):
        return None
    thing = normalize_text(match["x"])
    if not thing or thing in PRONOUNS or thing in PERSONS or NEGATED_LEFT.search(thing) or NEGATED_VERB.search(thing):
        return None  # "we have 3 nodes": the speaker's, of no named thing; "… no longer has …"
    counted = match["noun"] if "verb" not in match.groupdict() else f"{ALLOWED[match['verb'].lower()]} {match['noun']}"
    return _clause_claim(f"{match['x']}'s {counted} count is {match['n']}", subject)


def _zh_claim(clause: str, subject: str) -> Claim | None:
    """ "张三换了新手机号139…" is 张三's phone number ("张三的手机号是…"), "团队有8个人" the team's
    size ("团队扩大到12个人"): said without 是 they stated no claim."""
    text = unicodedata.normalize("NFKC", clause).strip()
    if not ("新" in text or "有" in text or "到" in text or "至" in text):  # most clauses: no pattern run
        return None
    if hedged(text) or NEGATED_ZH.search(text):
        return None
    new = ZH_NEW_VALUE.match(text) if "新" in text else None
    if new is not None and new["x"] not in PRONOUNS:
        return _clause_claim(f"{new['x']}的{new['y']}是{new['v']}", subject)
    has = ZH_HAS_COUNT.match(text) if "有" in text or "到" in text or "至" in text else None
    if has is not None and has["x"] not in PRONOUNS and has["x"] not in PERSONS:
        return _clause_claim(f"{has['x']}的{has['noun'] or has['unit']}数是{has['n']}{has['unit']}", subject)
    return None


def _migrated_claim(clause: str, subject: str) -> Claim | None:
    """ "We migrated the billing service to Postgres 16" is what the billing service uses now: the
    slot of "the billing service uses Postgres 14" (it stated no claim, so both stayed current)."""
    text = unicodedata.normalize("NFKC", clause).strip()
    folded = text.lower()
    if "migrated" not in folded:  # most clauses: one scan instead of two patterns
        return None
    match = next((m for pattern in MIGRATED if (m := pattern.match(text)) is not None), None)
    if match is None or hedged(folded) or QUESTION_START.match(folded) or NOT_A_CHANGE_MADE.search(folded):
        return None
    thing = FROM_VALUE.sub("", match["x"]).strip()
    if _NOT_MIGRATED_YET.search(thing):
        return None  # "… will be migrated", "… is being migrated", "… has not been migrated": no value yet
    folded_thing = normalize_text(thing)
    if not folded_thing or folded_thing in PRONOUNS or folded_thing in PERSONS or folded_thing in OBJECT_PRONOUNS:
        return None  # "we migrated to …" (a name's version, read above), "we migrated it to …"
    if not _PRODUCT.match(match["y"]):
        return None  # "… to the new team", "… to next quarter", "… to us-east-1": no product it runs on
    return _clause_claim(f"{thing} now uses {match['y']}", subject)


# What a thing runs on, named: "Postgres 16", "Kubernetes", "PostgreSQL" (capitalised, one or two words
# and a version): not "the new team", "next quarter", "us-east-1"
_PRODUCT = re.compile(r"[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)?(?:\s+v?\d+(?:\.\d+)*)?\s*[.!]?$")


_NOT_MIGRATED_YET = re.compile(
    r"(?:\b(?:will|would|shall|should|must|can|could|may|might|to|be|being|not|never|yet)|n['’]t)$", re.IGNORECASE
)


_A_DIGIT = re.compile(r"\d")
_MONEY = re.compile(r"\d (?:usd|eur|gbp|jpy|cny|rmb|chf|cad|aud)$")
# "Standup's at 9:30 now", "the game's on Sunday": "is" contracted before a time
_CONTRACTED_IS = re.compile(
    r"(?<=\w)['’]s(?=\s+(?:now\s+)?(?:at|on)\s+(?:\d|noon|midnight|mon|tue|wed|thu|fri|sat|sun|tomorrow|today))",
    re.IGNORECASE,
)
_SAYS_IN_A_PLACE = re.compile(r"\s(?:in|at|on)\s+(?:desk|room|floor|suite|gate|platform|track|bay)\s", re.IGNORECASE)
_MAY_BE_A_DATE = re.compile(r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|mon|tue|wed|thu|fri|sat|sun)")
_SAYS_TO = re.compile(r"\sto\s", re.IGNORECASE)
_PARTICLE = re.compile(r"(?:up|out|off|aside|about|forth|in|on|down|back|apart)\b", re.IGNORECASE)
_BARE_PLURAL = re.compile(r"[a-z]+[^\Wsu]s", re.IGNORECASE)  # "offices", "banks": one word, no article


# What the patterns of FROM_OLD_VALUE and VERSION_CHANGED cannot match without (a prefilter)
_SAYS_FROM = re.compile(r"\sfrom\s|从", re.IGNORECASE)
_SAYS_UPGRADE = re.compile(r"grade|rolled|revert|migrat|升级|降级", re.IGNORECASE)


def _without_old_value(clause: str) -> str:
    """ "X moved from A to B" as "X moved to B" (and "X从A改成了B" as "X改成了B"): what it was is
    no part of what it is now."""
    english, english_after, chinese = FROM_OLD_VALUE
    text = clause.strip()
    if _SAYS_FROM.search(text) is None:  # most clauses: one scan instead of three patterns
        return clause
    if NOT_A_CHANGE_MADE.search(text):
        return clause  # undone, still to come, temporary or asked: read as it is (no new value)
    if (match := english.match(text) or english_after.match(text)) is not None:
        return f"{match['x']} {match['verb']} to {match['y']}"
    if (match := chinese.match(text)) is not None:
        return f"{match['x']}{match['verb']}{match['y']}"
    return clause


def _version_claim(clause: str, subject: str) -> Claim | None:
    """ "We upgraded Postgres to 17" is the slot of "our Postgres version is 16": read as a change
    of the thing itself ("Postgres was upgraded to 17") the version formed no set with it."""
    text = unicodedata.normalize("NFKC", clause).strip()
    if _SAYS_UPGRADE.search(text) is None:  # most clauses: one scan instead of four patterns
        return None
    folded = text.lower()
    if hedged(folded) or QUESTION_START.match(folded):
        return None
    match = next((m for pattern in VERSION_CHANGED if (m := pattern.match(text)) is not None), None)
    if match is None:
        return None
    thing = match["x"].strip()
    if re.search(r"\b(?:to|and)\b|[,，和及]", thing):
        return None  # "we upgraded Postgres to 17 and Redis to 7": two things, no one slot
    folded_thing = normalize_text(thing)
    if not folded_thing or folded_thing in PRONOUNS or folded_thing in PERSONS or folded_thing in OBJECT_PRONOUNS:
        return None  # "we upgraded it to 17": no slot of a thing
    if NEGATED_ZH.search(thing) or re.search(r"\b(?:not|never)\b|n't", folded):
        return None
    version = "" if re.search(r"(?:version|版本)$", folded_thing) else " version"
    return _clause_claim(f"{thing}{version} is {match['y']}", subject)


def _runs_version_claim(clause: str, subject: str) -> Claim | None:
    """ "We're on Postgres 16" is the slot of "our Postgres version is 16": said of the speaker,
    it had no slot (and "we're no longer on Postgres 16" ended nothing)."""
    match = RUNS_VERSION.match(unicodedata.normalize("NFKC", clause).strip())
    if match is None:
        return None
    return _clause_claim(f"{match['x']} version is {match['y']}", subject)


def _role_holder_claim(clause: str, subject: str) -> Claim | None:
    """ "Erin is the team lead" is the slot of "the team lead is Erin", "Dan is Bob's new manager"
    of "Bob's manager is Dan", "李四是张三的经理" of "张三的经理是李四": said the other way round
    the person was the subject and the role its value, so the two formed no set. Only a role one
    person holds at a time (``ROLE_WORDS``), held by a named person."""
    text = unicodedata.normalize("NFKC", clause).strip()
    folded = text.lower()
    if hedged(folded) or QUESTION_START.match(folded):
        return None
    meet = MEET_NEW.match(text) if " new " in folded else None
    if meet is not None:  # "Meet our new CEO, Evan": our CEO is Evan
        role = meet["role"].lower()
        if role.split()[-1] not in ONE_HOLDER_ROLES and not role.startswith("head of "):
            return None  # "meet our new engineer, Bob": one of many
        if role in MANY_HOLDER_ROLES or role.endswith(" manager"):
            return None  # "welcome our new manager, Bob", "… account manager, Priya": one of several
        return _clause_claim(f"our {role} is {meet['x']}", subject)
    promoted = PROMOTED.match(text) if "promoted" in folded else None
    if promoted is not None and TITLE_WORDS.search(promoted["y"]):
        return _clause_claim(f"{promoted['x']}'s title is {promoted['y']}", subject)
    on_call = ON_CALL_HOLDER.match(text) if "call" in folded else None
    took_over = (TOOK_OVER.match(text) or REPLACED_BY.match(text)) if " as " in folded else None
    if on_call is not None:
        text = f"{on_call['x']} is the on-call{on_call['rest']}"
    elif took_over is not None and not TEMPORARY.search(text):
        text = f"{took_over['x']} is the {took_over['role']}{took_over['rest'] or ''}"
    match = HOLDS_ROLE.match(text)
    if match is not None:
        rest = match["rest"] or ""
        who = normalize_text(match["x"])
        if who in PRONOUNS or who in PERSONS or who in DEMONSTRATIVES:
            return None
        if not is_role(match["role"], "") or not is_named(who, text):
            return None
        whose = f"{match['whose']}'s" if match["whose"] else match["mine"] or "the"
        role = f"{whose} {match['role']}"
        return _clause_claim(f"{role}{rest} is {match['x']}", subject)
    chinese = HOLDS_ROLE_ZH.match(text)
    if chinese is None or NEGATED_ZH.search(chinese["x"]) or chinese["x"] in PRONOUNS or chinese["x"] in PERSONS:
        return None
    role, who = chinese["role"], chinese["x"]
    # only a role of someone or something ("张三的经理", "这周的值班工程师"): "王五是工程师",
    # "王五是后端工程师" say what he is, and "陈经理" is a name with its title; a time or an
    # adverb in the name ("李四以前是…", "李四还是…") is no holder now
    if "的" not in role or not role.endswith(ROLE_ZH) or ZH_NOT_A_HOLDER.search(who):
        return None
    if who.endswith(ROLE_ZH) and not _titled_name(who):
        return None  # "客户联系人是陈经理": the role already stands first
    return _clause_claim(f"{role}是{who}", subject)


def _titled_name(text: str) -> bool:
    """A surname and a title ("陈经理", "王工程师"), not a role: one character before the role word."""
    held = next((r for r in ROLE_ZH if text.endswith(r)), None)
    return held is not None and "的" not in text and len(text) - len(held) == 1


def _without_speaker_label(content: str) -> str:
    """A chat line ("Melanie: Bye, Caroline! Have fun.") is read as what the speaker said."""
    match = SPEAKER_LABEL.match(content)
    if match is None or not _is_utterance(match["said"].lower()):
        return content
    return match["said"]


def _is_utterance(after_colon: str) -> bool:
    """A speaker's words rather than a label's value: a long clause, or a pronoun/interjection first."""
    words = after_colon.split()
    return len(words) > SPEAKER_LINE_WORDS or (bool(words) and words[0].strip(",.!?") in UTTERANCE_START)


def _clause_claim(clause: str, subject: str) -> Claim | None:
    place = MOVED_TO_A_PLACE.match(clause.strip()) if "moved" in clause.lower() else None  # a scan, then the pattern
    if place is None and _SAYS_IN_A_PLACE.search(clause):
        place = IN_A_PLACE.match(clause.strip())
    if place is not None and "'" not in place["x"]:
        clause = f"{place['x']}'s {place['noun']} is {place['y']}"  # "Jenny moved to desk 7A": Jenny's desk
    elif (floor := _ON_A_FLOOR.match(clause.strip())) is not None and "'" not in floor["x"]:
        clause = f"{floor['x']}'s floor is {floor['y']}"  # "the office is on the 3rd floor": not on Main Street
    if "s " in clause and _CONTRACTED_IS.search(clause):
        clause = _CONTRACTED_IS.sub(" is", clause)
    text = normalize_text(clause)
    cased = unicodedata.normalize("NFKC", clause)
    if not text or hedged(text) or _REMARK.match(text):
        return None  # … or "that note is obsolete": said of a note (a retraction's words), of no fact
    best: tuple[int, int, str, frozenset[str] | None] | None = None
    match = find_relation(text)
    if match is not None and match.lastgroup is not None:
        _, relation, kinds = RELATIONS[int(match.lastgroup[1:])]
        best = (match.start(), match.end(), relation, kinds)
    if best is None:
        implicit = match_implicit(text)
        if implicit is None:
            return None
        best = (implicit.start("value"), implicit.start("value"), "implicit", frozenset({"number", "when", "version"}))
        left_raw = implicit["left"]
    else:
        left_raw = text[: best[0]]
    _, end, relation, kinds = best
    if ZH_NOT_YET.search(left_raw) or ZH_ASKED.search(text):
        return None  # "端口将改成9090" (still to come), "端口是9090吗" (asked): no value it holds
    if NEGATED_LEFT.search(left_raw) or QUESTION_START.match(text) or NEGATED_VERB.search(left_raw):
        return None  # "… doesn't listen on port 9090": a denial states no value (ledger.negation)
    left = strip_left(left_raw)
    if " while " in text and WHILE_AWAY.search(text):
        # "Alice is the lead while Bob is on leave", "the release manager is Bob while Alice is away":
        # a stand-in's time, no holder of the role (and Bob's absence no slot)
        return None
    if _SPEAKER_FIRST.match(left):
        return None  # "we're on version 2 of the payments API": of the speaker, no slot (RUNS_VERSION names one)
    if not left and relation != "colon" and left_raw.strip(TOKEN_PUNCT + " "):
        return None  # only a filler or a time stood there: "今天是星期五", "today is Friday"
    if relation == "colon" and (not left or left in GENERIC_LABELS or _is_utterance(text[end:])):
        # "Note: the API returns 200", "Caroline: I moved to Berlin": read what follows the label
        return _clause_claim(clause[clause.find(":") + 1 :] if ":" in clause else text[end:], subject)
    if relation == "colon" and (not left or len(left.split()) > 6):
        return None
    someone = left in PERSONS  # I, he, 我, 他…: a person the clause does not name
    person = someone or (is_named(left, cased) and not _an_event(left))  # "the BBQ" is no one
    pointed = left in DEMONSTRATIVES  # "that's what makes me smile": about something unnamed
    if left in PRONOUNS:
        left = ""
    if not left and not subject.strip():
        return None
    if (left.isascii() and len(left.split()) > 8) or (not left.isascii() and len(left) > 24):
        return None
    if re.match(r"^(?:not|no longer|never)\b", text[end:].strip()):
        return None
    if relation == "port" and USES.search(text[best[0] : end]) and (_is_group(left or subject) or HOSTS.search(left)):
        return None  # a team or a machine uses many ports at once; a service listens on one
    said_first = leading_value(left) if _MAY_BE_A_DATE.search(left) else None
    if said_first is not None and said_first[0] == KIND_WHEN and said_first[2] >= len(left):
        return None  # "May 3 is the deadline": the date said first is the value, not what the claim is about
    extended = _EXTENDED.search(text[best[0] : end]) is not None and not _ENDS.search(left)
    if relation in ("departs", "arrives") and (person or _kin(left)):
        return None  # "Bob leaves at 5pm" (a habit, or today's): a train's or a flight's departure is one
    as_name = relation != "port" and is_role(left, subject)
    said = text[end:]
    if (rate_first := ZH_RATE_FIRST.match(said)) is not None:
        said = said[rate_first.end() :]  # "是每月25元": the amount, its period read below
    value = parse_value(said, hint=left + " " + subject, as_name=as_name)
    day = _A_DAY_OF_THE_MONTH.fullmatch(value[2]) if value is not None and value[1] == KIND_TEXT else None
    if (
        value is not None
        and day is not None
        and _SAID_AS_A_DAY.search(said)
        and not person
        and not _a_place_of_work(left or subject)
    ):
        # "the board meeting is on the 15th", "… was moved to the 22nd": when it is, as "on June 3" says
        # ("the office is on the 3rd" is a floor, "our team is 2nd" a rank)
        value = (value[0], KIND_WHEN, f"---{int(day[1]):02d}", "")
    if value is None or (kinds is not None and value[1] not in kinds):
        return None
    if relation == "arrives" and _RECURRING.search(value[0]):
        return None  # "the cleaner comes on Mondays": one of the days it may come, not its one time
    if relation == "meets":
        if value[1] == KIND_TEXT and not _DAY_OF_THE_MONTH.fullmatch(value[2]):
            return None  # "the club meets at the library", "… meets on Zoom": no day it meets
        if value[1] == KIND_TEXT:  # "the first Monday of each month" is "the first Monday"
            value = (value[0], value[1], _OF_THE_MONTH.sub("", value[2]), value[3])
        relation = "is"  # "the book club meets on Tuesdays" is when it is, as "… is on Tuesdays"
    if extended:
        if not _A_DURATION.search(value[2]):
            return None  # "the meeting was extended to 4pm": how long it runs, not when it is
        if not _A_SPAN.search(left):  # "we extended the trial to 30 days": how long it lasts, as "… lasts 14 days"
            relation = "lasts"
    elif (
        relation == "is"
        and not person
        and _A_DURATION.search(value[2])
        and not _A_SPAN.search(left)
        and not _tail(text[end:], value[0], "")  # "… is 5 years old", "… is 3 days away" say more
    ):
        relation = "lasts"  # "the trial is 14 days", "the lease is 12 months": how long it lasts
    if relation == "lives in" and text[best[0] : end].endswith(" at") and not STREET_ADDRESS.match(value[0]):
        return None  # "lives at" a street address only
    if relation == "is" and text[best[0] : end].lstrip("已")[:2] in _PRICE_CHANGED:
        if value[1] != KIND_NUMBER:
            return None
        relation = "costs"  # "会员涨价到30元": the price, as 会员价格 names it
    # a value a change names ("was renamed to engineering") is one, whatever its ending; "is
    # failing", "is engineering" describe
    said_as = "changed to" if relation == "is" and text[best[0] : end].endswith(" to") else relation
    if not is_value(value[1], value[0], said_as, cased, left) and not _DAY_OF_THE_MONTH.fullmatch(value[2]):
        return None
    if relation == "is" and value[3] == "on" and value[2] == "call":
        return None  # "the platform team is on call": a duty (a person's is the on-call role), not "on" Slack
    if relation == "is" and value[1] == KIND_TEXT and value[3] == "to":
        return None  # "my goal is to give kids a home": a purpose, not a value
    if pointed and relation in ("is", "colon") and value[1] == KIND_TEXT:
        return None  # "this is my lucky pair of shoes"; "it listens on port 8080" still reads the subject
    if relation == "is" and (person or _kin(left)) and value[1] == KIND_TEXT and MOVED.search(text[best[0] : end]):
        if _is_group(value[0]) or _a_work_move(value[2]) or _A_DAY_OF_THE_MONTH.fullmatch(value[2]):
            # "Bob moved to the data team", "… to the night shift", "my daughter moved to 2nd grade": where
            # he works or learns, not lives; "Sam moved to the 3rd": a floor or a day, no home
            return None
        if person:
            relation = "lives in"  # "Bob moved to Berlin" is where Bob lives; "the standup moved to 10am" is not
    moved = relation == "lives in" or (relation == "is" and MOVED.search(text[best[0] : end]) is not None)
    if (
        moved
        and relation == "is"
        and value[1] == KIND_TEXT
        and not value[3]
        and _a_way_of_working(left, value[0], cased)
    ):
        return None  # "the team moved to two-week sprints", "… to kanban": a way of working, no place
    if moved and _PLANNED_MOVE.search(text[best[0] : end]) and _a_place_of_work(left or subject):
        return None  # "the office will move to Denver next year": a plan, not where it is
    if moved and value[1] == KIND_TEXT and not value[3] and _a_place_of_work(left or subject):
        if not _named_place(value[0], cased):
            return None  # "the office moved to hybrid", "we moved offices to save money": no place
        # "the office moved to Denver", "… has moved to Denver", "… is based in Berlin": where it is,
        # as "the office is in Boston" says (not a home, and not the office's name)
        relation, value = "is", (*value[:3], "in")
    if moved and value[1] == KIND_TEXT and not value[3] and _an_event(left):
        if not _a_place(value[0], cased):
            return None  # "the HOA meeting moved to the library", "… to the afternoon": no place named
        if _PLANNED_MOVE.search(text[best[0] : end]):
            return None  # "the party will move to Mia's house": a plan, not where it is
        # "the team offsite moved to Austin", "book club moved to Mia's house": where the event is, as
        # "the offsite is in Denver" says (not a home)
        relation, value = "is", (*value[:3], "in")
    elif relation == "is" and value[1] == KIND_TEXT and value[3] in ("at", "in") and _an_event(left):
        if not _a_place(value[0], cased):
            return None  # "the meeting is in progress", "the offsite is in two weeks": no place
        value = (*value[:3], "in")  # "book club is at Jenna's house" and "… is in Denver": where it is
    elif relation == "is" and value[1] == KIND_TEXT and value[3] == "in" and (said := _when_or_in_what(value[0])):
        # "the trip is in May", "the manual is in English": when or in what, not where ("… in Japan")
        value = (*value[:3], f"in {said}")
    elif (
        relation == "is"
        and value[1] == KIND_TEXT
        and value[3] in ("in", "on")
        and (how := _how_it_stands(value[2], value[3]))
    ):
        if how == "passing":
            return None  # "the office is in chaos", "the store is on sale": a state it is in, no value
        value = (*value[:3], "in status")  # "the project is on hold" → "… is in progress": one slot
    if relation == "lives in" and _no_home(value[2], value[0], cased):
        return None  # "Bob lives in fear of spiders": no home
    if relation == "lives in" and "://" in value[0]:
        relation = "is"  # "VPN门户搬到了 https://…": an address, not a home
    if relation == "is" and value[1] == KIND_TEXT and (someone or LEADING_ARTICLE.sub("", left) in DISCOURSE):
        return None  # "我是老师", "他是我哥哥": what someone is; "the problem is …", "原因是 …": a remark
    if relation == "works at" and not person:
        return None  # "the fix works for Chrome" is not an employer
    if relation == "uses" and value[1] == KIND_TEXT and (person or _is_group(left or subject)):
        return None  # people and teams use many things at once: "… uses Python" and "… uses Rust" both hold
    journey = relation == "is" and value[1] == KIND_WHEN and _departs(left)
    if journey:
        relation = "departs"  # "my flight is at 9:15am", "the flight was delayed to 9am": when it leaves
    if relation == "is" and _PRICED.match(said) and not someone and not _an_amount(left or subject):
        relation = "costs"  # "the Pro plan is $25/month", "the ticket went up to $250": its price
    rate = _rate(text[end:]) if value[1] == KIND_NUMBER else ""
    own = _qualifier(text[end:])
    tail = _tail(text[end:], value[0], rate)
    if tail and relation in ("costs", "lasts") and not own:
        own = tail  # "costs $50 online" / "$60 at the door", "$220 a night on weekends": other prices
    qualifier = " ".join(q for q in (own, rate) if q)
    # "leaves at 9:40 on Sundays", "ends at 5pm on Thursdays": one day's time among others
    one_of_several = (
        relation in ("departs", "arrives", "ends", "opens") and re.search(r"[a-z]+ \d", value[2]) is not None
    )
    if one_of_several or (tail and (relation in ("departs", "arrives") or text[best[0] : end].startswith("在"))):
        # "the train leaves at 9:40 on Sundays", "… from JFK", "妈妈在每天早上8点吃药": one schedule's
        # time among others, not the thing's one time
        if not journey:
            return None
        # "my flight is at 9am tomorrow", "… on Friday at 9am": said with "is", a time of the flight as
        # it always was read (the departure reading is for the flight's one time)
        relation = "is"
    return _make(subject, left, "is" if relation == "implicit" else relation, value, qualifier=qualifier)


_EXTENDED = re.compile(r"\b(?:extended|shortened)\b")
_A_DURATION = re.compile(r"\d (?:s|mo)$")  # a normalised length of time ("2592000 s", "12 mo")
# a length of time named ("the CI timeout is 30 minutes"): extended, it is that length, not how long it lasts
_A_SPAN = re.compile(r"\b(?:timeout|ttl|retention|window|period|interval|grace|cooldown|delay|duration)\b")
_OF_WHERE = re.compile(r"\s+(?:to|from|for|at|of|on|in|with)\s+")
_PRICE_CHANGED = frozenset({"涨价", "降价"})  # a price raised or cut to ("会员涨价到30元")
# a currency written after its number: a sign or a word ("25€", "100元", "25 pounds", "30 bucks")
_CURRENCY_AFTER = r"(?:[€£¥元块]|(?:usd|eur|gbp|dollars?|euros?|pounds?|quid|bucks|yen|yuan|rmb|cny)\b)"
# an amount of money in a written currency, as written: "$25", "25€", "¥30,000", "30 bucks", "25 pounds",
# "100元" (all of one slot: the price, whichever way each was written)
_PRICED = re.compile(
    r"\s*(?:(?:about|around|only|just|now)\s+)?(?:[$€£¥]\s*\d|\d[\d,.]*\s*(?:[kmb万]\s*)?" + _CURRENCY_AFTER + ")"
)
_ENDS = re.compile(r"\b(?:deadline|due|expir\w*|cutoff|end|ends)\b")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
# the currency a value was written with, when it follows the number ("25 pounds", "25€")
_CURRENCY_WORD = re.compile("^" + _CURRENCY_AFTER + r"\s*")
# when a value changed, said after it ("went up to $25/month last week", "… from now on", "… starting in
# March", "… from $250"): not a condition the value holds under, as "on weekends" or "online" are
_WHEN_IT_CHANGED = re.compile(
    r"(?:^|\s)(?:(?:last|this|next)\s+(?:week|month|year|quarter)|(?:as\s+of|effective|starting|beginning|from|since)"
    r"(?:\s+(?:in|on|from))?\s+(?:now|today|tomorrow|next\s+\w+|this\s+\w+|the\s+(?:start|beginning|end)\s+of\s+.+"
    rf"|{_MONTH}\b.*|[$€£¥]?\d.*|q[1-4]\b.*)|going\s+forward|from\s+on|tomorrow|tonight|yesterday"
    rf"|(?:in|on)\s+{_MONTH}\b.*|in\s+\d{{4}}|in\s+q[1-4])$"
)
_TAIL_FILLERS = re.compile(r"\b(?:now|today|instead|again|currently|any\s*more|these days|as well|too)\b|[了。.!！]")


def _departs(left: str) -> bool:
    """ "my flight", "the 7:10 train", "the flight date": a journey, whose time is when it leaves
    ("the flight departs at 7am" and "the flight was delayed to 9am" are one slot)."""
    head = _OF_WHERE.split(left, maxsplit=1)[0]  # "my flight to Paris" is a flight
    words = [w for w in head.split() if w not in SLOT_FILLERS and w not in DATE_FILLERS]
    return bool(words) and words[-1] in DEPARTURES


# a day of the month, as a value says it ("the 15th", article dropped): 1 to 31
_DAY = r"(0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)"
_A_DAY_OF_THE_MONTH = re.compile(_DAY)
# … said as a day is said: "on the 15th", "to the 22nd", "on 3rd" ("our team is 2nd" is a rank)
_SAID_AS_A_DAY = re.compile(rf"(?:^|\s)(?:on|the)\s+{_DAY}\b")
_RECURRING = re.compile(r"(?:mon|tues|wednes|thurs|fri|satur|sun)days\b|\b(?:every|weekends|weekdays)\b")


def _how_it_stands(canonical: str, said_with: str) -> str:
    """ "status" for "hold", "progress", "holiday hours", "public beta", "hold indefinitely", "on the
    market"; "passing" for "chaos", "sale", "vacation", "paternity leave": what a thing is in or on that is
    how it stands, not where it is (empty for a place or anything else)."""
    words = LEADING_ARTICLE.sub("", canonical).split()
    if not words or len(words) > 2:
        return ""
    if words[-1] in PASSING_STATES:
        return "passing"
    if len(words) == 1:
        return "status" if words[0] in STATUSES or (said_with == "on" and words[0] in STATUSES_ON) else ""
    if words[1] in STATUS_ENDINGS or (words[1] in STATUSES and words[1] != "time"):
        return "status"  # "maintenance mode", "public beta" ("Pacific time" is a time zone)
    return "status" if words[0] in STATUSES and words[1].endswith("ly") else ""  # "hold indefinitely"


def _no_home(canonical: str, display: str, cased: str) -> bool:
    """ "fear", "fear of spiders", "denial", "constant fear": what someone lives in that is no place
    ("Hope Street" and "Port Hope" are one)."""
    words = LEADING_ARTICLE.sub("", canonical).split()
    if len(words) == 2 and words[1] in NOT_A_HOME and not _named_place(display, cased):
        return True
    return bool(words) and words[0] in NOT_A_HOME and (len(words) == 1 or words[1] in ("of", "that", "and"))


def _a_way_of_working(left: str, display: str, cased: str) -> bool:
    """ "the team" moved to "kanban", "two-week sprints": a group's move to no place named, numbered or
    someone's ("the 3rd floor", "Lisbon" are places)."""
    return _is_group(left) and display.isascii() and not _A_DIGIT.search(display) and not _a_place(display, cased)


def _a_work_move(canonical: str) -> bool:
    """ "the night shift", "product", "part-time": where or when someone works, which a move to is
    not a move of home."""
    words = LEADING_ARTICLE.sub("", canonical).split()
    # "customer success", "engineering management": a department named in more words
    return bool(words) and (words[-1] in WORK_MOVES or words[-1] in WORK_MOVE_HEADS)


def _kin(left: str) -> bool:
    """ "my mom", "Bob's sister": a person, named by who they are to someone."""
    words = left.split()
    return bool(words) and words[-1] in KIN


def _an_event(left: str) -> bool:
    """ "the team offsite", "book club", "dinner with the Smiths": an event, whose place is one slot."""
    head = _OF_WHERE.split(left, maxsplit=1)[0]
    words = [POSSESSIVE.sub("", w) for w in head.split()]
    return bool(words) and words[-1] in EVENTS


# a day of the month a group meets on: "the first Monday", "the last Friday"
_DAY_OF_THE_MONTH = re.compile(
    r"(?:the\s+)?(?:first|second|third|fourth|last|1st|2nd|3rd|4th)\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"(?:\s+of\s+(?:the|each|every)\s+month)?"
)


def _an_amount(left: str) -> bool:
    """ "the budget", "Alice's salary", "the late fee": an amount of money already named, not a
    thing whose price "is $X" states ("项目预算是5万" and "…为8万元" stay one slot)."""
    return not key_tokens(left).isdisjoint(AMOUNTS)


def _tail(rest: str, display: str, rate: str) -> str:
    """What a clause says after its value, up to the clause's end ("online", "on Sundays",
    "from JFK", "吃药"), without fillers and the rate already read."""
    at = rest.find(display)
    if at < 0:
        return ""
    after = QUALIFIER_END.split(rest[at + len(display) :], maxsplit=1)[0]
    if rate:
        after = RATE.sub(" ", after, count=1)
    tail = " ".join(_TAIL_FILLERS.sub(" ", after).split())
    # the currency the value was written with ("25 pounds", "25€") and when it changed are no condition
    return _WHEN_IT_CHANGED.sub("", _CURRENCY_WORD.sub("", tail)).strip()


def _rate(rest: str) -> str:
    """ "per month" when the number is a rate ("$20 per month", "$20/month", "每月20元")."""
    found = RATE.search(rest[:40])
    if found is None:
        return ""
    period = found["period"] or found["zh"] or found["zh_after"]
    return f"per {RATE_PERIODS.get(period, period)}"


ZH_NOT_YET = re.compile(r"(?:将要|将会|将|即将|计划|打算|准备|要)$")
ZH_ASKED = re.compile(r"[吗么][\s。！!？?]*$")
_PLANNED_MOVE = re.compile(r"\b(?:will|is moving|are moving|is going to)\b")


def _named_place(display: str, cased: str) -> bool:
    """A place written as a name ("Denver", "San Francisco") or a street address: not "hybrid"."""
    if STREET_ADDRESS.match(display):
        return True
    first = (LEADING_ARTICLE.sub("", display).split() or display.split())[0]  # "the backyard" is no "The …"
    written = next((w for w in reversed(cased.split()) if w.strip(TOKEN_PUNCT).lower() == first), None)
    return written is not None and written.strip(TOKEN_PUNCT)[:1].isupper()


def _a_place(display: str, cased: str) -> bool:
    """Where an event is: a place named ("Denver", "Room 4"; not "English"), someone's ("Jenna's
    house") or numbered ("room 4")."""
    bare = LEADING_ARTICLE.sub("", display)
    if display.split()[0] in LANGUAGES or display.split()[0] in _WHOSE or NOT_A_PLACE.match(bare):
        return False  # … and "the festival is in its 10th year": no place
    if _SOMEONES_NOT_A_PLACE.search(display) or _A_PART_OR_A_KEY.match(bare):
        return False  # "in Bob's hands", "in round 2", "in D minor": no place ("Jenna's house" is one)
    return _named_place(display, cased) or _SOMEONES.search(display) is not None or _A_DIGIT.search(display) is not None


_WHOSE = frozenset("its his her their my our your".split())
# someone's that is no place: "the offsite is in Bob's hands", "… at Bob's discretion", "moved to Bob's team"
_SOMEONES_NOT_A_PLACE = re.compile(
    r"\w['’]s\s+(?:hands?|discretion|expense|cost|team|group|department|budget|calendar|schedule|agenda|list|plate"
    r"|honou?r|memory|name|care|charge|control|request|favou?r|mind|court)\b"
)
# a part of an event, numbered, or the key it is played in: "the tournament is in round 2", "the concert is
# in D minor" (a number or a capital that names no place)
_A_PART_OR_A_KEY = re.compile(
    r"(?:round|phase|stage|week|day|game|set|heat|part|act)\s+\d|[a-g](?:\s+(?:flat|sharp))?\s+(?:major|minor)\b"
)
_ON_A_FLOOR = re.compile(
    r"^(?P<x>.+?)\s+(?i:(?:is|are)\s+(?:now\s+)?on)\s+the\s+(?P<y>\d{1,3})(?:st|nd|rd|th)\s+(?i:floor)[.!]?$"
)


def _when_or_in_what(display: str) -> str:
    """ "when" for "May", "Q3", "two weeks", "language" for "English": what a thing is "in" that says
    when or in what, not where (empty for a place)."""
    if display.split()[0] in LANGUAGES:
        return "language"
    return "when" if NOT_A_PLACE.match(LEADING_ARTICLE.sub("", display)) else ""


_OF_THE_MONTH = re.compile(r"\s+of\s+(?:the|each|every)\s+month$")
_SOMEONES = re.compile(r"\w['’]s\b")


def _a_place_of_work(left: str) -> bool:
    """ "the office", "our Berlin lab": a thing that has a place, not a home ("has moved to
    Denver", "is based in Berlin" say where it is, as "is in" does)."""
    words = left.split()
    return bool(words) and POSSESSIVE.sub("", words[-1]) in PLACES_OF_WORK


def _is_group(left: str) -> bool:
    """People as a group ("the backend team", "we", "our company", "团队"): they hold many tools."""
    words = normalize_text(left).split()
    return bool(words) and (words[-1] in GROUPS or any(left.endswith(g) for g in GROUPS_ZH))


def _qualifier(rest: str) -> str:
    """ "for <what>" right after the value ("uses Rust for the CLI"): it narrows what the claim is about."""
    if not rest.isascii():
        return ""
    cut = EN_VALUE_END.search(rest)
    if cut is None or cut.group().strip() != "for":
        return ""
    what = QUALIFIER_END.split(LEADING_ARTICLE.sub("", rest[cut.end() :].strip()), maxsplit=1)[0]
    what = " ".join(w for w in what.split() if w not in STOP_TOKENS)
    return f"for {what}" if what and len(what.split()) <= 4 else ""


def _drink_claim(clause: str, default_who: str) -> Claim | None:
    """(who, ``drink``, what) when the clause names the drink someone usually has or prefers: one
    value at a time, so "prefers tea" and "switched to coffee" are one slot (:data:`DRINK_EN`,
    :data:`DRINK_ZH`). "Bob drinks tea" alone is a yes/no taste (several drinks hold at once)."""
    text = normalize_text(clause)
    if not text or hedged(text) or QUESTION_START.match(text):
        return None
    chinese = CJK_SPLIT.search(text) is not None
    match = (match_drink_zh if chinese else match_drink_en)(text)
    if match is None:
        return None
    who = strip_left(match["who"] or match.groupdict().get("who2") or "").strip()
    what = TASTE_TRAILERS.sub("", value_text(match["what"] or match.groupdict().get("what2") or ""))
    what = LEADING_ARTICLE.sub("", what).strip(TOKEN_PUNCT + " ")
    if not chinese and (not what or what.split()[-1] not in DRINK_WORDS):
        return None  # "prefers the window seat": not a drink
    if who in PRONOUNS or not who:
        who = default_who
    tokens = key_tokens(who)
    if not tokens or not what or len(what) > 30:
        return None
    return Claim(
        subject=who,
        attribute="drink",
        value=what,
        kind=KIND_TEXT,
        key_subject=" ".join(sorted(tokens | {"drink"})),
        key_attribute="is",
        value_norm=name_value(what),
    )


# what a place, a plan or a service allows, accepts, supports or requires (as TASTE_VERBS keys them)
_POLICY_VERBS = frozenset({"allows", "accepts", "supports", "requires", "允许"})
_NOUNS_TOO = frozenset({"support", "accept"})  # bare, a verb only after a negation


def _preference_claim(clause: str, default_who: str) -> tuple[Claim, str] | None:
    """The clause's like/dislike claim and who it is about (``default_who`` for "I", "不喜欢茶")."""
    if taste_word(clause) is None:  # most clauses: one cheap scan instead of the parse
        return None
    text = normalize_text(clause)
    if not text or hedged(text) or QUESTION_START.match(text):
        return None
    chinese = CJK_SPLIT.search(text) is not None
    match = LIKE_ZH.match(text) if chinese else match_like_en(text)
    if match is None:
        return None
    verb, negated = match["verb"], match["neg"] is not None
    policy = TASTE_VERBS.get(verb) in _POLICY_VERBS
    if verb in _NOUNS_TOO and not negated:
        return None  # "the support I got", "support system": a noun; "doesn't support XML" is the verb
    who = WHO_TRAILERS.sub("", DEGREE.sub("", strip_left(match["who"])).strip()).strip()
    bare = not verb.endswith("s") and " " not in verb and not chinese and not negated and who not in FIRST_PERSON
    if bare and (not policy or not who):
        # a bare "like" is a preposition ("looks like rain") unless "I like", "don't like"; a plural's
        # rule is not ("deploys require approval")
        return None
    disliked = verb.startswith(("dislike", "hate", "讨厌"))
    if negated and disliked:
        return None  # "doesn't hate" says little
    if who in PRONOUNS or not who:  # "I like …", "他喜欢 …", "不喜欢茶": whom the memory is about
        who = default_who
    # a rule's object whole: "requires two approvals for hotfixes" is not "requires two approvals"
    # (a taste's reason or occasion is cut: "likes jazz because …")
    said = match["what"] if policy else value_text(match["what"])
    what = LEADING_ARTICLE.sub("", TASTE_TRAILERS.sub("", said.strip())).strip(TOKEN_PUNCT + " ")
    if not who.strip() or not what or what in NOT_A_TASTE or len(what.split()) > 5 or len(what) > 40:
        return None
    if chinese and ("是" in who or what.startswith("的")):
        return None  # "这是我最喜欢的书": a favourite thing named, not a taste stated
    tokens = key_tokens(who)
    if not tokens:
        return None
    if policy and (len(who.split()) > 4 or what.split()[0] in OBJECT_PRONOUNS):
        return None  # "… and allows me to be myself", "it really helped and supports …": no place's rule
    liked = not (negated or disliked)
    stem = TASTE_VERBS.get(verb, "喜欢" if chinese else "likes")
    attribute = f"{stem}{what}" if chinese else f"{stem} {what}"
    claim = Claim(
        subject=who,
        attribute=attribute,
        value="yes" if liked else "no",
        kind=KIND_BOOL,
        key_subject=" ".join(sorted(tokens)),
        key_attribute=attribute,
        value_norm="true" if liked else "false",
    )
    return claim, who


def _clauses(content: str) -> Iterable[str]:
    for sentence in SENTENCES.split(content[:20_000]):
        sentence = sentence.strip()
        if not sentence or sentence.endswith(("?", "？")):
            continue
        yield from (c for c in CLAUSES.split(sentence.rstrip("。！!；;.\n ")) if c and c.strip())


def _without_lead_in(clause: str) -> str:
    """ "FYI we moved the standup to 11am" as "we moved the standup to 11am": a chat's lead-in
    kept the change's patterns (anchored at the clause's start) from reading it."""
    text = clause.lstrip()
    match = LEAD_IN.match(text)
    return text[match.end() :] if match and match.end() < len(text) else clause


def _stated_clauses(content: str) -> Iterable[str]:
    """The clauses whose values hold: a change its own sentence says was undone ("We upgraded
    Postgres to 17 but rolled it back") states none (it read as Postgres 17, or as the standup
    at 11am in "we moved the standup to 11am but moved it back")."""
    if UNDONE.search(content) is None:  # most writes: one scan
        yield from _clauses(content)
        return
    for sentence in SENTENCES.split(content[:20_000]):
        undone = UNDONE.search(sentence) is not None
        yield from (
            c for c in _clauses(sentence) if not (undone and MAKES_A_CHANGE.search(c) and not RETURNS_TO.search(c))
        )


def clause_count(content: str) -> int:
    """How many clauses ``content`` states (questions left out), as claim extraction reads it."""
    return sum(1 for _ in _clauses(_without_speaker_label(content)))


def explicit_claim(subject: str, attribute: str, value: str) -> Claim | None:
    """A caller-given claim, keyed like an extracted one ("port" folds into the subject)."""
    relation = normalize_text(attribute)
    relations = {
        "returns": "returns",
        "return": "returns",
        "返回": "returns",
        "uses": "uses",
        "use": "uses",
        "使用": "uses",
        "用": "uses",
        "costs": "costs",
        "cost": "costs",
        "is": "is",
        "=": "is",
        "是": "is",
    }
    rel = relations.get(relation)
    if is_role(f"{subject} {attribute}" if rel is None else "", subject):  # a name, whatever it looks like
        kind, canonical = KIND_TEXT, name_value(value)
    else:
        kind, canonical = _normalize_value(value, hint=relation)
    folded = subject if rel else f"{subject} {attribute}"
    claim = _make(folded, "", rel or "is", (value.strip(), kind, canonical, ""), origin="explicit")
    return None if claim is None else msgspec.structs.replace(claim, subject=subject, attribute=attribute)


@text_cache(maxsize=512)
def _extract(content: str, subject: str, explicit: tuple[tuple[str, str, str], ...]) -> tuple[Claim, ...]:
    out: dict[tuple[str, str, str], Claim] = {}
    for s, a, v in explicit:
        claim = explicit_claim(s, a, v)
        if claim is not None:
            out.setdefault(claim.key, claim)
    who = subject  # whom a clause without its own subject is about ("用户喜欢咖啡，不喜欢茶")
    for clause in map(_without_old_value, map(_without_lead_in, _stated_clauses(_without_speaker_label(content)))):
        claim = (
            _drink_claim(clause, who)
            or _ownership_claim(clause)
            or _reports_to_claim(clause, subject)
            or _role_holder_claim(clause, subject)
            or _version_claim(clause, subject)
            or _runs_version_claim(clause, subject)
            or _count_claim(clause, subject)
            or _changed_by_claim(clause, subject)
            or _migrated_claim(clause, subject)
            or _zh_claim(clause, subject)
            or _clause_claim(clause, subject)
        )
        if claim is None and (preference := _preference_claim(clause, who)) is not None:
            claim, who = preference
        if claim is not None:
            out.setdefault(claim.key, claim)
        if len(out) >= MAX_CLAIMS:
            break
    return tuple(out.values())


def extract_claims(content: str, subject: str = "", explicit: Iterable[tuple[str, str, str]] = ()) -> tuple[Claim, ...]:
    """Explicit claims first, then one claim per clause of ``content``; at most one per key."""
    return _extract(content, subject, tuple(explicit))


def states_several(claims: Iterable[Claim]) -> bool:
    """Whether these claims (one memory's) state more than one fact: two keys or more. Such a
    memory is never ended or superseded for one of them (it would take the others with it)."""
    return len({c.key for c in claims}) > 1


def collides(mine: Claim, other: Claim) -> bool:
    """Same key and a different normalised value."""
    from fact_ledger.ledger.normalize import same_value

    return mine.key == other.key and not same_value(mine.kind, mine.value_norm, other.value_norm)


__all__ = [
    "KIND_BOOL",
    "Claim",
    "clause_count",
    "collides",
    "explicit_claim",
    "extract_claims",
    "key_tokens",
    "states_several",
]
