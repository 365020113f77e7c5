"""Hybrid search, expansion and explain through the library, on the indexed shop copy."""

from __future__ import annotations

import pytest

from cg.queries.expand import expand
from cg.queries.explain import explain, trim_body
from cg.queries.query import Ranking
from cg.queries.search import rrf, score_fusion, search

RETRY = "shop/payments/retry.py::schedule_payment_retry"


def test_rrf_rewards_agreement():
    fused = rrf({"lexical": ["a", "b", "c"], "vector": ["b", "d"]}, {"lexical": 1.0, "vector": 1.0}, 60)
    assert fused[0][0] == "b"
    assert fused[0][2] == {"lexical": 2, "vector": 1}


def test_score_fusion_keeps_the_margin_rrf_throws_away():
    # "a" is a clear first lexically and fourth by cosine; "b" is a mediocre second in both
    lexical = {"a": 12.0, "b": 3.0, "c": 2.5}
    cosine = {"e": 0.62, "b": 0.50, "c": 0.49, "a": 0.45, "d": 0.40}
    by_rank = rrf({"lexical": ["a", "b", "c"], "vector": ["e", "b", "c", "a", "d"]}, {}, 60)
    assert by_rank[0][0] == "b"
    fused = score_fusion({"lexical": lexical, "vector": cosine}, {"lexical": 1.0, "vector": 1.0}, {"vector": 0.40})
    assert [doc for doc, _, _ in fused] == ["a", "e", "b", "c", "d"]
    # normalised: a lexical best counts 1, the vector pool's floor 0; ranks are kept per arm
    assert fused[0][1] == pytest.approx(1.0 + 0.05 / 0.22)
    assert fused[0][2] == {"lexical": 1, "vector": 4}
    assert fused[-1][1] == 0.0 and fused[-1][2] == {"vector": 5}
    # an arm's weight scales its share; weight 0 leaves only the other arm's order
    only_vector = score_fusion(
        {"lexical": lexical, "vector": cosine}, {"lexical": 0.0, "vector": 1.0}, {"vector": 0.40}
    )
    assert [doc for doc, _, _ in only_vector][:3] == ["e", "b", "c"]


def test_both_fusions_find_the_retry_policy(ctx):
    store, embedder = ctx
    for fusion in ("score", "rrf"):
        hits = search(store, embedder, "payment retry", limit=3, ranking=Ranking.default().with_fusion(fusion))
        assert hits[0].id == RETRY, (fusion, [h.id for h in hits])
    with pytest.raises(ValueError, match="unknown fusion 'borda'"):
        Ranking.default().with_fusion("borda")


@pytest.mark.parametrize(
    ("query", "expected", "k"),
    [
        # the learned order (the default) puts PaymentService.retry_failed_payment first, the scheduler
        # second; the hand-set order the other way round (test_both_fusions_find_the_retry_policy)
        ("payment retry", RETRY, 2),
        ("schedule_payment_retry", RETRY, 1),
        ("SchedulePaymentRetry", RETRY, 1),
        ("exponential backoff with jitter", "shop/payments/retry.py::RetryPolicy.delay_for", 3),
        ("coupon has expired", "shop/billing/coupons.py::validate_coupon", 3),
        # the code embedding alone ranks this 15th; the docstring arm (issue 5) is meant to lift it
        ("verify the stripe webhook signature", "shop/webhooks/signature.py::verify_signature", 10),
    ],
)
def test_search_finds_the_definition_in_the_top_k(ctx, query, expected, k):
    store, embedder = ctx
    hits = search(store, embedder, query, limit=k)
    assert expected in [h.id for h in hits], [h.id for h in hits]
    assert {"qualname", "kind", "path", "start_line", "end_line", "score"} <= set(hits[0].as_dict())


def test_exact_identifier_is_pinned_and_both_arms_still_rank_it(ctx):
    store, embedder = ctx
    hits = search(store, embedder, "where is compute_backoff defined", limit=3)
    assert hits[0].id == "shop/payments/retry.py::compute_backoff"
    assert hits[0].ranks["exact"] == 1 and "lexical" in hits[0].ranks and "vector" in hits[0].ranks
    # asked where it is used, the answer is its callers (tests/queries/test_query_understanding.py)
    used = search(store, embedder, "where is compute_backoff used", limit=3)
    assert used[0].id == "shop/payments/retry.py::RetryPolicy.delay_for" and used[0].ranks["callers"] == 1
    # plain words pin nothing
    assert all("exact" not in h.ranks for h in search(store, embedder, "payment retry", limit=5))


