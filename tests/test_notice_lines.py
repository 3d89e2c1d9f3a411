"""How a notice reads to a person (issue 29, point 18): a near-duplicate holds no values, so it
is never rendered as an empty ``" vs "``; a disagreement names both values."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from fact_ledger.projections import notices
from fact_ledger.projections.indexer import Indexer
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.cli.main import main
from fact_ledger.server.config import Embedding, Settings

EVERYTHING_A_DUPLICATE = notices.Thresholds(similarity=-1.0, duplicate_similarity=-1.0)


def test_the_cli_names_a_duplicate_and_the_values_of_a_disagreement(tmp_path: Path, tiny_gguf: Path) -> None:
    db = tmp_path / "ledger.db"
    app = LedgerApp(Settings(db=str(db), client="test", embedding=Embedding(model=str(tiny_gguf))))
    try:
        app.remember("the budget is 50k", workspace="w")
        app.remember("Our budget amounts to 50,000", workspace="w")
        app.remember("the budget is 80k", workspace="w")
        model = app.embedding_model()
        assert model is not None
        Indexer(app.store, model, thresholds=EVERYTHING_A_DUPLICATE).run()
        kinds = sorted(n["kind"] for n in app.notices(state="all")["notices"])
    finally:
        app.close()
    assert kinds == ["duplicate", "number", "number"]
    result = CliRunner().invoke(
        main, ["notices", "--state", "all", "--db", str(db)], env={"LEDGER_EMBEDDING_MODEL": str(tiny_gguf)}
    )
    assert result.exit_code == 0, result.output
    heads = [line for line in result.output.splitlines() if line.startswith("#")]
    assert len(heads) == 3
    assert any("duplicate" in h and h.endswith("the same thing in other words") for h in heads), heads
    assert any(h.endswith("number: 50000 vs 80000") for h in heads), heads
    assert not any(h.rstrip().endswith("vs") or " vs :" in h or ":  vs" in h for h in heads), heads
