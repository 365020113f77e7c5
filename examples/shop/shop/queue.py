"""In-memory job queue ordered by run time."""

from __future__ import annotations

import heapq
import itertools
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Dict, List, Tuple


@dataclass
class Job:
    kind: str
    payload: Dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: f"job_{uuid.uuid4().hex[:12]}")


class JobQueue:
    """A thread-safe priority queue of jobs keyed by when they become due.

    Production swaps this for a database-backed queue; the interface is the
    same.
    """

    def __init__(self) -> None:
        self._heap: List[Tuple[datetime, int, Job]] = []
        self._counter = itertools.count()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._heap)

    def enqueue(self, job: Job, run_at: datetime) -> None:
        """Schedule ``job`` to become due at ``run_at``."""
        with self._lock:
            heapq.heappush(self._heap, (run_at, next(self._counter), job))

    def pop_due(self, now: datetime) -> List[Job]:
        """Remove and return every job whose run time is at or before ``now``."""
        due: List[Job] = []
        with self._lock:
            while self._heap and self._heap[0][0] <= now:
                _, _, job = heapq.heappop(self._heap)
                due.append(job)
        return due

    def cancel(self, matches: Callable[[Job], bool]) -> int:
        """Drop every pending job ``matches`` accepts; returns how many were dropped."""
        with self._lock:
            kept = [entry for entry in self._heap if not matches(entry[2])]
            dropped = len(self._heap) - len(kept)
            if dropped:
                heapq.heapify(kept)
                self._heap = kept
        return dropped
