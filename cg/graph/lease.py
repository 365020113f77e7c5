"""A writer's lease on one repository of a shared Neo4j database.

Two ``cg index`` runs of the same repository at once would interleave their deletes and creates (and
did: CALLS 545 instead of 400, kept by every later run). A run therefore holds a lease: an
``IndexLock`` node per repository key (unique by a constraint) naming its holder (host, pid and a
random token) and an expiry on the server's clock, so writers on machines whose clocks disagree still
agree on it. It is taken in one transaction that first write-locks the node (``SET l._lock``, Neo4j's
documented guard against lost updates), then takes it only if it is free, expired or already ours; a
heartbeat thread renews it while the run lasts and the run releases it at the end. A writer that
crashed stops renewing, so its lease runs out and the next run takes it over; one that crashed on the
same machine (same boot, same pid namespace, its pid gone) is taken over at once. On the same machine
the pid decides both ways: a holder whose process still runs keeps its lease even when a renewal came
late (a heartbeat starved on a loaded machine, or a server paused for garbage collection, must not let a
second writer in beside a live one: that writer would then find at its commit that the lease had
passed, or worse, both would write). Expiry alone frees a lease only for a holder elsewhere, whose pid
cannot be checked. Writers of different repositories hold different nodes and never wait for each other.

A second writer of the same repository fails at once in one line naming the holder and when its lease
runs out, or with ``--wait`` polls until it is free or the wait is over. A holder whose heartbeat was
lost (the lease expired under it and someone else took it) stops writing at its next statement.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cg.graph.store import ServerLost, StoreError, WriterBusy

LOCK_CONSTRAINT = "CREATE CONSTRAINT indexlock_repo_unique IF NOT EXISTS FOR (l:IndexLock) REQUIRE l.repo IS UNIQUE"
TAKE = (
    "MERGE (l:IndexLock {repo: $repo}) SET l._lock = true"
    " WITH l, timestamp() AS now"
    " WITH l, now, (l.token IS NULL OR l.token = $token"
    " OR (l.expires < now AND ($space = '' OR coalesce(l.space, '') <> $space))) AS free"
    " SET l.token = CASE WHEN free THEN $token ELSE l.token END,"
    " l.host = CASE WHEN free THEN $host ELSE l.host END,"
    " l.pid = CASE WHEN free THEN $pid ELSE l.pid END,"
    " l.space = CASE WHEN free THEN $space ELSE l.space END,"
    " l.expires = CASE WHEN free THEN now + $ms ELSE l.expires END"
    " REMOVE l._lock"
    " RETURN free, l.host, l.pid, l.expires - now, l.space, l.token"
)
# A holder that died on this very machine: taken over at once, but only from that holder (its token).
# Write-locked before the token is compared, as TAKE is: two writers that both saw the dead holder
# must not both take it over (without the lock both matched the stale token and both returned true; the
# later SET won, and the earlier writer ran on, found at its commit that the lease was another's).
TAKE_OVER = (
    "MATCH (l:IndexLock {repo: $repo}) SET l._lock = true"
    " WITH l, l.token = $stale AS stale"
    " SET l.token = CASE WHEN stale THEN $token ELSE l.token END,"
    " l.host = CASE WHEN stale THEN $host ELSE l.host END,"
    " l.pid = CASE WHEN stale THEN $pid ELSE l.pid END,"
    " l.space = CASE WHEN stale THEN $space ELSE l.space END,"
    " l.expires = CASE WHEN stale THEN timestamp() + $ms ELSE l.expires END"
    " REMOVE l._lock"
    " RETURN stale"
)
RENEW = (
    "MATCH (l:IndexLock {repo: $repo}) WHERE l.token = $token"
    " SET l.expires = timestamp() + $ms RETURN l.expires - timestamp()"
)
RELEASE = "MATCH (l:IndexLock {repo: $repo}) WHERE l.token = $token DELETE l"

Run = Callable[[str, dict[str, Any]], list[list[Any]]]  # one statement in its own write transaction


def already_exists(exc: Exception) -> bool:
    """A schema statement that lost a race: ``IF NOT EXISTS`` checks, then another writer creates it."""
    return str(getattr(exc, "code", "")).endswith(("EquivalentSchemaRuleAlreadyExists", "AlreadyExists"))


class LeaseHeld(WriterBusy):
    """Another writer holds the repository's lease: one line naming it, exit 75."""


