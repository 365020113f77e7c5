"""Calls seen through decorator wrappers, for the answers people read.

The graph records calls as they run (the conventions of the PyCG micro-benchmark, docs/callgraph.md):
``self.add_url_rule(...)`` on a method that ``@setupmethod`` decorates runs ``setupmethod``'s nested
``wrapper_func``, and ``wrapper_func``'s ``f(self, *args, **kwargs)`` runs every function
``setupmethod`` decorates. That is what executes, but read as an answer it is a hub: in Flask 44
registration methods share one wrapper, so ``cg callers Scaffold.add_url_rule`` found the wrapper
alone, and an explain of blueprint registration walked from ``Flask.__init__`` into the wrapper and
out to ``get``, ``post``, ``put`` and ``delete``.

``unwrap`` reads the same graph with each hop through such a wrapper replaced by the call its caller
wrote: a row from caller ``C`` to wrapper ``W`` becomes ``C -> X`` when ``W`` is defined inside
(at most two levels below) a decorator of ``X``, ``W`` calls ``X``, and ``C``'s line of the call
names ``X`` (``self.add_url_rule(`` names ``add_url_rule``); the row keeps ``C``'s line and how
that call was resolved. A hop whose line names none of the wrapped functions stays as it is (a
decorator used as a callback, a registry), so nothing the graph holds is lost, only re-pointed.
Callers of ``X`` through ``W`` are found the same way from the other side: the callers of ``W``
whose line names ``X``, or names none of ``W``'s wrapped functions (they may reach any), become
callers of ``X``; a caller whose line names another wrapped function does not reach ``X``, and ``W``
itself is no caller of ``X`` unless nothing calls it (a wrapper kept in a registry). Before, ``W``
stayed as ``X``'s caller whenever no caller named ``X``, and every caller of ``W`` came with it: in
Flask, ``cg impact Scaffold.post`` listed 326 tests, 325 of which never run it (every test that
registers anything through a ``@setupmethod``; benchmarks/impact_tests.py). The graph itself is not
changed: the call-graph benchmarks score what runs, and ``cg cypher`` shows it.
"""

from __future__ import annotations

import re
from typing import Any, cast

from cg.graph.store import CallRow, GraphReader
from cg.queries.lookup import source_line
from cg.queries.memo import Memo, memo

_LEVELS = 2  # a wrapper's enclosing decorator: its parent (``def deco(f): def wrapper``) or grandparent (a factory)


def unwrap(store: GraphReader) -> GraphReader:
    """``store`` read with calls through decorator wrappers re-pointed (see the module docstring)."""
    return store if isinstance(store, Unwrapped) else cast(GraphReader, Unwrapped(store))


def _names(line: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?!\w)", line) is not None


def _nested(node: dict[str, Any]) -> bool:
    """A function defined inside another definition (its id's name part is dotted): only such a
    function can be a decorator's wrapper, and the test costs no read."""
    return node.get("kind") == "function" and "." in str(node.get("id", "")).partition("::")[2]


