"""The resident graph (cg/graph/resident.py): a long session's reader answers the walks from memory,
with exactly what the statements answer, and a one-shot reader never pays for loading it."""

from __future__ import annotations

import pytest

from cg.api import open_index
from cg.graph import kuzu_store
from tests.conftest import cg_command, copy_shop
from tests.shop_history import commit_history


def _ids(store) -> list[str]:
    return [r[0] for r in store._read("MATCH (n:Symbol) RETURN n.id ORDER BY n.id")]


def _walks(store, ids: list[str]) -> dict:
    names = [s["name"] for s in store.symbols(ids, with_text=False).values()]
    return {
        "summaries": store.symbols(ids, with_text=False),
        "decorators": store.decorators(ids),
        "classes named": store.classes_named(names),
        "docs": store.docs_mentioning(ids),
        "commits": store.commits_touching(ids, limit=2),
        "callees": store.calls(ids, "out"),
        "callers": store.calls(ids, "in"),
        "caller_counts": store.caller_counts(ids),
        "bases": store.inherits(ids, "out"),
        "subclasses": store.inherits(ids, "in"),
        "members": store.members(ids),
    }


def test_the_resident_graph_answers_each_walk_as_the_statements_do(indexed_shop, monkeypatch):
    repo, _ = indexed_shop
    with open_index(repo) as index:
        store = index.store
        ids = _ids(store) + ["shop/nowhere.py::missing"]
        monkeypatch.setattr(kuzu_store, "RESIDENT_AFTER", float("inf"))
        by_statement = {i: _walks(store, [i]) for i in ids}
        assert store._resident is None
        monkeypatch.setattr(kuzu_store, "RESIDENT_AFTER", 0.0)
        store._walked = 0.0
        resident = {i: _walks(store, [i]) for i in ids}
        assert store._resident is not None
    assert resident == by_statement  # per id, in the statements' order
    assert sum(bool(w["callers"]) for w in by_statement.values()) > 20
    assert any(w["subclasses"] for w in by_statement.values()) and any(w["members"] for w in by_statement.values())
    assert any(w["callees"] and w["callees"][0].other_label == "External" for w in by_statement.values())
    assert any(w["decorators"] for w in by_statement.values()) and any(w["docs"] for w in by_statement.values())
    assert sum(bool(w["classes named"]) for w in by_statement.values()) > 10


def test_commits_are_read_only_for_definitions_a_commit_touched(tmp_path, monkeypatch):
    """The resident graph holds which definitions any commit touched, not the commits: a question about
    untouched code asks the store nothing, one about touched code gets what the statement gives."""
    repo = commit_history(copy_shop(tmp_path / "shop"))
    cg_command("index", str(repo))
    with open_index(repo) as index:
        store = index.store
        ids = _ids(store)
        monkeypatch.setattr(kuzu_store, "RESIDENT_AFTER", float("inf"))
        by_statement = {i: store.commits_touching([i], limit=3) for i in ids}
        monkeypatch.setattr(kuzu_store, "RESIDENT_AFTER", 0.0)
        store._walked = 0.0
        assert store._resident_graph() is not None
        reads: list[str] = []
        read = store._read
        monkeypatch.setattr(store, "_read", lambda query, params=None: reads.append(query) or read(query, params))
        resident = {i: store.commits_touching([i], limit=3) for i in ids}
    assert resident == by_statement
    touched = [i for i, commits in by_statement.items() if commits]
    assert 0 < len(touched) < len(ids) and "shop/payments/retry.py::compute_backoff" in touched
    assert len(reads) == len(touched)  # one statement per touched definition, none for the rest


def test_answers_are_the_same_with_the_graph_in_memory(indexed_shop, monkeypatch):
    questions = ["how is a failed payment retried?", "webhook signature check", "what calls compute_backoff?"]
    repo, _ = indexed_shop

    def answers(after: float) -> list:
        monkeypatch.setattr(kuzu_store, "RESIDENT_AFTER", after)
        with open_index(repo) as index:
            out = [(index.search(q).as_dict(), index.explain(q).as_dict()) for q in questions]
            seed = out[0][1]["seeds"][0]
            out.append(index.impact(seed).as_dict())
            return [out, index.store._resident is not None]

    from_statements, loaded = answers(float("inf"))
    assert not loaded
    in_memory, loaded = answers(0.0)
    assert loaded
    assert in_memory == from_statements


def test_a_reader_loads_the_graph_only_once_its_walks_have_cost_as_much(indexed_shop, monkeypatch):
    repo, _ = indexed_shop
    threshold = kuzu_store.RESIDENT_AFTER
    monkeypatch.setattr(kuzu_store, "RESIDENT_AFTER", float("inf"))
    with open_index(repo) as index:
        index.explain("how is a failed payment retried?")  # a one-shot command: some ms of walks
        one_shot = index.store._walked
        # far below the threshold, on a loaded machine too (the walks' time is wall time)
        assert index.store._resident is None and 0 < one_shot < threshold / 5
        monkeypatch.setattr(kuzu_store, "RESIDENT_AFTER", 4 * one_shot)  # what a few commands cost
        for _ in range(200):
            if index.store._resident is not None:
                break
            index.explain("how are coupons validated?")
        assert index.store._resident is not None


@pytest.mark.parametrize("failure", [RuntimeError("Buffer manager exception"), MemoryError()])
def test_a_graph_that_cannot_be_loaded_leaves_the_statements(indexed_shop, monkeypatch, failure, caplog):
    repo, _ = indexed_shop

    def fail(read):
        raise failure

    monkeypatch.setattr(kuzu_store, "Resident", fail)
    monkeypatch.setattr(kuzu_store, "RESIDENT_AFTER", 0.0)
    with open_index(repo) as index:
        before = _walks(index.store, _ids(index.store)[:20])
        assert index.store._resident is None
        assert _walks(index.store, _ids(index.store)[:20]) == before
    assert "cannot hold it in memory" in caplog.text
