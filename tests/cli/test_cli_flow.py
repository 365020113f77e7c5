"""Flow and impact answers on examples/shop through the real CLI: explain as an ordered flow, impact,
path, callers/callees --depth, Mermaid output and the symbol lookup rules. The same checks run on
Neo4j in test_cli_neo4j.py through the helpers below."""

from __future__ import annotations

import json
import re

from tests.conftest import cg_command

QUESTION = "how is a failed payment retried?"
HANDLER = "shop/webhooks/stripe_webhooks.py::WebhookHandler.handle_invoice_payment_failed"
SCHEDULER = "shop/payments/retry.py::schedule_payment_retry"
POLICY = "shop/payments/retry.py::RetryPolicy.delay_for"
BACKOFF = "shop/payments/retry.py::compute_backoff"


def explain_json(repo, env=None) -> dict:
    return json.loads(cg_command("explain", QUESTION, "--json", "--repo", str(repo), env=env).stdout)


def check_flow(data: dict) -> None:
    """An ordered flow that starts at an entry point and reaches the scheduler, then the backoff policy."""
    order, nodes = data["order"], {n["id"]: n for n in data["nodes"]}
    first = nodes[order[0]]
    assert first["entry"] in ("route", "cli", "main", "public"), first  # an entry point, not a test
    assert first["path"] in (
        "shop/webhooks/stripe_webhooks.py",
        "shop/workers/retry_worker.py",
        "shop/payments/service.py",
    )
    assert not any(
        e["dst"] == order[0] and e["type"] == "CALLS" for e in data["edges"]
    )  # nothing in it calls the entry
    assert HANDLER in data["entries"]  # the webhook handler is one of the ways in
    assert order.index(SCHEDULER) < order.index(POLICY)
    calls = {(e["src"], e["dst"]): e for e in data["edges"] if e["type"] == "CALLS"}
    assert calls[(SCHEDULER, POLICY)]["line"] == 108 and calls[(HANDLER, SCHEDULER)]["line"] == 60
    # the entry reaches the scheduler over the flow's own CALLS edges, and every step before the
    # scheduler in the order is on the way there or a branch taken earlier
    reach, stack = {order[0]}, [order[0]]
    while stack:
        here = stack.pop()
        for src, dst in calls:
            if src == here and dst not in reach:
                reach.add(dst)
                stack.append(dst)
    assert SCHEDULER in reach and POLICY in reach
    for node in data["nodes"]:
        assert node["citation"] == f"[{node['path']}:{node['start_line']}-{node['end_line']}]"
    # the override a call through the gateway runs: tests/queries/test_search_explain.py (with the
    # default 20 steps the learned seeds fill the flow with the retry policy and the webhook path first)


def test_explain_failed_payment_retry_is_an_ordered_flow(indexed_shop):
    repo, _ = indexed_shop
    check_flow(explain_json(repo))


def test_explain_markdown_reads_in_flow_order(indexed_shop):
    repo, _ = indexed_shop
    text = cg_command("explain", QUESTION, "--repo", str(repo)).stdout  # piped: plain Markdown
    headings = re.findall(r"^## (\d+)\. (\S+) ", text, re.M)
    names = [name for _, name in headings]
    scheduler = names.index("shop.payments.retry.schedule_payment_retry")
    assert scheduler < names.index("shop.payments.retry.RetryPolicy.delay_for")
    assert re.search(r"^## 1\. .*\n(> .*\n\n)?- Entry point: ", text, re.M)
    assert "## Tests that exercise this flow" in text
    assert "- tests.test_retry.test_schedule_payment_retry_raises_when_exhausted [tests/test_retry.py:66-71]" in text
    assert "\x1b[" not in text  # no terminal escapes when piped


