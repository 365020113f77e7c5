"""Payment gateway abstraction and the Stripe-backed implementation."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Dict, Optional

from ..config import SUPPORTED_CURRENCIES
from ..errors import CardDeclinedError, GatewayUnavailableError, PaymentError


@dataclass(frozen=True)
class ChargeResult:
    charge_id: str
    amount_cents: int
    currency: str


class PaymentGateway:
    """Interface every payment provider integration implements."""

    name = "abstract"

    def charge(self, amount_cents: int, currency: str, source: str) -> ChargeResult:
        """Charge ``amount_cents`` to ``source``; raise PaymentError on failure."""
        raise NotImplementedError

    def refund(self, charge_id: str, amount_cents: Optional[int] = None) -> str:
        """Refund all or part of a charge and return the refund id."""
        raise NotImplementedError

    @staticmethod
    def validate_amount(amount_cents: int, currency: str) -> None:
        if amount_cents <= 0:
            raise PaymentError(f"amount must be positive, got {amount_cents}")
        if currency not in SUPPORTED_CURRENCIES:
            raise PaymentError(f"unsupported currency {currency!r}")


class FakeStripeClient:
    """In-process stand-in for the Stripe SDK used in dev and tests.

    Sources starting with ``tok_decline`` are declined, ``tok_outage`` simulates
    a provider outage; everything else succeeds.
    """

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self._ids = itertools.count(1)
        self.charges: Dict[str, dict] = {}

    def create_charge(self, amount: int, currency: str, source: str) -> dict:
        if source.startswith("tok_outage"):
            return {"error": {"type": "api_error", "message": "upstream timeout"}}
        if source.startswith("tok_decline"):
            code = source.split(":", 1)[1] if ":" in source else "generic_decline"
            return {"error": {"type": "card_error", "decline_code": code}}
        charge = {"id": f"ch_{next(self._ids):06d}", "amount": amount, "currency": currency}
        self.charges[charge["id"]] = charge
        return charge

    def create_refund(self, charge: str, amount: Optional[int] = None) -> dict:
        if charge not in self.charges:
            return {"error": {"type": "invalid_request_error", "message": "no such charge"}}
        return {"id": f"re_{next(self._ids):06d}", "charge": charge, "amount": amount}


class StripeGateway(PaymentGateway):
    """Charges cards through Stripe (or :class:`FakeStripeClient`)."""

    name = "stripe"

    def __init__(self, client: FakeStripeClient) -> None:
        self.client = client

    def charge(self, amount_cents: int, currency: str, source: str) -> ChargeResult:
        self.validate_amount(amount_cents, currency)
        response = self.client.create_charge(amount=amount_cents, currency=currency, source=source)
        error = response.get("error")
        if error is None:
            return ChargeResult(response["id"], amount_cents, currency)
        if error["type"] == "card_error":
            raise CardDeclinedError(decline_code=error.get("decline_code", "generic_decline"))
        if error["type"] == "api_error":
            raise GatewayUnavailableError(error.get("message"))
        raise PaymentError(error.get("message"))

    def refund(self, charge_id: str, amount_cents: Optional[int] = None) -> str:
        response = self.client.create_refund(charge=charge_id, amount=amount_cents)
        if "error" in response:
            raise PaymentError(response["error"]["message"], code="refund_failed")
        return response["id"]