@dataclass(frozen=True)
class Holder:
    host: str
    pid: int
    remaining: float  # seconds until its lease runs out unless renewed
    space: str = ""  # the process space it runs in (``process_space``)
    token: str = ""


def process_space() -> str:
    """Which pids this process can see: the kernel's boot id and its pid namespace. Two writers with the
    same value see the same processes, so one can tell that the other's pid is gone; "" where this
    cannot be known (then a dead holder's lease simply runs out)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        return f"{boot}/{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return ""


def _dead(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, someone else's
    return False


class Lease:
    """The lease of ``repo``: ``with Lease(...)`` takes it (or raises LeaseHeld), renews it from a
    heartbeat thread every third of ``seconds`` and releases it on the way out."""

    def __init__(self, run: Run, repo: str, seconds: float, wait: float = 0.0, poll: float = 1.0) -> None:
        self._run = run
        self.repo = repo
        self.seconds = seconds
        self.wait = wait
        self.poll = poll
        self.token = secrets.token_hex(16)
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.space = process_space()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lost: str | None = None

    @property
    def _ms(self) -> int:
        return int(self.seconds * 1000)

    def try_take(self) -> Holder | None:
        """Take the lease if it is free, expired, ours, or held by a process of this machine that is
        gone (a killed `cg index` need not hold its repository for a whole lease); else who holds it."""
        params = {
            "repo": self.repo,
            "token": self.token,
            "host": self.host,
            "pid": self.pid,
            "space": self.space,
            "ms": self._ms,
        }
        free, host, pid, remaining_ms, space, token = self._run(TAKE, params)[0]
        if free:
            return None
        holder = Holder(str(host), int(pid), max(0.0, remaining_ms / 1000), str(space or ""), str(token))
        if self.space and holder.space == self.space and _dead(holder.pid):
            taken = self._run(TAKE_OVER, {**params, "stale": holder.token})
            if taken and taken[0][0]:
                return None
        return holder

    def __enter__(self) -> Lease:
        try:
            self._run(LOCK_CONSTRAINT, {})
        except Exception as exc:  # another repository's first writer made it at the same moment
            if not already_exists(exc):
                raise
        deadline = time.monotonic() + self.wait
        while (holder := self.try_take()) is not None:
            if time.monotonic() >= deadline:
                waited = f" after waiting {self.wait:g} s" if self.wait else ""
                if holder.remaining > 0 or holder.space != self.space:
                    when = f"its lease runs out in {holder.remaining:.0f} s unless renewed"
                else:  # expired, but its process is alive on this machine: a stuck run, not a dead one
                    when = f"its lease was not renewed, but pid {holder.pid} still runs (stop it if it is stuck)"
                raise LeaseHeld(
                    f"repository {self.repo!r} is being indexed by pid {holder.pid} on {holder.host}{waited};"
                    f" {when}" + ("" if self.wait else " (or wait for it with --wait SECONDS)")
                )
            time.sleep(min(self.poll, max(0.0, deadline - time.monotonic())))
        self._thread = threading.Thread(target=self._heartbeat, name=f"cg-lease-{self.repo}", daemon=True)
        self._thread.start()
        return self

    def _heartbeat(self) -> None:
        """Renew every third of the lease; a renewal that finds another token means the lease is lost."""
        renewed = time.monotonic()
        while not self._stop.wait(self.seconds / 3):
            try:
                if not self._run(RENEW, {"repo": self.repo, "token": self.token, "ms": self._ms}):
                    self._lost = "its lease ran out and another writer took the repository"
                    return
                renewed = time.monotonic()
            except Exception as exc:  # the server is away (the writes fail too): retry while the lease lasts
                if time.monotonic() - renewed > self.seconds:
                    self._lost = f"the lease could not be renewed for {self.seconds:g} s ({type(exc).__name__})"
                    return

    def check(self) -> None:
        """Raise when this run no longer holds the lease (its writes must stop)."""
        if self._lost:
            raise StoreError(f"stopped writing repository {self.repo!r}: {self._lost}; run `cg index` again")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if isinstance(exc, ServerLost):
            return  # no server to release it on: it runs out by itself (at once for a writer on this machine)
        try:
            self._run(RELEASE, {"repo": self.repo, "token": self.token})
        except Exception:  # the server is gone: the run's outcome stands, and the lease runs out by itself
            pass