def test_expand_respects_depth_and_fanout(ctx):
    store, _ = ctx
    callers = expand(store, [RETRY], "in", depth=1, fanout=10)
    assert {s.id for s in callers} >= {
        "shop/webhooks/stripe_webhooks.py::WebhookHandler.handle_invoice_payment_failed",
        "shop/payments/service.py::PaymentService.charge_invoice",
    }
    assert all(s.depth == 1 for s in callers)
    assert len(expand(store, [RETRY], "in", depth=1, fanout=2)) == 2
    deeper = expand(store, [RETRY], "in", depth=2, fanout=10)
    worker = [s for s in deeper if s.id == "shop/workers/retry_worker.py::run_retry_worker._handle"]
    assert worker and worker[0].depth == 2 and worker[0].via.endswith("retry_failed_payment")


def test_explain_budget_trims_bodies_before_it_drops_definitions(ctx):
    store, embedder = ctx
    big = explain(store, embedder, "payment retry", token_budget=50_000)
    assert not big.omitted and all(n.code_state in ("full", "outline") for n in big.nodes.values())
    mid = explain(store, embedder, "payment retry", token_budget=2000)
    assert mid.tokens_used <= 2000 and not mid.omitted
    assert set(mid.order) == set(big.order), "trimming alone fits this budget: nothing is dropped"
    trimmed = [n for n in mid.nodes.values() if n.code_state == "trimmed"]
    assert trimmed and all("(trimmed by the token budget)" in n.code for n in trimmed)
    small = explain(store, embedder, "payment retry", token_budget=800)
    assert small.omitted and all(o["citation"].startswith("[") for o in small.omitted)
    assert all(n.code_state == "trimmed" or n.code == trim_body(n.code, n.node) for n in small.nodes.values())
    for result in (big, mid, small):  # "full" means the whole body is shown, "trimmed" that a marker says what was cut
        for n in result.nodes.values():
            if n.code_state == "trimmed":
                assert "(trimmed by the token budget)" in n.code
            else:
                assert n.code == n.node["text"] and n.code_state in ("full", "outline")
    dropped = [big.nodes[o["id"]].weight for o in small.omitted]
    kept = [big.nodes[i].weight for i in small.order if i not in (small.order[0], small.seeds[0].id)]
    assert kept and max(dropped) <= min(kept), "the lightest steps are the ones dropped"


def test_explain_reaches_the_override_a_call_through_the_gateway_runs(ctx):
    """The resolver's dispatch edge reaches StripeGateway.charge from `self.gateway.charge(...)`; the
    abstract base method, a leaf that calls nothing, is not worth a step of its own. Room for 40
    steps: at the default 20 the retry policy and the webhook path come first."""
    store, embedder = ctx
    flow = explain(store, embedder, "how is a failed payment retried?", max_nodes=40)
    stripe = "shop/payments/gateway.py::StripeGateway.charge"
    assert stripe in flow.nodes, sorted(flow.nodes)
    assert any(e.dst == stripe and e.type in ("CALLS", "DISPATCH") for e in flow.edges)


def test_explain_always_keeps_the_first_seed(ctx):
    store, embedder = ctx
    tiny = explain(store, embedder, "payment retry", token_budget=100)
    first = tiny.seeds[0]
    assert first.id in (RETRY, "shop/payments/service.py::PaymentService.retry_failed_payment")
    assert first.id in tiny.order
    assert tiny.nodes[first.id].code.lstrip().startswith(f"def {first.symbol['name']}(")


class _CallGraph:
    """Just enough of a store for the graph arm: CALLS rows from a list of (caller, callee, path)."""

    def __init__(self, edges: list[tuple[str, str, str]]):
        self.edges = edges

    def calls(self, ids, direction):
        from cg.graph.store import CallRow

        rows = []
        for src, dst, path in self.edges:
            mine, other = (src, dst) if direction == "out" else (dst, src)
            if mine in ids:
                label = "External" if other.startswith("ext:") else "Symbol"
                rows.append(CallRow(src, dst, 1, "jedi", {"id": other, "path": path}, label))
        return rows


