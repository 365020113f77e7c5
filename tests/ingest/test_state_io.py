"""The saved state of a big project is read and written without the cyclic collector walking it."""

from __future__ import annotations

import gc
from pathlib import Path

import msgspec
import pytest

from cg.ingest.state import Edges, FileState, IndexState, load_state, save_state, shard_dir, thaw
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
        files[path] = FileState(sha=f"{n:040x}", committed_at=0, language="python", edges=Edges(edges))
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
    import cg.ingest.pipeline as pipeline
    from cg.ingest.pipeline import index_repository
    from cg.ingest.state import _ENCODER, _loaded_file
    from cg.ingest.state import FileState as Record
    from tests.ingest.edits import EDITS, apply

    saved: list[tuple[Path, bytes, int]] = []
    real_save = pipeline.save_state

    def keeping(path, state):
        records = state._loaded.records if hasattr(state, "_loaded") else {}
        reused = sum(1 for p, r in state.files.items() if records.get(p, (None,))[0] is r)
        saved.append((path, {p: _ENCODER.encode(r) for p, r in state.files.items()}, reused))
        real_save(path, state)

    monkeypatch.setattr(pipeline, "save_state", keeping)
    repo, settings, embedder, store = _indexed_shop(tmp_path)
    try:
        for n in range(len(EDITS)):
            done = apply(repo, n, 11 + n)
            assert index_repository(settings, store, embedder).mode == "incremental", done
            path, whole, reused = saved[-1]
            on_disk = load_state(path)
            assert on_disk is not None, done
            assert on_disk.files == {p: _loaded_file(msgspec.Raw(b)) for p, b in whole.items()}, done
            assert 0 < reused < len(on_disk.files), done  # some records kept, as bytes; some written anew
            assert all(isinstance(r, Record) for r in on_disk.files.values())
    finally:
        store.close()
        thaw()


def test_the_stored_form_has_every_field_of_the_state():
    """A field added to ``IndexState`` and not to its stored form would be dropped on every load."""
    from dataclasses import fields

    from cg.ingest.state import _Stored

    stored = [f.name for f in fields(_Stored)]
    assert stored == [f.name if f.name != "files" else "shards" for f in fields(IndexState)]


def test_the_stored_form_of_a_file_has_every_field_of_its_record():
    """Likewise for a file's record, which is read through ``_StoredFile`` (its edges left encoded)."""
    from dataclasses import fields

    from cg.ingest.state import _StoredFile

    assert [f.name for f in fields(_StoredFile)] == [f.name for f in fields(FileState)]


def _shards(path: Path) -> dict[str, float]:
    return {f.name: f.stat().st_mtime_ns for f in shard_dir(path).iterdir()}


def test_a_save_after_one_record_changed_writes_only_its_shard(tmp_path):
    """A one-file edit rewrites the manifest and the one shard that holds the file; every other shard
    stays the very file it was, and the state reads back whole."""
    path = tmp_path / "state-kuzu.msgpack"
    save_state(path, _big_state())
    before = _shards(path)
    assert len(before) > 100  # 300 files spread over the shards
    state = load_state(path)
    assert state is not None
    edited = "django/contrib/app7/views.py"
    state.files[edited] = FileState(sha="e" * 40, committed_at=1, language="python")
    save_state(path, state)
    after = _shards(path)
    assert len(set(after) - set(before)) == 1  # the edited file's shard, under its new content's name
    assert len(set(before) - set(after)) == 1  # its old version, removed once the manifest moved on
    assert all(after[name] == before[name] for name in set(before) & set(after))
    again = load_state(path)
    thaw()
    assert again == state and again.files[edited].sha == "e" * 40


def test_a_removed_file_leaves_its_shard(tmp_path):
    path = tmp_path / "state-kuzu.msgpack"
    save_state(path, _big_state())
    state = load_state(path)
    assert state is not None
    del state.files["django/contrib/app3/views.py"]
    save_state(path, state)
    again = load_state(path)
    thaw()
    assert again is not None and "django/contrib/app3/views.py" not in again.files
    assert len(again.files) == 299


def test_a_state_whose_shards_are_not_all_there_is_not_loaded(tmp_path):
    """A shard missing, swapped for a symbolic link, or a manifest naming a path outside the shard
    folder: the state is ignored (the run is a full one), and nothing outside is read."""
    path = tmp_path / "state-kuzu.msgpack"
    save_state(path, _big_state())
    first = sorted(shard_dir(path).iterdir())[0]
    moved = tmp_path / "elsewhere.msgpack"
    first.rename(moved)
    assert load_state(path) is None
    first.symlink_to(moved)
    assert load_state(path) is None
    first.unlink()
    moved.rename(first)
    assert load_state(path) is not None
    thaw()
    stored = msgspec.msgpack.decode(path.read_bytes())
    stored["shards"][0] = "../elsewhere.msgpack"
    path.write_bytes(msgspec.msgpack.encode(stored))
    assert load_state(path) is None


def test_a_shard_folder_a_repository_shipped_as_a_link_is_replaced_not_followed(tmp_path):
    """``.cg`` arrives with the repository: a ``state-kuzu`` link to another folder must not make the
    save's sweep of stale shards delete that folder's files."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("a user's file")
    index = tmp_path / "repo" / ".cg"
    index.mkdir(parents=True)
    (index / "state-kuzu").symlink_to(outside)
    save_state(index / "state-kuzu.msgpack", _big_state())
    assert (outside / "keep.txt").read_text() == "a user's file"
    assert not (index / "state-kuzu").is_symlink()
    assert load_state(index / "state-kuzu.msgpack") == _big_state()
    thaw()


def test_a_loaded_files_edges_are_counted_without_being_decoded_and_read_back_whole(tmp_path):
    """A run's totals need every file's edges counted by kind, and a one-file edit reads the edges of
    a few files: the rest stay encoded (Django: 218,000 edges, 0.67 s to decode)."""
    path = tmp_path / "state-kuzu.msgpack"
    state = _big_state()
    save_state(path, state)
    loaded = load_state(path)
    thaw()
    assert loaded is not None
    record = loaded.files["django/contrib/app7/views.py"]
    assert record.edges.counts() == [("CALLS", "Symbol", "name", 300)] and len(record.edges) == 300
    assert all(fs.edges._items is None for fs in loaded.files.values())  # nothing decoded so far
    assert list(record.edges) == list(state.files["django/contrib/app7/views.py"].edges)
    assert record.edges[299].src == "django/contrib/app7/views.py::View.get_299"


def test_a_state_whose_edges_were_tampered_with_stops_the_run_with_one_line(tmp_path):
    """The state sits in the repository: edges that do not decode are found when read, and say how
    to start afresh rather than passing for a file with no edges."""
    from cg.errors import CgError

    path = tmp_path / "state-kuzu.msgpack"
    one = {"app.py": FileState(sha="a" * 40, committed_at=0, language="python")}
    save_state(path, IndexState(fingerprint="f" * 16, files=one))
    (shard,) = shard_dir(path).iterdir()
    broken = {"app.py": {"sha": "a" * 40, "committed_at": 0, "language": "python", "edges": [[], [["CALLS", 7]]]}}
    shard.write_bytes(msgspec.msgpack.encode(broken))
    loaded = load_state(path)
    thaw()
    assert loaded is not None
    with pytest.raises(CgError, match="damaged.*cg index --full"):
        list(loaded.files["app.py"].edges)
