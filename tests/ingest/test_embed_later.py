"""A graph queryable before its vectors: ``embed = "later"`` stores the graph and its full-text index
without the vectors the cache lacks, and a run with many misses stores the graph first and sets the
vectors after it (cg/ingest/pipeline.py, ``DEFER_AT`` and ``fill_vectors``).

What must hold: queries answer from the full-text and graph arms meanwhile and say so; explain does not
refuse a question because cosines are missing; a run stopped while embedding leaves a complete graph
that knows which vectors it lacks; and once the vectors are computed the index is exactly the one a
single run gives, vectors included, on both stores.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from cg.api import open_index, watch
from cg.config import load_settings
from cg.embed import Embedder, embedder_for
from cg.graph.backends import open_store
from cg.graph.cypher import VECTOR_PROPS
from cg.graph.kuzu_store import KuzuStore
from cg.ingest import pipeline
from cg.ingest.pipeline import index_repository
from cg.queries.explain import explain, render_markdown
from cg.queries.query import unembedded
from cg.queries.search import search
from tests.conftest import copy_shop
from tests.graphdump import differences, dump, vector_differences, vectors
from tests.neo4j_env import BACKENDS, neo4j_settings
from tests.shop_history import commit_history

RESOLVER = {"resolver": "name"}  # the graphs compared must not depend on jedi's time budget


def _open(backend: str, repo: Path, cache: Path):
    if backend == "kuzu":
        return load_settings(repo, cache_dir=cache, **RESOLVER), KuzuStore(repo / ".cg" / "graph.kuzu")
    from cg.graph.neo4j_store import Neo4jStore

    settings = replace(neo4j_settings(repo), cache_dir=cache, **RESOLVER)
    store = Neo4jStore(settings)
    store.reset()
    return settings, store


def _one_pass(repo: Path, cache: Path, embedder: Embedder, tmp: Path):
    """The graph and vectors one ordinary run stores for a copy of ``repo`` (the cache warm by now)."""
    ref = copy_shop(tmp / "reference")
    commit_history(ref)
    store = KuzuStore(ref / ".cg" / "graph.kuzu")
    try:
        index_repository(load_settings(ref, cache_dir=cache, **RESOLVER), store, embedder)
        return dump(store), vectors(store)
    finally:
        store.close()


class StopWhileEmbedding:
    """A progress display whose user presses Ctrl-C as the vectors start."""

    notes: list[str]

    def __init__(self) -> None:
        self.notes = []

    def note(self, text: str) -> None:
        self.notes.append(text)

    @contextmanager
    def stage(self, name: str, total: int):
        if name == "vectors":
            raise KeyboardInterrupt
        yield lambda n: None


@pytest.mark.parametrize("backend", BACKENDS)
def test_embed_later_answers_from_the_graph_then_fills_to_the_single_run_index(backend: str, tmp_path: Path):
    cache = tmp_path / "cache"  # empty: every text is a miss
    repo = copy_shop(tmp_path / "shop")
    commit_history(repo)
    settings, store = _open(backend, repo, cache)
    embedder = embedder_for(settings)
    try:
        summary = index_repository(settings, store, embedder, embed_mode="later")
        assert summary.embedded == 0
        assert summary.unembedded_files == summary.files and summary.unembedded_commits == summary.commits == 2
        assert unembedded(store) == summary.files + 2
        assert not any(vectors(store)[key] for key in VECTOR_PROPS)

        hits = search(store, embedder, "how is a failed payment retried?", limit=5)
        assert hits and hits[0].symbol["name"] == "retry_failed_payment"  # the full-text and graph arms
        result = explain(store, embedder, "how is a failed payment retried?")
        assert result.found, result.answerability  # the refusal model needs cosines the index lacks
        assert "retry_failed_payment" in " ".join(result.order)
        assert result.unembedded == summary.files + 2
        assert "have no vectors yet" in render_markdown(result)

        # a later run in "later" mode with nothing new to embed leaves them pending, and says so
        again = index_repository(settings, store, embedder, embed_mode="later")
        assert again.mode == "incremental" and again.unembedded_files == summary.files

        filled = index_repository(settings, store, embedder, embed_mode="now")
        assert filled.mode == "incremental" and filled.unembedded_files == 0
        assert filled.embedded > 0
        assert unembedded(store) == 0
        assert explain(store, embedder, "how is a failed payment retried?").unembedded == 0
        graph, stored = dump(store), vectors(store)
    finally:
        store.close()
    want_graph, want_vectors = _one_pass(repo, cache, embedder, tmp_path)
    assert not differences(graph, want_graph)
    assert not vector_differences(stored, want_vectors)


def test_many_misses_store_the_graph_first_and_a_stop_while_embedding_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(pipeline, "DEFER_AT", 10)  # the shop's ~380 texts count as many
    cache = tmp_path / "cache"
    repo = copy_shop(tmp_path / "shop")
    commit_history(repo)
    settings = load_settings(repo, cache_dir=cache, **RESOLVER)
    embedder = embedder_for(settings)
    progress = StopWhileEmbedding()
    with open_store(settings, read_only=False, must_exist=False) as store:  # the product's store: generations
        with pytest.raises(KeyboardInterrupt, match="the graph is stored"):
            index_repository(settings, store, embedder, progress)
    assert any("can be queried" in n for n in progress.notes)

    with open_store(settings, read_only=True) as store:  # what a reader sees after the stop
        assert unembedded(store) > 0
        hits = search(store, embedder, "verify the stripe webhook signature", limit=3)
        assert "verify_signature" in [h.symbol["name"] for h in hits]
        stopped = dump(store)

    with open_store(settings, read_only=False) as store:
        resumed = index_repository(settings, store, embedder)  # the next run computes what the stop left
        assert resumed.mode == "incremental" and resumed.unembedded_files == 0
        assert unembedded(store) == 0
        graph, stored = dump(store), vectors(store)
    want_graph, want_vectors = _one_pass(repo, cache, embedder, tmp_path)
    assert not differences(stopped, want_graph)  # the graph was whole before the first vector
    assert not differences(graph, want_graph)
    assert not vector_differences(stored, want_vectors)


def test_an_edit_between_later_and_now_is_embedded_once(tmp_path: Path):
    cache = tmp_path / "cache"
    repo = copy_shop(tmp_path / "shop")
    settings, store = _open("kuzu", repo, cache)
    embedder = embedder_for(settings)
    try:
        first = index_repository(settings, store, embedder, embed_mode="later")
        retry = repo / "shop" / "payments" / "retry.py"
        retry.write_text(retry.read_text() + "\n\ndef retry_budget_left(attempt):\n    return 5 - attempt\n")
        edited = index_repository(settings, store, embedder, embed_mode="later")
        assert edited.mode == "incremental" and edited.unembedded_files == first.unembedded_files
        filled = index_repository(settings, store, embedder)
        assert filled.unembedded_files == 0
        hits = search(store, embedder, "retry budget left", limit=3)
        assert hits[0].symbol["name"] == "retry_budget_left" and "vector" in hits[0].ranks
    finally:
        store.close()


def test_watch_computes_what_embed_later_left(tmp_path: Path):
    """`cg watch`'s first pass runs in "now" mode whatever the setting, so it picks up the vectors."""
    cache = tmp_path / "cache"
    repo = copy_shop(tmp_path / "shop")
    with open_index(repo, read_only=False, create=True, cache_dir=cache, embed="later", **RESOLVER) as index:
        assert index.index().unembedded_files > 0
    stop, passes = threading.Event(), []

    def indexed(done) -> None:
        passes.append(done)
        stop.set()

    watch(repo, stop=stop, on_indexed=indexed, cache_dir=cache, embed="later", **RESOLVER)
    assert passes and passes[0].ok, passes
    with open_index(repo, cache_dir=cache) as index:
        assert unembedded(index.store) == 0
        assert index.status().unembedded_files == 0
