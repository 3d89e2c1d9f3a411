"""A statement that a fact no longer holds: "Alice is no longer the owner of the billing
service", "the staging API does not listen on port 8080 any more", "计费服务的负责人不再是Alice".

Claim extraction keeps no claim from a negated clause (``claim_words.NEGATED_LEFT``): "not X" is
not a value. Yet such a statement says something precise about one value already in the
ledger: the fact that holds it has ended. :func:`ended_claims` gives the claims the statement
denies, by reading it without its negation ("Alice is the owner of the billing service") and
extracting what that affirms; the write then ends the one active memory holding such a claim
with the same value (``server.app.writes``), as a cancellation ends an instruction. Precision
comes first, as there: a question, a hedge or a condition denies nothing, and the statement
must read as a whole sentence once the negation is taken out.
"""

from __future__ import annotations

import re

from fact_ledger.ledger.claim_words import QUESTION_START, hedged
from fact_ledger.ledger.claims import Claim, extract_claims
from fact_ledger.ledger.text import STOP_WORDS

_EN_TAIL = re.compile(r"[\s,]*\b(?:any\s*more|any\s+longer|now)\s*([.!]?)\s*$", re.IGNORECASE)
_EN_BE = re.compile(r"\b(is|are|was|were)(?:\s+not|n't)?\s+(?:no\s+longer|not)\b\s*", re.IGNORECASE)
_EN_BE_SHORT = re.compile(r"\b(is|are|was|were)n't\b\s*", re.IGNORECASE)
_EN_DOES = re.compile(r"\b(does|do|did)(?:\s+not|n't)\s+([a-z]+)", re.IGNORECASE)
_EN_NO_LONGER = re.compile(r"\bno\s+longer\s+([a-z]+)", re.IGNORECASE)
# "… stopped listening on port 8080", "… has ceased using …": the verb, from its -ing form
_EN_STOPPED = re.compile(r"\b(?:(?:has|have|had)\s+)?(?:stopped|ceased)\s+([a-z]+?)ing\b", re.IGNORECASE)
_EN_CONDITION = re.compile(r"\b(?:if|unless|until|when|whether|because|since|except)\b", re.IGNORECASE)
# A change still to come ("will no longer", "starting Monday", "from next week"): nothing has ended yet
_EN_FUTURE = re.compile(r"\b(?:will|shall|going\s+to|starting|from\s+next)\b|'ll\b", re.IGNORECASE)
# A statement that something has ended ...
_EN_ENDED = re.compile(r"\b(?:no\s+longer|any\s*more|any\s+longer|stopped|ceased)\b", re.IGNORECASE)
# ... may end with why or since when it did ("… since the reorg", "…, after the migration",
# "… because Bob took it over"): the value no longer holds either way, and the reason is not read
_EN_REASON = re.compile(
    r"[\s,;]+(?:(?:ever\s+)?since|because(?:\s+of)?|due\s+to|(?:after|following)(?=\s+the\s))\b"
    r"(?P<why>[^,;.!?]*)([.!]?)\s*$",
    re.IGNORECASE,
)
# ... unless the clause names a time (to come, or a date that may be: "… after the migration next
# month", "… after the reorg in March") or a condition ("… after the reorg is approved")
_EN_TO_COME = re.compile(
    r"\b(?:next|tomorrow|soon|upcoming|coming|later|tonight|will|is|are|gets?|goes|in|on|by|"
    r"jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|q[1-4]|"
    r"january|february|march|april|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|'ll\b|\d",
    re.IGNORECASE,
)
# "…, is it?", "…, does it", "…, right": a question, whatever its mark
_EN_TAG_QUESTION = re.compile(
    r",\s*(?:(?:is|are|was|were|do|does|did|has|have|had|can|will|would)(?:n't)?\s+(?:it|he|she|they|we|you|there|that)"
    r"|right|correct|no|yes|eh|huh)\s*[?.!]?\s*$",
    re.IGNORECASE,
)
_HAN = re.compile(r"[\u4e00-\u9fff]")  # a Chinese statement: read by the Chinese rules
_ANY_NEGATION = re.compile(r"\b(?:not|no|never|stopped|ceased)\b|n't|不|并非|停止")
_ZH_BE = re.compile(r"(?:已经)?(?:不再是|不是|并非)")
_ZH_NO_LONGER = re.compile(r"(?:已经)?(?:不再|停止(?:了)?)")  # "不再监听", "停止监听": no longer listens
_ZH_TAIL = re.compile(r"了?\s*([。！]?)\s*$")
# "…不是8080吗" asks (and means it is); "将不再是…" says it will be so: neither has ended anything
_ZH_QUESTION = re.compile(r"[吗么嘛][\s。！!？?]*$")
# (会 ending a word is no "will": 站会, 例会, 开会, 周会 …)
_ZH_FUTURE = re.compile(r"将|要不再|(?<![站例开晨周年大晚早班夜聚约机社协学工议])会不再")
# What a Chinese denial says beyond the value: a time or a scope (暂时, 今天, 这周, 生产环境…) or a
# source or a doubt (听说, 据说, 好像, 我觉得, …吧): it ends nothing
_ZH_MORE = re.compile(
    r"吧|呢|听说|据说|好像|似乎|觉得|认为|估计|暂时|临时|今天|明天|昨天|这周|本周|下周|上周|这个?月|下个?月|这次|本次|"
    r"期间|环境|以前|之前|曾经|原来|只是|仅"
)
_CLAUSE_BREAK = re.compile(r"[，,；;。！!？?]")
_NEGATION_WORDS = frozenset(
    """not no never longer anymore any more isn't aren't wasn't weren't doesn't don't didn't won't now still
    stopped ceased""".split()
)
# the verbs and nouns claims are stated with, whichever way the held memory put it ("owns" / "the owner")
_RELATION_WORDS = frozenset(
    """listen run serve use bind expose own owner report manage manager boss supervisor lead work live
    cost return version port set hold""".split()
)
# the speaker, contracted ("we're no longer on Postgres 16"): no more than "we are"
_SPEAKER_WORDS = frozenset("we're i'm we've i've we’re i’m".split())
_WORD = re.compile(r"[a-z0-9][a-z0-9.'’_-]*")


