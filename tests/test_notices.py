"""Semantic notices on the real llama path: close pairs that differ are proposed, paraphrases are not.

The tiny test model's cosines mean nothing, so closeness is switched off here (a similarity
threshold of -1: every pair of a workspace is "close") and the deterministic disagreement test
alone decides; tools/eval measures the closeness threshold with the real model.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from fact_ledger.projections import notices, vectors
from fact_ledger.projections.indexer import Indexer
from fact_ledger.server.app.facade import LedgerApp
from fact_ledger.server.config import Settings

EVERY_PAIR_CLOSE = notices.Thresholds(similarity=-1.0, duplicate_similarity=2.0)


def _index(app: LedgerApp) -> dict[str, int]:
    model = app.embedding_model()
    assert model is not None
    return Indexer(app.store, model, thresholds=EVERY_PAIR_CLOSE).run()


def test_a_different_number_is_a_notice_and_a_paraphrase_is_not(sem: LedgerApp) -> None:
    fifty = sem.remember("the budget is 50k", workspace="w")["memory_id"]
    eighty = sem.remember("the budget is 80k", workspace="w")["memory_id"]
    paraphrase = sem.remember("Our budget amounts to 50,000", workspace="w")["memory_id"]
    _index(sem)
    found = sem.notices(state="all")["notices"]
    pairs = {(n["left"]["memory_id"], n["right"]["memory_id"]): n for n in found}
    assert (fifty, eighty) in pairs and pairs[(fifty, eighty)]["kind"] == "number"
    assert pairs[(fifty, eighty)]["left"]["value"] == "50000" and pairs[(fifty, eighty)]["right"]["value"] == "80000"
    assert (fifty, paraphrase) not in pairs  # the same number in other words
    assert (eighty, paraphrase) in pairs  # 80k against 50,000 does differ


def test_notices_stay_inside_a_workspace(sem: LedgerApp) -> None:
    sem.remember("the budget is 50k", workspace="a")
    sem.remember("the budget is 80k", workspace="b")
    _index(sem)
    assert sem.notices(state="all")["notices"] == []


def test_a_review_is_an_event_and_survives_a_rebuild(sem: LedgerApp) -> None:
    sem.remember("the launch is on 2025-07-01")
    sem.remember("the launch is on 2025-07-03")
    _index(sem)
    [notice] = sem.notices()["notices"]
    assert notice["kind"] == "date" and notice["state"] == "open"
    reviewed = sem.review_notice(
        notice["notice_id"], "dismissed", reason="two different launches", authorization="user_channel"
    )
    assert reviewed["notice"]["state"] == "dismissed"
    assert sem.notices()["notices"] == []
    assert sem.audit(type="NoticeReviewed")["events"]
    sem.rebuild()  # every inline projection, reviews included
    model = sem.embedding_model()
    assert model is not None
    Indexer(sem.store, model, thresholds=EVERY_PAIR_CLOSE).run(rebuild=True)
    [again] = sem.notices(state="all")["notices"]
    assert again["state"] == "dismissed"


def test_a_reply_carries_one_new_notice_once(sem: LedgerApp) -> None:
    sem.remember("the API is ready")
    sem.remember("the API is not ready")
    _index(sem)
    first = sem.semantic_notice()
    assert first is not None and "negation" in first
    assert sem.semantic_notice() is None


def test_notices_page_with_a_cursor(sem: LedgerApp) -> None:
    for amount in (10, 20, 30, 40):
        sem.remember(f"the budget is {amount}k")
    _index(sem)
    seen: list[int] = []
    cursor = None
    while True:
        page = sem.notices(limit=2, cursor=cursor)
        seen += [n["notice_id"] for n in page["notices"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert len(seen) == 6 and len(set(seen)) == 6 and seen == sorted(seen, reverse=True)


def test_a_bad_review_is_refused_and_writes_nothing(sem: LedgerApp) -> None:
    from fact_ledger.ledger.errors import InvalidInput, NotFound

    before = sem.store.last_position()
    with pytest.raises(InvalidInput):
        sem.review_notice(1, "maybe", authorization="user_channel")
    with pytest.raises(NotFound):
        sem.review_notice(999, "dismissed", authorization="user_channel")
    assert sem.store.last_position() == before


def test_a_review_needs_authorisation_whoever_asks(sem: LedgerApp) -> None:
    """The service checks it, not only the MCP route: the CLI and the console call the service."""
    from fact_ledger.ledger.errors import InvalidInput, Unauthorized

    sem.remember("the launch is on 2025-07-01")
    sem.remember("the launch is on 2025-07-03")
    _index(sem)
    [notice] = sem.notices()["notices"]
    before = sem.store.last_position()
    with pytest.raises(Unauthorized):
        sem.review_notice(notice["notice_id"], "dismissed")
    with pytest.raises(InvalidInput):
        sem.review_notice(notice["notice_id"], "dismissed", authorization="trust me")
    assert sem.store.last_position() == before and sem.notices()["notices"][0]["state"] == "open"
    reviewed = sem.review_notice(notice["notice_id"], "dismissed", authorization="agent_asserted")
    assert reviewed["ok"] is True and reviewed["notice"]["state"] == "dismissed"


def test_the_closeness_thresholds_are_configurable(tmp_path: Path) -> None:
    from fact_ledger.ledger.errors import InvalidInput
    from fact_ledger.server.config import load_settings

    config = tmp_path / "ledger.toml"
    config.write_text("[embedding]\nnotice_similarity = 0.8\nduplicate_similarity = 1.5\n", encoding="utf-8")
    settings = load_settings({"config": str(config)}, env={})
    app = LedgerApp(Settings(db=str(tmp_path / "l.db"), embedding=settings.embedding))
    try:
        assert app.semantic._thresholds() == notices.Thresholds(similarity=0.8, duplicate_similarity=1.5)
    finally:
        app.close()
    config.write_text('[embedding]\nnotice_similarity = "close"\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"embedding\.notice_similarity"):
        load_settings({"config": str(config)}, env={})


def _notice_rows(app: LedgerApp) -> list[tuple[object, ...]]:
    query = "SELECT left_id, right_id, kind, left_value, right_value FROM notices ORDER BY 1, 2"
    return app.conn.execute(query).fetchall()


def test_a_vectors_rebuild_that_changed_nothing_keeps_its_notices_without_looking_again(sem: LedgerApp) -> None:
    for value in (50, 80, 95):
        sem.remember(f"the budget is {value}k")
    assert _index(sem)["new_notices"] == 3
    before = _notice_rows(sem)
    model = sem.embedding_model()
    assert model is not None
    rebuilt = Indexer(sem.store, model, thresholds=EVERY_PAIR_CLOSE).run(rebuild=True)
    assert rebuilt["embedded"] == 0 and rebuilt["new_notices"] == 0  # no neighbour looked up again
    assert _notice_rows(sem) == before and len(sem.notices()["notices"]) == 3


def test_a_vectors_rebuild_that_changed_something_finds_the_notices_again(sem: LedgerApp) -> None:
    first = sem.remember("the budget is 50k")["memory_id"]
    sem.remember("the budget is 80k")
    _index(sem)
    model = sem.embedding_model()
    assert model is not None
    indexer = Indexer(sem.store, model, thresholds=EVERY_PAIR_CLOSE)
    stop = threading.Event()
    stop.set()
    indexer.run(rebuild=True, stop=stop)  # stopped before any vector came back: notices wait
    assert sem.vectors_status()["lag"] > 0 and len(_notice_rows(sem)) == 1
    sem.update(first, content="the budget is 60k", expected_version=1)  # changed while rebuilding
    again = indexer.run()
    assert again["new_notices"] == 1 and again["lag"] == 0
    [notice] = sem.notices()["notices"]
    assert {notice["left"]["value"], notice["right"]["value"]} == {"60000", "80000"}


def test_a_vectors_rebuild_after_a_half_done_look_finds_the_notices_afresh(sem: LedgerApp) -> None:
    for value in (50, 80, 95):
        sem.remember(f"the budget is {value}k")
    _index(sem)
    # As if the look had stopped after the first vector: what it kept is not the whole answer.
    sem.store.write(lambda: vectors.set_meta(sem.conn, "notices_seq", "1"))
    model = sem.embedding_model()
    assert model is not None
    rebuilt = Indexer(sem.store, model, thresholds=EVERY_PAIR_CLOSE).run(rebuild=True)
    assert rebuilt["new_notices"] == 3 and len(sem.notices()["notices"]) == 3
