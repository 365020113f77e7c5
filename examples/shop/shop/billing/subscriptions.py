"""Customer subscriptions and renewals."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Optional

from ..config import DEFAULT_CURRENCY
from . import invoices as inv
from .coupons import Coupon
from .state_machine import SubscriptionState, transition

INTERVAL_DAYS = {"month": 30, "year": 365}

# Failed renewals tolerated before the subscription is canceled.
MAX_FAILED_PAYMENTS = 3


@dataclass(frozen=True)
class Plan:
    name: str
    price_cents: int
    interval: str = "month"
    currency: str = DEFAULT_CURRENCY


class Subscription:
    """A customer's recurring charge for a :class:`Plan`."""

    def __init__(
        self,
        customer_id: str,
        customer_email: str,
        plan: Plan,
        payment_source: str,
        quantity: int = 1,
        coupon: Optional[Coupon] = None,
        state: SubscriptionState = SubscriptionState.ACTIVE,
        current_period_end: Optional[datetime] = None,
    ) -> None:
        self.id = f"sub_{uuid.uuid4().hex[:16]}"
        self.customer_id = customer_id
        self.customer_email = customer_email
        self.plan = plan
        self.payment_source = payment_source
        self.quantity = quantity
        self.coupon = coupon
        self.state = state
        self.current_period_end = current_period_end or datetime.now(timezone.utc)
        self.cancel_at_period_end = False
        self.failed_payment_count = 0

    def __repr__(self) -> str:
        return f"Subscription(id={self.id!r}, plan={self.plan.name!r}, state={self.state.value})"

    @property
    def is_active(self) -> bool:
        return self.state in (SubscriptionState.ACTIVE, SubscriptionState.TRIALING)

    def is_due_for_renewal(self, now: datetime) -> bool:
        return self.is_active and now >= self.current_period_end

    def renew(self, now: Optional[datetime] = None) -> Optional["inv.Invoice"]:
        """Start the next billing period and return its invoice.

        Returns None if the subscription is set to cancel at period end, in
        which case it is canceled instead.
        """
        now = now or datetime.now(timezone.utc)
        if self.cancel_at_period_end:
            self.cancel()
            return None
        if self.state is SubscriptionState.TRIALING:
            transition(self, SubscriptionState.ACTIVE)
        invoice = inv.create_invoice(self, now=now)
        self.current_period_end += timedelta(days=INTERVAL_DAYS[self.plan.interval])
        return invoice

    def record_payment_failure(self) -> None:
        """Mark the subscription past due; cancel after too many failures."""
        self.failed_payment_count += 1
        if self.failed_payment_count >= MAX_FAILED_PAYMENTS:
            self.cancel()
        elif self.state is SubscriptionState.ACTIVE:
            transition(self, SubscriptionState.PAST_DUE)

    def record_payment_success(self) -> None:
        if self.state is SubscriptionState.PAST_DUE:
            transition(self, SubscriptionState.ACTIVE)

    def cancel(self) -> None:
        transition(self, SubscriptionState.CANCELED)
