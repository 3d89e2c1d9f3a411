"""Settings: defaults < config file (``LEDGER_CONFIG``, TOML or JSON) < environment < flags.

With no ``LEDGER_CONFIG``, ``<user config dir>/fact-ledger/config.toml`` (``~/.config/fact-ledger/
config.toml`` on Linux) is read when it exists: one file that the CLI, the console and every
agent's ``ledger serve`` share, so that ``workspace`` set there is where all of them write.

Keys (file / env):
    db                             LEDGER_DB               the local log's path (when ``store`` is unset)
    store                          LEDGER_STORE            the log of record: ``postgresql://…`` for a team's
                                                           shared log; unset: the local SQLite log at ``db``
    views                          LEDGER_VIEWS            the read models' file (default: beside the local log,
                                                           or ``views/<log id>.db`` in the user data dir)
    client                         LEDGER_CLIENT           e.g. ``claude-code``
    agent_id                       LEDGER_AGENT_ID
    workspace                      LEDGER_WORKSPACE
    backup                         LEDGER_BACKUP           JSONL backup path (default: beside the read models)
    isolation                      LEDGER_ISOLATION        none | weak | strict
    busy_timeout_ms                LEDGER_BUSY_TIMEOUT_MS  default 5000
    retention_days                 LEDGER_RETENTION_DAYS   archive retired/superseded after (90)
    event_time_skew_s              LEDGER_EVENT_TIME_SKEW_S  how far ahead of now an event_time may be (86400)
    create                         LEDGER_CREATE           create a missing database at an explicit path
    default_tier                   LEDGER_DEFAULT_TIER     ``long`` (default) or ``working``: remember's tier
                                                           when the call names none
    working_set_size               LEDGER_WORKING_SET_SIZE   a conversation's working set (20)
    working_ttl_days               LEDGER_WORKING_TTL_DAYS   an idle conversation's working memories leave
                                                           the hot read models after (7)
    cold_after_days                LEDGER_COLD_AFTER_DAYS  a long-term memory unused this long cools (30)
    health_every_minutes           LEDGER_HEALTH_EVERY_MINUTES  ``ledger serve`` records a health report
                                                           pass this often (1440: daily; 0: never)
    secrets_allowed_workspaces     LEDGER_SECRETS_ALLOWED_WORKSPACES  workspaces whose writes may hold
                                                           credentials (a list; comma-separated in the
                                                           environment; ``*``: every workspace)
    policy.locked_requires_user_channel                    refuse agent-asserted changes to locked
    policy.review_agent_conflicts                          agent-vs-agent conflicts need a human
    policy.auto_settle             LEDGER_POLICY_AUTO_SETTLE  supersede a claim set's losers when a rule decides
    policy.settle_changes          LEDGER_POLICY_SETTLE_CHANGES  a value stated an hour or more after the
                                                           others supersedes them (default true)
    section_threshold              LEDGER_SECTION_THRESHOLD  split memories longer than this (4000 chars)
    embedding.model                LEDGER_EMBEDDING_MODEL  a model name (``ledger model list``) or a GGUF path
    embedding.enabled              LEDGER_EMBEDDING_ENABLED  false: lexical search only, no model loaded
    embedding.threads              LEDGER_EMBEDDING_THREADS  threads per model call (0, the default: one per CPU)
    embedding.notice_similarity                            cosine from which a differing pair is a notice
    embedding.duplicate_similarity                         cosine from which an undisputed pair is a duplicate

With no ``embedding.model``, the default model is used once ``ledger model install`` has put it in
the user data dir; until then search is lexical and nothing says so as an error.

Booleans are ``true``/``false`` (or ``1 yes on`` / ``0 no off`` as words); anything else, and any
key a config file does not know, is an ``invalid_input`` error naming the key (with
``did_you_mean`` for a near miss). Nothing else in the project reads the environment or a config
file: the store, the embedder and the policy get their values from :class:`Settings`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import platformdirs

from fact_ledger.ledger.clock import DEFAULT_SKEW_S
from fact_ledger.ledger.errors import InvalidInput, closest
from fact_ledger.ledger.facts import Policy
from fact_ledger.ledger.log.store import DEFAULT_BUSY_TIMEOUT_MS
from fact_ledger.ledger.retention import MAX_RETENTION_DAYS
from fact_ledger.ledger.working import TIERS

ISOLATION_MODES = ("none", "weak", "strict")
MAX_NAME_CHARS = 256  # workspace names, actors, projection names: here, in tool fields and CLI options
DEFAULT_EMBEDDING_MODEL = "multilingual-e5-small"
MAX_SKEW_S = 10**9  # about 31 years: enough for any clock, never past the calendar
_INTEGERS = (
    "busy_timeout_ms",
    "retention_days",
    "section_threshold",
    "event_time_skew_s",
    "working_set_size",
    "working_ttl_days",
    "cold_after_days",
    "health_every_minutes",
)
_BOOLEANS = ("create",)
_LISTS = ("secrets_allowed_workspaces",)
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def default_db_path() -> str:
    return str(Path(platformdirs.user_data_dir("fact-ledger")) / "ledger.db")


def default_config_path() -> Path:
    """The config file read when ``LEDGER_CONFIG`` names none (only if it exists)."""
    return Path(platformdirs.user_config_dir("fact-ledger")) / "config.toml"


def config_path(overrides: dict[str, Any] | None, env: dict[str, str]) -> str | None:
    """The config file in force: ``--config``, else ``LEDGER_CONFIG``, else the default one."""
    named = (overrides or {}).get("config") or env.get("LEDGER_CONFIG")
    if named:
        return str(named)
    default = default_config_path()
    return str(default) if default.is_file() else None


def runtime_base() -> Path:
    """Where per-user sockets go (a serve lending its model): ``$XDG_RUNTIME_DIR``, else the
    temporary directory."""
    return Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())


def models_dir() -> Path:
    """Where ``ledger model install`` puts GGUF files: ``<user data dir>/models``."""
    return Path(platformdirs.user_data_dir("fact-ledger")) / "models"


def model_file(name: str) -> Path:
    return models_dir() / f"{name}.gguf"


def is_model_path(value: str) -> bool:
    """A GGUF path rather than a model name: it ends in .gguf or names a directory."""
    return value.endswith(".gguf") or "/" in value or os.sep in value or value.startswith("~")


def _flag(value: Any, key: str) -> bool:
    """A boolean, or one of the words for one (what an environment variable can carry).

    Anything else is refused rather than guessed at: ``bool("false")`` is true, and a switch
    that reads a typo as "on" is worse than one that says what is wrong. The refusal lists the
    words accepted (``_TRUE``, ``_FALSE``): "must be true or false" sent a person who had typed
    ``maybe`` away unaware that ``1``, ``yes`` and ``on`` would do as well.
    """
    if isinstance(value, bool):
        return value
    text = value.strip().lower() if isinstance(value, str) else None
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    if not isinstance(value, str):  # a config file's number or list: its switches are true or false
        raise InvalidInput(f"{key} must be true or false (got {value!r})", field=key)
    raise InvalidInput(f"{key} must be on ({', '.join(_TRUE)}) or off ({', '.join(_FALSE)}) (got {value!r})", field=key)


@dataclass(frozen=True)
class Embedding:
    model: str = ""  # a name or a GGUF path; empty = the default model when installed
    enabled: bool = True
    notice_similarity: float = 0.89  # see projections/notices.py (calibrated on the default model)
    duplicate_similarity: float = 0.935
    threads: int = 0  # threads per model call; 0: one per CPU (projections.runtime.embedding)


def views_dir() -> Path:
    """Where the read models of a PostgreSQL log live on this machine, one file per log."""
    return Path(platformdirs.user_data_dir("fact-ledger")) / "views"


def views_beside(db: str) -> str:
    """The read models' file next to a local log: ``ledger.db`` → ``ledger.views.db``.

    A ``file:`` URI names its file before the query (a read-only log keeps writable read
    models beside it); an in-memory log keeps its read models in memory too.
    """
    if db == ":memory:" or not db:
        return ":memory:"
    path = _as_file(Path(db.removeprefix("file:").split("?", 1)[0] if db.startswith("file:") else db))
    return str(path.with_name(path.stem + ".views" + (path.suffix or ".db")))


def _as_file(path: Path) -> Path:
    """A path whose last part can name the files beside it. ``.``, ``..`` and ``/`` name
    folders, which the open refuses (``cant_open``, nothing written beside them); the names
    derived from them must not fail first (``--db .`` and ``--db /`` ended in a traceback)."""
    if path.name in ("", ".", ".."):
        path = Path(os.path.abspath(path))
    return path if path.name else path / "ledger.db"


@dataclass(frozen=True)
class Settings:
    db: str = field(default_factory=default_db_path)
    store: str = ""
    views: str = ""
    client: str = "unknown"
    agent_id: str = ""
    workspace: str = ""
    backup: str = ""
    isolation: str = "none"
    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS
    retention_days: int = 90
    event_time_skew_s: int = DEFAULT_SKEW_S
    section_threshold: int = 4000
    default_tier: str = "long"  # remember's tier when the call names none
    working_set_size: int = 20  # a conversation's working set: sticky notes + the most recently touched
    working_ttl_days: int = 7  # an idle conversation's working memories leave the hot read models
    cold_after_days: int = 30  # a long-term memory unused this long is cooled by the periodic pass
    health_every_minutes: int = 1440  # ledger serve records a health report pass this often (0: never)
    policy: Policy = field(default_factory=Policy)
    # Code that builds Settings itself creates its database; the CLI and the server resolve
    # settings with load_settings, where only the default path is created implicitly.
    create: bool = True
    embedding: Embedding = field(default_factory=Embedding)
    # workspaces where remember/update store credentials as given (server/app/credentials.py)
    secrets_allowed_workspaces: tuple[str, ...] = ()

    def secrets_allowed(self, workspace: str) -> bool:
        """Whether writes to ``workspace`` may hold credentials (no scan refuses or masks them)."""
        allowed = self.secrets_allowed_workspaces
        return bool(allowed) and ("*" in allowed or workspace in allowed)

    @property
    def may_create(self) -> bool:
        """Create the database if missing: asked for, or the default path (never a typo)."""
        return self.create or self.db == default_db_path()

    @property
    def embedding_enabled(self) -> bool:
        return self.embedding.enabled

    @property
    def embedding_model_path(self) -> str | None:
        """The GGUF file to embed with, or None for lexical-only search.

        A configured name or path is returned even when the file is missing, so the loader can
        say what is wrong; the unconfigured default is used only once it is installed.
        """
        if not self.embedding.enabled:
            return None
        model = self.embedding.model.strip()
        if not model:
            default = model_file(DEFAULT_EMBEDDING_MODEL)
            return str(default) if default.is_file() else None
        if is_model_path(model):
            return str(Path(model).expanduser())
        return str(model_file(model))

    @property
    def shared_log(self) -> bool:
        """The log of record is a PostgreSQL server (``store``), not the local file at ``db``."""
        return bool(self.store.strip())

    def views_path(self, log_id: str | None = None) -> str:
        """The read models' file: ``views``, else beside the local log, else (a PostgreSQL log)
        in the user data dir under the log's identity."""
        if self.views:
            return str(Path(self.views).expanduser())
        if not self.shared_log:
            return views_beside(self.db)
        if log_id is None:
            raise ValueError("a PostgreSQL log's read models are keyed by its log id")
        return str(views_dir() / f"{log_id}.db")

    @property
    def backup_path(self) -> str:
        """The JSONL backup: ``backup``, else beside the read models given, else beside the local
        log; a PostgreSQL log's in the user data dir under the log's address (its host, port,
        database and user, never its password): known before the log is reached, and one file
        per log. One file for every PostgreSQL log replayed one log's outage writes into another
        (an update of #1 there changed an unrelated memory)."""
        if self.backup:
            return self.backup
        if self.shared_log:
            anchor = Path(self.views).expanduser() if self.views else views_dir() / f"shared-{store_key(self.store)}"
            return str(anchor.with_suffix(".backup.jsonl"))
        return str(_as_file(Path(self.db)).with_suffix(".backup.jsonl"))

    @property
    def actor(self) -> str:
        return f"{self.client}:{self.agent_id}" if self.agent_id else self.client


