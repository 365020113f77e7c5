import json
import time

import pytest

from shop.app import create_app
from shop.billing.invoices import InvoiceStatus
from shop.billing.state_machine import SubscriptionState
from shop.billing.subscriptions import Plan, Subscription
from shop.errors import WebhookSignatureError
from shop.http.routes import Request
from shop.payments.models import PaymentStatus
from shop.webhooks.signature import compute_signature, verify_signature

SECRET = "whsec_test_secret"
ENV = {"STRIPE_API_KEY": "sk_test_123", "STRIPE_WEBHOOK_SECRET": SECRET}


@pytest.fixture
def app():
    return create_app(ENV)


@pytest.fixture
def subscription(app):
    sub = Subscription("cus_1", "ada@example.com", Plan("Pro", 2500), payment_source="tok_outage")
    app.subscriptions[sub.id] = sub
    return sub


def signed_request(event: dict, secret: str = SECRET) -> Request:
    body = json.dumps(event).encode()
    timestamp = int(time.time())
    header = f"t={timestamp},v1={compute_signature(body, secret, timestamp)}"
    return Request("POST", "/webhooks/stripe", body=body, headers={"Stripe-Signature": header})


def test_verify_signature_roundtrip():
    body = b'{"id": "evt_1"}'
    header = f"t=1700000000,v1={compute_signature(body, SECRET, 1700000000)}"
    assert verify_signature(body, header, SECRET, now=1700000010) == 1700000000


def test_verify_signature_rejects_tampered_payload():
    header = f"t=1700000000,v1={compute_signature(b'{}', SECRET, 1700000000)}"
    with pytest.raises(WebhookSignatureError, match="webhook signature verification failed"):
        verify_signature(b'{"tampered": true}', header, SECRET, now=1700000000)


def test_endpoint_rejects_bad_signature(app):
    response = app.router.dispatch(signed_request({"type": "invoice.paid"}, secret="wrong"))
    assert response.status == 400
    assert response.body["error"] == "webhook signature verification failed"


def test_invoice_payment_failed_schedules_retry(app, subscription):
    invoice = subscription.renew()
    payment = app.service.charge_invoice(invoice)
    queued = len(app.queue)
    event = {"type": "invoice.payment_failed", "data": {"object": {"id": invoice.id}}}
    response = app.router.dispatch(signed_request(event))
    assert response.status == 200
    assert response.body["status"] == "retry_scheduled"
    assert payment.status is PaymentStatus.RETRY_SCHEDULED
    assert len(app.queue) == queued + 1
    assert subscription.state is SubscriptionState.PAST_DUE


def test_invoice_paid_marks_invoice_paid(app, subscription):
    invoice = subscription.renew()
    app.service.charge_invoice(invoice)
    event = {"type": "invoice.paid", "data": {"object": {"id": invoice.id}}}
    response = app.router.dispatch(signed_request(event))
    assert response.body == {"status": "ok", "invoice": invoice.id}
    assert invoice.status is InvoiceStatus.PAID


def test_subscription_deleted_cancels(app, subscription):
    event = {"type": "customer.subscription.deleted", "data": {"object": {"id": subscription.id}}}
    app.router.dispatch(signed_request(event))
    assert subscription.state is SubscriptionState.CANCELED
