"""The derived-data cache: a rebuild reuses claims and signatures, verify never trusts them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from fact_ledger.ledger import fingerprint
from fact_ledger.ledger.claims import Claim
from fact_ledger.ledger.errors import ChainBroken
from fact_ledger.ledger.log.events import AUTH_USER
from fact_ledger.projections import derived
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings
from tests.conftest import statements_run


def _counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[Any]:
    calls: list[Any] = []
    real = getattr(owner, name)

    def counted(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(owner, name, counted)
    return calls


def _fill(app: LedgerApp) -> None:
    for i in range(12):
        app.remember(f"service s{i} port is {8000 + i}", subject=f"s{i}", source_type="agent_generated")


def test_rebuild_reuses_claims_and_signatures(app: LedgerApp, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(app)
    before = app.runner.checksums()
    claims_calls = _counting(monkeypatch, derived, "extract_claims")
    signature_calls = _counting(monkeypatch, fingerprint, "signature")
    app.rebuild()
    assert claims_calls == [] and signature_calls == []  # every value came from the cache
    app.conn.execute("DELETE FROM derived_cache")
    app.rebuild()
    assert len(claims_calls) == 12 and len(signature_calls) == 12  # the counters do count
    assert app.runner.checksums() == before


def test_rebuild_without_the_cache_computes_the_same_tables(app: LedgerApp) -> None:
    _fill(app)
    before = app.runner.checksums()
    app.conn.execute("DELETE FROM derived_cache")
    app.rebuild()
    assert app.runner.checksums() == before
    assert app.conn.execute("SELECT count(*) FROM derived_cache").fetchone()[0] >= 24  # filled again


def test_verify_folds_without_the_cache(app: LedgerApp) -> None:
    _fill(app)
    forged = msgspec.msgpack.encode(
        (
            Claim(
                subject="s3",
                attribute="port",
                value="1",
                kind="number",
                key_subject="s3",
                key_attribute="port",
                value_norm="1",
            ),
        )
    )
    app.conn.execute("UPDATE derived_cache SET value=? WHERE length(value) <> 384", (forged,))
    app.rebuild()  # trusts the cache: the claims table now holds the forged claim
    assert app.conn.execute("SELECT count(*) FROM claims WHERE value='1'").fetchone()[0] == 12
    with pytest.raises(ChainBroken) as failure:
        app.verify()
    assert "claims" in str(failure.value)
    # the log is sound: the message says so and what repairs it, not "restore from a copy"
    assert "hash chain is intact" in str(failure.value) and "run ledger rebuild" in str(failure.value)


def test_a_damaged_entry_is_computed_again(app: LedgerApp) -> None:
    _fill(app)
    before = app.runner.checksums()
    app.conn.execute("UPDATE derived_cache SET value=x'c1'")  # 0xc1: never valid msgpack, not a fingerprint entry
    app.rebuild()
    assert app.runner.checksums() == before


def test_a_ledger_without_the_cache_table_gets_one_on_open(db_path: Path) -> None:
    first = LedgerApp(Settings(db=str(db_path), client="test"))
    _fill(first)
    first.conn.execute("DROP TABLE derived_cache")  # as a ledger written by an older version
    first.close()
    reopened = LedgerApp(Settings(db=str(db_path), client="test"))
    try:
        reopened.remember("service s99 port is 9999", subject="s99", source_type="agent_generated")
        assert reopened.conn.execute("SELECT count(*) FROM derived_cache").fetchone()[0] == 2
    finally:
        reopened.close()


def test_a_rebuild_reads_the_cache_in_batches_not_per_memory(app: LedgerApp) -> None:
    _fill(app)
    before = app.runner.checksums()
    with statements_run(app.conn) as statements:
        app.rebuild()
    one_by_one = [s for s in statements if s.startswith("SELECT value FROM derived_cache WHERE key=?")]
    batched = [s for s in statements if "FROM json_each(?) j JOIN derived_cache" in s]
    assert one_by_one == []  # 12 memories: their claims in one statement, their signatures in another
    assert len(batched) == 2
    assert app.runner.checksums() == before


def test_fingerprints_many_agrees_with_one_at_a_time(app: LedgerApp) -> None:
    texts = [(f"the build of s{i} takes {i} minutes", "ws" if i % 2 else "") for i in range(5)]
    texts.append(texts[0])  # a repeat in one batch
    with derived.bypassed():
        fresh = [derived.fingerprints(app.conn, *t) for t in texts]
    app.store.write(lambda: derived.fingerprints(app.conn, *texts[1]))  # one of them already cached
    assert app.store.write(lambda: derived.fingerprints_many(app.conn, texts)) == fresh
    assert app.store.write(lambda: derived.fingerprints_many(app.conn, texts)) == fresh  # now all from the cache
    with derived.bypassed():
        assert derived.fingerprints_many(app.conn, texts) == fresh


def test_a_rebuild_derives_claims_in_bounded_batches(app: LedgerApp, monkeypatch: pytest.MonkeyPatch) -> None:
    from fact_ledger.projections import claims as claims_projection

    _fill(app)
    app.accept_entity_alias("s7", "s1", authorization=AUTH_USER)  # between memories: a flush mid-log
    for i in range(12, 16):
        app.remember(f"service s{i} port is {8000 + i}", subject=f"s{i}", source_type="agent_generated")
    before = app.runner.checksums()
    batches = _counting(monkeypatch, derived, "claims_many")
    monkeypatch.setattr(claims_projection, "_DERIVE_BATCH", 5)
    app.rebuild()
    assert [len(args[1]) for args in batches] == [5, 5, 2, 4]  # 12 before the alias, 4 after it
    assert app.runner.checksums() == before
