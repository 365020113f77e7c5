"""CALLS / INHERITS / IMPORTS edges from the first-cut resolver on examples/shop: the right ones exist,
and the tempting wrong ones do not."""

from __future__ import annotations

import pytest

from cg.ingest.resolve.python import Resolver

from .helpers import extract_repo

RETRY = "shop/payments/retry.py::schedule_payment_retry"


@pytest.fixture(scope="module")
def edges():
    extractions = extract_repo()
    resolver = Resolver(extractions)
    out = []
    for ex in extractions:
        out.extend(resolver.edges(ex)[0])
    return out


def calls(edges):
    return {(e.src, e.dst): e for e in edges if e.type == "CALLS"}


def test_webhook_handler_calls_the_retry_scheduler(edges):
    edge = calls(edges)[("shop/webhooks/stripe_webhooks.py::WebhookHandler.handle_invoice_payment_failed", RETRY)]
    assert edge.line == 60
    assert edge.resolved_by == "import"
    assert edge.dst_label == "Symbol"


def test_callers_of_retry_are_exactly_the_real_ones(edges):
    callers = {src for (src, dst) in calls(edges) if dst == RETRY}
    assert callers == {
        "shop/webhooks/stripe_webhooks.py::WebhookHandler.handle_invoice_payment_failed",
        "shop/payments/service.py::PaymentService.charge_invoice",
        "shop/payments/service.py::PaymentService.retry_failed_payment",
        "tests/test_retry.py::test_schedule_payment_retry_enqueues_job_at_backoff_time",
        "tests/test_retry.py::test_schedule_payment_retry_raises_when_exhausted",
    }
    # the paid handler never retries
    assert ("shop/webhooks/stripe_webhooks.py::WebhookHandler.handle_invoice_paid", RETRY) not in calls(edges)


def test_scope_self_and_annotation_resolution(edges):
    c = calls(edges)
    assert (
        c[("shop/payments/retry.py::RetryPolicy.delay_for", "shop/payments/retry.py::compute_backoff")].resolved_by
        == "name"
    )
    # `policy: RetryPolicy` -> policy.delay_for()
    assert c[(RETRY, "shop/payments/retry.py::RetryPolicy.delay_for")].resolved_by == "name"
    # self.gateway is set from a `gateway: PaymentGateway` parameter: the declared type's method, and the
    # subclass's override only as a call that may run (dispatch), never as the resolution itself
    assert (
        "shop/payments/service.py::PaymentService.charge_invoice",
        "shop/payments/gateway.py::PaymentGateway.charge",
    ) in c
    assert (
        c[
            (
                "shop/payments/service.py::PaymentService.charge_invoice",
                "shop/payments/gateway.py::StripeGateway.charge",
            )
        ].resolved_by
        == "dispatch"
    )
    # self._give_up() -> the same class's method
    assert (
        c[
            (
                "shop/payments/service.py::PaymentService.charge_invoice",
                "shop/payments/service.py::PaymentService._give_up",
            )
        ].resolved_by
        == "name"
    )


def test_aliased_module_import_and_instantiation(edges):
    c = calls(edges)
    # `from . import invoices as inv` ... inv.create_invoice(...)
    assert (
        "shop/billing/subscriptions.py::Subscription.renew",
        "shop/billing/invoices.py::create_invoice",
    ) in c
    # instantiation: an edge to the class and to its constructor
    assert (RETRY, "shop/queue.py::Job") in c
    assert (RETRY, "shop/errors.py::RetryExhaustedError") in c
    assert (RETRY, "shop/errors.py::RetryExhaustedError.__init__") in c


def test_decorator_edge_through_module_level_instance(edges):
    """`@router.route(...)` runs when the module does: the module calls Router.route, the handler does not,
    and the route DECORATES the handler (from the same target the call resolved to)."""
    hooks = "shop/webhooks/stripe_webhooks.py"
    edge = calls(edges)[(f"{hooks}::<module>", "shop/http/routes.py::Router.route")]
    assert edge.line == 88
    assert (f"{hooks}::stripe_webhook", "shop/http/routes.py::Router.route") not in calls(edges)
    decorates = [e for e in edges if e.type == "DECORATES"]
    assert [(e.src, e.dst, e.line, e.resolved_by) for e in decorates if e.dst == f"{hooks}::stripe_webhook"] == [
        ("shop/http/routes.py::Router.route", f"{hooks}::stripe_webhook", 88, edge.resolved_by)
    ]
    assert all(e.src_label == e.dst_label == "Symbol" for e in decorates)  # a library decorator gets none


def test_externals_are_named_and_unknowns_are_not_guessed(edges):
    c = calls(edges)
    assert c[(RETRY, "builtins.max")].resolved_by == "name"
    assert c[(RETRY, "datetime.timedelta")].dst_label == "External"
    # `subscription = self.subscriptions.get(...)` has no stated type: nothing is guessed
    unresolved = [e for e in c.values() if e.src.endswith("handle_invoice_paid") and e.resolved_by == "unresolved"]
    assert any(e.dst == "subscription.record_payment_success" for e in unresolved)
    assert not any(
        e.dst.endswith("Subscription.record_payment_success") and e.dst_label == "Symbol"
        for e in c.values()
        if e.src.endswith("handle_invoice_paid")
    )


def test_inheritance(edges):
    inherits = {(e.src, e.dst) for e in edges if e.type == "INHERITS"}
    assert ("shop/payments/gateway.py::StripeGateway", "shop/payments/gateway.py::PaymentGateway") in inherits
    assert (
        "shop/billing/state_machine.py::SubscriptionStateMachine",
        "shop/billing/state_machine.py::StateMachine",
    ) in inherits
    assert ("shop/errors.py::ShopError", "builtins.Exception") in inherits


def test_imports_resolve_relative_to_the_package(edges):
    imports = {(e.src, e.dst, e.dst_label) for e in edges if e.type == "IMPORTS"}
    assert ("shop/webhooks/stripe_webhooks.py", RETRY, "Symbol") in imports
    assert ("shop/billing/subscriptions.py", "shop/billing/invoices.py", "File") in imports
    assert ("shop/webhooks/signature.py", "hashlib", "External") in imports
