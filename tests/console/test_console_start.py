"""``ledger console`` on a database it cannot use: a path with no ledger is refused before anything
listens (exit 5, nothing created, as every command but ``serve``: docs/cli.md); a ledger that
cannot be used now starts, says why on stderr as ``ledger serve`` does, and every page —
Doctor's checks included — is an error page, never a 500."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO, ledger_cli, lock_holders
from tests.test_write_lock_held import HOLDER
from tools.pg_cluster import Cluster


def _console(db: Path | None, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``ledger console`` on ``db`` (or on what ``env`` names: a team's log)."""
    person = {k: v for k, v in os.environ.items() if k != "LEDGER_CREATE"}  # a person's console: no --create
    return subprocess.Popen(
        [sys.executable, "-m", "fact_ledger.server", "console", "--no-open", "--port", "0"]
        + (["--db", str(db)] if db is not None else []),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**person, **(env or {}), "PYTHONUNBUFFERED": "1"},
    )


def _get(url: str, path: str, lang: str = "en") -> tuple[int, str]:
    """A page as the person who opened the printed ``url`` sees it, in ``lang``."""
    base, token = url.split("/?token=")
    cookie = f"ledger_console_{base.rsplit(':', 1)[1]}={token}; ledger_console_lang={lang}"
    try:
        with urllib.request.urlopen(urllib.request.Request(base + path, headers={"Cookie": cookie}), timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_a_path_with_no_ledger_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    db = tmp_path / "does-not-exist.db"
    proc = _console(db)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 5 and "token=" not in out
    assert f"no ledger at {db}" in err and "ledger init" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def damaged_ledger(db: Path) -> Path:
    """A ledger whose schema page was overwritten: SQLite calls the file malformed (``corrupt``),
    a ledger that cannot be used rather than a path that holds none."""
    ledger_cli("init", "--db", str(db), check=True)
    with db.open("r+b") as fh:
        fh.seek(100)
        fh.write(b"\xff" * 3000)
    return db


def test_a_damaged_ledger_is_served_with_the_reason_and_doctor_is_an_error_page(tmp_path: Path) -> None:
    proc = _console(damaged_ledger(tmp_path / "damaged.db"))
    assert proc.stdout is not None
    url = next((line.strip() for line in iter(proc.stdout.readline, "") if "token=" in line), "")
    if not url:
        _, err = proc.communicate(timeout=20)
        raise AssertionError(f"the console did not start (exit {proc.returncode}): {err}")
    try:
        base, token = url.split("/?token=")
        cookie = {"Cookie": f"ledger_console_{base.rsplit(':', 1)[1]}={token}"}
        for path in ("/doctor?run=1", "/doctor", "/"):
            try:
                urllib.request.urlopen(urllib.request.Request(base + path, headers=cookie), timeout=10)
                status, body = 200, ""
            except urllib.error.HTTPError as exc:
                status, body = exc.code, exc.read().decode()
            if path == "/doctor":  # the page itself, before the checks are asked for
                assert status == 200, path
                continue
            assert status == 409 and re.search(r'id="error"><code>unavailable</code>', body), (path, status)
            assert "corrupt" in body
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert "fact-ledger: database unusable (corrupt)" in err
    assert proc.returncode == 0 and "Traceback" not in err


def _banner(page: str) -> str:
    return page.split('id="degraded-banner">', 1)[1].split("</p>", 1)[0] if 'id="degraded-banner"' in page else ""


def test_a_team_log_out_of_reach_is_served_with_a_banner_naming_the_reason(pg_cluster: Cluster, tmp_path: Path) -> None:
    """The Overview showed the events and every projection's lag 0 and no word of the outage
    while the start-up line said the database was unusable: every page now carries the reason,
    in both languages, as status and doctor say it; once the log is back the banner goes."""
    store = pg_cluster.database().replace("postgres@", "postgres:hunter2pw@", 1)  # trust: the password is not asked for
    env = {
        "LEDGER_STORE": store,
        "LEDGER_VIEWS": str(tmp_path / "views.db"),
        "LEDGER_BACKUP": str(tmp_path / "backup.jsonl"),
        "LEDGER_EMBEDDING_ENABLED": "false",
    }
    ledger_cli("remember", "The metrics port is 9100", env=env, check=True)
    pg_cluster.stop("fast")
    try:
        ledger_cli("remember", "The metrics port is 9200", env=env)  # kept in the backup: one write
        proc = _console(None, env)
    except BaseException:
        pg_cluster.resume()
        raise
    try:
        assert proc.stdout is not None
        said = [proc.stdout.readline().strip() for _ in range(2)]  # what it names, then the URL
        url = said[1] if "token=" in said[1] else ""
        try:
            assert url, f"the console did not start: {said}"
            # the team's log, as ledger serve names it (not the default SQLite path), without its password
            assert said[0] == f"ledger console for {store.replace(':hunter2pw@', ':***@')}"
            for lang, words in (("en", "the team log cannot be reached"), ("zh", "无法连接团队日志")):
                for path in ("/", "/memories?q=metrics", "/settings"):
                    status, page = _get(url, path, lang)
                    assert status == 200 and words in _banner(page), (lang, path)
                    assert "<code>log_unreachable</code>" in _banner(page)
            # the write kept in the backup answers a search first, as an agent's find lists it
            for lang, heading in (("en", "waiting in the JSONL backup"), ("zh", "在 JSONL 备份中等待")):
                _, page = _get(url, "/memories?q=metrics", lang)
                pending = page.split('id="pending-results"', 1)[1].split("</section>", 1)[0]
                assert heading in pending and "The metrics port is 9200" in pending, (lang, pending)
            _, page = _get(url, "/", "zh")
            assert "数据库当前无法使用" in _banner(page) and "The database cannot be used" not in page
            assert "1 次写入（" in page  # counted as status counts it: writes, not their events
            assert "1 write (" in _get(url, "/")[1]
            _, page = _get(url, "/doctor?run=1")
            writable = page.split('title="writable"', 1)[1].split("</tr>", 1)[0]
            assert "sev-warning" in writable and "degraded (log_unreachable)" in writable
        finally:
            pg_cluster.resume()
        for _ in range(50):  # the console tries the log again at most once a second
            status, page = _get(url, "/")
            if not _banner(page):
                break
            time.sleep(0.2)
        assert status == 200 and 'id="degraded-banner"' not in page
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert "fact-ledger: database unusable (log_unreachable)" in err
    assert proc.returncode == 0 and "Traceback" not in err


def test_with_the_log_away_and_the_backup_unwritable_the_banner_says_writes_are_refused(
    pg_cluster: Cluster, tmp_path: Path
) -> None:
    """The team's log out of reach and the JSONL backup's folder read-only: the banner said
    "writes go to the JSONL backup" while each write was refused, nothing stored. It says every
    write is refused now, in both languages, naming the backup."""
    folder = tmp_path / "backups"
    folder.mkdir()
    env = {
        "LEDGER_STORE": pg_cluster.database(),
        "LEDGER_VIEWS": str(tmp_path / "views.db"),
        "LEDGER_BACKUP": str(folder / "backup.jsonl"),
        "LEDGER_EMBEDDING_ENABLED": "false",
    }
    ledger_cli("remember", "The metrics port is 9100", env=env, check=True)
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i needs root (a real read-only folder)")
    pg_cluster.stop("fast")
    proc = None
    try:
        proc = _console(None, env)
        assert proc.stdout is not None
        url = next((line.strip() for line in iter(proc.stdout.readline, "") if "token=" in line), "")
        assert url, "the console did not start"
        for lang, refused, kept in (
            ("en", "every write is refused: the JSONL backup cannot be written either", "writes go to the JSONL"),
            ("zh", "所有写入都被拒绝：JSONL 备份也无法写入", "写入进入 JSONL 备份"),
        ):
            status, page = _get(url, "/", lang)
            banner = _banner(page)
            assert status == 200 and refused in banner and kept not in banner, banner
            assert f"the JSONL backup {folder / 'backup.jsonl'} cannot be written either" in banner
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=20)
        pg_cluster.resume()
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_the_settings_page_says_where_embedding_values_came_from_and_lists_read_as_lists(tmp_path: Path) -> None:
    """``LEDGER_EMBEDDING_THREADS=3`` showed "3 default" (only [policy] was followed), and the
    allowed workspaces showed as Python's ``('vault', 'ops')``."""
    db = tmp_path / "ledger.db"
    ledger_cli("init", "--db", str(db), check=True)
    config = tmp_path / "config.toml"
    config.write_text("[embedding]\nnotice_similarity = 0.9\nenabled = false\n")
    env = {
        "LEDGER_CONFIG": str(config),
        "LEDGER_EMBEDDING_THREADS": "3",
        "LEDGER_SECRETS_ALLOWED_WORKSPACES": "vault,ops",
    }
    proc = _console(db, env)
    try:
        assert proc.stdout is not None
        url = next((line.strip() for line in iter(proc.stdout.readline, "") if "token=" in line), "")
        assert url, "the console did not start"
        for lang, file, from_env in (("en", "file", "env"), ("zh", "配置文件", "环境变量")):
            status, page = _get(url, "/settings", lang)
            assert status == 200

            def row(key: str, page: str = page) -> str:
                return re.sub(r"<[^>]+>", "", page.split(f'data-key="{key}">', 1)[1].split("</tr>", 1)[0])

            assert row("embedding.threads") == f"embedding.threads3{from_env}", lang
            assert row("embedding.notice_similarity") == f"embedding.notice_similarity0.9{file}", lang
            assert row("embedding.duplicate_similarity").endswith(("default", "默认")), lang
            assert row("secrets_allowed_workspaces") == f"secrets_allowed_workspacesvault, ops{from_env}", lang
            # the console names itself the client: a source of its own, in words ("console" was none)
            assert row("client") == "clientconsole" + ("this process" if lang == "en" else "本进程"), lang
            assert "(&#39;vault&#39;" not in page and "('vault'" not in page
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "Traceback" not in err


def test_the_overview_says_busy_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    """``ledger status`` and ``doctor`` say busy while another process holds the log's write lock
    (every write waits, then goes to the backup); the Overview said nothing. It says so in both
    languages, naming the file, and says nothing once the lock is gone."""
    db = tmp_path / "ledger.db"
    ledger_cli("--db", str(db), "remember", "The metrics port is 9100", check=True)
    proc = _console(db)
    try:
        assert proc.stdout is not None
        url = next((line.strip() for line in iter(proc.stdout.readline, "") if "token=" in line), "")
        assert url, "the console did not start"
        with lock_holders(HOLDER) as holders:
            held = holders.hold(db)
            for lang, said in (("en", "another process has held the write lock on"), ("zh", "另一个进程持有")):
                status, page = _get(url, "/", lang)
                assert status == 200 and 'id="busy-banner"' in page, lang
                banner = page.split('id="busy-banner">', 1)[1].split("</p>", 1)[0]
                assert said in banner and str(db) in banner, banner
            holders.release(held)
        status, page = _get(url, "/")
        assert status == 200 and 'id="busy-banner"' not in page
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
