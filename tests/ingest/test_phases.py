"""The ingest phases' own pieces: the vector blocks, the plan of a run, the docstring setting."""

from __future__ import annotations

import gc
import weakref
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cg.api import open_index
from cg.config import ConfigError, load_settings
from cg.embed import embedder_for
from cg.graph.kuzu_store import KuzuIndexStore, KuzuStore
from cg.ingest.pipeline import Embedded, Vectors, index_repository, plan
from cg.ingest.state import fingerprint, index_settings
from tests.conftest import copy_shop
from tests.ingest.helpers import extract_repo


def test_vectors_hand_out_consecutive_blocks() -> None:
    matrix = np.arange(12, dtype=np.float32).reshape(6, 2)
    vectors = Vectors(matrix, width=2)
    payments, invoices, none, coupons = vectors.take(2), vectors.take(3), vectors.take(0), vectors.take(1)
    assert payments.tolist() == matrix[:2].tolist()
    assert invoices.tolist() == matrix[2:5].tolist()
    assert none.shape == (0, 2)
    assert coupons.tolist() == matrix[5:].tolist()
    vectors.done()


def test_vectors_let_the_matrix_go_once_every_block_was_taken() -> None:
    matrix = np.ones((5, 384), np.float32)
    alive = weakref.ref(matrix)
    vectors = Vectors(matrix, width=384)
    del matrix
    vectors.take(2), vectors.take(3)
    assert alive() is not None
    vectors.done()
    assert alive() is None  # the store has what it needed; the run's end must not carry it


def test_a_run_lets_go_of_its_texts_and_vectors_before_the_store_rewrites_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compacting rewrite at a Kùzu run's end is its peak of memory (Django: 1.1 GB over what the
    process holds): the texts and vectors the write stored must be gone by then."""
    repo = copy_shop(tmp_path / "shop")
    held: list[list[tuple[int, int, bool]]] = []
    compact = KuzuIndexStore._compact_if_grown

    def spying(store: KuzuIndexStore) -> None:
        gc.collect()
        runs = [e for e in gc.get_objects() if isinstance(e, Embedded)]
        held.append([(len(e.chunked), len(e.targets), e.vectors.take(0) is None) for e in runs])
        compact(store)

    monkeypatch.setattr(KuzuIndexStore, "_compact_if_grown", spying)
    with open_index(repo, read_only=False, create=True, resolver="name") as index:
        summary = index.index(full=True)
        assert summary.mode == "full" and summary.unembedded_files == 0 and summary.symbols > 50
    assert held == [[(0, 0, True)]]


def test_vectors_left_over_or_overdrawn_raise() -> None:
    vectors = Vectors(np.zeros((3, 4), np.float32), width=4)
    vectors.take(2)
    with pytest.raises(AssertionError, match="2 of 3"):
        vectors.done()
    with pytest.raises(AssertionError, match="beyond"):
        vectors.take(2)


def test_vectors_of_nothing_still_have_their_width() -> None:
    vectors = Vectors(np.zeros((0, 0), np.float32), width=384)
    assert vectors.take(0).shape == (0, 384)
    vectors.done()


def test_plan_names_what_changed_since_the_last_run(tmp_path: Path) -> None:
    repo = copy_shop(tmp_path / "shop")
    settings = load_settings(repo, resolver="name")
    embedder = embedder_for(settings)
    store = KuzuStore(repo / ".cg" / "graph.kuzu")
    try:
        index_repository(settings, store, embedder)
        invoices = repo / "shop" / "billing" / "invoices.py"
        invoices.write_text(invoices.read_text() + "\n\ndef void_invoice(invoice):\n    return None\n")
        (repo / "shop" / "payments" / "refunds.py").write_text("def refund(payment):\n    return payment\n")
        (repo / "shop" / "billing" / "coupons.py").unlink()

        planned = plan(settings, store, embedder.cache_key)

        assert planned.trusted and planned.mode == "incremental"
        assert planned.changed_paths == {"shop/billing/invoices.py", "shop/payments/refunds.py"}
        assert planned.added == 1
        assert planned.removed == ["shop/billing/coupons.py"]
        assert planned.retimed == []
        assert "shop/payments/refunds.py" in planned.present
        assert "shop/billing/coupons.py" not in planned.present

        rebuild = plan(settings, store, embedder.cache_key, full=True)
        assert not rebuild.trusted and rebuild.mode == "full"
        assert len(rebuild.changed) == len(rebuild.present)
    finally:
        store.close()


def test_embedded_docstrings_land_on_their_own_definitions(tmp_path: Path) -> None:
    """The docstring vectors sit between each file's chunks and the next file's symbols: a block taken
    out of order would put them on the wrong definitions."""
    repo = copy_shop(tmp_path / "shop")
    settings = load_settings(repo, resolver="name", embed_docstrings=True)
    embedder = embedder_for(settings)
    store = KuzuStore(repo / ".cg" / "graph.kuzu")
    try:
        index_repository(settings, store, embedder)
        documented = [s for ex in extract_repo(repo) for s in ex.symbols if s.docstring and s.kind != "module"]
        unique = [s for s in documented if [d.docstring for d in documented].count(s.docstring) == 1]
        assert len(unique) >= 5
        for symbol in unique[:: max(1, len(unique) // 5)]:
            [(hit, score)] = store.vector(embedder.embed([symbol.docstring])[0], 1, prop="doc_embedding")
            assert hit == symbol.id and score > 0.99, symbol.id
    finally:
        store.close()


def test_embedding_docstrings_is_part_of_the_index_fingerprint(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    plain = index_settings(settings)
    with_docs = index_settings(replace(settings, embed_docstrings=True))
    assert plain["embed_docstrings"] == "False" and with_docs["embed_docstrings"] == "True"
    assert fingerprint(*plain.values()) != fingerprint(*with_docs.values())


def test_weighting_docstrings_needs_them_embedded(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="embed_docstrings"):
        load_settings(tmp_path, weight_doc=0.5)
    assert load_settings(tmp_path, weight_doc=0.5, embed_docstrings=True).weight_doc == 0.5
