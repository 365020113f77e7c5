"""``cg callers`` / ``cg callees``: who calls a definition, or what it calls, a few hops out, as a tree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cg.graph.store import GraphReader
from cg.queries.expand import Step, expand
from cg.queries.lookup import citation
from cg.queries.unwrap import for_answers

_STORED_ONLY = ("file_kind",)  # read for ranking, not part of the answer


@dataclass(frozen=True)
class Neighbours:
    """The callers (direction 'in') or callees ('out') of ``symbol``, breadth first."""

    symbol: dict[str, Any]
    direction: str
    depth: int
    steps: list[Step]

    @property
    def key(self) -> str:
        return "callers" if self.direction == "in" else "callees"

    def as_dict(self) -> dict[str, Any]:
        return {
            "symbol": {k: v for k, v in self.symbol.items() if k not in _STORED_ONLY},
            self.key: [
                {
                    "id": s.id,
                    "qualname": s.node.get("qualname"),
                    "kind": s.node.get("kind"),
                    "path": s.node.get("path"),
                    "start_line": s.node.get("start_line"),
                    "end_line": s.node.get("end_line"),
                    "citation": citation(s.node),
                    "depth": s.depth,
                    "via": s.via,
                    "line": s.line,
                    "resolved_by": s.resolved_by,
                    "label": s.label,
                }
                for s in self.steps
            ],
        }


def neighbours(
    store: GraphReader, symbol: dict[str, Any], direction: str, depth: int = 1, limit: int = 50
) -> Neighbours:
    """Callers ('in') or callees ('out', external targets included) of ``symbol`` up to ``depth`` hops,
    at most ``limit`` per definition."""
    store = for_answers(store)  # calls seen through decorator wrappers (cg/queries/unwrap.py)
    steps = expand(store, [symbol["id"]], direction, depth=depth, fanout=limit, include_external=direction == "out")
    return Neighbours(symbol, direction, depth, steps)


def render_neighbours(result: Neighbours) -> str:
    """The symbol, then each caller or callee indented under the definition it was reached from."""
    match = result.symbol
    lines = [
        f"{match['qualname']} {citation(match)}: {len(result.steps)} {result.key}"
        + (f" within {result.depth} hops" if result.depth > 1 else "")
    ]
    children: dict[str, list[Step]] = {}
    for s in result.steps:
        children.setdefault(s.via, []).append(s)
    verb = "calls it" if result.direction == "in" else "called"

    def show(parent: str, indent: int) -> None:
        for s in children.get(parent, []):
            lines.append(
                f"{'  ' * indent}{s.node.get('qualname') or s.id} {citation(s.node)}"
                f" ({verb} at line {s.line}, {s.resolved_by})"
            )
            show(s.id, indent + 1)

    show(match["id"], 1)
    return "\n".join(lines)
