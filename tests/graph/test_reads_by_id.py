"""Reads of nodes by id on the embedded store: a few ids are looked up by primary key one at a time,
many in one scan; both ways must give the same answers."""

from __future__ import annotations

import numpy as np
import pytest

from cg.api import open_index
from cg.graph import kuzu_store


def _answers(store, ids: list[str], chunk_ids: list[str]) -> dict:
    return {
        "symbols": store.symbols(ids),
        "summaries": store.symbols(ids, with_text=False),
        "lexical": store.lexical_docs(ids),
        "embeddings": {k: v.tolist() for k, v in store.embeddings(ids).items()},
        "chunk_owners": store.chunk_owners(chunk_ids),
        "chunk_text": store.lexical_docs(chunk_ids, "Chunk"),
    }


def test_by_key_and_by_scan_give_the_same_nodes(indexed_shop, monkeypatch):
    repo, _ = indexed_shop
    with open_index(repo) as index:
        store = index.store
        ids = [r[0] for r in store._read("MATCH (n:Symbol) RETURN n.id ORDER BY n.id")]
        chunks = [r[0] for r in store._read("MATCH (c:Chunk) RETURN c.id ORDER BY c.id")]
        assert len(ids) > 100 and len(chunks) > 10
        cases = [
            [],
            ids[:1],
            ids[5:8] + ids[5:6] + ["shop/nowhere.py::missing"],  # a repeat and an id the index lacks
            ids[: kuzu_store.BY_KEY_UP_TO],
            ids[: kuzu_store.BY_KEY_UP_TO + 1],
            ids[::3],
        ]
        for case in cases:
            chunk_case = chunks[: len(case)]
            by_key = _answers(store, case, chunk_case)
            with monkeypatch.context() as m:
                m.setattr(kuzu_store, "BY_KEY_UP_TO", -1)  # every read one scan
                by_scan = _answers(store, case, chunk_case)
            assert by_key == by_scan, len(case)
            assert set(by_key["symbols"]) == set(case) - {"shop/nowhere.py::missing"}
        vectors = store.embeddings(ids[:3])
        assert len(vectors) == 3 and all(isinstance(v, np.ndarray) for v in vectors.values())


def test_only_a_read_of_nodes_by_id_is_turned_into_a_lookup():
    from cg.graph import cypher as q
    from cg.graph.store import StoreError

    assert kuzu_store._by_key(q.SYMBOLS).count("n.id = $id") == 1
    assert "IN $ids" not in kuzu_store._by_key(q.CHUNK_OWNERS)
    with pytest.raises(StoreError):
        kuzu_store._by_key(q.CALLERS.replace("a.id IN $ids", "a.name IN $names"))


def test_reads_answered_from_the_last_hits_give_the_answers_the_database_gives(indexed_shop, monkeypatch):
    """Search and explain answer the same whether the candidates' texts, vectors and owners come with
    the hits or are read again; and the answers do come with the hits (no scan by id follows)."""
    questions = ["how is a failed payment retried?", "webhook signature check", "what calls compute_backoff?"]
    repo, _ = indexed_shop
    with open_index(repo) as index:
        store = index.store
        scans: list[str] = []
        real_scan = kuzu_store.CypherStore._read_by_ids

        def scan(self, query, ids):
            scans.append(query)
            return real_scan(self, query, ids)

        monkeypatch.setattr(kuzu_store.CypherStore, "_read_by_ids", scan)
        monkeypatch.setattr(kuzu_store, "BY_KEY_UP_TO", -1)
        answers = [(index.search(q).as_dict(), index.explain(q).as_dict()) for q in questions]
        assert not any("search_text" in s and "Chunk" in s for s in scans)  # the texts came with the hits
        assert not any("owner_id" in s for s in scans)
        # a vector scan returns no vectors (KuzuStore.vector): the chunk, doc and commit hits' are read
        # next, and a definition's comes from the full-text index's copy
        vector_reads = [s for s in scans if "n.embedding" in s]
        assert any("(n:Chunk" in s for s in vector_reads) and not any("(n:Symbol" in s for s in vector_reads)
        monkeypatch.setattr(store, "_keep_fetched", lambda source, key, values: None)
        store._fetched.clear()
        again = [(index.search(q).as_dict(), index.explain(q).as_dict()) for q in questions]
        assert any("owner_id" in s for s in scans)  # now read again from the tables
    assert answers == again


def test_the_probes_best_cosines_in_one_scan_equal_probe_by_probe(indexed_shop):
    from cg.ingest.baseline import PROBES, best_cosine

    repo, _ = indexed_shop
    with open_index(repo) as index:
        probes = index.embedder.embed(list(PROBES))
        one_scan = index.store.best_cosines(probes)
        by_probe = [best_cosine(index.store, v) for v in probes]
    assert len(one_scan) == len(PROBES)
    assert np.allclose(one_scan, by_probe, atol=1e-6)
    assert 0.0 < float(np.mean(one_scan)) < 0.3
