"""A full run on Kùzu loads its rows in bulk (cg/graph/kuzu_bulk.py). What must hold: the graph and the
vectors it stores are exactly the ones the statement-by-statement path stores, with every table in one
COPY or in many small ones, with the vectors inline or computed later; a write the load cannot take
ends it without losing or doubling a row; an edge to a node never written is dropped, as the
statements' MATCH drops it; and the full-text index follows the copied rows and the updates after them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from cg.api import open_index, settings_for
from cg.graph.backends import open_store
from cg.graph.kuzu_bulk import VECTOR_WEIGHT, BulkLoad, weight
from cg.graph.kuzu_store import KuzuStore
from cg.graph.store import FileWrite
from cg.lexical import analyze_query, analyze_text
from cg.model import Edge, External, FileRecord, Symbol
from tests.conftest import copy_shop
from tests.graphdump import differences, dump, vector_differences, vectors
from tests.neo4j_env import REQUIRED
from tests.shop_history import commit_history

POLYGLOT = Path(__file__).resolve().parent.parent / "fixtures" / "polyglot"
DIM = 384


class Stored(NamedTuple):
    graph: dict[str, set[tuple]]
    counts: dict[str, int]  # counts see a doubled edge that the graph's sets would hide
    vectors: dict[tuple[str, str], dict[str, np.ndarray]]
    fulltext: list[list[str]] | None = None  # the full-text index's answers to FULLTEXT_QUESTIONS
    reopened: int = 0  # how often the writer closed and reopened the database (KuzuStore._reopen)


FULLTEXT_QUESTIONS = ("verify stripe signature", "retry payment charge", "handler service", "invoice total")


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The shop with its git history (commits, TOUCHES, a document and its MENTIONS) and the polyglot
    fixture (six languages, cross-language imports and externals)."""
    root = tmp_path_factory.mktemp("bulk")
    shop = commit_history(copy_shop(root / "shop"))
    polyglot = root / "polyglot"
    shutil.copytree(POLYGLOT, polyglot)
    return {"shop": shop, "polyglot": polyglot}


def _index(source: Path, target: Path, bulk_rows: int, embed: str, monkeypatch: pytest.MonkeyPatch) -> Stored:
    """A fresh copy of ``source`` indexed in full with ``bulk_rows`` (0: statement by statement); with
    ``embed`` "later" the vectors are computed by a second, incremental run."""
    shutil.copytree(source, target)
    monkeypatch.setattr(KuzuStore, "bulk_rows", bulk_rows)
    reopen, reopened = KuzuStore._reopen, []

    def counted(store: KuzuStore) -> None:
        reopened.append(store.path)
        reopen(store)

    monkeypatch.setattr(KuzuStore, "_reopen", counted)
    with open_index(target, read_only=False, create=True, resolver="name") as index:
        first = index.index(full=True, embed=embed)
        assert first.mode == "full"
        if embed == "later":
            assert index.index().unembedded_files == 0
    with open_store(settings_for(target, "kuzu"), read_only=True) as store:
        fulltext = [[doc for doc, _ in store.fulltext(analyze_query(q), 10)] for q in FULLTEXT_QUESTIONS]
        return Stored(dump(store), store.stats(), vectors(store), fulltext, len(reopened))


@pytest.mark.parametrize("embed", ["now", "later"])
@pytest.mark.parametrize("repo", ["shop", "polyglot"])
def test_a_bulk_load_stores_what_the_statements_store(repo, embed, sources, tmp_path, monkeypatch):
    want = _index(sources[repo], tmp_path / "statements", 0, embed, monkeypatch)
    assert want.counts["CALLS"] > 0 and want.counts["Chunk"] > 0
    if repo == "shop":
        assert want.counts["TOUCHES"] > 0 and want.counts["MENTIONS"] > 0 and want.counts["Commit"] == 2
    assert any(want.vectors.values())
    for rows in (KuzuStore.bulk_rows, 7):  # one COPY per table, and a flush every few rows
        got = _index(sources[repo], tmp_path / f"bulk-{rows}", rows, embed, monkeypatch)
        assert not (diff := differences(got.graph, want.graph)), "\n".join(diff)
        assert got.counts == want.counts
        assert not vector_differences(got.vectors, want.vectors)
        assert got.fulltext == want.fulltext and any(want.fulltext)
        # every 7 rows copied, the database was closed and opened again (Kùzu's memory given back)
        assert got.reopened > 3 if rows == 7 else got.reopened == 0


