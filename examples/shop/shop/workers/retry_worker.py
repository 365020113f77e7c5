"""Background loop that replays scheduled payment retries."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from typing import Callable, Optional

from ..payments.retry import RETRY_JOB_KIND
from ..payments.service import PaymentNotFoundError, PaymentService
from ..queue import Job, JobQueue

logger = logging.getLogger(__name__)

POLL_INTERVAL_SECONDS = 5.0


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


def run_retry_worker(
    queue: JobQueue,
    service: PaymentService,
    *,
    clock: Callable[[], datetime] = _utcnow,
    sleep: Callable[[float], None] = time.sleep,
    max_iterations: Optional[int] = None,
) -> int:
    """Poll ``queue`` forever (or ``max_iterations`` times) and retry due payments.

    Returns the number of retry jobs that were handled successfully.
    """

    def _handle(job: Job, now: datetime) -> bool:
        if job.kind != RETRY_JOB_KIND:
            logger.error("retry worker got unexpected job kind %s", job.kind)
            return False
        try:
            service.retry_failed_payment(job.payload["payment_id"], now=now)
        except PaymentNotFoundError:
            logger.error("job %s refers to unknown payment", job.id)
            return False
        return True

    processed = 0
    iteration = 0
    while max_iterations is None or iteration < max_iterations:
        iteration += 1
        now = clock()
        for job in queue.pop_due(now):
            try:
                processed += _handle(job, now)
            except Exception:  # keep the worker alive; the job is logged and dropped
                logger.exception("retry job %s failed", job.id)
        sleep(POLL_INTERVAL_SECONDS)
    return processed