class Unwrapped:
    """``store`` with ``calls`` seen through decorator wrappers; every other read is the store's own."""

    def __init__(self, store: GraphReader) -> None:
        self._store = store
        self._parents: dict[str, str | None] = {}  # wrapped function -> its class

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def calls(self, ids: list[str], direction: str) -> list[CallRow]:
        rows = self._store.calls(ids, direction)
        # the wrapper is the end the rows do not share: the caller ('in') or the callee ('out')
        candidates = [r for r in rows if r.other_label == "Symbol" and _nested(r.other)]
        if not candidates:
            return rows
        wrapped = self._wrapped(sorted({r.src if direction == "in" else r.dst for r in candidates}))
        if direction == "in":
            through = [r for r in candidates if any(o.dst == r.dst for o in wrapped.get(r.src, []))]
        else:
            through = [r for r in candidates if r.dst in wrapped]
        if not through:
            return rows
        skip = {id(r) for r in through}
        out = [r for r in rows if id(r) not in skip]
        if direction == "out":
            lines = self._lines(through)
            for r in through:
                reached = self._reached(lines[(r.src, r.line)], wrapped[r.dst])
                out += [CallRow(r.src, o.dst, r.line, r.resolved_by, o.other, o.other_label) for o in reached] or [r]
        else:
            outer = [o for o in self._store.calls(sorted({r.src for r in through}), "in") if o.other_label == "Symbol"]
            lines = self._lines(outer)
            for r in through:
                found: list[CallRow] = []
                callers = [o for o in outer if o.dst == r.src]
                for o in callers:
                    named = {w.dst for w in self._reached(lines[(o.src, o.line)], wrapped[r.src])}
                    if r.dst in named or not named:  # names it, or names none of the wrapped functions
                        found.append(CallRow(o.src, r.dst, o.line, o.resolved_by, o.other, o.other_label))
                out += found if callers else [r]
        unique = {(r.src, r.line, r.dst, r.resolved_by): r for r in out}  # CallRow holds a dict: no hash
        return [unique[k] for k in sorted(unique, key=lambda k: (k[0], k[1], k[2]))]

    # -- helpers ---------------------------------------------------------------------------------
    def _wrapped(self, functions: list[str]) -> dict[str, list[CallRow]]:
        """For each of ``functions`` that is a wrapper: its call rows into the functions it wraps (those
        a decorator enclosing it, up to ``_LEVELS`` up, decorates)."""
        nodes = self._store.symbols(functions, with_text=False)
        enclosing: dict[str, set[str]] = {i: set() for i in nodes}
        current = {i: n.get("parent_id") for i, n in nodes.items() if n.get("kind") == "function"}
        for _ in range(_LEVELS):
            parents = self._store.symbols(sorted({p for p in current.values() if p}), with_text=False)
            nxt = {}
            for i, p in current.items():
                parent = parents.get(p or "")
                if parent is not None and parent.get("kind") in ("function", "method"):
                    enclosing[i].add(parent["id"])
                    nxt[i] = parent.get("parent_id")
            current = nxt
        wrappers = sorted(i for i, outer in enclosing.items() if outer)
        if not wrappers:
            return {}
        inner = [o for o in self._store.calls(wrappers, "out") if o.other_label == "Symbol"]
        decorated: dict[str, set[str]] = {}
        for decorator, target, _ in self._store.decorators(sorted({o.dst for o in inner})):
            decorated.setdefault(target, set()).add(decorator)
        wrapped: dict[str, list[CallRow]] = {}
        for o in inner:
            if enclosing[o.src] & decorated.get(o.dst, set()):
                wrapped.setdefault(o.src, []).append(o)
        targets = self._store.symbols(sorted({o.dst for rows in wrapped.values() for o in rows}), with_text=False)
        self._parents.update({i: n.get("parent_id") for i, n in targets.items()})
        return wrapped

    def _lines(self, rows: list[CallRow]) -> dict[tuple[str, int], tuple[str, dict[str, int]]]:
        """Per row: the source line of its call site, read from the caller's text, and the classes a
        ``self.`` call there may reach, by distance (the caller's class 0, its bases 1, ...; none for a
        caller outside a class)."""
        texts = self._store.symbols(sorted({r.src for r in rows}), with_text=True)
        out = {}
        lineage: dict[str, dict[str, int]] = {}
        for r in rows:
            node = texts.get(r.src) or {}
            line = source_line(node, r.line)
            cls = node.get("parent_id") if node.get("kind") == "method" else None
            if cls and cls not in lineage:
                lineage[cls] = self._bases(cls)
            out[(r.src, r.line)] = (line, lineage.get(cls or "", {}))
        return out

    def _bases(self, cls: str) -> dict[str, int]:
        """``cls`` and its in-repo bases, transitively, by distance."""
        seen, frontier, level = {cls: 0}, [cls], 0
        while frontier:
            level += 1
            frontier = sorted({base for _, base in self._store.inherits(frontier, "out")} - set(seen))
            seen.update({base: level for base in frontier})
        return seen

    def _reached(self, line: tuple[str, dict[str, int]], wrapped: list[CallRow]) -> list[CallRow]:
        """The wrapped functions a call line names; for ``self.name(...)``, the one nearest the caller's
        class up its hierarchy when any is (``self.add_url_rule`` in ``Flask`` is ``App``'s, not
        ``Scaffold``'s, which ``App`` overrides, nor ``Blueprint``'s)."""
        text, classes = line
        named = [w for w in wrapped if _names(text, w.other.get("name") or "")]
        own = [
            (classes[self._parents.get(w.dst) or ""], w)
            for w in named
            if self._parents.get(w.dst) in classes and f"self.{w.other.get('name')}" in text
        ]
        nearest = min((d for d, _ in own), default=None)
        return [w for d, w in own if d == nearest] if own else named


def for_answers(store: GraphReader) -> GraphReader:
    """The reader one answer walks: calls seen through wrappers, every read remembered for the span of
    the answer (cg/queries/memo.py). A reader that already is one is used as it is."""
    return store if isinstance(store, Memo) else memo(unwrap(store))
