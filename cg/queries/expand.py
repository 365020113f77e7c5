"""Breadth-first expansion over CALLS from a set of seeds, callers and callees separately, with a
depth cap and a per-node fan-out cap so that a hub (a logger, a base class) cannot flood an answer.
Precise edges are preferred when a fan-out must be cut: in-repo definitions before externals,
scope/import/self resolutions before looser ones, then source order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cg.graph.store import CallRow, GraphStore

_RESOLUTION_ORDER = {"jedi": 0, "import": 1, "name": 2, "unique": 3, "ambiguous": 9, "unresolved": 9}


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


def _priority(row: CallRow) -> tuple:
    return (row.other_label != "Symbol", _RESOLUTION_ORDER.get(row.resolved_by, 4), row.line, row.other["id"])


def expand(
    store: GraphStore,
    seeds: list[str],
    direction: str,
    depth: int = 2,
    fanout: int = 6,
    include_external: bool = False,
) -> list[Step]:
    """Nodes reachable from ``seeds`` along CALLS (``direction`` 'in' = callers, 'out' = callees)."""
    seen = set(seeds)
    frontier = list(seeds)
    steps: list[Step] = []
    for level in range(1, depth + 1):
        if not frontier:
            break
        rows = store.calls(frontier, direction)
        by_origin: dict[str, list[CallRow]] = {}
        for row in rows:
            origin = row.src if direction == "out" else row.dst
            by_origin.setdefault(origin, []).append(row)
        next_frontier: list[str] = []
        for origin in frontier:
            candidates = sorted(by_origin.get(origin, []), key=_priority)
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
