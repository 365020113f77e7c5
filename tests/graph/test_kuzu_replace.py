"""A file written again on Kùzu writes only what changed (KuzuStore._replace_file): the edited
definition is created anew with the edges other files have to it, the ones below it move in place, the
rest (and their vectors) stay, and a chunk follows an owner created anew."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from cg.graph import cypher as q
from cg.graph.kuzu_store import KuzuStore
from cg.graph.store import FileWrite
from cg.lexical import analyze_text
from cg.model import Chunk, Edge, FileRecord
from tests.graph.test_store_conformance import DIM, HANDLER, sym, vec

PATH = "shop/refunds.py"
ISSUE = replace(sym(PATH, "issue_refund"), start_line=1, end_line=8)
PARTIAL = replace(sym(PATH, "partial_refund_amount"), start_line=10, end_line=14)
LEDGER = replace(sym(PATH, "record_refund_in_ledger"), start_line=16, end_line=20)
FRAGMENT = Chunk(f"{ISSUE.id}#fragment-2", ISSUE.id, "fragment", PATH, 5, 8, "...", analyze_text("card network"))
SKELETON = Chunk(f"{PARTIAL.id}#skeleton", PARTIAL.id, "skeleton", PATH, 10, 14, "...", analyze_text("prorated"))


def _write(store: KuzuStore, symbols, sha: str, vectors: bool = True) -> None:
    record = FileRecord(PATH, "python", "source", sha, 20, "shop.refunds")
    embeddings = np.vstack([vec(i) for i in range(len(symbols))]) if vectors else None
    chunks = [FRAGMENT, SKELETON]
    chunk_vectors = np.vstack([vec(7)] * 2) if vectors else None
    store.write_file(FileWrite(record, symbols, embeddings, chunks=chunks, chunk_embeddings=chunk_vectors))


def _statements(store: KuzuStore, monkeypatch) -> list[tuple[str, dict]]:
    seen: list[tuple[str, dict]] = []
    write_all = store._write_all

    def spy(statements):
        seen.extend(statements)
        write_all(statements)

    monkeypatch.setattr(store, "_write_all", spy)
    return seen


def test_a_body_edit_recreates_one_definition_and_moves_the_ones_below(tmp_path: Path, monkeypatch):
    store = KuzuStore(tmp_path / "graph.kuzu")
    store.ensure_schema(DIM)
    _write(store, [ISSUE, PARTIAL, LEDGER], "sha-1")
    hooks = FileRecord("shop/hooks.py", "python", "source", "h", 9, "shop.hooks")
    store.write_file(FileWrite(hooks, [HANDLER], np.vstack([vec(9)])))
    store.write_edges([Edge("CALLS", HANDLER.id, PARTIAL.id, "Symbol", "Symbol", 70, "import", 0.95)])
    store.write_edges([Edge("CALLS", HANDLER.id, ISSUE.id, "Symbol", "Symbol", 71, "import", 0.95)])
    seen = _statements(store, monkeypatch)

    edited = replace(ISSUE, end_line=9, text=ISSUE.text + "\n    audit()")
    moved = [replace(PARTIAL, start_line=11, end_line=15), replace(LEDGER, start_line=17, end_line=21)]
    _write(store, [edited, *moved], "sha-2", vectors=False)  # vectors later, as `cg index --embed later` writes

    deleted = [p["ids"] for query, p in seen if query == q.DELETE_SYMBOLS_BY_ID]
    assert deleted == [[ISSUE.id]]
    assert [sorted(r["id"] for r in p["rows"]) for query, p in seen if query == q.MOVE_SYMBOLS] == [
        sorted(s.id for s in moved)
    ]
    nodes = store.symbols([ISSUE.id, PARTIAL.id, LEDGER.id])
    assert [nodes[s.id]["start_line"] for s in (ISSUE, PARTIAL, LEDGER)] == [1, 11, 17]
    assert store._read("MATCH (s:Symbol {id: $id}) RETURN s.blob_sha", {"id": LEDGER.id}) == [["sha-2"]]
    # the unchanged definitions keep their vectors; the edited one waits for its new one
    assert set(store.embeddings([ISSUE.id, PARTIAL.id, LEDGER.id])) == {PARTIAL.id, LEDGER.id}
    # the caller in another file still reaches both, the one created anew included
    assert sorted(c.dst for c in store.calls([HANDLER.id], "out")) == sorted([ISSUE.id, PARTIAL.id])
    # the edited definition's fragment is linked to it again; the other definition's skeleton never left
    assert store.chunk_owners([FRAGMENT.id, SKELETON.id]) == {FRAGMENT.id: ISSUE.id, SKELETON.id: PARTIAL.id}
    assert store._read("MATCH ()-[p:PART_OF]->() RETURN count(p)") == [[2]]
    store.close()
