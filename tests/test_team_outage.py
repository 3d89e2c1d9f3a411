"""A team log through real outages: a real PostgreSQL server the tests start, stop and cut.

Each "machine" is a facade with its own read-model file and JSONL backup on one PostgreSQL log,
replaying its own backup by itself as ``ledger serve`` does (``auto_replay``). The faults:

* the server stopped mid-stream (``fast`` and ``immediate`` shutdown) and started again;
* a connection cut while a commit is in flight, by a loopback TCP proxy the test controls:
  before the server gets ``COMMIT``, and after it committed but before the answer came back;
* two machines writing the same fact and contradicting facts during one outage, while one
  retires a member and judges a conflict;
* a machine restarted with a pending backup, while the server is still down;
* a replay cut short by the same proxy at a replayed write's commit (by itself and by hand);
* a working note revised offline while another machine revises it later;
* a machine joining with an empty read-model file while another writes.

After each (:func:`settled`): ``verify`` on every machine, identical read models on every
machine (checksums of every read-model table), every acknowledged write in the log exactly
once, and status and doctor saying the same about what is pending.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import psycopg
import pytest
from click.testing import CliRunner

from fact_ledger.ledger.errors import Unavailable
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.server.app.backup_log import BackupLog
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.app.storage import Storage
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Embedding, Settings
from tests.conftest import ledger_cli
from tools.pg_cluster import Cluster

Machine = Callable[..., LedgerApp]


@pytest.fixture
def team(pg_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Machine]:
    """``team(name, url=None)``: a machine on the test's log (or on ``url``: through a proxy)."""
    monkeypatch.setattr(Storage, "REOPEN_INTERVAL_S", 0.0)
    url = pg_cluster.database()
    opened: list[LedgerApp] = []

    def machine(name: str, via: str | None = None) -> LedgerApp:
        home = tmp_path / name
        home.mkdir(exist_ok=True)
        settings = Settings(
            store=via or url,
            views=str(home / "views.db"),
            backup=str(home / "backup.jsonl"),
            client=name,
            embedding=Embedding(enabled=False),
        )
        app = LedgerApp(settings)
        app.storage.auto_replay = True  # as ledger serve does
        opened.append(app)
        return app

    machine.url = url  # type: ignore[attr-defined]
    machine.cluster = pg_cluster  # type: ignore[attr-defined]
    yield machine
    for app in opened:
        app.close()


