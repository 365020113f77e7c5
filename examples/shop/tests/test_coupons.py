from datetime import datetime, timedelta, timezone

import pytest

from shop.billing.coupons import COUPONS, Coupon, apply_coupon, register_coupon, validate_coupon
from shop.billing.invoices import Invoice, LineItem, calculate_total
from shop.errors import InvalidCouponError, ShopError

NOW = datetime(2024, 3, 1, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def clean_catalogue():
    COUPONS.clear()
    yield
    COUPONS.clear()


def test_percentage_coupon():
    assert apply_coupon(2000, Coupon("SPRING20", percent_off=20)) == 1600


def test_fixed_coupon_never_goes_negative():
    assert apply_coupon(500, Coupon("TENOFF", amount_off_cents=1000)) == 0


def test_coupon_requires_exactly_one_discount():
    with pytest.raises(ValueError):
        Coupon("BROKEN", percent_off=10, amount_off_cents=100)


def test_validate_coupon_is_case_insensitive():
    coupon = Coupon("WELCOME", percent_off=10)
    register_coupon(coupon)
    assert validate_coupon(" welcome ", NOW) is coupon


def test_expired_coupon_is_rejected():
    register_coupon(Coupon("OLD", percent_off=10, expires_at=NOW - timedelta(days=1)))
    with pytest.raises(InvalidCouponError, match="coupon has expired"):
        validate_coupon("OLD", NOW)


def test_unknown_coupon_is_rejected():
    with pytest.raises(ShopError, match="coupon does not exist"):
        validate_coupon("NOPE", NOW)


def test_calculate_total_applies_coupon():
    invoice = Invoice(
        customer_id="cus_1",
        customer_email="ada@example.com",
        subscription_id=None,
        line_items=[LineItem("Seat", 1000, quantity=3), LineItem("Support", 500)],
    )
    assert calculate_total(invoice) == 3500
    assert calculate_total(invoice, Coupon("HALF", percent_off=50)) == 1750