def store_key(store: str) -> str:
    """A PostgreSQL log's address as a short stable key: host, port, database and user (the
    password and options left out), hashed."""
    parts = urlsplit(store.strip())
    database = parts.path.lstrip("/")
    query = dict(parse_qsl(parts.query))  # host=/run/pg&port=5433 name a socket and port in the query
    address = [parts.hostname or "", str(parts.port or ""), database, parts.username or ""]
    address += [query.get("host", ""), query.get("port", ""), query.get("dbname", ""), query.get("user", "")]
    return hashlib.sha256("\x1f".join(address).encode()).hexdigest()[:16]


_ENV = {
    "db": "LEDGER_DB",
    "store": "LEDGER_STORE",
    "views": "LEDGER_VIEWS",
    "client": "LEDGER_CLIENT",
    "agent_id": "LEDGER_AGENT_ID",
    "workspace": "LEDGER_WORKSPACE",
    "backup": "LEDGER_BACKUP",
    "isolation": "LEDGER_ISOLATION",
    "busy_timeout_ms": "LEDGER_BUSY_TIMEOUT_MS",
    "retention_days": "LEDGER_RETENTION_DAYS",
    "event_time_skew_s": "LEDGER_EVENT_TIME_SKEW_S",
    "section_threshold": "LEDGER_SECTION_THRESHOLD",
    "create": "LEDGER_CREATE",
    "default_tier": "LEDGER_DEFAULT_TIER",
    "working_set_size": "LEDGER_WORKING_SET_SIZE",
    "working_ttl_days": "LEDGER_WORKING_TTL_DAYS",
    "cold_after_days": "LEDGER_COLD_AFTER_DAYS",
    "health_every_minutes": "LEDGER_HEALTH_EVERY_MINUTES",
    "secrets_allowed_workspaces": "LEDGER_SECRETS_ALLOWED_WORKSPACES",
}