def test_explain_nothing_relevant_says_so(indexed_shop):
    repo, _ = indexed_shop
    result = cg_command("explain", "kubernetes helm chart deployment", "--repo", str(repo))
    assert "Nothing in the index matches this question" in result.stdout
    assert "## 1." not in result.stdout
    data = json.loads(cg_command("explain", "kubernetes helm chart", "--json", "--repo", str(repo)).stdout)
    assert data["found"] is False and data["nodes"] == []
    # questions in the shop's own words (payments, points, purchases) that its code does not answer, and
    # that are not in the sets the refusal model was fitted on (benchmarks/questions/unanswerable-*.yaml)
    for question in (
        "how does the loyalty points program award points per purchase?",
        "how are push notifications sent to mobile phones via Firebase?",
    ):
        refused = json.loads(cg_command("explain", question, "--json", "--repo", str(repo)).stdout)
        assert refused["found"] is False, refused["answerability"]
    signals = refused["answerability"]
    from cg.queries.refusal_model import MODEL

    assert set(signals) >= {"cosine", "probability"} and signals["probability"] < MODEL["threshold"]


def test_the_index_stores_the_refusal_baseline(indexed_shop):
    """Off-topic probe questions come no closer to the shop's code than a cosine of about 0.1."""
    from cg.config import load_settings
    from cg.graph.backends import open_store

    repo, _ = indexed_shop
    with open_store(load_settings(repo), read_only=True) as store:
        assert 0.0 < float(store.get_meta("null_cosine") or 0) < 0.3


