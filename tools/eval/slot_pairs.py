"""A labelled table of statement pairs: which share a claim set, and which must never.

Precision comes first for claim sets: a false set interrupts an agent with a conflict that is not
there (and, with ``settle_changes``, could supersede a fact that still holds). The table pairs
statements an agent writes (English and Chinese), each pair labelled by how it was made:

* ``change`` — one slot, two values, in any of its wordings and formats: should share a set;
* ``restate`` — one slot, one value, other words or another format: must not open a set;
* ``other_entity`` — the same wording about another service, person or project: must not;
* ``other_attribute`` — the same entity, another attribute (its port and its version): must not;
* ``multi_valued`` — relations that hold several values at once ("likes jazz" / "likes techno",
  "speaks French" / "speaks German", "drinks tea" / "drinks coffee", 会说 / 养了): must not.

A false set is a pair of the last four kinds whose claims collide (:func:`ledger.claims.collides`);
recall is the share of ``change`` pairs that do. Deterministic (one seed).

    python -m tools.eval.slot_pairs [--seed 7] [--list]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from typing import Any

from fact_ledger.ledger.claims import collides, extract_claims
from tools.eval.stream_gen import KINDS, _entities, _values

MUST_NOT = ("restate", "other_entity", "other_attribute", "multi_valued")

MULTI_VALUED = [  # (template, values): two values of these hold at once
    ("{p} likes {v}", ["jazz", "techno", "hiking", "chess", "sushi"]),
    ("{p} speaks {v}", ["French", "German", "Spanish", "Japanese"]),
    ("{p} drinks {v}", ["tea", "coffee", "water"]),
    ("{p} has a {v}", ["dog", "cat", "bike"]),
    ("{p} visited {v}", ["Paris", "Tokyo", "Lisbon"]),
    ("{p} knows {v}", ["Python", "Rust", "Go"]),
    ("{p} plays {v}", ["guitar", "tennis", "piano"]),
    ("{p}喜欢{v}", ["爬山", "游泳", "看电影", "下棋"]),
    ("{p}会说{v}", ["英语", "法语", "日语"]),
    ("{p}养了一只{v}", ["猫", "狗", "兔子"]),
    ("{p}去过{v}", ["北京", "上海", "成都"]),
    ("{p}喝{v}", ["茶", "咖啡", "牛奶"]),
    ("The backend team uses {v}", ["Python", "Rust", "Kafka"]),
]
PEOPLE = ["Alice", "Bob", "Carol", "David", "小王", "张伟", "李娜"]
# Written by hand: near misses a template cannot make (label, a, b).
HAND = [
    ("other_entity", "The staging API listens on port 8080", "The staging API gateway listens on port 9090"),
    ("other_entity", "Billing v1 runs on port 8080", "Billing v2 runs on port 9090"),
    ("other_entity", "The Berlin office budget is $50k", "The Paris office budget is $80k"),
    ("other_entity", "Alice's manager is Bob", "Carol's manager is Dan"),
    ("other_entity", "北京办公室的预算是5万元", "上海办公室的预算是8万元"),
    ("other_entity", "订单服务的端口是8080", "订单服务网关的端口是9090"),
    ("other_attribute", "The meeting is on Wednesday", "The meeting is in room 4"),
    ("other_attribute", "Alice's manager is Bob", "Alice's mentor is Carol"),
    ("other_attribute", "The API returns 200", "The API listens on port 8080"),
    ("other_attribute", "The release is scheduled for Friday", "The release version is 2.4.0"),
    ("other_attribute", "The standup starts at 9am", "The standup lasts 15 minutes"),
    ("other_attribute", "项目预算是5万", "项目截止日期是6月9日"),
    ("other_attribute", "支付服务由张伟负责", "支付服务的端口是8080"),
    ("other_attribute", "Bob prefers tea", "Bob prefers the window seat"),
    ("other_attribute", "Alice doesn't eat pork", "Alice doesn't drink coffee"),
    ("multi_valued", "Alice uses Python for the backend", "Alice uses Rust for the CLI"),
    ("multi_valued", "We use Postgres", "We use Redis"),
    ("multi_valued", "Bob likes tea", "Bob likes coffee"),
    ("multi_valued", "小王喜欢喝茶", "小王喜欢喝咖啡"),
    ("multi_valued", "Carol has visited Tokyo", "Carol has visited Lisbon"),
    ("restate", "The on-call engineer is Jun", "Jun is the on-call engineer"),
    ("restate", "The budget is 5万元", "The budget is 50000元"),
    ("restate", "Deploys happen at 3pm", "Deploys happen at 15:00"),
    ("restate", "The API version is v2.3", "The API version is 2.3"),
    ("restate", "Alice lives in Berlin", "Alice has moved to Berlin"),
    ("change", "Alice lives in Berlin", "Alice moved to Paris"),
    ("change", "The API returns 200", "The API now returns 404"),
    ("change", "The on-call engineer is Jun", "The on-call engineer is Priya"),
    ("change", "接口 /api/foo 返回 200", "接口 /api/foo 返回 404"),
    ("change", "The standup is at 9am", "The standup moved to 10:30"),
    ("change", "The standup is at 10:00 on Mondays", "The standup is at 10:30 on Mondays"),
    ("change", "Bob's manager is Carol", "Bob now reports to Dan"),
    ("change", "Eve reports to Frank", "Eve now reports to Grace"),
    ("change", "The VPN portal is at vpn.example.com", "Link to the VPN portal is https://vpn2.example.com"),
    ("restate", "Bob's manager is Carol", "Bob reports to Carol"),
    ("other_entity", "Bob reports to Carol", "Eve reports to Dan"),
    ("other_attribute", "The standup is at 10:00 on Mondays", "The standup is in room 4"),
]


def _say(kind: str, language: str, entity: str, value: str, rng: random.Random, change: bool) -> str:
    k = KINDS[kind]
    return (k.say_zh if language == "zh" else k.say_en)(entity, value, rng, change)


def pairs(seed: int = 7) -> list[dict[str, str]]:
    """The labelled pairs: ``{label, kind, language, a, b}``."""
    rng = random.Random(seed)
    out: list[dict[str, str]] = []
    facts = [(k, lang, e) for k, lang, e, _ in _entities(rng) if k != "diet"]
    by_kind: dict[tuple[str, str], list[str]] = {}
    for kind, language, entity in facts:
        by_kind.setdefault((kind, language), []).append(entity)
    for kind, language, entity in facts:
        one, two = _values(kind, rng, language, 2)
        first = _say(kind, language, entity, one, rng, False)
        made = [("change", _say(kind, language, entity, two, rng, True))]
        made.append(("restate", _say(kind, language, entity, one, rng, rng.random() < 0.3)))
        others = [e for e in by_kind[kind, language] if e != entity]
        if others:
            made.append(("other_entity", _say(kind, language, rng.choice(others), two, rng, False)))
        attribute = {"port": "version", "version": "owner", "owner": "port"}.get(kind)
        if attribute is not None:
            value = _values(attribute, rng, language, 1)[0]
            made.append(("other_attribute", _say(attribute, language, entity, value, rng, False)))
        out += [{"label": label, "kind": kind, "language": language, "a": first, "b": b} for label, b in made]
    for language, people, foods in (("en", ["Alice", "Bob", "Erin"], ["cilantro", "pork", "seafood"]),
                                    ("zh", ["小王", "张伟", "李娜"], ["香菜", "猪肉", "海鲜"])):  # fmt: skip
        for person in people:
            for food in foods:
                entity = f"{person}|{food}"
                no = _say("diet", language, entity, "no", rng, False)
                other = f"{person}|{rng.choice([f for f in foods if f != food])}"
                made = [
                    ("change", _say("diet", language, entity, "yes", rng, True)),
                    ("restate", _say("diet", language, entity, "no", rng, False)),
                    ("other_attribute", _say("diet", language, other, "yes", rng, False)),
                ]
                out += [{"label": label, "kind": "diet", "language": language, "a": no, "b": b} for label, b in made]
    for template, values in MULTI_VALUED:
        language = _language(template)
        for person in [p for p in PEOPLE if p.isascii() == (language == "en")]:
            a, b = rng.sample(values, 2)
            out.append(
                {
                    "label": "multi_valued",
                    "kind": "multi",
                    "language": language,
                    "a": template.format(p=person, v=a),
                    "b": template.format(p=person, v=b),
                }
            )
    out += [{"label": label, "kind": "hand", "language": _language(a), "a": a, "b": b} for label, a, b in HAND]
    return out


def _language(text: str) -> str:
    return "en" if text.isascii() else "zh"


def collide(a: str, b: str) -> bool:
    mine, theirs = extract_claims(a), extract_claims(b)
    return any(collides(x, y) for x in mine for y in theirs)


def run(seed: int = 7) -> dict[str, Any]:
    table = pairs(seed)
    counts = Counter(p["label"] for p in table)
    false_sets = [p for p in table if p["label"] in MUST_NOT and collide(p["a"], p["b"])]
    changes = [p for p in table if p["label"] == "change"]
    missed = [p for p in changes if not collide(p["a"], p["b"])]
    return {
        "pairs": len(table),
        "by_label": dict(sorted(counts.items())),
        "by_language": dict(sorted(Counter(p["language"] for p in table).items())),
        "false_sets": len(false_sets),
        "change_recall": round(1 - len(missed) / len(changes), 3),
        "false_set_pairs": false_sets,
        "missed_changes": missed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--list", action="store_true", help="list the false sets and the missed changes")
    args = parser.parse_args(argv)
    result = run(args.seed)
    if not args.list:
        result.pop("false_set_pairs")
        result.pop("missed_changes")
    json.dump(result, sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
