"""Retry scheduling for failed payments.

Failed charges are not retried inline. Instead a retry job is placed on the
job queue with a run time computed from an exponential backoff policy, and
the retry worker replays it once it is due.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Optional

from ..config import BACKOFF_BASE_SECONDS, BACKOFF_JITTER, BACKOFF_MULTIPLIER, MAX_RETRIES
from ..errors import CardDeclinedError, GatewayUnavailableError, PaymentError, RetryExhaustedError
from ..queue import Job, JobQueue
from .models import Payment, PaymentStatus

RETRY_JOB_KIND = "payment.retry"

# Longest we will ever wait between two attempts, regardless of policy.
MAX_DELAY_SECONDS = 3 * 24 * 60 * 60

# Gateway error codes that are worth retrying later.
RETRYABLE_CODES = frozenset({"processing_error", "rate_limited", "card_declined"})


# Kept free of randomness so the backoff curve itself is easy to reason about;
# jitter is layered on top by RetryPolicy.delay_for.
def compute_backoff(attempt: int, base: float, multiplier: float) -> float:
    if attempt < 1:
        raise ValueError("attempt numbers start at 1")
    return min(base * multiplier ** (attempt - 1), MAX_DELAY_SECONDS)


@dataclass
class RetryPolicy:
    """Exponential backoff with proportional jitter.

    ``delay_for(n)`` returns ``base_delay * multiplier ** (n - 1)`` seconds,
    capped at :data:`MAX_DELAY_SECONDS`, then perturbed by up to ``jitter``
    (a fraction, e.g. ``0.1`` for +/-10%) so that retries for many customers
    do not hit the gateway at the same instant.
    """

    max_attempts: int = MAX_RETRIES
    base_delay: float = BACKOFF_BASE_SECONDS
    multiplier: float = BACKOFF_MULTIPLIER
    jitter: float = BACKOFF_JITTER
    rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def delay_for(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        delay = compute_backoff(attempt, self.base_delay, self.multiplier)
        if self.jitter:
            spread = delay * self.jitter
            delay += self.rng.uniform(-spread, spread)
        return max(delay, 0.0)

    def allows(self, attempt: int) -> bool:
        return attempt <= self.max_attempts

    @classmethod
    def from_settings(cls, settings) -> "RetryPolicy":
        """Build a policy from :class:`shop.config.Settings`."""
        return cls(
            max_attempts=settings.payment_max_retries,
            base_delay=settings.payment_backoff_base_seconds,
        )


def is_retryable(error: BaseException) -> bool:
    """Return True if a charge that failed with ``error`` may succeed later."""
    if isinstance(error, RetryExhaustedError):
        return False
    if isinstance(error, CardDeclinedError):
        return not error.is_hard_decline
    if isinstance(error, GatewayUnavailableError):
        return True
    if isinstance(error, PaymentError):
        return error.code in RETRYABLE_CODES
    return False


def schedule_payment_retry(
    payment: Payment,
    policy: RetryPolicy,
    queue: JobQueue,
    now: Optional[datetime] = None,
) -> Job:
    """Enqueue the next retry of ``payment`` according to ``policy``.

    The retry number is derived from how many attempts the payment already
    has. The job's run time is ``now + policy.delay_for(retry_number)``.

    Raises:
        RetryExhaustedError: if the payment has already used
            ``policy.max_attempts`` attempts. The payment is left FAILED.
    """
    now = now or datetime.now(timezone.utc)
    attempts = payment.attempt_count
    if not policy.allows(attempts + 1):
        payment.status = PaymentStatus.FAILED
        payment.next_retry_at = None
        raise RetryExhaustedError(payment.id, attempts)

    delay = policy.delay_for(max(attempts, 1))
    run_at = now + timedelta(seconds=delay)
    job = Job(
        kind=RETRY_JOB_KIND,
        payload={"payment_id": payment.id, "attempt": attempts + 1},
    )
    queue.enqueue(job, run_at)
    payment.status = PaymentStatus.RETRY_SCHEDULED
    payment.next_retry_at = run_at
    return job
