"""``cg changes [REV]``: what a diff touches and what it may break, the question a reviewer (or an
agent) asks before a commit.

The changed definitions come from the diff itself (cg/ingest/changes.py parses both sides). For each
one the index knows, ``impact``'s walk runs (callers by distance and edge confidence, the fixture and
registry rules, tests searched deeper): its callers and tests are merged over all the changed
definitions, each kept at its smallest distance and, at equal distance, through the most precise
chain, with the changed definitions it reaches. A caller that is itself changed is listed as changed,
not as a caller.

Flows are where the affected call chains start: among the changed definitions and their callers,
those no code outside the tests calls (a route, a command, ``main``, or a public function), named
with ``cg explain``'s entry kinds. They are ranked by kind (routes and commands first), then distance.

Ranking of the changed definitions: the ones that reach the most callers and tests first (the largest
blast radius), then by place.

The index is the one of the last ``cg index``: when a file involved (changed, or holding a caller) is
not what the index holds, the answer says so (``stale``), since its callers are the ones of that
index (a caller the edit added is not among them yet).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cg.graph.store import GraphReader
from cg.model import edge_rank
from cg.queries.explain import _ENTRY_RANK, _ENTRY_TEXT, decorators, entry_kind
from cg.queries.impact import Affected, impact
from cg.queries.lookup import citation, cited, is_test, short_id

MAX_WALKED = 200  # changed definitions whose callers are walked (a large diff lists the rest without)


@dataclass
class Reached:
    """A caller or test, at its best distance from the change, and the changed definitions it reaches."""

    affected: Affected
    reaches: list[str] = field(default_factory=list)  # changed definition ids

    def as_dict(self) -> dict[str, Any]:
        return {**self.affected.as_dict(), "reaches": self.reaches}


@dataclass
class Flow:
    node: dict[str, Any]
    entry: str  # route | cli | main | public | uncalled (cg explain's kinds)
    depth: int  # 0: a changed definition itself
    reaches: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            **cited(self.node),
            "entry": self.entry,
            "depth": self.depth,
            "reaches": self.reaches,
        }


@dataclass
class Changed:
    node: dict[str, Any]
    status: str  # added | removed | modified
    lines: int
    indexed: bool  # the index holds it (so its callers are known)
    callers: int = 0
    tests: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            **cited(self.node),
            "status": self.status,
            "changed_lines": self.lines,
            "indexed": self.indexed,
            "callers": self.callers,
            "tests": self.tests,
        }


@dataclass
class Changes:
    base: str
    target: str
    depth: int
    files: dict[str, str]
    changed: list[Changed] = field(default_factory=list)
    callers: list[Reached] = field(default_factory=list)
    tests: list[Reached] = field(default_factory=list)
    flows: list[Flow] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # files involved whose content the index does not hold
    indexed_at: str | None = None
    truncated: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "target": self.target,
            "depth": self.depth,
            "files": [{"path": p, "status": s} for p, s in sorted(self.files.items())],
            "changed": [c.as_dict() for c in self.changed],
            "callers": [r.as_dict() for r in self.callers],
            "flows": [f.as_dict() for f in self.flows],
            "tests": [r.as_dict() for r in self.tests],
            "unparsed": self.unparsed,
            "stale": self.stale,
            "indexed_at": self.indexed_at,
            "truncated": self.truncated,
        }


def _better(a: Affected, b: Affected) -> bool:
    return (a.depth, edge_rank(a.weakest), a.line) < (b.depth, edge_rank(b.weakest), b.line)


def _merge(into: dict[str, Reached], found: list[Affected], source: str, changed_ids: set[str]) -> None:
    for a in found:
        sid = a.node["id"]
        if sid in changed_ids:
            continue
        current = into.get(sid)
        if current is None:
            into[sid] = Reached(a, [source])
            continue
        if source not in current.reaches:
            current.reaches.append(source)
        if _better(a, current.affected):
            current.affected = a


def _rank(r: Reached) -> tuple:
    a = r.affected
    return (a.depth, edge_rank(a.weakest), -len(r.reaches), a.node.get("path") or "", a.line)


def changes(
    store: GraphReader,
    base: str,
    target: str,
    files: dict[str, str],
    definitions: list[dict[str, Any]],
    statuses: dict[str, tuple[str, int]],
    depth: int = 3,
    unparsed: list[str] | None = None,
    on_disk: Callable[[str], str | None] | None = None,
) -> Changes:
    """What the changed ``definitions`` (nodes as the diff has them; ``statuses``: id -> (status,
    changed lines)) reach in the index: callers up to ``depth``, tests, flows. ``on_disk(path)`` is a
    file's blob sha in the working tree, to tell which files the index is older than."""
    result = Changes(base, target, depth, files, unparsed=unparsed or [], indexed_at=store.get_meta("indexed_at"))
    ids = [d["id"] for d in definitions]
    known = store.symbols(ids, with_text=False)
    changed_ids = set(ids)
    callers: dict[str, Reached] = {}
    tests: dict[str, Reached] = {}
    per_def: dict[str, tuple[int, int]] = {}
    walked = 0
    for d in definitions:
        node = known.get(d["id"])
        if node is None:
            continue
        if walked >= MAX_WALKED:
            result.truncated = True
            continue
        walked += 1
        found = impact(store, node, depth=depth)
        result.truncated |= found.truncated
        _merge(callers, found.callers, d["id"], changed_ids)
        _merge(tests, found.tests, d["id"], changed_ids)
        per_def[d["id"]] = (len(found.callers), len(found.tests))
    for d in definitions:
        status, lines = statuses[d["id"]]
        n_callers, n_tests = per_def.get(d["id"], (0, 0))
        result.changed.append(Changed(d, status, lines, d["id"] in known, n_callers, n_tests))
    result.changed.sort(key=lambda c: (-(c.callers + c.tests), c.node.get("path") or "", c.node.get("start_line") or 0))
    result.callers = sorted(callers.values(), key=_rank)
    result.tests = sorted(tests.values(), key=_rank)
    result.flows = _flows(store, result, known)
    result.stale = _stale(store, result, on_disk)
    return result


