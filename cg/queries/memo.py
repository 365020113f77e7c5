"""A read-through memo over a graph reader for the span of one answer.

A walk such as ``cg impact`` asks the same small questions of the graph again and again: each level
reads its frontier's summaries twice (pytest fixtures, then dispatch through base classes), climbs the
same class hierarchies for every method of a class, and asks which decorators hold each node. Each
is one statement against the store, and on a warm index the statements, not the work inside them, are
the cost (a requests ``impact`` ran forty of them). ``Memo`` answers a question it has answered once
from memory and asks the store only for the ids it has not seen, in one statement as before. It holds
nothing beyond the answer it serves (a new one per answer), so it can never serve a graph a later run
replaced.

Results are keyed per id on the side the statement matches: ``calls(ids, "in")`` by callee,
``inherits(ids, "out")`` by subclass, ``members`` by class, ``decorators`` by the decorated
definition, ``caller_counts`` by callee; an id with no rows is remembered as empty. Every other
reader method passes through. ``search`` and ``explain`` read through one too (``memo``): an explain
on Django asked about the calls of 68 ids of which 37 were distinct.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

from cg.graph.store import CallRow, GraphReader

Row = TypeVar("Row")


def memo(store: GraphReader) -> GraphReader:
    """``store`` read through a ``Memo`` for one answer (itself when it already is one)."""
    return store if isinstance(store, Memo) else cast(GraphReader, Memo(store))


class Memo:
    """``store`` with its per-id reads remembered (see the module docstring)."""

    def __init__(self, store: GraphReader) -> None:
        self._store = store
        self._seen: dict[Hashable, dict[str, list[Any]]] = {}

    def __getattr__(self, name: str) -> Any:  # everything not remembered is the store's own
        return getattr(self._store, name)

    def _per_id(
        self, kind: Hashable, ids: list[str], fetch: Callable[[list[str]], list[Row]], key: Callable[[Row], str]
    ) -> list[Row]:
        seen = self._seen.setdefault(kind, {})
        missing = sorted({i for i in ids if i not in seen})
        if missing:
            for i in missing:
                seen[i] = []
            for row in fetch(missing):
                seen.setdefault(key(row), []).append(row)
        out: list[Row] = []
        for i in dict.fromkeys(ids):  # each id once, in the order asked
            out.extend(seen[i])
        return out

    def symbols(self, ids: list[str], with_text: bool = True) -> dict[str, dict[str, Any]]:
        if with_text:  # the code itself: large, and read once per answer anyway
            return self._store.symbols(ids, with_text=True)
        fetched = self._per_id(
            "symbols", ids, lambda m: list(self._store.symbols(m, with_text=False).values()), lambda n: n["id"]
        )
        return {n["id"]: n for n in fetched}

    def calls(self, ids: list[str], direction: str) -> list[CallRow]:
        near: Callable[[CallRow], str] = (lambda r: r.src) if direction == "out" else (lambda r: r.dst)
        return self._per_id(("calls", direction), ids, lambda m: self._store.calls(m, direction), near)

    def inherits(self, ids: list[str], direction: str) -> list[tuple[str, str]]:
        near: Callable[[tuple[str, str]], str] = (lambda r: r[0]) if direction == "out" else (lambda r: r[1])
        return self._per_id(("inherits", direction), ids, lambda m: self._store.inherits(m, direction), near)

    def members(self, ids: list[str]) -> list[dict[str, Any]]:
        return self._per_id("members", ids, self._store.members, lambda n: n["parent_id"])

    def decorators(self, ids: list[str]) -> list[tuple[str, str, int]]:
        return sorted(self._per_id("decorators", ids, self._store.decorators, lambda r: r[1]))

    def caller_counts(self, ids: list[str]) -> dict[str, int]:
        def fetch(missing: list[str]) -> list[tuple[str, int]]:
            return list(self._store.caller_counts(missing).items())

        return dict(self._per_id("caller_counts", ids, fetch, lambda r: r[0]))
