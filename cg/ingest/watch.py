"""``cg watch``: keep the index fresh while the code changes, by running the incremental index after
the changes settle.

Events are only a trigger. A pass is the ordinary incremental run (cg/ingest/pipeline.py): it walks
the tree and compares every file's blob sha with the saved state, so what it writes never depends on
which events arrived, in which order, or whether one was lost. A file that vanishes, is renamed or is
rewritten while a pass runs is read (or found missing) by that walk like any other; whatever the pass
missed raised an event of its own, and the next pass picks it up.

One pass at a time, in the watching thread. The file-system watcher (watchfiles: the Rust ``notify``
crate on inotify, FSEvents or ReadDirectoryChangesW; a well-kept library where a hand-written poll
would rescan the tree every second) keeps collecting events while a pass runs; they come back as one
batch when it ends, so however many changes arrive during a pass, exactly one follow-up pass runs.

Debounce: a pass starts once no relevant event arrived for ``debounce_ms`` (an editor's save is
several events; a ``git checkout`` is hundreds), or ``MAX_WAIT_FACTOR`` times that after the first
event of a burst that never settles (a build writing files without pause).

Which events count: the walk's rules (``IgnoreRules``: skipped folders such as ``.cg``, ``.venv`` or
``node_modules``, .gitignore and .cgignore), so the index's own writes never trigger a pass. A change
to an ignore file counts (it changes what is indexed) and makes the rules be read again. Inside
``.git`` only the refs count (``HEAD``, ``refs/heads``, ``packed-refs``): a commit or a checkout
changes what the index records of the history, the rest of ``.git`` (objects, the index file
``git status`` refreshes) does not.

Stopping: ``stop`` (a ``threading.Event``) is looked at every ``STEP_MS`` while waiting, so a
watcher in a background thread (inside ``cg mcp``) stops within a fraction of a second when idle, or
when the running pass ends. The command line runs the loop in the main thread, where Ctrl-C and
SIGTERM interrupt a running pass too (its generation is discarded: the index stays the last
complete one).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cg.errors import CgError
from cg.ingest.walk import IgnoreRules

STEP_MS = 50  # how often the watcher looks at the stop event and for new events
MAX_WAIT_FACTOR = 10  # a burst that never settles still gets a pass after this many debounce periods
RETRY_SECONDS = (2.0, 5.0, 15.0, 60.0)  # after a failed pass (another writer held the index, ...)
_GIT_REFS = ("HEAD", "packed-refs")


@dataclass
class Pass:
    """One index pass: the paths whose events started it, what the run did, and how long it took."""

    paths: list[str]  # repo-relative, sorted
    seconds: float
    summary: Any = None  # the run's IndexSummary; None when it failed
    error: str = ""  # one line, when the pass failed (the watcher goes on and tries again)
    started: float = field(default_factory=time.time)

    @property
    def ok(self) -> bool:
        return not self.error

    def as_dict(self) -> dict[str, Any]:
        s = self.summary
        return {
            "paths": self.paths,
            "seconds": round(self.seconds, 3),
            "error": self.error or None,
            "mode": s.mode if s is not None else None,
            "changed": s.changed if s is not None else 0,
            "added": s.added if s is not None else 0,
            "removed": s.removed_files if s is not None else 0,
            "affected": s.affected if s is not None else 0,
            "stages": {k: round(v, 3) for k, v in s.seconds.items()} if s is not None else {},
        }

    def line(self) -> str:
        """One line for stderr: what changed, what the pass did, how long it took."""
        shown = ", ".join(self.paths[:3]) + (f" and {len(self.paths) - 3} more" if len(self.paths) > 3 else "")
        where = f" ({shown})" if shown else ""
        if self.error:
            return f"pass failed after {self.seconds:.1f}s{where}: {self.error}"
        s = self.summary
        if s.mode == "full":
            did = f"built the index: {s.files} files, {s.symbols} definitions"
        elif s.changed or s.added or s.removed_files:
            did = (
                f"{s.changed} changed, {s.added} added, {s.removed_files} removed files;"
                f" {s.affected} unchanged re-resolved"
            )
        else:
            did = "nothing to update"
        return f"{did}{where} in {self.seconds:.1f}s"


class WatchFilter:
    """Which event paths can change the index: see the module docstring."""

    def __init__(self, repo: Path, index_dir: Path) -> None:
        self.repo = repo.resolve()
        self.index_dir = index_dir.resolve()
        self.rules = IgnoreRules(self.repo)

    def relevant(self, path: str) -> str | None:
        """The repo-relative path when an event on ``path`` may change the index, else None."""
        p = Path(path)
        try:
            rel = p.relative_to(self.repo)
        except ValueError:
            return None
        if p == self.index_dir or self.index_dir in p.parents:
            return None
        parts = rel.parts
        if not parts:
            return None
        if parts[0] == ".git":
            inner = parts[1:]
            refs = (len(inner) == 1 and inner[0] in _GIT_REFS) or inner[:2] == ("refs", "heads")
            return rel.as_posix() if refs and not rel.name.endswith(".lock") else None
        if rel.name in (".gitignore", ".cgignore"):
            self.rules.forget()
            return rel.as_posix()
        return None if self.rules.ignores(p) else rel.as_posix()


class WatchError(CgError):
    """The file-system watcher could not start or broke (the OS's limit on watches reached, say)."""


IndexOnce = Callable[[], Any]  # runs one incremental index pass, returns its IndexSummary


def watch_loop(
    repo: Path,
    index_dir: Path,
    index_once: IndexOnce,
    stop: threading.Event,
    on_pass: Callable[[Pass], None] | None = None,
    debounce_ms: int = 300,
    initial_pass: bool = True,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Watch ``repo`` and run ``index_once`` after changes settle, until ``stop`` is set.

    With ``initial_pass`` a pass runs first, once the watcher is started (so nothing saved during it
    is missed): it builds the index when there is none and catches up with what changed while no one
    watched. ``on_ready`` is called once that pass is done and the loop waits for events;
    ``on_pass`` after every pass. A pass that raises is reported (``Pass.error``) and tried again
    after a growing delay; ``KeyboardInterrupt`` ends the loop (the caller's Ctrl-C)."""
    import watchfiles

    watch_filter = WatchFilter(repo, index_dir)
    quiet = max(debounce_ms, 0) / 1000
    events = watchfiles.watch(
        repo,
        watch_filter=lambda _change, path: watch_filter.relevant(path) is not None,
        debounce=STEP_MS,
        step=STEP_MS,
        rust_timeout=4 * STEP_MS,
        yield_on_timeout=True,  # an empty batch every few steps: the loop below keeps the time
        stop_event=stop,
        raise_interrupt=True,
        ignore_permission_denied=True,
    )
    pending: set[str] = set()
    first = last = 0.0  # when the burst's first and last relevant events arrived
    retry_at = 0.0  # after a failed pass: not before this
    failures = 0

    def run(paths: set[str]) -> bool:
        nonlocal failures, retry_at
        started = time.perf_counter()
        try:
            done = Pass(sorted(paths), 0.0, index_once())
        except CgError as exc:
            done = Pass(sorted(paths), 0.0, error=str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug of ours must not end the watch: it is reported
            done = Pass(sorted(paths), 0.0, error=f"{type(exc).__name__}: {exc}")
        done.seconds = time.perf_counter() - started
        failures = 0 if done.ok else failures + 1
        if failures:
            retry_at = time.monotonic() + RETRY_SECONDS[min(failures, len(RETRY_SECONDS)) - 1]
        if on_pass is not None:
            on_pass(done)
        return done.ok

    try:
        while True:
            try:
                batch = next(events)  # the first batch comes once the watcher is running
            except StopIteration:
                return
            except (OSError, RuntimeError) as exc:  # watchfiles' own errors are RuntimeErrors
                raise WatchError(f"cannot watch {repo}: {exc}") from exc
            if initial_pass:
                initial_pass = False
                if not run(set()):
                    pending.add("")  # "" stands for "the initial pass": retried like any failed one
                    first = last = time.monotonic()
                if on_ready is not None:
                    on_ready()
            now = time.monotonic()
            found = {rel for _, path in batch if (rel := watch_filter.relevant(path)) is not None}
            if found:
                first = first if pending else now
                last = now
                pending |= found
            if pending and now >= max(min(last + quiet, first + quiet * MAX_WAIT_FACTOR), retry_at):
                todo, pending = pending, set()
                if not run({p for p in todo if p}):
                    pending = todo
            if stop.is_set():
                return
    finally:
        events.close()