def _read_file(path: str) -> dict[str, Any]:
    try:  # a missing or unreadable file is the caller's mistake, said plainly (never a traceback)
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise InvalidInput(f"config file {path} cannot be read: {why}", field="LEDGER_CONFIG") from None
    try:
        values = json.loads(text) if path.endswith(".json") else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"config file {path} is not valid: {exc}", field="LEDGER_CONFIG") from None
    if not isinstance(values, dict):
        raise InvalidInput(f"config file {path} must hold an object of settings", field="LEDGER_CONFIG")
    _check_keys(values, path)
    return values


_SECTIONS = {"policy": tuple(f.name for f in fields(Policy)), "embedding": tuple(f.name for f in fields(Embedding))}
_KEYS = tuple(f.name for f in fields(Settings) if f.name not in _SECTIONS)


def _check_keys(values: dict[str, Any], path: str) -> None:
    """Every key of a config file is a setting: a typo is refused with the key it resembles,
    as an unknown tool field is, instead of being dropped and leaving the default in force."""
    for key, value in values.items():
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise InvalidInput(f"{key} in {path} must be a table of settings", field=key)
            for sub in value:
                if sub not in _SECTIONS[key]:
                    _unknown(f"{key}.{sub}", path, [f"{key}.{name}" for name in _SECTIONS[key]])
        elif key not in _KEYS:
            _unknown(str(key), path, [*_KEYS, *_SECTIONS])


