"""Test-only: run `cg index` (or the old in-place write, for the Kùzu crash reproduction) and kill
this very process at a chosen point, by wrapping a pipeline phase or a store method. Product code has
no fault hooks; everything here is monkeypatching from outside.

    python -m tests.ingest.crash_runner POINT SIGNAL cg ARGS...
    python -m tests.ingest.crash_runner POINT SIGNAL in-place REPO

POINT is one of KILL_POINTS ("none" runs to the end); SIGNAL is KILL or TERM. Before it kills itself
the runner writes the pids of its children (jedi workers) to $CG_CRASH_PIDS, so the test can check
that none of them outlives it.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from pathlib import Path
from typing import Any

# after N store writes: inside the run on both scenarios (a first index makes hundreds, an
# incremental run of one edited file about fifteen)
WRITES_BEFORE_KILL = 8
KILL_POINTS = (
    "after-plan",
    "during-parse",
    "during-jedi",
    "during-embed",
    "start-of-write",
    "mid-write",
    "before-switch",  # the state saved, the store's run not ended: the worst instant for agreement
    "after-switch",  # the run ended (generation switched / transaction committed), before cg exits
)
_WRITES = (
    "set_meta",
    "write_file",
    "write_edges",
    "delete_files",
    "delete_edges",
    "write_docs",
    "write_mentions",
    "write_commits",
    "delete_commits",
    "write_touches",
)


def _die(sig: signal.Signals) -> None:
    pids = os.environ.get("CG_CRASH_PIDS")
    if pids:
        children = _children(os.getpid())
        Path(pids).write_text("\n".join(map(str, children)))
    sys.stdout.flush()
    os.kill(os.getpid(), sig)
    signal.pause()  # SIGTERM's default action ends the process; never go on


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc)."""
    out: list[int] = []
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        try:
            kids = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        out += map(int, kids)
        frontier += map(int, kids)
    return out


def _after(module: Any, name: str, sig: signal.Signals) -> None:
    original = getattr(module, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        _die(sig)
        return result

    setattr(module, name, wrapper)


def _before(module: Any, name: str, sig: signal.Signals, calls: int = 1) -> None:
    original = getattr(module, name)
    seen = [0]

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        seen[0] += 1
        if seen[0] >= calls:
            _die(sig)
        return original(*args, **kwargs)

    setattr(module, name, wrapper)


def install(point: str, sig: signal.Signals) -> None:
    from cg.embed import Embedder
    from cg.graph.cypher_store import CypherStore
    from cg.ingest import pipeline

    if point == "after-plan":
        _after(pipeline, "plan", sig)
    elif point == "during-parse":
        _before(pipeline, "_record", sig)  # the first changed file being parsed
    elif point == "during-jedi":
        original = pipeline.run_jedi

        def run_jedi(root, python, props, workers, budget, advance):  # once workers answered a file
            return original(root, python, props, workers, budget, lambda n: (advance(n), _die(sig)))

        pipeline.run_jedi = run_jedi  # type: ignore[assignment]
    elif point == "during-embed":
        _before(Embedder, "embed", sig)
    elif point == "start-of-write":
        _before(pipeline, "write", sig)
    elif point == "mid-write":
        seen = [0]
        for name in _WRITES:
            original = getattr(CypherStore, name)

            def counted(self, *args, _original=original, **kwargs):
                seen[0] += 1
                if seen[0] > WRITES_BEFORE_KILL:
                    _die(sig)
                return _original(self, *args, **kwargs)

            setattr(CypherStore, name, counted)
    elif point == "before-switch":
        _after(pipeline, "save_state", sig)
    elif point == "after-switch":
        _after(pipeline, "write", sig)
    elif point != "none":
        raise SystemExit(f"unknown kill point {point!r}")


def in_place(repo: Path) -> None:
    """The way cg wrote before generations: straight into one database file, which the next run opens
    again for writing and writes over, whatever a killed run left in it (what issue 14 found
    segfaulting). The bare store's ``run`` would start a full run from an empty file; here it writes
    over the old one, as cg did then."""
    from contextlib import contextmanager

    from cg.config import load_settings
    from cg.embed import embedder_for
    from cg.graph.kuzu_store import KuzuStore
    from cg.ingest.pipeline import index_repository

    @contextmanager
    def run(self, full, dimension=None):
        if dimension is not None:
            self.ensure_schema(dimension)
        yield

    KuzuStore.run = run  # type: ignore[method-assign]
    settings = load_settings(repo)
    with KuzuStore(repo / ".cg" / "graph.kuzu") as store:
        index_repository(settings, store, embedder_for(settings))


def main(argv: list[str]) -> None:
    point, sig_name, mode, *rest = argv
    install(point, signal.Signals[f"SIG{sig_name}"])
    if mode == "in-place":
        in_place(Path(rest[0]))
        return
    from cg.cli import app

    app(rest, prog_name="cg")


if __name__ == "__main__":
    main(sys.argv[1:])
