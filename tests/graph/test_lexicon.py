"""The embedded store's full-text index (cg/graph/lexicon.py): SQLite FTS5 beside each generation.

The store contract (tests/graph/test_store_conformance.py) covers what search returns after writes and
deletes on both backends; these cover what only this file does: the query cannot be read as FTS5
syntax, a generation carries its own copy, a reader's copy is read-only and a missing one is one line."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cg.graph.generations import LEXICON
from cg.graph.lexicon import Lexicon, match_expression
from cg.graph.store import FileWrite, StoreError
from cg.lexical import analyze_query, analyze_text
from cg.model import Chunk, CommitRecord, FileRecord, Symbol

REPO = "github.com/acme/shop"


def _symbol(path: str, name: str, words: str, literals: str = "") -> Symbol:
    return Symbol(
        id=f"{path}::{name}", name=name, qualname=name, kind="function", path=path, start_line=1, end_line=3,
        signature=f"def {name}()", docstring="", text=f"def {name}():\n    pass", parent_id=f"{path}::<module>",
        search_text=analyze_text(f"{name} {words}"), literals=literals,
    )  # fmt: skip


def _write(symbols: list[Symbol], chunks: list[Chunk], new: bool, vectors: np.ndarray | None = None) -> FileWrite:
    record = FileRecord(symbols[0].path, "python", "source", "sha", 9, "shop")
    return FileWrite(record, symbols, vectors, chunks=chunks, new=new)


def test_query_tokens_are_quoted_so_none_is_fts5_syntax(tmp_path: Path):
    assert match_expression("refund OR AND") == '"refund" OR "OR" OR "AND"'
    assert match_expression('near "quoted col:refund_id') == '"near" OR "quoted" OR "col" OR "refund" OR "id"'
    assert match_expression("  ") == ""
    lexicon = Lexicon(tmp_path / LEXICON, read_only=False)
    lexicon.replace_file(REPO, _write([_symbol("shop/refunds.py", "refund_order", "and near")], [], new=True))
    for hostile in ("AND", "NEAR(", '"', "*", "col:refund", "-refund", "^refund"):
        lexicon.search(REPO, "Symbol", "search_text", hostile, 5)  # no sqlite3.OperationalError
    hits = lexicon.search(REPO, "Symbol", "search_text", analyze_query("NEAR refund"), 5)
    assert [h[0] for h in hits] == ["shop/refunds.py::refund_order"]
    lexicon.close()


def test_a_file_written_again_replaces_its_rows_and_chunks_keep_their_owner(tmp_path: Path):
    lexicon = Lexicon(tmp_path / LEXICON, read_only=False)
    old = _symbol("shop/coupons.py", "validate_coupon", "expired coupon", analyze_text("coupon has expired"))
    chunk = Chunk("shop/coupons.py::validate_coupon#1", "shop/coupons.py::validate_coupon", "body",
                  "shop/coupons.py", 1, 3, "...", analyze_text("redemption limit reached"))  # fmt: skip
    lexicon.replace_file(REPO, _write([old], [chunk], new=True))
    hits = lexicon.search(REPO, "Chunk", "search_text", analyze_query("redemption limit"), 5)
    assert [(h[0], h[3]) for h in hits] == [(chunk.id, old.id)]
    new = _symbol("shop/coupons.py", "validate_coupon", "redeemed twice")
    lexicon.replace_file(REPO, _write([new], [], new=False))
    assert lexicon.search(REPO, "Symbol", "search_text", analyze_query("expired"), 5) == []
    assert lexicon.search(REPO, "Symbol", "literals", analyze_query("expired"), 5) == []
    assert lexicon.search(REPO, "Chunk", "search_text", analyze_query("redemption"), 5) == []
    assert [h[0] for h in lexicon.search(REPO, "Symbol", "search_text", analyze_query("redeemed"), 5)] == [new.id]
    assert lexicon.count("Symbol") == 1 and lexicon.count("Chunk") == 0
    lexicon.close()


def test_a_reader_cannot_write_and_a_missing_file_is_one_line(tmp_path: Path):
    writer = Lexicon(tmp_path / LEXICON, read_only=False)
    commit = CommitRecord("b" * 40, "b" * 10, "Dana", 1, "Refund partial captures", "", analyze_text("refund partial"))
    writer.put_commits(REPO, [commit])
    writer.close()
    reader = Lexicon(tmp_path / LEXICON, read_only=True)
    assert [h[0] for h in reader.search(REPO, "Commit", "search_text", "refund", 5)] == [commit.id]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        reader._connection().execute("DELETE FROM node")
    reader.close()
    with pytest.raises(StoreError, match="has no full-text index; run `cg index`") as err:
        Lexicon(tmp_path / "elsewhere" / LEXICON, read_only=True).search(REPO, "Symbol", "search_text", "refund", 5)
    assert "\n" not in str(err.value)


def test_each_generation_has_its_own_copy(tmp_path: Path):
    """An incremental run writes the staged generation's copy; the generation readers hold keeps its own."""
    from cg.api import settings_for
    from cg.graph.backends import open_store
    from tests.conftest import cg_command, copy_shop

    repo = copy_shop(tmp_path / "shop")
    cg_command("index", str(repo), env={"CG_RESOLVER": "name"})
    with open_store(settings_for(repo, "kuzu"), read_only=True) as before:
        assert before.fulltext(analyze_query("chargeback_ledger_marker"), 5) == []
        target = repo / "shop" / "payments" / "retry.py"
        target.write_text(target.read_text() + "\n\ndef chargeback_ledger_marker():\n    return 1\n")
        cg_command("index", str(repo), env={"CG_RESOLVER": "name"})
        assert before.fulltext(analyze_query("chargeback_ledger_marker"), 5) == []  # its generation's copy
    with open_store(settings_for(repo, "kuzu"), read_only=True) as after:
        hits = [doc for doc, _ in after.fulltext(analyze_query("chargeback_ledger_marker"), 5)]
    assert hits[0] == "shop/payments/retry.py::chargeback_ledger_marker"
    generations = [p for p in (repo / ".cg" / "kuzu").iterdir() if p.is_dir()]
    assert [sorted(f.name for f in g.iterdir()) for g in generations] == [["graph.kuzu", LEXICON]]