def _unknown(key: str, path: str, known: list[str]) -> None:
    raise InvalidInput(
        f"unknown setting {key!r} in config file {path}", field=key, did_you_mean=closest(key.lower(), known)
    )


def _coerce(settings: Settings, values: dict[str, Any]) -> Settings:
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if value is None or (key not in _KEYS and key not in _SECTIONS):
            continue
        if key == "policy":
            changes["policy"] = _policy(settings.policy, value)
        elif key == "embedding":
            changes["embedding"] = _embedding(settings.embedding, value)
        elif key in _BOOLEANS:
            changes[key] = _flag(value, key)
        elif key in _INTEGERS:
            changes[key] = _integer(value, key)
        elif key in _LISTS:
            changes[key] = _names(value, key)
        else:
            changes[key] = str(value)
    result = replace(settings, **changes)
    if not 0 < result.section_threshold < 10**7:
        raise InvalidInput("section_threshold must be between 1 and 9,999,999 characters", field="section_threshold")
    if not 0 <= result.event_time_skew_s <= MAX_SKEW_S:
        raise InvalidInput(f"event_time_skew_s must be between 0 and {MAX_SKEW_S:,} seconds", field="event_time_skew_s")
    if result.default_tier not in TIERS:
        raise InvalidInput(f"default_tier must be one of {', '.join(TIERS)}", field="default_tier")
    for key in ("working_set_size", "working_ttl_days", "cold_after_days"):
        if not 1 <= getattr(result, key) <= 100_000:
            raise InvalidInput(f"{key} must be between 1 and 100,000", field=key)
    if not 0 <= result.retention_days <= MAX_RETENTION_DAYS:
        raise InvalidInput(f"retention_days must be between 0 and {MAX_RETENTION_DAYS:,}", field="retention_days")
    if not 0 <= result.busy_timeout_ms <= 3_600_000:
        raise InvalidInput("busy_timeout_ms must be between 0 and 3,600,000 (an hour)", field="busy_timeout_ms")
    for key in ("workspace", "agent_id"):  # as --workspace and a tool's field are held (MAX_NAME_CHARS)
        if len(getattr(result, key)) > MAX_NAME_CHARS:
            raise InvalidInput(
                f"{key}: at most {MAX_NAME_CHARS} characters, not {len(getattr(result, key))}", field=key
            )
    if not 0 <= result.health_every_minutes <= 10**6:
        raise InvalidInput("health_every_minutes must be between 0 (never) and 1,000,000", field="health_every_minutes")
    if result.isolation not in ISOLATION_MODES:
        raise InvalidInput(f"isolation must be one of {', '.join(ISOLATION_MODES)}", field="isolation")
    return result


