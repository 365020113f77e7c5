"""Customer-facing email notifications.

Messages are appended to an in-memory outbox that the mailer process drains;
nothing here talks to an SMTP server directly.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import List

from .billing.invoices import Invoice

logger = logging.getLogger(__name__)

SENDER_ADDRESS = "billing@shop.example"


@dataclass(frozen=True)
class EmailMessage:
    to: str
    subject: str
    body: str
    sender: str = SENDER_ADDRESS


OUTBOX: List[EmailMessage] = []


def _format_amount(amount_cents: int, currency: str) -> str:
    return f"{amount_cents / 100:.2f} {currency.upper()}"


def _queue_email(message: EmailMessage) -> EmailMessage:
    OUTBOX.append(message)
    logger.info("queued email %r to %s", message.subject, message.to)
    return message


def send_receipt_email(invoice: Invoice) -> EmailMessage:
    """Send the customer a receipt for a paid invoice."""
    amount = _format_amount(invoice.total_cents, invoice.currency)
    return _queue_email(
        EmailMessage(
            to=invoice.customer_email,
            subject=f"Receipt for invoice {invoice.id}",
            body=f"Thanks! We received your payment of {amount}.",
        )
    )


def notify_payment_failed(customer_email: str, reason: str) -> EmailMessage:
    """Tell the customer a charge failed and what they can do about it."""
    return _queue_email(
        EmailMessage(
            to=customer_email,
            subject="Your payment could not be processed",
            body=(
                f"We were unable to charge your card: {reason}. "
                "We will retry automatically; you can also update your card in your account settings."
            ),
        )
    )
