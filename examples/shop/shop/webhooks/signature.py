"""Stripe-style webhook signature verification.

The ``Stripe-Signature`` header looks like ``t=1700000000,v1=<hex digest>``
where the digest is HMAC-SHA256 over ``"{t}.{payload}"`` keyed with the
endpoint's signing secret.
"""

from __future__ import annotations

import hashlib as _hashlib
import hmac
import time
from typing import Dict, List, Optional, Tuple

from ..config import WEBHOOK_TOLERANCE_SECONDS
from ..errors import WebhookSignatureError

SIGNATURE_SCHEME = "v1"


def compute_signature(payload: bytes, secret: str, timestamp: int) -> str:
    signed = f"{timestamp}.".encode() + payload
    return hmac.new(secret.encode(), signed, _hashlib.sha256).hexdigest()


# Stripe may send several v1 signatures during secret rotation, so collect
# every value per key rather than keeping only the last one.
def _parse_header(header: str) -> Tuple[int, List[str]]:
    parts: Dict[str, List[str]] = {}
    for item in header.split(","):
        key, sep, value = item.strip().partition("=")
        if sep:
            parts.setdefault(key, []).append(value)
    try:
        timestamp = int(parts["t"][0])
    except (KeyError, ValueError):
        raise WebhookSignatureError("webhook signature header is malformed") from None
    return timestamp, parts.get(SIGNATURE_SCHEME, [])


def verify_signature(
    payload: bytes,
    header: Optional[str],
    secret: str,
    tolerance: int = WEBHOOK_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> int:
    """Check ``header`` against ``payload`` and return the signed timestamp.

    Raises WebhookSignatureError if the header is missing, no signature
    matches, or the timestamp is outside ``tolerance`` seconds (replay guard).
    """
    if not header:
        raise WebhookSignatureError("missing webhook signature header")
    timestamp, signatures = _parse_header(header)
    expected = compute_signature(payload, secret, timestamp)
    if not any(hmac.compare_digest(expected, candidate) for candidate in signatures):
        raise WebhookSignatureError("webhook signature verification failed")
    current = time.time() if now is None else now
    if tolerance and abs(current - timestamp) > tolerance:
        raise WebhookSignatureError("webhook timestamp outside the tolerance zone")
    return timestamp
