"""A seeded synthetic corpus of English and Chinese memories with a Zipf-shaped vocabulary.

Real agent memories are short notes: a few common function words, a long tail of names and
jargon, some Chinese text with English identifiers mixed in. Word frequencies follow Zipf's
law (the head is real stop words / 虚词, the tail is generated), so the benchmark sees the
same mix of huge and tiny FTS doclists that a real ledger does. Everything is derived from one
``random.Random(seed)``: a corpus is reproducible run to run.
"""

from __future__ import annotations

import bisect
import itertools
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

EN_HEAD = (
    "the of and to a in is it you that was for on are with as be at have this from or had by not "
    "but what all were we when your can said there use an each which she do how their if will up "
    "other about out many then them these so some her would make like him into time has look two "
    "more write go see number no way could people my than first water been call who its now find "
    "long down day did get come made may part new server deploy user team meeting report"
).split()
_SYLLABLES = (
    "ka lo mi ta re sun ber vel dor pin gra tex mon fal ris cor nat lum sel dra ven tor quil bar "
    "sha min cal port gen vis mar lex tri zen hol fer bra cus dan eph gor iv jun kel nor oss pax"
).split()
ZH_HEAD = (
    "的 是 在 了 我 有 和 就 不 人 都 一 也 很 到 说 要 去 你 会 着 没有 看 好 自己 这 那 他 她 们 "
    "我们 他们 时候 已经 因为 所以 但是 如果 可以 需要 问题 项目 会议 服务器 用户 接口 数据 文件 明天 今天"
).split()
# 3000 code points spread over the CJK block stand in for the ~3500 characters in common use.
_HANZI = [chr(0x4E00 + (i * 7) % 20900) for i in range(3000)]
_MIXED_EN = ("API", "Python", "SQLite", "v2.3", "JSON", "CI", "GPU", "PR", "bug", "staging")
SOURCE_TYPES = ("agent_generated", "agent_generated", "document_extracted", "user_confirmed", "unknown")


def _zipf_cum(n: int, s: float = 1.07, q: float = 2.7) -> list[float]:
    """Cumulative Zipf–Mandelbrot weights for ranks 0..n-1 (for bisect sampling)."""
    return list(itertools.accumulate(1.0 / (r + q) ** s for r in range(n)))


@dataclass(frozen=True)
class Memory:
    content: str
    subject: str
    tags: tuple[str, ...]
    source_type: str
    event_time: str
    lang: str  # "en" or "zh"