def test_definitions_vectors_are_kept_known_absent_or_left_to_the_graph(tmp_path: Path):
    """A write with vectors settles each definition's (a lambda has none); a write before its vectors
    settles only that a definition without a docstring has no docstring vector; set_vectors fills in."""
    refund = _symbol("shop/refunds.py", "refund_order", "refund")
    lam = replace(_symbol("shop/refunds.py", "refund_order.<lambda>", ""), kind="lambda")
    assert not lam.retrievable
    documented = replace(_symbol("shop/refunds.py", "void_refund", "void"), docstring="Void a pending refund.")
    lexicon = Lexicon(tmp_path / LEXICON, read_only=False)
    vector = np.arange(4, dtype=np.float32)
    lexicon.replace_file(REPO, _write([refund, lam], [], new=True, vectors=np.vstack([vector])))
    known = lexicon.vectors("embedding", [refund.id, lam.id, "shop/elsewhere.py::f"])
    assert set(known) == {refund.id, lam.id} and known[lam.id] is None
    assert known[refund.id] is not None and known[refund.id].tolist() == vector.tolist()
    lexicon.replace_file(REPO, _write([refund, documented], [], new=False))  # vectors later
    assert lexicon.vectors("embedding", [refund.id, documented.id]) == {}  # not known here: the graph has them
    assert lexicon.vectors("doc_embedding", [refund.id, documented.id]) == {refund.id: None}
    lexicon.set_vectors("Symbol", "embedding", [documented.id], np.vstack([vector * 2]))
    lexicon.set_vectors("Chunk", "embedding", ["shop/refunds.py::<toc>"], np.vstack([vector]))  # not kept
    found = lexicon.vectors("embedding", [documented.id])[documented.id]
    assert found is not None and found.tolist() == (vector * 2).tolist()
    lexicon.close()


def test_a_fields_text_is_read_back_by_id_as_written(tmp_path: Path):
    lexicon = Lexicon(tmp_path / LEXICON, read_only=False)
    coupon = _symbol("shop/coupons.py", "validate_coupon", "expired coupon", analyze_text("coupon has expired"))
    refund = _symbol("shop/refunds.py", "refund_order", "partial refund")
    lexicon.replace_file(REPO, _write([coupon], [], new=True))
    lexicon.replace_file(REPO, _write([refund], [], new=True))
    ids = [coupon.id, refund.id, "shop/nowhere.py::missing"]
    assert lexicon.texts(REPO, "Symbol", "search_text", ids) == {
        coupon.id: coupon.search_text,
        refund.id: refund.search_text,
    }  # an id it does not hold is left out, for the graph to answer
    assert lexicon.texts(REPO, "Symbol", "literals", ids) == {coupon.id: coupon.literals, refund.id: ""}
    assert lexicon.texts("github.com/acme/other", "Symbol", "search_text", ids) == {}
    lexicon.close()


def test_a_reader_reads_the_texts_ranking_needs_as_the_graph_holds_them(indexed_shop):
    from cg.api import open_index
    from cg.graph.cypher_store import CypherStore

    repo, _ = indexed_shop
    with open_index(repo) as index:
        store = index.store
        ids = [r[0] for r in store._read("MATCH (n:Symbol) RETURN n.id ORDER BY n.id")]
        for field in ("search_text", "literals"):
            from_graph = CypherStore.lexical_docs(store, ids, "Symbol", field)
            assert store.lexical_docs(ids, "Symbol", field) == from_graph
            assert store._lexicon.texts(store.repo_key, "Symbol", field, ids).keys() == set(ids)
        assert sum(bool(t) for t in from_graph.values()) > 10  # literals: the shop's messages
