"""A read-only generation's call graph held in memory, for a reader that asks many questions.

Why: an explain on Django ran about 140 statements, and Kùzu 0.11.3 answers a read of nodes or edges
by a list of ids by scanning the table (a few milliseconds each, growing with the list: see
``KuzuStore._read_by_ids``), so the walks (callers, callees, caller counts, bases, members, summaries)
cost about 200 of its 450 ms. A generation never changes once it is current (cg/graph/generations.py),
so a reader may hold its graph in memory and answer those walks from dicts. Loading it costs four
scans (Django's 45,000 definitions and 142,000 calls: 1.4 s and about 180 MB, the summaries most of
it; each node's summary is one dict its rows share), which a single ``cg explain`` in the CLI would
pay for nothing; so a reader loads it only once the walks it has run have cost as much as loading would (the
ski-rental rule: never worse than twice the better choice made in hindsight). A long session (``cg
mcp``, the API in a notebook, the latency benchmark's warm process) crosses that after a few answers;
a one-shot command never does. A resident graph answers exactly what the statements answer, in the
same order per id: ``tests/graph/test_resident.py`` compares them over every definition of a fixture.
The vectors and texts stay in Kùzu: reading them all through the Python driver costs seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cg.graph import cypher as q
from cg.graph.cypher_store import call_end, call_order, member_order  # the rows the statements give
from cg.graph.store import SUMMARY_FIELDS, CallRow, grouped
from cg.model import CONTAINER_KINDS

Read = Callable[[str], list[list[Any]]]
CALL_END_FIELDS = ("name", "qualname", "kind", "path", "start_line", "end_line", "signature", "file_kind")


class Resident:
    """Summaries and CALLS, INHERITS and DEFINES edges of one generation, keyed by id."""

    def __init__(self, read: Read) -> None:
        self.summaries = {row[0]: dict(zip(SUMMARY_FIELDS, row, strict=True)) for row in read(q.RESIDENT_SUMMARIES)}
        externals = dict(read(q.RESIDENT_EXTERNALS))
        ends: dict[str, dict[str, Any]] = {}  # one dict per node, shared by its rows (Django: 140k calls)

        def end(node_id: str, label: str) -> dict[str, Any]:
            if node_id not in ends:
                node = self.summaries.get(node_id) if label == "Symbol" else None
                if node is None:
                    ends[node_id] = call_end(node_id, externals.get(node_id))
                else:
                    ends[node_id] = call_end(node_id, *(node[f] for f in CALL_END_FIELDS))
            return ends[node_id]

        self.callees: dict[str, list[CallRow]] = {}
        self.callers: dict[str, list[CallRow]] = {}
        for src, dst, line, resolved_by, labels in read(q.RESIDENT_CALLS):
            label = labels if isinstance(labels, str) else labels[0]
            line, resolved_by = int(line or 0), resolved_by or ""
            self.callees.setdefault(src, []).append(CallRow(src, dst, line, resolved_by, end(dst, label), label))
            if label == "Symbol":
                self.callers.setdefault(dst, []).append(CallRow(src, dst, line, resolved_by, end(src, label), label))
        self.bases: dict[str, list[tuple[str, str]]] = {}
        self.subclasses: dict[str, list[tuple[str, str]]] = {}
        for sub, base in read(q.RESIDENT_INHERITS):
            self.bases.setdefault(sub, []).append((sub, base))
            self.subclasses.setdefault(base, []).append((sub, base))
        self.members_of: dict[str, list[str]] = {}
        for parent, member in read(q.RESIDENT_MEMBERS):
            self.members_of.setdefault(parent, []).append(member)
        # the smaller reads an answer makes per question (Django: 4,100 decorations, a statement each
        # 5-6 ms, and class names 15 ms); commits stay in the store, and only which definitions any
        # commit touches is held, so a question about untouched code asks the store nothing
        self.decorations: dict[str, set[tuple[str, str, int]]] = {}
        for decorator, target, line in read(q.RESIDENT_DECORATES):
            self.decorations.setdefault(target, set()).add((decorator, target, int(line or 0)))
        self.containers: dict[str, list[dict[str, Any]]] = {}
        for summary in self.summaries.values():
            if summary["kind"] in CONTAINER_KINDS:
                self.containers.setdefault(summary["name"], []).append(summary)
        self.mentioned_in: dict[str, list[str]] = {}
        for symbol, doc in read(q.RESIDENT_MENTIONS):
            self.mentioned_in.setdefault(symbol, []).append(doc)
        self.touched = {row[0] for row in read(q.RESIDENT_TOUCHED)}

    def symbols(self, ids: list[str], with_text: bool = False) -> dict[str, dict[str, Any]]:
        assert not with_text, "the code itself stays in the store"
        return {i: dict(self.summaries[i]) for i in dict.fromkeys(ids) if i in self.summaries}

    def calls(self, ids: list[str], direction: str) -> list[CallRow]:
        edges = self.callees if direction == "out" else self.callers
        return sorted((row for i in dict.fromkeys(ids) for row in edges.get(i, ())), key=call_order)

    def caller_counts(self, ids: list[str]) -> dict[str, int]:
        counts = {i: len({row.src for row in self.callers.get(i, ())}) for i in dict.fromkeys(ids)}
        return {i: n for i, n in counts.items() if n}

    def inherits(self, ids: list[str], direction: str) -> list[tuple[str, str]]:
        pairs = self.bases if direction == "out" else self.subclasses
        return sorted(pair for i in dict.fromkeys(ids) for pair in pairs.get(i, ()))

    def members(self, ids: list[str]) -> list[dict[str, Any]]:
        found = (dict(self.summaries[m]) for i in dict.fromkeys(ids) for m in self.members_of.get(i, ()))
        return sorted(found, key=member_order)

    def decorators(self, ids: list[str]) -> list[tuple[str, str, int]]:
        return sorted({row for i in dict.fromkeys(ids) for row in self.decorations.get(i, ())})

    def classes_named(self, names: list[str]) -> list[dict[str, Any]]:
        found = (dict(s) for name in dict.fromkeys(names) for s in self.containers.get(name, ()))
        return sorted(found, key=lambda s: (s["qualname"], s["id"]))

    def docs_mentioning(self, ids: list[str]) -> dict[str, list[str]]:
        rows = sorted(((i, d) for i in dict.fromkeys(ids) for d in self.mentioned_in.get(i, ())), key=lambda r: r[1])
        return grouped(rows)
