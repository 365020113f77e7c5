"""Handlers for webhook events sent by Stripe."""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, Mapping, Optional

from ..billing.invoices import mark_invoice_paid, mark_invoice_uncollectible
from ..billing.subscriptions import Subscription
from ..errors import RetryExhaustedError, WebhookSignatureError
from ..http.routes import Request, Response, router
from ..notifications import notify_payment_failed, send_receipt_email
from ..payments.retry import schedule_payment_retry
from ..payments.service import PaymentService
from .signature import verify_signature

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "Stripe-Signature"

Event = Mapping[str, Any]


def _event_object(event: Event) -> Mapping[str, Any]:
    return event.get("data", {}).get("object", {})


class WebhookHandler:
    """Applies Stripe events to local invoices, payments and subscriptions."""

    def __init__(self, service: PaymentService, subscriptions: Dict[str, Subscription]) -> None:
        self.service = service
        self.subscriptions = subscriptions

    def handle_invoice_paid(self, event: Event) -> Dict[str, Any]:
        invoice = self.service.invoices.get(_event_object(event).get("id", ""))
        if invoice is None:
            return {"status": "ignored", "reason": "unknown invoice"}
        mark_invoice_paid(invoice)
        send_receipt_email(invoice)
        subscription = self.subscriptions.get(invoice.subscription_id or "")
        if subscription is not None:
            subscription.record_payment_success()
        return {"status": "ok", "invoice": invoice.id}

    def handle_invoice_payment_failed(self, event: Event) -> Dict[str, Any]:
        """Record the failed attempt and schedule the next retry."""
        data = _event_object(event)
        payment = self.service.find_payment_for_invoice(data.get("id", ""))
        if payment is None:
            return {"status": "ignored", "reason": "unknown invoice"}
        invoice = self.service.invoices[payment.invoice_id]
        error_code = (data.get("last_payment_error") or {}).get("code", "card_declined")
        payment.record_attempt(succeeded=False, error_code=error_code)
        subscription = self.subscriptions.get(invoice.subscription_id or "")
        if subscription is not None:
            subscription.record_payment_failure()
        try:
            job = schedule_payment_retry(payment, self.service.policy, self.service.queue)
        except RetryExhaustedError as exhausted:
            mark_invoice_uncollectible(invoice)
            notify_payment_failed(invoice.customer_email, str(exhausted))
            return {"status": "exhausted", "payment": payment.id}
        notify_payment_failed(invoice.customer_email, error_code.replace("_", " "))
        return {"status": "retry_scheduled", "payment": payment.id, "job": job.id}

    def handle_subscription_deleted(self, event: Event) -> Dict[str, Any]:
        subscription = self.subscriptions.get(_event_object(event).get("id", ""))
        if subscription is None:
            return {"status": "ignored", "reason": "unknown subscription"}
        if subscription.is_active or subscription.cancel_at_period_end:
            subscription.cancel()
        return {"status": "ok", "subscription": subscription.id}


class _WebhookConfig:
    handler: Optional[WebhookHandler] = None
    secret: str = ""


def configure_webhooks(handler: WebhookHandler, secret: str) -> None:
    """Install the handler and signing secret used by :func:`stripe_webhook`."""
    _WebhookConfig.handler = handler
    _WebhookConfig.secret = secret


@router.route("/webhooks/stripe", methods=["POST"])
def stripe_webhook(request: Request) -> Response:
    """Verify and dispatch a Stripe webhook delivery."""
    handler = _WebhookConfig.handler
    if handler is None:
        return Response.error(503, "webhooks are not configured")
    try:
        verify_signature(request.body, request.header(SIGNATURE_HEADER), _WebhookConfig.secret)
    except WebhookSignatureError as exc:
        logger.warning("rejected webhook: %s", exc)
        return Response.error(400, str(exc))
    try:
        event = json.loads(request.body)
    except ValueError:
        return Response.error(400, "malformed JSON payload")
    dispatch = {
        "invoice.paid": handler.handle_invoice_paid,
        "invoice.payment_failed": handler.handle_invoice_payment_failed,
        "customer.subscription.deleted": handler.handle_subscription_deleted,
    }
    event_handler = dispatch.get(event.get("type"))
    if event_handler is None:
        return Response(200, {"status": "ignored", "reason": "unhandled event type"})
    return Response(200, event_handler(event))
