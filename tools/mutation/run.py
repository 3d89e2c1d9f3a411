"""Run every mutant of the mapped modules against the mapped tests; print a JSON report.

Each worker owns a copy of the project (``ledger/``, ``projections/``, ``server/``, ``tests/``,
``pyproject.toml``) in a temporary folder, so the working tree is never touched and subprocess
tests (the CLI, worker processes) run the mutated code too. For each mutant the worker writes the
mutated file into its copy and forks a child that runs ``pytest -x -q -p no:cacheprovider`` on
the module's tests there: forking a process that has already imported pytest and hypothesis
saves their start-up on every mutant. A mutant is *killed* when pytest fails (or the run
exceeds its time limit: an endless loop is a noticed bug), *survived* when every test passes.
The module's first test file runs alone first; the others only for the mutants it misses.

Before any mutant, the unmutated copy must pass the same tests (else the report would be noise).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from tools.mutation.mutants import Point, apply, points
from tools.mutation.targets import TARGETS, Target

REPO = Path(__file__).resolve().parents[2]
COPIED = ("ledger", "projections", "server", "tests", "pyproject.toml")
BUDGET = 0.90  # at least this share of mutants killed
PYTEST_ARGS = (
    "-x",
    "-q",
    "-p",
    "no:cacheprovider",
    "--hypothesis-profile=mutation",  # see tests/conftest.py
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
)
_PRELOAD = (
    "pytest",
    "hypothesis",
    "hypothesis.strategies",
    "apsw",
    "msgspec",
    "platformdirs",
    "decimal",
    "email",
    "csv",
    "zoneinfo",
    "unittest",
    "difflib",
    "pygments",
    # The MCP SDK and what it stands on (the contract and isolation-walk tests drive the tools
    # through an in-process client): about 2 s of imports per mutant otherwise. Nothing here
    # starts a thread, so forking after it is safe (numpy's BLAS pool would not be).
    "anyio",
    "pydantic",
    "mcp",
    "mcp.client",
    "mcp.server",
)


@dataclass(frozen=True)
class Job:
    target: Target
    point: Point | None  # None: the unmutated baseline
    timeout_s: float


def copy_project(into: Path) -> Path:
    """A copy of what the tests need, without byte-code caches (a stale .pyc could hide a mutant)."""
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, into / name, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
        else:
            shutil.copy2(src, into / name)
    # The packages install as fact_ledger.*: in the copy that name must lead to the copied (and
    # mutated) folders, ahead of the installed tree, for the tests and for their subprocesses.
    (into / "fact_ledger").mkdir()
    (into / "fact_ledger" / "__init__.py").write_text(f"__path__ = [{str(into)!r}]\n", encoding="utf-8")
    return into


_copy: Path | None = None


def _init_worker(copies: object) -> None:
    global _copy
    _copy = Path(copies.get())  # type: ignore[attr-defined]
    sys.dont_write_bytecode = True
    # Imported once here, inherited by every forked child (never the project's own modules: a
    # child must import the mutant). pytest then cannot rewrite the asserts of the plugins among
    # them (hypothesis), which only warns: PYTEST_ARGS silences that warning.
    for name in _PRELOAD:
        importlib.import_module(name)


def _run_job(job: Job) -> tuple[str, str, int | None, float]:
    """(path, outcome, point index, seconds): outcome is killed, survived, timeout or error."""
    assert _copy is not None
    target_file = _copy / job.target.path
    original = target_file.read_text(encoding="utf-8")
    started = time.monotonic()
    try:
        if job.point is not None:
            target_file.write_text(
                apply(original, job.point.index, only=job.target.only, ordered=job.target.ordered), encoding="utf-8"
            )
        # The module's own unit tests first: most mutants die there in a second or two, and only
        # the survivors pay for the slower tests (processes, property scripts) that follow.
        stages = [job.target.tests[:1], job.target.tests[1:]] if job.point else [job.target.tests]
        for tests in filter(None, stages):
            code = _pytest_in_child(_copy, tests, job.timeout_s)
            if code != 0:
                break
    finally:
        target_file.write_text(original, encoding="utf-8")
    outcome = {0: "survived", None: "timeout"}.get(code, "killed" if code == 1 else "error")
    return job.target.path, outcome, job.point.index if job.point else None, time.monotonic() - started


def _pytest_in_child(root: Path, tests: Sequence[str], timeout_s: float) -> int | None:
    """pytest's exit code in a forked child (None when it ran past ``timeout_s``)."""
    pid = os.fork()
    if pid == 0:  # the child: run pytest in the copy, silently, and leave without cleanup
        code = 3
        try:
            os.chdir(root)
            os.setsid()  # its own process group: a timeout kills the tests' subprocesses too
            if not os.environ.get("MUTATION_SHOW_OUTPUT"):  # set it to see why a baseline fails
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
            sys.path.insert(0, str(root))
            os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
            import pytest

            code = int(pytest.main([*PYTEST_ARGS, *tests]))
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.05)