def _flows(store: GraphReader, result: Changes, known: dict[str, dict[str, Any]]) -> list[Flow]:
    """The changed definitions and callers that no code outside the tests calls: where the affected
    call chains start (see the module docstring)."""
    depth = {c.node["id"]: 0 for c in result.changed if c.indexed and not is_test(c.node)}
    reaches = {i: [i] for i in depth}
    for r in result.callers:
        depth[r.affected.node["id"]] = r.affected.depth
        reaches[r.affected.node["id"]] = r.reaches
    called = {row.dst for row in store.calls(sorted(depth), "in") if not is_test(row.other)}
    roots = sorted(i for i in depth if i not in called)
    nodes = store.symbols(roots)
    flows = []
    for i in roots:
        node = nodes.get(i) or known.get(i)
        if node is None:
            continue
        flows.append(Flow(node, entry_kind(node, decorators(node.get("text") or ""), 0), depth[i], reaches[i]))
    flows.sort(key=lambda f: (_ENTRY_RANK[f.entry], f.depth, f.node.get("path") or "", f.node.get("start_line") or 0))
    return flows


def _stale(store: GraphReader, result: Changes, on_disk: Callable[[str], str | None] | None) -> list[str]:
    if on_disk is None:
        return []
    indexed = store.file_shas()
    paths = set(result.files) | {r.affected.node.get("path") for r in result.callers + result.tests}
    return sorted(p for p in paths if p and indexed.get(p) != on_disk(p))


def render_changes(result: Changes) -> str:
    what = f"{result.target} against {result.base}" if result.target == "working tree" else f"{result.base}..HEAD"
    files = len(result.files)
    defs = len(result.changed)
    out = [
        f"# Changes: {what} ({files} file{'s' if files != 1 else ''}, {defs} definition{'s' if defs != 1 else ''})",
        "",
    ]
    several = defs > 1

    def reaches(r: Reached) -> str:
        return f"; reaches {', '.join(short_id(s) for s in r.reaches)}" if several else ""

    if not result.files:
        out.append("No changes.")
        return "\n".join(out)
    out.append(f"Changed definitions: {len(result.changed)}")
    for c in result.changed:
        reach = (
            f"reaches {c.callers} caller{'s' if c.callers != 1 else ''}, {c.tests} test{'s' if c.tests != 1 else ''}"
            if c.indexed
            else "not in the index (callers unknown until `cg index`)"
        )
        out.append(
            f"  - {c.status} {c.node.get('qualname')} ({c.node.get('kind')}) {citation(c.node)},"
            f" {c.lines} changed line{'s' if c.lines != 1 else ''}; {reach}"
        )
    if result.unparsed:
        out.append(f"  other changed files (not code): {', '.join(result.unparsed)}")
    out.append("")
    out.append(f"Callers within {result.depth} hops: {len(result.callers)}")
    for r in result.callers:
        a = r.affected
        how = a.resolved_by + (f", weakest on the path: {a.weakest}" if a.weakest != a.resolved_by else "")
        out.append(
            f"  {a.depth}. {a.node.get('qualname')} {citation(a.node)} calls {short_id(a.via)} at line {a.line}"
            f" ({how}){reaches(r)}"
        )
    out.append("")
    out.append(f"Flows (where the affected call chains start): {len(result.flows)}")
    for f in result.flows:
        hops = "changed itself" if f.depth == 0 else f"{f.depth} hop{'s' if f.depth > 1 else ''} up"
        out.append(f"  - {f.node.get('qualname')} {citation(f.node)}: {_ENTRY_TEXT[f.entry]} ({hops})")
    out.append("")
    out.append(f"Tests that reach it: {len(result.tests)}")
    for r in result.tests:
        a = r.affected
        out.append(
            f"  - {a.node.get('qualname')} {citation(a.node)} ({a.depth} hop{'s' if a.depth > 1 else ''}){reaches(r)}"
        )
    if result.truncated:
        out.append(f"  (walked the callers of the first {MAX_WALKED} changed definitions only)")
    if result.stale:
        shown = ", ".join(result.stale[:5]) + (f" and {len(result.stale) - 5} more" if len(result.stale) > 5 else "")
        out.append("")
        out.append(
            f"Index ({result.indexed_at or 'never'}) is older than {len(result.stale)} of these files ({shown}):"
            " callers and tests are as of that index; run `cg index` (or keep `cg watch` running)."
        )
    return "\n".join(out)