_IRREGULAR = {"have": "has", "be": "is", "do": "does", "go": "goes"}
# Verbs a stopped fact is stated with, to read "using" as "use" and "running" as "run"
_GERUND_VERBS = _RELATION_WORDS - {"owner", "manager", "boss", "supervisor", "version", "port"} | frozenset(
    "be host handle accept support point store send call".split()  # "stopped being the owner": is
)


def _third_person(verb: str) -> str:
    """ "listen" → "listens", "reach" → "reaches", "carry" → "carries", "have" → "has" (after "does not")."""
    if verb.lower() in _IRREGULAR:
        return _IRREGULAR[verb.lower()]
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _verb(gerund_stem: str) -> str | None:
    """The verb of an -ing form without its "ing" ("listen", "us", "runn"), when it is one a fact
    is stated with; else None (precision first)."""
    stem = gerund_stem.lower()
    doubled = stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem
    return next((verb for verb in (stem, stem + "e", doubled) if verb in _GERUND_VERBS), None)


def _stopped(match: re.Match[str]) -> str:
    verb = _verb(match[1])
    return _third_person(verb) if verb else match[0]


def _without_reason(text: str) -> str:
    """An English statement that something ended, without why or since when ("Alice is no longer
    the owner since the reorg" → "Alice is no longer the owner"); any other text as it is."""
    if _HAN.search(text) or not _EN_ENDED.search(text):
        return text
    reason = _EN_REASON.search(text)
    if reason is None or _EN_TO_COME.search(reason["why"]):
        return text
    return text[: reason.start()] + reason[2] + text[reason.end() :]


