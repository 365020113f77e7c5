"""``cg explain``: how does X work. Seeds from hybrid search, their callers and callees from the
graph, each cited ``[path:start-end]`` with its code, within a token budget that says what it left out.

Ordering: seeds are definitions (functions, methods, classes; tests and module chunks only when
nothing else matches), each followed by its flow: callers above (who reaches it), callees below
(what it does next). Code is spent from the budget in order of usefulness: the first seed, its direct
callers and callees, then deeper steps and the other seeds. What no longer fits is still listed
with its citation, so the reader knows where to look.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cg.graph.embed import Embedder
from cg.graph.store import GraphStore
from cg.ingest.walk import is_test_path
from cg.queries.expand import Step, expand
from cg.queries.search import Hit, search
from cg.queries.sources import Source, related_sources, render_sources

CHARS_PER_TOKEN = 4  # a conservative average for code under BPE/WordPiece tokenizers
_PRIMARY_KINDS = ("function", "method", "class")


def citation(node: dict[str, Any]) -> str:
    if not node.get("path"):
        return "[external]"
    return f"[{node['path']}:{node['start_line']}-{node['end_line']}]"


@dataclass
class Flow:
    seed: Hit
    callers: list[Step]
    callees: list[Step]


@dataclass
class Explanation:
    query: str
    flows: list[Flow]
    code: dict[str, str] = field(default_factory=dict)  # symbol id -> code shown
    omitted: list[dict[str, Any]] = field(default_factory=list)  # definitions cut by the budget
    token_budget: int = 0
    tokens_used: int = 0
    sources: list[Source] = field(default_factory=list)  # doc sections and commits (cg/queries/sources.py)

    def as_dict(self) -> dict[str, Any]:
        def step(s: Step) -> dict[str, Any]:
            return {
                "id": s.id,
                "qualname": s.node.get("qualname"),
                "kind": s.node.get("kind"),
                "path": s.node.get("path"),
                "start_line": s.node.get("start_line"),
                "end_line": s.node.get("end_line"),
                "depth": s.depth,
                "via": s.via,
                "call_line": s.line,
                "resolved_by": s.resolved_by,
                "code": self.code.get(s.id),
            }

        return {
            "query": self.query,
            "flows": [
                {
                    "seed": {**f.seed.as_dict(), "code": self.code.get(f.seed.id)},
                    "callers": [step(s) for s in f.callers],
                    "callees": [step(s) for s in f.callees],
                }
                for f in self.flows
            ],
            "omitted": self.omitted,
            "token_budget": self.token_budget,
            "tokens_used": self.tokens_used,
            "sources": [s.as_dict() for s in self.sources],
        }


def _pick_seeds(hits: list[Hit], count: int) -> list[Hit]:
    def rank(h: Hit) -> int:
        primary = h.symbol["kind"] in _PRIMARY_KINDS
        test = is_test_path(h.symbol["path"])
        return (0 if primary else 2) + (1 if test else 0)

    ordered = sorted(enumerate(hits), key=lambda ih: (rank(ih[1]), ih[0]))
    return [h for _, h in ordered[:count]]


def explain(
    store: GraphStore,
    embedder: Embedder,
    query: str,
    *,
    seeds: int = 3,
    depth: int = 2,
    fanout: int = 6,
    token_budget: int = 6000,
    rrf_k: int = 60,
    weights: dict[str, float] | None = None,
    priors: dict[str, float] | None = None,
) -> Explanation:
    hits = search(store, embedder, query, limit=max(seeds * 4, 12), rrf_k=rrf_k, weights=weights, priors=priors)
    chosen = _pick_seeds(hits, seeds)
    flows: list[Flow] = []
    seed_ids = {h.id for h in chosen}
    placed: set[str] = set()  # non-seed nodes already shown in an earlier flow
    for hit in chosen:
        callers = [s for s in expand(store, [hit.id], "in", depth, fanout) if s.id not in placed]
        callees = [s for s in expand(store, [hit.id], "out", depth, fanout) if s.id not in placed]
        placed.update(s.id for s in (*callers, *callees) if s.id not in seed_ids)
        flows.append(Flow(hit, callers, callees))
    result = Explanation(query, flows, token_budget=token_budget)
    _spend_budget(store, result)
    shown = {f.seed.id: f.seed.symbol["qualname"] for f in flows}
    for flow in flows:
        for step in (*flow.callers, *flow.callees):
            if step.depth == 1 and step.label == "Symbol":
                shown.setdefault(step.id, step.node.get("qualname") or step.id)
    result.sources = related_sources(store, query, embedder.embed([query])[0], shown)
    return result


def _spend_budget(store: GraphStore, result: Explanation) -> None:
    """Tier 0: the first seed and its direct, non-test neighbours; tier 1: the other seeds; tier 2:
    everything else (deeper steps, tests)."""
    tiers: list[list[tuple[str, dict[str, Any]]]] = [[], [], []]
    for index, flow in enumerate(result.flows):
        tiers[0 if index == 0 else 1].append((flow.seed.id, flow.seed.symbol))
        for s in (*flow.callers, *flow.callees):
            near = index == 0 and s.depth == 1 and not is_test_path(s.node.get("path") or "")
            tiers[0 if near else 2].append((s.id, s.node))
    order = [item for tier in tiers for item in tier]
    texts = store.symbols([i for i, _ in order])
    budget = result.token_budget * CHARS_PER_TOKEN
    used = 0
    for sym_id, node in order:
        text = (texts.get(sym_id) or {}).get("text") or ""
        if sym_id in result.code:
            continue
        if used + len(text) <= budget:
            result.code[sym_id] = text
            used += len(text)
        elif not result.code:  # the first seed is always shown: its head, cut at a line boundary
            head = _head(text, budget)
            result.code[sym_id] = head
            used += len(head)
        else:
            result.omitted.append(
                {
                    "id": sym_id,
                    "qualname": node.get("qualname"),
                    "citation": citation(node),
                    "tokens": len(text) // CHARS_PER_TOKEN,
                }
            )
    result.tokens_used = used // CHARS_PER_TOKEN


def _head(text: str, chars: int) -> str:
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in lines:
        if kept and size + len(line) + 1 > chars:
            break
        kept.append(line)
        size += len(line) + 1
    rest = len(lines) - len(kept)
    return "\n".join(kept) + (f"\n# ... {rest} more lines (over the token budget; see the citation)" if rest else "")


def render_markdown(result: Explanation) -> str:
    """Plain text with Markdown code fences: readable in a terminal and pasteable into a chat."""
    out: list[str] = [f"# How it works: {result.query}", ""]
    if not result.flows:
        out.append("No matching definitions. Is the repository indexed (`cg index`)?")
        return "\n".join(out)
    shown: set[str] = set()  # each definition's code is printed once, where it first appears
    for number, flow in enumerate(result.flows, start=1):
        seed = flow.seed.symbol
        out.append(f"## {number}. {seed['qualname']} ({seed['kind']}) {citation(seed)}")
        if seed.get("docstring"):
            out.append(f"> {seed['docstring'].splitlines()[0]}")
        out.append("")
        if flow.callers:
            out.append("Called by (callers of callers indented below each):")
            out.extend(_tree(flow.callers, flow.seed.id, "^", "calls {via} at line {line}"))
        else:
            out.append("Called by: nothing indexed calls it")
        if flow.callees:
            out.append("Calls (what each callee calls indented below it):")
            out.extend(_tree(flow.callees, flow.seed.id, "v", "from {via} line {line}"))
        out.append("")
        for sym_id, node in [(flow.seed.id, seed), *[(s.id, s.node) for s in (*flow.callers, *flow.callees)]]:
            code = result.code.get(sym_id)
            if code is None or sym_id in shown:
                continue
            shown.add(sym_id)
            out.append(f"### {node.get('qualname')} {citation(node)}")
            out.append("```python")
            out.append(code)
            out.append("```")
            out.append("")
    if result.omitted:
        out.append(
            f"Left out to stay within {result.token_budget} tokens ({len(result.omitted)} definitions,"
            " raise --budget to include them):"
        )
        for item in result.omitted:
            out.append(f"  - {item['qualname']} {item['citation']} (~{item['tokens']} tokens)")
    out.extend(render_sources(result.sources))
    return "\n".join(out)


def _tree(steps: list[Step], root: str, mark: str, detail: str) -> list[str]:
    children: dict[str, list[Step]] = {}
    for s in steps:
        children.setdefault(s.via, []).append(s)
    lines: list[str] = []

    def visit(parent: str, indent: int) -> None:
        for s in sorted(children.get(parent, []), key=lambda s: (is_test_path(s.node.get("path") or ""), s.line)):
            info = detail.format(via=_short(s.via), line=s.line)
            lines.append(f"{'  ' * indent}{mark} {s.node.get('qualname')} {citation(s.node)} {info}")
            visit(s.id, indent + 1)

    visit(root, 1)
    return lines


def _short(symbol_id: str) -> str:
    return symbol_id.split("::", 1)[-1]
