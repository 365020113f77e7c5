"""Invoices, line items and totals."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, List, Optional

from ..config import DEFAULT_CURRENCY
from .coupons import Coupon, apply_coupon

if TYPE_CHECKING:  # pragma: no cover
    from .subscriptions import Subscription

PAYMENT_TERMS_DAYS = 7


class InvoiceStatus(str, enum.Enum):
    DRAFT = "draft"
    OPEN = "open"
    PAID = "paid"
    UNCOLLECTIBLE = "uncollectible"
    VOID = "void"


@dataclass
class LineItem:
    description: str
    unit_amount_cents: int
    quantity: int = 1

    @property
    def amount_cents(self) -> int:
        return self.unit_amount_cents * self.quantity


@dataclass
class Invoice:
    """An amount owed by a customer for one billing period."""

    customer_id: str
    customer_email: str
    subscription_id: Optional[str]
    currency: str = DEFAULT_CURRENCY
    line_items: List[LineItem] = field(default_factory=list)
    coupon: Optional[Coupon] = None
    id: str = field(default_factory=lambda: f"in_{uuid.uuid4().hex[:16]}")
    status: InvoiceStatus = InvoiceStatus.DRAFT
    due_at: Optional[datetime] = None
    paid_at: Optional[datetime] = None
    payment_source: str = ""

    @property
    def subtotal_cents(self) -> int:
        return sum(item.amount_cents for item in self.line_items)

    @property
    def total_cents(self) -> int:
        return calculate_total(self, self.coupon)


def calculate_total(invoice: Invoice, coupon: Optional[Coupon] = None) -> int:
    """Subtotal of all line items with ``coupon`` applied."""
    return apply_coupon(invoice.subtotal_cents, coupon)


def create_invoice(
    subscription: "Subscription",
    now: Optional[datetime] = None,
    coupon: Optional[Coupon] = None,
) -> Invoice:
    """Open a new invoice for the subscription's current billing period."""
    now = now or datetime.now(timezone.utc)
    plan = subscription.plan
    invoice = Invoice(
        customer_id=subscription.customer_id,
        customer_email=subscription.customer_email,
        subscription_id=subscription.id,
        currency=plan.currency,
        line_items=[LineItem(f"{plan.name} ({plan.interval})", plan.price_cents, subscription.quantity)],
        coupon=coupon or subscription.coupon,
        payment_source=subscription.payment_source,
    )
    invoice.status = InvoiceStatus.OPEN
    invoice.due_at = now + timedelta(days=PAYMENT_TERMS_DAYS)
    return invoice


def mark_invoice_paid(invoice: Invoice, paid_at: Optional[datetime] = None) -> Invoice:
    """Mark ``invoice`` paid. Idempotent: paying a paid invoice is a no-op."""
    if invoice.status is InvoiceStatus.PAID:
        return invoice
    if invoice.status not in (InvoiceStatus.OPEN, InvoiceStatus.UNCOLLECTIBLE):
        raise ValueError(f"cannot pay invoice in status {invoice.status.value}")
    invoice.status = InvoiceStatus.PAID
    invoice.paid_at = paid_at or datetime.now(timezone.utc)
    return invoice


def mark_invoice_uncollectible(invoice: Invoice) -> Invoice:
    if invoice.status is not InvoiceStatus.OPEN:
        raise ValueError(f"only open invoices can be written off, not {invoice.status.value}")
    invoice.status = InvoiceStatus.UNCOLLECTIBLE
    return invoice