def test_graph_arm_lifts_callees_and_callers_of_the_first_hits_only():
    from cg.queries.search import propagate

    store = _CallGraph(
        [
            ("charge_invoice", "schedule_payment_retry", "shop/payments/retry.py"),
            ("charge_invoice", "ext:datetime.now", ""),
            ("tests/test_retry.py::test_charge", "charge_invoice", "tests/test_retry.py"),
            ("notify_payment_failed", "schedule_payment_retry", "shop/payments/retry.py"),
            ("create_app", "notify_payment_failed", "shop/app.py"),
            ("unrelated", "compute_tax", "shop/billing/tax.py"),  # not next to a seed
        ]
    )
    fused = [("charge_invoice", 1.0, {"lexical": 1}), ("notify_payment_failed", 0.8, {}), ("unrelated", 0.3, {})]
    out = propagate(store, fused, 0.2, seeds=2)
    scores = {doc: score for doc, score, _ in out}
    # the best adjacent seed counts once, not the sum over seeds
    assert scores["schedule_payment_retry"] == pytest.approx(0.2 * 1.0)
    assert scores["create_app"] == pytest.approx(0.2 * 0.8)  # a caller is lifted too
    assert scores["charge_invoice"] == 1.0 and scores["unrelated"] == 0.3
    # externals, tests and the neighbours of hits past the seeds are not
    assert not {"ext:datetime.now", "tests/test_retry.py::test_charge", "compute_tax"} & set(scores)
    ranks = {doc: r for doc, _, r in out}
    assert ranks["schedule_payment_retry"] == {"graph": 1} and ranks["charge_invoice"] == {"lexical": 1}
    assert [doc for doc, _, _ in out][:3] == ["charge_invoice", "notify_payment_failed", "unrelated"]


def test_a_question_that_names_sync_or_async_prefers_that_side():
    from cg.queries.search import apply_priors, is_async

    symbols = {
        "sync": {
            "qualname": "httpx._client.Client.send",
            "kind": "method",
            "path": "httpx/_client.py",
            "signature": "def send(self)",
        },
        "async": {
            "qualname": "httpx._client.AsyncClient.send",
            "kind": "method",
            "path": "httpx/_client.py",
            "signature": "async def send(self)",
        },
        "aiter": {
            "qualname": "httpx._models.Response.aiter_bytes",
            "kind": "method",
            "path": "httpx/_models.py",
            "signature": "async def aiter_bytes(self)",
        },
        "init": {
            "qualname": "httpx.AsyncHTTPTransport.__init__",
            "kind": "method",
            "path": "httpx/_t.py",
            "signature": "def __init__(self)",
        },
        "named": {
            "qualname": "httpx.ASGITransport.handle_async_request",
            "kind": "method",
            "path": "httpx/_t.py",
            "signature": "def handle_async_request(self)",
        },
    }
    assert [is_async(s) for s in symbols.values()] == [False, True, True, True, True]
    fused = [("async", 1.0, {}), ("aiter", 0.9, {}), ("sync", 0.8, {})]

    def order(query):
        return [doc for doc, _, _ in apply_priors(query, fused, symbols, Ranking.default().priors)]

    assert order("how does the sync Client send a request?") == ["sync", "async", "aiter"]
    assert order("my body is a plain (non-async) generator") == ["sync", "async", "aiter"]
    assert order("how does the async client send?") == ["async", "aiter", "sync"]
    assert order("how does the client send a request?") == ["async", "aiter", "sync"]  # says neither


def test_callees_compete_by_relevance_not_source_order(ctx):
    """charge_invoice builds a Payment, charges the gateway, records the attempt and notifies the customer
    before it schedules the retry: with four places, source order keeps the first four; relevance to a
    question about retries keeps the retry, and the abstract base method (a leaf) goes last."""
    from cg.queries.explain import callee_relevance
    from cg.queries.query import Query

    store, embedder = ctx
    charge = "shop/payments/service.py::PaymentService.charge_invoice"
    query = Query.parse("what happens after a card charge fails, does it get retried?").with_vector(embedder)
    # no search hits: the question's words and meaning alone (whether search ranks the retry among its
    # first hits moves with the int8 kernels of the host's CPU; the relevance must not need it)
    by_order = {s.id for s in expand(store, [charge], "out", depth=1, fanout=4)}
    by_relevance = expand(store, [charge], "out", depth=1, fanout=4, relevance=callee_relevance(store, query, []))
    assert RETRY not in by_order
    assert RETRY in {s.id for s in by_relevance}
    scores = callee_relevance(store, query, [])(store.calls([charge], "out"))
    assert scores[RETRY] > scores["shop/payments/models.py::Payment.record_attempt"]
    assert min(scores, key=scores.__getitem__) == "shop/payments/gateway.py::PaymentGateway.charge"
