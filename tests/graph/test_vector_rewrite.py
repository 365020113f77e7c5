"""Vectors set after the graph (``cg index --embed later``, then a run that fills them) are written on
the embedded store by rewriting the generation with them when there are many (KuzuIndexStore.
_write_vectors): the same graph and vectors as setting them one by one, a full-text index that follows
later edits, a rewrite that fails falls back to setting them, and a Ctrl-C inside it leaves the last
complete index."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cg.config import load_settings
from cg.embed import embedder_for
from cg.graph import kuzu_store
from cg.graph.backends import open_store
from cg.graph.cypher_store import CypherStore
from cg.ingest.pipeline import index_repository
from cg.lexical import analyze_query
from cg.queries.query import unembedded
from tests.conftest import copy_shop
from tests.graphdump import differences, dump, vector_differences, vectors

RETRY = Path("shop/payments/retry.py")


def _later_then_now(repo: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, rewrite_at: int, batch: int = 20_000):
    """Index ``repo`` without vectors, then fill them with ``VECTOR_REWRITE_AT`` = ``rewrite_at`` and
    ``batch`` rows a statement; return the graph, the vectors and how many vectors went in by SET."""
    settings = load_settings(repo, cache_dir=cache, resolver="name", history_commits=0)
    embedder = embedder_for(settings)
    with open_store(settings, read_only=False, must_exist=False) as store:
        index_repository(settings, store, embedder, embed_mode="later")
    set_one_by_one = []
    real = CypherStore.set_vectors

    def counted(self, label, prop, ids, matrix):
        set_one_by_one.append(len(ids))
        real(self, label, prop, ids, matrix)

    with monkeypatch.context() as patch:
        patch.setattr(kuzu_store, "VECTOR_REWRITE_AT", rewrite_at)
        patch.setattr(kuzu_store.KuzuStore, "bulk_rows", batch)
        patch.setattr(CypherStore, "set_vectors", counted)
        with open_store(settings, read_only=False) as store:
            filled = index_repository(settings, store, embedder, embed_mode="now")
    assert filled.embedded + filled.embed_cached > 0 and filled.unembedded_files == 0
    with open_store(settings, read_only=True) as store:
        assert unembedded(store) == 0
        return dump(store), vectors(store), sum(set_one_by_one)


def _generations(repo: Path) -> list[Path]:
    return [p for p in (repo / ".cg" / "kuzu").iterdir() if p.is_dir()]


def test_rewritten_vectors_are_the_ones_set_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cache = tmp_path / "a" / "cache"  # a cache each: a warm one would give the vectors in the first run
    rewritten, by_set = copy_shop(tmp_path / "a" / "shop"), copy_shop(tmp_path / "b" / "shop")
    graph, stored, set_count = _later_then_now(rewritten, cache, monkeypatch, rewrite_at=10, batch=37)
    want_graph, want_vectors, want_set = _later_then_now(by_set, tmp_path / "b" / "cache", monkeypatch, 10**9)
    assert set_count == 0 and want_set > 100, (set_count, want_set)  # the shop has ~380 vectors
    assert sum(len(v) for v in stored.values()) == want_set
    assert not (diff := differences(graph, want_graph)), "\n".join(diff)
    assert not (problems := vector_differences(stored, want_vectors)), problems[:5]
    assert len(_generations(rewritten)) == 1 and not any((g / "export").exists() for g in _generations(rewritten))

    # the full-text index of the rewritten generation follows a later edit
    retry = rewritten / RETRY
    retry.write_text(retry.read_text() + "\n\ndef ledger_reconciliation_window(days):\n    return days * 24\n")
    settings = load_settings(rewritten, cache_dir=cache, resolver="name", history_commits=0)
    with open_store(settings, read_only=False) as store:
        assert index_repository(settings, store, embedder_for(settings)).mode == "incremental"
    with open_store(settings, read_only=True) as store:
        hits = [doc for doc, _ in store.fulltext(analyze_query("ledger reconciliation window"), 3)]
        assert hits[:1] == ["shop/payments/retry.py::ledger_reconciliation_window"], hits
        assert unembedded(store) == 0


def test_a_vector_rewrite_that_fails_sets_them_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    b = tmp_path / "b"
    want_graph, want_vectors, _ = _later_then_now(copy_shop(b / "shop"), b / "cache", monkeypatch, 10**9)

    def broken(export: Path) -> list[str]:
        raise OSError(f"no space left on device: {export}")

    monkeypatch.setattr(kuzu_store, "_copy_statements", broken)
    repo = copy_shop(tmp_path / "a" / "shop")
    with caplog.at_level(logging.WARNING, logger="cg"):
        graph, stored, set_count = _later_then_now(repo, tmp_path / "a" / "cache", monkeypatch, rewrite_at=10)
    assert "could not rewrite the index compactly (no space left on device" in caplog.text
    assert set_count == sum(len(v) for v in want_vectors.values())
    assert not (diff := differences(graph, want_graph)), "\n".join(diff)
    assert not (problems := vector_differences(stored, want_vectors)), problems[:5]
    assert len(_generations(repo)) == 1


def test_ctrl_c_inside_a_vector_rewrite_keeps_the_last_complete_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    repo = copy_shop(tmp_path / "shop")
    settings = load_settings(repo, cache_dir=tmp_path / "cache", resolver="name", history_commits=0)
    embedder = embedder_for(settings)
    with open_store(settings, read_only=False, must_exist=False) as store:
        index_repository(settings, store, embedder, embed_mode="later")
    with open_store(settings, read_only=True) as store:
        before, pending = dump(store), unembedded(store)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(kuzu_store, "VECTOR_REWRITE_AT", 10)
    monkeypatch.setattr(kuzu_store, "_copy_with_vectors", interrupted)
    with open_store(settings, read_only=False) as store, pytest.raises(KeyboardInterrupt):
        index_repository(settings, store, embedder, embed_mode="now")
    with open_store(settings, read_only=True) as store:
        assert not (diff := differences(dump(store), before)), "\n".join(diff)
        assert unembedded(store) == pending > 0
        assert not any(vectors(store).values())
    assert len(_generations(repo)) == 1


def test_each_run_says_what_its_generation_steps_took(tmp_path: Path):
    """A one-file edit of a big repository spends most of its write copying the database and flushing
    it to disk, in proportion to the index and not to the edit: the summary names those steps."""
    repo = copy_shop(tmp_path / "shop")
    settings = load_settings(repo, cache_dir=tmp_path / "cache", resolver="name", history_commits=0)
    embedder = embedder_for(settings)
    with open_store(settings, read_only=False, must_exist=False) as store:
        first = index_repository(settings, store, embedder, embed_mode="later")
    assert set(first.store_steps) == {"write"}
    assert set(first.store_steps["write"]) == {"create", "compact", "switch"}  # a full run starts empty

    with open_store(settings, read_only=False) as store:
        filled = index_repository(settings, store, embedder, embed_mode="now")
    # the run that builds on the index copies it beside its parsing (``prepare``) and says what it waited
    assert set(filled.store_steps["write"]) == {"copy", "waited", "compact", "switch"}
    assert set(filled.store_steps["vectors"]) == {"copy", "vectors", "compact", "switch"}
    assert filled.store_steps["vectors"]["vectors"] <= filled.seconds["vectors_write"]

    retry = repo / RETRY
    retry.write_text(retry.read_text().replace("def ", "# retried with backoff\ndef ", 1))
    with open_store(settings, read_only=False) as store:
        edited = index_repository(settings, store, embedder)
    assert edited.mode == "incremental" and edited.changed == 1
    steps = edited.store_steps["write"]
    assert set(steps) == {"copy", "waited", "compact", "switch"} and all(v >= 0 for v in steps.values())
    assert steps["compact"] + steps["switch"] <= edited.seconds["write"]
    assert edited.as_dict()["store_steps"] == edited.store_steps  # what `cg index --json` prints
    assert len(_generations(repo)) == 1
