import random
from datetime import datetime, timedelta, timezone

import pytest

from shop.errors import CardDeclinedError, GatewayUnavailableError, RetryExhaustedError
from shop.payments.gateway import FakeStripeClient, StripeGateway
from shop.payments.models import Payment, PaymentStatus
from shop.payments.retry import RETRY_JOB_KIND, RetryPolicy, compute_backoff, is_retryable, schedule_payment_retry
from shop.payments.service import PaymentService
from shop.billing.invoices import Invoice, InvoiceStatus, LineItem
from shop.queue import JobQueue
from shop.workers.retry_worker import run_retry_worker

NOW = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


def make_payment(attempts: int = 1) -> Payment:
    payment = Payment(invoice_id="in_1", customer_id="cus_1", amount_cents=1500, currency="usd", source="tok_visa")
    for _ in range(attempts):
        payment.record_attempt(succeeded=False, error_code="card_declined")
    return payment


def make_invoice(source: str) -> Invoice:
    invoice = Invoice(
        customer_id="cus_1",
        customer_email="ada@example.com",
        subscription_id=None,
        line_items=[LineItem("Pro plan", 2500)],
        payment_source=source,
    )
    invoice.status = InvoiceStatus.OPEN
    return invoice


def test_compute_backoff_grows_exponentially():
    assert [compute_backoff(n, 60, 2) for n in (1, 2, 3)] == [60, 120, 240]


def test_delay_for_without_jitter_is_deterministic():
    policy = RetryPolicy(base_delay=10, multiplier=3, jitter=0)
    assert policy.delay_for(3) == 90


def test_delay_for_jitter_stays_within_bounds():
    policy = RetryPolicy(base_delay=100, multiplier=2, jitter=0.1, rng=random.Random(7))
    delays = [policy.delay_for(2) for _ in range(200)]
    assert all(180 <= d <= 220 for d in delays)
    assert len(set(delays)) > 1


def test_schedule_payment_retry_enqueues_job_at_backoff_time():
    queue = JobQueue()
    payment = make_payment(attempts=1)
    policy = RetryPolicy(base_delay=60, jitter=0)
    job = schedule_payment_retry(payment, policy, queue, now=NOW)
    assert job.kind == RETRY_JOB_KIND
    assert job.payload == {"payment_id": payment.id, "attempt": 2}
    assert payment.status is PaymentStatus.RETRY_SCHEDULED
    assert payment.next_retry_at == NOW + timedelta(seconds=60)
    assert queue.pop_due(NOW) == []
    assert queue.pop_due(NOW + timedelta(seconds=60)) == [job]


def test_schedule_payment_retry_raises_when_exhausted():
    payment = make_payment(attempts=3)
    with pytest.raises(RetryExhaustedError) as excinfo:
        schedule_payment_retry(payment, RetryPolicy(max_attempts=3), JobQueue(), now=NOW)
    assert excinfo.value.attempts == 3
    assert payment.status is PaymentStatus.FAILED


def test_is_retryable():
    assert is_retryable(CardDeclinedError(decline_code="insufficient_funds"))
    assert not is_retryable(CardDeclinedError(decline_code="stolen_card"))
    assert is_retryable(GatewayUnavailableError())
    assert not is_retryable(RetryExhaustedError("pay_1", 4))
    assert not is_retryable(ValueError("boom"))


def test_failed_charge_is_retried_by_worker():
    queue = JobQueue()
    gateway = StripeGateway(FakeStripeClient("sk_test_123"))
    service = PaymentService(gateway, queue, RetryPolicy(base_delay=30, jitter=0))
    invoice = make_invoice("tok_outage")
    payment = service.charge_invoice(invoice, now=NOW)
    assert payment.status is PaymentStatus.RETRY_SCHEDULED
    assert len(queue) == 1

    payment.source = "tok_visa"  # customer updated their card
    processed = run_retry_worker(
        queue, service, clock=lambda: NOW + timedelta(minutes=5), sleep=lambda _: None, max_iterations=1
    )
    assert processed == 1
    assert payment.status is PaymentStatus.SUCCEEDED
    assert invoice.status is InvoiceStatus.PAID