def log_ids(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT event_id FROM events ORDER BY position")]


def checksums(app: LedgerApp) -> dict[str, str]:
    """Each read-model table's rows, in a stable order, hashed."""
    out = {}
    for projector in app.runner.projectors:
        for table in projector.tables:
            rows = sorted(repr(tuple(r)) for r in app.conn.execute(f"SELECT * FROM {table}"))
            out[table] = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    return out


def pending_agree(app: LedgerApp) -> int:
    """What status and doctor say is pending, checked to be the same; the number of writes."""
    status = app.status()
    pending = status["pending_backup"]
    check = next(c for c in app.doctor()["checks"] if c["name"] == "pending_backup")
    writes = pending["writes"] if pending else 0
    assert check.get("count", 0) == writes, (check, pending)
    unreachable = status["degraded"] is not None and status["degraded"]["reason"] == "log_unreachable"
    assert status["log"]["reachable"] is not unreachable  # one state: never reachable and unreachable at once
    return int(writes)


def writable(app: LedgerApp) -> dict[str, Any]:
    """Doctor's ``writable`` check: whether a write reaches the log (it must agree with status)."""
    return dict(next(c for c in app.doctor()["checks"] if c["name"] == "writable"))


def first_id(reply: dict[str, Any], url: str) -> str:
    """The acknowledged write's identity: its backed-up head event id, or the log's row."""
    if reply.get("backup_only"):
        return str(reply["backup"]["event_ids"][0])
    with psycopg.connect(url) as conn:
        return str(conn.execute("SELECT event_id FROM events WHERE position=%s", (reply["memory_id"],)).fetchone()[0])


def settled(machines: list[LedgerApp], url: str, acknowledged: list[dict[str, Any]] = ()) -> None:  # type: ignore[assignment]
    for app in machines:
        app.status()  # any call: a due replay lands first
    for app in machines:
        assert pending_agree(app) == 0
        app.storage.pull()
        verified = app.verify()
        assert (verified["chain"], verified["projections"]) == ("intact", "consistent")
    sums = [checksums(app) for app in machines]
    assert all(s == sums[0] for s in sums), [t for t in sums[0] if any(s.get(t) != sums[0][t] for s in sums)]
    ids = log_ids(url)
    assert len(ids) == len(set(ids))
    for reply in acknowledged:
        assert ids.count(first_id(reply, url)) == 1, reply


def contents(app: LedgerApp, text: str) -> list[int]:
    return [r[0] for r in app.conn.execute("SELECT memory_id FROM memories WHERE content=?", (text,))]


# -- the server stopped mid-stream -------------------------------------------------------------
@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_the_server_stopped_and_started_mid_stream(team: Machine, mode: str) -> None:
    """A writer keeps writing while the server stops under it (a commit may be in flight), goes
    on through the outage, and writes again once it is back."""
    a, b = team("laptop-a"), team("laptop-b")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    replies: list[dict[str, Any]] = []
    ten, backed_up, resumed = threading.Event(), threading.Event(), threading.Event()

    def text(i: int) -> str:
        return f"stream fact {i}: queue depth {i * 3}"

    def writer() -> None:
        while not backed_up.is_set() and len(replies) < 500:
            replies.append(a.remember(text(len(replies))))
            if len(replies) == 10:
                ten.set()
            if sum(1 for r in replies if r.get("backup_only")) == 5:  # five during the outage
                backed_up.set()
        resumed.wait(30)
        for _ in range(10):
            replies.append(a.remember(text(len(replies))))

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert ten.wait(30)
        cluster.stop(mode)  # while the writer writes
        try:
            assert backed_up.wait(30)
            assert pending_agree(a) >= 5  # down: what A backed up is pending, as doctor says too
        finally:
            cluster.resume()
            resumed.set()
    finally:
        thread.join(60)
    assert not thread.is_alive() and all(r["ok"] for r in replies)
    assert sum(1 for r in replies if r.get("backup_only")) >= 5
    settled([a, b], team.url, replies)  # type: ignore[attr-defined]
    for i in range(len(replies)):
        assert len(contents(b, text(i))) == 1


# -- a connection cut while a commit is in flight ------------------------------------------------
class CuttingProxy:
    """A loopback TCP proxy to the cluster's Unix socket that cuts a connection at ``COMMIT``:
    ``before`` drops it unsent (the server rolls back), ``after`` sends it, holds the answer back
    until the commit is done, then cuts (the client never hears that it committed). With
    ``marker`` set, the cut waits for the first ``COMMIT`` after those bytes went up (the commit
    of the write that holds them)."""

    def __init__(self, cluster: Cluster) -> None:
        self.target = str(cluster.root / f".s.PGSQL.{cluster.port}")
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.armed: str | None = None
        self.marker: bytes | None = None
        self.cuts = 0
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, dbname: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.socket(socket.AF_UNIX)
            try:
                server.connect(self.target)
            except OSError:  # the server is stopped: this connection fails, the next may not
                self._close(client, server)
                continue
            self._open += [client, server]
            muted = threading.Event()
            threading.Thread(target=self._pump, args=(client, server, muted, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, muted, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, muted: threading.Event, upstream: bool) -> None:
        try:
            while data := src.recv(65536):
                if upstream and self.armed and self.marker and self.marker in data:
                    self.marker = None
                if upstream and self.armed and not self.marker and b"COMMIT" in data:
                    mode, self.armed = self.armed, None
                    self.cuts += 1
                    if mode == "after":
                        muted.set()
                        dst.sendall(data)
                        time.sleep(0.3)  # the server commits; its answer is never relayed
                    self._close(src, dst)
                    return
                if not upstream and muted.is_set():
                    continue
                dst.sendall(data)
        except OSError:
            pass
        self._close(src, dst)

    @staticmethod
    def _close(*socks: socket.socket) -> None:
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self.listener.close()
        self._close(*self._open)


@pytest.mark.parametrize("cut", ["before", "after"])
def test_a_connection_cut_while_a_commit_is_in_flight(team: Machine, cut: str) -> None:
    """The write is in the log once or in the backup (pending) once: never both, never neither."""
    url: str = team.url  # type: ignore[attr-defined]
    proxy = CuttingProxy(team.cluster)  # type: ignore[attr-defined]
    try:
        a = team("laptop-a", via=proxy.url(urlparse(url).path.lstrip("/")))
        b = team("laptop-b")
        kept = a.remember("written before the cut: the build runs on runner-7")
        proxy.armed = cut
        reply = a.remember("written during the cut: the build runs on runner-9")
        assert proxy.cuts == 1
        assert reply["ok"] and reply["backup_only"] is True  # unacknowledged by the log: backed up
        head = reply["backup"]["event_ids"][0]
        in_log = log_ids(url).count(head)
        assert in_log == (1 if cut == "after" else 0)
        # Never both: a write the log holds is not pending; never neither: one the log lacks is.
        a.storage.auto_replay = False  # look before the next call replays it
        assert pending_agree(a) == 1 - in_log
        a.storage.auto_replay = True
        settled([a, b], url, [kept, reply])
        assert len(contents(b, "written during the cut: the build runs on runner-9")) == 1
        replayed = [e for e in b.store.read() if e.type == "WriteReplayed"]
        assert len(replayed) == (0 if cut == "after" else 1)  # a write that landed is not decided twice
    finally:
        proxy.close()


# -- two machines during one outage ---------------------------------------------------------------
def test_two_machines_write_the_same_and_contradicting_facts_retire_and_judge_in_one_outage(team: Machine) -> None:
    a, b = team("laptop-a"), team("laptop-b")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    port_a = a.remember("The staging API listens on port 7070", subject="staging api")
    port_b = b.remember("The staging API listens on port 9090", subject="staging api")
    [staging] = port_b["conflicts"]
    bob = a.remember("Bob lives in Berlin", subject="Bob")
    bob2 = b.remember("Bob lives in Paris", subject="Bob")
    [bob_set] = bob2["conflicts"]
    a.storage.pull()
    cluster.stop("fast")
    try:
        outage = [
            a.remember("The VPN gateway is vpn-3", subject="vpn"),
            b.remember("The VPN gateway is vpn-3", subject="vpn"),  # the same fact, on the other machine
            a.remember("The staging API listens on port 8080", subject="staging api"),  # joins the set
            b.retire(port_a["memory_id"], reason="moved", authorization=AUTH_USER),  # a member retires
            a.judge(bob_set["conflict_id"], bob2["memory_id"], rationale="Bob moved to Paris"),
        ]
        assert all(r["backup_only"] for r in outage)
        # Each machine reads its own outage writes, marked pending.
        mine = [r for r in a.find("VPN gateway")["results"] if r.get("pending")]
        assert [(r["content"], r["memory_id"]) for r in mine] == [("The VPN gateway is vpn-3", None)]
        assert pending_agree(a) == 3 and pending_agree(b) == 2
    finally:
        cluster.resume()
    settled([a, b], team.url, [port_a, port_b, bob, bob2, *outage])  # type: ignore[attr-defined]
    assert len(contents(a, "The VPN gateway is vpn-3")) == 1  # one memory for the duplicated fact
    found = a.find("VPN gateway")["results"]
    assert [r.get("pending") for r in found] == [None] and found[0]["memory_id"] is not None
    for app in (a, b):
        for open_set in app.conflicts("open")["conflicts"]:
            statuses = {app.read(m)["memory"]["status"] for m in open_set["members"]}
            assert statuses == {"active"}, open_set
        doctor = {c["name"]: c for c in app.doctor()["checks"]}
        assert doctor["conflicts_with_inactive_members"]["severity"] == "ok", doctor["conflicts_with_inactive_members"]
    assert a.read(port_a["memory_id"])["memory"]["status"] == "retired"
    assert a.conflict_detail(bob_set["conflict_id"])["conflict"]["state"] == "judged"  # the outage's judgment
    staging_now = a.conflict_detail(staging["conflict_id"])["conflict"]
    assert staging_now["state"] == "open" and port_a["memory_id"] not in staging_now["members"]
    assert len(staging_now["members"]) == 2  # 9090 and the outage's 8080: the retired 7070 left
    replayed = [e.data for e in a.store.read() if e.type == "WriteReplayed"]
    assert len(replayed) == 5 and {r.outcome for r in replayed} >= {"decided_anew"}


# -- a restart with a pending backup ----------------------------------------------------------------
def test_a_machine_restarted_with_a_pending_backup_reads_its_write_and_replays_it(team: Machine) -> None:
    a = team("laptop-a")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    a.remember("Written before the outage: the VPN gateway is vpn-2")
    cluster.stop("immediate")
    try:
        reply = a.remember("Written during the outage: the VPN gateway is vpn-3")
        assert reply["backup_only"]
        a.close()
        again = team("laptop-a")  # the same machine, started while the server is still down
        status = again.status()
        assert status["log"]["reachable"] is False and status["degraded"]["reason"] == "log_unreachable"
        found = again.find("VPN gateway")["results"]
        assert [(r.get("pending"), r["memory_id"]) for r in found] == [(True, None), (None, 1)]
        assert pending_agree(again) == 1
    finally:
        cluster.resume()
    status = again.status()  # the first call after the log is back replays the backup
    assert status["degraded"] is None and status["pending_backup"] is None and status["log"]["reachable"]
    notice = again.backup_notice()
    assert notice is not None and "1 backed-up write(s) replayed" in notice
    assert again.backup_notice() is None  # one notice, once
    found = again.find("VPN gateway")["results"]
    assert sorted(r["memory_id"] for r in found) == [1, 2] and not any(r.get("pending") for r in found)
    settled([again], team.url, [reply])  # type: ignore[attr-defined]


def test_a_machine_started_without_read_models_in_an_outage_joins_when_the_log_is_back(team: Machine) -> None:
    """``ledger serve``'s replay poll on such a machine raised (nothing to read from yet) once the
    log was back and before the next reopen, and took the server down with it; its doctor called
    the unreachable log a corrupt file (integrity critical), where the CLI's said ok."""
    a = team("laptop-a")
    a.remember("The build server is ci-1")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    cluster.stop("immediate")
    try:
        assert a.remember("The build server is ci-2")["backup_only"]
        checks = {ch["name"]: ch for ch in a.doctor()["checks"]}  # a machine with its read models
        assert checks["integrity"]["severity"] == "ok", checks["integrity"]
        assert checks["writable"]["severity"] != "ok"  # the outage is named where it is
        c = team("laptop-c")
        c.storage.REOPEN_INTERVAL_S = 3600.0  # as in ledger serve: after a failed reopen, the next not due yet
        assert c.status()["degraded"]["reason"] == "log_unreachable"
    finally:
        cluster.resume()
    c.replay_due()  # the poll, between calls: no answer, and no error
    c.storage.maybe_reopen(force=True)
    assert c.status()["memories"] == 1  # a replays its own backup at its next call


def test_an_update_replayed_after_a_newer_one_landed_leaves_the_newer_current(team: Machine) -> None:
    """A's update, made in the outage, replayed after B's later update had landed: it became
    version 3 and the current value (ci-2 over ci-3), its time before version 2's."""
    a, b = team("laptop-a"), team("laptop-b")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    memory_id = a.remember("The build server is ci-1")["memory_id"]
    b.storage.pull()
    cluster.stop("immediate")
    try:
        offline = a.update(memory_id, content="The build server is ci-2")
        assert offline["backup_only"]
        assert b.status()["degraded"] is not None  # b knows the log is away: its next write reopens it
        time.sleep(0.01)
    finally:
        cluster.resume()
    landed = b.update(memory_id, content="The build server is ci-3")
    assert not landed.get("backup_only") and landed["version"] == 2
    a.status()  # a's next call replays its backup
    notice = a.backup_notice()
    assert notice is not None and "refused" in notice, notice
    for machine in (a, b):
        machine.storage.pull()
        memory = machine.read(memory_id)["memory"]
        assert (memory["content"], memory["version"]) == ("The build server is ci-3", 2)
    assert pending_agree(a) == 0


def test_a_metadata_update_replayed_after_a_newer_one_landed_leaves_the_newer_current(team: Machine) -> None:
    """A's ``metadata`` update, made in the outage, replayed over B's later change of the
    memory's metadata: it silently became the current metadata (the overtaken check compared
    content, subject, tags and the like, never metadata). It is refused and reported as a
    content update is; a metadata update overtaken by a change of other fields still lands."""
    a, b = team("laptop-a"), team("laptop-b")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    memory_id = a.remember("The deploy window is Tuesday", metadata={"owner": "ops"})["memory_id"]
    other = a.remember("The freeze starts in December", metadata={"team": "release"})["memory_id"]
    b.storage.pull()
    cluster.stop("immediate")
    try:
        assert a.update(memory_id, metadata={"owner": "sre"})["backup_only"]
        assert a.update(other, metadata={"team": "platform"})["backup_only"]
        assert b.status()["degraded"] is not None  # b knows the log is away: its next write reopens it
        time.sleep(0.01)
    finally:
        cluster.resume()
    landed = b.update(memory_id, metadata={"owner": "infra"})
    assert not landed.get("backup_only") and landed["version"] == 2
    assert not b.update(other, tags=["calendar"]).get("backup_only")  # another field: a's change still lands
    a.status()  # a's next call replays its backup
    notice = a.backup_notice()
    assert notice is not None and "2 backed-up write(s) replayed" in notice and "1 refused" in notice, notice
    replayed = [e.data for e in a.store.read() if e.type == "WriteReplayed"]
    assert [(r.op, r.outcome) for r in replayed] == [("update", "refused"), ("update", "as_backed_up")]
    assert replayed[0].reason.startswith(
        f"version_conflict: #{memory_id} changed after this update was made offline (metadata in version 2"
    ), replayed[0].reason
    for machine in (a, b):
        machine.storage.pull()
        assert machine.read(memory_id)["memory"]["metadata"] == {"owner": "infra"}
        kept = machine.read(other)["memory"]
        assert (kept["metadata"], kept["tags"]) == ({"team": "platform"}, ["calendar"])
    settled([a, b], team.url)  # type: ignore[attr-defined]


def test_a_replay_reads_the_backup_file_once_however_many_updates_it_holds(
    team: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each replayed ``update`` read the whole backup file again to tell this machine's own
    replays from another writer's changes (quadratic in a large backup): 40 updates read it 40
    times more. The file is read once per replay now, whatever its size."""
    a = team("laptop-a")
    a.storage.auto_replay = False  # replayed by hand below, the reads counted
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    ids = [a.remember(f"Server {n} runs in rack {n}")["memory_id"] for n in range(4)]
    cluster.stop("immediate")
    try:
        for n in range(40):
            assert a.update(ids[n % 4], tags=[f"t{n}"])["backup_only"]
    finally:
        cluster.resume()
    reads: list[int] = []
    lines_from = BackupLog._lines_from

    def counted(self: BackupLog, offset: int, first_line: int) -> Iterator[tuple[int, int, bytes]]:
        reads.append(offset)
        return lines_from(self, offset, first_line)

    monkeypatch.setattr(BackupLog, "_lines_from", counted)
    out = a.replay_backup(dry_run=False, authorization=AUTH_USER)
    assert (out["replayed"], out["as_backed_up"], out["refused"]) == (40, 40, 0)
    whole = [offset for offset in reads if offset == 0]
    assert len(whole) <= 2, f"the backup file was read from its start {len(whole)} times in one replay"
    assert [a.read(i)["memory"]["tags"] for i in ids] == [["t36"], ["t37"], ["t38"], ["t39"]]
    settled([a], team.url)  # type: ignore[attr-defined]


def test_the_first_write_after_a_restart_reaches_the_log(team: Machine) -> None:
    """An idle machine's connection died with the server: its first write after the server was
    back went to the backup ("unreachable", no id), with a notice that the log was back."""
    a = team("laptop-a")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    a.remember("The build server is ci-1")
    cluster.stop("fast")
    cluster.resume()
    time.sleep(1.2)  # idle past the check
    reply = a.remember("The deploy server is cd-1")
    assert not reply.get("backup_only") and reply["memory_id"] == 2, reply
    assert a.status()["degraded"] is None


# -- joining with an empty read-model file ------------------------------------------------------------
def test_a_machine_joining_with_an_empty_read_model_file_while_another_writes(team: Machine, tmp_path: Path) -> None:
    a = team("laptop-a")
    for i in range(40):
        a.remember(f"early fact {i}", subject=f"host {i % 5}")
    replies: list[dict[str, Any]] = []
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set() and i < 200:
            replies.append(a.remember(f"late fact {i}: load {i % 7}"))
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    (tmp_path / "laptop-c").mkdir()
    (tmp_path / "laptop-c" / "views.db").touch()  # an empty read-model file
    c = team("laptop-c")
    stop.set()
    thread.join(60)
    assert replies and all(r["ok"] and not r.get("backup_only") for r in replies)
    settled([a, c], team.url, replies)  # type: ignore[attr-defined]
    assert c.status()["memories"] == 40 + len(replies)


# -- one state -------------------------------------------------------------------------------------
def test_status_says_reachable_and_degraded_from_one_look_at_the_log(team: Machine) -> None:
    """A machine that does not replay by itself (the CLI): after the outage, before any write,
    status must not say reachable and log_unreachable at once; pending stays until replayed."""
    a = team("cli")
    a.storage.auto_replay = False
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    a.remember("written before the outage")
    cluster.stop("fast")
    try:
        assert a.remember("written during the outage")["backup_only"]
        status = a.status()
        assert (status["log"]["reachable"], status["degraded"]["reason"]) == (False, "log_unreachable")
        assert writable(a)["severity"] == "warning"  # doctor agrees: writes go to the backup
        assert writable(a)["message"].startswith("degraded (log_unreachable): the PostgreSQL log is unreachable")
    finally:
        cluster.resume()
    status = a.status()
    assert status["log"]["reachable"] is True and status["degraded"] is None
    assert writable(a) == {"name": "writable", "severity": "ok", "message": "the log and the read models take writes"}
    assert pending_agree(a) == 1 and "1 write(s) in the JSONL backup await replay" in (a.backup_notice() or "")
    replayed = a.replay_backup(dry_run=False, authorization=AUTH_USER)
    assert (replayed["replayed"], replayed["as_backed_up"], replayed["writes_present"]) == (1, 1, 0)
    assert pending_agree(a) == 0
    assert a.replay_backup(dry_run=False, authorization=AUTH_USER)["writes_present"] == 1  # a no-op now


# -- an erasure while another machine held writes about the memory in its backup ---------------------
def test_an_erasure_clears_what_another_machine_backed_up_about_it_and_masked_writes_are_decided_again(
    team: Machine, tmp_path: Path
) -> None:
    """Machine B, offline, updates a memory (with a mask) and states it again; A erases it once the
    log is back. B's replay must not bring the words back: its backup lines about the memory go
    when it pulls the erasure (they went only on the erasing machine), and B's read-model file is
    rewritten without them. A masked write with nothing to mask is decided again like any other:
    it joins the claim set of the values written meanwhile (it went in as backed up, in no set)."""
    a, b = team("laptop-a"), team("laptop-b")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    words = "X1234567"
    carla = a.remember(f"Carla Mendez's passport number is {words}", subject="carla mendez")["memory_id"]
    first = a.remember("The ledger API listens on port 4001", subject="ledger api", event_time="2026-11-01")
    b.storage.pull()
    cluster.stop("fast")
    try:
        outage = [
            b.update(
                carla,
                content=f"Carla Mendez's passport {words}, vault postgres://vault:Pw123456!@db/x",
                on_secret="mask",
            ),
            b.remember(f"Carla Mendez's passport number is {words}", subject="carla mendez"),  # seen again
            b.remember("The ledger API listens on port 4003", subject="ledger api", on_secret="mask"),
            a.remember("The ledger API listens on port 4002", subject="ledger api"),
        ]
        assert all(r["backup_only"] for r in outage)
        assert words.encode() in (tmp_path / "laptop-b" / "backup.jsonl").read_bytes()
    finally:
        cluster.resume()
    a.erase(carla, reason="Carla asked", authorization=AUTH_USER)
    settled([a, b], team.url, [first, *outage[2:]])  # type: ignore[attr-defined]
    # the two writes about Carla are not stored, and B's next reply says so (they went without a word)
    told = b.backup_notice() or ""
    assert "2 backed-up write(s) named a memory erased since" in told or "2 refused" in told, told
    for app in (a, b):
        assert app.read(carla)["memory"]["status"] == "erased"
        assert not [r for r in app.find("Carla passport")["results"] if words in r["content"]]
        (ports,) = [c for c in app.conflicts("open")["conflicts"] if first["memory_id"] in c["members"]]
        assert len(ports["members"]) == 3  # 4001, 4002 and the masked 4003 in one set
    with psycopg.connect(team.url) as conn:  # type: ignore[attr-defined]
        assert conn.execute("SELECT count(*) FROM events WHERE payload LIKE %s", (f"%{words}%",)).fetchone() == (0,)
    for path in (tmp_path / "laptop-b").iterdir():
        assert words.encode() not in path.read_bytes(), path.name


# -- a second outage, and what a person sees at the terminal while the log is away -------------------
def test_a_write_replayed_before_is_not_pending_in_the_next_outage_and_the_cli_says_the_log_is_away(
    team: Machine, tmp_path: Path
) -> None:
    a = team("laptop-a")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    kept = a.remember("The metrics port is 9100", subject="metrics")["memory_id"]
    cluster.stop("fast")
    try:
        first = a.remember("The metrics exporter runs on host m1", subject="metrics host")
        assert first["backup_only"]
    finally:
        cluster.resume()
    a.status()  # the log is back: the backed-up write replays
    assert a.status()["pending_backup"] is None
    cluster.stop("fast")
    a.close()
    try:
        a = team("laptop-a")  # started again during the second outage: the backup file is read afresh
        found = [
            (r.get("pending"), r["content"]) for r in a.find("metrics exporter")["results"] if "m1" in r["content"]
        ]
        assert found == [(None, "The metrics exporter runs on host m1")]  # once, with its id: not pending again
        assert pending_agree(a) == 0
        reply = a.update(kept, content="The metrics port is 9200")
        assert reply["backup_only"]
        env = {
            "LEDGER_STORE": team.url,  # type: ignore[attr-defined]
            "LEDGER_VIEWS": str(tmp_path / "laptop-a" / "views.db"),
            "LEDGER_BACKUP": str(tmp_path / "laptop-a" / "backup.jsonl"),
            "LEDGER_EMBEDDING_ENABLED": "false",
        }
        runner = CliRunner()
        human = runner.invoke(main, ["find", "metrics port"], env=env)
        assert human.exit_code == 0 and "The metrics port is 9100" in human.output
        assert "the log cannot be reached" in human.stderr
        as_json = json.loads(runner.invoke(main, ["--json", "find", "metrics port"], env=env).stdout)
        assert any("the log cannot be reached" in n for n in as_json["notices"])
        shown = runner.invoke(main, ["read", str(kept)], env=env)
        assert shown.exit_code == 0 and "pending MemoryUpdated" in shown.output and "9200" in shown.output
        doctor = runner.invoke(main, ["doctor"], env=env)  # says what status says: the log takes no writes
        assert doctor.exit_code == 1 and " warning writable: degraded (log_unreachable): " in doctor.stdout
        status = runner.invoke(main, ["status"], env=env)
        assert status.exit_code == 5 and "(log_unreachable)" in status.stdout
        # a local path given too (--db, LEDGER_DB) names no file to look for: the team's log is the ledger
        unused = str(tmp_path / "no-such-file.db")
        status = ledger_cli("--db", unused, "status", env={**env, "LEDGER_CREATE": ""})  # as a person runs it
        assert status.returncode == 5 and "(log_unreachable)" in status.stdout and "no ledger at" not in status.stderr
        dry = runner.invoke(
            main, ["replay-backup"], env=env
        )  # a dry run appends nothing: no "run it again" of a replay
        assert "the dry run could not read the log (log_unreachable)" in dry.output and "appending" not in dry.output
    finally:
        cluster.resume()


def test_with_the_log_away_and_the_backup_unwritable_the_cli_says_writes_are_refused(
    team: Machine, tmp_path: Path
) -> None:
    """The log out of reach and the JSONL backup's folder read-only: a write was refused (exit 5,
    nothing stored), yet every command told the person "writes go to the JSONL backup until it
    is back". It says writes are refused now, naming the backup that cannot be written."""
    a = team("laptop-a")
    a.remember("The metrics port is 9100", subject="metrics")
    folder = tmp_path / "backups"
    folder.mkdir()
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i needs root (a real read-only folder)")
    env = {
        "LEDGER_STORE": team.url,  # type: ignore[attr-defined]
        "LEDGER_VIEWS": str(tmp_path / "laptop-a" / "views.db"),
        "LEDGER_BACKUP": str(folder / "backup.jsonl"),
        "LEDGER_EMBEDDING_ENABLED": "false",
    }
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    cluster.stop("fast")
    try:
        found = ledger_cli("find", "metrics port", env=env)  # as a person runs it
        assert found.returncode == 0 and "The metrics port is 9100" in found.stdout, found.stderr
        assert "the log cannot be reached" in found.stderr
        assert f"writes are refused: the JSONL backup {folder / 'backup.jsonl'} cannot be written either" in (
            " ".join(found.stderr.split())
        ), found.stderr
        assert "writes go to the JSONL backup" not in found.stderr
        write = ledger_cli("remember", "The metrics port is 9200", env=env)
        assert write.returncode == 5 and "nothing was stored" in write.stderr, write.stderr
    finally:
        cluster.resume()
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    assert not (folder / "backup.jsonl").exists()


def test_signals_sent_offline_promote_the_note_when_they_land(team: Machine) -> None:
    """Each offline ``reinforce`` was decided on a copy without the others (never enough to
    promote) and went in as backed up: the rule held once all landed, and nothing promoted."""
    a, b = team("laptop-a"), team("laptop-b")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    note = a.remember("Trying port 8081 for the preview", tier="working", session_id="s9", turn=1)["memory_id"]
    b.storage.pull()
    cluster.stop("fast")
    try:
        for turn in (2, 3, 4):
            assert b.reinforce(note, "tool_succeeded", session_id="s9", turn=turn)["backup_only"]
    finally:
        cluster.resume()
    settled([a, b], team.url)  # type: ignore[attr-defined]
    promoted = [e.data for e in a.store.read() if e.type == "Promoted"]
    assert len(promoted) == 1
    assert [r["content"] for r in a.find("preview port")["results"]] == ["Trying port 8081 for the preview"]


def test_a_working_note_revised_offline_yields_to_a_later_revision_by_another_machine(team: Machine) -> None:
    """A's revision of a working note, made in the outage, replayed over B's later revision of
    the same field: it became the note's current text (the overtaken check looked at long-term
    memories only). It is refused as an update of a long-term memory is; a revision of another
    field (its tags) still lands."""
    a, b = team("laptop-a"), team("laptop-b")
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    note = a.remember("Trying port 8081 for the preview", tier="working", session_id="s7", turn=1)["memory_id"]
    b.storage.pull()
    cluster.stop("immediate")
    try:
        assert a.update(note, content="Trying port 8082 for the preview", session_id="s7", turn=2)["backup_only"]
        assert a.update(note, tags=["preview"], session_id="s7", turn=3)["backup_only"]
        pending = a.read(note, session_id="s7")["pending_changes"]  # a's own revisions, as for a long-term memory
        assert [(c["type"], c["payload"].get("tags")) for c in pending] == [
            ("WorkingRevised", None),
            ("WorkingRevised", ["preview"]),
        ]
        assert b.status()["degraded"] is not None  # b knows the log is away: its next write reopens it
        time.sleep(0.01)
    finally:
        cluster.resume()
    landed = b.update(note, content="Trying port 8083 for the preview", session_id="s7", turn=4)
    assert not landed.get("backup_only") and landed["version"] == 2
    a.status()  # a's next call replays its backup
    notice = a.backup_notice()
    assert notice is not None and "2 backed-up write(s) replayed" in notice and "1 refused" in notice, notice
    replayed = [e.data for e in a.store.read() if e.type == "WriteReplayed"]
    assert [(r.op, r.outcome) for r in replayed] == [("update", "refused"), ("update", "as_backed_up")]
    assert replayed[0].reason.startswith(f"version_conflict: #{note} changed after this update was made offline")
    for machine in (a, b):
        machine.storage.pull()
        memory = machine.read(note)["memory"]
        assert (memory["content"], memory["tags"], memory["version"]) == (
            "Trying port 8083 for the preview",
            ["preview"],
            3,
        )
    settled([a, b], team.url)  # type: ignore[attr-defined]


@pytest.mark.parametrize("cut", ["before", "after"])
def test_a_replay_cut_by_a_second_outage_tells_every_write_it_replayed(team: Machine, cut: str) -> None:
    """The log went away again while the backup replayed (at the commit of the third write:
    before the server got it, or after, its answer never coming back): the notice after the
    rest replayed counted only the last run's writes ("1 backed-up write(s) replayed (1 as
    backed up, 0 decided anew, 0 refused)"), so the refusal of the first went untold. It counts
    every write of the backup replayed since the log came back."""
    url: str = team.url  # type: ignore[attr-defined]
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    proxy = CuttingProxy(cluster)
    try:
        a = team("laptop-a", via=proxy.url(urlparse(url).path.lstrip("/")))
        b = team("laptop-b")
        memory_id = a.remember("The build server is ci-1")["memory_id"]
        b.storage.pull()
        cluster.stop("immediate")
        try:
            replies = [a.update(memory_id, content="The build server is ci-2")]
            for text in ("The deploy window is Tuesday", "The cache host is cache-7", "The queue host is mq-3"):
                replies.append(a.remember(text))
            assert all(r["backup_only"] for r in replies)
            assert b.status()["degraded"] is not None  # b knows the log is away: its next write reopens it
            time.sleep(0.01)
        finally:
            cluster.resume()
        assert b.update(memory_id, content="The build server is ci-3")["version"] == 2  # later: a's is refused
        proxy.armed, proxy.marker = cut, b"cache-7"
        a.status()  # the replay starts: the update is refused, the deploy window lands, then the cut
        assert proxy.cuts == 1
        assert log_ids(url).count(replies[2]["backup"]["event_ids"][0]) == (1 if cut == "after" else 0)
        a.status()  # the log answers again: the rest replays
        notice = a.backup_notice()
        assert notice is not None, notice
        assert "4 backed-up write(s) replayed (3 as backed up, 0 decided anew, 1 refused)" in notice, notice
        assert a.backup_notice() is None  # one notice, once
        settled([a, b], url, replies[1:])
        assert (a.read(memory_id)["memory"]["content"]) == "The build server is ci-3"
    finally:
        proxy.close()


def test_a_replay_by_hand_cut_by_an_outage_says_what_it_replayed(team: Machine) -> None:
    """``replay_backup`` by hand, cut by the log going away: its error said how many events it
    had appended, not how many writes it had replayed nor that one of them was refused."""
    url: str = team.url  # type: ignore[attr-defined]
    cluster: Cluster = team.cluster  # type: ignore[attr-defined]
    proxy = CuttingProxy(cluster)
    try:
        a = team("laptop-a", via=proxy.url(urlparse(url).path.lstrip("/")))
        a.storage.auto_replay = False  # as the CLI: nothing replays by itself
        b = team("laptop-b")
        memory_id = a.remember("The build server is ci-1")["memory_id"]
        b.storage.pull()
        cluster.stop("immediate")
        try:
            assert a.update(memory_id, content="The build server is ci-2")["backup_only"]
            for text in ("The deploy window is Tuesday", "The cache host is cache-7"):
                assert a.remember(text)["backup_only"]
            assert b.status()["degraded"] is not None
            time.sleep(0.01)
        finally:
            cluster.resume()
        assert b.update(memory_id, content="The build server is ci-3")["version"] == 2
        proxy.armed, proxy.marker = "before", b"cache-7"
        with pytest.raises(Unavailable) as stopped:
            a.replay_backup(dry_run=False, authorization=AUTH_USER)
        assert "after replaying 2 write(s) (1 refused)" in stopped.value.message, stopped.value.message
        assert (stopped.value.details["replayed"], stopped.value.details["refused"]) == (2, 1)
        again = a.replay_backup(dry_run=False, authorization=AUTH_USER)
        assert (again["replayed"], again["writes_present"]) == (1, 2)
    finally:
        proxy.close()
