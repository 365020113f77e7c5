"""The front door (cg.api) on the indexed shop copy, and the Query a question is parsed into."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cg.api import open_index
from cg.config import Settings
from cg.errors import CgError, UserError
from cg.queries.lookup import SymbolLookupError
from cg.queries.query import Query, Ranking
from tests.conftest import cg_command

RETRY = "shop/payments/retry.py::schedule_payment_retry"
BACKOFF = "shop/payments/retry.py::compute_backoff"
FAILED = "shop/webhooks/stripe_webhooks.py::WebhookHandler.handle_invoice_payment_failed"


@pytest.fixture(scope="module")
def index(indexed_shop):
    repo, _ = indexed_shop
    with open_index(repo) as session:
        yield session


def test_search_ranks_the_retry_scheduler_in_the_first_two(index):
    result = index.search("payment retry", limit=3)
    # the learned order (the default): PaymentService.retry_failed_payment, then the scheduler
    assert RETRY in [h.id for h in result.hits[:2]]
    rows = result.as_dict()
    assert [row["id"] for row in rows] == [h.id for h in result.hits]
    assert {"qualname", "kind", "path", "start_line", "end_line", "score", "ranks"} <= set(rows[0])


def test_explain_traces_the_flow_and_embeds_the_question_once(index, monkeypatch):
    asked: list[list[str]] = []
    embed = index.embedder.embed

    def counting(texts, *args, **kwargs):
        asked.append(list(texts))
        return embed(texts, *args, **kwargs)

    monkeypatch.setattr(index.embedder, "embed", counting)
    answer = index.explain("how is a failed payment retried?")
    assert answer.found and RETRY in answer.order
    assert asked == [["how is a failed payment retried?"]]
    data = answer.as_dict()
    assert data["query"] == "how is a failed payment retried?" and data["order"] == answer.order
    assert {n["id"] for n in data["nodes"]} == set(answer.order)

    asked.clear()
    nothing = index.explain("quantum teleportation of kittens")  # the not-found path embeds it once too
    assert not nothing.found and len(asked) == 1


def test_impact_lists_callers_and_matches_the_cli_json(index, indexed_shop):
    repo, _ = indexed_shop
    result = index.impact("schedule_payment_retry")
    callers = {a.node["id"] for a in result.callers}
    assert "shop/payments/service.py::PaymentService.charge_invoice" in callers
    assert all(not a.node["path"].startswith("tests/") for a in result.callers)
    printed = json.loads(cg_command("impact", "schedule_payment_retry", "--json", "--repo", str(repo)).stdout)
    assert json.loads(json.dumps(result.as_dict(), default=str)) == printed


def test_callers_answer_is_what_the_cli_prints(index, indexed_shop):
    repo, _ = indexed_shop
    result = index.callers("compute_backoff", depth=2)
    data = result.as_dict()
    assert data["symbol"]["id"] == BACKOFF and "file_kind" not in data["symbol"]
    assert {c["depth"] for c in data["callers"]} == {1, 2}
    printed = json.loads(cg_command("callers", "compute_backoff", "--depth", "2", "--json", "--repo", str(repo)).stdout)
    assert json.loads(json.dumps(data, default=str)) == printed
    callees = index.callees("schedule_payment_retry").as_dict()
    assert set(callees) == {"symbol", "callees"} and callees["callees"]


def test_paths_from_the_webhook_to_the_backoff(index):
    result = index.paths("handle_invoice_payment_failed", "compute_backoff")
    assert result.paths and result.paths[0].nodes[0]["id"] == FAILED
    assert result.paths[0].nodes[-1]["id"] == BACKOFF
    data = result.as_dict()
    assert data["source"] == FAILED and data["target"] == BACKOFF
    assert data["paths"][0]["length"] == len(result.paths[0].hops)


def test_cypher_stats_status_and_lookup(index):
    result = index.cypher("MATCH (s:Symbol) WHERE s.name = $name RETURN s.id AS id", {"name": "compute_backoff"})
    assert result.as_dict() == [{"id": BACKOFF}]
    assert index.stats().as_dict()["Symbol"] > 0
    status = index.status().as_dict()
    assert status["backend"] == "kuzu" and status["counts"]["Symbol"] == index.stats().as_dict()["Symbol"]
    assert index.lookup("shop/payments/retry.py:58")["id"].startswith("shop/payments/retry.py::")
    with pytest.raises(SymbolLookupError, match="no definition matches 'refund_everything'") as caught:
        index.lookup("refund_everything")
    assert isinstance(caught.value, CgError)


def test_open_index_refuses_a_missing_directory_and_a_file(tmp_path):
    with pytest.raises(UserError, match="no such directory"), open_index(tmp_path / "invoices"):
        pass
    (tmp_path / "invoice.txt").write_text("total: 12 EUR\n")
    with pytest.raises(UserError, match="not a directory"), open_index(tmp_path / "invoice.txt"):
        pass


@pytest.mark.parametrize(
    ("question", "identifiers", "quoted", "about_tests", "async_side"),
    [
        ("what calls schedule_payment_retry?", ("schedule_payment_retry",), (), False, None),
        ('where is "coupon has expired" raised?', (), ("coupon has expired",), False, None),
        ("which tests cover RetryPolicy.delay_for?", ("RetryPolicy.delay_for",), (), True, None),
        ("how does the async webhook handler await the invoice?", (), (), False, True),
        ("does charge_invoice block on a sync gateway call?", ("charge_invoice",), (), False, False),
        ("payments", ("payments",), (), False, None),
        # the library's test tooling is library code; "latest" holds the word but is not about tests
        ("how does the test client send a request to the app?", (), (), False, None),
        ("where is the latest invoice looked up?", (), (), False, None),
        ("is the refund path tested, and by which test?", (), (), True, None),
    ],
)
def test_query_parses_a_question_once(question, identifiers, quoted, about_tests, async_side):
    query = Query.parse(question)
    assert query.identifiers == identifiers
    assert query.quoted == quoted
    assert query.about_tests is about_tests
    assert query.async_side is async_side
    assert query.vector is None


def test_query_terms_are_the_lexical_analysis():
    query = Query.parse("what calls schedule_payment_retry?")
    assert query.terms == ("call", "schedulepaymentretry", "schedul", "payment", "retri")
    assert Query.of(query) is query and Query.of("payment retry") == Query.parse("payment retry")


def test_ranking_comes_from_the_settings():
    ranking = Ranking.default()
    defaults = Settings(repo=Path("shop"))
    assert ranking == Ranking.from_settings(defaults)
    assert ranking.weights["graph"] == defaults.weight_graph and ranking.priors["tests"] == defaults.prior_tests
    assert ranking.without_graph().weights["graph"] == 0.0 and ranking.weights["graph"] > 0
    with pytest.raises(ValueError, match="unknown fusion 'borda'"):
        ranking.with_fusion("borda")
