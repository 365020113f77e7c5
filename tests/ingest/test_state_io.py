"""The saved state of a big project is read and written without the cyclic collector walking it."""

from __future__ import annotations

import gc
from pathlib import Path

from cg.ingest.state import FileState, IndexState, load_state, save_state, thaw
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
        thaw()
    assert loaded == state
    # 90,000 records each way: without the pause about 390 collections ran, some of them full ones;
    # with it, the allocations made while paused set off one small collection after each call
    assert len(runs) <= 2 and 2 not in runs, runs
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
        thaw()


def _indexed_shop(tmp_path: Path):
    """examples/shop copied and indexed once (name resolver): (repo, settings, embedder, open store)."""
    from cg.config import load_settings
    from cg.embed import embedder_for
    from cg.graph.kuzu_store import KuzuStore
    from cg.ingest.pipeline import index_repository
    from tests.conftest import copy_shop

    repo = copy_shop(tmp_path / "shop")
    settings = load_settings(repo, resolver="name")
    embedder = embedder_for(settings)
    store = KuzuStore(repo / ".cg" / "graph.kuzu")
    index_repository(settings, store, embedder)
    return repo, settings, embedder, store


def test_an_index_run_gives_the_state_it_froze_back_to_the_collector(tmp_path, monkeypatch):
    """The loaded records are frozen for the run (the collector would walk them again and again) and
    thawed when it ends, so a long-lived ``cg watch`` collects between runs."""
    import cg.ingest.pipeline as pipeline
    from cg.ingest.pipeline import index_repository

    repo, settings, embedder, store = _indexed_shop(tmp_path)
    try:
        retry = repo / "shop" / "payments" / "retry.py"
        retry.write_text(retry.read_text() + "\n\ndef retry_budget():\n    return 3\n")
        frozen: list[int] = []
        real_resolve = pipeline.resolve

        def watching(*args, **kwargs):
            frozen.append(gc.get_freeze_count())
            return real_resolve(*args, **kwargs)

        monkeypatch.setattr(pipeline, "resolve", watching)
        assert index_repository(settings, store, embedder).mode == "incremental"
        assert frozen and frozen[0] > 10_000  # the saved state's records, out of the collector's way
        assert gc.get_freeze_count() == 0
    finally:
        store.close()
    assert load_state(repo / ".cg" / "state-kuzu.msgpack") is not None
    assert gc.get_freeze_count() > 0  # loaded on its own: frozen until thawed
    thaw()
    assert gc.get_freeze_count() == 0


def test_records_a_run_kept_are_written_back_as_loaded_and_the_rest_as_they_are_now(tmp_path, monkeypatch):
    """The state after each kind of edit, read back from disk, equals the run's state in memory
    encoded whole: the bytes reused for the records a run kept are never stale."""
    import msgspec

    import cg.ingest.pipeline as pipeline
    from cg.ingest.pipeline import index_repository
    from cg.ingest.state import FileState as Record
    from tests.ingest.edits import EDITS, apply

    saved: list[tuple[Path, bytes, int]] = []
    real_save = pipeline.save_state

    def keeping(path, state):
        reused = sum(1 for p, r in state.files.items() if getattr(state, "_loaded", {}).get(p, (None,))[0] is r)
        saved.append((path, msgspec.msgpack.encode(state), reused))
        real_save(path, state)

    monkeypatch.setattr(pipeline, "save_state", keeping)
    repo, settings, embedder, store = _indexed_shop(tmp_path)
    try:
        for n in range(len(EDITS)):
            done = apply(repo, n, 11 + n)
            assert index_repository(settings, store, embedder).mode == "incremental", done
            path, whole, reused = saved[-1]
            on_disk = msgspec.msgpack.decode(path.read_bytes(), type=IndexState)
            assert on_disk == msgspec.msgpack.decode(whole, type=IndexState), done
            assert 0 < reused < len(on_disk.files), done  # some records kept, as bytes; some written anew
            assert all(isinstance(r, Record) for r in on_disk.files.values())
    finally:
        store.close()
        thaw()


def test_the_stored_form_has_every_field_of_the_state():
    """A field added to ``IndexState`` and not to its stored form would be dropped on every load."""
    from dataclasses import fields

    from cg.ingest.state import _Stored

    assert [f.name for f in fields(_Stored)] == [f.name for f in fields(IndexState)]
