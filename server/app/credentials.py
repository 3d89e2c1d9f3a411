"""Credentials never enter the log: ``remember`` and ``update`` scan what they would write.

The detectors are detect-secrets' regex plugins (private keys, AWS key ids, GitHub, GitLab,
Slack, Stripe, OpenAI, SendGrid, Twilio, Discord, Telegram, PyPI, Azure storage, Mailchimp,
Square), run on the text itself, without a repository scan, plus a few patterns of our own where
the detector has none or finds only part of the secret: a JSON Web Token with its signature, a
whole PEM block, newer key shapes (``sk-proj-…``, ``sk-ant-…``, ``github_pat_…``, ``npm_…``,
``hf_…``, Google's ``AIza…``, Stripe test keys, AWS secret keys named as such), the password of a
connection string (``postgres://user:pass@host``, which detect-secrets' basic-auth plugin misses
when the password holds ``!`` or ``$``), "password is …" / "密码是…" phrases, passwords given as
command-line flags (``--password …``, ``mysql -p…``, ``curl -u user:…``) and the credentials of an
``Authorization`` header.

Left out on purpose: detect-secrets' high-entropy plugins (hex and base64), its keyword plugin
and the keyword-based IBM/Softlayer/Cloudant/Artifactory ones. On ordinary prose they flag commit
hashes, UUIDs, digests and words after "token"/"secret"; a memory about a release ("fixed in
3f9c2e1…") must pass. docs/governance.md ("Secrets") lists the shapes and the measured rate.

A finding is ``(field, kind, start, end)``: ``start``/``end`` are character offsets (0-based, end
exclusive) in that field's text; metadata and tags name the path (``metadata.db.url``, ``tags.2``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from fact_ledger.ledger.errors import InvalidInput, LedgerError

ON_SECRET = ("refuse", "mask")


@dataclass(frozen=True, slots=True)
class Secret:
    """One credential found: where (field path, character span) and what kind."""

    field: str
    kind: str
    start: int
    end: int

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "kind": self.kind, "start": self.start, "end": self.end}


# (kind, pattern, group whose span is the secret (0: the whole match), gate): a detector runs only
# when its gate holds, so ordinary text costs a few substring tests. The gate is ``None`` for a
# token shape (every one holds a run of 16+ token characters: :data:`_TOKEN_RUN`), else words of
# which one must be in the text (lowercased).
_Detector = tuple[str, re.Pattern[str], int, tuple[str, ...] | None]
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_-]{16}")  # documents the gate; find() tests a cheaper superset


def _plugin(
    kind: str, plugin: Any, *, only: int | None = None, group: int = 0, gate: tuple[str, ...] | None = None
) -> list[_Detector]:
    patterns = list(plugin.denylist)
    return [(kind, p, group, gate) for p in (patterns if only is None else patterns[only : only + 1])]


# A secret value that is a placeholder (``${PGPASSWORD}``, ``<password>``, ``****``, ``PASSWORD``,
# ``secret``), not a secret: documentation and templates are full of them; our own mask's
# (``[secret:password]``) among them, so a masked text is clean when it is written again.
_PLACEHOLDER = re.compile(
    r"^(?:\$\{?\w*\}?|<[^>]*>|\{\{?[^}]*\}?\}|\*+|x+|X+|\.{3}|…|[A-Z_]+|\[secret:[\w-]+\]?"
    r"|(?i:pass(?:word)?|passwd|pwd|secret|redacted|hidden|changeme|your[_-]?\w+))$"
)
_PEM = re.compile(
    r"-----BEGIN ((?:RSA |DSA |EC |OPENSSH |ENCRYPTED )?PRIVATE KEY|PGP PRIVATE KEY BLOCK)-----"
    r"(?:.*?-----END \1-----|(?:\s*[A-Za-z0-9+/=]+)*)",  # without its end line: the key's text that follows
    re.DOTALL,
)
_OWN: list[_Detector] = [
    ("private-key", _PEM, 0, ("private key",)),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), 0, None),
    (
        "openai-key",
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"),
        0,
        None,
    ),
    ("openai-key", re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}"), 0, None),
    ("anthropic-key", re.compile(r"\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{32,}"), 0, None),
    ("api-key", re.compile(r"\bsk-[A-Za-z0-9]{32,}\b"), 0, None),  # the sk-… shape of many services
    ("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b"), 0, None),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), 0, None),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{34}\b"), 0, None),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"), 0, None),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_test_[0-9a-zA-Z]{24,}\b"), 0, None),
    (
        "aws-secret-key",
        re.compile(
            r"aws.{0,20}?(?:secret|key).{0,20}?(?:[=:]|\bis\b)\s*[\"']?([0-9a-zA-Z/+]{40})(?![0-9a-zA-Z/+])",
            re.IGNORECASE,
        ),
        1,
        None,  # the 40 characters are a long word
    ),
    # an HTTP header's credentials: "Authorization: Bearer …", "Authorization: Basic …" (one with a
    # digit: "Bearer authentication" names a scheme, "$TOKEN" a variable)
    (
        "authorization",
        re.compile(
            r"(?i:\bauthorization)[\"']?\s*:\s*[\"']?(?i:basic|bearer|token)\s+(?=[^\s\"']*\d)([A-Za-z0-9._~+/-]{8,}=*)"
        ),
        1,
        ("authorization",),
    ),
    # a connection string's password: scheme://user:PASSWORD@host (user may be empty)
    (
        "connection-password",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/?#\[\]@]*:([^\s/?#\[\]@]+)@"),
        1,
        ("://",),
    ),
]


def _grouped(detectors: list[_Detector]) -> tuple[list[_Detector], list[tuple[tuple[str, ...], list[_Detector]]]]:
    """The token shapes, and the others grouped by gate (each gate tested once a scan)."""
    gates = dict.fromkeys(d[3] for d in detectors if d[3] is not None)
    return [d for d in detectors if d[3] is None], [(g, [d for d in detectors if d[3] == g]) for g in gates]


_OWN_TOKEN, _OWN_GATED = _grouped(_OWN)


@functools.cache
def _plugins() -> list[_Detector]:
    """detect-secrets' regex plugins as detectors. Every shape they find holds a word of 16
    characters or more (the token gate), and only such a text imports detect-secrets (~0.2 s: it
    brings requests), so a short note never pays for it."""
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.mailchimp import MailchimpDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector
    from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
    from detect_secrets.plugins.twilio import TwilioKeyDetector

    return [
        *_plugin("aws-access-key", AWSKeyDetector, only=0),
        *_plugin("aws-secret-key", AWSKeyDetector, only=1, group=1),
        *_plugin("github-token", GitHubTokenDetector),
        *_plugin("gitlab-token", GitLabTokenDetector),
        *_plugin("slack-token", SlackDetector, only=0),
        *_plugin("slack-webhook", SlackDetector, only=1),
        *_plugin("stripe-key", StripeDetector),
        *_plugin("openai-key", OpenAIDetector),
        *_plugin("sendgrid-key", SendGridDetector),
        *_plugin("twilio-key", TwilioKeyDetector),
        *_plugin("discord-token", DiscordBotTokenDetector),
        *_plugin("telegram-token", TelegramBotTokenDetector),
        *_plugin("pypi-token", PypiTokenDetector),
        *_plugin("azure-storage-key", AzureStorageKeyDetector),
        *_plugin("mailchimp-key", MailchimpDetector),
        *_plugin("square-secret", SquareOAuthDetector),
    ]


_PHRASE_GATE = ("pass", "pwd", "key", "secret", "token")  # also _ASSIGNED's words (lowercased)
_PHRASE_ZH_GATE = ("密码", "口令", "密钥")

# "the password is hunter2-Prod!", "password: 's3cr3t'", "api_key=…", "密码是 hunter2"; a quoted
# value runs to its closing quote ("the password is 'correct horse battery staple'")
_PHRASE = re.compile(
    r"(?i:\b(?:pass(?:word|wd|phrase)?|pwd|api[ _-]?key|secret[ _-]?key|client[ _-]?secret|access[ _-]?token"
    r"|auth[ _-]?token)\b)(?:\s+(?:is|was)(?P<colon>\s*:)?|\s+=|(?P<colon2>\s*:)|\s*=)\s*(?:now\s+|still\s+)?"
    r"(?:(?P<quote>[\"'“‘`])(?P<quoted>[^\"'”’`\n]{1,200})[\"'”’`]|(?P<value>[^\s\"'”’`]+))"
)
_PHRASE_ZH = re.compile(
    r"(?:密码|口令|密钥)(?:是|为|：|:|=)\s*(?:[\"'“‘「](?P<quoted>[^\"'”’」\n]{1,200})[\"'”’」]|(?P<value>[!-~]{4,}))"
)
# "PGPASSWORD=…", "export DB_PASSWORD=…", "OPENAI_API_KEY=…", "GITHUB_TOKEN: …": a variable named
# for a credential, set (not a reference to one: "$SECRET", "${TOKEN}")
_ASSIGNED = re.compile(
    r"(?<![\w.$-])(?P<name>(?:[A-Za-z][A-Za-z0-9]*_)+[A-Za-z0-9]*(?i:password|passwd|pwd|secret|token|api_?key|access_?key"
    r"|private_?key)|[A-Z0-9]*(?:PASSWORD|PASSWD|PWD|SECRET|TOKEN|APIKEY|API_KEY|ACCESS_KEY|PRIVATE_KEY))"
    r"\s*[=:]\s*[\"']?(?P<value>[^\s\"'$]{4,})"
)
# after "password is:" / "password:" the value may hold spaces: the rest of the clause, when short
_CLAUSE_REST = re.compile(r"[^\n.;,!?。，；！？()]{0,80}")
_TRAILING = ".,;:!?)]}>，。；！？）"
# a metadata key naming a credential, alone or as the last word of its name ("db_password",
# "GITHUB_TOKEN", "smtp-pass"); "max_tokens", "token_count" name none, nor our own option "on_secret"
_SECRET_KEYS = re.compile(
    r"(?i)^(?!on[_-]secret$)(?!.*(?:page|next|continuation|sync)[_-]?token$)(?:[a-z0-9]+[_-])*(?:pass(?:word|wd|phrase)?|pwd|secret|secret[_-]?key|api[_-]?key|apikey|token"
    r"|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key|(?:secret[_-]?)?access[_-]?key)$"
    r"|.*(?:密码|口令|密钥)$"
)


# What "the password is …" says of a password when it ends the sentence, rather than the password
# itself; a word ending like a participle or an adjective ("protected", "expiring", "unguessable") too
_SAID_OF_A_PASSWORD = frozenset(
    """required wrong incorrect correct invalid valid expired set reset changed missing empty blank weak strong
    secure insecure unsafe safe stored hashed encrypted saved needed optional mandatory shared rotated long short
    same different known unknown hidden visible sensitive ok okay fine good bad new old default temporary
    case-sensitive mine yours his hers ours theirs there here gone lost compromised leaked secret private
    unchanged disabled enabled locked unlocked none null nil unset tbd""".split()
)
# what a clause after "password:" (or a quoted one) starts with, or holds, when it says what a
# password must be or where it is rather than being one
_SAYS_OF_IT = frozenset(
    """must should needs need has have is are was at min minimum max maximum the a an your our my their see
    use same as from in on set not no only any""".split()
)
_ABOUT_A_PASSWORD = re.compile(
    r"\b(?:characters?|chars?|days?|weeks?|months?|letters?|digits?|symbols?|vault|1password|keychain|manager)\b",
    re.IGNORECASE,
)


def _says_of_it(value: str) -> bool:
    """A value of several words that says what a password must be or where it is ("at least 12
    characters", "changed every 90 days", "(see vault)"), not a password."""
    words = value.strip("()[]<>").split()
    return len(words) > 1 and (words[0].lower() in _SAYS_OF_IT or _ABOUT_A_PASSWORD.search(value) is not None)


_WORD_ENDING = re.compile(r"(?:ed|ing|able|ible|ly|ful|less|ous|ive)$")


def _credential_like(value: str, quoted: bool, *, ends_sentence: bool = False) -> bool:
    """A value after "password is" that reads as a credential, not a word ("required", "in
    1Password"). A single word that ends its sentence ("my password is newpass") is one unless it
    says something of a password ("… is required", "… is protected")."""
    if len(value) < 4 or _PLACEHOLDER.match(value) or "://" in value:  # a URL: the connection detector's
        return False
    if quoted:
        return True
    if value.isalpha():
        folded = value.lower()
        return ends_sentence and folded not in _SAID_OF_A_PASSWORD and not _WORD_ENDING.search(folded)
    return not value.isdigit() or len(value) >= 6


_SENTENCE_END = re.compile(r"\s*(?:[.!?;。！？；\n]|$)")


def _phrases(text: str) -> Iterator[tuple[str, int, int]]:
    for m in _PHRASE.finditer(text):
        if m.group("quoted") is not None:
            said = m.group("quoted").strip()
            if _credential_like(said, True) and not _says_of_it(said):
                yield "password", m.start("quoted"), m.end("quoted")
            continue
        value = m.group("value")
        stripped = value.rstrip(_TRAILING)
        end = m.start("value") + len(stripped)
        if not stripped or stripped.lower() in _SAID_OF_A_PASSWORD:
            continue
        if m.group("colon") or m.group("colon2"):
            # "password: open sesame 42": what follows the colon, to the clause's end, when short
            rest = _CLAUSE_REST.match(text, m.start("value"))
            phrase = rest.group().rstrip() if rest else stripped
            if len(phrase.split()) <= 5 and not _says_of_it(phrase) and _credential_like(phrase, True):
                yield "password", m.start("value"), m.start("value") + len(phrase)
                continue
        ends_sentence = _SENTENCE_END.match(text, end) is not None
        if _credential_like(stripped, False, ends_sentence=ends_sentence):
            yield "password", m.start("value"), end
    for m in _PHRASE_ZH.finditer(text):
        group = "quoted" if m.group("quoted") is not None else "value"
        value = m.group(group) if group == "quoted" else m.group(group).rstrip(_TRAILING)
        if _credential_like(value.strip(), True):
            yield "password", m.start(group), m.start(group) + len(value)
    for m in _ASSIGNED.finditer(text):
        value = m.group("value").rstrip(_TRAILING)
        if _assigned_credential(m.group("name"), value):
            yield "password", m.start("value"), m.start("value") + len(value)


# A credential given on a command line. The value after a flag: quoted (to its closing quote) or
# one shell word (up to a space, a quote, a pipe or a separator).
_FLAG_VALUE = (
    r"""(?:"(?P<dq>[^"\n]{1,200})"|'(?P<sq>[^'\n]{1,200})'|(?P<value>[^\s"'`|;&<>()，。；：！？、（）「」]+))"""
)
_FLAG_TRAILING = ".,;:)]}>，。；）"  # a sentence's end, not the "!" a shell password may end in
# Further on in the same command, at the start of an argument: not past a line's end (unless the
# line goes on with "\"), a pipe, a separator, or a colon that ends a clause ("docs: use -p …")
_SAME_COMMAND = r"(?:[^\n|;&:]|:(?!\s)|\\\n)*?(?<=\s)"
_COMMAND = r"(?<![\w/.:-])"  # a command's name begins a word that is no path, host or URL part
# "--password S3cret", "--api-key …", "--apiKey …", "--client-secret …" (with "=" it is a
# "password=…" phrase)
_LONG_FLAG = re.compile(
    r"(?i)(?<![\w-])--(?:[a-z0-9]+[-_])*(?:password|passwd|pass|passphrase|token|secret|api[-_]?key|access[-_]?key"
    r"|secret[-_]?key|private[-_]?key|client[-_]?secret|auth[-_]?token)[ \t]+" + _FLAG_VALUE
)
# the short flags that take a password in the commands people paste into notes (gate, pattern);
# "mysql -u root -p" (a prompt) and "ssh -p 2222" take none
_COMMAND_FLAGS: list[tuple[tuple[str, ...], str]] = [
    (("mysql", "mariadb"), r"(?i:mysql\w*|mariadb[\w-]*)(?=\s)" + _SAME_COMMAND + r"-p(?=[^\s-])"),  # -pS3cret
    (
        ("login",),
        r"(?:docker|podman|nerdctl|buildah|skopeo|registry|oras)\s+login(?=\s)" + _SAME_COMMAND + r"-p[ \t]+",
    ),
    (("sshpass",), r"sshpass\s+-p[ \t]*"),
    (("redis-cli",), r"redis-cli(?=\s)" + _SAME_COMMAND + r"-a[ \t]+"),
    (("ldap",), r"ldap\w+(?=\s)" + _SAME_COMMAND + r"-w[ \t]+"),
    (("sqlcmd", "bcp"), r"(?:sqlcmd|bcp)(?=\s)" + _SAME_COMMAND + r"-P[ \t]*"),
    (("mongo",), r"mongo\w*(?=\s)" + _SAME_COMMAND + r"-p[ \t]+"),
    (("curl", "http"), r"(?:curl|https?|xh)(?=\s)" + _SAME_COMMAND + r"(?:-u|--user|-a|--auth)[ \t]*[\"']?[^\s:\"']*:"),
]
_COMMANDS = [(gate, re.compile(_COMMAND + pattern + _FLAG_VALUE)) for gate, pattern in _COMMAND_FLAGS]
# what a flag's value is when it is no credential: a file (a path, "deploy.pem"), a key=value spec
# ("id=npmrc,src=…"), a name ("db-password"), a port mapping ("3306:3306")
_NOT_A_SECRET = re.compile(
    r"[/\\=]|\.(?:pem|key|p12|pfx|json|txt|env|crt|cer|jks|ppk|pub|gpg|asc|yml|yaml|toml|ini|cfg)$"
    r"|^[a-z]+(?:[-_.][a-z]+)*$|^\d+(?::\d+)+$",
    re.IGNORECASE,
)


def _flag_value(m: re.Match[str]) -> tuple[str, int, int, bool] | None:
    """The value a flag was given (text, span, quoted), unless it is a reference, a placeholder or
    no secret at all ("$PGPASS", "%SA_PASSWORD%", "$(cat token)", "<password>", "~/.pgpass",
    "@file", "keys/deploy.pem", "db-password", a plain word: "docker login -p flag leaks …")."""
    for group, quoted in (("dq", True), ("sq", True), ("value", False)):
        value = m.group(group)
        if value is None:
            continue
        said = value.strip() if quoted else value.rstrip(_FLAG_TRAILING)
        if len(said) < 4 or said[0] in "$%<{[/~@-." or _PLACEHOLDER.match(said) or said.lower() in _SAID_OF_A_PASSWORD:
            return None
        if not quoted and _NOT_A_SECRET.search(said):
            return None
        start = m.start(group) + (value.index(said) if quoted else 0)
        return said, start, start + len(said), quoted
    return None


def _command_lines(text: str, lower: str) -> Iterator[tuple[str, int, int]]:
    """Credentials passed as flags: after a long flag ("--password …") or a command's password
    flag, a value that is quoted or reads as a secret (not a plain word, a file, a name)."""
    if "--" in text and any(word in lower for word in _PHRASE_GATE):
        for m in _LONG_FLAG.finditer(text):
            found = _flag_value(m)
            if found:
                yield "password", found[1], found[2]
    for gate, pattern in _COMMANDS:
        if any(word in lower for word in gate):
            for m in pattern.finditer(text):
                found = _flag_value(m)
                if found:
                    yield "password", found[1], found[2]


def _assigned_credential(name: str, value: str) -> bool:
    """A value set to a credential's variable that is one: not a number, a word said of a
    password, a placeholder, or (under a lower-case name) a plain word: "on_secret: mask" sets an
    option; "DB_PASSWORD=hunter" is an environment's secret."""
    if len(value) < 4 or value.isdigit() or value.lower() in _SAID_OF_A_PASSWORD or _PLACEHOLDER.match(value):
        return False
    if value.startswith(("<", "{", "[", "(")):  # "<your password here>": a placeholder to fill in
        return False
    return name.isupper() or not value.isalpha()


def find(text: str) -> list[tuple[str, int, int]]:
    """The credentials in ``text``: ``(kind, start, end)``, in order, never overlapping."""
    lower = text.lower()
    hits: list[tuple[int, int, str]] = []
    # a token needs 16 characters without a space: a cheaper test than _TOKEN_RUN, which it implies
    tokens = max(map(len, text.split()), default=0) >= 16
    detectors = [*_OWN_TOKEN] if tokens else []
    for words, gated in _OWN_GATED:
        if any(word in lower for word in words):
            detectors += gated
    if tokens:
        detectors += _plugins()
    for kind, pattern, group, _ in detectors:
        for m in pattern.finditer(text):
            start, end = m.span(group)
            if group and _PLACEHOLDER.match(m.group(group)):
                continue
            hits.append((start, end, kind))
    if any(word in lower for word in _PHRASE_GATE) or any(word in text for word in _PHRASE_ZH_GATE):
        hits.extend((start, end, kind) for kind, start, end in _phrases(text))
    if "-" in text:
        hits.extend((start, end, kind) for kind, start, end in _command_lines(text, lower))
    if not hits:
        return []
    hits.sort(key=lambda h: (h[0], -h[1]))  # earliest first, the longest of those that start together
    out: list[tuple[str, int, int]] = []
    reach = -1
    for start, end, kind in hits:
        if start >= reach:
            out.append((kind, start, end))
            reach = end
    return out


def placeholder(kind: str) -> str:
    return f"[secret:{kind}]"


def mask_text(text: str, found: list[tuple[str, int, int]]) -> str:
    """``text`` with each span replaced by its typed placeholder."""
    parts, at = [], 0
    for kind, start, end in found:
        parts += [text[at:start], placeholder(kind)]
        at = end
    return "".join(parts) + text[at:]


_QUALIFIER = re.compile(r"\([^)]*\)|（[^）]*）")  # "password (prod)": which one, not what it is


def _walk(value: Any, path: str, visit: Callable[[str, str, bool], str], key: str = "") -> Any:
    """A JSON value with each string replaced by ``visit(path, string, keyed)``: ``keyed`` when the
    string sits under a key that names a credential (``"password": "…"``, in a list under it too;
    a number under it is read as its digits), or is the value of a claim whose attribute names one
    (``{"attribute": "db password", "value": "…"}``)."""
    if isinstance(value, str):
        return visit(path, value, bool(_SECRET_KEYS.match(key)))
    if isinstance(value, dict):
        # a claim ({subject, attribute, value}): its attribute names what its value is
        named = value.get("attribute")
        claimed = "_".join(_QUALIFIER.sub(" ", named).split()) if isinstance(named, str) else ""
        return {
            k: _walk(v, f"{path}.{k}", visit, claimed if k == "value" and claimed else str(k)) for k, v in value.items()
        }
    if isinstance(value, list | tuple):  # tags may come as a tuple from a direct caller
        return [_walk(v, f"{path}.{i}", visit, key) for i, v in enumerate(value)]  # a list under "password"
    if isinstance(value, int | float) and not isinstance(value, bool) and _SECRET_KEYS.match(key):
        seen = visit(path, str(value), True)  # {"password": 12345678}: a number is a credential too
        return value if seen == str(value) else seen
    return value


def _findings_in(text: str, keyed: bool) -> list[tuple[str, int, int]]:
    if keyed:  # a metadata value under a credential's key: the whole value
        value = text.strip()
        said = value.lower() in _SAID_OF_A_PASSWORD  # {"attribute": "password", "value": "required"}
        if len(value) >= 4 and not _PLACEHOLDER.match(value) and not _says_of_it(value) and not said:
            start = text.index(value)
            return [("password", start, start + len(value))]
    return find(text)


def scan(fields: dict[str, Any]) -> list[Secret]:
    """Every credential in the given write fields (text, lists of text, JSON objects)."""
    found: list[Secret] = []

    def visit(path: str, text: str, keyed: bool) -> str:
        found.extend(Secret(path, kind, start, end) for kind, start, end in _findings_in(text, keyed))
        return text

    for name, value in fields.items():
        if value:
            _walk(value, name, visit)
    return found


def masked(fields: dict[str, Any], swaps: dict[str, str] | None = None) -> dict[str, Any]:
    """The same fields with each credential replaced by its placeholder (``[secret:aws-access-key]``);
    ``swaps`` collects each text that changed, as given → as stored (:func:`swapped`)."""

    def visit(path: str, text: str, keyed: bool) -> str:
        hits = _findings_in(text, keyed)
        if not hits:
            return text
        stored = mask_text(text, hits)
        if swaps is not None:
            swaps[text] = stored
        return stored

    return {name: _walk(value, name, visit) if value else value for name, value in fields.items()}


def swapped(value: Any, swaps: dict[str, str]) -> Any:
    """``value`` (a call's arguments) with every text that a mask changed (``swaps``) as it was
    stored: the call a backup records for a masked write, which decides the same write again."""
    if isinstance(value, str):
        return swaps.get(value, value)
    if isinstance(value, dict):
        return {k: swapped(v, swaps) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [swapped(v, swaps) for v in value]
    return value


def refusal(found: list[Secret]) -> InvalidInput:
    """``invalid_input`` naming each credential's kind and span, never its text."""
    first = found[0]
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return InvalidInput(
        f"{first.field} holds what looks like a credential ({first.kind}, characters {first.start}–{first.end}){more}; "
        'nothing was written: remove it, or pass on_secret: "mask" to store it as '
        f"{placeholder(first.kind)}",
        field=first.field,
        kind=first.kind,
        start=first.start,
        end=first.end,
        secrets=[s.to_dict() for s in found],
    )


def refuse_in_note(field: str, text: str, *, why: str = "") -> None:
    """A governing action's own words (a retirement's reason, a judgment's rationale, an
    erasure's reason), and the names a write files a memory under (its conversation's
    ``session_id``, its ``workspace``), hold no credential: refused with ``invalid_input``,
    nothing written. Unlike a memory's text they cannot be masked or erased later: the log keeps
    them for good, with the erased memory's id."""
    found = [Secret(field, kind, start, end) for kind, start, end in find(text)] if text else []
    if not found:
        return
    first = found[0]
    raise InvalidInput(
        f"{field} holds what looks like a credential ({first.kind}, characters {first.start}–{first.end}); "
        f"nothing was written: {why or f'a {field} stays in the log for good'}, so leave the credential out",
        field=field,
        kind=first.kind,
        start=first.start,
        end=first.end,
        secrets=[s.to_dict() for s in found],
    )


NAMES_STAY = "the log keeps a conversation's id and a workspace's name for good, even through an erasure"


def refuse_in_names(**names: str | None) -> None:
    """:func:`refuse_in_note` for each name a write files its memory under (``session_id``,
    ``workspace``) that the call gave."""
    for field, text in names.items():
        if isinstance(text, str):
            refuse_in_note(field, text, why=NAMES_STAY)


ALIASES_STAY = "the log keeps an alias and the name it stands for for good, even through an erasure"


def refuse_in_aliases(alias: str, canonical: str) -> None:
    """:func:`refuse_in_note` for both names of an alias (of a workspace or of an entity): each is
    recorded in the alias event, the alias also in its stream's id."""
    refuse_in_note("alias", alias, why=ALIASES_STAY)
    refuse_in_note("canonical", canonical, why=ALIASES_STAY)


def scrubbed(text: str) -> str:
    """``text`` (an answer that quotes what a caller sent) with each credential in it replaced by
    its typed placeholder."""
    found = find(text) if text else []
    return mask_text(text, found) if found else text


def scrub(exc: LedgerError) -> LedgerError:
    """The refusal as it may be shown: a message that quotes the input (a bad time, an unknown
    type or field) never repeats a credential pasted into it, as a refused write names its kind
    and span only. Changed in place; the same error is returned."""
    exc.message = scrubbed(exc.message)
    if exc.field:
        exc.field = scrubbed(exc.field)
    for key, value in exc.details.items():
        if isinstance(value, str):
            exc.details[key] = scrubbed(value)
    return exc