def _symbol(path: str, scope: str) -> Symbol:
    name = scope.rsplit(".", 1)[-1]
    return Symbol(
        id=f"{path}::{scope}",
        name=name,
        qualname=f"{path[:-3].replace('/', '.')}.{scope}",
        kind="function",
        path=path,
        start_line=3,
        end_line=9,
        signature=f"def {name}(invoice)",
        docstring="",
        text=f"def {name}(invoice):\n    return invoice",
        parent_id=f"{path}::<module>",
        search_text=analyze_text(name),
    )


def _file(path: str, symbols: list[Symbol], externals: list[External], new: bool = True) -> FileWrite:
    record = FileRecord(path, "python", "source", f"sha-{path}", 20, path[:-3].replace("/", "."))
    vecs = np.eye(DIM, dtype=np.float32)[: len(symbols)]
    return FileWrite(record, symbols, vecs, externals, new=new)


RETRY = _symbol("shop/payments/retry.py", "schedule_payment_retry")
BACKOFF = _symbol("shop/payments/retry.py", "compute_backoff")
HANDLER = _symbol("shop/webhooks/stripe.py", "handle_invoice_payment_failed")


def _run(path: Path, bulk_rows: int) -> Stored:
    """A full run writing what a resolver might hand over: an External named twice with another
    resolution, an edge to a definition no file holds, and one file written twice (not new the second
    time, as a retried write would be)."""
    store = KuzuStore(path)
    store.bulk_rows = bulk_rows
    with store.run(full=True, dimension=DIM):
        store.write_file(_file("shop/payments/retry.py", [RETRY, BACKOFF], [External("stripe.Charge", "Charge")]))
        store.write_file(
            _file("shop/webhooks/stripe.py", [HANDLER], [External("stripe.Charge", "Charge", resolved=False)])
        )
        assert store.stats()["Symbol"] == 3  # a read inside the run sees the run's rows
        store.write_edges(
            [
                Edge("CALLS", HANDLER.id, RETRY.id, "Symbol", "Symbol", 41, "import"),
                Edge("CALLS", RETRY.id, BACKOFF.id, "Symbol", "Symbol", 12, "scope"),
                Edge("CALLS", RETRY.id, "stripe.Charge", "Symbol", "External", 14, "import"),
                Edge("CALLS", RETRY.id, "shop/ledger.py::post_entry", "Symbol", "Symbol", 15, "import"),
            ],
            [External("stripe.Refund", "Refund")],
        )
        store.write_file(_file("shop/payments/retry.py", [RETRY], [], new=False))  # ends the load
        store.write_edges([Edge("CALLS", RETRY.id, "stripe.Refund", "Symbol", "External", 16, "import")])
    try:
        return Stored(dump(store), store.stats(), vectors(store))
    finally:
        store.close()


def test_what_a_load_cannot_take_ends_it_and_the_graph_is_the_statements_one(tmp_path):
    want = _run(tmp_path / "statements" / "graph.kuzu", 0)
    # the rewrite took compute_backoff and the file's calls; the edge to post_entry never had an end
    assert want.counts["CALLS"] == 2 and want.counts["Symbol"] == 2
    assert ("stripe.Charge", "Charge", False) in want.graph["External"]  # the last write of a name wins
    for rows in (20_000, 2):
        got = _run(tmp_path / f"bulk-{rows}" / "graph.kuzu", rows)
        assert not (diff := differences(got.graph, want.graph)), "\n".join(diff)
        assert got.counts == want.counts
        assert not vector_differences(got.vectors, want.vectors)


def test_the_full_text_index_follows_a_bulk_load_and_the_edits_after_it(sources, tmp_path):
    repo = tmp_path / "shop"
    shutil.copytree(sources["shop"], repo)
    with open_index(repo, read_only=False, create=True, resolver="name") as index:
        index.index(full=True)
    retry = repo / "shop" / "payments" / "retry.py"
    anchor = "def schedule_payment_retry("
    head, rest = retry.read_text().split(anchor, 1)
    signature, body = rest.split("\n", 1)
    retry.write_text(f"{head}{anchor}{signature}\n    dunning_ledger_marker = 1\n{body}")
    with open_index(repo, read_only=False, resolver="name") as index:
        assert index.index().mode == "incremental"  # an update of indexed columns over copied rows
    with open_store(settings_for(repo, "kuzu"), read_only=True) as store:
        copied = [doc for doc, _ in store.fulltext(analyze_query("verify stripe signature"), 5)]
        edited = [doc for doc, _ in store.fulltext(analyze_query("dunning_ledger_marker"), 5)]
    assert any("verify_signature" in doc for doc in copied), copied
    assert "shop/payments/retry.py::schedule_payment_retry" in edited, edited