def _integer(value: Any, key: str) -> int:
    if isinstance(value, bool):  # int(True) is 1: a switch where a number belongs is a mistake
        raise InvalidInput(f"{key} must be an integer", field=key)
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite float (1e400 in TOML)
        raise InvalidInput(f"{key} must be an integer", field=key) from None


def _names(value: Any, key: str) -> tuple[str, ...]:
    """A list of names: a list (config file) or comma-separated text (environment)."""
    if isinstance(value, str):
        return tuple(name.strip() for name in value.split(",") if name.strip())
    if isinstance(value, list | tuple) and all(isinstance(name, str) for name in value):
        return tuple(value)
    raise InvalidInput(f"{key} must be a list of workspace names", field=key)


def _policy(current: Policy, values: dict[str, Any]) -> Policy:
    changes = {k: _flag(v, f"policy.{k}") for k, v in values.items() if v is not None}
    return replace(current, **changes)


def _embedding(current: Embedding, values: dict[str, Any]) -> Embedding:
    changes: dict[str, Any] = {}
    if values.get("model") is not None:
        changes["model"] = str(values["model"])
    if values.get("enabled") is not None:
        changes["enabled"] = _flag(values["enabled"], "embedding.enabled")
    for key in ("notice_similarity", "duplicate_similarity"):
        if values.get(key) is not None:
            changes[key] = _cosine(values[key], f"embedding.{key}")
    if values.get("threads") is not None:
        changes["threads"] = _integer(values["threads"], "embedding.threads")
        if changes["threads"] < 0:
            raise InvalidInput("embedding.threads must be 0 (one per CPU) or more", field="embedding.threads")
    return replace(current, **changes)


