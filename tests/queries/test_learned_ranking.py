"""The learned ranking on the indexed shop: the graph features a candidate gets from the call graph
around the other hits, the shipped model's score, and ``fusion = "learned"`` taking the shipped model."""

from __future__ import annotations

from pathlib import Path

from cg.config import Settings
from cg.queries.query import Query, Ranking
from cg.queries.ranker_model import MODEL
from cg.queries.search import FEATURES, candidates, learned_order, learned_score, rank_features, search

RETRY = "shop/payments/retry.py::schedule_payment_retry"
DELAY_FOR = "shop/payments/retry.py::RetryPolicy.delay_for"
BACKOFF = "shop/payments/retry.py::compute_backoff"
CHARGE_INVOICE = "shop/payments/service.py::PaymentService.charge_invoice"


def test_a_definition_between_two_hits_is_a_link_of_their_chain(ctx):
    store, _ = ctx
    pool = [(RETRY, 1.0, {}), (BACKOFF, 0.9, {}), (DELAY_FOR, 0.5, {})]
    symbols = store.symbols([doc for doc, _, _ in pool], with_text=False)
    features = rank_features(
        store, Query.parse("how is the retry delay computed?"), pool, symbols, {}, {}, {}, Ranking.default().priors
    )
    # schedule_payment_retry -> RetryPolicy.delay_for -> compute_backoff: delay_for is called by one hit
    # and calls another, through edges jedi resolved
    assert features[DELAY_FOR]["between"] == 1.0 and features[DELAY_FOR]["link_confidence"] == 1.0
    assert features[BACKOFF]["between"] == 0.0 and features[BACKOFF]["linked"] > 0
    # schedule_payment_retry has three library callers (the service twice, the webhook handler)
    assert features[RETRY]["callers"] > features[BACKOFF]["callers"] > 0
    assert set(features[RETRY]) == set(FEATURES)


def test_every_candidate_of_the_pool_has_its_features(ctx):
    store, embedder = ctx
    query = Query.parse("what happens after a card charge fails, does it get retried?").with_vector(embedder)
    pool, symbols, features, _ = candidates(store, query, 10, Ranking.default().with_fusion("learned"))
    assert features is not None and {doc for doc, _, _ in pool} == set(features)
    assert all(0.0 <= f["lexical"] <= 1.0 and 0.0 <= f["vector"] <= 1.0 for f in features.values())
    # RRF throws the arms' scores away: no features, the priors order the pool; the hand-set ranking
    # does not compute them
    assert candidates(store, query, 10, Ranking.default().with_fusion("rrf"), with_features=True)[2] is None
    assert candidates(store, query, 10, Ranking.default().with_fusion("score"))[2] is None


def test_the_shipped_model_ranks_a_test_below_library_code_that_scores_the_same():
    library = dict.fromkeys(FEATURES, 0.0) | {"lexical": 0.8, "vector": 0.7}
    test = library | {"test": 1.0}
    assert learned_score(library, MODEL) > learned_score(test, MODEL)
    # a hit's score is the odds that it beats the first: 1 for the first, below 1 after it
    order = learned_order(
        [("tests/test_retry.py::test_backoff", 0.9, {}), (BACKOFF, 0.5, {})],
        {
            "tests/test_retry.py::test_backoff": test,
            BACKOFF: library,
        },
        MODEL,
    )
    assert [doc for doc, _, _ in order] == [BACKOFF, "tests/test_retry.py::test_backoff"]
    assert order[0][1] == 1.0 and 0 < order[1][1] < 1
    assert set(MODEL["coef"]) == set(FEATURES)  # written by benchmarks/fit_ranker.py for these features


def test_learned_fusion_takes_the_shipped_model_and_score_fusion_keeps_the_priors():
    assert Ranking.from_settings(Settings(repo=Path("."), fusion="learned")).model == MODEL
    assert Ranking.default().fusion == "learned" and Ranking.default().model == MODEL
    assert Ranking.default().with_fusion("score").model is None
    assert Ranking.default().with_fusion("score").with_fusion("learned").model == MODEL


def test_the_learned_ranking_finds_the_failed_charge_handler_before_any_test(ctx):
    store, embedder = ctx
    question = "what happens after a card charge fails, does it get retried?"
    hits = search(store, embedder, question, ranking=Ranking.default().with_fusion("learned"))
    ids = [h.id for h in hits]
    # the question's gold (examples/shop/QUESTIONS.yaml): fifth or sixth since words are stemmed and
    # the model refitted, after the handler, is_retryable, retry_failed_payment and the notification
    assert CHARGE_INVOICE in ids[:10], ids
    assert not any(h.symbol["path"].startswith("tests/") for h in hits[:5]), ids
