"""``cg path A B``: the shortest call chains from A to B (up to k), each hop cited.

The search walks backwards from B over its callers (one store round trip per level) and records
every caller's distance to B; then the paths are enumerated forwards from A, best first by length
and, among equal lengths, by the precision of their edges, stepping only onto nodes whose distance
to B still fits the depth limit. The backward walk stops ``SLACK`` levels after it meets A and is
bounded by ``max_depth`` and ``MAX_NODES``, so a hub far from B cannot make the answer slow.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

from cg.graph.store import CallRow, GraphReader
from cg.model import edge_rank
from cg.queries.expand import callers_with_dispatch
from cg.queries.lookup import citation
from cg.queries.unwrap import for_answers

MAX_NODES = 20000
SLACK = 2  # alternatives up to this many calls longer than the shortest path are looked for


@dataclass(frozen=True)
class Hop:
    src: str
    dst: str
    line: int
    resolved_by: str


@dataclass
class CallPath:
    nodes: list[dict[str, Any]]
    hops: list[Hop]

    def as_dict(self) -> dict[str, Any]:
        return {
            "length": len(self.hops),
            "nodes": [{"id": n["id"], "qualname": n.get("qualname"), "citation": citation(n)} for n in self.nodes],
            "hops": [{"src": h.src, "dst": h.dst, "line": h.line, "resolved_by": h.resolved_by} for h in self.hops],
        }


@dataclass(frozen=True)
class Paths:
    """The answer to ``cg path``: the call paths from ``source`` to ``target``, shortest first."""

    source: dict[str, Any]
    target: dict[str, Any]
    paths: list[CallPath]

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source["id"], "target": self.target["id"], "paths": [p.as_dict() for p in self.paths]}


def call_paths(
    store: GraphReader, source: dict[str, Any], target: dict[str, Any], k: int = 3, max_depth: int = 6
) -> list[CallPath]:
    """Up to ``k`` shortest call chains from ``source`` to ``target`` (nodes from ``resolve_symbol``),
    at most ``max_depth`` calls long, best first."""
    store = for_answers(store)  # calls seen through decorator wrappers (cg/queries/unwrap.py)
    src, dst = source["id"], target["id"]
    if src == dst:
        return [CallPath([source], [])]
    distance = {dst: 0}
    into: dict[str, list[CallRow]] = {}  # caller -> its call rows into nodes that lead to B
    summaries: dict[str, dict[str, Any]] = {src: source, dst: target}
    frontier = [dst]
    horizon = max_depth
    for level in range(1, max_depth + 1):
        if not frontier or level > horizon or len(distance) > MAX_NODES:
            break
        nxt = []
        for row in callers_with_dispatch(store, frontier):
            into.setdefault(row.src, []).append(row)
            summaries.setdefault(row.src, row.other)
            if row.src not in distance:
                distance[row.src] = level
                nxt.append(row.src)
        if src in distance and horizon == max_depth and k > 1:
            horizon = min(max_depth, level + SLACK)  # room for the next-shortest alternatives
        elif src in distance and k == 1:
            break
        frontier = nxt
    if src not in distance:
        return []
    # Only edges fetched by the backward walk are followed: paths at most SLACK calls longer than the
    # shortest one, within max_depth.
    found: list[CallPath] = []
    queue: list[tuple[int, int, list[str], list[Hop]]] = [(distance[src], 0, [src], [])]
    while queue and len(found) < k:
        _, cost, trail, hops = heapq.heappop(queue)
        here = trail[-1]
        if here == dst:
            found.append(CallPath([summaries[n] for n in trail], hops))
            continue
        for row in sorted(into.get(here, []), key=lambda r: (edge_rank(r.resolved_by), r.line)):
            nxt_node = row.dst
            if nxt_node in trail or nxt_node not in distance:
                continue
            length = len(hops) + 1
            if length + distance[nxt_node] > max_depth:
                continue
            hop = Hop(here, nxt_node, row.line, row.resolved_by)
            heapq.heappush(
                queue,
                (length + distance[nxt_node], cost + edge_rank(row.resolved_by), [*trail, nxt_node], [*hops, hop]),
            )
    return found


def render_paths(result: Paths) -> str:
    source, target, paths = result.source, result.target, result.paths
    head = f"# Call paths from {source['qualname']} to {target['qualname']}"
    if not paths:
        return f"{head}\n\nNo call path from {source['qualname']} to {target['qualname']} in the index."
    out = [head, ""]
    for number, path in enumerate(paths, start=1):
        out.append(f"{number}. {len(path.hops)} call{'s' if len(path.hops) != 1 else ''}:")
        out.append(f"   {path.nodes[0].get('qualname')} {citation(path.nodes[0])}")
        for hop, node in zip(path.hops, path.nodes[1:], strict=True):
            out.append(f"   -> {node.get('qualname')} {citation(node)} (line {hop.line}, {hop.resolved_by})")
    return "\n".join(out)
