"""Charging invoices and retrying failed payments."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Dict, Optional

from ..billing.invoices import Invoice, mark_invoice_paid, mark_invoice_uncollectible
from ..errors import PaymentError, RetryExhaustedError
from ..notifications import notify_payment_failed, send_receipt_email
from ..queue import JobQueue
from .gateway import PaymentGateway
from .models import Payment, PaymentStatus
from .retry import RetryPolicy, is_retryable, schedule_payment_retry

logger = logging.getLogger(__name__)


class PaymentNotFoundError(KeyError):
    pass


class PaymentService:
    """Charges invoices through a gateway and schedules retries on failure."""

    def __init__(self, gateway: PaymentGateway, queue: JobQueue, policy: RetryPolicy) -> None:
        self.gateway = gateway
        self.queue = queue
        self.policy = policy
        self.payments: Dict[str, Payment] = {}
        self.invoices: Dict[str, Invoice] = {}

    def get_payment(self, payment_id: str) -> Payment:
        try:
            return self.payments[payment_id]
        except KeyError:
            raise PaymentNotFoundError(payment_id) from None

    def find_payment_for_invoice(self, invoice_id: str) -> Optional[Payment]:
        for payment in self.payments.values():
            if payment.invoice_id == invoice_id:
                return payment
        return None

    def charge_invoice(self, invoice: Invoice, now: Optional[datetime] = None) -> Payment:
        """Attempt to collect ``invoice``; schedule a retry if the failure is transient."""
        payment = Payment(
            invoice_id=invoice.id,
            customer_id=invoice.customer_id,
            amount_cents=invoice.total_cents,
            currency=invoice.currency,
            source=invoice.payment_source,
        )
        self.payments[payment.id] = payment
        self.invoices[invoice.id] = invoice
        try:
            result = self.gateway.charge(payment.amount_cents, payment.currency, payment.source)
        except PaymentError as error:
            payment.record_attempt(succeeded=False, error_code=error.code)
            notify_payment_failed(invoice.customer_email, str(error))
            if is_retryable(error):
                try:
                    schedule_payment_retry(payment, self.policy, self.queue, now=now)
                except RetryExhaustedError as exhausted:
                    self._give_up(payment, invoice, str(exhausted))
            return payment
        payment.charge_id = result.charge_id
        payment.record_attempt(succeeded=True)
        mark_invoice_paid(invoice, paid_at=now)
        send_receipt_email(invoice)
        return payment

    def retry_failed_payment(self, payment_id: str, now: Optional[datetime] = None) -> Payment:
        """Re-attempt a scheduled payment. Called by the retry worker."""
        payment = self.get_payment(payment_id)
        invoice = self.invoices[payment.invoice_id]
        if payment.status is not PaymentStatus.RETRY_SCHEDULED:
            logger.info("skipping retry of %s in status %s", payment.id, payment.status.value)
            return payment
        try:
            result = self.gateway.charge(payment.amount_cents, payment.currency, payment.source)
        except PaymentError as error:
            payment.record_attempt(succeeded=False, error_code=error.code)
            if not is_retryable(error):
                self._give_up(payment, invoice, str(error))
                return payment
            try:
                schedule_payment_retry(payment, self.policy, self.queue, now=now)
            except RetryExhaustedError as exhausted:
                self._give_up(payment, invoice, str(exhausted))
            return payment
        payment.charge_id = result.charge_id
        payment.record_attempt(succeeded=True)
        mark_invoice_paid(invoice, paid_at=now)
        send_receipt_email(invoice)
        return payment

    # Terminal failure: no more retries will be scheduled for this payment.
    def _give_up(self, payment: Payment, invoice: Invoice, reason: str) -> None:
        logger.warning("giving up on payment %s: %s", payment.id, reason)
        payment.status = PaymentStatus.FAILED
        mark_invoice_uncollectible(invoice)
        notify_payment_failed(invoice.customer_email, reason)

    def refund_payment(self, payment_id: str, amount_cents: Optional[int] = None) -> str:
        """Refund a succeeded payment in full or in part."""
        payment = self.get_payment(payment_id)
        if payment.status is not PaymentStatus.SUCCEEDED or payment.charge_id is None:
            raise PaymentError(f"payment {payment_id} has not succeeded", code="not_refundable")
        refund_id = self.gateway.refund(payment.charge_id, amount_cents)
        payment.status = PaymentStatus.REFUNDED
        return refund_id

    def cancel_pending_retries(self, payment_id: str) -> int:
        """Drop queued retries of ``payment_id``, e.g. when the customer paid another way."""
        return self.queue.cancel(lambda job: job.payload.get("payment_id") == payment_id)
