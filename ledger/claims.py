"""Deterministic claim extraction: ``(subject, attribute, value)`` from English and Chinese text.

A claim is what makes two memories contradict each other, so precision matters more than
recall: a false collision interrupts an agent with a conflict that is not there, a missed one
only leaves the ledger as it was before claims existed. Each clause is matched against
relation patterns ("X returns/is/uses/equals Y", "X: Y", "X = Y", "X 是/为/返回/用/改为/定在 Y",
"X listens on port N", "预算 5万") and kept only when the value is a value — a number with its
unit, a date or time, a version, an on/off word, a name — rather than a description. A clause
with no such relation may still state a taste ("Bob doesn't like jazz", "用户喜欢咖啡"): a
yes/no claim keyed by who and what.

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

from ledger.memo import text_cache
from ledger.normalize import KIND_BOOL, KIND_TEXT, KIND_VERSION, clean_value, leading_value, normalize_text
from ledger.normalize import normalize_value as _normalize_value

MAX_CLAIMS = 20
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_SPLIT = re.compile(f"([{_CJK}]+)")


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


# -- keys --------------------------------------------------------------------------------------
_ALIASES = ((re.compile(r"端口号?|port number"), " port "), (re.compile(r"版本号?"), " version "),
            (re.compile(r"'s\b|’s\b"), " "))
_STOP_TOKENS = frozenset("the a an of for to on at in our my your its their this that these those".split())
_STOP_CHARS = frozenset("的之该这那个本")
_TOKEN_PUNCT = ",.;:!?()[]{}\"'“”‘’「」《》，。：；！？、"


def key_tokens(text: str) -> set[str]:
    """The order-free token set of a subject phrase (see the module docstring)."""
    text = normalize_text(text)
    for pattern, replacement in _ALIASES:
        text = pattern.sub(replacement, text)
    tokens: set[str] = set()
    for i, part in enumerate(_CJK_SPLIT.split(text)):
        if i % 2:
            tokens.update(ch for ch in part if ch not in _STOP_CHARS)
        else:
            for word in part.split():
                word = word.strip(_TOKEN_PUNCT)
                if word and word not in _STOP_TOKENS:
                    tokens.add(word)
    return tokens


# -- relations ---------------------------------------------------------------------------------
# (pattern, relation, value kinds accepted or None for any). Earliest match in a clause wins;
# at one position the longer alternative is listed first.
_EN = r"(?<![\w/-])(?:{})(?![\w-])"
_RELATIONS: tuple[tuple[re.Pattern[str], str, frozenset[str] | None], ...] = tuple(
    (re.compile(p), rel, kinds) for p, rel, kinds in (
        (_EN.format(r"(?:listens|listening|runs|running|is running|is served|serves|is exposed|is reachable|"
                    r"is available|binds|is bound|is listening)\s+(?:on|at|to)\s+port"), "port", None),
        (r"(?:监听在?|运行在|跑在)(?:\s*端口号?)?", "port", None),
        (_EN.format(r"(?:now\s+)?(?:returns|responds with|replies with|is returning|answers with)"), "returns", None),
        (r"返回(?:的是|值为|值是|了)?", "returns", None),
        (_EN.format(r"(?:now\s+)?(?:uses|is using|relies on|is built on|is written in|runs on)"), "uses", None),
        (r"改用|使用|采用|用的是|(?<![费作应有运启适通信占])用(?![户于来法途到])", "uses", None),
        (_EN.format(r"costs|is priced at|will cost"), "costs", None),
        (_EN.format(r"(?:lives|live|is living|has lived|resides|is based|now lives)\s+in|"
                    r"(?:relocated|has relocated|has moved|is moving|will move)\s+to"), "lives in",
         frozenset({"text"})),
        (r"住在|居住在|定居在?|搬到了?|搬去了?|移居到?", "lives in", frozenset({"text"})),
        (_EN.format(r"(?:works|work|is working|am working|now works|started working|(?:is|am|are) employed)"
                    r"\s+(?:at|for|by)"), "works at", frozenset({"text"})),
        (_EN.format(r"(?:has been|was|is|got|been)\s+(?:changed|moved|set|updated|rescheduled|postponed|pushed|"
                    r"bumped|switched)\s+to|is scheduled (?:for|on|at)|is set (?:for|to)|is now|is currently|"
                    r"is still|will be|equals|is equal to|becomes|moved to|changed to|is|are"), "is", None),
        (r"已?(?:改为|改成|改到|变为|变成|变更为|调整为|调整到|更新为|设为|设置为|设定为|定在|定于|安排在|挪到|"
         r"推迟到|提前到|延期到|等于|就是)|(?<![但还于总可只要凡倒真老不否])是(?![否不])|"
         r"(?<![因作认成以称行视为更较极最])为(?![了什何止主])", "is", None),
        (r"(?<![现正存所实自好])在(?=周|星期|礼拜|\d|上午|下午|晚上|中午|早上|凌晨|[一二三四五六七八九十]+月)", "is",
         frozenset({"when"})),
        (r"\s*(?:==|=)\s*", "is", None),
        (r":\s+|：\s*", "colon", None),
    )
)
# One pass finds the leftmost relation; at one position the earlier entry above wins.
_ANY_RELATION = re.compile("|".join(f"(?P<r{i}>{p.pattern})" for i, (p, _, _) in enumerate(_RELATIONS)))
_IMPLICIT = re.compile(
    r"^(?P<left>.*?(?:预算|金额|价格|费用|截止日期|截止时间|日期|端口号?|版本号?|budget|price|deadline|due date|"
    r"(?<![a-z])port|(?<![a-z])version))\s*(?P<value>.+)$")
_NEGATED_LEFT = re.compile(r"(?:\bnot|n't|\bno longer|\bnever|不|没|没有|并非|非|不再|未)\s*$")
_HEDGED = re.compile(r"(?:\b(?:maybe|perhaps|probably|might|may|could|should|would|if|whether|unless)\b|可能|也许|"
                     r"大概|或许|如果|假如|是否|应该|估计)")
_LEFT_FILLERS = re.compile(
    r"^(?:(?:note that|note|fyi|i think|we think|i believe|it seems|so|also|and|but|now|currently|today|"
    r"update|correction|actually|apparently|confirmed|heads up|btw|现在|目前|当前|如今|今天|据说|注意|另外|然后|"
    r"其实|最新|更新|确认|听说|已经|所以|而且|并且|但是|不过|经确认)[\s:,，：]*)+")
_LEFT_TRAILERS = re.compile(r"(?:\s*(?:现在|目前|已经|已|也|还|都|将|会|仍然|仍|依然|一直|则|就|正在|现|暂时|统一|"
                            r"去年|今年|前年|最近|上个月|上周|刚刚|刚|now|currently|still|also|recently|just))+$")
# When a thing happened is not part of what happened: "moved to Berlin last year" is Berlin.
_TRAILING_TIME = re.compile(r"(?:\s+(?:(?:last|this|next)\s+(?:year|month|week|weekend|summer|winter|spring|fall|"
                            r"autumn)|recently|yesterday|today|lately|now|currently|these days|"
                            r"(?:a|one|two|three|a few|\d+)\s+(?:years?|months?|weeks?|days?)\s+ago|in\s+\d{4}))+$")
_PRONOUNS = frozenset("it this that he she they there here we i you these those 这 那 它 他 她 这个 那个 此 "
                      "我 我们 你 你们 他们 她们".split())
# "a developer", "not ready", "my stress relief", "our top priority": a description, not a value.
_NOT_A_VALUE_START = ("a ", "an ", "not ", "no ", "my ", "our ", "his ", "her ", "their ", "your ", "不", "没", "非",
                      "我的", "我们的", "他的", "她的")
_VAGUE_START = frozenset("""almost just really so super very both also always still one like why how what where
    when who whom which whose most more less such quite pretty kind sort all too even the on in at for to from with
    of about by into over under like as than there here everything something nothing anything going doing getting
    being having making""".split())
_DEMONSTRATIVES = frozenset("it this that these those there here 这 那 它 这个 那个 此".split())
_PERSONS = frozenset("i we he she they 我 我们 你 你们 他 她 他们 她们".split())  # pronouns that stand for people
# Remarks, not attributes: "the problem is …", "the reason is …", "重点是 …".
_DISCOURSE = frozenset("""problem issue point reason thing idea truth question answer catch trick plan result
    difference fact 问题 重点 原因 关键 结果 意思 目的 好处 坏处 事实 情况 答案 区别 麻烦 难点""".split())
_MOVED = re.compile(r"\bmoved to$")
_QUESTION_START = re.compile(
    r"^(?:what|which|who|how|why|when|where|whether|is|are|does|do|哪|什么|谁|如何|为什么|怎么)\b")
_GENERIC_LABELS = frozenset(
    "note notes todo tip tips update reminder warning summary example question answer context status update "
    "fyi result results 注意 备注 提醒 更新 总结 例如 问题 回答 说明 结论".split())
# What a person says, not a value: "Caroline: Hey Mel!", "Bob: I think so". A colon followed by
# one of these (or by a long clause) marks a speaker label, and only the utterance is read.
_UTTERANCE_START = frozenset(
    "i i'm i've i'd i'll me my we we're we've our you you're you've you'd your he he's she she's they "
    "they're it it's its that that's this there there's here what what's hey hi hello wow thanks thank yeah "
    "yes yep yup no nope oh ok okay sure well so totally haha lol omg aw aww awesome cool great nice sounds "
    "good congrats congratulations sorry please hmm um just really gonna wanna let's can could would "
    "did do does have had was were".split())
_SPEAKER_LINE_WORDS = 5
# Relations that hold several values at once when people hold them ("uses"); the verbs that are
# always several-valued (speaks, knows, owns, visited, 会说 …) are no relation here at all.
_GROUPS = frozenset("""team teams we us everyone people company companies org organization organisation
    department group squad crew staff engineers developers devs users customers family""".split())
_GROUPS_ZH = ("团队", "我们", "公司", "小组", "部门", "大家", "组里", "家里")
_QUALIFIER_END = re.compile(r"\s*[,.;:!?()]|\s+(?:because|since|but|which|and|so|while|when|until)\b")
_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
_VALUE_PREPOSITIONS = re.compile(r"^(?:(?:on|at|in|for|by|to|until|around|about)\b|约|大约|大概|在|于)\s*")
_VALUE_NOUN = re.compile(r"^(?P<noun>port|version|端口号?|版本号?)\s*(?=[v\d])")
_EN_VALUE_END = re.compile(r"\s+(?:because|since|so that|so|but|which|where|when|while|for|in order|and|until|"
                           r"after|before|unless|if|as)\b|,\s|\s\(|\s[-–—]\s")
_ZH_VALUE_END = re.compile(r"因为|所以|但是|而且|并且|以便|（|\(|，")
_ZH_PARTICLES = re.compile(r"(?:了|啦|呢|吧|哦|呀|的话|左右|上下)+$")
_DESCRIPTIVE = frozenset(
    """fast slow quick easy hard difficult simple complex important critical urgent stable unstable flaky broken
    fixed ready done finished complete incomplete good bad great fine ok okay nice better worse best worst big
    small large huge tiny high low long short new old late early busy full empty safe unsafe secure insecure
    correct wrong right valid invalid experimental expensive cheap available unavailable required optional
    necessary possible impossible likely unlikely happy sad tired healthy sick clean dirty messy reliable
    unreliable responsive weird strange confusing clear unclear very really quite too so pretty extremely
    not no never always usually sometimes often mostly fully partly deprecated legacy slower faster
    awesome amazing awful terrible wonderful fantastic cool fun funny lovely beautiful gorgeous sweet kind
    special vital key crucial essential inspiring exciting interesting boring tough cute adorable scary rough
    worth gonna tenuous""".split())
_PARTICIPLES = frozenset("""written taken given broken chosen hidden frozen forgotten driven proven spoken stolen
    shaken known shown done gone seen run built set put kept held made paid sent spent""".split())
_NAMED = re.compile(r"[A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*){0,2}")  # "Bob", "Alice Chen": no article
_DESCRIPTIVE_SUFFIX = re.compile(r"(?:ed|ing|ly|ful|ous|ive|able|ible|less|ish)$")
_SENTENCES = re.compile(r"(?<=[。！？!?；;\n])|(?<=[.])(?=\s)")
_CLAUSES = re.compile(r"[，]|,?\s+(?:and|but|while|whereas)\s+(?=(?:the\s+)?[\w/.-]+\s+(?:is|are|returns|uses)\b)")


def _strip_left(left: str) -> str:
    left = _LEFT_FILLERS.sub("", left.strip(" \t,，:：-*#>·•"))
    left = _LEFT_TRAILERS.sub("", left).strip(" ,，:：-")
    return left.strip(_TOKEN_PUNCT + " ")


def _value_text(raw: str) -> str:
    cut = _EN_VALUE_END.search(raw) if raw.isascii() else _ZH_VALUE_END.search(raw)
    text = raw[: cut.start()] if cut else raw
    text = _TRAILING_TIME.sub("", text.strip().rstrip(" .,;:!?。，；：！？、"))
    return _ZH_PARTICLES.sub("", text)


def _is_value(kind: str, display: str, relation: str, cased: str, left: str = "") -> bool:
    """Reject descriptions ("is fast", "是稳定的", "is a developer") that are not single values.

    ``cased`` is the clause before case folding: a capitalised word is a name ("is Sterling");
    ``left`` is what the claim is about (folded).
    """
    if kind != KIND_TEXT:
        return True
    text = clean_value(display)
    if not any(ch.isalnum() for ch in text) or len(text) > 80 or normalize_text(display).startswith(_NOT_A_VALUE_START):
        return False
    words = text.split()
    if text.isascii():
        if len(words) > (8 if relation == "colon" else 5):
            return False
        first = words[0]
        written = _as_written(first, cased)
        if written is not None and written[0].isupper():
            return True
        if relation == "works at":
            return False  # an employer is a name: "joined the book club" is not a job
        if relation in ("is", "colon") and len(words) > 1 and _vague(words):
            return False  # "almost here", "definitely on my to-do list", "both inspiring": a remark
        descriptive = first in _DESCRIPTIVE or (
            len(words) == 1 and bool(_DESCRIPTIVE_SUFFIX.search(first)) and not re.search(r"[\d/._@-]", first))
        passive = relation == "is" and (re.fullmatch(r"[a-z]{3,}(?:ed|ing)", first) is not None
                                        or first in _PARTICIPLES)
        # "Bob is tall", "Bob is vegetarian": one lowercase word about a named someone is one of
        # many things true of them, not the value of an attribute ("the default branch is main").
        trait = relation == "is" and len(words) == 1 and not re.search(r"[\d/._@]", first) and _named(left, cased)
        return not (relation in ("is", "colon") and descriptive) and not passive and not trait
    return not text.endswith("的") and len(text) <= 30


def _vague(words: list[str]) -> bool:
    """A lowercase phrase that remarks rather than names a value: it opens with an adverb, a
    quantifier, a wh-word or a preposition, or ends on a description ("blue green", "staging
    server" are values; "truly magical", "one of my favorites", "what makes me smile" are not)."""
    first, last = words[0].strip(_TOKEN_PUNCT), words[-1].strip(_TOKEN_PUNCT)
    return first in _VAGUE_START or first.endswith("ly") or first in _DESCRIPTIVE or last in _DESCRIPTIVE


def _named(left: str, cased: str) -> bool:
    """``left`` stands in the clause as a capitalised name with no article ("Bob", "Alice Chen")."""
    if not left or not left.isascii():
        return False
    written = _as_written(left, cased)
    return written is not None and _NAMED.fullmatch(written) is not None


def _as_written(phrase: str, cased: str) -> str | None:
    """The first place the clause wrote ``phrase`` (folded words), with its own case: "bob chen" →
    "Bob Chen". Word by word rather than a regex built per phrase, which would be compiled anew
    for nearly every clause."""
    want = phrase.split()
    words = [w.strip(_TOKEN_PUNCT) for w in cased.split()]
    for i in range(len(words) - len(want) + 1):
        if [w.lower() for w in words[i:i + len(want)]] == want:
            return " ".join(words[i:i + len(want)])
    return None


def _parse_value(raw: str, hint: str) -> tuple[str, str, str, str] | None:
    """``(display, kind, canonical, qualifier)`` of the value at the start of ``raw``.

    The qualifier is a noun folded into the key ("port 8080") or, for a text value, the
    preposition it came with: "Bob is in Berlin" and "Bob is on vacation" are not one attribute.
    """
    raw = normalize_text(raw)
    preposition = _VALUE_PREPOSITIONS.match(raw)
    raw = raw[preposition.end():] if preposition else raw
    noun = ""
    if match := _VALUE_NOUN.match(raw):
        noun = "port" if "port" in match["noun"] or "端口" in match["noun"] else "version"
        raw = raw[match.end():]
    typed = leading_value(raw, hint=hint + " " + noun)
    if typed is not None:
        kind, canonical, end = typed
        return raw[:end].strip(), kind, canonical, noun
    display = _value_text(raw)
    if not display:
        return None
    kind, canonical = _normalize_value(display, hint=hint)
    if kind == KIND_TEXT and preposition and not noun:
        noun = preposition.group().strip()
    return display, kind, canonical, noun


def _make(subject_text: str, left: str, relation: str, value: tuple[str, str, str, str],
          origin: str = "content", qualifier: str = "") -> Claim | None:
    display, kind, canonical, noun = value
    rel = "is" if relation in ("colon", "port") else relation
    if noun not in ("", "port", "version"):  # a text value's preposition qualifies the relation
        rel, noun = f"{rel} {noun}", ""
    if qualifier:  # "uses Rust for the CLI" and "uses Python for the backend" are two attributes
        rel = f"{rel} {qualifier}"
    tokens = key_tokens(subject_text) | key_tokens(left)
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
        rest = " ".join(w for w in _LEADING_ARTICLE.sub("", left).split() if w.strip(_TOKEN_PUNCT) not in own)
        prefix = normalize_text(subject_text)
        if left.startswith(prefix):  # 项目预算 under subject 项目 reads 预算
            rest = left[len(prefix):].strip()
        rest = rest or left
        attribute = rest if rel == "is" and relation != "port" else f"{rest} {attribute}"
    if qualifier:
        attribute = f"{attribute} {qualifier}"
    return Claim(subject=subject, attribute=attribute, value=display, kind=kind,
                 key_subject=" ".join(sorted(tokens)), key_attribute=rel, value_norm=canonical, origin=origin)


_SPEAKER_LABEL = re.compile(r"^\s*[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}:\s+(?P<said>\S.*)", re.DOTALL)


def _without_speaker_label(content: str) -> str:
    """A chat line ("Melanie: Bye, Caroline! Have fun.") is read as what the speaker said."""
    match = _SPEAKER_LABEL.match(content)
    if match is None or not _is_utterance(match["said"].lower()):
        return content
    return match["said"]


def _is_utterance(after_colon: str) -> bool:
    """A speaker's words rather than a label's value: a long clause, or a pronoun/interjection first."""
    words = after_colon.split()
    return len(words) > _SPEAKER_LINE_WORDS or (bool(words) and words[0].strip(",.!?") in _UTTERANCE_START)


def _clause_claim(clause: str, subject: str) -> Claim | None:
    text = normalize_text(clause)
    cased = unicodedata.normalize("NFKC", clause)
    if not text or _HEDGED.search(text):
        return None
    best: tuple[int, int, str, frozenset[str] | None] | None = None
    match = _ANY_RELATION.search(text)
    if match is not None and match.lastgroup is not None:
        _, relation, kinds = _RELATIONS[int(match.lastgroup[1:])]
        best = (match.start(), match.end(), relation, kinds)
    if best is None:
        implicit = _IMPLICIT.match(text)
        if implicit is None:
            return None
        best = (implicit.start("value"), implicit.start("value"), "implicit", frozenset({"number", "when", "version"}))
        left_raw = implicit["left"]
    else:
        left_raw = text[: best[0]]
    _, end, relation, kinds = best
    if _NEGATED_LEFT.search(left_raw) or _QUESTION_START.match(text):
        return None
    left = _strip_left(left_raw)
    if not left and relation != "colon" and left_raw.strip(_TOKEN_PUNCT + " "):
        return None  # only a filler or a time stood there: "今天是星期五", "today is Friday"
    if relation == "colon" and (not left or left in _GENERIC_LABELS or _is_utterance(text[end:])):
        # "Note: the API returns 200", "Caroline: I moved to Berlin": read what follows the label
        return _clause_claim(clause[clause.find(":") + 1:] if ":" in clause else text[end:], subject)
    if relation == "colon" and (not left or len(left.split()) > 6):
        return None
    someone = left in _PERSONS  # I, he, 我, 他…: a person the clause does not name
    person = someone or _named(left, cased)
    pointed = left in _DEMONSTRATIVES  # "that's what makes me smile": about something unnamed
    if left in _PRONOUNS:
        left = ""
    if not left and not subject.strip():
        return None
    if (left.isascii() and len(left.split()) > 8) or (not left.isascii() and len(left) > 24):
        return None
    if re.match(r"^(?:not|no longer|never)\b", text[end:].strip()):
        return None
    value = _parse_value(text[end:], hint=left + " " + subject)
    if value is None or (kinds is not None and value[1] not in kinds):
        return None
    if not _is_value(value[1], value[0], relation, cased, left):
        return None
    if relation == "is" and value[1] == KIND_TEXT and value[3] == "to":
        return None  # "my goal is to give kids a home": a purpose, not a value
    if pointed and relation in ("is", "colon") and value[1] == KIND_TEXT:
        return None  # "this is my lucky pair of shoes"; "it listens on port 8080" still reads the subject
    if relation == "is" and person and value[1] == KIND_TEXT and _MOVED.search(text[best[0]:end]):
        relation = "lives in"  # "Bob moved to Berlin" is where Bob lives; "the standup moved to 10am" is not
    if relation == "is" and value[1] == KIND_TEXT and (someone or _LEADING_ARTICLE.sub("", left) in _DISCOURSE):
        return None  # "我是老师", "他是我哥哥": what someone is; "the problem is …", "原因是 …": a remark
    if relation == "works at" and not person:
        return None  # "the fix works for Chrome" is not an employer
    if relation == "uses" and value[1] == KIND_TEXT and (person or _is_group(left or subject)):
        return None  # people and teams use many things at once: "… uses Python" and "… uses Rust" both hold
    return _make(subject, left, "is" if relation == "implicit" else relation, value, qualifier=_qualifier(text[end:]))


def _is_group(left: str) -> bool:
    """People as a group ("the backend team", "we", "our company", "团队"): they hold many tools."""
    words = normalize_text(left).split()
    return bool(words) and (words[-1] in _GROUPS or any(left.endswith(g) for g in _GROUPS_ZH))


def _qualifier(rest: str) -> str:
    """"for <what>" right after the value ("uses Rust for the CLI"): it narrows what the claim is about."""
    if not rest.isascii():
        return ""
    cut = _EN_VALUE_END.search(rest)
    if cut is None or cut.group().strip() != "for":
        return ""
    what = _QUALIFIER_END.split(_LEADING_ARTICLE.sub("", rest[cut.end():].strip()), maxsplit=1)[0]
    what = " ".join(w for w in what.split() if w not in _STOP_TOKENS)
    return f"for {what}" if what and len(what.split()) <= 4 else ""


# -- preferences -------------------------------------------------------------------------------
# "Bob likes jazz" / "Bob doesn't like jazz", "用户喜欢咖啡" / "用户不喜欢咖啡": a yes/no claim keyed
# by what is liked, so a changed taste collides and two different tastes never do.
_LIKE_EN = re.compile(
    r"^(?P<who>.*?)\s*(?<![\w'’])(?P<neg>does not|doesn['’]t|do not|don['’]t|no longer|never)?\s*"
    r"(?<![\w'’])(?P<verb>(?:likes|loves|enjoys|dislikes|hates)|(?:like|love|enjoy|dislike|hate))\s+(?P<what>.+)$")
_LIKE_ZH = re.compile(r"^(?P<who>.*?)(?P<neg>不再|不太|并不|从不|不)?(?P<verb>喜欢|讨厌|爱吃|爱喝)(?P<what>.+)$")
_FIRST_PERSON = frozenset("i we you they 我 我们 你 你们 他们 她们".split())  # bare "like" follows these
_DEGREE = re.compile(r"(?:最|很|非常|特别|比较|更|也|还|都|一直|真的)+$|(?:\s+(?:really|truly|absolutely|definitely|"
                     r"actually|generally|usually|always|totally|genuinely|particularly|especially))+$")
_TASTE_WORD = re.compile(r"(?i:like|love|enjoy|hate)|喜欢|讨厌|爱吃|爱喝")
_TASTE_TRAILERS = re.compile(r"(?:\s+(?:anymore|any more|now|too|either|a lot|very much|so much|at all|much))+$")
_NOT_A_TASTE = frozenset("it this that them him her you me us 它 这 那 这个 那个 你 我 他 她 你们 我们 他们 她们"
                         .split())


def _preference_claim(clause: str, default_who: str) -> tuple[Claim, str] | None:
    """The clause's like/dislike claim and who it is about (``default_who`` for "I", "不喜欢茶")."""
    if _TASTE_WORD.search(clause) is None:  # most clauses: one cheap scan instead of the parse
        return None
    text = normalize_text(clause)
    if not text or _HEDGED.search(text) or _QUESTION_START.match(text):
        return None
    chinese = _CJK_SPLIT.search(text) is not None
    match = _LIKE_ZH.match(text) if chinese else _LIKE_EN.match(text)
    if match is None:
        return None
    verb, negated = match["verb"], match["neg"] is not None
    who = _DEGREE.sub("", _strip_left(match["who"])).strip()
    if not verb.endswith("s") and not chinese and not negated and who not in _FIRST_PERSON:
        return None  # a bare "like" is a preposition ("looks like rain") unless "I like", "don't like"
    disliked = verb.startswith(("dislike", "hate", "讨厌"))
    if negated and disliked:
        return None  # "doesn't hate" says little
    if who in _PRONOUNS or not who:  # "I like …", "他喜欢 …", "不喜欢茶": whom the memory is about
        who = default_who
    what = _LEADING_ARTICLE.sub("", _TASTE_TRAILERS.sub("", _value_text(match["what"]))).strip(_TOKEN_PUNCT + " ")
    if not who.strip() or not what or what in _NOT_A_TASTE or len(what.split()) > 5 or len(what) > 40:
        return None
    if chinese and ("是" in who or what.startswith("的")):
        return None  # "这是我最喜欢的书": a favourite thing named, not a taste stated
    tokens = key_tokens(who)
    if not tokens:
        return None
    liked = not (negated or disliked)
    attribute = f"喜欢{what}" if chinese else f"likes {what}"
    claim = Claim(subject=who, attribute=attribute, value="yes" if liked else "no", kind=KIND_BOOL,
                  key_subject=" ".join(sorted(tokens)), key_attribute=attribute,
                  value_norm="true" if liked else "false")
    return claim, who


def _clauses(content: str) -> Iterable[str]:
    for sentence in _SENTENCES.split(content[:20_000]):
        sentence = sentence.strip()
        if not sentence or sentence.endswith(("?", "？")):
            continue
        yield from (c for c in _CLAUSES.split(sentence.rstrip("。！!；;.\n ")) if c and c.strip())


def explicit_claim(subject: str, attribute: str, value: str) -> Claim | None:
    """A caller-given claim, keyed like an extracted one ("port" folds into the subject)."""
    relation = normalize_text(attribute)
    relations = {"returns": "returns", "return": "returns", "返回": "returns", "uses": "uses", "use": "uses",
                 "使用": "uses", "用": "uses", "costs": "costs", "cost": "costs", "is": "is", "=": "is", "是": "is"}
    rel = relations.get(relation)
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
    for clause in _clauses(_without_speaker_label(content)):
        claim = _clause_claim(clause, subject)
        if claim is None and (preference := _preference_claim(clause, who)) is not None:
            claim, who = preference
        if claim is not None:
            out.setdefault(claim.key, claim)
        if len(out) >= MAX_CLAIMS:
            break
    return tuple(out.values())


def extract_claims(content: str, subject: str = "",
                   explicit: Iterable[tuple[str, str, str]] = ()) -> tuple[Claim, ...]:
    """Explicit claims first, then one claim per clause of ``content``; at most one per key."""
    return _extract(content, subject, tuple(explicit))


def collides(mine: Claim, other: Claim) -> bool:
    """Same key and a different normalised value."""
    from ledger.normalize import same_value

    return mine.key == other.key and not same_value(mine.kind, mine.value_norm, other.value_norm)


__all__ = ["KIND_BOOL", "Claim", "collides", "explicit_claim", "extract_claims", "key_tokens"]
