"""Identifiers are matched whole (:func:`projections.search.ranking.identifiers`): a query for a key,
ticket id, path, URL, version, hash or email ranks the memory holding exactly that identifier
above every memory holding a longer one that starts with it (a prefix or substring match:
``/v1/users/123`` in ``/v1/users/123/orders``, ``1.2`` in ``1.2.3``) or a sibling sharing its
start (``JIRA-1234``). The siblings are written after the exact match, so a tie would go to
them (the newer memory wins ties).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Embedding, Settings

CASES: list[tuple[str, tuple[str, ...]]] = [
    # keys
    ("sk-hzlm72jeyn", ("sk-o75rh8lx6d", "sk-hzlm72jeyn2")),
    ("sk-proj-4f9a", ("sk-proj-4f9ab", "sk-proj-4f9a-old")),
    ("ghp_a8Kd02", ("ghp_a8Kd02x", "ghp_a8Kd02_rotated")),
    ("AKIA4Q7Z", ("AKIA4Q7Z9",)),
    ("pk_live_51H", ("pk_live_51H_test",)),
    # ticket and other ids
    ("JIRA-123", ("JIRA-1234", "JIRA-123-b")),
    ("OPS-42", ("OPS-421", "OPS-42.1")),
    ("BUG-7", ("BUG-77", "BUG-7-followup")),
    ("PR-88", ("PR-889", "PR-88/files")),
    ("INC-2024-01", ("INC-2024-011", "INC-2024-01-2")),
    ("user_123", ("user_1234", "user_123_backup")),
    ("order-5567", ("order-55671", "order-5567-refund")),
    ("550e8400-e29b", ("550e8400-e29b-41d4",)),
    ("build-4512", ("build-4512-hotfix",)),
    ("db-01", ("db-01a", "db-01.internal")),
    ("us-east-1", ("us-east-1a", "us-east-1/prod")),
    ("i-0abc123", ("i-0abc1234",)),
    ("CVE-2024-3094", ("CVE-2024-30940", "CVE-2024-3094-2")),
    # paths
    ("/v1/users/123", ("/v1/users/1234", "/v1/users/123/orders")),
    ("/etc/nginx/nginx.conf", ("/etc/nginx/nginx.conf.bak",)),
    ("/var/log/app", ("/var/log/app/errors", "/var/log/apple")),
    ("src/main.py", ("src/main.py.orig", "src/main.pyc")),
    ("~/.ssh/id_rsa", ("~/.ssh/id_rsa.pub",)),
    ("/api/v2/orders", ("/api/v2/orders/export", "/api/v2/orders-old")),
    ("feature/login", ("feature/login-v2", "feature/login/oauth")),
    # URLs and addresses
    ("https://example.com/docs", ("https://example.com/docs/v2", "https://example.com/docs-old")),
    ("https://git.acme.io/team/repo", ("https://git.acme.io/team/repo-fork",)),
    ("http://localhost:8080", ("http://localhost:8080/admin", "http://localhost:80801")),
    ("s3://bucket-logs/2024", ("s3://bucket-logs/2024/05",)),
    ("arn:aws:s3:::logs", ("arn:aws:s3:::logs-archive",)),
    ("10.0.0.1", ("10.0.0.12", "10.0.0.1/24")),
    ("192.168.1.1", ("192.168.1.10", "192.168.1.1:8443")),
    # versions
    ("1.2", ("1.2.3", "1.2.10")),
    ("v2.0", ("v2.0.1", "v2.0-rc1")),
    ("3.11", ("3.11.4",)),
    ("1.0.0", ("1.0.0-beta", "1.0.0.1")),
    ("18.17", ("18.17.1",)),
    ("0.9.1", ("0.9.12", "0.9.1.post2")),
    # hashes
    ("9fceb02", ("9fceb02d0ae5",)),
    ("sha256:4b825dc6", ("sha256:4b825dc642cb", "sha256:4b825dc6-old")),
    ("a3f9c2e", ("a3f9c2e81b", "a3f9c2e/patch")),
    # emails
    ("bob@example.com", ("bob@example.com.au", "jbob@example.com")),
    ("ops@acme.io", ("ops@acme.io.test", "ops-team@acme.io")),
    ("a.smith@corp.org", ("a.smith@corp.org.uk", "a.smith2@corp.org")),
]


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LedgerApp, dict[str, int]]]:
    db = Path(tmp_path_factory.mktemp("identifiers")) / "ledger.db"
    app = LedgerApp(Settings(db=str(db), client="test", embedding=Embedding(enabled=False)))
    exact: dict[str, int] = {}
    for identifier, siblings in CASES:
        exact[identifier] = app.remember(f"we saw {identifier} during the incident review")["memory_id"]
        for sibling in siblings:  # written after: a tie would go to the sibling
            app.remember(f"we saw {sibling} during the incident review")
    yield app, exact
    app.close()


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("identifier", [c[0] for c in CASES])
def test_an_exact_identifier_ranks_first(ledger: tuple[LedgerApp, dict[str, int]], identifier: str) -> None:
    app, exact = ledger
    found = app.find(identifier, limit=5)["results"]
    assert found[0]["memory_id"] == exact[identifier]
    assert len(found) < 2 or found[1]["score"] < found[0]["score"]  # no tie with a neighbour


@pytest.mark.parametrize("identifier", ["JIRA-123", "/v1/users/123", "1.2", "bob@example.com"])
def test_an_identifier_inside_a_question_ranks_first(ledger: tuple[LedgerApp, dict[str, int]], identifier: str) -> None:
    app, exact = ledger
    found = app.find(f"what was noted about {identifier}?", limit=5)["results"]
    assert found[0]["memory_id"] == exact[identifier]


def test_hybrid_find_ranks_an_exact_identifier_first(tmp_path: Path, tiny_gguf: Path) -> None:
    """With vectors live, closeness cannot lift a sibling above the exact identifier."""
    app = LedgerApp(
        Settings(db=str(tmp_path / "ledger.db"), client="test", embedding=Embedding(model=str(tiny_gguf), enabled=True))
    )
    try:
        exact: dict[str, int] = {}
        for identifier, siblings in CASES[::4]:
            exact[identifier] = app.remember(f"we saw {identifier} during the incident review")["memory_id"]
            for sibling in siblings:
                app.remember(f"we saw {sibling} during the incident review")
        assert app.reembed()["lag"] == 0 and app.status()["search_mode"] == "vector+fts"
        for identifier, memory_id in exact.items():
            found = app.find(identifier, limit=5)["results"]
            assert found[0]["memory_id"] == memory_id, identifier
            assert found[1]["score"] < found[0]["score"], identifier
    finally:
        app.close()
