"""``ledger migrate``: a local log copied into PostgreSQL and back, row for row.

The round trip is checked from outside the copy code: the CLI's own ``verify`` and ``export`` on
both SQLite ends, and the rows read back from PostgreSQL.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fact_ledger.ledger.errors import ChainBroken, VersionConflict
from fact_ledger.ledger.log.copy import copy_log, display_url, open_log
from fact_ledger.ledger.log.pg_store import PostgresEventStore
from fact_ledger.ledger.log.store import EventStore
from tests.conftest import ledger_cli
from tools.pg_cluster import Cluster


def cli_json(*args: str) -> dict:
    done = ledger_cli(*args, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def local_ledger(tmp_path: Path) -> Path:
    db = tmp_path / "local.db"
    for text in ["The staging API listens on port 8080", "用户喜欢喝咖啡", "Bob lives in Berlin"]:
        cli_json("--db", str(db), "remember", text, "--subject", text.split()[0])
    cli_json(
        "--db",
        str(db),
        "update",
        str(cli_json("--db", str(db), "find", "staging")["results"][0]["memory_id"]),
        "The staging API listens on port 9090",
    )
    return db


@pytest.mark.slow
def test_a_local_log_goes_to_postgresql_and_back_unchanged(
    pg_cluster: Cluster, local_ledger: Path, tmp_path: Path
) -> None:
    url = pg_cluster.database()
    there = cli_json("--db", str(local_ledger), "migrate", "--to", url)
    source = EventStore(local_ledger, create=False)
    events = source.last_position()
    assert there["copied"] == there["events"] == events >= 4 and there["already_present"] == 0

    pg = PostgresEventStore(url, create=False)
    assert list(pg.read()) == list(source.read())
    assert pg.verify_chain() == events and there["head_hash"] == list(source.read())[-1].hash

    back = tmp_path / "back.db"
    home = cli_json("--db", str(back), "migrate", "--from", url, "--to", f"sqlite:///{back}")
    assert home["copied"] == events
    assert cli_json("--db", str(back), "verify")["ok"] is True
    original = ledger_cli("--db", str(local_ledger), "export").stdout
    assert original and ledger_cli("--db", str(back), "export").stdout == original
    # The copy is a working ledger: its read models rebuild from the copied log and answer.
    assert cli_json("--db", str(back), "find", "咖啡")["results"][0]["content"] == "用户喜欢喝咖啡"
    pg.close()
    source.close()


def test_an_interrupted_copy_resumes_where_it_stopped(pg_cluster: Cluster, tmp_path: Path) -> None:
    local = EventStore(tmp_path / "a.db")
    from tests.test_store_contract import remembered

    local.append([remembered(content=f"m {n}") for n in range(5)])
    target = open_log(pg_cluster.database(), create=True)
    assert copy_log(local, target).copied == 5
    local.append([remembered(content=f"m {n}") for n in range(5, 8)])
    again = copy_log(local, target)
    assert (again.copied, again.already_present, again.events) == (3, 5, 8)
    assert list(target.read()) == list(local.read())
    target.close()
    local.close()


def test_a_target_with_other_events_is_refused_before_anything_is_written(pg_cluster: Cluster, tmp_path: Path) -> None:
    from tests.test_store_contract import remembered

    local = EventStore(tmp_path / "a.db")
    local.append([remembered() for _ in range(3)])
    target = PostgresEventStore(pg_cluster.database())
    target.append([remembered()])
    with pytest.raises(VersionConflict, match="already holds other events"):
        copy_log(local, target)
    assert target.last_position() == 1
    target.close()
    local.close()


def test_a_tampered_source_stops_the_copy_at_the_bad_row(tmp_path: Path) -> None:
    from tests.test_store_contract import remembered

    local = EventStore(tmp_path / "a.db")
    local.append([remembered(content=f"m {n}") for n in range(4)])
    local.conn.execute("DROP TRIGGER events_no_update")
    local.conn.execute("UPDATE events SET payload=replace(payload, 'm 2', 'm 9') WHERE position=3")
    target = open_log(f"sqlite:///{tmp_path / 'b.db'}", create=True)
    with pytest.raises(ChainBroken) as info:
        copy_log(local, target)
    assert info.value.details["position"] == 3
    assert target.last_position() == 0  # the batch holding the bad row is refused whole
    target.close()
    local.close()


def test_urls_are_checked_and_passwords_never_shown(tmp_path: Path) -> None:
    assert (
        display_url("postgresql://team:s3cret@db.internal:5432/ledger")
        == "postgresql://team:***@db.internal:5432/ledger"
    )
    assert display_url("postgresql://db.internal/ledger") == "postgresql://db.internal/ledger"
    done = ledger_cli("--db", str(tmp_path / "x.db"), "--create", "migrate", "--to", "mysql://u:pw@h/db", "--json")
    assert done.returncode != 0
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "invalid_input" and "pw" not in done.stdout and "mysql://u:***@h/db" in error["message"]
    refused = ledger_cli(
        "--db",
        str(tmp_path / "x.db"),
        "migrate",
        "--to",
        "postgresql://u:hunter2@127.0.0.1:1/none?connect_timeout=1",
        "--json",
    )
    assert refused.returncode != 0 and "hunter2" not in refused.stdout + refused.stderr
    assert json.loads(refused.stdout)["error"]["code"] == "unavailable"


def test_migrate_to_or_from_a_path_that_is_no_ledger_says_so(tmp_path: Path) -> None:
    """A target or a source that is another program's database, a text file or a directory
    printed a traceback ending in NotALedger (exit 1)."""
    import apsw
    from click.testing import CliRunner

    from fact_ledger.server.cli.main import main

    db = tmp_path / "ledger.db"
    assert CliRunner().invoke(main, ["--db", str(db), "remember", "the vpn gateway is 10.0.0.1"]).exit_code == 0
    foreign = tmp_path / "foreign.db"
    conn = apsw.Connection(str(foreign))
    conn.execute("CREATE TABLE t(x)")
    conn.close()
    (tmp_path / "notes.db").write_text("hello\n")
    (tmp_path / "adir").mkdir()
    for args, code in (
        (["--to", str(foreign)], 2),
        (["--to", str(tmp_path / "notes.db")], 2),
        (["--to", str(tmp_path / "adir")], 5),
        (["--from", str(foreign), "--to", str(tmp_path / "copy.db")], 2),
    ):
        result = CliRunner().invoke(main, ["--db", str(db), "migrate", *args])
        assert result.exit_code == code and "is not a ledger" in result.output, (args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_copy_onto_the_log_itself_is_refused(local_ledger: Path, tmp_path: Path, pg_cluster: Cluster) -> None:
    """``migrate --to`` naming the file it copies from (by another spelling, or a link to it)
    answered "copied 0 events (N in the target)", as if the log now lived in a second place. It
    is refused now (exit 1, ``invalid_input`` on ``to``), as is a PostgreSQL log onto itself."""
    before = local_ledger.read_bytes()
    link = tmp_path / "link.db"
    link.symlink_to(local_ledger)
    for to in (str(local_ledger), f"sqlite://{local_ledger}", str(link)):
        human = ledger_cli("--db", str(local_ledger), "migrate", "--to", to)
        assert human.returncode == 1 and human.stdout == "", human.stdout
        said = " ".join(human.stderr.split())
        assert f"--to names the log being copied ({to}): nothing would be copied" in said, said
        assert "copied 0 events" not in human.stderr
    assert local_ledger.read_bytes() == before
    url = pg_cluster.database()
    cli_json("--db", str(local_ledger), "migrate", "--to", url)
    done = ledger_cli("--db", str(local_ledger), "--json", "migrate", "--from", url, "--to", url)
    refused = json.loads(done.stdout)
    assert done.returncode == 1 and refused["error"]["field"] == "to", refused
    assert "names the log being copied" in refused["error"]["message"]
    elsewhere = cli_json("--db", str(local_ledger), "migrate", "--to", str(tmp_path / "copy.db"))
    assert elsewhere["copied"] == elsewhere["events"] > 0  # another file still takes the copy
