"""The saved state of a big project is read and written without the cyclic collector walking it."""

from __future__ import annotations

import gc

from cg.ingest.state import FileState, IndexState, load_state, save_state
from cg.model import Edge


def _big_state() -> IndexState:
    """A state shaped like a big project's: many files, each with a few hundred resolved calls."""
    files = {}
    for n in range(300):
        path = f"django/contrib/app{n}/views.py"
        edges = [
            Edge("CALLS", f"{path}::View.get_{i}", "django/utils/text.py::capfirst", "Symbol", "Symbol", i, "name")
            for i in range(300)
        ]
        files[path] = FileState(sha=f"{n:040x}", committed_at=0, language="python", edges=edges)
    return IndexState(fingerprint="f" * 16, token="t", files=files)


def test_loading_and_saving_a_big_state_sets_off_no_collection(tmp_path):
    path = tmp_path / "state-kuzu.msgpack"
    state = _big_state()
    runs: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            runs.append(info["generation"])

    gc.callbacks.append(count)
    try:
        save_state(path, state)
        loaded = load_state(path)
    finally:
        gc.callbacks.remove(count)
    assert loaded == state
    # 90,000 records each way: without the pause about 390 collections ran, some of them full ones;
    # with it, the allocations made while paused set off one young collection after each call
    assert runs.count(0) <= 2 and max(runs, default=0) == 0, runs
    assert gc.isenabled()


def test_a_caller_that_runs_without_the_collector_keeps_it_off(tmp_path):
    path = tmp_path / "state-kuzu.msgpack"
    save_state(path, _big_state())
    gc.disable()
    try:
        assert load_state(path) is not None
        assert not gc.isenabled()
    finally:
        gc.enable()
