"""Payment records and their lifecycle status."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import List, Optional


class PaymentStatus(str, enum.Enum):
    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    RETRY_SCHEDULED = "retry_scheduled"
    REFUNDED = "refunded"


@dataclass
class PaymentAttempt:
    attempted_at: datetime
    succeeded: bool
    error_code: Optional[str] = None


@dataclass
class Payment:
    """A single customer payment for one invoice, possibly retried."""

    invoice_id: str
    customer_id: str
    amount_cents: int
    currency: str
    source: str
    id: str = field(default_factory=lambda: f"pay_{uuid.uuid4().hex[:16]}")
    status: PaymentStatus = PaymentStatus.PENDING
    attempts: List[PaymentAttempt] = field(default_factory=list)
    charge_id: Optional[str] = None
    next_retry_at: Optional[datetime] = None

    @property
    def attempt_count(self) -> int:
        return len(self.attempts)

    def record_attempt(self, succeeded: bool, error_code: Optional[str] = None) -> PaymentAttempt:
        """Append an attempt and update :attr:`status` accordingly."""
        attempt = PaymentAttempt(
            attempted_at=datetime.now(timezone.utc),
            succeeded=succeeded,
            error_code=error_code,
        )
        self.attempts.append(attempt)
        self.status = PaymentStatus.SUCCEEDED if succeeded else PaymentStatus.FAILED
        return attempt
