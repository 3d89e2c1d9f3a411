"""``find`` never cuts a fact of at most ``WHOLE_FACT_CHARS`` characters: the snippet budget applies to
long memories only (docs/contract.md, results and errors). The MCP reply is checked over stdio in
tests/contract/test_fact_changes.py."""

from __future__ import annotations

from pathlib import Path

from fact_ledger.ledger.sections import WHOLE_FACT_CHARS, shown_whole, snippet
from fact_ledger.server.mcp import compact as mcp_compact
from tests.conftest import ledger_cli
from tests.test_mcp_server import find_result

VPN = "The VPN portal moved to https://vpn.acme.dev/portal"


def test_ten_short_facts_stay_whole_past_the_budget() -> None:
    facts = [f"{VPN}?{i}" for i in range(10)]
    out = mcp_compact.compact("memory", "find", find_result(facts), query="vpn portal")
    assert mcp_compact.size(find_result(facts)) > mcp_compact.FIND_BUDGET_BYTES  # the budget alone would cut
    assert [r["content"] for r in out["results"]] == facts
    assert not any(r.get("truncated") for r in out["results"])


def test_a_fact_of_the_limit_is_whole_and_one_past_it_may_be_cut() -> None:
    at_limit = "x" * (WHOLE_FACT_CHARS - 10) + " the value"
    over = "word " * 400 + "the answer is 42 " + "word " * 400
    out = mcp_compact.compact("memory", "find", find_result([at_limit] * 4 + [over] * 4), query="answer")
    results = out["results"]
    assert [r["content"] for r in results[:4]] == [at_limit] * 4 and not any("truncated" in r for r in results[:4])
    assert all(r["truncated"] and "the answer is 42" in r["content"] for r in results[4:])
    assert shown_whole(at_limit) and not shown_whole(at_limit + "!")


def test_a_chinese_fact_is_counted_in_characters_not_bytes() -> None:
    fact = "VPN 门户已迁移到新的地址，请使用 https://vpn.acme.dev 登录" * 6  # > 300 bytes, < 300 characters
    assert len(fact.encode()) > WHOLE_FACT_CHARS >= len(fact)
    out = mcp_compact.compact("memory", "find", find_result([fact] * 6), query="VPN")
    assert [r["content"] for r in out["results"]] == [fact] * 6


def test_section_snippets_keep_a_short_text_whole() -> None:
    assert snippet(VPN, ["portal"], width=20) == VPN


def test_cli_find_prints_a_short_fact_whole(tmp_path: Path) -> None:
    db = str(tmp_path / "l.db")
    assert ledger_cli("init", "--db", db).returncode == 0
    for i in range(10):
        ledger_cli("remember", f"{VPN}?{i}", "--db", db, check=True)
    out = ledger_cli("find", "vpn portal", "--limit", "10", "--db", db, check=True).stdout
    assert all(f"{VPN}?{i}" in out for i in range(10)), out
