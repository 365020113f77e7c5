"""The per-answer memo over the reader: the same answers as the store's own reads, fewer statements."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from cg.queries import explain as explain_module
from cg.queries import impact as impact_module
from cg.queries import search as search_module
from cg.queries.explain import explain
from cg.queries.impact import impact
from cg.queries.memo import Memo
from cg.queries.unwrap import unwrap


class Counting:
    """A reader that counts the ids each per-id read is asked for."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.asked: Counter[tuple[str, str]] = Counter()
        self.statements = 0

    def __getattr__(self, name: str) -> Any:
        read = getattr(self.store, name)

        def counted(ids: list[str], *args: Any, **kwargs: Any) -> Any:
            self.statements += 1
            for i in ids:
                self.asked[(name, i)] += 1
            return read(ids, *args, **kwargs)

        per_id = ("symbols", "calls", "inherits", "members", "decorators", "caller_counts")
        return counted if name in per_id else read


def _definitions(store) -> list[dict[str, Any]]:
    _, rows = store.cypher("MATCH (n:Symbol) WHERE n.kind IN ['function', 'method', 'class'] RETURN n.id ORDER BY n.id")
    return list(store.symbols([r[0] for r in rows], with_text=False).values())


def test_impact_through_the_memo_answers_as_the_store_does(ctx, monkeypatch):
    store, _ = ctx
    symbols = _definitions(store)
    assert len(symbols) > 100
    remembered = [impact(store, s).as_dict() for s in symbols]
    monkeypatch.setattr(impact_module, "for_answers", unwrap)  # every read goes to the store
    plain = [impact(store, s).as_dict() for s in symbols]
    assert remembered == plain
    assert any(a["callers"] for a in plain) and any(a["tests"] for a in plain)


def test_the_memo_asks_the_store_once_per_id_and_read(ctx):
    store, _ = ctx
    counting = Counting(store)
    memo = Memo(counting)  # type: ignore[arg-type]
    method = next(s for s in _definitions(store) if s["kind"] == "method")
    ids = [method["id"], method["parent_id"]]
    first = (memo.symbols(ids, with_text=False), memo.calls(ids, "in"), memo.members([method["parent_id"]]))
    again = (memo.symbols(ids[::-1], with_text=False), memo.calls(ids, "in"), memo.members([method["parent_id"]]))
    assert first == (store.symbols(ids, with_text=False), store.calls(ids, "in"), store.members([method["parent_id"]]))
    assert again[0] == first[0] and again[1:] == first[1:]
    assert max(counting.asked.values()) == 1 and counting.statements == 3
    memo.calls(ids, "out")  # another direction is another read
    assert counting.statements == 4
    assert memo.find_symbols(method["name"]) == store.find_symbols(method["name"])  # passes through


@pytest.mark.parametrize("direction", ["in", "out"])
def test_an_id_with_nothing_is_remembered_as_nothing(ctx, direction):
    store, _ = ctx
    counting = Counting(store)
    memo = Memo(counting)  # type: ignore[arg-type]
    assert memo.inherits(["no/such.py::Nothing"], direction) == []
    assert memo.inherits(["no/such.py::Nothing"], direction) == []
    assert counting.statements == 1


def test_explain_and_search_through_the_memo_answer_as_the_store_does(ctx, monkeypatch):
    """An answer read through the memo is the answer read straight from the store, with fewer reads."""
    store, embedder = ctx
    questions = ["how is a failed payment retried?", "what calls compute_backoff?", "how are coupons validated?"]
    counting = Counting(store)
    remembered = [explain(counting, embedder, q).as_dict() for q in questions]  # type: ignore[arg-type]
    asked_once = counting.statements
    monkeypatch.setattr(explain_module, "for_answers", unwrap)  # wrappers seen through, nothing remembered
    monkeypatch.setattr(search_module, "for_answers", unwrap)
    counting = Counting(store)
    plain = [explain(counting, embedder, q).as_dict() for q in questions]  # type: ignore[arg-type]
    assert remembered == plain
    assert all(answer["nodes"] for answer in plain)
    assert asked_once < counting.statements


def test_caller_counts_through_the_memo(ctx):
    store, _ = ctx
    counting = Counting(store)
    memo = Memo(counting)  # type: ignore[arg-type]
    ids = [s["id"] for s in _definitions(store)][:40]
    assert memo.caller_counts(ids) == store.caller_counts(ids)
    assert memo.caller_counts(ids[::-1] + ["no/such.py::nothing"]) == store.caller_counts(ids)
    assert counting.statements == 2 and counting.asked[("caller_counts", ids[0])] == 1
