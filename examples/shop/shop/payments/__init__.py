"""Payment processing: gateways, retries and the payment service."""

from .models import Payment, PaymentStatus
from .retry import RetryPolicy, schedule_payment_retry

__all__ = ["Payment", "PaymentStatus", "RetryPolicy", "schedule_payment_retry"]
