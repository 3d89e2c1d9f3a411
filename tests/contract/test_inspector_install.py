"""The MCP Inspector's install survives an interrupted ``npm install`` (tests/contract/inspector_install.py).

The stand-in ``npm`` below is a real program run as a subprocess: on its first run it writes
the Inspector's ``package.json`` and then kills itself with SIGKILL, as a cancelled job leaves
npm; on later runs it completes. (The real npm runs in the Inspector test itself.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.contract.inspector_install import VERSION, install_inspector

STAND_IN = """#!{python}
import os, pathlib, signal, sys
prefix = pathlib.Path(sys.argv[sys.argv.index("--prefix") + 1])
runs = pathlib.Path(os.environ["STAND_IN_RUNS"])
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
package = prefix / "node_modules" / "@modelcontextprotocol" / "inspector"
package.mkdir(parents=True)
(package / "package.json").write_text('{{"version": "{version}"}}')
if len(runs.read_text()) == 1:
    os.kill(os.getpid(), signal.SIGKILL)  # interrupted half-way: no binary, no dependencies
binary = prefix / "node_modules" / ".bin" / "mcp-inspector"
binary.parent.mkdir(parents=True)
binary.write_text("#!/bin/sh\\necho inspector\\n")
binary.chmod(0o755)
"""


@pytest.fixture
def npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "npm"
    script.write_text(STAND_IN.format(python=sys.executable, version=VERSION), encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("STAND_IN_RUNS", str(tmp_path / "runs"))
    return script


def test_an_interrupted_install_leaves_nothing_trusted_and_the_next_run_installs(npm: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "ci"
    with pytest.raises(subprocess.CalledProcessError):
        install_inspector(str(npm), prefix)
    assert sorted(p.name for p in prefix.iterdir()) == []  # no half-installed folder left behind
    binary = install_inspector(str(npm), prefix)
    assert subprocess.run([binary], capture_output=True, text=True, check=True).stdout == "inspector\n"
    assert install_inspector(str(npm), prefix) == binary
    assert (tmp_path / "runs").read_text() == "xx"  # installed once, then reused


def test_a_folder_left_by_a_killed_run_is_removed_and_an_untrusted_home_replaced(npm: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "ci"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = prefix / f"inspector-{VERSION}.tmp-{dead.stdout.strip()}" / "node_modules"
    stale.mkdir(parents=True)  # the temporary folder of an install killed with its process
    half = prefix / f"inspector-{VERSION}" / "node_modules" / "@modelcontextprotocol" / "inspector"
    half.mkdir(parents=True)
    (half / "package.json").write_text(f'{{"version": "{VERSION}"}}')  # no completion mark: not trusted
    (tmp_path / "runs").write_text("x")  # the stand-in completes at once
    binary = install_inspector(str(npm), prefix)
    assert binary.exists() and not stale.parent.exists()
    assert sorted(p.name for p in prefix.iterdir()) == [f"inspector-{VERSION}"]
    assert os.access(binary, os.X_OK)
