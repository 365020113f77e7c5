"""How symbols are named back to a user: ids without ingest's duplicate keys, and "did you mean"."""

from __future__ import annotations

from cg.queries.lookup import did_you_mean, short_id

NAMES = [
    "shop.payments.service.PaymentService.charge_invoice",
    "shop.payments.service.PaymentService.retry_failed_payment",
    "shop.payments.retry.schedule_payment_retry",
    "shop.payments.retry.RetryPolicy.delay_for",
    "shop.billing.invoices.Invoice.mark_paid",
]


def test_short_id_never_shows_the_duplicate_key():
    assert short_id("shop/http/routes.py::Router.route") == "Router.route"
    assert short_id("shop/http/routes.py::view~2") == "view"
    assert short_id("shop/http/routes.py::build~2.inner") == "build.inner"


def test_did_you_mean_compares_as_many_parts_as_were_typed():
    assert did_you_mean("PaymentService.charge_invoce", NAMES) == ["PaymentService.charge_invoice"]
    assert did_you_mean("schedule_paymnet_retry", NAMES) == ["schedule_payment_retry"]
    assert did_you_mean("send_smtp_email", NAMES) == []
