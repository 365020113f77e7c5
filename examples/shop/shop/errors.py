"""Exception hierarchy shared across the shop service."""

from __future__ import annotations

from typing import Optional


class ShopError(Exception):
    """Base class for all errors raised by the shop service."""

    default_message = "shop error"

    def __init__(self, message: Optional[str] = None) -> None:
        super().__init__(message or self.default_message)


class PaymentError(ShopError):
    """A charge or refund could not be completed."""

    default_message = "payment failed"

    def __init__(self, message: Optional[str] = None, *, code: str = "processing_error") -> None:
        super().__init__(message)
        self.code = code


class CardDeclinedError(PaymentError):
    """The issuing bank declined the card."""

    default_message = "card was declined"

    def __init__(self, message: Optional[str] = None, *, decline_code: str = "generic_decline") -> None:
        super().__init__(message, code="card_declined")
        self.decline_code = decline_code

    @property
    def is_hard_decline(self) -> bool:
        return self.decline_code in HARD_DECLINE_CODES


class GatewayUnavailableError(PaymentError):
    """The payment provider could not be reached or returned a 5xx."""

    default_message = "payment gateway unavailable"


class RetryExhaustedError(PaymentError):
    """All scheduled payment retries have been used up."""

    default_message = "payment retries exhausted"

    def __init__(self, payment_id: str, attempts: int) -> None:
        super().__init__(
            f"payment {payment_id} failed after {attempts} attempts",
            code="retry_exhausted",
        )
        self.payment_id = payment_id
        self.attempts = attempts


class WebhookSignatureError(ShopError):
    """An incoming webhook did not carry a valid signature."""

    default_message = "webhook signature verification failed"


class InvalidCouponError(ShopError):
    """A coupon code is unknown, expired or otherwise unusable."""

    default_message = "coupon is not valid"


class InvalidTransitionError(ShopError):
    """A subscription was asked to move to a state it cannot reach."""

    default_message = "illegal subscription state transition"


# Decline codes where retrying the same card is pointless.
HARD_DECLINE_CODES = frozenset(
    {"stolen_card", "lost_card", "pickup_card", "fraudulent", "invalid_account"}
)
