"""A full run's writes on Kùzu, loaded in bulk: rows gathered in memory and written with ``COPY``.

Why: a full run writes every node into an empty generation, and statement by statement (``UNWIND ...
MERGE`` per file, ``MATCH ... MATCH ... CREATE`` per edge batch) Kùzu spends most of the run keeping
its primary-key and full-text indexes current one row at a time: measured on 453 files of Django
(db and contrib), the MERGE and MATCH-CREATE statements took 25 s of a 32 s write stage, while Kùzu's
own ``COPY`` of the same rows (the compaction's, cg/graph/kuzu_store.py) took 3 s. ``COPY`` reads a
subquery here (``COPY Symbol (...) FROM (UNWIND $rows AS r RETURN ...)``), so the rows travel as a
parameter like every other write, no file and no Arrow library in between, and the full-text indexes,
made on the empty tables first, follow the copied rows (made after a ``COPY`` they crashed the next
update: ``_compact_if_grown``'s docstring).

What keeps it exact, the same graph a statement-by-statement run writes (tests/graph/test_bulk_load.py):

- It holds only while the store contains nothing but what this load wrote: it starts on the empty
  tables of a full run and the store ends it, flushing first, at the first write it cannot take
  (a file that is not new, a delete, vectors set afterwards, pruning). Reads flush the rows first and
  go on, so a read inside the run sees the run's writes.
- ``MERGE`` semantics by hand: a node id seen twice ends the load (the statement path then merges it),
  an External seen again keeps its first row unless the new one differs, and then it is merged on the
  statement path; a TOUCHES pair is made once.
- ``MATCH`` semantics by hand: an edge whose ends were not written is dropped, as the ``MATCH`` of the
  statement path would drop it; ``COPY`` would fail on it instead.
- Node tables are copied before relationship tables at every flush, and rows are flushed every
  ``flush_rows`` so memory stays bounded on a big repository. A row counts once per vector it
  carries on top of itself, ``VECTOR_WEIGHT`` times (``weight``): for what a ``COPY`` costs, a
  vector (as the text the cast parses, cg/graph/kuzu_store.py ``_params``) is the heavy part of a
  row. Measured on a full index of Django whose vectors were all in the cache: a ``COPY`` of 20,000
  definitions with their vectors took the process from 1.3 to 1.9 GB of RSS.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from cg.graph.cypher import EDGE_ENDS, REL_COLUMNS, VECTOR_PROPS
from cg.graph.store import CHUNK_FIELDS, SYMBOL_FIELDS, FileWrite, edge_row, external_rows, file_row
from cg.model import CommitRecord, DocSection, Edge, External

# The columns each node table is copied with, in its schema's names (cg/graph/kuzu_store.py's _schema);
# ``repo`` is the store's key and the vectors are added per group of rows (see _node_copy).
NODE_COLUMNS = {
    "File": ("id", "path", "language", "kind", "blob_sha", "loc", "module", "committed_at"),
    "Symbol": (*SYMBOL_FIELDS, "language", "file_kind", "blob_sha", "committed_at"),  # FileWrite.symbol_rows
    "Chunk": CHUNK_FIELDS,
    "External": ("id", "name", "resolved"),
    "Doc": ("id", "path", "title", "heading", "start_line", "end_line", "text", "search_text"),  # doc_rows
    "Commit": ("id", "short", "author", "committed_at", "subject", "message", "files", "search_text"),
}
NODE_VECTORS = {label: tuple(p for lab, p in VECTOR_PROPS if lab == label) for label in NODE_COLUMNS}
VECTOR_WEIGHT = 3  # what a vector adds to a row's weight (``weight``)
_ALL_VECTORS = frozenset(p for _, p in VECTOR_PROPS)


def weight(rows: list[dict[str, Any]]) -> int:
    """What ``rows`` weigh for a flush: one per row, and ``VECTOR_WEIGHT`` more per vector it carries."""
    return sum(1 + VECTOR_WEIGHT * sum(1 for k in _ALL_VECTORS & row.keys() if row[k] is not None) for row in rows)


class Unbufferable(Exception):
    """A write the load cannot take as it is: the store must end the load and write it by statement."""


class BulkLoad:
    """The rows of a full run not yet copied, and the ids of every node written by it so far."""

    def __init__(self, dimension: int, flush_rows: int) -> None:
        self.dimension = dimension
        self.flush_rows = max(1, flush_rows)
        self.known: dict[str, set[str]] = {label: set() for label in NODE_COLUMNS}
        self._externals: dict[str, dict[str, Any]] = {}  # every External written, by id: its last row
        self._touches: set[tuple[str, str, str]] = set()
        self._nodes: dict[str, list[dict[str, Any]]] = {label: [] for label in NODE_COLUMNS}
        self._rels: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._mentioned: set[str] = set()  # the documents whose MENTIONS this load wrote
        self.pending = 0  # the weight (``weight``) of the rows waiting for the next flush

    # -- what the store hands over ----------------------------------------------------------------
    def add_file(self, write: FileWrite) -> list[dict[str, Any]]:
        """A new file's nodes and edges; the External rows the statement path must merge (a name
        already written with other properties). Unbufferable if one of its node ids was written."""
        rec = write.file
        symbols = write.symbol_rows()
        chunks = write.chunk_rows()
        self._claim("File", [rec.path])
        self._claim("Symbol", [s["id"] for s in symbols])
        self._claim("Chunk", [c["id"] for c in chunks])
        self._add_nodes("File", [{**file_row(rec), "path": rec.path}])
        self._add_nodes("Symbol", symbols)
        self._add_nodes("Chunk", chunks)
        self._add_rels("PART_OF", "Chunk", "Symbol", [{"src": c["id"], "dst": c["owner_id"]} for c in chunks])
        return self.add_externals(write.externals)

    def add_externals(self, externals: Iterable[External]) -> list[dict[str, Any]]:
        """Buffer the Externals not written yet; return the rows of those written with other properties."""
        fresh, changed = [], []
        for row in external_rows(externals):
            first = self._externals.get(row["id"])
            if first is None:
                self._externals[row["id"]] = row
                self.known["External"].add(row["id"])
                fresh.append(row)
            elif first != row:
                self._externals[row["id"]] = row
                changed.append(row)
        self._add_nodes("External", fresh)
        return changed

    def add_docs(self, sections: list[DocSection], rows: list[dict[str, Any]]) -> None:
        self._claim("Doc", [d.id for d in sections])
        self._add_nodes("Doc", rows)

    def add_commits(self, commits: list[CommitRecord], rows: list[dict[str, Any]]) -> None:
        self._claim("Commit", [c.id for c in commits])
        self._add_nodes("Commit", rows)

    def add_edges(self, edges: Iterable[Edge], externals: Iterable[External] = ()) -> list[dict[str, Any]]:
        """The edges whose ends were written (the others are dropped, as MATCH drops them), after the
        Externals (``add_externals``: what it returns, this returns)."""
        changed = self.add_externals(externals)
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for e in edges:
            if e.type not in REL_COLUMNS or e.src_label not in EDGE_ENDS or e.dst_label not in EDGE_ENDS:
                raise ValueError(f"not a schema edge: {e.src_label}-[{e.type}]->{e.dst_label}")
            if e.src in self.known[e.src_label] and e.dst in self.known[e.dst_label]:
                groups.setdefault((e.type, e.src_label, e.dst_label), []).append(edge_row(e))
        for (rel, src, dst), rows in groups.items():
            self._add_rels(rel, src, dst, rows)
        return changed

    def add_mentions(self, paths: list[str], pairs: list[tuple[str, str]]) -> None:
        if self._mentioned & set(paths):
            raise Unbufferable("MENTIONS of a document written twice")
        self._mentioned |= set(paths)
        rows = [{"src": d, "dst": s} for d, s in pairs if d in self.known["Doc"] and s in self.known["Symbol"]]
        self._add_rels("MENTIONS", "Doc", "Symbol", rows)

    def add_touches(self, pairs: list[tuple[str, str, str]]) -> None:
        for label in ("File", "Symbol"):
            rows = []
            for c, lab, t in pairs:
                if lab == label and c in self.known["Commit"] and t in self.known[label]:
                    if (c, lab, t) not in self._touches:
                        self._touches.add((c, lab, t))
                        rows.append({"src": c, "dst": t})
            self._add_rels("TOUCHES", "Commit", label, rows)

    # -- what the store runs ----------------------------------------------------------------------
    def drain(self) -> Iterator[tuple[str, dict[str, Any], int]]:
        """The ``COPY`` statements of the rows waiting, node tables first, each with the weight of its
        rows (``weight``); the buffer is empty after."""
        nodes, rels = self._nodes, self._rels
        self._nodes = {label: [] for label in NODE_COLUMNS}
        self._rels = {}
        self.pending = 0
        for label, rows in nodes.items():
            groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
            for row in rows:  # by which vectors a row has: a Kùzu list mixing vectors and nulls does not cast
                vectors = tuple(p for p in NODE_VECTORS.get(label, ()) if row.get(p) is not None)
                groups.setdefault(vectors, []).append(row)
            for vectors, group in groups.items():
                yield from self._batches(_node_copy(label, vectors, self.dimension), group)
        for (rel, src, dst), rows in rels.items():
            yield from self._batches(_rel_copy(rel, src, dst), rows)

    def _batches(self, query: str, rows: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any], int]]:
        """``rows`` (of one kind: the same vectors each, so the same weight) in statements of up to
        ``flush_rows`` weight."""
        each = max(1, weight(rows[:1]))
        size = max(1, self.flush_rows // each)
        for start in range(0, len(rows), size):
            batch = rows[start : start + size]
            yield query, {"rows": batch}, each * len(batch)

    # -- helpers ----------------------------------------------------------------------------------
    def _claim(self, label: str, ids: list[str]) -> None:
        """Unbufferable when one of ``ids`` was written before or repeats: MERGE must decide."""
        if len(set(ids)) != len(ids) or not self.known[label].isdisjoint(ids):
            raise Unbufferable(f"a {label} id written twice")

    def _add_nodes(self, label: str, rows: list[dict[str, Any]]) -> None:
        self.known[label].update(r["id"] for r in rows)
        self._nodes[label].extend(rows)
        self.pending += weight(rows)

    def _add_rels(self, rel: str, src: str, dst: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            self._rels.setdefault((rel, src, dst), []).extend(rows)
            self.pending += len(rows)


def _node_copy(label: str, vectors: tuple[str, ...], dimension: int) -> str:
    """``COPY label`` of rows that carry these vector columns (the others stay null)."""
    columns = ("id", "repo", *NODE_COLUMNS[label][1:], *vectors)
    values = ["r.id", "$repo", *(f"r.{c}" for c in NODE_COLUMNS[label][1:])]
    values += [f"CAST(r.{v} AS FLOAT[{dimension}])" for v in vectors]
    return f"COPY {label} ({', '.join(columns)}) FROM (UNWIND $rows AS r RETURN {', '.join(values)})"


def _rel_copy(rel: str, src: str, dst: str) -> str:
    props = REL_COLUMNS.get(rel, ())
    columns = f" ({', '.join(props)})" if props else ""
    values = ", ".join(["r.src", "r.dst", *(f"r.{p}" for p in props)])
    return f"COPY {rel}{columns} FROM (UNWIND $rows AS r RETURN {values}) (from='{src}', to='{dst}')"
