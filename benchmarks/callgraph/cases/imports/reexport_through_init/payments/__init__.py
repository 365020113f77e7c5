# Public API of the payments package.
from payments.stripe_gateway import charge, refund

__all__ = ["charge", "refund"]
