"""Installing the MCP Inspector for the contract tests, so that an interrupted install heals.

``npm install`` writes into ``node_modules`` file by file: killed half-way (a cancelled CI job,
Ctrl-C), it used to leave ``.ci/node_modules`` with the Inspector's ``package.json`` and even its
binary but not all of its dependencies, and every later run trusted that folder and failed. Now
npm installs into a fresh folder of its own (``inspector-VERSION.tmp-PID``) that is renamed to
``inspector-VERSION`` only once npm succeeded and the binary is there: the rename is atomic, so
the final folder is either complete or absent. A temporary folder left by a killed run is removed
by the next one (unless its process still runs: two test sessions may install at once, and the
second rename then finds the first one's complete folder and keeps it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from pathlib import Path

VERSION = "0.17.2"  # the last release that runs on Node.js 20
PACKAGE = f"@modelcontextprotocol/inspector@{VERSION}"
COMPLETE = ".complete"  # written into the temporary folder once npm succeeded, before the rename


def install_inspector(npm: str, prefix: Path, *, timeout_s: float = 600) -> Path:
    """The ``mcp-inspector`` binary under ``prefix``, installed first when it is not there whole."""
    home = prefix / f"inspector-{VERSION}"
    if _complete(home):
        return _binary(home)
    prefix.mkdir(parents=True, exist_ok=True)
    _remove_stale(prefix)
    tmp = prefix / f"inspector-{VERSION}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(tmp),
                "--no-save",
                "--no-package-lock",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                PACKAGE,
            ],
            check=True,
            timeout=timeout_s,
            capture_output=True,
        )
        if not _installed(tmp):
            raise RuntimeError(f"npm install {PACKAGE} succeeded but left no mcp-inspector in {tmp}")
        (tmp / COMPLETE).write_text(VERSION, encoding="utf-8")
        if not _complete(home):
            shutil.rmtree(home, ignore_errors=True)  # a folder this scheme never leaves: not trusted
            try:
                tmp.rename(home)
            except OSError:  # another session renamed its complete install first
                if not _complete(home):
                    raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _binary(home)


def _binary(home: Path) -> Path:
    return home / "node_modules" / ".bin" / "mcp-inspector"


def _installed(folder: Path) -> bool:
    package = folder / "node_modules" / "@modelcontextprotocol" / "inspector" / "package.json"
    try:
        version = json.loads(package.read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        return False
    return version == VERSION and _binary(folder).exists()


def _complete(home: Path) -> bool:
    return (home / COMPLETE).is_file() and _installed(home)


def _remove_stale(prefix: Path) -> None:
    """Temporary folders of installs whose process is gone (killed mid-install)."""
    for folder in prefix.glob(f"inspector-{VERSION}.tmp-*"):
        pid = folder.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            shutil.rmtree(folder)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