def _cosine(value: Any, key: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{key} must be a number", field=key) from None
    if not -1.0 <= number <= 2.0:  # above 1: never (switches that kind of notice off)
        raise InvalidInput(f"{key} must be between -1 and 2", field=key)
    return number


_SECTION_ENV = {
    ("embedding", "model"): "LEDGER_EMBEDDING_MODEL",
    ("embedding", "enabled"): "LEDGER_EMBEDDING_ENABLED",
    ("embedding", "threads"): "LEDGER_EMBEDDING_THREADS",
    **{("policy", name): f"LEDGER_POLICY_{name.upper()}" for name in (f.name for f in fields(Policy))},
}


def load_settings(overrides: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> Settings:
    """Resolve settings with the documented precedence: the one reader of the environment and
    of config files (everything below the server gets its values as arguments)."""
    env = dict(os.environ) if env is None else env
    settings = Settings(create=False)
    path = config_path(overrides, env)
    if path:
        with _named_in(lambda _field: f"config file {path}"):
            settings = _coerce(settings, _read_file(path))
    with _named_in(lambda field: _ENV.get(field, "the environment")):
        settings = _coerce(settings, {k: env.get(v) or None for k, v in _ENV.items()})
    sections: dict[str, dict[str, Any]] = {}
    for (section, key), name in _SECTION_ENV.items():
        sections.setdefault(section, {})[key] = env.get(name, "").strip() or None
    section_env = {f"{section}.{key}": name for (section, key), name in _SECTION_ENV.items()}
    with _named_in(lambda field: section_env.get(field, "the environment")):
        settings = _coerce(settings, sections)
    return _coerce(settings, {k: v for k, v in (overrides or {}).items() if k != "config"})


@contextmanager
def _named_in(where: Callable[[str], str]) -> Iterator[None]:
    """A refused value says where it was given: ``LEDGER_BUSY_TIMEOUT_MS=abc`` said only
    "busy_timeout_ms must be an integer", which names no variable a person set."""
    try:
        yield
    except InvalidInput as exc:
        said = where(exc.field or "")
        if exc.field is None or exc.field == "LEDGER_CONFIG" or said in exc.message:
            raise
        message = exc.message.removeprefix(f"{exc.field}: ")  # "workspace: at most 256 characters"
        raise InvalidInput(f"{said}: {message}", field=exc.field, **exc.details) from None


def settings_sources(overrides: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> dict[str, str]:
    """Where each effective value came from: ``default``, ``file``, ``env`` or ``flag``.

    Walks the same precedence as :func:`load_settings` (the last layer naming a key wins), so a
    person reading the console's Settings page learns which knob to turn.
    """
    env = dict(os.environ) if env is None else env
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    # every section's keys (policy, embedding): only [policy] was followed, so an [embedding]
    # value from the file or LEDGER_EMBEDDING_THREADS read "default" beside the value it set
    sources = {name: "default" for name in _KEYS}
    sources.update({f"{section}.{name}": "default" for section, names in _SECTIONS.items() for name in names})
    path = config_path(overrides, env)
    if path:
        for key, value in _read_file(path).items():
            if key in _SECTIONS:
                sources.update({f"{key}.{name}": "file" for name, given in value.items() if given is not None})
            elif key in sources and value is not None:
                sources[key] = "file"
    sources.update({k: "env" for k, v in _ENV.items() if env.get(v)})
    sources.update(
        {f"{section}.{key}": "env" for (section, key), name in _SECTION_ENV.items() if env.get(name, "").strip()}
    )
    sources.update({k: "flag" for k in overrides if k in sources})
    return sources