def _affirmed(text: str) -> str | None:
    """``text`` without its one negation, or None when it holds none (or reads as no statement)."""
    lowered = text.lower()
    if _ANY_NEGATION.search(lowered) is None:  # most writes: one pass, then nothing more to read
        return None
    text = _without_reason(text)
    lowered = text.lower()
    if QUESTION_START.match(lowered) or hedged(lowered) or text.rstrip().endswith(("?", "？")):
        return None
    if _HAN.search(text):
        if "如果" in text or "除非" in text or _ZH_QUESTION.search(text) or _ZH_FUTURE.search(text):
            return None
        out, n = _ZH_BE.subn("是", text, count=1)
        if not n:
            out, n = _ZH_NO_LONGER.subn("", text, count=1)
        return _ZH_TAIL.sub(r"\1", out) if n else None
    if _EN_CONDITION.search(text) or _EN_FUTURE.search(text) or _EN_TAG_QUESTION.search(text):
        return None
    out, n = _EN_BE.subn(lambda m: m[1] + " ", text, count=1)
    if not n:
        out, n = _EN_BE_SHORT.subn(lambda m: m[1] + " ", text, count=1)
    if not n:
        out, n = _EN_DOES.subn(lambda m: m[2] if m[1].lower() == "do" else _third_person(m[2]), text, count=1)
    if not n:
        out, n = _EN_NO_LONGER.subn(r"\1", text, count=1)
    if not n:
        out = _EN_STOPPED.sub(_stopped, text, count=1)
        n = out != text
    return _EN_TAIL.sub(r"\1", out) if n else None


def _stem(word: str) -> str:
    """A crude English stem, enough to tell "listens", "listening" and "listen" apart from nothing
    ("uses", "using", "use" → "us")."""
    word = word.strip(".'’-").removesuffix("'s").removesuffix("’s")
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 1 + (suffix != "ing") and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 2 and word.endswith("e") else word


def _words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS and w.strip(".'’-") not in STOP_WORDS}


_ALLOWED = {_stem(w) for w in _NEGATION_WORDS | _RELATION_WORDS | _SPEAKER_WORDS}


def _named(claim: Claim) -> str:
    """The words that name ``claim``'s slot and value, as stated and as keyed."""
    return f"{claim.subject} {claim.attribute} {claim.value} {claim.key_subject} {claim.value_norm}"


def denies_only(content: str, held: str, claim: Claim) -> bool:
    """Whether ``content`` says no more than that ``held``'s value of ``claim`` no longer holds.

    Every word it has beyond its negation must be in ``held`` or name the claim's slot or value.
    "The standup isn't at 10am today", "… does not listen on port 8080 in production", "Alice
    isn't the owner, Bob said", "I don't think Alice owns …" say more (a time, a scope, a source,
    a doubt): the value may still hold, so they end nothing."""
    if _HAN.search(content):
        # no time, scope, source or doubt, and one clause: "…不再是Alice了，下个季度再说" says more
        return _ZH_MORE.search(content) is None and not _CLAUSE_BREAK.search(content.strip().rstrip("。！!.了"))
    return not (_words(_without_reason(content)) - _words(held) - _words(_named(claim)) - _ALLOWED)


def _tokens(text: str) -> set[str]:
    """English words (stemmed) and single Chinese characters: what a statement in either language says."""
    return _words(text) | set(_HAN.findall(text))


# the words a Chinese statement of a fact is made of, beside its slot and value
_ZH_FRAME = frozenset("是的了在用使监听端口号版本负责人由再时间日期地址")  # …时间 / 日期 / 地址: the slot's name


def holds_only(held: str, content: str, claim: Claim) -> bool:
    """Whether ``held`` states no more than the value of ``claim`` that ``content`` denies: then
    ending it loses nothing else. "The orders API uses Redis and Kafka", or a note of three facts
    one of which is denied, holds more: ending it would end the rest with it."""
    if _HAN.search(held) and _CLAUSE_BREAK.search(held.strip().rstrip("。！!.了")):
        return False  # several clauses: several facts
    more = _tokens(held) - _tokens(_without_reason(content)) - _tokens(_named(claim)) - _ALLOWED - _ZH_FRAME
    return not more


def ended_claims(content: str, subject: str = "") -> tuple[Claim, ...]:
    """The claims ``content`` (about ``subject``, as the write gives it) says no longer hold (none
    when it negates nothing)."""
    affirmed = _affirmed(content.strip())
    if affirmed is None or _affirmed(affirmed) is not None:  # one negation, no more
        return ()
    # a key the statement itself gives a value ("Alice does not like coffee": false) is a
    # disagreement like any other, settled in a claim set
    own = {claim.key for claim in extract_claims(content, subject)}
    return tuple(claim for claim in extract_claims(affirmed, subject) if claim.key not in own)


__all__ = ["denies_only", "ended_claims", "holds_only"]
