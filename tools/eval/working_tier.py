"""The working tier against long-term-only writing, on a generated multi-conversation stream.

A seeded generator writes what agents write in conversations, in English and Chinese, about a
set of facts whose current values are known: wrong guesses that a tool then contradicts
("trying port 8081"), the current value stated and restated in other words, confirmations by
tools and the user over several turns, values that change between conversations, and
conversation-local remarks ("today's meeting is the UI walkthrough") whose same words mean
different things in different conversations. The same stream is written twice into fresh
ledgers:

- ``long-only``: every statement is a long-term ``remember`` (with its ``session_id``);
- ``working``: every statement is a working note and the signals are ``reinforce`` calls, so
  only what the promotion rule accepts reaches long-term memory.

It prints, per 100 distinct facts, the long-term duplicates (active memories holding a claim
value another active memory already holds) and the open contradictions (open claim sets), and
the share of questions (one per fact, asked from outside every conversation) whose top answer
holds the fact's current value.

    python -m tools.eval.working_tier [--facts 60] [--conversations 40] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fact_ledger.ledger.claims import extract_claims
from fact_ledger.ledger.errors import InvalidInput
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

# Subjects are unique word pairs (first name x surname, colour x service, surname x given name,
# city x service), so a question names one fact and full text can tell them apart.
FIRST_EN = ["Alice", "Bruno", "Clara", "Dana", "Emil", "Farah", "Goran", "Hiro", "Ines", "Jonas"]
LAST_EN = ["Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Silva"]
COLOURS_EN = ["amber", "cobalt", "crimson", "jade", "ivory", "onyx", "scarlet", "teal", "umber", "violet"]
SURNAMES_ZH = ["张", "李", "王", "刘", "陈", "杨", "赵", "黄", "周", "吴"]
GIVEN_ZH = ["伟", "娜", "芳", "洋", "静", "帆"]
CITIES_EN = ["Berlin", "Paris", "Lisbon", "Oslo", "Madrid", "Vienna", "Prague", "Dublin", "Zurich", "Rome"]
CITIES_ZH = ["上海", "北京", "广州", "深圳", "杭州", "成都", "南京", "武汉", "西安", "苏州"]
SERVICES_EN = ["staging API", "billing API", "search API", "auth service", "report worker", "cache node"]
SERVICES_ZH = ["预发环境", "计费服务", "搜索服务", "认证服务", "报表服务", "缓存节点"]
TOPICS_EN = ["requirements review", "UI walkthrough", "budget check", "retro", "hiring sync", "design crit"]
TOPICS_ZH = ["需求评审会", "UI走查会", "预算会", "复盘会", "招聘同步会", "设计评审会"]

# Templates: every wording of a fact yields the same claim key (checked by the unit test).
TEMPLATES = {
    ("lives", "en"): ["{s} lives in {v}", "{s} is living in {v} now", "{s} lives in {v} these days"],
    ("lives", "zh"): ["{s}住在{v}", "{s}现在住在{v}", "{s}目前住在{v}"],
    ("port", "en"): [
        "The {s} listens on port {v}",
        "The {s} is listening on port {v}",
        "The {s} now listens on port {v}",
    ],
    ("port", "zh"): ["{s}端口是{v}", "{s}端口现在是{v}", "{s}端口目前是{v}"],
}
QUESTIONS = {
    ("lives", "en"): "{s} lives",
    ("lives", "zh"): "{s}住在",
    ("port", "en"): "{s} port",
    ("port", "zh"): "{s}端口",
}
LOCAL = {"en": "The meeting today is the {v}", "zh": "今天的会是{v}"}


@dataclass
class Fact:
    kind: str
    lang: str
    subject: str
    values: list[str]  # the values it takes, in order
    change_at: int  # the conversation from which the second value holds
    latest: str = ""  # the truth: the value the stream stated last ("" when it never came up)

    def value_in(self, conversation: int) -> str:
        return self.values[-1] if len(self.values) > 1 and conversation >= self.change_at else self.values[0]

    def text(self, value: str, rnd: random.Random, wording: int | None = None) -> str:
        options = TEMPLATES[(self.kind, self.lang)]
        return options[rnd.randrange(len(options)) if wording is None else wording].format(s=self.subject, v=value)


@dataclass
class Step:
    """One call of the stream: a statement (``say``) or a signal about an earlier statement."""

    conversation: str
    turn: int
    say: str = ""
    ref: int | None = None  # for a signal: the index of the statement it is about
    signal: str = ""


@dataclass
class Stream:
    facts: list[Fact]
    steps: list[Step] = field(default_factory=list)


def _values(kind: str, lang: str, rnd: random.Random) -> list[str]:
    if kind == "port":
        return [str(p) for p in rnd.sample(range(7000, 9900, 7), 3)]
    return rnd.sample(CITIES_EN if lang == "en" else CITIES_ZH, 3)


def generate(facts: int = 60, conversations: int = 40, seed: int = 7) -> Stream:
    """The stream: ``facts`` facts (half English, half Chinese; people's cities and services'
    ports), talked about over ``conversations`` conversations, three facts each."""
    rnd = random.Random(seed)
    made: list[Fact] = []
    for i in range(facts):
        lang = "en" if i % 2 == 0 else "zh"
        kind = "lives" if (i // 2) % 2 == 0 else "port"
        first, second = (i // 4) % 10, (i // 40) % 6
        subject = {
            ("lives", "en"): f"{FIRST_EN[first]} {LAST_EN[second]}",
            ("port", "en"): f"{COLOURS_EN[first]} {SERVICES_EN[second]}",
            ("lives", "zh"): f"{SURNAMES_ZH[first]}{GIVEN_ZH[second]}",
            ("port", "zh"): f"{CITIES_ZH[first]}{SERVICES_ZH[second]}",
        }[(kind, lang)]
        values = _values(kind, lang, rnd)
        made.append(
            Fact(kind, lang, subject, values[:2] if rnd.random() < 0.3 else values[:1], rnd.randrange(conversations))
        )
    stream = Stream(made)
    confirmed: set[tuple[int, str]] = set()  # (fact, value) a conversation already confirmed
    for c in range(conversations):
        name = f"conv-{c}"
        lang = "en" if c % 2 == 0 else "zh"
        turn = 0
        local = stream_say(
            stream, name, turn, LOCAL[lang].format(v=rnd.choice(TOPICS_EN if lang == "en" else TOPICS_ZH))
        )
        stream.steps.append(Step(name, turn + 1, ref=local, signal="user_referenced"))
        for f in rnd.sample(range(facts), 3):
            fact = made[f]
            current = fact.value_in(c)
            turn += 1
            if rnd.random() < 0.5:  # a wrong guess, which a tool then contradicts
                wrong = next(v for v in _values(fact.kind, fact.lang, rnd) if v not in fact.values)
                guess = stream_say(stream, name, turn, fact.text(wrong, rnd))
                turn += 1
                stream.steps.append(Step(name, turn, ref=guess, signal="contradicted"))
            said = stream_say(stream, name, turn, fact.text(current, rnd, wording=0))
            fact.latest = current
            confirm = (f, current) not in confirmed or rnd.random() < 0.5
            for signal in ("tool_succeeded", "tool_succeeded", "user_affirmed") if confirm else ("user_referenced",):
                turn += 1
                stream_say(stream, name, turn, fact.text(current, rnd))  # restated, often in other words
                stream.steps.append(Step(name, turn, ref=said, signal=signal))
            if confirm:
                confirmed.add((f, current))
    return stream


def stream_say(stream: Stream, conversation: str, turn: int, text: str) -> int:
    stream.steps.append(Step(conversation, turn, say=text))
    return len(stream.steps) - 1


def replay(stream: Stream, db: Path, *, working: bool) -> LedgerApp:
    """Write the stream into a fresh ledger, long-term only or through the working tier."""
    app = LedgerApp(Settings(db=str(db), client="working-tier-eval", embedding=Embedding(enabled=False)))
    ids: dict[int, int] = {}
    tier = "working" if working else "long"
    for index, step in enumerate(stream.steps):
        if step.say:
            answer = app.remember(step.say, session_id=step.conversation, turn=step.turn, tier=tier)
            ids[index] = answer["memory_id"]
        elif working and step.ref is not None:
            try:
                app.reinforce(ids[step.ref], step.signal, session_id=step.conversation, turn=step.turn)
            except InvalidInput as exc:  # a signal after the note's promotion: moot
                if "already promoted" not in str(exc):
                    raise
    return app


def measure(app: LedgerApp, facts: list[Fact]) -> dict[str, float]:
    """Duplicates and open contradictions per 100 facts; the share of current top answers."""
    conn = app.conn
    held: dict[tuple[str, str, str], int] = {}
    for content, subject in conn.execute("SELECT content, subject FROM memories WHERE status='active'"):
        for claim in extract_claims(content, subject):
            key = (claim.subject.casefold(), claim.attribute, claim.value.casefold())
            held[key] = held.get(key, 0) + 1
    duplicates = sum(n - 1 for n in held.values())
    open_sets = app.conflicts(state="open", limit=1)["total"]
    current = 0
    asked = [f for f in facts if f.latest]
    for fact in asked:
        results = app.find(QUESTIONS[(fact.kind, fact.lang)].format(s=fact.subject), limit=1)["results"]
        top = results[0] if results else None
        values = [c.value.casefold() for c in extract_claims(top["content"], top["subject"])] if top else []
        current += fact.latest.casefold() in values
    per100 = 100.0 / len(facts)
    return {
        "long_term_memories": int(conn.execute("SELECT count(*) FROM memories WHERE status='active'").get),
        "duplicates_per_100": round(duplicates * per100, 1),
        "open_contradictions_per_100": round(open_sets * per100, 1),
        "questions": len(asked),
        "top_answer_current": round(current / max(len(asked), 1), 3),
    }


def run(facts: int, conversations: int, seed: int) -> dict[str, Any]:
    stream = generate(facts, conversations, seed)
    out: dict[str, Any] = {
        "facts": facts,
        "conversations": conversations,
        "statements": sum(1 for s in stream.steps if s.say),
        "signals": sum(1 for s in stream.steps if s.signal),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for mode, working in (("long_only", False), ("working", True)):
            started = time.perf_counter()
            app = replay(stream, Path(tmp) / f"{mode}.db", working=working)
            try:
                out[mode] = {**measure(app, stream.facts), "seconds": round(time.perf_counter() - started, 1)}
            finally:
                app.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=60)
    parser.add_argument("--conversations", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    result = run(args.facts, args.conversations, args.seed)
    print(json.dumps(result, ensure_ascii=False, indent=2))
    long_only, working = result["long_only"], result["working"]
    print(
        f"per 100 facts: duplicates {long_only['duplicates_per_100']} -> {working['duplicates_per_100']}, "
        f"open contradictions {long_only['open_contradictions_per_100']} -> {working['open_contradictions_per_100']}; "
        f"top answer current {long_only['top_answer_current']:.0%} -> {working['top_answer_current']:.0%}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
