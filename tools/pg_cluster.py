"""A throwaway PostgreSQL cluster for the tests and benchmarks: a real server in a temp dir, no mock.

PostgreSQL refuses to run as root, so under root the cluster belongs to the ``postgres`` user
(``runuser``); otherwise it runs as whoever runs the tests. It listens only on a Unix socket in
its own directory, so parallel runs never meet. ``.ci/run`` installs the server with apt-get when
it is missing; here a missing server is an error, never a skip.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _bin_dir() -> Path:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not candidates:
        raise RuntimeError("PostgreSQL is not installed: `apt-get install postgresql` (see .ci/run)")
    return Path(candidates[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """One running server; :meth:`database` hands out fresh, empty databases on it."""

    def __init__(self, root: Path, *, durable: bool = False) -> None:
        self.root = root
        # Tests run without fsync (a killed process, not a lost machine, is what they inject);
        # benchmarks keep PostgreSQL's defaults so their figures are what a team would get.
        self.durable = durable
        self.data = root / "data"
        self.port = _free_port()
        self.bin = _bin_dir()
        self._as_postgres = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, text=True)

    def start(self) -> None:
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        self.resume()

    def resume(self) -> None:
        """Start (or restart after :meth:`stop`) the server on the same data and socket."""
        options = f"-p {self.port} -k {self.root} -c listen_addresses=''"
        if not self.durable:
            options += " -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-w", "-l", str(self.root / "server.log"), "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@/{dbname}?host={self.root}&port={self.port}"

    def database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@contextmanager
def running_cluster(*, durable: bool = False) -> Iterator[Cluster]:
    root = Path(tempfile.mkdtemp(prefix="ledger-pg-"))
    cluster = Cluster(root, durable=durable)
    cluster.start()
    try:
        yield cluster
    finally:
        try:
            cluster.stop("immediate")
        finally:
            shutil.rmtree(root, ignore_errors=True)