def target_points(target: Target, lines: str = "") -> list[Point]:
    """The target's mutation points; with ``lines`` (a regular expression), only those whose
    mutated source matches it."""
    source = (REPO / target.path).read_text(encoding="utf-8")
    found = points(source, only=target.only, ordered=target.ordered)
    if not lines:
        return found
    text = source.splitlines()
    pattern = re.compile(lines)
    return [p for p in found if pattern.search(mutated_source(text, p))]


def mutated_source(text: list[str], point: Point) -> str:
    """The lines of the node ``point`` mutates (a call may span several)."""
    return "\n".join(text[point.line - 1 : max(point.line, point.end_line)])


def is_equivalent(target: Target, point: Point, text: list[str]) -> bool:
    """Whether the map notes ``point`` as an equivalent mutant: its name and mutation match an
    entry, and the source fragment the entry may add is in the mutated node's lines (``text``:
    the module's source lines)."""
    return any(
        (point.scope, point.description) == (name, mutation)
        and (not fragment or fragment[0] in mutated_source(text, point))
        for name, mutation, *fragment in target.equivalent
    )


def run(
    targets: Sequence[Target], jobs: int, log: bool = True, *, lines: dict[str, str] | None = None
) -> dict[str, object]:
    """Baselines first (each target's tests must pass unmutated), then every mutant (``lines``:
    per module path, the pattern its mutated source must match, see :func:`target_points`)."""
    started = time.monotonic()
    ctx = get_context("fork")
    manager_queue = ctx.Queue()
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        for n in range(jobs):
            manager_queue.put(str(copy_project(Path(tmp) / f"w{n}")))
        with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker, initargs=(manager_queue,)) as pool:
            baselines = list(pool.map(_run_job, [Job(t, None, 900.0) for t in targets]))
            broken = [path for path, outcome, _, _ in baselines if outcome != "survived"]
            if broken:
                raise SystemExit(f"the unmutated tests fail for {', '.join(broken)}: fix them first")
            seconds = {path: s for path, _, _, s in baselines}
            mutants, equivalent = [], []
            for t in targets:
                text = (REPO / t.path).read_text(encoding="utf-8").splitlines()
                for p in target_points(t, (lines or {}).get(t.path, "")):
                    if is_equivalent(t, p, text):
                        equivalent.append({"where": f"{t.path}:{p.line}", "in": p.scope, "mutation": p.description})
                    else:
                        mutants.append(Job(t, p, max(20.0, 4 * seconds[t.path])))
            if log:
                print(f"{len(mutants)} mutants over {len(targets)} modules, {jobs} workers", file=sys.stderr)
            results = []
            for n, result in enumerate(pool.map(_run_job, mutants), 1):
                results.append(result)
                if log and (n % 25 == 0 or n == len(mutants)):
                    print(f"  {n}/{len(mutants)} ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    return {**report(targets, mutants, results, time.monotonic() - started), "equivalent": equivalent}


def report(
    targets: Sequence[Target],
    mutants: Sequence[Job],
    results: Sequence[tuple[str, str, int | None, float]],
    seconds: float,
) -> dict[str, object]:
    survived = []
    per_module: dict[str, dict[str, int]] = {t.path: {"mutants": 0, "killed": 0} for t in targets}
    for job, (path, outcome, _, _) in zip(mutants, results, strict=True):
        assert job.point is not None
        per_module[path]["mutants"] += 1
        if outcome == "survived":
            critical = any(job.point.scope == c or job.point.scope.startswith(c + ".") for c in job.target.critical)
            survived.append(
                {
                    "where": f"{path}:{job.point.line}",
                    "in": job.point.scope,
                    "mutation": job.point.description,
                    "critical": critical,
                }
            )
        else:
            per_module[path]["killed"] += 1
    total = len(mutants)
    killed = total - len(survived)
    score = killed / total if total else 1.0
    critical = [s for s in survived if s["critical"]]
    return {
        "mutants": total,
        "killed": killed,
        "survived": survived,
        "score": round(score, 4),
        "budget": BUDGET,
        "critical_survivors": len(critical),
        "ok": score >= BUDGET and not critical,
        "modules": per_module,
        "seconds": round(seconds, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.mutation", description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="only the targets marked fast (what CI runs)")
    parser.add_argument("--module", action="append", default=[], help="only this module path (repeatable)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel workers (default: CPUs)")
    parser.add_argument("--list", action="store_true", help="list the mutants without running them")
    args = parser.parse_args(argv)
    targets = [t for t in TARGETS if (not args.fast or t.fast) and (not args.module or t.path in args.module)]
    if args.fast:  # a target may name the part of ``only`` that the fast subset mutates
        targets = [t if t.fast is True else dataclasses.replace(t, only=t.fast) for t in targets]
    lines = {t.path: t.fast_lines for t in targets if args.fast and t.fast_lines}
    if args.module and len(targets) != len(set(args.module)):
        parser.error(f"unknown module; known: {', '.join(t.path for t in TARGETS)}")
    if args.list:
        for t in targets:
            for p in target_points(t, lines.get(t.path, "")):
                print(f"{t.path}:{p.line}\t{p.scope}\t{p.description}")
        return 0
    result = run(targets, max(1, args.jobs), lines=lines)
    print(json.dumps(result, ensure_ascii=False, indent=2))
    return 0 if result["ok"] else 1