def _index_neo4j(source: Path, target: Path, bulk_rows: int, embed: str, monkeypatch: pytest.MonkeyPatch) -> Stored:
    """``_index`` on the Neo4j server (its own repository key: the copy's directory name), removed after."""
    from dataclasses import replace

    from cg.graph.neo4j_store import Neo4jStore
    from cg.ingest.pipeline import index_repository
    from tests.neo4j_env import neo4j_settings

    shutil.copytree(source, target)
    monkeypatch.setattr(Neo4jStore, "bulk_rows", bulk_rows)
    settings = replace(neo4j_settings(target), resolver="name")
    from cg.embed import embedder_for

    embedder = embedder_for(settings)
    with Neo4jStore(settings) as store:
        store.reset()
        try:
            first = index_repository(settings, store, embedder, full=True, embed_mode=embed)
            assert first.mode == "full"
            if embed == "later":
                assert index_repository(settings, store, embedder).unembedded_files == 0
            return Stored(dump(store), store.stats(), vectors(store))
        finally:
            store.reset()


@pytest.mark.neo4j
@pytest.mark.skipif(not REQUIRED, reason="Neo4j tests run under scripts/test (CG_TEST_NEO4J=1)")
@pytest.mark.parametrize("embed", ["now", "later"])
@pytest.mark.parametrize("repo", ["shop", "polyglot"])
def test_neo4j_full_runs_batched_across_files_store_what_the_statements_store(
    repo, embed, sources, tmp_path, monkeypatch
):
    """A full run on Neo4j gathers its files' node rows and writes them a few UNWIND batches at a
    time (neo4j_store._Batched): the graph and vectors are those of writing file by file, with the
    batches flushed at the end or every few rows (chunks linked to owners a later batch creates)."""
    from cg.graph.neo4j_store import Neo4jStore

    want = _index_neo4j(sources[repo], tmp_path / "statements", 0, embed, monkeypatch)
    assert want.counts["CALLS"] > 0 and want.counts["Chunk"] > 0 and any(want.vectors.values())
    for rows in (Neo4jStore.bulk_rows, 7):
        got = _index_neo4j(sources[repo], tmp_path / f"batched-{rows}", rows, embed, monkeypatch)
        assert not (diff := differences(got.graph, want.graph)), "\n".join(diff)
        assert got.counts == want.counts
        assert not vector_differences(got.vectors, want.vectors)


def test_rows_with_vectors_go_in_smaller_copies_and_memory_is_given_back_within_a_flush(tmp_path, monkeypatch):
    """A vector weighs a row ``VECTOR_WEIGHT`` times more (cg/graph/kuzu_bulk.py ``weight``): copies of
    rows with vectors hold fewer of them, and the database is reopened as soon as copies of
    ``bulk_rows`` weight went in, inside one flush too (the last flush of a run holds every edge)."""
    symbols = [_symbol("shop/payments/retry.py", name) for name in ("schedule_payment_retry", "compute_backoff")]
    symbols.append(_symbol("shop/payments/retry.py", "cancel_retry"))
    rows = _file("shop/payments/retry.py", symbols, []).symbol_rows()
    assert weight(rows) == 3 * (1 + VECTOR_WEIGHT) and weight([{"id": "x", "embedding": None}]) == 1
    load = BulkLoad(DIM, flush_rows=1 + VECTOR_WEIGHT)
    load.add_file(_file("shop/payments/retry.py", symbols, []))
    statements = list(load.drain())
    symbol_copies = [params["rows"] for query, params, _ in statements if query.startswith("COPY Symbol")]
    assert [len(r) for r in symbol_copies] == [1, 1, 1]  # one row with a vector fills a copy
    file_copies = [params["rows"] for query, params, _ in statements if query.startswith("COPY File")]
    assert [len(r) for r in file_copies] == [1]
    assert all(w == weight(params["rows"]) for _, params, w in statements)  # each copy says what it weighs

    reopen, reopened = KuzuStore._reopen, []
    monkeypatch.setattr(KuzuStore, "_reopen", lambda store: (reopened.append(1), reopen(store)))
    store = KuzuStore(tmp_path / "graph.kuzu")
    store.bulk_rows = 1 + VECTOR_WEIGHT
    try:
        with store.run(full=True, dimension=DIM):
            store.write_file(_file("shop/payments/retry.py", symbols, []))  # one flush: 3 copies of a full weight
            assert len(reopened) >= 3
        assert store.stats()["Symbol"] == 3
        assert len(vectors(store)[("Symbol", "embedding")]) == 3
    finally:
        store.close()
