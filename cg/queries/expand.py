"""Breadth-first expansion over CALLS from a set of seeds, callers and callees separately, with a
depth cap and a per-node fan-out cap so that a hub (a logger, a base class) cannot flood an answer.
Precise edges are preferred when a fan-out must be cut: in-repo definitions before externals, code
before tests, jedi/import resolutions before bare-name matches, then source order. A caller that knows
better (``cg explain`` ranks callees by their relevance to the question) passes ``relevance``: a score
per candidate, asked once per level for the definitions with more candidates than places, that
orders the candidates after the in-repo and test tiers and before the edge's precision and source
order."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cg.graph.store import CallRow, GraphReader
from cg.model import ResolvedBy, edge_rank
from cg.queries.lookup import is_test, source_line


@dataclass(frozen=True)
class Step:
    """One node reached from the seeds: ``via`` is the node it was reached from."""

    id: str
    depth: int
    via: str
    line: int  # the call site's line (in the caller)
    resolved_by: str
    label: str  # Symbol | External
    node: dict[str, Any]


def _priority(row: CallRow, score: dict[str, float]) -> tuple:
    return (
        row.other_label != "Symbol",
        is_test(row.other),
        -score.get(row.other["id"], 0.0),
        edge_rank(row.resolved_by),
        row.line,
        row.other["id"],
    )


def expand(
    store: GraphReader,
    seeds: list[str],
    direction: str,
    depth: int = 2,
    fanout: int = 6,
    include_external: bool = False,
    relevance: Callable[[list[CallRow]], dict[str, float]] | None = None,
) -> list[Step]:
    """Nodes reachable from ``seeds`` along CALLS (``direction`` 'in' = callers, 'out' = callees);
    ``relevance`` maps candidate rows to a score per node id, higher first (see the module docstring)."""
    seen = set(seeds)
    frontier = list(seeds)
    steps: list[Step] = []
    for level in range(1, depth + 1):
        if not frontier:
            break
        rows = store.calls(frontier, direction) if direction == "out" else callers_with_dispatch(store, frontier)
        by_origin: dict[str, list[CallRow]] = {}
        for row in rows:
            origin = row.src if direction == "out" else row.dst
            by_origin.setdefault(origin, []).append(row)
        crowded: list[CallRow] = []  # only a definition with more candidates than places needs them scored
        for origin in frontier:
            own = [r for r in by_origin.get(origin, []) if include_external or r.other_label == "Symbol"]
            if len(own) > fanout:
                crowded.extend(own)
        score = relevance(crowded) if relevance is not None and crowded else {}
        next_frontier: list[str] = []
        for origin in frontier:
            candidates = sorted(by_origin.get(origin, []), key=lambda r: _priority(r, score))
            taken = 0
            for row in candidates:
                other = row.dst if direction == "out" else row.src
                if other in seen or (row.other_label != "Symbol" and not include_external):
                    continue
                if taken >= fanout:
                    break
                seen.add(other)
                taken += 1
                steps.append(Step(other, level, origin, row.line, row.resolved_by, row.other_label, row.other))
                if row.other_label == "Symbol":
                    next_frontier.append(other)
        frontier = next_frontier
    return steps


def class_closure(store: GraphReader, class_ids: list[str], direction: str, limit: int = 200) -> dict[str, str]:
    """Classes reachable over INHERITS ('in' = subclasses, 'out' = bases), each mapped to the class of
    ``class_ids`` it was reached from."""
    origin = {c: c for c in class_ids}
    frontier = list(class_ids)
    found: dict[str, str] = {}
    while frontier and len(found) < limit:
        nxt = []
        for sub, base in store.inherits(frontier, direction):
            near, far = (base, sub) if direction == "in" else (sub, base)
            if far not in origin:
                origin[far] = origin[near]
                found[far] = origin[near]
                nxt.append(far)
        frontier = nxt
    return found


def related_methods(store: GraphReader, methods: list[dict[str, Any]], direction: str) -> list[tuple[str, dict]]:
    """Methods of the same name up or down the class hierarchy of each method in ``methods``:
    direction 'in' gives the overrides in subclasses (where a call to the method may dispatch),
    'out' the base-class methods it overrides. Returns (method id, related method summary)."""
    by_class: dict[str, list[dict[str, Any]]] = {}
    for m in methods:
        if m.get("kind") == "method" and m.get("parent_id"):
            by_class.setdefault(m["parent_id"], []).append(m)
    if not by_class:
        return []
    classes = class_closure(store, list(by_class), direction)
    out: list[tuple[str, dict]] = []
    for member in store.members(list(classes)):
        for m in by_class[classes[member["parent_id"]]]:
            if member["name"] == m["name"] and member["id"] != m["id"]:
                out.append((m["id"], member))
    return sorted(out, key=lambda pair: (pair[0], pair[1]["id"]))


def _bound_call(line: str, name: str, caller: dict[str, Any]) -> str | None:
    """Where a call into a base-class method is bound, when its line says: "super" for
    ``super().name(``, which runs the next class of the caller's own hierarchy, never an override in
    a class beside it; the caller's class for ``self.name(`` in a method, whose ``self`` is an
    instance of that class, so only an override in it or a subclass of it can run (the resolver
    already stores those as dispatch edges). None otherwise: the receiver may be any subclass.
    Measured on Flask's suite (benchmarks/impact_tests.py): ``Flask.__init__``'s
    ``super().__init__(...)`` made every test that builds an app a caller of ``Blueprint.__init__``."""
    if not name:
        return None
    if re.search(rf"\bsuper\([^)]*\)\s*\.\s*{re.escape(name)}\s*\(", line):
        return "super"
    if caller.get("kind") == "method" and re.search(rf"\b(self|cls)\s*\.\s*{re.escape(name)}\s*\(", line):
        return caller.get("parent_id")
    return None


def callers_with_dispatch(store: GraphReader, ids: list[str]) -> list[CallRow]:
    """The calls into ``ids``, and for each method among them the calls into the base-class methods it
    overrides, as ``dispatch`` rows: a call through the base may run the override. ``cg impact``,
    ``cg path`` and ``cg explain``/``cg callers`` walk callers through this one function, so they agree
    on who may call what. A row the graph already holds (the resolver stores ``self.m()`` in a base
    class as a dispatch edge) is not repeated."""
    rows = store.calls(ids, "in")
    methods = [n for n in store.symbols(ids, with_text=False).values() if n.get("kind") == "method"]
    bases = related_methods(store, methods, "out")
    if not bases:
        return rows
    overriding: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for method_id, base in bases:
        overriding.setdefault(base["id"], []).append(method_id)
        names[base["id"]] = base.get("name") or ""
    seen = {(r.src, r.dst) for r in rows}
    through = store.calls(sorted(overriding), "in")
    callers = store.symbols(sorted({r.src for r in through if r.other_label == "Symbol"}), with_text=True)
    owners = {n["id"]: n.get("parent_id") for n in methods}
    lineage = {cls: {cls, *class_closure(store, [cls], "out")} for cls in {c for c in owners.values() if c}}
    for row in through:
        caller = callers.get(row.src) or {}
        bound = _bound_call(source_line(caller, row.line), names[row.dst], caller)
        for method_id in overriding[row.dst]:
            if bound == "super" or (bound and bound not in lineage.get(owners.get(method_id) or "", set())):
                continue  # the call cannot reach this override (see _bound_call)
            if row.src != method_id and (row.src, method_id) not in seen:
                seen.add((row.src, method_id))
                rows.append(
                    CallRow(row.src, method_id, row.line, ResolvedBy.DISPATCH.value, row.other, row.other_label)
                )
    return rows
