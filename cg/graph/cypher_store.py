"""CypherStore: every GraphStore method whose Cypher is the same on Kùzu and Neo4j, written once.

A backend supplies the primitives (``_read``, ``_write``, ``_write_all`` for one transaction,
``_cast`` for its vector columns) and what really differs: schema, reset, the vector and full-text
index calls, raw ``cypher`` and closing. The statements themselves live in cg/graph/cypher.py.

Every store serves one repository, named by its key (``repo_key``): the primitives pass it as
``$repo`` to every statement that names it, the shared ones and a user's ``cg cypher`` alike.

Kùzu carries the ``repo`` property too, although a Kùzu database lives inside its repository's
``.cg/`` and holds only that one. Why: the statements stay written once for both backends, with no
per-backend clause spliced in (a Neo4j-only scope would be a second dialect of every statement, and a
statement that forgot it would be correct on Kùzu and leak on Neo4j where the tests run less often);
the documented queries (``WHERE n.repo = $repo``) answer the same on both; and measured on Kùzu
0.11.3 the extra equality costs nothing, since each keyed ``MATCH`` is still a primary-key lookup (or
the same join it was). The price is one constant string per node, and a Kùzu index built under
another key (a renamed remote, ``--repo-key``) is rebuilt by the next ``cg index``.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Any, Self

import numpy as np

from cg.graph import cypher as q
from cg.graph.store import (
    SUMMARY_FIELDS,
    CallRow,
    FileWrite,
    commit_rows,
    doc_rows,
    edge_row,
    external_rows,
    file_row,
    grouped,
    touching_by_symbol,
    vector_param,
)
from cg.model import CONTAINER_KINDS, CommitRecord, DocSection, Edge, External

Statement = tuple[str, dict[str, Any]]
_REPO_PARAM = re.compile(r"\$(?:repo\b|`repo`)")


class CypherStore(ABC):
    """A GraphStore over a Cypher connection; subclasses supply the primitives and the index calls."""

    backend: str
    batch_rows: int  # rows per UNWIND statement when a write is split into batches

    def __init__(self, repo_key: str) -> None:
        self.repo_key = repo_key
        self._dimension: int | None = None  # set by ensure_schema; else taken from the vectors written

    # -- per-backend primitives ----------------------------------------------------------------------
    @abstractmethod
    def _read(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """The rows of a read, each a list in RETURN order."""

    @abstractmethod
    def _write(self, query: str, params: dict[str, Any] | None = None) -> None: ...

    @abstractmethod
    def _write_all(self, statements: list[Statement]) -> None:
        """Run these statements in one transaction: all of them or none."""

    @abstractmethod
    def _cast(self, dimension: int) -> str:
        """How a vector parameter is written into a vector column: a template with one ``{}``."""

    def outdated(self) -> bool:
        """Whether a later run replaced what this handle reads: never, for a store reading the live graph."""
        return False

    def _has(self, label: str) -> bool:
        """Whether ``label`` can be asked about yet (Kùzu: its table exists)."""
        return True

    # -- per-backend operations ----------------------------------------------------------------------
    @abstractmethod
    def ensure_schema(self, dimension: int) -> None: ...
    @abstractmethod
    def reset(self) -> None: ...
    @abstractmethod
    def run(self, full: bool, dimension: int | None = None) -> AbstractContextManager[None]: ...
    def prepare(self, full: bool, dimension: int) -> None:  # noqa: B027 - a hook only Kùzu's stores fill
        """Nothing to make ready but on Kùzu (GraphWriter.prepare)."""

    def run_steps(self) -> dict[str, float]:
        """No steps of the store's own but on Kùzu's generations (GraphWriter.run_steps)."""
        return {}

    @abstractmethod
    def fulltext(
        self, analyzed_query: str, limit: int, label: str = "Symbol", field: str = "search_text"
    ) -> list[tuple[str, float]]: ...
    @abstractmethod
    def vector(
        self, embedding: np.ndarray, limit: int, label: str = "Symbol", prop: str = "embedding"
    ) -> list[tuple[str, float]]: ...
    @abstractmethod
    def cypher(
        self, query: str, params: dict[str, Any] | None = None, write: bool = False
    ) -> tuple[list[str], list[list[Any]]]: ...
    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers -------------------------------------------------------------------------------------
    def _params(self, query: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """``params`` with ``repo`` = this store's key when ``query`` names ``$repo`` (only then: Kùzu
        refuses a parameter its statement does not use); a ``repo`` the caller gave wins."""
        if _REPO_PARAM.search(query):
            return {"repo": self.repo_key, **(params or {})}
        return params or {}

    def _vector_cast(self, embeddings: np.ndarray | None) -> str | None:
        """The cast of these vectors to the column type; None for a write whose vectors follow later."""
        if embeddings is None:
            return None
        return self._cast(self._dimension or int(embeddings.shape[1]))

    def _write_batches(self, query: str, rows: list[dict[str, Any]]) -> None:
        for start in range(0, len(rows), self.batch_rows):
            self._write(query, {"rows": rows[start : start + self.batch_rows]})

    def _records(self, query: str, params: dict[str, Any], columns: tuple[str, ...]) -> list[dict[str, Any]]:
        return [dict(zip(columns, row, strict=True)) for row in self._read(query, params)]

    def _read_by_ids(self, query: str, ids: list[str]) -> list[list[Any]]:
        """The rows of a read of nodes by id (``MATCH (n:Label ...) WHERE n.id IN $ids RETURN ...``), in
        no particular order: one statement here; a backend may answer it otherwise (KuzuStore)."""
        return self._read(query, {"ids": ids})

    # -- meta ----------------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        if not self._has("Meta"):
            return None
        rows = self._read(q.GET_META, {"key": key})
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self._write(q.SET_META, {"key": key, "value": value})

    # -- writes --------------------------------------------------------------------------------------
    def write_file(self, write: FileWrite) -> None:
        self._write_all(self._file_statements(write, replaces=not write.new))

    def _file_statements(
        self,
        write: FileWrite,
        replaces: bool,
        symbols: list[dict[str, Any]] | None = None,
        chunks: list[dict[str, Any]] | None = None,
        links: list[dict[str, Any]] | None = None,
    ) -> list[Statement]:
        """The statements that write one file's nodes: its File, Symbols, Chunks and the Externals its
        edges need; ``replaces`` when the store may hold an earlier version of the file, whose stale
        nodes and whose own edges go first (each delete finds the file's nodes by path: a scan of the
        label on Kùzu, so a file the store cannot hold yet skips them). ``symbols`` and ``chunks``, the
        rows to write when not all of the file's (``write.symbol_rows()``, ``write.chunk_rows()``);
        ``links``, the chunk rows to link to their owners when not those written."""
        rec = write.file
        symbols = write.symbol_rows() if symbols is None else symbols
        chunks = write.chunk_rows() if chunks is None else chunks
        externals = external_rows(write.externals)
        statements: list[Statement] = [(q.UPSERT_FILE, file_row(rec))]
        if replaces:
            statements += [
                (q.DELETE_STALE_SYMBOLS, {"path": rec.path, "keep": [s["id"] for s in symbols]}),
                (q.DELETE_EDGES_FROM_FILE, {"path": rec.path}),
                (q.DELETE_EDGES_FROM_SYMBOLS_OF, {"path": rec.path}),
                (q.DELETE_DECORATES_INTO, {"path": rec.path}),
            ]
        if symbols:
            cast = self._vector_cast(write.embeddings)
            rows = [{k: v for k, v in r.items() if k != "doc_embedding"} for r in symbols]
            with_vector = [r for r in rows if r["embedding"] is not None]
            if with_vector:
                statements.append((q.upsert_symbols(cast), {"rows": with_vector}))
            without = [{k: v for k, v in r.items() if k != "embedding"} for r in rows if r["embedding"] is None]
            if without:  # apart: a Kùzu list parameter mixing vectors and nulls does not cast
                statements.append((q.upsert_symbols(None), {"rows": without}))
            docs = [{"id": r["id"], "doc": r["doc_embedding"]} for r in symbols if r["doc_embedding"] is not None]
            if docs and cast is not None:
                statements.append((q.set_doc_embeddings(cast), {"rows": docs}))
        if replaces:
            statements.append((q.DELETE_STALE_CHUNKS, {"path": rec.path, "keep": [c["id"] for c in chunks]}))
            statements.append((q.DELETE_CHUNK_OWNERS, {"path": rec.path}))
        if chunks:
            statements.append((q.upsert_chunks(self._vector_cast(write.embeddings)), {"rows": chunks}))
        owners = [{"id": c["id"], "owner_id": c["owner_id"]} for c in (chunks if links is None else links)]
        if owners:
            statements.append((q.LINK_CHUNKS, {"rows": owners}))
        if externals:
            statements.append((q.UPSERT_EXTERNALS, {"rows": externals}))
        return statements

    def write_edges(self, edges: list[Edge], externals: Iterable[External] = ()) -> None:
        rows_ext = external_rows(externals)
        if rows_ext:
            self._write(q.UPSERT_EXTERNALS, {"rows": rows_ext})
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for e in edges:
            groups.setdefault((e.type, e.src_label, e.dst_label), []).append(edge_row(e))
        for (rel, src, dst), rows in groups.items():
            self._write_batches(q.create_edges(rel, src, dst), rows)

    def delete_files(self, paths: list[str]) -> None:
        if paths:
            for statement in q.DELETE_FILES:
                self._write(statement, {"paths": paths})

    def delete_edges(self, paths: list[str]) -> None:
        if paths:
            self._write(q.DELETE_EDGES_FROM_FILES, {"paths": paths})
            self._write(q.DELETE_EDGES_FROM_SYMBOLS, {"paths": paths})
            self._write(q.DELETE_DECORATES_INTO_FILES, {"paths": paths})

    def prune_externals(self) -> int:
        rows = self._read(q.UNREFERENCED_EXTERNALS)
        if rows:
            self._write(q.DELETE_EXTERNALS, {"ids": [r[0] for r in rows]})
        return len(rows)

    def file_shas(self) -> dict[str, str]:
        if not self._has("File"):  # a fresh store: nothing indexed yet
            return {}
        return {row[0]: row[1] for row in self._read(q.FILE_SHAS)}

    def write_docs(
        self, path: str, sections: list[DocSection], embeddings: np.ndarray | None, new: bool = False
    ) -> None:
        rows = doc_rows(sections, embeddings)
        statements: list[Statement] = (
            [] if new else [(q.DELETE_STALE_DOCS, {"path": path, "keep": [r["id"] for r in rows]})]
        )
        if rows:
            statements.append((q.upsert_docs(self._vector_cast(embeddings)), {"rows": rows}))
        self._write_all(statements)

    def write_mentions(self, paths: list[str], pairs: list[tuple[str, str]]) -> None:
        if paths:
            self._write(q.DELETE_MENTIONS, {"paths": paths})
        self._write_batches(q.CREATE_MENTIONS, [{"doc": d, "symbol": s} for d, s in pairs])

    def set_vectors(self, label: str, prop: str, ids: list[str], vectors: np.ndarray) -> None:
        if len(ids) != len(vectors):
            raise ValueError(f"{len(ids)} ids for {len(vectors)} vectors")
        if not ids:
            return
        query = q.set_vectors(label, prop, self._cast(self._dimension or int(vectors.shape[1])))
        for start in range(0, len(ids), self.batch_rows):  # a batch's rows at a time: lists of floats are big
            end = start + self.batch_rows
            rows = [{"id": i, "vec": vector_param(v)} for i, v in zip(ids[start:end], vectors[start:end], strict=True)]
            self._write(query, {"rows": rows})

    def write_commits(self, commits: list[CommitRecord], embeddings: np.ndarray | None) -> None:
        rows = commit_rows(commits, embeddings)
        if rows:
            self._write(q.upsert_commits(self._vector_cast(embeddings)), {"rows": rows})

    def delete_commits(self, ids: list[str]) -> None:
        if ids:
            self._write(q.DELETE_COMMITS, {"ids": ids})

    def commit_ids(self) -> set[str]:
        if not self._has("Commit"):
            return set()
        return {r[0] for r in self._read(q.COMMIT_IDS)}

    def write_touches(self, pairs: list[tuple[str, str, str]]) -> None:
        for label in ("File", "Symbol"):
            self._write_batches(q.create_touches(label), [{"c": c, "t": t} for c, lab, t in pairs if lab == label])

    # -- reads ---------------------------------------------------------------------------------------
    def commits_touching(self, ids: list[str], limit: int = 5) -> dict[str, list[dict[str, Any]]]:
        if not ids:
            return {}
        return touching_by_symbol(self._read(q.COMMITS_TOUCHING, {"ids": ids}), limit)

    def docs_mentioning(self, ids: list[str]) -> dict[str, list[str]]:
        if not ids:
            return {}
        return grouped(self._read(q.DOCS_MENTIONING, {"ids": ids}))

    def nodes(self, label: str, ids: list[str]) -> dict[str, dict[str, Any]]:
        if not ids or label not in ("Doc", "Commit"):
            return {}
        out: dict[str, dict[str, Any]] = {}
        for (node,) in self._read_by_ids(q.nodes_by_id(label), ids):
            # a Kùzu node is a dict with _id/_label besides the properties; a Neo4j node a mapping of them
            out[node["id"]] = {k: v for k, v in dict(node).items() if not k.startswith("_") and k != "embedding"}
        return out

    def chunk_owners(self, ids: list[str]) -> dict[str, str]:
        if not ids:
            return {}
        return {r[0]: r[1] for r in self._read_by_ids(q.CHUNK_OWNERS, ids)}

    def symbols(self, ids: list[str], with_text: bool = True) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        query, columns = (
            (q.SYMBOLS_WITH_TEXT, (*SUMMARY_FIELDS, "text", "header")) if with_text else (q.SYMBOLS, SUMMARY_FIELDS)
        )
        rows = [dict(zip(columns, row, strict=True)) for row in self._read_by_ids(query, ids)]
        return {row["id"]: row for row in rows}

    def lexical_docs(self, ids: list[str], label: str = "Symbol", field: str = "search_text") -> dict[str, str]:
        if not ids:
            return {}
        rows = self._read_by_ids(q.node_ids_and(*q.text_field(label, field)), ids)
        return {r[0]: r[1] or "" for r in rows}

    def embeddings(self, ids: list[str], label: str = "Symbol", prop: str = "embedding") -> dict[str, np.ndarray]:
        q.vector_prop(label, prop)
        if not ids:
            return {}
        rows = self._read_by_ids(q.node_ids_and(label, prop), ids)
        return {r[0]: np.asarray(r[1], dtype=np.float32) for r in rows if r[1] is not None}

    def find_symbols(self, ref: str, limit: int = 10) -> list[dict[str, Any]]:
        return self._records(q.FIND_SYMBOLS, {"ref": ref, "suffix": "." + ref, "k": limit}, SUMMARY_FIELDS)

    def classes_named(self, names: list[str]) -> list[dict[str, Any]]:
        if not names:
            return []
        return self._records(q.CLASSES_NAMED, {"names": names, "kinds": sorted(CONTAINER_KINDS)}, SUMMARY_FIELDS)

    def test_functions(self) -> list[dict[str, Any]]:
        return self._records(q.TEST_FUNCTIONS, {}, SUMMARY_FIELDS)

    def symbol_names(self) -> list[str]:
        return sorted(r[0] for r in self._read(q.SYMBOL_NAMES, {}) if r[0])

    def caller_counts(self, ids: list[str]) -> dict[str, int]:
        if not ids:
            return {}
        return {r[0]: int(r[1]) for r in self._read(q.CALLER_COUNTS, {"ids": ids})}

    def decorators(self, ids: list[str]) -> list[tuple[str, str, int]]:
        if not ids:
            return []
        return sorted({(r[0], r[1], int(r[2] or 0)) for r in self._read(q.DECORATORS, {"ids": ids})})

    def inherits(self, ids: list[str], direction: str) -> list[tuple[str, str]]:
        if not ids:
            return []
        rows = self._read(q.BASES if direction == "out" else q.SUBCLASSES, {"ids": ids})
        return sorted((r[0], r[1]) for r in rows)

    def members(self, ids: list[str]) -> list[dict[str, Any]]:
        if not ids:
            return []
        return sorted(self._records(q.MEMBERS, {"ids": ids}, SUMMARY_FIELDS), key=member_order)

    def importers(self, ids: list[str]) -> list[tuple[str, str, int]]:
        if not ids:
            return []
        rows = [row for statement in q.IMPORTERS for row in self._read(statement, {"ids": ids})]
        return [(r[0], r[1], int(r[2] or 0)) for r in rows]

    def symbols_at(self, path: str, line: int) -> list[dict[str, Any]]:
        return self._records(q.SYMBOLS_AT, {"path": path, "line": line}, SUMMARY_FIELDS)

    def calls(self, ids: list[str], direction: str) -> list[CallRow]:
        if not ids:
            return []
        rows = self._read(q.CALLEES if direction == "out" else q.CALLERS, {"ids": ids})
        return sorted((call_row(row, direction) for row in rows), key=call_order)

    def stats(self) -> dict[str, int]:
        counts = {label: int(self._read(q.count_nodes(label))[0][0]) for label in q.NODE_LABELS}
        for rel in q.REL_TYPES:
            counts[rel] = sum(int(self._read(q.count_edges(rel, src))[0][0]) for src in q.EDGE_SOURCES[rel])
        return counts


# The walks return their rows in one order on every backend (a database answers in whatever order its
# scan or index gives, Kùzu's differing with the list of ids asked): calls by caller, line, callee;
# members by class, line, id; pairs sorted. Ties broken downstream then break the same way everywhere,
# and the resident graph (cg/graph/resident.py) gives the statements' answers exactly.
def call_order(row: CallRow) -> tuple[str, int, str]:
    return (row.src, row.line, row.dst)


def member_order(node: dict[str, Any]) -> tuple[str, int, str]:
    return (node.get("parent_id") or "", int(node.get("start_line") or 0), node["id"])


def call_row(row: list[Any], direction: str) -> CallRow:
    """A row of ``q.CALLEES`` ('out') or ``q.CALLERS`` ('in') as a CallRow."""
    src, dst, line, resolved_by, labels, *node = row
    label = labels if isinstance(labels, str) else labels[0]  # Kùzu: the label; Neo4j: a list
    return CallRow(
        src, dst, int(line or 0), resolved_by or "", call_end(dst if direction == "out" else src, *node), label
    )


def call_end(
    node_id: str,
    name: str | None,
    qualname: str | None = None,
    kind: str | None = None,
    path: str | None = None,
    start: int | None = None,
    end: int | None = None,
    signature: str | None = None,
    file_kind: str | None = None,
) -> dict[str, Any]:
    """The other end of a CallRow: a definition's summary fields, or an External's id and name."""
    return {
        "id": node_id,
        "name": name,
        "qualname": qualname or node_id,
        "kind": kind or "external",
        "path": path,
        "start_line": start,
        "end_line": end,
        "signature": signature,
        "file_kind": file_kind,
    }