class Corpus:
    """Vocabularies and a memory generator; ``memories(n)`` is deterministic for a seed."""

    def __init__(self, seed: int = 7, en_vocab: int = 30000, zh_vocab: int = 20000) -> None:
        self.rng = random.Random(seed)
        rng = random.Random(seed + 1)
        self.en_words = list(dict.fromkeys(EN_HEAD + [self._pseudo_word(rng) for _ in range(en_vocab * 2)]))
        self.en_words = self.en_words[:en_vocab]
        self.en_cum = _zipf_cum(len(self.en_words))
        hanzi_cum = _zipf_cum(len(_HANZI), s=0.9, q=10)
        zh = list(ZH_HEAD)
        while len(zh) < zh_vocab:
            size = rng.choices((1, 2, 3, 4), weights=(10, 70, 15, 5))[0]
            zh.append("".join(_HANZI[bisect.bisect(hanzi_cum, rng.random() * hanzi_cum[-1])] for _ in range(size)))
        self.zh_words = list(dict.fromkeys(zh))
        self.zh_cum = _zipf_cum(len(self.zh_words))
        self.subjects = [" ".join(self._en(rng) for _ in range(rng.randint(1, 2))) for _ in range(2000)]
        self.subjects += ["".join(self._zh(rng) for _ in range(2)) for _ in range(1000)]
        self.tags = [self._pseudo_word(rng) for _ in range(200)]

    @staticmethod
    def _pseudo_word(rng: random.Random) -> str:
        return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))

    def _en(self, rng: random.Random | None = None) -> str:
        r = rng or self.rng
        return self.en_words[bisect.bisect(self.en_cum, r.random() * self.en_cum[-1])]

    def _zh(self, rng: random.Random | None = None) -> str:
        r = rng or self.rng
        return self.zh_words[bisect.bisect(self.zh_cum, r.random() * self.zh_cum[-1])]

    def en_text(self, words: int) -> str:
        sentences, left = [], words
        while left > 0:
            size = min(left, self.rng.randint(4, 14))
            sentence = " ".join(self._en() for _ in range(size))
            sentences.append(sentence[0].upper() + sentence[1:] + ".")
            left -= size
        return " ".join(sentences)

    def zh_text(self, chars: int) -> str:
        out: list[str] = []
        length = 0
        while length < chars:
            word = self.rng.choice(_MIXED_EN) if self.rng.random() < 0.02 else self._zh()
            if word.isascii():
                word = f" {word} "
            out.append(word)
            length += len(word)
            if self.rng.random() < 0.08:
                out.append("，" if self.rng.random() < 0.7 else "。")
        return "".join(out).strip() + "。"

    def memory(self, index: int) -> Memory:
        rng = self.rng
        zh = rng.random() < 0.3
        content = self.zh_text(rng.randint(8, 60)) if zh else self.en_text(int(rng.lognormvariate(2.7, 0.5)) + 3)
        day = rng.randrange(3 * 365)
        month, mday = 1 + (day % 365) // 31, 1 + day % 28
        event_time = f"{2023 + day // 365}-{month:02d}-{mday:02d}T{index % 24:02d}:00:00.000000Z"
        return Memory(
            content=content,
            subject=rng.choice(self.subjects) if rng.random() < 0.6 else "",
            tags=tuple(sorted({rng.choice(self.tags) for _ in range(rng.randint(0, 3))})),
            source_type=rng.choice(SOURCE_TYPES),
            event_time=event_time,
            lang="zh" if zh else "en",
        )

    def memories(self, n: int) -> Iterator[Memory]:
        for i in range(n):
            yield self.memory(i)

    def query(self, memory: Memory) -> tuple[str, str]:
        """A search an agent might type to find ``memory`` again: (kind, text).

        Kinds: a few of its words; a question around them; Chinese words of it; one short
        Chinese word; and a Zipf-head word (the worst case: a term in thousands of memories).
        """
        rng = self.rng
        if memory.lang == "en":
            words = [w.strip(".,").lower() for w in memory.content.split()]
            words = [w for w in words if w and w not in EN_HEAD[:60]] or words
            picked = " ".join(rng.sample(words, min(len(words), rng.randint(1, 3))))
            kind = rng.choice(("en_words", "en_words", "en_question", "head_term"))
            if kind == "en_question":
                return kind, f"what did we decide about the {picked}?"
            if kind == "head_term":
                return kind, rng.choice(EN_HEAD[60:])
            return kind, picked
        words = [w for w in _ZH_WORD.findall(memory.content)]
        if rng.random() < 0.5 and words:
            return "zh_short", min(rng.sample(words, min(3, len(words))), key=len)[:2]
        start = rng.randrange(max(1, len(memory.content) - 6))
        return "zh_words", memory.content[start : start + rng.randint(2, 6)]


_ZH_WORD = re.compile("[\u4e00-\u9fff]+")


def common_queries(memories: list[Memory], n: int, rng: random.Random, share: float = 0.25) -> list[str]:
    """``n`` queries made of the corpus's most frequent content words (never stop words alone, which
    ``find`` drops), each answered by about ``share`` of the memories (any of its words; accepted
    between 0.8x and 1.4x of it): the worst case for candidate generation and ranking, every
    term common."""
    from fact_ledger.ledger.text import STOP_WORDS

    words = [w for w in EN_HEAD if w not in STOP_WORDS]
    holders: dict[str, set[int]] = {w: set() for w in words}
    for i, memory in enumerate(memories):
        for word in {w.strip(".,").lower() for w in memory.content.split()} & holders.keys():
            holders[word].add(i)
    frequent = sorted(words, key=lambda w: -len(holders[w]))[:12]
    out: list[str] = []
    while len(out) < n:
        picked = rng.sample(frequent, rng.randint(4, 9))
        matched = len(set().union(*(holders[w] for w in picked))) / max(len(memories), 1)
        if 0.8 * share <= matched <= 1.4 * share:
            out.append(" ".join(picked))
    return out


def phrase_of(memory: Memory, rng: random.Random) -> str | None:
    """A verbatim phrase of a memory: 3–6 consecutive words, or 4–8 consecutive characters of
    Chinese text (at least 3 of them Chinese, so 1- and 2-character words occur inside it);
    None for the rare Chinese memory too short to hold such a span."""
    text = memory.content
    if memory.lang == "en":
        words = text.split(" ")
        size = min(len(words), rng.randint(3, 6))
        start = rng.randrange(len(words) - size + 1)
        return " ".join(words[start : start + size])
    for _ in range(20):  # a span never cuts an embedded English word in half
        size = min(len(text), rng.randint(4, 8))
        start = rng.randrange(len(text) - size + 1)
        end = start + size
        span = text[start:end]
        if len(_ZH_WORD.sub("", span)) <= len(span) - 3 and not (_cuts_word(text, start) or _cuts_word(text, end)):
            return span
    return None


def _cuts_word(text: str, i: int) -> bool:
    return 0 < i < len(text) and text[i - 1].isascii() and text[i].isascii() and (text[i - 1] + text[i]).isalnum()
