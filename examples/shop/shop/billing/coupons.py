"""Discount coupons."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Dict, Optional

from ..errors import InvalidCouponError


@dataclass(frozen=True)
class Coupon:
    """A discount, either a percentage or a fixed amount off."""

    code: str
    percent_off: Optional[float] = None
    amount_off_cents: Optional[int] = None
    expires_at: Optional[datetime] = None
    max_redemptions: Optional[int] = None
    times_redeemed: int = 0

    def __post_init__(self) -> None:
        if (self.percent_off is None) == (self.amount_off_cents is None):
            raise ValueError("exactly one of percent_off / amount_off_cents is required")
        if self.percent_off is not None and not 0 < self.percent_off <= 100:
            raise ValueError("percent_off must be in (0, 100]")

    @property
    def is_percentage(self) -> bool:
        return self.percent_off is not None


# Coupon catalogue. Loaded from the database in production.
COUPONS: Dict[str, Coupon] = {}


def register_coupon(coupon: Coupon) -> None:
    COUPONS[coupon.code.upper()] = coupon


def validate_coupon(code: str, now: datetime) -> Coupon:
    """Look up ``code`` and ensure it can be redeemed at ``now``."""
    coupon = COUPONS.get(code.strip().upper())
    if coupon is None:
        raise InvalidCouponError("coupon does not exist")
    if coupon.expires_at is not None and now >= coupon.expires_at:
        raise InvalidCouponError("coupon has expired")
    if coupon.max_redemptions is not None and coupon.times_redeemed >= coupon.max_redemptions:
        raise InvalidCouponError("coupon has reached its redemption limit")
    return coupon


def apply_coupon(amount_cents: int, coupon: Optional[Coupon]) -> int:
    """Return ``amount_cents`` after the discount, never below zero."""
    if coupon is None:
        return amount_cents
    if coupon.is_percentage:
        discount = round(amount_cents * coupon.percent_off / 100)
    else:
        discount = coupon.amount_off_cents
    return max(amount_cents - discount, 0)