def parse_mermaid(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """A strict reader for the subset cg writes: a header, quoted node labels, labelled edges, classDefs."""
    lines = text.strip().splitlines()
    assert lines[0] == "flowchart TD"
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    for line in lines[1:]:
        if m := re.fullmatch(r'  (n\d+)\["([^"\[\]]*)"\](:::(entry|seed))?', line):
            assert m[1] not in nodes
            nodes[m[1]] = m[2]
        elif m := re.fullmatch(r'  (n\d+) (-->|-\.->)\|"([^"|]*)"\| (n\d+)', line):
            edges.append((m[1], m[4], m[3]))
        else:
            assert re.fullmatch(r"  classDef (entry|seed) [\w:#,-]+", line), line
    assert all(a in nodes and b in nodes for a, b, _ in edges)
    return nodes, edges


def test_explain_mermaid_parses(indexed_shop):
    repo, _ = indexed_shop
    text = cg_command("explain", QUESTION, "--format", "mermaid", "--repo", str(repo)).stdout
    nodes, edges = parse_mermaid(text)
    data = explain_json(repo)
    assert len(nodes) == len(data["nodes"]) and len(edges) == len(data["edges"])
    label = {v.split("<br/>")[0]: k for k, v in nodes.items()}
    assert (label["schedule_payment_retry"], label["RetryPolicy.delay_for"], "line 108") in edges
    assert nodes["n0"].split("<br/>")[0] == data["order"][0].split("::")[1]


WEBHOOK_QUESTION = "how is a stripe webhook dispatched"


def check_decorated_route(repo, env=None) -> None:
    """The route decorator joins the webhook's flow through its DECORATES edge, right after the handler it
    wraps (the module, not the handler, calls it), in JSON, Markdown and Mermaid alike."""
    route, webhook = "shop/http/routes.py::Router.route", "shop/webhooks/stripe_webhooks.py::stripe_webhook"
    data = json.loads(cg_command("explain", WEBHOOK_QUESTION, "--json", "--repo", str(repo), env=env).stdout)
    nodes = {n["id"]: n for n in data["nodes"]}
    assert nodes[route]["role"] == "decorator" and not nodes[route]["entry"]
    assert nodes[webhook]["entry"] == "route"
    assert {"src": route, "dst": webhook, "line": 88, "resolved_by": "decorator", "type": "DECORATES"} in data["edges"]
    assert data["order"].index(route) == data["order"].index(webhook) + 1
    text = cg_command("explain", WEBHOOK_QUESTION, "--repo", str(repo), env=env).stdout
    position = {qualname.rsplit(".", 1)[-1]: n for n, qualname in re.findall(r"^## (\d+)\. (\S+)", text, re.M)}
    assert f"- @router.route wraps {position['stripe_webhook']}. stripe_webhook (line 88)." in text
    assert f"- Wrapped by: {position['route']}. Router.route (line 88)" in text
    mermaid = cg_command("explain", WEBHOOK_QUESTION, "--format", "mermaid", "--repo", str(repo), env=env).stdout
    nodes_m, edges_m = parse_mermaid(mermaid)
    label = {v.split("<br/>")[0]: k for k, v in nodes_m.items()}
    assert (label["Router.route"], label["stripe_webhook"], "wraps") in edges_m


def test_explain_shows_the_decorator_that_wraps_a_route(indexed_shop):
    check_decorated_route(indexed_shop[0])


def test_mermaid_labels_are_escaped():
    from cg.queries.explain import _mermaid_text

    assert _mermaid_text('a "b" <c> | d & e') == "a #quot;b#quot; #lt;c#gt; #124; d #amp; e"


def impact_json(repo, symbol: str, *args: str, env=None) -> dict:
    return json.loads(cg_command("impact", symbol, "--json", *args, "--repo", str(repo), env=env).stdout)


def check_backoff_impact(data: dict) -> None:
    callers = {c["id"]: c["depth"] for c in data["callers"]}
    assert callers == {
        POLICY: 1,
        SCHEDULER: 2,
        "shop/payments/service.py::PaymentService.charge_invoice": 3,
        "shop/payments/service.py::PaymentService.retry_failed_payment": 3,
        HANDLER: 3,
    }
    assert data["counts_by_depth"] == {"1": 1, "2": 1, "3": 3}
    assert [c["depth"] for c in data["callers"]] == sorted(c["depth"] for c in data["callers"])
    assert {t["id"] for t in data["tests"]} == {
        "tests/test_retry.py::test_compute_backoff_grows_exponentially",
        "tests/test_retry.py::test_delay_for_without_jitter_is_deterministic",
        "tests/test_retry.py::test_delay_for_jitter_stays_within_bounds",
        "tests/test_retry.py::test_schedule_payment_retry_enqueues_job_at_backoff_time",
        "tests/test_retry.py::test_schedule_payment_retry_raises_when_exhausted",
        "tests/test_retry.py::test_failed_charge_is_retried_by_worker",
        # through the `app` fixture: app.service.charge_invoice(invoice), charge_invoice being unique
        "tests/test_webhooks.py::test_invoice_payment_failed_schedules_retry",
        "tests/test_webhooks.py::test_invoice_paid_marks_invoice_paid",
    }
    assert data["importers"] == [{"file": "tests/test_retry.py", "imports": BACKOFF, "line": 9}]
    assert data["subclasses"] == [] and data["overrides"] == []


def test_impact_of_the_backoff_function(indexed_shop):
    repo, _ = indexed_shop
    check_backoff_impact(impact_json(repo, "compute_backoff"))
    deeper = impact_json(repo, "shop.payments.retry.compute_backoff", "--depth", "4")
    assert {c["id"]: c["depth"] for c in deeper["callers"]}[
        "shop/workers/retry_worker.py::run_retry_worker._handle"
    ] == 4
    text = cg_command("impact", "compute_backoff", "--repo", str(repo)).stdout
    assert "Callers within 3 hops: 5 (depth 1: 1, depth 2: 1, depth 3: 3)" in text
    assert (
        "  1. shop.payments.retry.RetryPolicy.delay_for [shop/payments/retry.py:53-59] calls compute_backoff at line 55"
        in text
    )


def test_impact_of_a_base_method_and_a_class(indexed_shop):
    repo, _ = indexed_shop
    base = impact_json(repo, "PaymentGateway.charge")
    assert [o["id"] for o in base["overrides"]] == ["shop/payments/gateway.py::StripeGateway.charge"]
    override = impact_json(repo, "StripeGateway.charge")
    assert [o["id"] for o in override["overridden"]] == ["shop/payments/gateway.py::PaymentGateway.charge"]
    # a call through the base may run the override: those callers are affected, marked as dispatch
    via_base = {c["id"]: c for c in override["callers"] if c["depth"] == 1}
    assert via_base["shop/payments/service.py::PaymentService.retry_failed_payment"]["resolved_by"] == "dispatch"
    cls = impact_json(repo, "PaymentGateway")
    assert [s["id"] for s in cls["subclasses"]] == ["shop/payments/gateway.py::StripeGateway"]


def test_impact_of_a_method_lists_only_the_importers_that_reach_it(indexed_shop):
    """Four files import RetryPolicy; app.py only builds one (from_settings) and payments/__init__.py
    re-exports it: neither depends on delay_for. service.py (charge_invoice reaches it through
    schedule_payment_retry) and the retry tests do."""
    repo, _ = indexed_shop
    data = impact_json(repo, "RetryPolicy.delay_for")
    assert [i["file"] for i in data["importers"]] == ["shop/payments/service.py", "tests/test_retry.py"]


def test_impact_counts_the_tests_that_reach_code_through_a_fixture(indexed_shop):
    """Only the ``app`` fixture calls create_app; pytest calls the fixture for every test (and the
    ``subscription`` fixture) that takes a parameter named ``app``: those tests reach create_app."""
    repo, _ = indexed_shop
    data = impact_json(repo, "create_app")
    tests = {t["qualname"].rsplit(".", 1)[-1]: t for t in data["tests"]}
    assert set(tests) == {
        "test_endpoint_rejects_bad_signature",
        "test_invoice_payment_failed_schedules_retry",
        "test_invoice_paid_marks_invoice_paid",
        "test_subscription_deleted_cancels",
    }
    assert tests["test_endpoint_rejects_bad_signature"]["depth"] == 2
    assert tests["test_endpoint_rejects_bad_signature"]["resolved_by"] == "fixture"
    assert tests["test_endpoint_rejects_bad_signature"]["via"] == "tests/test_webhooks.py::app"
    assert data["callers"] == []  # fixtures and tests are not callers


def test_impact_reaches_a_route_through_its_registry(indexed_shop):
    """stripe_webhook is registered by @router.route and called by Router.dispatch through a handler it
    looks up at run time: dispatch is its caller (marked registry), so the test that posts to the app's
    router reaches it."""
    repo, _ = indexed_shop
    data = impact_json(repo, "stripe_webhook")
    callers = {c["id"]: c for c in data["callers"]}
    dispatch = callers["shop/http/routes.py::Router.dispatch"]
    assert (dispatch["depth"], dispatch["resolved_by"], dispatch["line"]) == (1, "registry", 71)
    assert "tests/test_webhooks.py::test_endpoint_rejects_bad_signature" in {t["id"] for t in data["tests"]}
    assert "Router.resolve" not in str(callers)  # it makes no unresolved call: it only looks the handler up


def check_dispatch_agrees(repo, env=None) -> None:
    """impact, path and callers follow the same dispatch rule: a call through the base method may run
    the override, so the caller impact names is a caller path and callers can show too."""
    retry = "shop/payments/service.py::PaymentService.retry_failed_payment"
    override = impact_json(repo, "StripeGateway.charge", env=env)
    assert {c["id"]: c["resolved_by"] for c in override["callers"] if c["depth"] == 1}[retry] == "dispatch"
    found = path_json(repo, "PaymentService.retry_failed_payment", "StripeGateway.charge", env)
    assert [[n["id"] for n in p["nodes"]] for p in found["paths"]][0] == [
        retry,
        "shop/payments/gateway.py::StripeGateway.charge",
    ]
    assert found["paths"][0]["hops"][0]["resolved_by"] == "dispatch"
    callers = cg_command("callers", "StripeGateway.charge", "--json", "--repo", str(repo), env=env).stdout
    assert retry in callers


def test_impact_path_and_callers_agree_on_dispatch(indexed_shop):
    check_dispatch_agrees(indexed_shop[0])


def test_symbol_lookup_rules(indexed_shop):
    repo, _ = indexed_shop
    ambiguous = cg_command("impact", "charge", "--repo", str(repo), check=False)
    assert ambiguous.returncode == 1 and ambiguous.stdout == ""
    lines = ambiguous.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cg: 'charge' is ambiguous, 2 definitions match: ")
    assert "shop.payments.gateway.PaymentGateway.charge [shop/payments/gateway.py:25]" in lines[0]
    assert "shop.payments.gateway.StripeGateway.charge [shop/payments/gateway.py:77]" in lines[0]
    at_line = json.loads(cg_command("callers", "shop/payments/retry.py:58", "--json", "--repo", str(repo)).stdout)
    assert at_line["symbol"]["id"] == POLICY
    # a line with a lambda on it means the method it is in, and the lambda is still reachable by its id
    cancel = "shop/payments/service.py::PaymentService.cancel_pending_retries"
    on_lambda = json.loads(cg_command("callees", "shop/payments/service.py:117", "--json", "--repo", str(repo)).stdout)
    assert on_lambda["symbol"]["id"] == cancel
    by_id = json.loads(cg_command("callees", f"{cancel}.<lambda@2:33>", "--json", "--repo", str(repo)).stdout)
    assert by_id["symbol"]["kind"] == "lambda"
    assert by_id["symbol"]["qualname"] == "shop.payments.service.PaymentService.cancel_pending_retries.<lambda1>"
    unknown = cg_command("path", "nosuch_thing", "compute_backoff", "--repo", str(repo), check=False)
    assert unknown.returncode == 1 and unknown.stderr.strip().splitlines() == [
        "cg: no definition matches 'nosuch_thing' (try a qualified name, path:line or `cg search`)"
    ]
    typo = cg_command("impact", "PaymentService.charge_invoce", "--repo", str(repo), check=False)
    assert typo.returncode == 1 and typo.stderr.strip().splitlines() == [
        "cg: no definition matches 'PaymentService.charge_invoce'; did you mean PaymentService.charge_invoice?"
    ]
    nowhere = cg_command("impact", "shop/payments/retry.py:999", "--repo", str(repo), check=False)
    assert nowhere.returncode == 1 and "no definition at shop/payments/retry.py:999" in nowhere.stderr


def path_json(repo, a: str, b: str, env=None) -> dict:
    return json.loads(cg_command("path", a, b, "--json", "--repo", str(repo), env=env).stdout)


def check_paths(repo, env=None) -> None:
    direct = path_json(repo, "WebhookHandler.handle_invoice_payment_failed", "schedule_payment_retry", env)
    assert [[n["id"] for n in p["nodes"]] for p in direct["paths"]] == [[HANDLER, SCHEDULER]]
    assert direct["paths"][0]["hops"] == [{"src": HANDLER, "dst": SCHEDULER, "line": 60, "resolved_by": "jedi"}]
    chain = path_json(repo, "WebhookHandler.handle_invoice_payment_failed", "compute_backoff", env)
    assert [n["id"] for n in chain["paths"][0]["nodes"]] == [HANDLER, SCHEDULER, POLICY, BACKOFF]
    assert [h["line"] for h in chain["paths"][0]["hops"]] == [60, 108, 55]
    several = path_json(repo, "test_failed_charge_is_retried_by_worker", "compute_backoff", env)["paths"]
    assert [p["length"] for p in several] == [4, 6]  # through charge_invoice, then through the worker
    assert [n["id"] for n in several[1]["nodes"]][1] == "shop/workers/retry_worker.py::run_retry_worker"
    assert path_json(repo, "compute_backoff", "WebhookHandler.handle_invoice_payment_failed", env)["paths"] == []


def test_path_between_the_webhook_handler_and_the_retry_scheduler(indexed_shop):
    repo, _ = indexed_shop
    check_paths(repo)
    text = cg_command(
        "path", "WebhookHandler.handle_invoice_payment_failed", "compute_backoff", "--repo", str(repo)
    ).stdout
    assert "   -> shop.payments.retry.schedule_payment_retry [shop/payments/retry.py:86-117] (line 60, jedi)" in text
    none = cg_command("path", "compute_backoff", "schedule_payment_retry", "--repo", str(repo)).stdout
    assert "No call path from shop.payments.retry.compute_backoff to shop.payments.retry.schedule_payment_retry" in none


def test_callers_and_callees_depth(indexed_shop):
    repo, _ = indexed_shop
    one = json.loads(cg_command("callers", "compute_backoff", "--json", "--repo", str(repo)).stdout)
    assert {c["id"] for c in one["callers"]} == {
        POLICY,
        "tests/test_retry.py::test_compute_backoff_grows_exponentially",
    }
    two = json.loads(cg_command("callers", "compute_backoff", "--depth", "2", "--json", "--repo", str(repo)).stdout)
    second = {c["id"]: c["via"] for c in two["callers"] if c["depth"] == 2}
    assert second[SCHEDULER] == POLICY
    text = cg_command("callees", "schedule_payment_retry", "--depth", "2", "--repo", str(repo)).stdout
    assert re.search(
        r"^  shop\.payments\.retry\.RetryPolicy\.delay_for .*\n    shop\.payments\.retry\.compute_backoff "
        r"\[shop/payments/retry\.py:29-34\] \(called at line 55, jedi\)",
        text,
        re.M,
    )
